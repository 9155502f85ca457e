//! `dss eval`: import an evaluation suite (`dss eval import apimix|food-ordering|bfcl`, no model
//! needed) and evaluate a local model on one (`dss eval SUITE`, feature `runtime`) under
//! several conditions in one run (see `dss_eval` for the suite format and the scorer).

use anyhow::{bail, Context, Result};
use clap::{Args, Subcommand};
use std::path::PathBuf;
use std::process::ExitCode;

use crate::write_stdout;

/// `dss eval`: either `import …` or the evaluation of a suite.
#[derive(Args)]
#[command(args_conflicts_with_subcommands = true, subcommand_negates_reqs = true)]
pub(crate) struct EvalArgs {
    #[command(subcommand)]
    pub(crate) command: Option<EvalCommand>,
    #[command(flatten)]
    pub(crate) run: EvalRunArgs,
}

/// `dss eval import …`.
#[derive(Subcommand)]
pub(crate) enum EvalCommand {
    /// Import a dataset into a suite folder (schema, catalogs, aliases, cases.jsonl).
    Import {
        #[command(subcommand)]
        source: ImportSource,
    },
    /// One Markdown table of several runs' `report.json`: a row per suite and condition,
    /// the catalog modes (closed, `loo`, `open`) side by side, and for each figure the
    /// build, model, machine and date that made it.
    Table {
        /// `--out` folders of `dss eval` runs (or their report.json files), in the order
        /// the table lists them.
        #[arg(value_name = "RUN", required = true)]
        runs: Vec<PathBuf>,
    },
}

/// The importable layouts.
#[derive(Subcommand)]
pub(crate) enum ImportSource {
    /// APIMixATIS / APIMixSNIPS (`*_data.json`, `*_data_schema.json`).
    Apimix {
        /// The APIMix folder.
        dir: PathBuf,
        /// The suite folder to write.
        #[arg(short = 'o', long = "out", value_name = "SUITE")]
        out: PathBuf,
        /// Worked examples for the prompt (JSON Lines of `{"id", "request", "gold"}`),
        /// written for the domain: none may be one of the evaluated cases, nor near one.
        #[arg(long, value_name = "FILE")]
        examples: Option<PathBuf>,
        /// Accept worked examples near an evaluated case (see `dss eval --allow-similar`).
        #[arg(long, requires = "examples")]
        allow_similar: bool,
    },
    /// A venue in Amazon's FoodOrdering layout (`schema.json`, `alias/*.txt`, `dev.json`).
    FoodOrdering {
        /// The venue folder.
        dir: PathBuf,
        /// The suite folder to write.
        #[arg(short = 'o', long = "out", value_name = "SUITE")]
        out: PathBuf,
        /// Worked examples for the prompt (JSON Lines of `{"id", "request", "gold"}`),
        /// written for the domain: none may be one of the evaluated cases, nor near one.
        #[arg(long, value_name = "FILE")]
        examples: Option<PathBuf>,
        /// Accept worked examples near an evaluated case (see `dss eval --allow-similar`).
        #[arg(long, requires = "examples")]
        allow_similar: bool,
    },
    /// Berkeley Function Calling Leaderboard questions (`BFCL_v4_<category>.json`, JSON
    /// Lines), each case with its own tools, scored by BFCL's AST checker (`bfcl-ast`).
    Bfcl {
        /// The questions file.
        file: PathBuf,
        /// The ground truth (`possible_answer_BFCL_v4_<category>.json`).
        #[arg(long, value_name = "FILE")]
        answers: PathBuf,
        /// The suite folder to write.
        #[arg(short = 'o', long = "out", value_name = "SUITE")]
        out: PathBuf,
    },
}

/// The conditions `dss eval` can run, in report order.
pub(crate) const CONDITIONS: [&str; 7] = ["gp", "gp-json", "prune", "ner-cd", "cd", "free", "json"];

/// `dss eval SUITE …`.
#[derive(Args)]
pub(crate) struct EvalRunArgs {
    /// The suite folder (suite.yaml, schema.json, cases.jsonl, …).
    #[arg(value_name = "SUITE", required = true)]
    pub(crate) suite: Option<PathBuf>,
    /// A pinned model name (`dss model list`) or a path to any GGUF file.
    #[arg(long, value_name = "NAME|PATH", default_value = "qwen2.5-coder-0.5b")]
    pub(crate) model: String,
    /// Conditions, comma-separated: gp (items in the prompt, pruned grammar, consumption),
    /// gp-json (items in the prompt, compact JSON under the schema pruned to the same
    /// values: the notation's effect apart from pruning's), prune (pruned grammar, no consumption), ner-cd (items in the prompt, full grammar), cd (full
    /// grammar), free (no grammar), json (compact JSON under the schema's JSON grammar).
    #[arg(long, value_delimiter = ',', default_value = "gp,gp-json,prune,ner-cd,cd,free,json", value_parser = parse_condition)]
    pub(crate) conditions: Vec<String>,
    /// Evaluate only the first N cases.
    #[arg(long, value_name = "N")]
    pub(crate) limit: Option<usize>,
    /// Evaluate only the cases with these ids (comma-separated), in the suite's order;
    /// `--catalog-mode loo` still counts every case's values.
    #[arg(long, value_name = "ID,...", value_delimiter = ',')]
    pub(crate) cases: Vec<String>,
    /// The report's format on stdout.
    #[arg(long, default_value = "table", value_parser = ["table", "json", "csv"])]
    pub(crate) format: String,
    /// Also write items.jsonl (per case and condition), report.csv, report.json and
    /// report.svg (exact match against median latency per condition) here.
    #[arg(long, value_name = "DIR")]
    pub(crate) out: Option<PathBuf>,
    /// CPU threads.
    #[arg(long, default_value_t = 2, value_parser = clap::value_parser!(u32).range(1..))]
    pub(crate) threads: u32,
    /// Output token budget per case [default: sized from the suite's examples, or 512].
    #[arg(long, value_parser = clap::value_parser!(u32).range(1..))]
    pub(crate) max_tokens: Option<u32>,
    /// `closed`: extraction knows every catalog and enum value. `loo`: for each case, the
    /// values no other case's gold uses are withheld from extraction (the honest setting
    /// when a schema lists exactly its cases' values, as APIMix's do). `open`: every
    /// catalog is withheld (its values and their aliases): extraction knows only the
    /// schema's enums. The grammar is not changed.
    #[arg(long, default_value = "closed", value_parser = ["closed", "loo", "open"])]
    pub(crate) catalog_mode: String,
    /// Run although a worked example is near an evaluated case (normalized token
    /// similarity >= 0.8, see `dss_eval::similar`); the report's suite name then says so.
    #[arg(long)]
    pub(crate) allow_similar: bool,
    /// `typo:SEED`: one seeded typo in every mention of a gold value of 5+ characters in
    /// each request (see `dss_extract::perturb`).
    #[arg(long, value_name = "typo:SEED", value_parser = parse_perturb)]
    pub(crate) perturb: Option<u64>,
    /// Under pruning, let a line end while a value found only it could take is unwritten
    /// (by default the line goes on: one call is not split over two lines).
    #[arg(long)]
    pub(crate) split_lines: bool,
    /// Draft tokens per model call: tokens that follow the last output tokens in the
    /// request are read in the same call; where the model agrees with them the next steps
    /// need no call (the output is the same). 0: no drafts.
    #[arg(long, default_value_t = 0)]
    pub(crate) draft_tokens: usize,
    /// In the `gp` and `ner-cd` prompts, show the worked examples' requests with the items
    /// extraction finds in them, as the evaluated request is shown (measured: no gain on
    /// APIMixSNIPS, so off by default).
    #[arg(long)]
    pub(crate) example_items: bool,
    /// Let the model write properties the schema does not declare wherever the schema
    /// admits them (by default only where it allows them explicitly), in the constrained
    /// conditions.
    #[arg(long)]
    pub(crate) allow_undeclared: bool,
    /// Seconds one case may take under one condition (with --backend openai also each HTTP
    /// round trip): past it the case fails under that condition.
    #[arg(long, value_name = "SECS", default_value_t = 60.0, value_parser = crate::serve_cmd::parse_secs)]
    pub(crate) timeout: f64,
    /// The model's backend: `--backend openai --url URL …` evaluates a served model (the
    /// shorthand conditions gp, prune, ner-cd, cd; `--concurrency` cases in flight).
    #[command(flatten)]
    pub(crate) backend: crate::serve_cmd::BackendArgs,
}

