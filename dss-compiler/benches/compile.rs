//! `cargo bench -p dss-compiler --bench compile`
//!
//! The same three things `dss bench` reports, under criterion:
//! 1. compiling the Vega-Lite schema (target: <= 50 ms);
//! 2. compiling MaskBench schemas (every 10th file, all of them per iteration);
//! 3. compress / expand throughput over the Vega-Lite examples and the MaskBench valid
//!    instances, next to serde_json parse + serialize of the same documents
//!    (target: >= 0.5 of serde_json's throughput);
//! 4. compiling generated large schemas: an `enum` of 100,000 strings (target: <= 1 s),
//!    an object of 10,000 required properties, a `oneOf` of 1,000 object branches, an
//!    `anyOf` of 1,000 enums of 100 values, a chain of 3,000 `allOf`/`$ref` links, an
//!    `enum` of 20,000 objects beside one of 2,000 (each once quadratic in its size, or a
//!    stack overflow; the two enums of objects show the ratio).
//!
//! Data: as the corpus test (the `dss-data` crate): the full corpora in `DSS_DATA_DIR`
//! (default `../shared/data` beside the workspace), else the samples in `tests/fixtures/`
//! (which ran is printed; under `CI=true` missing full corpora are an error).

// `criterion_group!` generates an undocumented public function.
#![allow(missing_docs)]

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use dss_compiler::{compile, CompileOptions, CompiledSpec};
use serde_json::{json, Value};
use std::hint::black_box;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::{Path, PathBuf};
use std::time::Duration;

/// The folder of corpus `name` (full, else fixture), after printing which it is.
fn corpus(name: &str) -> PathBuf {
    let corpus = dss_data::corpus(name).unwrap_or_else(|e| panic!("{e}"));
    eprintln!("corpus {name}: {corpus}");
    corpus.path().to_path_buf()
}

fn read_json(path: &Path) -> Value {
    let text = std::fs::read_to_string(path)
        .unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

fn files(dir: &Path, suffix: &str) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("cannot list {}: {e}", dir.display()))
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.to_string_lossy().ends_with(suffix))
        .collect();
    v.sort();
    v
}

/// Compile, treating an error or a panic as "skip".
fn try_compile(schema: &Value) -> Option<CompiledSpec> {
    catch_unwind(AssertUnwindSafe(|| {
        compile(schema, &CompileOptions::default()).ok()
    }))
    .ok()
    .flatten()
}

struct Doc<'a> {
    spec: &'a CompiledSpec,
    json: String,
    shorthand: String,
}

/// The documents that round-trip (compress then expand succeed).
fn docs<'a>(items: impl IntoIterator<Item = (&'a CompiledSpec, &'a Value)>) -> Vec<Doc<'a>> {
    items
        .into_iter()
        .filter_map(|(spec, value)| {
            catch_unwind(AssertUnwindSafe(|| {
                let shorthand = spec.compress(value).ok()?;
                spec.expand(&shorthand).ok()?;
                Some(Doc {
                    spec,
                    json: serde_json::to_string(value).ok()?,
                    shorthand,
                })
            }))
            .ok()
            .flatten()
        })
        .collect()
}

