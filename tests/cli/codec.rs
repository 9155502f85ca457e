//! `dss compile`, `init`, `compress`, `expand` and `bench`: files, JSON Lines, errors with their places.

use super::*;

#[test]
fn compile_writes_spec_and_grammars() {
    let f = Fixture::new();
    for name in [
        "spec.json",
        "shorthand.bnf",
        "shorthand.pest",
        "shorthand.gbnf",
        "shorthand.lark",
    ] {
        let p = f.spec_dir().join(name);
        let text = std::fs::read_to_string(&p).unwrap_or_else(|e| panic!("{name}: {e}"));
        assert!(!text.trim().is_empty(), "{name} is empty");
    }
    // spec.json is JSON.
    let spec_text =
        std::fs::read_to_string(f.spec_dir().join("spec.json")).expect("read spec.json");
    serde_json::from_str::<Value>(&spec_text).expect("spec.json is JSON");
    // Without -o the BNF goes to stdout, the same as the file.
    let r = run_ok(&["compile", path_str(&f.schema())], None);
    let bnf = std::fs::read_to_string(f.spec_dir().join("shorthand.bnf")).expect("read bnf");
    assert_eq!(r.stdout.trim_end(), bnf.trim_end());
}

#[test]
fn compile_accepts_yaml_schema() {
    let f = Fixture::new();
    let yaml = serde_norway::to_string(&person_schema()).expect("schema to YAML");
    let yaml_path = f.write("schema.yaml", &yaml);
    let out = f.path("from-yaml");
    run_ok(
        &["compile", path_str(&yaml_path), "-o", path_str(&out)],
        None,
    );
    // Same shorthand as from the JSON schema.
    let doc = good_people()[0].to_string();
    let a = run_ok(&["compress", "--spec", &f.spec()], Some(&doc));
    let b = run_ok(&["compress", "--spec", path_str(&out)], Some(&doc));
    assert_eq!(a.stdout, b.stdout);
}

#[test]
fn init_prints_yaml_that_compile_accepts() {
    let f = Fixture::new();
    let r = run_ok(&["init", path_str(&f.schema())], None);
    serde_norway::from_str::<serde_norway::Value>(&r.stdout).expect("init prints YAML");
    let notation = f.write("notation.yaml", &r.stdout);
    let out = f.path("with-notation");
    run_ok(
        &[
            "compile",
            path_str(&f.schema()),
            "--notation",
            path_str(&notation),
            "-o",
            path_str(&out),
        ],
        None,
    );
    // The automatic design, written out and read back, gives the same shorthand.
    for doc in good_people() {
        let doc = doc.to_string();
        let a = run_ok(&["compress", "--spec", &f.spec()], Some(&doc));
        let b = run_ok(&["compress", "--spec", path_str(&out)], Some(&doc));
        assert_eq!(
            a.stdout, b.stdout,
            "notation from init changed the shorthand"
        );
    }
}

#[test]
fn compress_expand_round_trip() {
    let f = Fixture::new();
    for (i, doc) in good_people().iter().enumerate() {
        let input = f.write(
            &format!("doc{i}.json"),
            &serde_json::to_string_pretty(doc).unwrap(),
        );
        let c = run_ok(&["compress", "--spec", &f.spec(), path_str(&input)], None);
        assert!(!c.stdout.is_empty());
        let sh = f.write(&format!("doc{i}.dss"), &c.stdout);

        // Pretty by default.
        let e = run_ok(&["expand", "--spec", &f.spec(), path_str(&sh)], None);
        let back: Value = serde_json::from_str(&e.stdout).expect("expand prints JSON");
        assert!(json_eq(&back, doc), "round trip changed {doc} into {back}");

        // --compact: one line; stdin via `-`.
        let e = run_ok(
            &["expand", "--spec", &f.spec(), "--compact", "-"],
            Some(&c.stdout),
        );
        assert_eq!(e.stdout.trim_end().lines().count(), 1, "{}", e.stdout);
        let back: Value = serde_json::from_str(&e.stdout).expect("compact JSON");
        assert!(json_eq(&back, doc));
    }
}