fn parse_perturb(s: &str) -> Result<u64, String> {
    s.strip_prefix("typo:")
        .and_then(|n| n.parse::<u64>().ok())
        .ok_or_else(|| format!("expected typo:SEED (SEED a number), found `{s}`"))
}

fn parse_condition(s: &str) -> Result<String, String> {
    if CONDITIONS.contains(&s) {
        Ok(s.to_string())
    } else {
        Err(format!(
            "unknown condition `{s}` (one of {})",
            CONDITIONS.join(", ")
        ))
    }
}

/// Runs `dss eval`.
pub(crate) fn run(args: &EvalArgs) -> Result<ExitCode> {
    match &args.command {
        Some(EvalCommand::Import { source }) => run_import(source),
        Some(EvalCommand::Table { runs }) => run_table(runs),
        None => run_suite(&args.run),
    }
}

/// `dss eval table RUN…`.
fn run_table(runs: &[PathBuf]) -> Result<ExitCode> {
    let mut reports = Vec::new();
    for run in runs {
        let path = if run.is_dir() {
            run.join("report.json")
        } else {
            run.clone()
        };
        let text = crate::read_file(&path)?;
        let report: dss_eval::Report = serde_json::from_str(&text)
            .with_context(|| format!("{}: not a dss eval report.json", path.display()))?;
        reports.push((run.display().to_string(), report));
    }
    write_stdout(&dss_eval::report::side_by_side(&reports))?;
    Ok(ExitCode::SUCCESS)
}

/// What `dss eval` records of the build and the machine beside its figures
/// ([`dss_eval::RunInfo`]): the version and commit, the CPU model and its logical cores.
pub(crate) fn build_and_machine() -> (String, String) {
    let commit = env!("DSS_COMMIT");
    let build = if commit.is_empty() {
        format!("dss {}", env!("CARGO_PKG_VERSION"))
    } else {
        format!("dss {} ({commit})", env!("CARGO_PKG_VERSION"))
    };
    let cpu = std::fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|t| {
            t.lines()
                .find(|l| l.starts_with("model name"))
                .and_then(|l| l.split_once(':'))
                .map(|(_, v)| v.trim().to_string())
        })
        .unwrap_or_else(|| std::env::consts::ARCH.to_string());
    let cores = std::thread::available_parallelism().map_or(0, |n| n.get());
    (build, format!("{cpu}, {cores} cores"))
}

fn run_import(source: &ImportSource) -> Result<ExitCode> {
    let (summary, dir, out, examples, allow_similar) = match source {
        ImportSource::Apimix {
            dir,
            out,
            examples,
            allow_similar,
        } => (
            dss_eval::import_apimix(dir, out),
            dir,
            out,
            examples,
            *allow_similar,
        ),
        ImportSource::FoodOrdering {
            dir,
            out,
            examples,
            allow_similar,
        } => (
            dss_eval::import_food_ordering(dir, out),
            dir,
            out,
            examples,
            *allow_similar,
        ),
        ImportSource::Bfcl { file, answers, out } => (
            dss_eval::import_bfcl(file, answers, out),
            file,
            out,
            &None,
            false,
        ),
    };
    let summary = summary.with_context(|| format!("importing {}", dir.display()))?;
    let mut text = format!(
        "imported {} cases from {} into {}\n",
        summary.cases,
        dir.display(),
        out.display()
    );
    match examples {
        Some(file) => {
            let n = dss_eval::attach_examples(out, file, allow_similar)
                .with_context(|| format!("adding the worked examples of {}", file.display()))?;
            text.push_str(&format!("worked examples: {n} from {}\n", file.display()));
            if allow_similar {
                let suite = dss_eval::Suite::load(out)?;
                for line in similar_lines(&suite) {
                    text.push_str(&format!("allowed: {line}\n"));
                }
            }
        }
        None if matches!(source, ImportSource::Bfcl { .. }) => {
            text.push_str("worked examples: none (each case has its own tools)\n")
        }
        None => text.push_str(
            "worked examples: none (add up to 3 written for the domain with --examples FILE)\n",
        ),
    }
    if summary.repairs.is_empty() {
        text.push_str("repairs: none\n");
    } else {
        text.push_str("repairs:\n");
        for r in &summary.repairs {
            text.push_str(&format!("  {r}\n"));
        }
    }
    text.push_str("notes:\n");
    for n in &summary.notes {
        text.push_str(&format!("  {n}\n"));
    }
    write_stdout(&text)?;
    Ok(ExitCode::SUCCESS)
}

/// Each worked example of the suite near an evaluated case, as a line.
fn similar_lines(suite: &dss_eval::Suite) -> Vec<String> {
    dss_eval::similar::similar_pairs(&suite.cases, &suite.examples, dss_eval::similar::THRESHOLD)
        .iter()
        .map(ToString::to_string)
        .collect()
}

