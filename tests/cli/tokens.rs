//! `dss tokens`.

use super::*;

#[test]
fn tokens_json_has_every_format_and_dss_beats_compact() {
    let (_dir, spec, examples) = viz_corpus();
    let n_docs = std::fs::read_dir(&examples)
        .expect("examples/viz")
        .filter(|e| {
            e.as_ref()
                .is_ok_and(|e| e.path().extension().is_some_and(|x| x == "json"))
        })
        .count();
    assert!(n_docs > 1, "examples/viz has the bundled examples");
    let r = run_ok(&tokens_args(&spec, &examples, "json", &[]), None);
    let report = parse_json(&r.stdout);
    assert_eq!(report["tokenizer"], "o200k", "{report:#}");
    assert_eq!(report["documents"], n_docs, "{report:#}");
    assert_eq!(report["failed"], 0);
    assert_eq!(report["skipped"], 0);
    let total = |k: &str| report["totals"][k].as_u64().unwrap_or(0);
    for k in FORMAT_KEYS {
        assert!(total(k) > 0, "{k}: {report:#}");
    }
    assert!(total("pretty") > total("compact"), "{report:#}");
    assert!(total("dss") < total("compact"), "{report:#}");
    for k in ["median_ratio", "worst_ratio"] {
        assert!(
            report[k].as_f64().is_some_and(|x| x > 0.0 && x < 1.0),
            "{k}: {report:#}"
        );
    }
    assert!(
        report["worst_document"]
            .as_str()
            .is_some_and(|d| d.starts_with(path_str(&examples))),
        "{report:#}"
    );
    assert_eq!(report["worst"][0]["document"], report["worst_document"]);

    // One document alone: dss < compact, its ratio is dss/compact, and the totals agree
    // with the per-document CSV.
    let one = examples.join("appendix-a.json");
    let r = run_ok(&tokens_args(&spec, &one, "json", &[]), None);
    let single = parse_json(&r.stdout);
    let (dss, compact) = (
        single["totals"]["dss"].as_u64().unwrap_or(0),
        single["totals"]["compact"].as_u64().unwrap_or(0),
    );
    assert!(dss > 0 && dss < compact, "{single:#}");
    let ratio = single["worst_ratio"].as_f64().unwrap_or(0.0);
    assert!(
        (ratio - dss as f64 / compact as f64).abs() < 1e-3,
        "{single:#}"
    );
    assert_eq!(single["median_ratio"], single["worst_ratio"]);
    let r = run_ok(
        &["tokens", "--spec", &spec, path_str(&one), "--format", "csv"],
        None,
    );
    let rows = csv_rows(&r.stdout);
    assert_eq!(rows.len(), 2, "{}", r.stdout);
    for (i, k) in FORMAT_KEYS.iter().enumerate() {
        assert_eq!(rows[1][2 + i], single["totals"][k].to_string(), "{k}");
    }

    // Two tokenizers: an array, one object each, in --tokenizer order.
    let r = run_ok(
        &tokens_args(
            &spec,
            &examples,
            "json",
            &["--tokenizer", "cl100k", "--tokenizer", "o200k"],
        ),
        None,
    );
    let both = parse_json(&r.stdout);
    assert_eq!(both[0]["tokenizer"], "cl100k", "{both:#}");
    assert_eq!(both[1], report);
}