#[test]
fn spec_may_be_dir_spec_file_or_schema() {
    let f = Fixture::new();
    let doc = good_people()[0].to_string();
    let spec_file = f.spec_dir().join("spec.json");
    let a = run_ok(&["compress", "--spec", &f.spec()], Some(&doc));
    let b = run_ok(&["compress", "--spec", path_str(&spec_file)], Some(&doc));
    let c = run_ok(&["compress", "--spec", path_str(&f.schema())], Some(&doc));
    assert_eq!(a.stdout, b.stdout);
    assert_eq!(a.stdout, c.stdout);
    // A spec.json under another name is still recognized as a compiled spec.
    let renamed = f.path("renamed-spec.json");
    std::fs::copy(&spec_file, &renamed).expect("copy spec.json");
    let d = run_ok(&["compress", "--spec", path_str(&renamed)], Some(&doc));
    assert_eq!(a.stdout, d.stdout);
    // A directory without spec.json is an error that says so.
    let empty = f.path("empty");
    std::fs::create_dir(&empty).expect("mkdir");
    let r = run(&["compress", "--spec", path_str(&empty)], Some(&doc));
    assert_ne!(r.code, 0);
    assert!(r.stderr.contains("spec.json"), "{}", r.stderr);
}

#[test]
fn jsonl_round_trip() {
    let f = Fixture::new();
    let input: String = good_people()
        .iter()
        .map(|d| format!("{d}\n"))
        .collect::<String>()
        + "\n   \n"; // blank lines are skipped
    let c = run_ok(&["compress", "--spec", &f.spec(), "--jsonl"], Some(&input));
    let lines: Vec<&str> = c.stdout.lines().collect();
    assert_eq!(lines.len(), 3, "{}", c.stdout);
    for l in &lines {
        assert!(
            serde_json::from_str::<Value>(l).is_ok_and(|v| v.is_string()),
            "compress --jsonl writes JSON strings: {l}"
        );
    }
    let e = run_ok(&["expand", "--spec", &f.spec(), "--jsonl"], Some(&c.stdout));
    let back: Vec<Value> = e
        .stdout
        .lines()
        .map(|l| serde_json::from_str(l).expect("expand --jsonl writes JSON"))
        .collect();
    assert_eq!(back.len(), 3);
    for (b, d) in back.iter().zip(good_people()) {
        assert!(json_eq(b, &d), "{b} != {d}");
    }
}

#[test]
fn jsonl_keep_going_reports_each_bad_record() {
    let f = Fixture::new();
    let people = good_people();
    // Line 1 good, 2 invalid (age is a string), 3 blank, 4 not JSON, 5 good,
    // 6 invalid (unknown property), 7 good.
    let input = format!(
        "{}\n{}\n\n{}\n{}\n{}\n{}\n",
        people[0],
        json!({"name": "x", "age": "old"}),
        "{not json",
        people[1],
        json!({"name": "y", "extra": 1}),
        people[2],
    );
    let input_path = f.write("mixed.jsonl", &input);
    let r = run(
        &[
            "compress",
            "--spec",
            &f.spec(),
            "--jsonl",
            "--keep-going",
            path_str(&input_path),
        ],
        None,
    );
    assert_eq!(r.code, 1, "exit code 1 when a record failed\n{}", r.stderr);
    let out: Vec<&str> = r.stdout.lines().collect();
    assert_eq!(
        out.len(),
        3,
        "the three good records are written:\n{}",
        r.stdout
    );
    let errors = stderr_records(&r.stderr);
    let lines: Vec<u64> = errors
        .iter()
        .map(|e| e["line"].as_u64().expect("`line` is a number"))
        .collect();
    assert_eq!(lines, [2, 4, 6], "stderr:\n{}", r.stderr);
    for e in &errors {
        assert!(e["error"].as_str().is_some_and(|s| !s.is_empty()), "{e}");
    }
    assert!(
        errors[0]["error"].as_str().unwrap_or("").contains("/age"),
        "the error names the pointer: {}",
        errors[0]
    );

    // The good records expand back, in order.
    let good_sh = out.join("\n") + "\n";
    let e = run_ok(&["expand", "--spec", &f.spec(), "--jsonl"], Some(&good_sh));
    let back: Vec<Value> = e
        .stdout
        .lines()
        .map(|l| serde_json::from_str(l).expect("JSON line"))
        .collect();
    assert_eq!(back.len(), 3);
    for (b, d) in back.iter().zip(&people) {
        assert!(json_eq(b, d), "{b} != {d}");
    }

    // expand --keep-going: a non-string record and a bad shorthand are reported.
    let expand_input = format!(
        "{}\n{}\n{}\n{}\n",
        out[0],
        json!({"not": "a string"}),
        json!("\u{1}@@ not shorthand ]]]"),
        out[1]
    );
    let r = run(
        &["expand", "--spec", &f.spec(), "--jsonl", "--keep-going"],
        Some(&expand_input),
    );
    assert_eq!(r.code, 1, "{}", r.stderr);
    assert_eq!(r.stdout.lines().count(), 2, "{}", r.stdout);
    let errors = stderr_records(&r.stderr);
    let lines: Vec<u64> = errors.iter().filter_map(|e| e["line"].as_u64()).collect();
    assert_eq!(lines, [2, 3], "stderr:\n{}", r.stderr);
}

