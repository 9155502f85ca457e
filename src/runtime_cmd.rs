//! `dss model` and `dss generate` (feature `runtime`): the local model runtime.

use anyhow::{anyhow, Context, Result};
use clap::{Args, Subcommand};
use dss_compiler::prune::Pruning;
use dss_runtime::generate::PrefixCache;
use dss_runtime::models::ModelRegistry;
use dss_runtime::models::DEFAULT_MODEL;
use dss_runtime::{
    EngineKind, GenerateError, Generation, Generator, GeneratorOptions, LocalModel, OutputFormat,
    Stats,
};
use serde_json::{json, Value};
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use crate::serve_cmd::{tier_name, GenerateCommon};
use crate::{load_spec, write_stdout};
use dss_compiler::prune::Consume;
use dss_extract::{Analysis, SpecIndex};

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
    /// Measure what a model call costs on this machine (llama.cpp's own timings): calls
    /// of 1 to 64 tokens on top of a cached context; a decoding call's cost (per call +
    /// per token) and the prompt's cost per token bound a request's latency (build with
    /// --release).
    Bench(ModelBenchArgs),
}

#[derive(Args)]
pub(crate) struct ModelBenchArgs {
    /// A pinned model name (`dss model list`) or a path to any GGUF file.
    #[arg(default_value = DEFAULT_MODEL)]
    name: String,
    /// CPU threads [default: physical cores].
    #[arg(long, value_parser = clap::value_parser!(u32).range(1..))]
    threads: Option<u32>,
    /// Tokens in the KV cache before each measured call (a prompt's shared prefix).
    #[arg(long, default_value_t = 400)]
    context: usize,
    /// Tokens a measured call reads, comma-separated (1 to 512 each).
    #[arg(long, value_delimiter = ',', default_value = "1,2,4,8,16,32,64")]
    batches: Vec<usize>,
    /// Calls measured per batch size.
    #[arg(long, default_value_t = 10, value_parser = clap::value_parser!(u64).range(1..))]
    repeats: u64,
    /// Print the measurements as JSON.
    #[arg(long)]
    json: bool,
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
            let path = registry.fetch_with_progress(name, &mut |p| eprintln!("{name}: {p}"))?;
            write_stdout(&path.display().to_string())?;
        }
        ModelCommand::Verify { name } => {
            let path = registry.verify(name)?;
            write_stdout(&format!("{name}: ok ({})", path.display()))?;
        }
        ModelCommand::Bench(args) => model_bench(&registry, args)?,
    }
    Ok(ExitCode::SUCCESS)
}

/// `dss model bench`: the cost of a call by the number of tokens it reads.
fn model_bench(registry: &ModelRegistry, args: &ModelBenchArgs) -> Result<()> {
    let path = registry.resolve(&args.name)?;
    let model = LocalModel::load(&path).with_context(|| format!("loading {}", path.display()))?;
    let opts = dss_runtime::generate::CallCostOptions {
        threads: args.threads.map(|t| t as usize),
        context: args.context,
        batches: args.batches.clone(),
        repeats: args.repeats as usize,
    };
    let costs = model.call_costs(&opts)?;
    if args.json {
        let mut v = serde_json::to_value(&costs)?;
        v["model"] = json!(path.display().to_string());
        return write_stdout(&serde_json::to_string_pretty(&v)?);
    }
    let mut out = format!(
        "model: {}\nthreads: {}; {} tokens cached before each call; {} calls per size (medians)\n\n",
        path.display(),
        costs.threads,
        costs.context,
        args.repeats
    );
    out.push_str("tokens a call reads | llama.cpp ms | wall ms | ms per token\n");
    for c in &costs.costs {
        out.push_str(&format!(
            "{:>19} | {:>12.1} | {:>7.1} | {:>12.2}\n",
            c.tokens,
            c.llama_ms_p50,
            c.wall_ms_p50,
            c.llama_ms_p50 / c.tokens as f64
        ));
    }
    let largest = costs.costs.iter().map(|c| c.tokens).max().unwrap_or(0);
    out.push_str(&format!(
        "\ndecoding calls (1 to {} tokens; fit): {:.1} ms a call + {:.2} ms per token it reads\n\
         prompt (a call of {largest} tokens): {:.2} ms per token ({:.0} tokens/s)",
        dss_runtime::generate::DECODING_TOKENS,
        costs.per_call_ms,
        costs.per_token_ms,
        costs.prompt_ms_per_token,
        1e3 / costs.prompt_ms_per_token.max(1e-9)
    ));
    write_stdout(&out)
}