/// Refuses a suite whose worked examples are near its cases, unless `allow`; with `allow`,
/// the setting for the report's suite name when some are (`allow-similar: N`), each pair
/// on stderr.
#[cfg_attr(not(feature = "runtime"), allow(dead_code))]
fn check_similar(
    suite: &dss_eval::Suite,
    dir: &std::path::Path,
    allow: bool,
) -> Result<Option<String>> {
    if !allow {
        dss_eval::similar::check(&suite.cases, &suite.examples, &dir.join("examples.jsonl"))?;
        return Ok(None);
    }
    let lines = similar_lines(suite);
    for l in &lines {
        eprintln!("warning (--allow-similar): {l}");
    }
    Ok((!lines.is_empty()).then(|| format!("allow-similar: {} near pairs", lines.len())))
}

#[cfg(not(feature = "runtime"))]
fn run_suite(_args: &EvalRunArgs) -> Result<ExitCode> {
    bail!("this dss was built without the model runtime (feature `runtime`); `dss eval import` works without it")
}

#[cfg(feature = "runtime")]
fn run_suite(args: &EvalRunArgs) -> Result<ExitCode> {
    let Some(dir) = &args.suite else {
        bail!("give a SUITE folder, or `dss eval import …`");
    };
    runner::run(dir, args)
}

#[cfg(feature = "runtime")]
mod runner {
    //! The evaluation loop.
    //!
    //! **Reachability** (`ner.reachable`) is approximated without building the pruned
    //! grammar's language: a gold counts as reachable when every (site, value) pair it
    //! writes (the `used` pairs of `CompiledSpec::progress` over the gold's shorthand) is
    //! among the candidates at that site, or sits at a site the restriction leaves
    //! unrestricted: a site with no candidate that is free (not bound by a catalog) or
    //! that its record requires (where nothing would remain, the pruner keeps the full
    //! set, however optional the record), and any site the worked examples show is
    //! inferred, not read (`Restriction::free`: left unpruned, candidates or not). The
    //! candidates are those left when the line is written: the pairs of the gold's lines
    //! before it are consumed first, as `gp` decodes. Union variants left out because none
    //! of their sites has a candidate are not modelled.
    //!
    //! **NER pairs**: the predicted pairs are the extraction's mentions at catalog sites of
    //! the suite, as (site path, value text), the gold pairs those of
    //! [`dss_eval::score::gold_pairs`] (site paths and catalog patterns share one naming:
    //! JSON pointers with `*` for array items).

    use super::*;
    use dss_compiler::prune::Pruning;
    use dss_compiler::prune::{
        path_matches, Consume, GrammarOptions, Pruner, Restriction, Site, SiteKind,
    };
    use dss_compiler::CompiledSpec;
    use dss_eval::report::percentile;
    use dss_eval::score::{em, em_paper_case, gold_pairs, NerCounts};
    use dss_eval::{ConditionResult, NerReport, Report, Suite};
    use dss_extract::{Analysis, Catalogs, ExtractMode, SpecIndex};
    use dss_runtime::generate::Example;
    use dss_runtime::{
        EngineKind, GenerateError, Generation, Generator, GeneratorOptions, OutputFormat, Stats,
    };
    use dss_serve::{run_ordered, Input};
    use indicatif::{ProgressBar, ProgressStyle};
    use serde_json::{json, Value};
    use std::collections::HashMap;
    use std::io::Write as _;
    use std::path::Path;
    use std::rc::Rc;

    /// Nearest values offered per unmatched word when a required site found nothing (as
    /// `dss generate`'s default).
    const NEAREST: usize = 3;

    /// Which generator a condition runs on.
    #[derive(Clone, Copy, PartialEq, Eq)]
    enum Gen {
        /// Shorthand, the request alone (`prune`, `cd`).
        Shorthand,
        /// Shorthand, the request with the items found (`gp`, `ner-cd`); with
        /// `--example-items` the worked examples carry theirs too.
        Items,
        Free,
        Json,
    }

    fn generator_of(condition: &str) -> Gen {
        match condition {
            "free" => Gen::Free,
            "json" | "gp-json" => Gen::Json,
            "gp" | "ner-cd" => Gen::Items,
            _ => Gen::Shorthand,
        }
    }

    /// A case ready to run: its index, the request as evaluated, what extraction found
    /// (`None` where the case has no context to analyze it in).
    type Prepared = (usize, String, Option<Analysis>);

    /// One case under one condition.
    struct Outcome {
        result: Result<Generation, String>,
        stats: Stats,
        /// The pruned decoding failed (this error) and the full grammar was used instead.
        fallback: Option<String>,
    }

    /// What a case is read against: its schema compiled (the suite's `schema.json` with its
    /// notation edits, or the case's own tools), extraction's index over it, its sites.
    struct Ctx {
        /// The schema's content: consecutive cases with equal keys share generators.
        key: String,
        spec: CompiledSpec,
        index: SpecIndex,
        sites: Vec<Site>,
        site_paths: Vec<String>,
    }

    /// Compiles `schema` (a JSON Schema, or tool definitions) with the suite's notation
    /// edits and indexes it for extraction; `what` names it in errors.
    fn context(
        dir: &Path,
        schema: &Value,
        notation: &Option<dss_compiler::NotationConfig>,
        examples: &[Example],
        what: &str,
        open: bool,
    ) -> Result<Ctx> {
        let spec = dss_compiler::compile(
            schema,
            &dss_compiler::CompileOptions {
                notation: notation.clone(),
                ..Default::default()
            },
        )
        .with_context(|| format!("compiling {what}"))?;
        let index = index(dir, &spec, Vec::new(), examples, open)?;
        let sites = spec.sites();
        let site_paths = sites.iter().map(|s| s.path.clone()).collect();
        Ok(Ctx {
            key: schema.to_string(),
            spec,
            index,
            sites,
            site_paths,
        })
    }

    /// A second spec of a context, for a generator to own.
    fn spec_copy(ctx: &Ctx) -> CompiledSpec {
        ctx.spec.clone()
    }