fn throughput(c: &mut Criterion, label: &str, docs: &[Doc<'_>]) {
    if docs.is_empty() {
        eprintln!("{label}: no documents round-trip; throughput not measured");
        return;
    }
    let bytes: usize = docs.iter().map(|d| d.json.len()).sum();
    let mut g = c.benchmark_group(format!("throughput/{label}"));
    g.throughput(Throughput::Bytes(bytes as u64));
    g.sample_size(10);
    g.bench_function("serde_json parse+serialize", |b| {
        b.iter(|| {
            for d in docs {
                if let Ok(v) = serde_json::from_str::<Value>(&d.json) {
                    black_box(serde_json::to_string(&v).ok());
                }
            }
        })
    });
    g.bench_function("compress (parse+compress)", |b| {
        b.iter(|| {
            for d in docs {
                if let Ok(v) = serde_json::from_str::<Value>(&d.json) {
                    black_box(d.spec.compress(&v).ok());
                }
            }
        })
    });
    g.bench_function("expand (expand+serialize)", |b| {
        b.iter(|| {
            for d in docs {
                if let Ok(v) = d.spec.expand_unvalidated(&d.shorthand) {
                    black_box(serde_json::to_string(&v).ok());
                }
            }
        })
    });
    g.finish();
}

/// Generated schemas whose compile time was once quadratic in their size.
fn large_schemas(c: &mut Criterion) {
    let enum_100k = json!({"enum": (0..100_000).map(|i| format!("v{i}")).collect::<Vec<_>>()});
    let props: serde_json::Map<String, Value> = (0..10_000)
        .map(|i| (format!("p{i}"), json!({"type": "integer"})))
        .collect();
    let names: Vec<&String> = props.keys().collect();
    let props_10k = json!({"type": "object", "properties": props, "required": names});
    let branches: Vec<Value> = (0..1_000)
        .map(|i| {
            json!({
                "type": "object",
                "properties": {"kind": {"const": format!("k{i}")}, format!("x{i}"): {"type": "string"}},
                "required": ["kind"],
                "additionalProperties": false
            })
        })
        .collect();
    let one_of_1k = json!({"oneOf": branches});
    let enums: Vec<Value> = (0..1_000)
        .map(|i| json!({"enum": (0..100).map(|j| format!("v{i}_{j}")).collect::<Vec<_>>()}))
        .collect();
    let any_of_enums = json!({"anyOf": enums});
    let n = 3_000;
    let mut defs: serde_json::Map<String, Value> = (0..n)
        .map(|i| {
            let next = json!({"$ref": format!("#/$defs/d{}", i + 1)});
            (format!("d{i}"), json!({"allOf": [next]}))
        })
        .collect();
    defs.insert(format!("d{n}"), json!({"type": "integer"}));
    let chain = json!({"$defs": defs, "$ref": "#/$defs/d0"});
    let objects = |n: i64| {
        let listed: Vec<Value> = (0..n).map(|i| json!({"id": i, "tag": [i % 7]})).collect();
        json!({"type": "object", "properties": {"o": {"enum": listed}}, "required": ["o"]})
    };
    let (objects_2k, objects_20k) = (objects(2_000), objects(20_000));

    let mut g = c.benchmark_group("compile large");
    g.sample_size(10);
    g.measurement_time(Duration::from_secs(10));
    for (name, schema) in [
        ("enum of 100,000 strings", &enum_100k),
        ("10,000 required properties", &props_10k),
        ("oneOf of 1,000 objects", &one_of_1k),
        ("anyOf of 1,000 enums of 100", &any_of_enums),
        ("chain of 3,000 allOf $refs", &chain),
        ("enum of 2,000 objects", &objects_2k),
        ("enum of 20,000 objects", &objects_20k),
    ] {
        g.bench_function(name, |b| {
            b.iter(|| black_box(try_compile(black_box(schema)).is_some()))
        });
    }
    g.finish();
}

fn benches(c: &mut Criterion) {
    let vega_lite = corpus("vega-lite");
    let vl_schema = read_json(&vega_lite.join("vega-lite-schema.json"));
    let vl_examples: Vec<Value> = files(&vega_lite.join("examples"), ".vl.json")
        .iter()
        .map(|p| read_json(p))
        .collect();
    let maskbench: Vec<Value> = files(&corpus("maskbench").join("data"), ".json")
        .iter()
        .map(|p| read_json(p))
        .collect();

    let mut g = c.benchmark_group("compile");
    g.sample_size(10);
    g.measurement_time(Duration::from_secs(10));
    g.bench_function("vega-lite schema", |b| {
        b.iter(|| black_box(try_compile(black_box(&vl_schema)).is_some()))
    });
    let sample: Vec<&Value> = maskbench
        .iter()
        .step_by(10)
        .filter_map(|d| d.get("schema"))
        .collect();
    g.throughput(Throughput::Elements(sample.len() as u64));
    g.bench_function("maskbench schemas (every 10th)", |b| {
        b.iter(|| {
            for s in &sample {
                black_box(try_compile(s).is_some());
            }
        })
    });
    g.finish();

    large_schemas(c);

    if let Some(vl) = try_compile(&vl_schema) {
        throughput(
            c,
            "vega-lite examples",
            &docs(vl_examples.iter().map(|v| (&vl, v))),
        );
    } else {
        eprintln!("the Vega-Lite schema does not compile; its throughput is not measured");
    }

    let compiled: Vec<(CompiledSpec, Vec<&Value>)> = maskbench
        .iter()
        .filter_map(|d| {
            let spec = try_compile(d.get("schema")?)?;
            let valid = d
                .get("tests")?
                .as_array()?
                .iter()
                .filter(|t| t.get("valid") == Some(&Value::Bool(true)))
                .filter_map(|t| t.get("data"))
                .collect();
            Some((spec, valid))
        })
        .collect();
    throughput(
        c,
        "maskbench valid instances",
        &docs(
            compiled
                .iter()
                .flat_map(|(s, vs)| vs.iter().map(move |v| (s, *v))),
        ),
    );
}

criterion_group!(compile_benches, benches);
criterion_main!(compile_benches);
