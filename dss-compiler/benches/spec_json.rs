//! `cargo bench -p dss-compiler --bench spec_json`
//!
//! Loading the Vega-Lite `spec.json` against compiling the Vega-Lite schema, in the same
//! run, both from their text (a spec directory is read from disk as a schema file is):
//! loading builds the shapes and the notation again from the saved schema and notation
//! settings, so it costs what compiling costs (target: loading <= compiling).
//!
//! Data: as the corpus test (the `dss-data` crate): the full corpus in `DSS_DATA_DIR`
//! (default `../shared/data` beside the workspace), else the sample in `tests/fixtures/`
//! (which ran is printed; under `CI=true` a missing full corpus is an error).

// `criterion_group!` generates an undocumented public function.
#![allow(missing_docs)]

use criterion::{criterion_group, criterion_main, Criterion};
use dss_compiler::{compile, CompileOptions, CompiledSpec};
use serde_json::Value;
use std::hint::black_box;
use std::time::Duration;

fn benches(c: &mut Criterion) {
    let corpus = dss_data::corpus("vega-lite").unwrap_or_else(|e| panic!("{e}"));
    eprintln!("corpus vega-lite: {corpus}");
    let path = corpus.path().join("vega-lite-schema.json");
    let schema_text = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()));
    let schema: Value =
        serde_json::from_str(&schema_text).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let spec = compile(&schema, &CompileOptions::default())
        .unwrap_or_else(|e| panic!("the Vega-Lite schema does not compile: {e}"));
    let spec_text = spec.to_json().expect("spec.json");
    let loaded = CompiledSpec::from_json(&spec_text).expect("spec.json loads");
    assert_eq!(loaded.grammar_gbnf(), spec.grammar_gbnf());
    eprintln!(
        "vega-lite: schema {} bytes, spec.json {} bytes",
        schema_text.len(),
        spec_text.len()
    );

    let mut g = c.benchmark_group("spec.json");
    g.sample_size(20);
    g.measurement_time(Duration::from_secs(10));
    g.bench_function("compile vega-lite schema (parse + compile)", |b| {
        b.iter(|| {
            let schema: Value = serde_json::from_str(black_box(&schema_text)).expect("JSON");
            black_box(compile(&schema, &CompileOptions::default()).is_ok())
        })
    });
    g.bench_function("load vega-lite spec.json (parse + build)", |b| {
        b.iter(|| black_box(CompiledSpec::from_json(black_box(&spec_text)).is_ok()))
    });
    g.finish();
}

criterion_group!(spec_json_benches, benches);
criterion_main!(spec_json_benches);
