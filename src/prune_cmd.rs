//! `dss extract` and `dss prune`: the values a request names, per site of a spec, and the
//! grammar pruned to them. `dss generate` uses the same [`PruneArgs`].

use anyhow::{bail, Context, Result};
use clap::{Args, ValueEnum};
use dss_compiler::prune::{Consume, GrammarOptions, Pruner, Resume};
use dss_compiler::CompiledSpec;
use dss_extract::{Analysis, Catalogs, ExtractMode, SpecIndex};
use serde_json::{json, Map, Value};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Instant;

use crate::{load_spec, open_input, run_jsonl, write_stdout};

/// Which matcher finds the values.
#[derive(Clone, Copy, Debug, ValueEnum, PartialEq, Eq)]
pub(crate) enum ExtractKind {
    /// Exact, alias, plural/stem and typo matches, numbers, dates.
    Full,
    /// The Grammar Pruning paper's matcher (lowercased word-boundary matching of the
    /// values, longest first), for comparison with its Table 2.
    Paper,
}

/// Where the values come from: the spec's own (enums, union tags), its directory's
/// `catalogs.yaml` / `aliases.yaml`, and these.
#[derive(Args, Clone, Debug, Default)]
pub(crate) struct PruneArgs {
    /// A catalog for a free site: PATH=FILE, PATH an instance path with `*` for array items
    /// (`/fields/*/fieldName=columns.txt`), FILE one value a line or a JSON array. Repeatable.
    #[arg(long = "catalog", value_name = "PATH=FILE")]
    pub catalogs: Vec<String>,
    /// A complete catalog (PATH=FILE as for `--catalog`): the site takes only its values,
    /// never a span of the request's words. Repeatable.
    #[arg(long = "closed-catalog", value_name = "PATH=FILE")]
    pub closed_catalogs: Vec<String>,
    /// Aliases: YAML `site: {value: [phrase, …]}` (`*` as site: any site with that value), or
    /// FoodOrdering's `phrase<TAB>LABEL(value)` (.txt). Repeatable.
    #[arg(long = "aliases", value_name = "FILE")]
    pub aliases: Vec<PathBuf>,
    /// The matcher.
    #[arg(long = "extract", value_enum, default_value = "full")]
    pub extract: Option<ExtractKind>,
    /// When a required site found nothing: offer the values nearest to the words that
    /// matched nothing, this many per word (0: never).
    #[arg(long, default_value_t = 3)]
    pub nearest: usize,
}

impl PruneArgs {
    fn mode(&self) -> ExtractMode {
        match self.extract {
            Some(ExtractKind::Paper) => ExtractMode::Paper,
            _ => ExtractMode::Full,
        }
    }

    /// The entity index of `spec` (loaded from `spec_path`) with its catalogs and aliases.
    pub(crate) fn index(&self, spec_path: &Path, spec: &CompiledSpec) -> Result<SpecIndex> {
        let dir = if spec_path.is_dir() {
            Some(spec_path.to_path_buf())
        } else {
            spec_path.parent().map(Path::to_path_buf)
        };
        let mut catalogs = match dir {
            Some(d) if spec_path.is_dir() || spec_path.ends_with("spec.json") => {
                Catalogs::from_dir(&d)?
            }
            _ => Catalogs::default(),
        };
        for c in &self.catalogs {
            catalogs.add_arg(c)?;
        }
        for c in &self.closed_catalogs {
            catalogs.add_closed_arg(c)?;
        }
        for a in &self.aliases {
            catalogs.add_aliases(a)?;
        }
        Ok(SpecIndex::build(spec, &catalogs)?)
    }

    /// [`PruneArgs::index`], taught by worked examples the sites they infer and the words
    /// before each field's values. A spec that lists no values (tools of free strings and
    /// numbers) is indexed too: its sites take the request's spans and numbers.
    pub(crate) fn learned_index(
        &self,
        spec_path: &Path,
        spec: &CompiledSpec,
        examples: &[dss_compiler::prompt::Example],
    ) -> Result<SpecIndex> {
        let mut ix = self.index(spec_path, spec)?;
        teach(&mut ix, spec, examples);
        Ok(ix)
    }

