//! `dss bench`: compile time and compress/expand throughput on the corpora, each next to
//! its target. Throughput is compared with serde_json parse + serialize of the same
//! documents, and compile time with the build of the schema's validator, each measured in
//! the same run, so the verdicts do not depend on the machine.

use crate::guard::guard;
use anyhow::{bail, Context, Result};
use clap::Args;
use dss_compiler::error::CompileError;
use dss_compiler::{compile_owned, CompileOptions, CompiledSpec};
use serde_json::Value;
use std::hint::black_box;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::{Duration, Instant};

/// Target: compress and expand run at least this fraction of serde_json's
/// parse + serialize throughput on the same documents.
const THROUGHPUT_RATIO_TARGET: f64 = 0.5;

#[derive(Args)]
pub(crate) struct BenchArgs {
    /// Corpus directory holding vega-lite/ and maskbench/ [default: $DSS_DATA_DIR, else
    /// ../shared/data from the current directory or beside the workspace it is in];
    /// `--data tests/fixtures` runs on the repository's small samples.
    #[arg(long, value_name = "DIR")]
    data: Option<PathBuf>,
    /// Runs of the Vega-Lite schema compile; the median is reported.
    #[arg(long, default_value_t = 11, value_parser = clap::value_parser!(u32).range(1..))]
    runs: u32,
    /// Repetitions of each throughput measurement (serde_json, compress and expand back to
    /// back); the median of the per-repetition ratios is reported.
    #[arg(long, default_value_t = 15, value_parser = clap::value_parser!(u32).range(1..))]
    reps: u32,
    /// Also time each phase alone (best of the repetitions): serde_json's parse and
    /// serialize, compress's validation, expand's decoding.
    #[arg(long)]
    phases: bool,
}

fn read_json(path: &Path) -> Result<Value> {
    let text =
        std::fs::read_to_string(path).with_context(|| format!("cannot read {}", path.display()))?;
    serde_json::from_str(&text).with_context(|| format!("{}: invalid JSON", path.display()))
}

fn json_files(dir: &Path, suffix: &str) -> Result<Vec<PathBuf>> {
    let mut files = Vec::new();
    for entry in std::fs::read_dir(dir).with_context(|| format!("cannot list {}", dir.display()))? {
        let path = entry?.path();
        if path
            .file_name()
            .and_then(|n| n.to_str())
            .is_some_and(|n| n.ends_with(suffix))
        {
            files.push(path);
        }
    }
    files.sort();
    Ok(files)
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

fn median(mut xs: Vec<Duration>) -> Duration {
    xs.sort();
    xs.get(xs.len() / 2).copied().unwrap_or_default()
}

/// Nearest-rank percentile of a sorted slice.
fn percentile(sorted: &[Duration], p: f64) -> Duration {
    if sorted.is_empty() {
        return Duration::ZERO;
    }
    let rank = ((p / 100.0) * sorted.len() as f64).ceil() as usize;
    sorted[rank.clamp(1, sorted.len()) - 1]
}

fn verdict(met: bool) -> &'static str {
    if met {
        "target met"
    } else {
        "MISSED"
    }
}

/// Compile a schema the bench owns (as `dss compile` owns the schema it read).
fn try_compile(schema: Value) -> Result<CompiledSpec, String> {
    match guard("compile", || {
        compile_owned(schema, &CompileOptions::default())
    })? {
        Ok(spec) => Ok(spec),
        Err(CompileError::RemoteRef { reference, .. }) => {
            Err(format!("remote-ref (not fetched): {reference}"))
        }
        Err(e) => Err(e.to_string()),
    }
}

/// A document that round-trips, ready for the throughput loops.
struct Doc<'a> {
    spec: &'a CompiledSpec,
    json: String,
    shorthand: String,
}

/// Prepare the documents; returns them and the number that could not be used.
fn prepare<'a>(
    items: impl IntoIterator<Item = (&'a CompiledSpec, &'a Value)>,
) -> (Vec<Doc<'a>>, usize) {
    let mut docs = Vec::new();
    let mut failed = 0;
    for (spec, value) in items {
        let Ok(json) = serde_json::to_string(value) else {
            failed += 1;
            continue;
        };
        match guard("compress", || spec.compress(value)) {
            // Compress of the value and of its text write the same shorthand (the bench
            // times the one from text).
            Ok(Ok(shorthand))
                if guard("compress", || spec.compress_str(&json))
                    .ok()
                    .and_then(Result::ok)
                    .as_ref()
                    == Some(&shorthand) =>
            {
                match guard("expand", || spec.expand(&shorthand)) {
                    // Both expand paths write the same text (the bench times the direct one).
                    Ok(Ok(expanded))
                        if serde_json::to_string(&expanded).ok()
                            == spec.expand_unvalidated_json(&shorthand).ok() =>
                    {
                        docs.push(Doc {
                            spec,
                            json,
                            shorthand,
                        })
                    }
                    _ => failed += 1,
                }
            }
            _ => failed += 1,
        }
    }
    (docs, failed)
}

