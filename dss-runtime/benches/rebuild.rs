//! The cost of one grammar rebuild under pruning: after each complete line,
//! the values it used leave the candidates and the grammar of the rest is built, prepared
//! for the model's vocabulary (Qwen2.5-Coder's 152k tokens) and started. Measured on real
//! requests with their gold outputs: the bundled `viz-sales` spec with its worked examples,
//! and, where the data is present (`DSS_DATA_DIR`), the APIMix SNIPS and ATIS cases.
//!
//! `cargo bench -p dss-runtime --bench rebuild` (the default model must be cached:
//! `dss model fetch qwen2.5-coder-0.5b`; `DSS_BENCH_MODEL=PATH` for another GGUF).
//! Prints p50 / p90 / p99 / max per suite, the targets (≤ 1 ms p50, ≤ 5 ms p99) and the
//! first-mask cost after a rebuild, beside the full-grammar preparation measured in the
//! same run as the baseline.

use std::path::{Path, PathBuf};
use std::time::Instant;

use dss_compiler::prune::{Consume, GrammarOptions, Pruner, Restriction};
use dss_compiler::CompiledSpec;
use dss_extract::{Catalogs, ExtractMode, SpecIndex};
use dss_runtime::generate::PrunedRest;
use dss_runtime::{EngineKind, GrammarSource, LocalModel};
use serde_json::Value;

struct Case {
    request: String,
    gold: Value,
}

struct Suite {
    name: String,
    spec: CompiledSpec,
    index: SpecIndex,
    cases: Vec<Case>,
}

fn main() {
    let model_path = match std::env::var_os("DSS_BENCH_MODEL") {
        Some(p) => PathBuf::from(p),
        None => match dss_runtime::models::path_if_cached(dss_runtime::models::DEFAULT_MODEL) {
            Ok(Some(p)) => p,
            _ => {
                eprintln!(
                    "rebuild bench: the model {} is not cached; run `dss model fetch {}` first",
                    dss_runtime::models::DEFAULT_MODEL,
                    dss_runtime::models::DEFAULT_MODEL
                );
                return;
            }
        },
    };
    let model = match LocalModel::load(&model_path) {
        Ok(m) => m,
        Err(e) => {
            eprintln!("rebuild bench: {e}");
            return;
        }
    };
    println!(
        "model {} ({} tokens)",
        model_path.display(),
        model.llama().n_vocab()
    );
    let mut suites = Vec::new();
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    match viz_sales(&root) {
        Ok(s) => suites.push(s),
        Err(e) => eprintln!("viz-sales: {e}"),
    }
    let data = dss_data::data_dir();
    for (name, dir) in [
        ("apimix-snips", "APIMixSNIPS"),
        ("apimix-atis", "APIMixATIS"),
    ] {
        let dir = data.join(dir);
        if dir.is_dir() {
            match apimix(name, &dir) {
                Ok(s) => suites.push(s),
                Err(e) => eprintln!("{name}: {e}"),
            }
        } else {
            eprintln!("{name}: {} not present, skipped", dir.display());
        }
    }
    // Warm the parser factory (built once per model) before timing anything.
    if let Some(s) = suites.first() {
        let _ = model.grammar(EngineKind::Llguidance, &GrammarSource::Ir(s.spec.grammar()));
    }
    println!(
        "{:<14} {:>8} {:>9} {:>9} {:>9} {:>9} {:>11} {:>11} {:>12}",
        "suite",
        "rebuilds",
        "p50 ms",
        "p90 ms",
        "p99 ms",
        "max ms",
        "of it: dss",
        "mask p50",
        "full p50 ms"
    );
    let mut all = Vec::new();
    for s in &suites {
        let (rebuilds, masks, spec) = measure(&model, s);
        let full = full_grammar(&model, &s.spec);
        println!(
            "{:<14} {:>8} {:>9.3} {:>9.3} {:>9.3} {:>9.3} {:>11.3} {:>11.3} {:>12.3}",
            s.name,
            rebuilds.len(),
            pct(&rebuilds, 50.0),
            pct(&rebuilds, 90.0),
            pct(&rebuilds, 99.0),
            pct(&rebuilds, 100.0),
            pct(&spec, 50.0),
            pct(&masks, 50.0),
            full
        );
        all.extend(rebuilds);
    }
    if all.is_empty() {
        return;
    }
    let (p50, p99) = (pct(&all, 50.0), pct(&all, 99.0));
    println!(
        "all: {} rebuilds, p50 {p50:.3} ms (target ≤ 1: {}), p99 {p99:.3} ms (target ≤ 5: {})",
        all.len(),
        if p50 <= 1.0 { "met" } else { "missed" },
        if p99 <= 5.0 { "met" } else { "missed" }
    );
}