    /// The analysis of one request.
    pub(crate) fn analyze(&self, index: &SpecIndex, request: &str) -> Analysis {
        index.analyze(request, self.mode(), self.nearest)
    }
}

/// The analysis as JSON: mentions, candidates per site, tier.
pub(crate) fn analysis_json(a: &Analysis, extract_ms: f64) -> Value {
    let mut candidates = Map::new();
    for (site, values) in &a.restriction.candidates {
        candidates.insert(site.clone(), Value::Array(values.clone()));
    }
    json!({
        "mentions": a.mentions,
        "candidates": candidates,
        "tier": a.tier,
        "cues": a.cues,
        "extract_ms": (extract_ms * 1000.0).round() / 1000.0,
    })
}

#[derive(Args)]
pub(crate) struct ExtractArgs {
    /// The compiled spec (directory, spec.json or schema file).
    #[arg(long, value_name = "PATH")]
    pub spec: PathBuf,
    #[command(flatten)]
    pub prune: PruneArgs,
    #[command(flatten)]
    pub learn: LearnArgs,
    #[command(flatten)]
    pub(crate) requests: Requests,
}

/// The worked examples `dss extract` and `dss prune` learn from, as `dss generate` does
/// (the fields inferred, the words before each field's values, whether a clause names one
/// record), so that they show what generation prunes.
#[derive(Args, Clone, Debug, Default)]
pub(crate) struct LearnArgs {
    /// Worked examples (JSONL of `{"request", "output"}`); default: `examples.jsonl` beside
    /// spec.json.
    #[arg(long, value_name = "FILE")]
    pub examples: Option<PathBuf>,
    /// Learn from no worked examples.
    #[arg(long, conflicts_with = "examples")]
    pub no_examples: bool,
}

impl LearnArgs {
    /// The index of `spec` (at `spec_path`), taught by the worked examples.
    fn index(&self, prune: &PruneArgs, spec_path: &Path, spec: &CompiledSpec) -> Result<SpecIndex> {
        let examples =
            crate::serve_cmd::spec_examples(spec_path, self.examples.as_deref(), self.no_examples)?;
        let mut ix = prune.index(spec_path, spec)?;
        teach(&mut ix, spec, &examples);
        Ok(ix)
    }
}

/// Teaches `ix` what the worked examples show: the sites they infer, the words before each
/// field's values, and whether a clause names one record.
fn teach(ix: &mut SpecIndex, spec: &CompiledSpec, examples: &[dss_compiler::prompt::Example]) {
    let pairs = || examples.iter().map(|e| (e.request.as_str(), &e.output));
    ix.learn_inferred(spec, pairs());
    ix.learn_contexts(spec, pairs());
}

/// The requests a command reads: one on the command line, or one per line.
#[derive(Args, Clone, Debug)]
pub(crate) struct Requests {
    /// The request, in natural language (not with --jsonl).
    #[arg(value_name = "REQUEST", required_unless_present = "jsonl")]
    pub(crate) request: Option<String>,
    /// Read one request per line (a JSON string) from --input or stdin; write one JSON
    /// value per line.
    #[arg(long, conflicts_with = "request")]
    pub(crate) jsonl: bool,
    /// With --jsonl: the requests file (default: stdin).
    #[arg(long, value_name = "FILE", requires = "jsonl")]
    pub(crate) input: Option<PathBuf>,
    /// With --jsonl: report a failed request on stderr as {"line": N, "error": "..."} and go on.
    #[arg(long, requires = "jsonl")]
    pub(crate) keep_going: bool,
}

impl Requests {
    /// With --jsonl: runs `one` on every line's request, one output line each (see
    /// `run_jsonl`); `None` without --jsonl.
    pub(crate) fn each_line(
        &self,
        mut one: impl FnMut(&str) -> Result<String, String>,
    ) -> Option<Result<ExitCode>> {
        if !self.jsonl {
            return None;
        }
        Some(open_input(self.input.as_deref()).and_then(|input| {
            run_jsonl(input, self.keep_going, |line| {
                match serde_json::from_str::<Value>(line) {
                    Ok(Value::String(r)) => one(&r),
                    Ok(_) => Err("expected a JSON string holding the request".into()),
                    Err(e) => Err(format!("invalid JSON: {e}")),
                }
            })
        }))
    }