struct Throughput {
    bytes: usize,
    serde: Duration,
    compress: Duration,
    expand: Duration,
    /// Medians of serde / compress and serde / expand, each ratio taken within one
    /// repetition: a slow spell of a noisy machine then hits both sides of a ratio.
    compress_ratio: f64,
    expand_ratio: f64,
}

fn measure(docs: &[Doc<'_>], reps: u32) -> Throughput {
    let mut serde = Vec::new();
    let mut compress = Vec::new();
    let mut expand = Vec::new();
    for _ in 0..reps {
        let t = Instant::now();
        for d in docs {
            if let Ok(v) = serde_json::from_str::<Value>(&d.json) {
                black_box(serde_json::to_string(&v).ok());
            }
        }
        serde.push(t.elapsed());

        // From the same text to text: compress reads the JSON itself.
        let t = Instant::now();
        for d in docs {
            black_box(d.spec.compress_str(&d.json).ok());
        }
        compress.push(t.elapsed());

        let t = Instant::now();
        for d in docs {
            black_box(d.spec.expand_unvalidated_json(&d.shorthand).ok());
        }
        expand.push(t.elapsed());
    }
    let ratios = |side: &[Duration]| {
        let mut r: Vec<f64> = serde
            .iter()
            .zip(side)
            .map(|(s, x)| s.as_secs_f64() / x.as_secs_f64().max(f64::MIN_POSITIVE))
            .collect();
        r.sort_by(f64::total_cmp);
        r[r.len() / 2]
    };
    Throughput {
        bytes: docs.iter().map(|d| d.json.len()).sum(),
        compress_ratio: ratios(&compress),
        expand_ratio: ratios(&expand),
        serde: median(serde),
        compress: median(compress),
        expand: median(expand),
    }
}

fn mb_per_s(bytes: usize, d: Duration) -> f64 {
    if d.is_zero() {
        return f64::INFINITY;
    }
    bytes as f64 / 1e6 / d.as_secs_f64()
}

/// The phases alone, best of `reps` each: what the throughput ratios are made of.
fn report_phases(docs: &[Doc<'_>], reps: u32) {
    let values: Vec<Value> = docs
        .iter()
        .filter_map(|d| serde_json::from_str(&d.json).ok())
        .collect();
    let best = |f: &dyn Fn()| {
        (0..reps)
            .map(|_| {
                let t = Instant::now();
                f();
                t.elapsed()
            })
            .min()
            .unwrap_or_default()
    };
    let parse = best(&|| {
        for d in docs {
            black_box(serde_json::from_str::<Value>(&d.json).ok());
        }
    });
    let serialize = best(&|| {
        for v in &values {
            black_box(serde_json::to_string(v).ok());
        }
    });
    let validate = best(&|| {
        for (d, v) in docs.iter().zip(&values) {
            black_box(d.spec.validate(v).ok());
        }
    });
    let compress = best(&|| {
        for (d, v) in docs.iter().zip(&values) {
            black_box(d.spec.compress(v).ok());
        }
    });
    let compress_text = best(&|| {
        for d in docs {
            black_box(d.spec.compress_str(&d.json).ok());
        }
    });
    let decode = best(&|| {
        for d in docs {
            black_box(d.spec.expand_unvalidated(&d.shorthand).ok());
        }
    });
    let expand = best(&|| {
        for d in docs {
            black_box(d.spec.expand_unvalidated_json(&d.shorthand).ok());
        }
    });
    println!(
        "  phases (ms, best of {reps}): serde_json parse {:.2}, serialize {:.2}; \
         validate a Value (full validator) {:.2}, compress a Value {:.2}, compress from \
         JSON text {:.2}; decode to a Value {:.2}, expand to JSON text {:.2}",
        ms(parse),
        ms(serialize),
        ms(validate),
        ms(compress),
        ms(compress_text),
        ms(decode),
        ms(expand),
    );
}

fn report_throughput(label: &str, docs: &[Doc<'_>], unusable: usize, reps: u32) {
    if docs.is_empty() {
        println!("throughput {label}: no usable documents ({unusable} failed to round-trip)");
        return;
    }
    let t = measure(docs, reps);
    let serde = mb_per_s(t.bytes, t.serde);
    println!(
        "throughput {label}: {} docs, {:.2} MB of JSON{}; serde_json parse+serialize {serde:.1} MB/s",
        docs.len(),
        t.bytes as f64 / 1e6,
        if unusable > 0 {
            format!(" ({unusable} more not measured: compress or expand failed)")
        } else {
            String::new()
        }
    );
    for (what, d, ratio) in [
        ("compress", t.compress, t.compress_ratio),
        ("expand", t.expand, t.expand_ratio),
    ] {
        let speed = mb_per_s(t.bytes, d);
        println!(
            "  {what:<8} {speed:>8.1} MB/s  ratio {ratio:.2} (target >= {THROUGHPUT_RATIO_TARGET})  {}",
            verdict(ratio >= THROUGHPUT_RATIO_TARGET)
        );
    }
}

pub(crate) fn run(args: &BenchArgs) -> Result<ExitCode> {
    // Resolved at run time (never the build machine's path).
    let data = args.data.clone().unwrap_or_else(dss_data::data_dir);
    let vl_dir = data.join("vega-lite");
    let mb_dir = data.join("maskbench").join("data");
    if !vl_dir.is_dir() || !mb_dir.is_dir() {
        bail!(
            "{}: corpus data not found (expected vega-lite/ and maskbench/data/ in it); pass \
             --data DIR or set DSS_DATA_DIR (README section \"Data\" says where the corpora \
             come from; `--data tests/fixtures` runs on the repository's small samples)",
            data.display()
        );
    }
    if cfg!(debug_assertions) {
        eprintln!(
            "warning: this is an unoptimized build; for real numbers run \
             `cargo run --release --no-default-features -- bench`"
        );
    }
    let shown = data.canonicalize().unwrap_or_else(|_| data.clone());
    println!("dss bench: data {}", shown.display());

    // Vega-Lite: compile time (median of N runs), then its examples' throughput.
    let vl_schema_path = vl_dir.join("vega-lite-schema.json");
    let vl_schema = read_json(&vl_schema_path)?;
    let vl_examples: Vec<Value> = json_files(&vl_dir.join("examples"), ".vl.json")?
        .iter()
        .map(|p| read_json(p))
        .collect::<Result<_>>()?;
    let mut times = Vec::new();
    // The validator is built on first use, not by compile: its build is the target.
    let mut validator_times = Vec::new();
    let mut vl_spec = None;
    for _ in 0..args.runs {
        let schema = vl_schema.clone();
        let t = Instant::now();
        let result = try_compile(schema);
        times.push(t.elapsed());
        match result {
            Ok(spec) => {
                let t = Instant::now();
                black_box(guard("validator", || spec.check_validator()).ok());
                validator_times.push(t.elapsed());
                vl_spec = Some(spec);
            }
            Err(e) => {
                println!("compile vega-lite schema: FAILED: {e}");
                break;
            }
        }
    }
    if vl_spec.is_some() {
        let m = median(times);
        let target = median(validator_times);
        println!(
            "compile vega-lite schema: median {:.1} ms over {} runs (target <= its validator's \
             build, median {:.1} ms in the same runs)  {}",
            ms(m),
            args.runs,
            ms(target),
            verdict(m <= target)
        );
    }

    // MaskBench: one compile per schema, p50/p99.
    let mut compile_times = Vec::new();
    let mut remote = 0;
    let mut failed = Vec::new();
    let mut specs: Vec<(CompiledSpec, Vec<Value>)> = Vec::new();
    let files = json_files(&mb_dir, ".json")?;
    for path in &files {
        let mut doc = read_json(path)?;
        let Some(schema) = doc.get_mut("schema").map(Value::take) else {
            failed.push(format!("{}: no `schema`", path.display()));
            continue;
        };
        let t = Instant::now();
        let result = try_compile(schema);
        let elapsed = t.elapsed();
        match result {
            Ok(spec) => {
                compile_times.push(elapsed);
                let valid: Vec<Value> = doc
                    .get("tests")
                    .and_then(Value::as_array)
                    .into_iter()
                    .flatten()
                    .filter(|t| t.get("valid") == Some(&Value::Bool(true)))
                    .filter_map(|t| t.get("data").cloned())
                    .collect();
                specs.push((spec, valid));
            }
            Err(e) if e.starts_with("remote-ref") => remote += 1,
            Err(e) => failed.push(format!("{}: {e}", path.display())),
        }
    }
    compile_times.sort();
    println!(
        "compile maskbench schemas: {} of {} compiled ({remote} remote-ref, {} failed); \
         p50 {:.2} ms, p99 {:.2} ms, max {:.2} ms (no target)",
        compile_times.len(),
        files.len(),
        failed.len(),
        ms(percentile(&compile_times, 50.0)),
        ms(percentile(&compile_times, 99.0)),
        ms(compile_times.last().copied().unwrap_or_default()),
    );
    for f in failed.iter().take(5) {
        println!("  failed: {f}");
    }

    if let Some(spec) = &vl_spec {
        let (docs, bad) = prepare(vl_examples.iter().map(|v| (spec, v)));
        report_throughput("vega-lite examples", &docs, bad, args.reps);
        if args.phases {
            report_phases(&docs, args.reps);
        }
    }
    let (docs, bad) = prepare(
        specs
            .iter()
            .flat_map(|(spec, values)| values.iter().map(move |v| (spec, v))),
    );
    report_throughput("maskbench valid instances", &docs, bad, args.reps);
    if args.phases {
        report_phases(&docs, args.reps);
    }
    Ok(ExitCode::SUCCESS)
}
