//! `-` reads standard input.

use super::*;

/// Every command that takes a file reads `-` as standard input, as the documentation shows:
/// `compile -`, `init -`, `compress --spec DIR -`, `expand --spec DIR -` (and their
/// `--jsonl` forms), `extract --jsonl --input -`.
#[test]
fn every_file_argument_reads_dash_as_standard_input() {
    let dir = tempfile::tempdir().expect("tempdir");
    let out = dir.path().join("out");
    let out_s = out.to_str().unwrap();
    let schema = person_schema().to_string();

    let r = run(&["compile", "-", "-o", out_s], Some(&schema));
    assert_eq!(r.code, 0, "compile - -o: {}", r.stderr);
    assert!(out.join("spec.json").is_file());
    let r = run(&["compile", "-"], Some(&schema));
    assert_eq!(r.code, 0, "compile -: {}", r.stderr);
    assert!(
        r.stdout.contains("::="),
        "the readable grammar: {}",
        r.stdout
    );
    let r = run(
        &["compile", "-"],
        Some("type: object\nproperties: {a: {type: integer}}\n"),
    );
    assert_eq!(r.code, 0, "a YAML schema on stdin: {}", r.stderr);
    let r = run(&["init", "-"], Some(&schema));
    assert_eq!(r.code, 0, "init -: {}", r.stderr);
    assert!(
        r.stdout.contains("fields"),
        "the notation YAML: {}",
        r.stdout
    );
    // A bad schema on stdin is named `<stdin>` in the error.
    let r = run(&["compile", "-"], Some("{\"type\": "));
    assert_eq!(r.code, 1);
    assert!(r.stderr.contains("<stdin>"), "{}", r.stderr);

    let bob = r#"{"name": "Bob", "role": "user"}"#;
    let r = run(&["compress", "--spec", out_s, "-"], Some(bob));
    assert_eq!(r.code, 0, "compress -: {}", r.stderr);
    let text = r.stdout.clone();
    let r = run(&["expand", "--spec", out_s, "--compact", "-"], Some(&text));
    assert_eq!(r.code, 0, "expand -: {}", r.stderr);
    let back: Value = serde_json::from_str(&r.stdout).expect("JSON");
    assert!(
        json_eq(&back, &serde_json::from_str(bob).unwrap()),
        "{back}"
    );

    let r = run(
        &["compress", "--spec", out_s, "--jsonl", "-"],
        Some(&format!("{bob}\n")),
    );
    assert_eq!(r.code, 0, "compress --jsonl -: {}", r.stderr);
    let r = run(
        &["expand", "--spec", out_s, "--jsonl", "-"],
        Some(&r.stdout),
    );
    assert_eq!(r.code, 0, "expand --jsonl -: {}", r.stderr);
    assert_eq!(r.stdout.lines().count(), 1);

    let r = run(
        &["extract", "--spec", out_s, "--jsonl", "--input", "-"],
        Some("\"an admin named Ada\"\n"),
    );
    assert_eq!(r.code, 0, "extract --jsonl --input -: {}", r.stderr);
    assert!(r.stdout.contains("admin"), "{}", r.stdout);
}
