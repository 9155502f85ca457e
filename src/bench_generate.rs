//! `dss bench-generate`: generation on each model over the same requests, in one run:
//! (a) constrained shorthand (llguidance, fast-forward), (b) the same prompt unconstrained,
//! (c) llama.cpp's GBNF sampler on the full grammar (greedy token first), (d) compact JSON
//! under the schema's JSON grammar, (e) as (a) under the grammar pruned to the request's
//! values (items found in the prompt, consumption, line holding; one retry under the full
//! grammar, as `dss generate`), (f) compact JSON under the schema pruned to the same values
//! (the same prompt as (e): what the notation itself changes, apart from pruning; `dss
//! eval`'s `gp-json`). Medians per configuration, and ratios against (a) measured in the
//! same run, and (f) against (e).

use anyhow::{bail, Context, Result};
use clap::Args;
use dss_runtime::{EngineKind, Generator, GeneratorOptions, OutputFormat, Stats};
use serde_json::Value;
use std::path::PathBuf;
use std::process::ExitCode;

use crate::prune_cmd::PruneArgs;
use crate::runtime_cmd::{generate_analyzed, load_model};
use crate::serve_cmd::spec_examples;
use dss_compiler::prune::Consume;

/// The targets: constraint overhead per token, Qwen's median end-to-end, and
/// (a) against (d).
const OVERHEAD_TARGET_MS: f64 = 0.2;
const QWEN_E2E_TARGET_MS: f64 = 350.0;
const JSON_SPEEDUP_TARGET: f64 = 3.0;

#[derive(Args)]
pub(crate) struct BenchGenerateArgs {
    /// The compiled spec [default: grammars/viz of the dss checkout the current directory is
    /// in, else grammars/viz of the current directory].
    #[arg(long, value_name = "PATH")]
    spec: Option<PathBuf>,
    /// Requests, one JSON string per line [default: examples/viz-requests.jsonl, found as
    /// --spec is].
    #[arg(long, value_name = "FILE")]
    requests: Option<PathBuf>,
    /// Models to run (names or GGUF paths).
    #[arg(
        long,
        value_delimiter = ',',
        default_value = "smollm2-135m,qwen2.5-coder-0.5b"
    )]
    models: Vec<String>,
    /// Configurations to run, from a,b,c,d,e,f.
    #[arg(long, value_delimiter = ',', default_value = "a,b,c,d,e,f")]
    configs: Vec<String>,
    /// Pruning for (e): catalogs, aliases, matcher (the spec directory's own catalogs.yaml
    /// and aliases.yaml are read as `dss generate` reads them).
    #[command(flatten)]
    prune: PruneArgs,
    /// CPU threads [default: physical cores].
    #[arg(long)]
    threads: Option<usize>,
    /// Use only the first N requests.
    #[arg(long)]
    limit: Option<usize>,
    /// Print each output.
    #[arg(long)]
    verbose: bool,
}

struct Config {
    key: &'static str,
    label: &'static str,
    engine: EngineKind,
    format: OutputFormat,
    /// Under the grammar pruned to each request's values.
    pruned: bool,
}

const CONFIGS: &[Config] = &[
    Config {
        key: "a",
        label: "(a) shorthand, llguidance + ff",
        engine: EngineKind::Llguidance,
        format: OutputFormat::Shorthand,
        pruned: false,
    },
    Config {
        key: "b",
        label: "(b) shorthand, unconstrained",
        engine: EngineKind::Unconstrained,
        format: OutputFormat::Shorthand,
        pruned: false,
    },
    Config {
        key: "c",
        label: "(c) shorthand, llama.cpp GBNF",
        engine: EngineKind::Gbnf,
        format: OutputFormat::Shorthand,
        pruned: false,
    },
    Config {
        key: "d",
        label: "(d) compact JSON, JSON grammar",
        engine: EngineKind::Llguidance,
        format: OutputFormat::Json,
        pruned: false,
    },
    Config {
        key: "e",
        label: "(e) shorthand, llguidance + ff, pruned",
        engine: EngineKind::Llguidance,
        format: OutputFormat::Shorthand,
        pruned: true,
    },
    Config {
        key: "f",
        label: "(f) compact JSON, pruned JSON grammar",
        engine: EngineKind::Llguidance,
        format: OutputFormat::Json,
        pruned: true,
    },
];

struct Row {
    label: &'static str,
    key: &'static str,
    valid: usize,
    n: usize,
    e2e: f64,
    ttft: f64,
    tokens: f64,
    forced_share: f64,
    overhead: f64,
    full_masks: usize,
}

/// The median of `v` (NaN for none).
fn median(v: Vec<f64>) -> f64 {
    dss_eval::report::median(&v).unwrap_or(f64::NAN)
}

