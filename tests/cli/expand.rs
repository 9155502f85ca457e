//! Expand reads what the grammars say; numbers; tampered specs.

use super::*;

#[test]
fn expand_reads_only_what_the_grammars_say() {
    // Each of these must be refused (exit 1), never expanded to schema-invalid JSON.
    let (_dir, viz) = viz_spec();
    for (text, column) in [
        ("fields:\n\"Sales\" sum\nsort:\n\"Sales\" limit 0\n", 15),
        (
            "fields:\n\"Sales\" sum\nfilters:\nrd \"Order Date\" -3 years\n",
            17,
        ),
        (
            "fields:\n\"Sales\" sum\nfilters:\ndr \"Order Date\" start \"last spring\"\n",
            23,
        ),
        ("fields:\n\"\" sum\n", 1),
    ] {
        for extra in [&[][..], &["--no-validate"][..]] {
            let mut args = vec!["expand", "--spec", &viz];
            args.extend_from_slice(extra);
            let r = run(&args, Some(text));
            assert_eq!(r.code, 1, "{text:?} {extra:?}\n{}", r.stderr);
            assert!(r.stdout.is_empty(), "{}", r.stdout);
            let line = if column == 1 { 2 } else { 4 };
            assert!(
                r.stderr
                    .contains(&format!("<stdin>:{line}:{column}: expected")),
                "{text:?}: {}",
                r.stderr
            );
        }
    }
    // The same lines with values the grammars admit expand.
    let r = run_ok(
        &["expand", "--spec", &viz, "--compact"],
        Some("fields:\n\"Sales\" sum\nfilters:\nrd \"Order Date\" 3 years\nsort:\n\"Sales\" limit 2\n"),
    );
    let v: Value = serde_json::from_str(&r.stdout).expect("JSON");
    assert_eq!(v["sort"][0]["limit"], json!(2));
}