#[test]
fn jsonl_stops_at_first_bad_record_by_default() {
    let f = Fixture::new();
    let people = good_people();
    let input = format!("{}\n{}\n{}\n", people[0], json!({"name": 5}), people[1]);
    let path = f.write("in.jsonl", &input);
    let r = run(
        &["compress", "--spec", &f.spec(), "--jsonl", path_str(&path)],
        None,
    );
    assert_ne!(r.code, 0);
    assert_eq!(
        r.stdout.lines().count(),
        1,
        "records before the bad one are written"
    );
    assert!(
        r.stderr.contains(&format!("error: {}:2:", path_str(&path))),
        "the error names file and line: {}",
        r.stderr
    );
    assert!(r.stderr.contains("/name"), "{}", r.stderr);
}

#[test]
fn bad_shorthand_gives_line_and_column() {
    let f = Fixture::new();
    let path = f.write("bad.dss", "\u{1}@@ this is not shorthand ]]]\n{{{\n");
    let r = run(&["expand", "--spec", &f.spec(), path_str(&path)], None);
    assert_ne!(r.code, 0);
    assert!(r.stdout.is_empty(), "nothing on stdout: {}", r.stdout);
    let prefix = format!("error: {}:", path_str(&path));
    assert!(
        has_line_col_after(&r.stderr, &prefix),
        "expected `{prefix}LINE:COL: ...`, got: {}",
        r.stderr
    );
    // Same from stdin.
    let r = run(&["expand", "--spec", &f.spec()], Some("]]] nope"));
    assert_ne!(r.code, 0);
    assert!(
        has_line_col_after(&r.stderr, "error: <stdin>:"),
        "{}",
        r.stderr
    );
}