pub(crate) fn run(args: &BenchGenerateArgs) -> Result<ExitCode> {
    // Defaults resolved now, from the current directory (never a path of the build).
    let spec_path = args
        .spec
        .clone()
        .unwrap_or_else(|| dss_data::repo_path("grammars/viz"));
    let requests_path = args
        .requests
        .clone()
        .unwrap_or_else(|| dss_data::repo_path("examples/viz-requests.jsonl"));
    let text = std::fs::read_to_string(&requests_path)
        .with_context(|| format!("cannot read {}", requests_path.display()))?;
    let mut requests = Vec::new();
    for (i, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        match serde_json::from_str::<Value>(line) {
            Ok(Value::String(s)) => requests.push(s),
            _ => bail!(
                "{}:{}: expected a JSON string",
                requests_path.display(),
                i + 1
            ),
        }
    }
    if let Some(n) = args.limit {
        requests.truncate(n);
    }
    if requests.is_empty() {
        bail!("no requests in {}", requests_path.display());
    }
    let examples = spec_examples(&spec_path, None, false)?;
    let threads = args
        .threads
        .unwrap_or_else(dss_runtime::generate::default_threads);
    println!(
        "generation benchmark: {} requests, spec {}, {} examples in the prompt, {threads} threads, greedy decoding",
        requests.len(),
        spec_path.display(),
        examples.len()
    );
    let mut all_ok = true;
    for name in &args.models {
        let model = load_model(name)?;
        println!("\n## {name} (load {:.0} ms)\n", model.load_ms());
        let mut rows = Vec::new();
        for cfg in CONFIGS
            .iter()
            .filter(|c| args.configs.iter().any(|k| k == c.key))
        {
            let spec = crate::load_spec(&spec_path, None)?;
            let opts = GeneratorOptions {
                engine: cfg.engine,
                format: cfg.format,
                threads: Some(threads),
                examples: examples.clone(),
                ..GeneratorOptions::default()
            };
            let index = if cfg.pruned {
                Some(
                    args.prune
                        .learned_index(&spec_path, &spec, &opts.examples)?,
                )
            } else {
                None
            };
            let mut gen = Generator::new(&model, spec, opts)?;
            gen.warm()?;
            let mut stats: Vec<Stats> = Vec::new();
            let mut valid = 0;
            for r in &requests {
                let t = std::time::Instant::now();
                let prune = index.as_ref().map(|ix| {
                    let a = args.prune.analyze(ix, r);
                    (a.prompt(r), a, t.elapsed().as_secs_f64() * 1e3)
                });
                let result = match prune {
                    Some((prompt, a, _)) if cfg.format == OutputFormat::Json => {
                        gen.generate_json_pruned(&prompt, &a.restriction)
                    }
                    prune => generate_analyzed(&mut gen, r, prune, Consume::Class).map(|(g, _)| g),
                };
                if args.verbose {
                    match &result {
                        Ok(g) => println!("  {} {r:?}\n    {}", cfg.key, g.value),
                        Err(e) => println!("  {} {r:?}\n    ERROR {e}", cfg.key),
                    }
                }
                if result.is_ok() {
                    valid += 1;
                }
                stats.push(gen.last_stats().clone());
            }
            let gen_tokens: usize = stats.iter().map(|s| s.generated_tokens).sum();
            let forced: usize = stats.iter().map(|s| s.forced_tokens).sum();
            let constraint: f64 = stats.iter().map(|s| s.constraint_ms).sum();
            rows.push(Row {
                label: cfg.label,
                key: cfg.key,
                valid,
                n: requests.len(),
                e2e: median(stats.iter().map(|s| s.total_ms).collect()),
                ttft: median(stats.iter().map(|s| s.ttft_ms).collect()),
                tokens: median(stats.iter().map(|s| s.generated_tokens as f64).collect()),
                forced_share: forced as f64 / gen_tokens.max(1) as f64,
                overhead: constraint / gen_tokens.max(1) as f64,
                full_masks: stats.iter().map(|s| s.full_masks).sum(),
            });
        }
        let base = rows.iter().find(|r| r.key == "a").map(|r| r.e2e);
        println!("| configuration | valid | median e2e ms | × (a) | median TTFT ms | median tokens | forced share | constraint ms/token | full masks |");
        println!("|---|---|---|---|---|---|---|---|---|");
        for r in &rows {
            let ratio = base.map_or("-".into(), |b| format!("{:.2}", r.e2e / b));
            println!(
                "| {} | {}/{} | {:.0} | {ratio} | {:.0} | {:.0} | {:.0}% | {:.3} | {} |",
                r.label,
                r.valid,
                r.n,
                r.e2e,
                r.ttft,
                r.tokens,
                100.0 * r.forced_share,
                r.overhead,
                r.full_masks
            );
        }
        let mut target = |what: String, ok: bool| {
            all_ok &= ok;
            println!("target: {what}: {}", verdict(ok));
        };
        if let Some(a) = rows.iter().find(|r| r.key == "a") {
            println!();
            target(
                format!(
                    "constraint overhead (a) {:.3} ms/token <= {OVERHEAD_TARGET_MS}",
                    a.overhead
                ),
                a.overhead <= OVERHEAD_TARGET_MS,
            );
            if let Some(d) = rows.iter().find(|r| r.key == "d") {
                let speedup = d.e2e / a.e2e;
                target(
                    format!(
                        "(a) vs (d) end-to-end speedup {speedup:.2}x >= {JSON_SPEEDUP_TARGET}x"
                    ),
                    speedup >= JSON_SPEEDUP_TARGET,
                );
            }
            if let (Some(e), Some(f)) = (
                rows.iter().find(|r| r.key == "e"),
                rows.iter().find(|r| r.key == "f"),
            ) {
                println!(
                    "(e) shorthand against (f) JSON, both pruned: median end-to-end {:.2}x faster, valid {}/{} and {}/{}",
                    f.e2e / e.e2e,
                    e.valid,
                    e.n,
                    f.valid,
                    f.n
                );
            }
            if name.contains("qwen") {
                target(
                    format!(
                        "median end-to-end (a) {:.0} ms <= {QWEN_E2E_TARGET_MS} ms",
                        a.e2e
                    ),
                    a.e2e <= QWEN_E2E_TARGET_MS,
                );
            }
        }
    }
    Ok(if all_ok {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}

fn verdict(ok: bool) -> &'static str {
    if ok {
        "met"
    } else {
        "NOT met"
    }
}