#[test]
fn expand_validates_its_output_unless_told_not_to() {
    let dir = tempfile::tempdir().expect("tempdir");
    let schema = dir.path().join("week.json");
    std::fs::write(
        &schema,
        json!({"type": "object", "properties": {
            "days": {"type": "integer", "maximum": 7},
            // A look-ahead is not in the grammar: the validator checks it after.
            "code": {"type": "string", "pattern": "^(?!X)[A-Z]+$"}},
            "additionalProperties": false})
        .to_string(),
    )
    .expect("write schema");
    let spec = path_str(&schema);
    let r = run(&["expand", "--spec", spec], Some("days 9\n"));
    assert_eq!(r.code, 1, "{}", r.stderr);
    assert!(r.stdout.is_empty(), "{}", r.stdout);
    assert!(
        r.stderr.contains("/days") && r.stderr.contains("`maximum`"),
        "{}",
        r.stderr
    );
    let r = run_ok(
        &["expand", "--spec", spec, "--no-validate", "--compact"],
        Some("days 9\n"),
    );
    assert_eq!(r.stdout.trim(), r#"{"days":9}"#);
    // --jsonl --keep-going: each failing record is an error record, the good ones are kept.
    let input = [
        json!("days 3\n"),
        json!("days 9\n"),
        json!("code ab\n"),
        json!("days x\n"),
        json!("code AB\n"),
    ]
    .iter()
    .map(|v| v.to_string() + "\n")
    .collect::<String>();
    let r = run(
        &["expand", "--spec", spec, "--jsonl", "--keep-going"],
        Some(&input),
    );
    assert_eq!(r.code, 1, "{}", r.stderr);
    assert_eq!(
        r.stdout, "{\"days\":3}\n{\"code\":\"AB\"}\n",
        "good records in order"
    );
    let errors = stderr_records(&r.stderr);
    let lines: Vec<u64> = errors.iter().filter_map(|e| e["line"].as_u64()).collect();
    assert_eq!(lines, [2, 3, 4], "{}", r.stderr);
    let message = |i: usize| errors[i]["error"].as_str().unwrap_or("").to_string();
    assert!(message(0).contains("/days"), "{}", message(0));
    assert!(message(1).contains("/code"), "{}", message(1));
    assert!(
        message(2).contains("in the shorthand at 1:6"),
        "{}",
        message(2)
    );
    let r = run_ok(
        &["expand", "--spec", spec, "--jsonl", "--no-validate"],
        Some(
            &input
                .lines()
                .take(3)
                .map(|l| format!("{l}\n"))
                .collect::<String>(),
        ),
    );
    assert_eq!(r.stdout.lines().count(), 3, "{}", r.stdout);
}

#[test]
fn numbers_are_never_changed() {
    // Read as doubles these would come back as 1.8446744073709552e+19, 1e+20 and 0.0.
    let dir = tempfile::tempdir().expect("tempdir");
    let schema = dir.path().join("int.json");
    std::fs::write(&schema, r#"{"type":"integer"}"#).expect("write schema");
    let spec = path_str(&schema);
    for n in ["18446744073709551617", "100000000000000000001", "1e-400"] {
        let r = run(&["compress", "--spec", spec], Some(&format!("{n}\n")));
        assert_eq!(r.code, 1, "{n}: {}", r.stdout);
        assert!(r.stdout.is_empty(), "{n}: {}", r.stdout);
        assert!(
            r.stderr
                .contains(&format!("(root): the number {n} cannot be carried exactly")),
            "{}",
            r.stderr
        );
        let r = run(&["expand", "--spec", spec], Some(&format!("{n}\n")));
        assert_eq!(r.code, 1, "{n}: {}", r.stdout);
        assert!(has_line_col_after(&r.stderr, "<stdin>:"), "{}", r.stderr);
    }
    // Exact numbers round-trip.
    for n in [
        "18446744073709551615",
        "-9223372036854775808",
        "100000000000000000000",
    ] {
        let c = run_ok(&["compress", "--spec", spec], Some(n));
        let e = run_ok(&["expand", "--spec", spec, "--compact"], Some(&c.stdout));
        let back: Value = serde_json::from_str(&e.stdout).expect("JSON");
        let orig: Value = serde_json::from_str(n).expect("JSON");
        assert!(json_eq(&back, &orig), "{n} -> {} -> {back}", c.stdout);
    }
    // In a JSONL stream: an error record naming the pointer, the rest goes on.
    let dir_schema = dir.path().join("list.json");
    std::fs::write(
        &dir_schema,
        r#"{"type":"array","items":{"type":"object","properties":{"n":{"type":"number"}}}}"#,
    )
    .expect("write schema");
    let r = run(
        &[
            "compress",
            "--spec",
            path_str(&dir_schema),
            "--jsonl",
            "--keep-going",
        ],
        Some("[{\"n\": 1}]\n[{\"n\": 2}, {\"n\": 1e-400}]\n[{\"n\": 3}]\n"),
    );
    assert_eq!(r.code, 1, "{}", r.stderr);
    assert_eq!(r.stdout.lines().count(), 2, "{}", r.stdout);
    let errors = stderr_records(&r.stderr);
    assert_eq!(errors.len(), 1, "{}", r.stderr);
    assert_eq!(errors[0]["line"], json!(2));
    assert!(
        errors[0]["error"]
            .as_str()
            .unwrap_or("")
            .starts_with("/1/n: the number 1e-400"),
        "{}",
        errors[0]
    );
}

#[test]
fn tampered_spec_json_is_a_clear_error() {
    let (dir, viz) = viz_spec();
    let text = std::fs::read_to_string(Path::new(&viz).join("spec.json")).expect("spec.json");
    let good: Value = serde_json::from_str(&text).expect("JSON");
    let example = Path::new(WORKSPACE).join("examples/viz/appendix-a.json");
    type Tamper = fn(&mut Value);
    let tampered: [(&str, Tamper); 4] = [
        ("malformed", |v| v["schema"]["type"] = json!("objct")),
        ("unknown-object", |v| {
            v["notation"]["objects"] = json!({"#/nope": {}});
        }),
        ("derived-table", |v| v["shapes"] = json!({"root": -1})),
        ("version", |v| v["dss_spec"] = json!(2)),
    ];
    for (name, tamper) in tampered {
        let mut v = good.clone();
        tamper(&mut v);
        let spec = dir.path().join(format!("{name}.json"));
        std::fs::write(&spec, v.to_string()).expect("write");
        for args in [
            vec!["compress", "--spec", path_str(&spec), path_str(&example)],
            vec!["expand", "--spec", path_str(&spec)],
        ] {
            let r = run(&args, Some("fields:\n\"Sales\"\n"));
            assert_eq!(r.code, 1, "{name}: {args:?}\n{}", r.stderr);
            assert!(r.stdout.is_empty(), "{name}: {}", r.stdout);
            assert!(
                r.stderr.contains(path_str(&spec)) && !r.stderr.contains("internal error"),
                "{name}: {}",
                r.stderr
            );
        }
    }
}
