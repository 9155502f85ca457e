//! How much of what MaskBench schemas assert is in the grammar: the share of schemas
//! whose every assertion the grammars say (`CompiledSpec::grammar_gaps` is empty), and the
//! same before regular forms were in the grammar (the assertions `pattern`, `format`,
//! `minLength` > 1, `maxLength` and integer ranges other than `>= 0`/`>= 1` counted as
//! gaps too), and before `enum`/`const` of objects and arrays were in the grammar (a
//! schema listing any counted as a gap). Prints its numbers; run with
//!     cargo test -p dss-compiler --release --test grammar_coverage -- --ignored --nocapture

use dss_compiler::{compile, CompileOptions};
use serde_json::{Map, Value};

/// Whether a schema node (or anything below it) asserts something only regular forms
/// put in the grammar.
fn newly_regular(v: &Value) -> bool {
    match v {
        Value::Object(m) => regular_node(m) || m.values().any(newly_regular),
        Value::Array(xs) => xs.iter().any(newly_regular),
        _ => false,
    }
}

/// Whether a schema node (or anything below it) lists objects or arrays in `enum`/`const`,
/// which were gaps before the grammars wrote them.
fn lists_compound(v: &Value) -> bool {
    match v {
        Value::Object(m) => {
            let compound = |x: &Value| x.is_array() || x.is_object();
            m.get("const").is_some_and(compound)
                || m.get("enum")
                    .and_then(Value::as_array)
                    .is_some_and(|xs| xs.iter().any(compound))
                || m.values().any(lists_compound)
        }
        Value::Array(xs) => xs.iter().any(lists_compound),
        _ => false,
    }
}

fn regular_node(m: &Map<String, Value>) -> bool {
    let types: Vec<&str> = match m.get("type") {
        Some(Value::String(s)) => vec![s.as_str()],
        Some(Value::Array(xs)) => xs.iter().filter_map(Value::as_str).collect(),
        _ => vec![],
    };
    let string = types.contains(&"string");
    let integer = types.contains(&"integer") && !types.contains(&"number");
    let listed = m.contains_key("enum") || m.contains_key("const");
    if listed {
        return false;
    }
    let s = |k: &str| m.get(k).is_some_and(Value::is_string);
    let n = |k: &str| m.get(k).and_then(Value::as_f64);
    let strings = string
        && (s("pattern")
            || s("format")
            || n("maxLength").is_some()
            || n("minLength").is_some_and(|x| x > 1.0));
    let ints = integer
        && (n("maximum").is_some()
            || n("exclusiveMaximum").is_some()
            || n("minimum").is_some_and(|x| x > 1.0)
            || n("exclusiveMinimum").is_some_and(|x| x > 0.0));
    strings || ints
}

#[test]
#[ignore = "a measurement over the full MaskBench corpus; prints its numbers"]
fn maskbench_assertions_in_the_grammar() {
    let mb = dss_data::corpus("maskbench").unwrap_or_else(|e| panic!("{e}"));
    let dir = mb.path().join("data");
    let files = dss_data::sorted_files(&dir, ".json").expect("maskbench/data");
    let (mut compiled, mut before, mut after) = (0usize, 0usize, 0usize);
    let (mut before_listed, mut listing) = (0usize, 0usize);
    let mut listing_gaps: std::collections::BTreeMap<String, usize> = Default::default();
    let mut keywords: std::collections::BTreeMap<String, usize> = Default::default();
    let mut reasons: std::collections::BTreeMap<String, usize> = Default::default();
    for path in &files {
        let Ok(text) = std::fs::read_to_string(path) else {
            continue;
        };
        let Ok(doc) = serde_json::from_str::<Value>(&text) else {
            continue;
        };
        let Some(schema) = doc.get("schema") else {
            continue;
        };
        let Ok(spec) = compile(schema, &CompileOptions::default()) else {
            continue;
        };
        compiled += 1;
        let gaps = spec.grammar_gaps();
        for g in &gaps {
            *keywords.entry(g.keyword.clone()).or_default() += 1;
            if g.keyword == "pattern" || g.keyword == "format" {
                *reasons
                    .entry(format!("{}: {}", g.keyword, g.reason))
                    .or_default() += 1;
            }
        }
        let compound = lists_compound(schema);
        listing += usize::from(compound);
        if compound {
            for g in &gaps {
                *listing_gaps.entry(g.keyword.clone()).or_default() += 1;
            }
        }
        if gaps.is_empty() {
            after += 1;
            if !compound {
                before_listed += 1;
            }
            if !newly_regular(schema) {
                before += 1;
            }
        }
    }
    let pct = |n: usize| 100.0 * n as f64 / compiled.max(1) as f64;
    println!(
        "{compiled} MaskBench schemas compiled; every assertion in the grammar: \
         before {before} ({:.1}%), after {after} ({:.1}%)",
        pct(before),
        pct(after)
    );
    println!(
        "before `enum`/`const` of objects and arrays were in the grammar: {before_listed} \
         ({:.1}%); {listing} schemas list objects or arrays",
        pct(before_listed)
    );
    println!("gaps left in the schemas that list objects or arrays: {listing_gaps:?}");
    println!("gaps left, by keyword: {keywords:?}");
    println!("pattern and format gaps, by reason: {reasons:#?}");
    assert!(after >= before);
    assert!(after >= before_listed);
}