#[test]
fn tokens_csv_has_one_row_per_document() {
    let f = Fixture::new();
    let dir = write_docs(&f, "corpus", &good_people());
    // A subfolder with a JSONL file of two documents (and a blank line).
    std::fs::create_dir_all(dir.join("more")).expect("mkdir");
    let jsonl = format!("{}\n\n{}\n", verbose_person(), json!({"name": "Zed"}));
    std::fs::write(dir.join("more/extra.jsonl"), jsonl).expect("write");
    // Not a document: ignored in a folder.
    std::fs::write(dir.join("notes.txt"), "hello").expect("write");
    let r = run_ok(
        &tokens_args(&f.spec(), &dir, "csv", &["--tokenizer", "o200k"]),
        None,
    );
    let rows = csv_rows(&r.stdout);
    assert_eq!(
        rows[0],
        [
            "path",
            "tokenizer",
            "pretty",
            "compact",
            "yaml",
            "toon",
            "dss"
        ],
        "{}",
        r.stdout
    );
    let body = &rows[1..];
    assert_eq!(body.len(), good_people().len() + 2, "{}", r.stdout);
    for row in body {
        assert_eq!(row.len(), 7, "{row:?}");
        assert_eq!(row[1], "o200k");
        for n in &row[2..] {
            assert!(n.parse::<u64>().is_ok_and(|n| n > 0), "{row:?}");
        }
    }
    let extra = path_str(&dir.join("more/extra.jsonl")).to_string();
    let names: Vec<&str> = body.iter().map(|r| r[0].as_str()).collect();
    assert!(names.contains(&format!("{extra}:1").as_str()), "{names:?}");
    assert!(names.contains(&format!("{extra}:3").as_str()), "{names:?}");

    // The table has per-folder subtotals: documents come from a subfolder.
    let r = run_ok(&["tokens", "--spec", &f.spec(), path_str(&dir)], None);
    assert!(r.stdout.contains("per folder"), "{}", r.stdout);
    assert!(
        r.stdout.contains(&path_str(&dir.join("more")).to_string()),
        "{}",
        r.stdout
    );
    for title in ["pretty JSON", "compact JSON", "YAML", "TOON", "dss"] {
        assert!(r.stdout.contains(title), "{title}: {}", r.stdout);
    }
}

#[test]
fn tokens_reads_standard_input_as_one_document_or_json_lines() {
    let f = Fixture::new();
    let one = verbose_person().to_string();
    let r = run_ok(
        &["tokens", "--spec", &f.spec(), "-", "--format", "csv"],
        Some(&one),
    );
    let rows = csv_rows(&r.stdout);
    assert_eq!(rows.len(), 2, "{}", r.stdout);
    assert_eq!(rows[1][0], "<stdin>", "{}", r.stdout);
    let lines = format!("{}\n{}\n", verbose_person(), json!({"name": "Zed"}));
    let r = run_ok(
        &["tokens", "--spec", &f.spec(), "-", "--format", "csv"],
        Some(&lines),
    );
    let names: Vec<String> = csv_rows(&r.stdout)[1..]
        .iter()
        .map(|r| r[0].clone())
        .collect();
    assert_eq!(names, ["<stdin>:1", "<stdin>:2"], "{}", r.stdout);
}

#[test]
fn tokens_reports_documents_that_fail_to_compress() {
    let f = Fixture::new();
    let dir = write_docs(&f, "docs", &good_people());
    // Invalid against the schema: `name` is required, `age` must be >= 0.
    let bad = f.write("docs/bad.json", &json!({"age": -1}).to_string());
    let jsonl = format!("{}\n{}\n", json!({"name": "ok"}), json!({"name": 5}));
    let bad_lines = f.write("docs/lines.jsonl", &jsonl);
    let r = run(&tokens_args(&f.spec(), &dir, "json", &[]), None);
    assert_eq!(r.code, 1, "{}", r.stderr);
    assert!(
        r.stderr.contains(&format!("error: {}: ", path_str(&bad))),
        "{}",
        r.stderr
    );
    assert!(
        r.stderr
            .contains(&format!("error: {}:2: ", path_str(&bad_lines))),
        "{}",
        r.stderr
    );
    // The report still covers the rest.
    let report = parse_json(&r.stdout);
    assert_eq!(report["failed"], 2, "{report:#}");
    assert_eq!(report["documents"], good_people().len() + 1, "{report:#}");

    // Malformed JSON is a failure with line and column, not a crash.
    let broken = f.write("broken.json", "{\"name\": \"x\",\n  oops}");
    let r = run(&["tokens", "--spec", &f.spec(), path_str(&broken)], None);
    assert_eq!(r.code, 1);
    assert!(
        has_line_col_after(&r.stderr, &format!("error: {}:", path_str(&broken))),
        "{}",
        r.stderr
    );
}