    /// The in-process generators the conditions need, over a context's spec (each warmed).
    fn generators<'m>(
        model: &'m dss_runtime::LocalModel,
        ctx: &Ctx,
        conditions: &[&str],
        args: &EvalRunArgs,
        examples: &[Example],
        examples_items: &[Example],
    ) -> Result<Vec<(Gen, Generator<'m>)>> {
        let mut gens = Vec::new();
        for (kind, engine, format) in [
            (
                Gen::Shorthand,
                EngineKind::Llguidance,
                OutputFormat::Shorthand,
            ),
            (Gen::Items, EngineKind::Llguidance, OutputFormat::Shorthand),
            (
                Gen::Free,
                EngineKind::Unconstrained,
                OutputFormat::Shorthand,
            ),
            (Gen::Json, EngineKind::Llguidance, OutputFormat::Json),
        ] {
            if conditions.iter().any(|c| generator_of(c) == kind) {
                let ex = if kind == Gen::Items && args.example_items {
                    examples_items
                } else {
                    examples
                };
                let opts = GeneratorOptions {
                    engine,
                    format,
                    threads: Some(args.threads as usize),
                    max_tokens: args.max_tokens.map(|t| t as usize),
                    examples: ex.to_vec(),
                    allow_undeclared: args.allow_undeclared,
                    timeout: Some(std::time::Duration::from_secs_f64(args.timeout)),
                    split_lines: args.split_lines,
                    draft_tokens: args.draft_tokens,
                    ..Default::default()
                };
                let mut g =
                    Generator::new(model, spec_copy(ctx), opts).context("preparing generation")?;
                g.warm().context("evaluating the prompt prefix")?;
                gens.push((kind, g));
            }
        }
        Ok(gens)
    }

    /// An outcome for every condition of a case that could not run (`error`).
    fn failed(conditions: &[&str], error: &str) -> Vec<Outcome> {
        conditions
            .iter()
            .map(|_| Outcome {
                result: Err(error.to_string()),
                stats: Stats::default(),
                fallback: None,
            })
            .collect()
    }

    /// The suite's catalogs and aliases; catalog entries for sites the schema already
    /// enumerates (APIMix lists its enum slots as catalogs too) are left to the schema.
    /// The worked examples teach the words before each field's values
    /// ([`SpecIndex::learn_contexts`]), as in `dss generate`. With `open`, every catalog
    /// value left is withheld too (with its aliases): only the schema's enums are known.
    fn index(
        dir: &Path,
        spec: &CompiledSpec,
        withheld: Vec<(String, String)>,
        examples: &[Example],
        open: bool,
    ) -> Result<SpecIndex> {
        let mut catalogs = Catalogs::from_dir(dir)?;
        catalogs.withheld = withheld;
        let sites = spec.sites();
        catalogs.values.retain(|path, _| {
            sites.iter().any(|s| {
                path_matches(path, &s.path)
                    && matches!(s.kind, SiteKind::Text { .. } | SiteKind::Number { .. })
            })
        });
        if open {
            let all: Vec<(String, String)> = catalogs
                .values
                .iter()
                .flat_map(|(p, vs)| vs.iter().map(|v| (p.clone(), value_text(v))))
                .collect();
            catalogs.withheld.extend(all);
        }
        let mut ix = SpecIndex::build(spec, &catalogs)?;
        ix.learn_contexts(
            spec,
            examples.iter().map(|e| (e.request.as_str(), &e.output)),
        );
        Ok(ix)
    }

    pub(super) fn run(dir: &Path, args: &EvalRunArgs) -> Result<ExitCode> {
        let started = std::time::Instant::now();
        let suite = Suite::load(dir)?;
        let similar_setting = check_similar(&suite, dir, args.allow_similar)?;
        let mut conditions: Vec<&str> = Vec::new();
        for c in CONDITIONS {
            if args.conditions.iter().any(|x| x == c) {
                conditions.push(c);
            }
        }
        if let Some(id) = args
            .cases
            .iter()
            .find(|id| !suite.cases.iter().any(|c| &c.id == *id))
        {
            bail!("--cases: the suite has no case `{id}`");
        }
        let chosen: Vec<dss_eval::Case>;
        let cases = if args.cases.is_empty() {
            &suite.cases[..]
        } else {
            chosen = suite
                .cases
                .iter()
                .filter(|c| args.cases.contains(&c.id))
                .cloned()
                .collect();
            &chosen[..]
        };
        let cases = &cases[..args.limit.unwrap_or(usize::MAX).min(cases.len())];
        // Read again from the file, for errors with its line and column.
        let yaml = dir.join("notation.yaml");
        let notation = crate::load_notation(suite.notation.is_some().then_some(yaml.as_path()))?;
        // Cases that carry their own tools are read against those, each distinct tool set
        // compiled once; such a suite has no shared worked examples.
        let per_case = suite.schema.is_none() || cases.iter().any(|c| c.tools.is_some());
        let examples: Vec<Example> = if per_case {
            Vec::new()
        } else {
            suite
                .examples
                .iter()
                .map(|e| Example {
                    request: e.request.clone(),
                    output: e.gold.clone(),
                })
                .collect()
        };
        let schema_file = dir.join("schema.json").display().to_string();
        let shared: Option<Rc<Ctx>> = match (&suite.schema, per_case) {
            (Some(schema), false) => Some(Rc::new(context(
                dir,
                schema,
                &notation,
                &examples,
                &schema_file,
                args.catalog_mode == "open",
            )?)),
            _ => None,
        };
        // Each case's context, or why it has none (its tools do not compile): such a case
        // gets an error record under every condition.
        let mut contexts: HashMap<String, Rc<Ctx>> = HashMap::new();
        let mut case_ctx: Vec<std::result::Result<Rc<Ctx>, String>> =
            Vec::with_capacity(cases.len());
        for c in cases {
            if let Some(s) = &shared {
                case_ctx.push(Ok(s.clone()));
                continue;
            }
            let Some(schema) = suite.schema_of(c) else {
                case_ctx.push(Err(format!("case `{}` has no schema", c.id)));
                continue;
            };
            let key = schema.to_string();
            if let Some(x) = contexts.get(&key) {
                case_ctx.push(Ok(x.clone()));
                continue;
            }
            let what = if c.tools.is_some() {
                format!("the tools of case `{}`", c.id)
            } else {
                schema_file.clone()
            };
            match context(
                dir,
                schema,
                &notation,
                &examples,
                &what,
                args.catalog_mode == "open",
            ) {
                Ok(x) => {
                    let x = Rc::new(x);
                    contexts.insert(key, x.clone());
                    case_ctx.push(Ok(x));
                }
                Err(e) => case_ctx.push(Err(format!("{e:#}"))),
            }
        }
        let case_keys: Vec<std::result::Result<String, String>> = case_ctx
            .iter()
            .map(|x| x.as_ref().map(|x| x.key.clone()).map_err(Clone::clone))
            .collect();
        // Leave-one-out: how many cases' golds use each (site, value).
        let mut uses: HashMap<(String, String), usize> = Default::default();
        if args.catalog_mode == "loo" {
            let mut count = |gold: &Value, paths: &[String]| {
                let pairs: std::collections::BTreeSet<(String, String)> =
                    gold_pairs(gold, paths).into_iter().collect();
                for p in pairs {
                    *uses.entry(p).or_default() += 1;
                }
            };
            match &shared {
                Some(s) => suite
                    .cases
                    .iter()
                    .for_each(|c| count(&c.gold, &s.site_paths)),
                None => cases.iter().zip(&case_ctx).for_each(|(c, x)| {
                    if let Ok(x) = x {
                        count(&c.gold, &x.site_paths);
                    }
                }),
            }
        }
        // With --example-items, the worked examples as the `gp` and `ner-cd` prompts give a
        // request: with the items the same extraction finds in it (some of which its answer
        // does not use).
        let examples_items: Vec<Example> = match &shared {
            Some(s) => examples
                .iter()
                .map(|e| Example {
                    request: s
                        .index
                        .analyze(&e.request, ExtractMode::Full, NEAREST)
                        .prompt(&e.request),
                    output: e.output.clone(),
                })
                .collect(),
            None => Vec::new(),
        };
        let served = args.backend.is_server();
        if served {
            if let Some(c) = conditions
                .iter()
                .find(|c| matches!(generator_of(c), Gen::Free | Gen::Json))
            {
                bail!("condition `{c}` runs in process only; with --backend openai take gp, prune, ner-cd, cd");
            }
        }
        // Served generators per context (by its key); the server's model name is asked once.
        let mut served_gens: HashMap<String, Vec<(Gen, dss_serve::ServedGenerator)>> =
            HashMap::new();
        let mut served_model: Option<String> = args.backend.server_model.clone();
        if served {
            let mut all: Vec<&Rc<Ctx>> = contexts.values().collect();
            all.extend(shared.iter());
            for ctx in all {
                let mut gens = Vec::new();
                for kind in [Gen::Shorthand, Gen::Items] {
                    if conditions.iter().any(|c| generator_of(c) == kind) {
                        let ex = if kind == Gen::Items && args.example_items {
                            &examples_items
                        } else {
                            &examples
                        };
                        let opts = dss_serve::ServeOptions {
                            kind: args.backend.server_kind,
                            mode: args.backend.serve_mode,
                            model: served_model.clone(),
                            max_tokens: args.max_tokens.map(|t| t as usize),
                            grammar: dss_compiler::prune::GrammarOptions {
                                allow_undeclared: args.allow_undeclared,
                            },
                            timeout: Some(std::time::Duration::from_secs_f64(args.timeout)),
                        };
                        let g = dss_serve::ServedGenerator::new(
                            crate::serve_cmd::client(&args.backend, args.timeout)?,
                            spec_copy(ctx),
                            ex,
                            opts,
                        )
                        .context("preparing served generation")?;
                        served_model = Some(g.model().to_string());
                        gens.push((kind, g));
                    }
                }
                served_gens.insert(ctx.key.clone(), gens);
            }
        }
        let model = if served {
            None
        } else {
            Some(crate::runtime_cmd::load_model(&args.model)?)
        };
        // In process: the generators of the context of the case being run, built again
        // where a case's context differs from the one before.
        let mut gens: Vec<(Gen, Generator<'_>)> = Vec::new();
        let mut gens_key: Option<String> = None;
        if let (Some(model), Some(ctx)) = (&model, &shared) {
            gens = generators(model, ctx, &conditions, args, &examples, &examples_items)?;
            gens_key = Some(ctx.key.clone());
        }
        let catalog_keys: Vec<String> = suite.catalogs.keys().cloned().collect();
        let pb = ProgressBar::new((cases.len() * conditions.len()) as u64);
        if let Ok(style) =
            ProgressStyle::with_template("{bar:30} {pos}/{len} {msg} [{elapsed} < {eta}]")
        {
            pb.set_style(style);
        }
        let mut items_file = match &args.out {
            Some(out) => {
                std::fs::create_dir_all(out)
                    .with_context(|| format!("creating {}", out.display()))?;
                let p = out.join("items.jsonl");
                Some((
                    std::io::BufWriter::new(
                        std::fs::File::create(&p)
                            .with_context(|| format!("creating {}", p.display()))?,
                    ),
                    p,
                ))
            }
            None => None,
        };
        let mut per: Vec<Vec<(Outcome, bool, bool)>> =
            conditions.iter().map(|_| Vec::new()).collect();
        let mut ner = NerCounts::default();
        let mut reachable = 0usize;
        // One case's request as evaluated (perturbed or not) and what extraction found in it.
        // A case without a context (its tools do not compile) has no analysis.
        let prepare = |case_no: usize| -> Result<Prepared> {
            let case = &cases[case_no];
            let Ok(ctx) = &case_ctx[case_no] else {
                return Ok((case_no, case.request.clone(), None));
            };
            let request = match args.perturb {
                Some(seed) => {
                    let values: Vec<String> = gold_pairs(&case.gold, &ctx.site_paths)
                        .into_iter()
                        .map(|(_, v)| v)
                        .collect();
                    let values: Vec<&str> = values.iter().map(String::as_str).collect();
                    // Seeded by the case's place in the suite, as a run of every case
                    // seeds it (`--cases` and `--limit` pick cases, not other typos).
                    let at = suite
                        .cases
                        .iter()
                        .position(|c| c.id == case.id)
                        .unwrap_or(case_no);
                    let mut rng = dss_extract::perturb::Rng::new(seed ^ (at as u64 + 1));
                    dss_extract::perturb::typos(&case.request, &values, &mut rng)
                }
                None => case.request.clone(),
            };
            let own_index;
            let index = if args.catalog_mode == "loo" {
                let withheld: Vec<(String, String)> = gold_pairs(&case.gold, &ctx.site_paths)
                    .into_iter()
                    .filter(|p| uses.get(p).copied().unwrap_or(0) <= 1)
                    .collect();
                own_index = self::index(dir, &ctx.spec, withheld, &examples, false)?;
                &own_index
            } else {
                &ctx.index
            };
            let a = index.analyze(&request, ExtractMode::Full, NEAREST);
            Ok((case_no, request, Some(a)))
        };
        // Scores one case's outcomes (one per condition) and writes them to items.jsonl.
        let mut record = |case_no: usize,
                          request: &str,
                          a: Option<&Analysis>,
                          outcomes: Vec<Outcome>|
         -> Result<()> {
            let case = &cases[case_no];
            if let (Some(a), Ok(ctx)) = (a, &case_ctx[case_no]) {
                let predicted: Vec<(String, String)> = a
                    .mentions
                    .iter()
                    .filter(|m| catalog_keys.iter().any(|k| path_matches(k, &m.site)))
                    .map(|m| (m.site.clone(), value_text(&m.value)))
                    .collect();
                ner.add(&predicted, &gold_pairs(&case.gold, &catalog_keys));
                if is_reachable(&ctx.spec, &ctx.sites, &case.gold, &a.restriction) {
                    reachable += 1;
                }
            }
            for ((ci, cond), o) in conditions.iter().enumerate().zip(outcomes) {
                let (e, ep) = match &o.result {
                    Ok(g) => (
                        em(&g.value, &case.gold, &suite.meta.scoring),
                        em_paper_case(&g.value, case, &suite.meta.scoring),
                    ),
                    Err(_) => (false, false),
                };
                if let Some((w, p)) = &mut items_file {
                    let (output, shorthand, error) = match &o.result {
                        Ok(g) => (g.value.clone(), Value::from(g.text.clone()), Value::Null),
                        Err(e) => (Value::Null, Value::Null, Value::from(e.clone())),
                    };
                    let line = json!({
                        "id": case.id,
                        "condition": cond,
                        "request": request,
                        "gold": case.gold,
                        "output": output,
                        "shorthand": shorthand,
                        "error": error,
                        "em": e,
                        "em_paper": ep,
                        "fallback": o.fallback,
                        "stats": o.stats,
                    });
                    // Flushed per line: a long run can be followed with `tail -f`.
                    writeln!(w, "{line}")
                        .and_then(|()| w.flush())
                        .with_context(|| format!("writing {}", p.display()))?;
                }
                per[ci].push((o, e, ep));
                pb.inc(1);
            }
            Ok(())
        };
        if served {
            // `--concurrency` cases in flight, scored and written in case order.
            let mut next_case = 0usize;
            run_ordered(
                args.backend.concurrency as usize,
                || -> Result<Option<Input<Prepared, _>>> {
                    if next_case == cases.len() {
                        return Ok(None);
                    }
                    next_case += 1;
                    Ok(Some(Input::Work(prepare(next_case - 1)?)))
                },
                |(case_no, request, a): Prepared| {
                    let gens = case_keys[case_no]
                        .as_ref()
                        .map(|k| served_gens.get(k).map(Vec::as_slice).unwrap_or_default());
                    let outcomes: Vec<Outcome> = match (gens, &a) {
                        (Ok(gens), Some(a)) => conditions
                            .iter()
                            .map(|cond| {
                                let kind = generator_of(cond);
                                match gens.iter().find(|(k, _)| *k == kind) {
                                    Some((_, gen)) => run_served(gen, cond, &request, a),
                                    None => Outcome {
                                        result: Err(format!("no generator for condition {cond}")),
                                        stats: Stats::default(),
                                        fallback: None,
                                    },
                                }
                            })
                            .collect(),
                        (Err(e), _) => failed(&conditions, e),
                        (Ok(_), None) => failed(&conditions, "the case was not analyzed"),
                    };
                    (case_no, request, a, outcomes)
                },
                |(case_no, request, a, outcomes)| {
                    pb.set_message(cases[case_no].id.clone());
                    record(case_no, &request, a.as_ref(), outcomes).map(|()| true)
                },
            )?;
        } else {
            let Some(model) = &model else {
                bail!("no model loaded");
            };
            for (case_no, case) in cases.iter().enumerate() {
                let (_, request, a) = prepare(case_no)?;
                let (ctx, a) = match (&case_ctx[case_no], &a) {
                    (Ok(ctx), Some(a)) => (ctx, a),
                    (Err(e), _) => {
                        record(case_no, &request, None, failed(&conditions, e))?;
                        continue;
                    }
                    (Ok(_), None) => {
                        let outcomes = failed(&conditions, "the case was not analyzed");
                        record(case_no, &request, None, outcomes)?;
                        continue;
                    }
                };
                if gens_key.as_deref() != Some(ctx.key.as_str()) {
                    // The previous contexts are freed before the next are made.
                    gens.clear();
                    gens = generators(model, ctx, &conditions, args, &examples, &examples_items)?;
                    gens_key = Some(ctx.key.clone());
                }
                let mut outcomes = Vec::with_capacity(conditions.len());
                for cond in &conditions {
                    pb.set_message(format!("{} {cond}", case.id));
                    let kind = generator_of(cond);
                    let Some((_, gen)) = gens.iter_mut().find(|(k, _)| *k == kind) else {
                        bail!("no generator for condition {cond}");
                    };
                    outcomes.push(run_condition(gen, cond, &request, a));
                }
                record(case_no, &request, Some(a), outcomes)?;
            }
        }
        pb.finish_and_clear();
        if let Some((mut w, p)) = items_file {
            w.flush()
                .with_context(|| format!("writing {}", p.display()))?;
        }
        // The setting is part of the suite's name in every format.
        let mut name = suite.meta.name.clone();
        let mut setting = Vec::new();
        if args.catalog_mode != "closed" {
            setting.push(args.catalog_mode.clone());
        }
        setting.extend(similar_setting);
        if let Some(seed) = args.perturb {
            setting.push(format!("typo:{seed}"));
        }
        if !setting.is_empty() {
            name = format!("{name} ({})", setting.join(", "));
        }
        let model_name = match &served_model {
            Some(m) if served => format!(
                "{m} (served at {})",
                args.backend.url.as_deref().unwrap_or_default()
            ),
            _ => args.model.clone(),
        };
        let mut report = Report::new(&name, cases.len() as u64, &model_name);
        for (cond, outcomes) in conditions.iter().zip(&per) {
            report.set(cond, &aggregate(outcomes));
        }
        let frac = if cases.is_empty() {
            0.0
        } else {
            reachable as f64 / cases.len() as f64
        };
        report.ner = NerReport::from_counts(&ner, frac);
        let (build, machine) = super::build_and_machine();
        report.run = Some(dss_eval::RunInfo {
            suite: suite.meta.name.clone(),
            catalog_mode: args.catalog_mode.clone(),
            perturb: args.perturb.map(|seed| format!("typo:{seed}")),
            suite_cases: suite.cases.len() as u64,
            build,
            machine,
            threads: args.threads,
            date: humantime::format_rfc3339_seconds(std::time::SystemTime::now()).to_string(),
            seconds: started.elapsed().as_secs_f64(),
        });
        if let Some(out) = &args.out {
            for (name, text) in [
                ("report.csv", report.to_csv()),
                ("report.json", report.to_json()? + "\n"),
            ] {
                let p = out.join(name);
                std::fs::write(&p, text).with_context(|| format!("writing {}", p.display()))?;
            }
            // The plot is a view of report.json: without a font to draw its text, the run
            // still succeeds, with a warning.
            let svg = out.join("report.svg");
            if let Err(e) = crate::eval_plot::plot(&svg, &report) {
                eprintln!("warning: {} not written: {e:#}", svg.display());
            }
        }
        let text = match args.format.as_str() {
            "json" => report.to_json()?,
            "csv" => report.to_csv(),
            _ => report.to_table(),
        };
        write_stdout(&text)?;
        Ok(ExitCode::SUCCESS)
    }

    /// One case under one condition. `gp` falls back once to the full grammar (plain
    /// prompt) when pruned decoding fails, as `dss generate` does; its time counts both,
    /// and items.jsonl's `fallback` holds the pruned error.
    fn run_condition(gen: &mut Generator<'_>, cond: &str, request: &str, a: &Analysis) -> Outcome {
        let prompt = a.prompt(request);
        let pruning = |consume| Pruning {
            restriction: a.restriction.clone(),
            consume,
        };
        let r: Result<Generation, GenerateError> = match cond {
            "gp" => gen.generate_pruned(&prompt, &pruning(Consume::Class)),
            "gp-json" => gen.generate_json_pruned(&prompt, &a.restriction),
            "prune" => gen.generate_pruned(request, &pruning(Consume::Off)),
            "ner-cd" => gen.generate(&prompt),
            _ => gen.generate(request),
        };
        let mut stats = gen.last_stats().clone();
        match r {
            Ok(g) => Outcome {
                result: Ok(g),
                stats,
                fallback: None,
            },
            Err(first) if cond == "gp" && !matches!(first, GenerateError::Timeout { .. }) => {
                let spent = stats.total_ms;
                // The full grammar, the same prompt (this generator's examples carry items).
                let r = gen.generate(&prompt);
                stats = gen.last_stats().clone();
                stats.total_ms += spent;
                Outcome {
                    result: r.map_err(|e| e.to_string()),
                    stats,
                    fallback: Some(first.to_string()),
                }
            }
            Err(e) => Outcome {
                result: Err(e.to_string()),
                stats,
                fallback: None,
            },
        }
    }

    /// One case under one condition on a served model: as [`run_condition`], through
    /// `dss_serve` (its single or per-line mode); `gp` falls back once to the full grammar.
    fn run_served(
        gen: &dss_serve::ServedGenerator,
        cond: &str,
        request: &str,
        a: &Analysis,
    ) -> Outcome {
        let t0 = std::time::Instant::now();
        let prompt = a.prompt(request);
        let pruning = |consume| Pruning {
            restriction: a.restriction.clone(),
            consume,
        };
        let r = match cond {
            "gp" => gen.generate(&prompt, Some(&pruning(Consume::Class))),
            "prune" => gen.generate(request, Some(&pruning(Consume::Off))),
            "ner-cd" => gen.generate(&prompt, None),
            _ => gen.generate(request, None),
        };
        // Counted from the first request, so a fallback's time includes the first try.
        let done = |r: Result<dss_serve::Served, dss_serve::ServeError>| {
            let mut stats = Stats {
                total_ms: t0.elapsed().as_secs_f64() * 1e3,
                ..Stats::default()
            };
            let result = r.map_err(|e| e.to_string()).map(|s| {
                stats.prompt_tokens = s.stats.prompt_tokens as usize;
                stats.generated_tokens = s.stats.generated_tokens as usize;
                Generation {
                    value: s.value,
                    text: s.text,
                    cut_repetition: s.stats.cut_repetition,
                    stats: stats.clone(),
                }
            });
            (result, stats)
        };
        let (r, fallback) = match r {
            Err(first) if cond == "gp" && first.is_answer() => {
                (gen.generate(&prompt, None), Some(first.to_string()))
            }
            r => (r, None),
        };
        let (result, stats) = done(r);
        Outcome {
            result,
            stats,
            fallback,
        }
    }

    fn aggregate(outcomes: &[(Outcome, bool, bool)]) -> ConditionResult {
        let n = outcomes.len().max(1) as f64;
        let col = |f: &dyn Fn(&Stats) -> f64| -> Vec<f64> {
            outcomes.iter().map(|(o, _, _)| f(&o.stats)).collect()
        };
        let total = col(&|s| s.total_ms);
        let p = |v: &[f64], q| percentile(v, q).unwrap_or(0.0);
        ConditionResult {
            em: outcomes.iter().filter(|o| o.1).count() as f64 / n,
            em_paper: outcomes.iter().filter(|o| o.2).count() as f64 / n,
            valid: outcomes.iter().filter(|o| o.0.result.is_ok()).count() as u64,
            p50_ms: round(p(&total, 50.0)),
            p90_ms: round(p(&total, 90.0)),
            ttft_ms_p50: round(p(&col(&|s| s.ttft_ms), 50.0)),
            sampled_tokens_p50: p(
                &col(&|s| s.generated_tokens.saturating_sub(s.forced_tokens) as f64),
                50.0,
            ),
            forced_tokens_p50: p(&col(&|s| s.forced_tokens as f64), 50.0),
            model_calls_p50: p(&col(&|s| s.model_calls as f64), 50.0),
            uncached_prompt_tokens_p50: p(&col(&|s| s.uncached_prompt_tokens as f64), 50.0),
        }
    }

    fn round(x: f64) -> f64 {
        (x * 10.0).round() / 10.0
    }

    fn value_text(v: &Value) -> String {
        match v {
            Value::String(s) => s.clone(),
            v => v.to_string(),
        }
    }

    /// Whether the gold is writable under the grammar pruned to `r` (the approximation of
    /// the module docs), line by line as generation prunes: each line's pairs are checked
    /// against `r` less the pairs the lines before it wrote ([`Consume::Class`], by the
    /// [`Pruner`] `gp` decodes under). A gold that does not compress is not reachable.
    pub(super) fn is_reachable(
        spec: &CompiledSpec,
        sites: &[Site],
        gold: &Value,
        r: &Restriction,
    ) -> bool {
        let Ok(mut text) = spec.compress(gold) else {
            return false;
        };
        if !text.ends_with('\n') {
            text.push('\n');
        }
        // The loop `gp` decodes under; only the restriction left matters here.
        let pruner = Pruner::new(spec, r, Consume::Class, GrammarOptions::default());
        let mut now = r.clone();
        let mut before = 0usize;
        for (end, _) in text.match_indices('\n') {
            let Ok(progress) = pruner.progress(&text[..=end]) else {
                return false;
            };
            let line = progress.used.get(before..).unwrap_or_default();
            if !line.iter().all(|(path, v)| writable(sites, &now, path, v)) {
                return false;
            }
            before = progress.used.len();
            now = pruner.left(&progress);
        }
        true
    }

    /// Whether the grammar pruned to `r` lets `v` be written at the site `path`.
    fn writable(sites: &[Site], r: &Restriction, path: &str, v: &Value) -> bool {
        // A site the writer infers is left unpruned ([`Restriction::free`]).
        if r.free.contains(path) {
            return true;
        }
        let candidates = r.at(path);
        if !candidates.is_empty() {
            return candidates.iter().any(|c| same_value(c, v));
        }
        let Some(site) = sites.iter().find(|s| s.path == path) else {
            return true;
        };
        let free = matches!(site.kind, SiteKind::Text { .. } | SiteKind::Number { .. })
            && !r.bound.contains(path);
        // A field its record requires keeps its full set when nothing was found for it,
        // however optional the record (a side's count).
        free || site.required_in_record
    }

    fn same_value(a: &Value, b: &Value) -> bool {
        match (a.as_f64(), b.as_f64()) {
            (Some(x), Some(y)) => x == y,
            _ => a == b,
        }
    }
}

