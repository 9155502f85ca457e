//! The GBNF that dss emits is accepted by llama.cpp's own grammar parser, and every
//! shorthand the mapper writes is a sentence of it under llama.cpp's grammar engine
//! (tokenized with the small CI model's vocabulary). Together with the pest test in
//! dss-compiler this shows the mapper, pest and GBNF agree on the language.

use dss_compiler::{compile, CompileOptions};
use dss_runtime::gbnf::GbnfChecker;
use serde_json::Value;
use std::path::{Path, PathBuf};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// Where corpus `name` is: the full data, else the fixture (the `dss-data` crate; under
/// `CI=true` a missing full corpus fails the test).
fn corpus(name: &str) -> dss_data::Corpus {
    let corpus = dss_data::corpus(name).unwrap_or_else(|e| panic!("{e}"));
    eprintln!("corpus {name}: {corpus}");
    corpus
}

/// llama.cpp's grammar checker with the small model's vocabulary; `None` when the model
/// tests are skipped (`DSS_SKIP_MODEL_TESTS`, recorded for `test`; a failure under
/// `CI=true`).
fn checker(test: &str) -> Option<GbnfChecker> {
    if dss_data::skip_model_test(test, "smollm2-135m") {
        return None;
    }
    let path = dss_runtime::models::resolve("smollm2-135m").unwrap_or_else(|e| {
        panic!("{e} (the GBNF tests need the small model; `.ci/install-deps` fetches it)")
    });
    Some(GbnfChecker::new(path).expect("load the model vocabulary"))
}

fn read(path: &Path) -> Value {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// Compile `schema`, check llama.cpp parses its GBNF, and that each instance's shorthand is
/// accepted. Returns (instances checked, failures).
fn check(
    checker: &GbnfChecker,
    name: &str,
    schema: &Value,
    instances: &[Value],
) -> (usize, Vec<String>) {
    let spec =
        compile(schema, &CompileOptions::default()).unwrap_or_else(|e| panic!("{name}: {e}"));
    let gbnf = spec.grammar_gbnf();
    if let Err(e) = checker.check(&gbnf, "root") {
        return (0, vec![format!("{name}: llama.cpp rejects the GBNF: {e}")]);
    }
    let mut failures = Vec::new();
    let mut n = 0;
    for x in instances {
        let Ok(s) = spec.compress(x) else { continue };
        n += 1;
        match checker.accepts(&gbnf, &s) {
            Ok(true) => {}
            Ok(false) => failures.push(format!("{name}: not a sentence of the GBNF:\n{s}")),
            Err(e) => failures.push(format!("{name}: {e}\n{s}")),
        }
    }
    (n, failures)
}

#[test]
fn bundled_specs_examples() {
    let Some(checker) = checker("bundled_specs_examples") else {
        return;
    };
    let examples: Vec<Value> = std::fs::read_dir(root().join("examples/viz"))
        .expect("examples/viz/")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "json"))
        .map(|p| read(&p))
        .collect();
    assert!(!examples.is_empty());
    for spec in ["viz.schema.json", "viz-sales.schema.json"] {
        let (n, failures) = check(
            &checker,
            spec,
            &read(&root().join("specs").join(spec)),
            &examples,
        );
        println!("{spec}: {n} examples accepted by llama.cpp's grammar engine");
        assert_eq!(n, examples.len(), "every bundled example compresses");
        assert!(failures.is_empty(), "{}", failures.join("\n\n"));
    }
}

#[test]
fn maskbench_sample() {
    let Some(checker) = checker("maskbench_sample") else {
        return;
    };
    let maskbench = corpus("maskbench");
    let dir = maskbench.path().join("data");
    let files = dss_data::sorted_files(&dir, ".json")
        .unwrap_or_else(|e| panic!("{}: {e} (set DSS_DATA_DIR; see README)", dir.display()));
    let (mut schemas, mut instances, mut failures) = (0, 0, Vec::new());
    // Every 20th file: a fixed, spread sample.
    for path in files.iter().step_by(20) {
        let file = read(path);
        let tests = dss_data::maskbench_valid(&file);
        let (n, f) = check(
            &checker,
            &path.display().to_string(),
            &file["schema"],
            &tests,
        );
        schemas += 1;
        instances += n;
        failures.extend(f);
    }
    println!(
        "maskbench sample: {schemas} grammars parsed, {instances} instances accepted, {} failures",
        failures.len()
    );
    assert!(schemas > maskbench.pick(100, 0));
    assert!(
        failures.is_empty(),
        "{}",
        failures
            .iter()
            .take(10)
            .cloned()
            .collect::<Vec<_>>()
            .join("\n\n")
    );
}

#[test]
fn vega_lite_sample() {
    let Some(checker) = checker("vega_lite_sample") else {
        return;
    };
    let vega_lite = corpus("vega-lite");
    let dir = vega_lite.path();
    let schema = read(&dir.join("vega-lite-schema.json"));
    let files = dss_data::sorted_files(&dir.join("examples"), ".json").expect("vega-lite/examples");
    let examples: Vec<Value> = files.iter().step_by(10).map(|p| read(p)).collect();
    let (n, failures) = check(&checker, "vega-lite", &schema, &examples);
    println!("vega-lite: {n} examples accepted by llama.cpp's grammar engine");
    assert!(n >= vega_lite.pick(40, 1));
    assert!(
        failures.is_empty(),
        "{}",
        failures
            .iter()
            .take(5)
            .cloned()
            .collect::<Vec<_>>()
            .join("\n\n")
    );
}