#[test]
fn tokens_plot_writes_svg() {
    let f = Fixture::new();
    let mut docs = good_people();
    docs.push(verbose_person());
    let dir = write_docs(&f, "docs", &docs);
    let svg = f.path("ratios.svg");
    run_ok(
        &[
            "tokens",
            "--spec",
            &f.spec(),
            path_str(&dir),
            "--plot",
            path_str(&svg),
        ],
        None,
    );
    let text = std::fs::read_to_string(&svg).expect("the plot is written");
    assert!(text.trim_start().starts_with("<svg"), "{text}");
    assert!(text.contains("median"), "{text}");
    assert!(text.contains("o200k"), "{text}");

    let r = run(
        &[
            "tokens",
            "--spec",
            &f.spec(),
            path_str(&dir),
            "--plot",
            path_str(&f.path("x.gif")),
        ],
        None,
    );
    assert_eq!(r.code, 1);
    assert!(r.stderr.contains(".svg or .png"), "{}", r.stderr);
}

#[test]
fn tokens_grammar_prints_both_sides() {
    let f = Fixture::new();
    let r = run_ok(
        &[
            "tokens",
            "--spec",
            &f.spec(),
            "--grammar",
            "--format",
            "json",
            "--tokenizer",
            "o200k",
            "--tokenizer",
            "cl100k",
        ],
        None,
    );
    let report = parse_json(&r.stdout);
    let rows = report.as_array().expect("an array for two tokenizers");
    assert_eq!(rows.len(), 2);
    for row in rows {
        let n = |k: &str| row[k].as_u64().unwrap_or(0);
        assert!(n("grammar_bnf") > 0, "{row:#}");
        assert!(n("schema_compact") > 0, "{row:#}");
        assert!(n("schema_pretty") > n("schema_compact"), "{row:#}");
    }
    // The table: a row per tokenizer with the numbers.
    let r = run_ok(&["tokens", "--spec", &f.spec(), "--grammar"], None);
    let line = r
        .stdout
        .lines()
        .find(|l| l.starts_with("o200k"))
        .unwrap_or_else(|| panic!("{}", r.stdout));
    let numbers: Vec<&str> = line.split_whitespace().skip(1).collect();
    assert_eq!(numbers.len(), 4, "{line}");
    assert!(numbers.iter().all(|n| n.parse::<f64>().is_ok()), "{line}");
    let first = numbers[0].parse::<u64>().unwrap_or(0);
    assert_eq!(
        first,
        rows[0]["grammar_bnf"].as_u64().unwrap_or(1),
        "{line}"
    );
}

#[test]
fn tokens_skip_if_present_leaves_out_documents() {
    let f = Fixture::new();
    // Two of the good people and the verbose one have `tags`.
    let mut docs = good_people();
    docs.push(verbose_person());
    let with_tags = docs.iter().filter(|d| d.get("tags").is_some()).count();
    let dir = write_docs(&f, "docs", &docs);
    for rule in ["/tags", "$..tags"] {
        let r = run_ok(
            &tokens_args(&f.spec(), &dir, "json", &["--skip-if-present", rule]),
            None,
        );
        let report = parse_json(&r.stdout);
        assert_eq!(report["skipped"], with_tags, "{rule}: {report:#}");
        assert_eq!(
            report["documents"],
            docs.len() - with_tags,
            "{rule}: {report:#}"
        );
    }
    let r = run(
        &[
            "tokens",
            "--spec",
            &f.spec(),
            path_str(&dir),
            "--skip-if-present",
            "tags",
        ],
        None,
    );
    assert_eq!(r.code, 1);
    assert!(r.stderr.contains("JSON pointer"), "{}", r.stderr);
}