    /// The request given on the command line.
    pub(crate) fn single(&self) -> Result<&str> {
        match &self.request {
            Some(r) => Ok(r),
            None => bail!("give a REQUEST, or --jsonl"),
        }
    }
}

pub(crate) fn run_extract(args: &ExtractArgs) -> Result<ExitCode> {
    let spec = load_spec(&args.spec, None)?;
    let index = args.learn.index(&args.prune, &args.spec, &spec)?;
    let one = |request: &str| {
        let t = Instant::now();
        let a = args.prune.analyze(&index, request);
        analysis_json(&a, t.elapsed().as_secs_f64() * 1e3)
    };
    if let Some(done) = args.requests.each_line(|r| Ok(one(r).to_string())) {
        return done;
    }
    write_stdout(&serde_json::to_string_pretty(&one(args
        .requests
        .single()?))?)?;
    Ok(ExitCode::SUCCESS)
}

/// Grammar syntaxes `dss prune` prints.
#[derive(Clone, Copy, Debug, ValueEnum)]
pub(crate) enum GrammarFormat {
    /// GBNF: llama.cpp and llama-server; XGrammar (vLLM, SGLang) reads it as it is.
    Gbnf,
    /// Lark (llguidance): vLLM's `guidance` backend, SGLang's `llguidance`, OpenAI CFG tools.
    Lark,
    /// pest.
    Pest,
}

#[derive(Args)]
pub(crate) struct PruneCmdArgs {
    /// The compiled spec (directory, spec.json or schema file).
    #[arg(long, value_name = "PATH")]
    pub spec: PathBuf,
    #[command(flatten)]
    pub prune: PruneArgs,
    #[command(flatten)]
    pub learn: LearnArgs,
    /// The request.
    #[arg(value_name = "REQUEST")]
    pub request: String,
    /// The grammar syntax.
    #[arg(long, value_enum, default_value = "gbnf")]
    pub format: GrammarFormat,
    /// Offer properties the schema does not declare wherever the schema admits them (by
    /// default only where it allows them explicitly: `additionalProperties` other than
    /// `false`, or `patternProperties`), as `dss generate --allow-undeclared`.
    #[arg(long)]
    pub allow_undeclared: bool,
    /// Complete lines of shorthand already written (each ending with a newline): print
    /// the grammar of the rest of the document instead, with the values those lines used
    /// consumed, as generation continues after them.
    #[arg(long, value_name = "LINES")]
    pub after: Option<String>,
}

pub(crate) fn run_prune(args: &PruneCmdArgs) -> Result<ExitCode> {
    let spec = load_spec(&args.spec, None)?;
    let index = args.learn.index(&args.prune, &args.spec, &spec)?;
    let a = args.prune.analyze(&index, &args.request);
    let opts = GrammarOptions {
        allow_undeclared: args.allow_undeclared,
    };
    let g = match &args.after {
        None => spec.pruned_grammar_with(&a.restriction, Resume::Start, opts),
        Some(lines) => {
            let pruner = Pruner::new(&spec, &a.restriction, Consume::default(), opts);
            match pruner
                .after_lines(lines)
                .context("reading the lines given with --after")?
            {
                Some(rest) => rest.grammar,
                None => bail!("the document cannot go on after the lines given with --after"),
            }
        }
    };
    let text = match args.format {
        GrammarFormat::Gbnf => g.to_gbnf(),
        GrammarFormat::Lark => g
            .to_lark()
            .context("converting the pruned grammar to Lark")?,
        GrammarFormat::Pest => g.to_pest(),
    };
    write_stdout(text.trim_end()).context("writing the grammar")?;
    Ok(ExitCode::SUCCESS)
}