/// Every rebuild of every case (after each complete gold line but the last), in ms, and
/// the first full mask after each, and the compiler's share of each rebuild.
fn measure(model: &LocalModel, s: &Suite) -> (Vec<f64>, Vec<f64>, Vec<f64>) {
    let mut times = Vec::new();
    let mut masks = Vec::new();
    let mut spec_times = Vec::new();
    let mut logits = vec![0.0f32; model.llama().n_vocab() as usize];
    for c in &s.cases {
        let a = s.index.analyze(&c.request, ExtractMode::Full, 3);
        let initial: Restriction = a.restriction.clone();
        let Ok(text) = s.spec.compress(&c.gold) else {
            continue;
        };
        let pruner = Pruner::new(&s.spec, &initial, Consume::Class, GrammarOptions::default());
        let rest = PrunedRest {
            pruner,
            engine: EngineKind::Llguidance,
        };
        let ends: Vec<usize> = text.match_indices('\n').map(|(i, _)| i + 1).collect();
        for &end in ends.iter().take(ends.len().saturating_sub(1)) {
            let t = Instant::now();
            let Ok(Some(mut constraint)) = rest.after_lines(model, &text[..end]) else {
                continue;
            };
            times.push(t.elapsed().as_secs_f64() * 1e3);
            // The compiler's share: reading the lines, consuming, building the grammar and
            // its Lark structure.
            let t0 = Instant::now();
            if let Ok(Some(c)) = pruner.after_lines(&text[..end]) {
                std::hint::black_box(c.grammar.to_lark_grammar().ok());
                spec_times.push(t0.elapsed().as_secs_f64() * 1e3);
            }
            let t = Instant::now();
            if constraint.mask(&mut logits).is_ok() {
                masks.push(t.elapsed().as_secs_f64() * 1e3);
            }
        }
    }
    (times, masks, spec_times)
}

/// The baseline: preparing the full grammar once (median of 5), the cost a rebuild that
/// did not prune would pay.
fn full_grammar(model: &LocalModel, spec: &CompiledSpec) -> f64 {
    let mut t: Vec<f64> = (0..5)
        .map(|_| {
            let g = spec.grammar();
            let start = Instant::now();
            let _ = model.grammar(EngineKind::Llguidance, &GrammarSource::Ir(g));
            start.elapsed().as_secs_f64() * 1e3
        })
        .collect();
    t.sort_by(f64::total_cmp);
    t[2]
}

fn pct(xs: &[f64], p: f64) -> f64 {
    if xs.is_empty() {
        return f64::NAN;
    }
    let mut v = xs.to_vec();
    v.sort_by(f64::total_cmp);
    let i = ((p / 100.0) * (v.len() - 1) as f64).round() as usize;
    v[i.min(v.len() - 1)]
}

fn viz_sales(root: &Path) -> Result<Suite, String> {
    let dir = root.join("grammars/viz-sales");
    let text = std::fs::read_to_string(dir.join("spec.json")).map_err(|e| e.to_string())?;
    let spec = CompiledSpec::from_json(&text).map_err(|e| e.to_string())?;
    let catalogs = Catalogs::from_dir(&dir).map_err(|e| e.to_string())?;
    let index = SpecIndex::build(&spec, &catalogs).map_err(|e| e.to_string())?;
    let ex = std::fs::read_to_string(dir.join("examples.jsonl")).map_err(|e| e.to_string())?;
    let mut cases = Vec::new();
    for line in ex.lines().filter(|l| !l.trim().is_empty()) {
        let v: Value = serde_json::from_str(line).map_err(|e| e.to_string())?;
        cases.push(Case {
            request: v["request"].as_str().unwrap_or_default().to_string(),
            gold: v["output"].clone(),
        });
    }
    Ok(Suite {
        name: "viz-sales".into(),
        spec,
        index,
        cases,
    })
}

fn apimix(name: &str, dir: &Path) -> Result<Suite, String> {
    let out = tempfile::tempdir().map_err(|e| e.to_string())?;
    let suite_dir = out.path().join(name);
    dss_eval::import_apimix_with(dir, &suite_dir, dss_eval::Slots::Enum)
        .map_err(|e| e.to_string())?;
    let suite = dss_eval::Suite::load(&suite_dir).map_err(|e| e.to_string())?;
    let schema = suite
        .schema
        .as_ref()
        .ok_or_else(|| format!("{name}: the suite has no schema.json"))?;
    let spec = dss_compiler::compile(schema, &Default::default()).map_err(|e| e.to_string())?;
    // As `dss eval` does: the schema's enums are its sites; no catalog beyond them.
    let index = SpecIndex::build(&spec, &Catalogs::default()).map_err(|e| e.to_string())?;
    let cases = suite
        .cases
        .into_iter()
        .map(|c| Case {
            request: c.request,
            gold: c.gold,
        })
        .collect();
    Ok(Suite {
        name: name.into(),
        spec,
        index,
        cases,
    })
}