#[cfg(all(test, feature = "runtime"))]
mod tests {
    use super::runner::is_reachable;
    use super::*;
    use dss_compiler::prune::Restriction;
    use serde_json::json;

    #[test]
    fn conditions_are_checked_by_name() {
        assert_eq!(parse_condition("ner-cd").as_deref(), Ok("ner-cd"));
        let e = parse_condition("gpx").unwrap_err();
        assert!(e.contains("unknown condition `gpx`"), "{e}");
    }

    #[test]
    fn reachability_follows_the_candidates() {
        let schema = json!({
            "type": "object",
            "properties": {
                "a": {"enum": ["x", "y", "z"]},
                "r": {"enum": ["p", "q"]},
                "b": {"type": "string"}
            },
            "required": ["r"],
            "additionalProperties": false
        });
        let spec = dss_compiler::compile(&schema, &Default::default()).unwrap();
        let sites = spec.sites();
        let mut r = Restriction::default();
        r.candidates.insert("/a".into(), vec![json!("x")]);
        // A candidate, a required site with none (its full set stays), a free string.
        assert!(is_reachable(
            &spec,
            &sites,
            &json!({"a": "x", "r": "q", "b": "anything"}),
            &r
        ));
        // A value the restriction does not offer at a restricted site.
        assert!(!is_reachable(
            &spec,
            &sites,
            &json!({"a": "y", "r": "q"}),
            &r
        ));
        // An optional enum site with no candidate is left out of the pruned grammar.
        assert!(!is_reachable(
            &spec,
            &sites,
            &json!({"a": "x", "r": "q"}),
            &Restriction::default()
        ));
        // A gold that does not compress is not reachable.
        assert!(!is_reachable(&spec, &sites, &json!({"r": 3}), &r));
        // A site left unpruned as inferred takes any of its values, candidates or not.
        let mut inferred = r.clone();
        inferred.free.insert("/a".into());
        assert!(is_reachable(
            &spec,
            &sites,
            &json!({"a": "y", "r": "q"}),
            &inferred
        ));
    }