#[test]
fn tokens_schema_tests_compile_each_file() {
    let f = Fixture::new();
    let dir = f.path("mb");
    std::fs::create_dir_all(&dir).expect("mkdir");
    let people = json!({
        "description": "people", "schema": person_schema(),
        "tests": [
            {"description": "ok", "data": verbose_person(), "valid": true},
            {"description": "ok too", "data": good_people()[1], "valid": true},
            {"description": "bad", "data": {"age": 1}, "valid": false}
        ]
    });
    let numbers = json!({
        "schema": {"type": "array", "items": {"type": "integer"}},
        "tests": [{"data": [1, 2, 3], "valid": true}]
    });
    std::fs::write(dir.join("Src_a---people.json"), people.to_string()).expect("write");
    std::fs::write(dir.join("Src_b---numbers.json"), numbers.to_string()).expect("write");
    let r = run_ok(
        &[
            "tokens",
            "--schema-tests",
            path_str(&dir),
            "--format",
            "json",
        ],
        None,
    );
    let report = parse_json(&r.stdout);
    assert_eq!(report["documents"], 3, "{report:#}");
    assert_eq!(report["invalid_tests"], 1, "{report:#}");
    assert_eq!(report["failed"], 0, "{report:#}");
    let groups: Vec<&str> = report["groups"]
        .as_array()
        .map(|g| g.iter().filter_map(|g| g["group"].as_str()).collect())
        .unwrap_or_default();
    assert_eq!(groups, ["Src_a", "Src_b"], "{report:#}");

    // A "valid" test that is not valid is a failure named by its place in the file.
    let lying = json!({
        "schema": {"type": "integer"},
        "tests": [{"data": "no", "valid": true}]
    });
    let lying_path = dir.join("Src_c---lying.json");
    std::fs::write(&lying_path, lying.to_string()).expect("write");
    let r = run(&["tokens", "--maskbench", path_str(&dir)], None);
    assert_eq!(r.code, 1);
    assert!(
        r.stderr
            .contains(&format!("error: {}#/tests/0/data: ", path_str(&lying_path))),
        "{}",
        r.stderr
    );
}

#[test]
fn tokens_unavailable_tokenizers_are_clear_errors() {
    let f = Fixture::new();
    let dir = write_docs(&f, "docs", &good_people());
    for (tokenizer, needle) in [
        ("gpt-17", "unknown tokenizer"),
        ("gguf:/nonexistent/model.gguf", "/nonexistent/model.gguf"),
        (
            "hf:/nonexistent/tokenizer.json",
            "/nonexistent/tokenizer.json",
        ),
    ] {
        let r = run(
            &[
                "tokens",
                "--spec",
                &f.spec(),
                path_str(&dir),
                "--tokenizer",
                tokenizer,
            ],
            None,
        );
        assert_eq!(r.code, 1, "{tokenizer}");
        assert!(r.stderr.contains(needle), "{tokenizer}: {}", r.stderr);
    }
}

/// The model's own tokenizer, with the small CI model (fetched by `.ci/install-deps`).
#[cfg(feature = "runtime")]
#[test]
fn tokens_gguf_tokenizer_counts_with_the_model() {
    if skip_model_test("tokens_gguf_tokenizer_counts_with_the_model") {
        return;
    }
    let model = dss_runtime::models::path_if_cached("smollm2-135m")
        .ok()
        .flatten()
        .unwrap_or_else(|| panic!("the small model is not cached; `.ci/install-deps` fetches it"));
    let (_dir, spec, examples) = viz_corpus();
    let gguf = format!("gguf:{}", path_str(&model));
    let r = run_ok(
        &tokens_args(
            &spec,
            &examples,
            "json",
            &["--tokenizer", &gguf, "--tokenizer", "o200k"],
        ),
        None,
    );
    let report = parse_json(&r.stdout);
    let (ours, o200k) = (&report[0], &report[1]);
    assert_eq!(ours["tokenizer"], gguf.as_str(), "{report:#}");
    assert_eq!(ours["documents"], o200k["documents"], "{report:#}");
    let total = |k: &str| ours["totals"][k].as_u64().unwrap_or(0);
    assert!(
        total("dss") > 0 && total("dss") < total("compact"),
        "{report:#}"
    );
    assert!(total("pretty") > total("compact"), "{report:#}");
    // A different vocabulary: some count differs from o200k's.
    assert_ne!(ours["totals"], o200k["totals"], "{report:#}");
}