#[derive(Args)]
pub(crate) struct GenerateArgs {
    /// The flags the server backend has too.
    #[command(flatten)]
    pub common: GenerateCommon,
    /// A pinned model name (`dss model list`) or a path to any GGUF file.
    #[arg(long, value_name = "NAME|PATH", default_value = DEFAULT_MODEL)]
    pub model: String,
    /// Constraint engine: llguidance (default), gbnf (llama.cpp's sampler), none.
    #[arg(long, default_value = "llguidance", value_parser = parse_engine)]
    pub engine: EngineKind,
    /// CPU threads [default: physical cores].
    #[arg(long, value_parser = clap::value_parser!(u32).range(1..))]
    pub threads: Option<u32>,
    /// Context size in tokens (prompt + output).
    #[arg(long = "ctx", default_value_t = 4096, value_parser = clap::value_parser!(u32).range(256..))]
    pub n_ctx: u32,
    /// Sample forced text token by token instead of appending it.
    #[arg(long)]
    pub no_fast_forward: bool,
    /// Where the document may end and the model's choice is not allowed, take the best
    /// allowed token instead of ending the document.
    #[arg(long)]
    pub no_end_on_rejection: bool,
    /// Where the shared prompt prefix's KV cache is kept, so the next process starts warm
    /// [default: `$DSS_CACHE_DIR/prefix`, else the user's cache directory `dss/prefix`;
    /// the 8 most recently used files are kept]. A stale or foreign file is rewritten.
    #[arg(long, value_name = "DIR", num_args = 0..=1)]
    pub prefix_cache: Option<Option<PathBuf>>,
    /// Evaluate the prompt prefix in this process only (no cache file).
    #[arg(long, conflicts_with = "prefix_cache")]
    pub no_prefix_cache: bool,
    /// Let a line end while a value found only it could take is unwritten (by default the
    /// line goes on with the best token that does not end it: one call is not split).
    #[arg(long)]
    pub split_lines: bool,
    /// Draft tokens per model call: tokens that follow the last output tokens in the
    /// request are read in the same call; where the model agrees with them the next steps
    /// need no call (the output is the same). 0: no drafts.
    #[arg(long, default_value_t = dss_runtime::GeneratorOptions::default().draft_tokens)]
    pub draft_tokens: usize,
    /// The server backend (`--backend openai --url URL …`).
    #[command(flatten)]
    pub backend: crate::serve_cmd::BackendArgs,
}

/// What pruning added to one request's measurements.
pub(crate) struct PruneReport {
    extract_ms: f64,
    ix_values: usize,
    ix_sites: usize,
    tier: String,
}

/// Generates for `request`: pruned by the values found in it (with the items in the prompt),
/// falling back once to the full grammar if decoding fails; or under the full grammar.
pub(crate) fn generate_one(
    gen: &mut Generator<'_>,
    index: Option<&SpecIndex>,
    args: &GenerateArgs,
    request: &str,
) -> Result<(Generation, Option<PruneReport>), GenerateError> {
    let t = std::time::Instant::now();
    let (prompt_request, a) = args.common.analyze(index, request);
    let extract_ms = t.elapsed().as_secs_f64() * 1e3;
    let prune = a.map(|a| (prompt_request, a, extract_ms));
    generate_analyzed(gen, request, prune, args.common.consume)
}