    #[test]
    fn reachability_follows_consumption_and_required_fields_of_optional_records() {
        // An order of items, each one record of an optional form (as FoodOrdering's
        // `side`): its count is a field the record requires, bound (a number catalog).
        let schema = json!({
            "type": "array",
            "items": {
                "type": "object",
                "properties": {
                    "side": {
                        "type": "object",
                        "properties": {
                            "number": {"type": "integer"},
                            "kind": {"enum": ["fries", "salad"]}
                        },
                        "required": ["number"],
                        "additionalProperties": false
                    }
                },
                "additionalProperties": false
            }
        });
        let spec = dss_compiler::compile(&schema, &Default::default()).unwrap();
        let sites = spec.sites();
        let number = sites
            .iter()
            .find(|s| s.path.ends_with("/side/number"))
            .expect("the count's site")
            .clone();
        assert!(!number.required && number.required_in_record, "{number:?}");
        let kind = sites
            .iter()
            .find(|s| s.path.ends_with("/side/kind"))
            .expect("the kind's site")
            .path
            .clone();
        let mut r = Restriction::default();
        r.bound.insert(number.path.clone());
        r.candidates
            .insert(kind.clone(), vec![json!("fries"), json!("salad")]);
        // Nothing found for the count: the pruner keeps its full set, optional record or not.
        let one = json!([{"side": {"number": 1, "kind": "fries"}}]);
        assert!(is_reachable(&spec, &sites, &one, &r));
        // A count found once: the first line takes it; the second line's count, with the
        // found one consumed, is free again.
        r.candidates.insert(number.path.clone(), vec![json!(2)]);
        let two_then_one = json!([
            {"side": {"number": 2, "kind": "fries"}},
            {"side": {"number": 1, "kind": "salad"}}
        ]);
        assert!(is_reachable(&spec, &sites, &two_then_one, &r));
        // Before it is used, the found count is the only one offered.
        let one_then_two = json!([
            {"side": {"number": 1, "kind": "fries"}},
            {"side": {"number": 2, "kind": "salad"}}
        ]);
        assert!(!is_reachable(&spec, &sites, &one_then_two, &r));
    }
}

