//! `dss compile` lists the assertions the grammar leaves to the validator, and
//! `--strict-grammar` refuses them.

use std::process::Command;

const DSS: &str = env!("CARGO_BIN_EXE_dss");

#[test]
fn compile_lists_what_the_grammar_leaves_to_the_validator() {
    let dir = tempfile::tempdir().expect("tempdir");
    let schema = dir.path().join("event.json");
    std::fs::write(
        &schema,
        serde_json::json!({"type": "object", "properties": {
            "start_time": {"type": "string", "pattern": "^[0-2][0-9]:[0-5][0-9]$"},
            "code": {"type": "string", "pattern": "^(?!X)[A-Z]+$"},
            "tags": {"type": "array", "items": {"type": "string"}, "uniqueItems": true}
        }})
        .to_string(),
    )
    .expect("write schema");
    let out = Command::new(DSS)
        .args(["compile", schema.to_str().expect("utf-8 path")])
        .output()
        .expect("run dss");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    let warnings: Vec<&str> = stderr
        .lines()
        .filter(|l| l.starts_with("warning:"))
        .collect();
    assert_eq!(warnings.len(), 2, "{stderr}");
    assert!(
        stderr.contains("/properties/code/pattern: look-around")
            && stderr.contains("/properties/tags/uniqueItems:")
            && stderr.contains("checked after generation")
            && !stderr.contains("start_time"),
        "{stderr}"
    );
    let out = Command::new(DSS)
        .args([
            "compile",
            "--strict-grammar",
            schema.to_str().expect("utf-8 path"),
        ])
        .output()
        .expect("run dss");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains("error:") && out.stdout.is_empty(),
        "{stderr}"
    );
}
