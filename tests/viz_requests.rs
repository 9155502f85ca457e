//! The project's viz benchmark requests (`examples/viz-requests.jsonl`), each with the
//! dataset columns it names (`tests/fixtures/viz-requests/columns.jsonl`, written by hand
//! from the request's words: "monthly sales" names `Sales` and `Order Date`, "in the West
//! region" names `Region`). For each spec setting (the sales spec with its catalogs; the
//! generic spec with a column catalog), `dss generate` (grammar pruning on, the default
//! model) writes every request, and we count the answers that are
//! valid and that name every column their request names, as a `fieldName` of a field, a
//! filter or a sort.
//!
//! It needs Qwen2.5-Coder-0.5B (the default model, ~491 MB) and takes a few minutes, so it
//! is run by hand, not in CI:
//! `cargo test --release --test viz_requests -- --ignored --nocapture`.
#![cfg(feature = "runtime")]

use serde_json::Value;
use std::collections::BTreeSet;
use std::io::Write;
use std::process::{Command, Stdio};

const DSS: &str = env!("CARGO_BIN_EXE_dss");
const WORKSPACE: &str = env!("CARGO_MANIFEST_DIR");

/// (request, the columns it names), from the fixture.
fn cases() -> Vec<(String, Vec<String>)> {
    let path = format!("{WORKSPACE}/tests/fixtures/viz-requests/columns.jsonl");
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
    text.lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| {
            let v: Value = serde_json::from_str(l).unwrap_or_else(|e| panic!("{path}: {e}"));
            let request = v["request"].as_str().expect("a request").to_string();
            let columns = v["columns"]
                .as_array()
                .expect("columns")
                .iter()
                .map(|c| c.as_str().expect("a column name").to_string())
                .collect();
            (request, columns)
        })
        .collect()
}

/// The column names an answer uses: the `fieldName` of its fields, filters and sorts.
fn columns_of(answer: &Value) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    for part in ["fields", "filters", "sort"] {
        for item in answer[part].as_array().into_iter().flatten() {
            for key in ["fieldName", "sortByField"] {
                if let Some(name) = item[key].as_str() {
                    out.insert(name.to_string());
                }
            }
        }
    }
    out
}

#[test]
#[ignore = "needs the default model (Qwen2.5-Coder-0.5B); run by hand"]
fn viz_requests_name_the_columns_they_ask_for() {
    let cases = cases();
    assert_eq!(cases.len(), 24, "the fixture has the 24 benchmark requests");
    let stdin: String = cases
        .iter()
        .map(|(r, _)| format!("{}\n", serde_json::to_string(r).expect("a string")))
        .collect();
    let settings: [(&str, &[&str]); 2] = [
        ("grammars/viz-sales", &["--spec", "grammars/viz-sales"]),
        (
            "grammars/viz --closed-catalog /fields/*/fieldName=examples/superstore-columns.txt",
            &[
                "--spec",
                "grammars/viz",
                "--closed-catalog",
                "/fields/*/fieldName=examples/superstore-columns.txt",
            ],
        ),
    ];
    for (label, args) in settings {
        let mut child = Command::new(DSS)
            .current_dir(WORKSPACE)
            .arg("generate")
            .args(args)
            .args(["--jsonl", "--errors", "inline"])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("cannot start dss");
        child
            .stdin
            .take()
            .expect("stdin")
            .write_all(stdin.as_bytes())
            .expect("writing the requests");
        let out = child.wait_with_output().expect("dss generate");
        let text = String::from_utf8_lossy(&out.stdout);
        let answers: Vec<Value> = text
            .lines()
            .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}")))
            .collect();
        assert_eq!(answers.len(), cases.len(), "one line per request:\n{text}");
        let (mut valid, mut named) = (0, 0);
        for ((request, columns), answer) in cases.iter().zip(&answers) {
            let ok = answer.get("error").is_none();
            let used = columns_of(answer);
            let missing: Vec<&String> = columns.iter().filter(|c| !used.contains(*c)).collect();
            valid += usize::from(ok);
            named += usize::from(ok && missing.is_empty());
            println!(
                "{} {request}\n    {answer}{}",
                if ok && missing.is_empty() {
                    "ok "
                } else {
                    "-- "
                },
                if missing.is_empty() {
                    String::new()
                } else {
                    format!("\n    missing: {missing:?}")
                }
            );
        }
        println!(
            "{label}: {valid}/{} valid, {named}/{} name every column their request names",
            cases.len(),
            cases.len()
        );
        // Every answer is valid: the grammar (pruned, or the full one on the retry) admits
        // schema-valid documents only.
        assert_eq!(valid, cases.len(), "{label}");
    }
}