/// Generates for `request`: under the grammar pruned by its analysis (with `prompt_request`,
/// the request as the prompt carries it, and the time extraction took), falling back once
/// to the full grammar if decoding fails; or, without an analysis, under the full grammar.
/// `dss generate` and `dss bench-generate` (e) both go through it.
pub(crate) fn generate_analyzed(
    gen: &mut Generator<'_>,
    request: &str,
    prune: Option<(String, Analysis, f64)>,
    consume: Consume,
) -> Result<(Generation, Option<PruneReport>), GenerateError> {
    let Some((prompt_request, a, extract_ms)) = prune else {
        return Ok((gen.generate(request)?, None));
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
        tier: tier_name(a.tier),
    };
    let pruning = Pruning {
        restriction: a.restriction,
        consume,
    };
    match gen.generate_pruned(&prompt_request, &pruning) {
        Ok(g) => Ok((g, Some(report))),
        // The time budget is the request's, not the pruned grammar's: no second try.
        Err(e @ GenerateError::Timeout { .. }) => Err(e),
        Err(e) => {
            eprintln!("warning: decoding under the pruned grammar failed ({e}); retrying under the full grammar");
            report.tier = "full".into();
            Ok((gen.generate(request)?, Some(report)))
        }
    }
}

/// The whole prompt `request` is given (what `--print-prompt` shows).
fn full_prompt(
    gen: &Generator<'_>,
    index: Option<&SpecIndex>,
    args: &GenerateArgs,
    request: &str,
) -> String {
    let (request, _) = args.common.analyze(index, request);
    let t = gen.prompt();
    format!("{}{request}{}", t.prefix, t.suffix)
}

/// The directory of prompt-prefix cache files: `--prefix-cache DIR`, else the default
/// (`$DSS_CACHE_DIR/prefix`, else `<user cache dir>/dss/prefix`); `None` with
/// `--no-prefix-cache` or when the system has no cache directory.
fn prefix_cache_dir(args: &GenerateArgs) -> Option<PathBuf> {
    if args.no_prefix_cache {
        return None;
    }
    if let Some(Some(dir)) = &args.prefix_cache {
        return Some(dir.clone());
    }
    match std::env::var_os("DSS_CACHE_DIR") {
        Some(d) if !d.is_empty() => Some(PathBuf::from(d).join("prefix")),
        _ => dirs::cache_dir().map(|c| c.join("dss").join("prefix")),
    }
}

/// How many prefix files the cache directory keeps (the most recently used).
const PREFIX_CACHE_KEEP: usize = 8;

/// Removes all but the `keep` most recently used prefix files of `dir` (their names start
/// with `prefix-` and end with `.kv`; nothing else there is touched). Best effort.
fn evict_prefix_files(dir: &Path, keep: usize) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    let mut files: Vec<(std::time::SystemTime, PathBuf)> = entries
        .filter_map(|e| e.ok())
        .filter(|e| {
            let name = e.file_name();
            let name = name.to_string_lossy();
            name.starts_with("prefix-") && name.ends_with(".kv")
        })
        .filter_map(|e| {
            let m = e.metadata().ok()?;
            Some((m.modified().ok()?, e.path()))
        })
        .collect();
    files.sort_by_key(|f| std::cmp::Reverse(f.0));
    for (_, path) in files.into_iter().skip(keep) {
        let _ = std::fs::remove_file(path);
    }
}

/// Marks a loaded cache file as just used, so eviction keeps it.
fn touch(path: &Path) {
    if let Ok(f) = std::fs::File::options().append(true).open(path) {
        let _ = f.set_modified(std::time::SystemTime::now());
    }
}