#[cfg(test)]
mod similar_tests {
    use super::check_similar;
    use dss_eval::{Case, Suite};
    use serde_json::json;

    fn suite(example: &str) -> Suite {
        let case = |id: &str, request: &str| Case {
            id: id.into(),
            request: request.into(),
            gold: json!(null),
            tools: None,
            acceptable: None,
            extra: Default::default(),
        };
        Suite {
            meta: dss_eval::SuiteMeta {
                name: "t".into(),
                source: String::new(),
                license: String::new(),
                notes: Vec::new(),
                scoring: Default::default(),
            },
            schema: Some(json!({})),
            catalogs: Default::default(),
            aliases: Default::default(),
            cases: vec![case("c1", "list flights from oslo to bergen on monday")],
            examples: vec![case("e1", example)],
            notation: None,
        }
    }

    #[test]
    fn a_near_example_stops_the_run_unless_allowed_and_then_is_named() {
        let dir = std::path::Path::new("suites/t");
        let near = suite("list the flights from oslo to bergen on monday");
        let e = check_similar(&near, dir, false).unwrap_err().to_string();
        assert!(
            e.contains("suites/t/examples.jsonl") && e.contains("`e1`") && e.contains("`c1`"),
            "{e}"
        );
        assert_eq!(
            check_similar(&near, dir, true).unwrap().as_deref(),
            Some("allow-similar: 1 near pairs")
        );
        let far = suite("what is a fare code");
        assert_eq!(check_similar(&far, dir, false).unwrap(), None);
        assert_eq!(check_similar(&far, dir, true).unwrap(), None);
    }
}
