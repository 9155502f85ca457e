//! Arbitrary bytes as a JSON Schema: compile; if it compiles, print every grammar and the
//! notation YAML, list the sites, and load the written `spec.json` back.
//! Never a panic, an abort or a hang; a spec that compiled saves and loads.
#![no_main]

use dss_compiler::{compile, CompileOptions, CompiledSpec};
use libfuzzer_sys::fuzz_target;
use serde_json::Value;

fuzz_target!(|data: &[u8]| {
    let Ok(schema) = serde_json::from_slice::<Value>(data) else {
        return;
    };
    let Ok(spec) = compile(&schema, &CompileOptions::default()) else {
        return;
    };
    let artifacts = spec
        .artifacts()
        .unwrap_or_else(|e| panic!("compile: a compiled spec's artifacts fail: {e}"));
    spec.notation_yaml()
        .unwrap_or_else(|e| panic!("compile: a compiled spec's notation YAML fails: {e}"));
    let _ = spec.sites();
    let _ = spec.warnings();
    let (_, json) = &artifacts[0];
    let back = CompiledSpec::from_json(json)
        .unwrap_or_else(|e| panic!("compile: the spec.json written does not load: {e}"));
    assert_eq!(
        back.grammar_pest(),
        spec.grammar_pest(),
        "compile: a loaded spec.json gives another pest grammar"
    );
});