fn parse_engine(s: &str) -> Result<EngineKind, String> {
    EngineKind::from_name(s).ok_or_else(|| format!("unknown engine `{s}` (llguidance, gbnf, none)"))
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
    let c = &args.common;
    if args.backend.is_server() {
        return crate::serve_cmd::run(c, &args.backend);
    }
    let spec = load_spec(&c.spec, None)?;
    let examples = c.worked_examples()?;
    if examples.is_empty() && !c.no_examples {
        eprintln!(
            "warning: this spec has no worked examples, so the model sees only the grammar and tends to fill \
             every optional field; add a few as JSON Lines of {{\"request\": ..., \"output\": ...}} in \
             examples.jsonl beside spec.json, or pass --examples FILE (--no-examples silences this)"
        );
    }
    let model = load_model(&args.model)?;
    let opts = GeneratorOptions {
        engine: args.engine,
        format: OutputFormat::Shorthand,
        threads: args.threads.map(|t| t as usize),
        n_ctx: args.n_ctx,
        max_tokens: c.max_tokens.map(|t| t as usize),
        timeout: Some(std::time::Duration::from_secs_f64(c.timeout)),
        fast_forward: !args.no_fast_forward,
        examples,
        end_on_rejection: !args.no_end_on_rejection,
        allow_undeclared: c.allow_undeclared,
        split_lines: args.split_lines,
        draft_tokens: args.draft_tokens,
    };
    let index = c.index(&spec, &opts.examples)?;
    let mut gen = Generator::new(&model, spec, opts)
        .with_context(|| format!("preparing generation for {}", c.spec.display()))?;
    let load_ms = model.load_ms();
    if c.print_prompt {
        let print = |request: &str| full_prompt(&gen, index.as_ref(), args, request);
        if let Some(done) = c
            .requests
            .each_line(|r| serde_json::to_string(&print(r)).map_err(|e| e.to_string()))
        {
            return done;
        }
        write_stdout(&print(c.requests.single()?))?;
        return Ok(ExitCode::SUCCESS);
    }
    let prefix = match prefix_cache_dir(args) {
        None => None,
        Some(dir) => {
            let outcome = gen
                .warm_cached(&dir)
                .context("evaluating the prompt prefix")?;
            match &outcome {
                PrefixCache::NotSaved { path, reason } => eprintln!(
                    "warning: could not write the prefix cache {}: {reason}",
                    path.display()
                ),
                PrefixCache::Loaded { path, .. } => touch(path),
                _ => {}
            }
            evict_prefix_files(&dir, PREFIX_CACHE_KEEP);
            Some(outcome)
        }
    };
    let stats_line = |stats: &Stats, pr: Option<&PruneReport>, error: Option<&str>| -> Result<()> {
        if c.stats {
            let mut v = serde_json::to_value(stats)?;
            if let Value::Object(o) = &mut v {
                o.insert("ok".into(), json!(error.is_none()));
                if let Some(e) = error {
                    o.insert("error".into(), json!(e));
                }
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
                for k in [
                    "ttft_ms",
                    "constraint_ms",
                    "total_ms",
                    "prune_ms",
                    "prompt_ms",
                    "decode_ms",
                ] {
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
    if let Some(done) = c.requests.each_line(|request| {
        let (g, pr) = match generate_one(&mut gen, index.as_ref(), args, request) {
            Ok(x) => x,
            Err(e) => {
                let msg = e.to_string();
                stats_line(gen.last_stats(), None, Some(&msg)).map_err(|e| e.to_string())?;
                return Err(msg);
            }
        };
        stats_line(&g.stats, pr.as_ref(), None).map_err(|e| e.to_string())?;
        Ok(c.record(g.text, g.value))
    }) {
        return done;
    }
    let request = c.requests.single()?;
    let (g, pr) = match generate_one(&mut gen, index.as_ref(), args, request) {
        Ok(x) => x,
        Err(e) => {
            stats_line(gen.last_stats(), None, Some(&e.to_string()))?;
            return Err(e.into());
        }
    };
    c.write_answer(&g.text, &g.value)?;
    stats_line(&g.stats, pr.as_ref(), None)?;
    Ok(ExitCode::SUCCESS)
}

fn round(x: f64) -> f64 {
    (x * 100.0).round() / 100.0
}