#[test]
fn invalid_instance_gives_json_pointer() {
    let f = Fixture::new();
    let path = f.write("bad.json", &json!({"name": "x", "age": -3}).to_string());
    let r = run(&["compress", "--spec", &f.spec(), path_str(&path)], None);
    assert_ne!(r.code, 0);
    assert!(r.stdout.is_empty(), "{}", r.stdout);
    assert!(
        r.stderr
            .contains(&format!("error: {}: /age:", path_str(&path))),
        "expected `error: FILE: /age: ...`, got: {}",
        r.stderr
    );
    // A missing required property is reported too (at the object that lacks it).
    let r = run(&["compress", "--spec", &f.spec()], Some(r#"{"age": 3}"#));
    assert_ne!(r.code, 0);
    assert!(r.stderr.starts_with("error: <stdin>: "), "{}", r.stderr);
    assert!(r.stderr.contains("required"), "{}", r.stderr);
}

#[test]
fn malformed_json_input_gives_line_and_column() {
    let f = Fixture::new();
    let path = f.write("broken.json", "{\n  \"name\": \"x\",\n  \"age\": ,\n}\n");
    let r = run(&["compress", "--spec", &f.spec(), path_str(&path)], None);
    assert_ne!(r.code, 0);
    assert!(
        r.stderr.contains(&format!("error: {}:3:", path_str(&path))),
        "{}",
        r.stderr
    );
}

#[test]
fn bad_schema_and_missing_files_are_errors_not_panics() {
    let f = Fixture::new();
    let missing = f.path("nope.json");
    let r = run(&["compile", path_str(&missing)], None);
    assert_eq!(r.code, 1);
    assert!(r.stderr.starts_with("error: "), "{}", r.stderr);
    assert!(!r.stderr.contains("panicked"), "{}", r.stderr);

    let broken = f.write("broken-schema.json", "{\"type\": ");
    let r = run(&["compile", path_str(&broken)], None);
    assert_eq!(r.code, 1);
    assert!(
        r.stderr.contains(&format!("{}:1:", path_str(&broken))),
        "{}",
        r.stderr
    );

    let not_a_schema = f.write("number.json", "42");
    let r = run(&["compile", path_str(&not_a_schema)], None);
    assert_eq!(r.code, 1, "{}", r.stderr);
    assert!(!r.stderr.contains("panicked"), "{}", r.stderr);

    let r = run(&["compress", "--spec", path_str(&missing)], Some("{}"));
    assert_eq!(r.code, 1);
    assert!(!r.stderr.contains("panicked"), "{}", r.stderr);
}

#[test]
fn bundled_viz_spec_round_trips_appendix_a() {
    let schema = Path::new(WORKSPACE).join("specs/viz.schema.json");
    let example = Path::new(WORKSPACE).join("examples/viz/appendix-a.json");
    assert!(
        schema.is_file() && example.is_file(),
        "the bundled {} and {} are part of the repository",
        schema.display(),
        example.display()
    );
    let dir = tempfile::tempdir().expect("tempdir");
    let spec = dir.path().join("viz");
    run_ok(&["compile", path_str(&schema), "-o", path_str(&spec)], None);
    let c = run_ok(
        &["compress", "--spec", path_str(&spec), path_str(&example)],
        None,
    );
    let sh = dir.path().join("appendix-a.dss");
    std::fs::write(&sh, &c.stdout).expect("write shorthand");
    let e = run_ok(&["expand", "--spec", path_str(&spec), path_str(&sh)], None);
    let original: Value =
        serde_json::from_str(&std::fs::read_to_string(&example).expect("read example"))
            .expect("example is JSON");
    let back: Value = serde_json::from_str(&e.stdout).expect("expand prints JSON");
    assert!(
        json_eq(&original, &back),
        "round trip changed appendix-a.json:\n{back}"
    );
    // The shorthand is shorter than the JSON it stands for.
    let compact = serde_json::to_string(&original).expect("serialize");
    assert!(
        c.stdout.trim_end().len() < compact.len(),
        "shorthand ({} bytes) is not shorter than compact JSON ({} bytes)",
        c.stdout.trim_end().len(),
        compact.len()
    );
    // Compiling on the fly from the schema gives the same shorthand.
    let c2 = run_ok(
        &["compress", "--spec", path_str(&schema), path_str(&example)],
        None,
    );
    assert_eq!(c.stdout, c2.stdout);
}

#[test]
fn bench_runs_on_a_small_corpus() {
    let data = tempfile::tempdir().expect("tempdir");
    let vl = data.path().join("vega-lite");
    let mb = data.path().join("maskbench/data");
    std::fs::create_dir_all(vl.join("examples")).expect("mkdir");
    std::fs::create_dir_all(&mb).expect("mkdir");
    std::fs::write(
        vl.join("vega-lite-schema.json"),
        person_schema().to_string(),
    )
    .expect("write");
    for (i, doc) in good_people().iter().enumerate() {
        std::fs::write(vl.join(format!("examples/p{i}.vl.json")), doc.to_string()).expect("write");
    }
    let case = json!({
        "description": "people", "meta": {}, "schema": person_schema(),
        "tests": [
            {"description": "ok", "data": good_people()[0], "valid": true},
            {"description": "bad", "data": {"age": 1}, "valid": false}
        ]
    });
    std::fs::write(mb.join("people.json"), case.to_string()).expect("write");
    let r = run_ok(
        &[
            "bench",
            "--data",
            path_str(data.path()),
            "--runs",
            "3",
            "--reps",
            "1",
        ],
        None,
    );
    assert!(
        r.stdout.contains("compile vega-lite schema: median"),
        "{}",
        r.stdout
    );
    assert!(
        r.stdout
            .contains("compile maskbench schemas: 1 of 1 compiled"),
        "{}",
        r.stdout
    );
    let verdicts = r
        .stdout
        .lines()
        .filter(|l| l.ends_with("target met") || l.ends_with("MISSED"))
        .count();
    // Vega-Lite compile time + compress/expand for both corpora.
    assert_eq!(verdicts, 5, "{}", r.stdout);

    let missing = data.path().join("nope");
    let r = run(&["bench", "--data", path_str(&missing)], None);
    assert_eq!(r.code, 1);
    assert!(r.stderr.contains("DSS_DATA_DIR"), "{}", r.stderr);
}

#[test]
fn broken_spec_file_is_not_compiled_as_a_schema() {
    let f = Fixture::new();
    let text = std::fs::read_to_string(f.spec_dir().join("spec.json")).expect("read spec.json");
    let mut spec: Value = serde_json::from_str(&text).expect("spec.json is JSON");
    spec["dss_spec"] = json!(999_999);
    let renamed = f.write("old-spec.json", &spec.to_string());
    let r = run(
        &["compress", "--spec", path_str(&renamed)],
        Some(&good_people()[0].to_string()),
    );
    assert_eq!(r.code, 1, "{}", r.stderr);
    assert!(
        r.stderr
            .contains(&format!("error: {}:", path_str(&renamed))),
        "{}",
        r.stderr
    );
}
