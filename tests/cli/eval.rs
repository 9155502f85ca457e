//! `dss eval` and `dss eval import`.

use super::*;

#[test]
fn eval_import_writes_a_suite_and_reports_bad_sources() {
    let dir = tempfile::tempdir().expect("tempdir");
    import_atis(dir.path());
    let missing = dir.path().join("no-such-venue");
    let r = run(
        &[
            "eval",
            "import",
            "food-ordering",
            path_str(&missing),
            "-o",
            path_str(&dir.path().join("x")),
        ],
        None,
    );
    assert_eq!(r.code, 1, "{}", r.stdout);
    assert!(r.stderr.contains("no-such-venue"), "{}", r.stderr);
    let r = run(&["eval", "suite", "--conditions", "gp,nope"], None);
    assert_eq!(r.code, 2, "{}", r.stderr);
    assert!(
        r.stderr.contains("unknown condition `nope`"),
        "{}",
        r.stderr
    );
}

/// `--catalog-mode loo` withholds the values only a case uses from extraction, and
/// `--perturb typo:SEED` puts seeded typos into the requests; both are named in the report.
#[cfg(feature = "runtime")]
#[test]
fn eval_leave_one_out_and_typos() {
    if skip_model_test("eval_leave_one_out_and_typos") {
        return;
    }
    let dir = tempfile::tempdir().expect("tempdir");
    let suite = import_atis(dir.path());
    let run_with = |extra: &[&str], out: &Path| {
        let mut args = vec![
            "eval",
            path_str(&suite),
            "--model",
            "smollm2-135m",
            "--limit",
            "3",
            "--conditions",
            "gp",
            "--max-tokens",
            "8",
            "--format",
            "json",
            "--out",
            path_str(out),
        ];
        args.extend_from_slice(extra);
        parse_json(&run_ok(&args, None).stdout)
    };
    let closed = run_with(&[], &dir.path().join("closed"));
    let loo = run_with(
        &["--catalog-mode", "loo", "--perturb", "typo:3"],
        &dir.path().join("loo"),
    );
    assert_eq!(closed["suite"], "apimix-atis");
    assert_eq!(loo["suite"], "apimix-atis (loo, typo:3)");
    let tp = |v: &Value| v["ner"]["tp"].as_u64().unwrap_or(u64::MAX);
    assert!(tp(&loo) < tp(&closed), "closed {closed}\nloo {loo}");
    // The perturbed requests are the ones run (and written to items.jsonl).
    let items = std::fs::read_to_string(dir.path().join("loo/items.jsonl")).expect("items");
    let cases = std::fs::read_to_string(suite.join("cases.jsonl")).expect("cases");
    let changed = items
        .lines()
        .map(parse_json)
        .filter(|l| !cases.contains(l["request"].as_str().unwrap_or_default()))
        .count();
    assert!(changed > 0, "{items}");
    // A case run alone (`--cases`) is withheld from and perturbed as in the whole run.
    let ids: Vec<String> = items
        .lines()
        .map(parse_json)
        .map(|l| l["id"].as_str().unwrap_or_default().to_string())
        .collect();
    let alone = dir.path().join("alone");
    let one = run_with(
        &[
            "--catalog-mode",
            "loo",
            "--perturb",
            "typo:3",
            "--cases",
            &ids[1],
        ],
        &alone,
    );
    assert_eq!(one["items"], 1, "{one}");
    let record = |text: &str, id: &str| -> Value {
        text.lines()
            .map(parse_json)
            .find(|l| l["id"] == id)
            .unwrap_or_else(|| panic!("no record of {id} in {text}"))
    };
    let alone_items = std::fs::read_to_string(alone.join("items.jsonl")).expect("items");
    let (whole, single) = (record(&items, &ids[1]), record(&alone_items, &ids[1]));
    for key in ["request", "output", "em"] {
        assert_eq!(whole[key], single[key], "{key}: {whole}\n{single}");
    }
    let unknown = run(&["eval", path_str(&suite), "--cases", "no-such-case"], None);
    assert_ne!(unknown.code, 0, "{}", unknown.stderr);
    assert!(
        unknown.stderr.contains("no-such-case"),
        "{}",
        unknown.stderr
    );
    let bad = run(&["eval", path_str(&suite), "--perturb", "typos"], None);
    assert_eq!(bad.code, 2, "{}", bad.stderr);
    assert!(bad.stderr.contains("typo:SEED"), "{}", bad.stderr);
}

#[test]
fn eval_table_puts_reports_side_by_side_and_names_a_bad_one() {
    let dir = tempfile::tempdir().expect("tempdir");
    let mut report = dss_eval::Report::new("apimix-snips (loo)", 3, "some-model");
    report.set(
        "gp",
        &dss_eval::ConditionResult {
            em: 2.0 / 3.0,
            em_paper: 2.0 / 3.0,
            valid: 3,
            ..Default::default()
        },
    );
    let loo = dir.path().join("loo");
    std::fs::create_dir(&loo).expect("mkdir");
    std::fs::write(loo.join("report.json"), report.to_json().expect("json")).expect("write");
    let r = run_ok(&["eval", "table", path_str(&loo)], None);
    assert!(
        r.stdout.contains(
            "| apimix-snips | gp | not run | **0.667** / 0.667 (3/3 valid) [1] | not run |"
        ),
        "{}",
        r.stdout
    );
    assert!(
        r.stdout.contains("build, machine and date not recorded"),
        "{}",
        r.stdout
    );
    let bad = dir.path().join("bad.json");
    std::fs::write(&bad, "{\"suite\": 1}").expect("write");
    let r = run(&["eval", "table", path_str(&loo), path_str(&bad)], None);
    assert_eq!(r.code, 1, "{}", r.stdout);
    assert!(
        r.stderr.contains("bad.json: not a dss eval report.json"),
        "{}",
        r.stderr
    );
}

/// The CI smoke evaluation: the whole path (import, extraction, pruned and full grammar,
/// scoring, report) on two ATIS cases with the small model.
#[cfg(feature = "runtime")]
#[test]
fn eval_runs_conditions_and_prints_the_report() {
    if skip_model_test("eval_runs_conditions_and_prints_the_report") {
        return;
    }
    let dir = tempfile::tempdir().expect("tempdir");
    let suite = import_atis(dir.path());
    let out = dir.path().join("out");
    let r = run_ok(
        &[
            "eval",
            path_str(&suite),
            "--model",
            "smollm2-135m",
            "--limit",
            "2",
            "--conditions",
            "gp,gp-json,cd",
            "--max-tokens",
            "24",
            "--format",
            "json",
            "--out",
            path_str(&out),
        ],
        None,
    );
    let v = parse_json(&r.stdout);
    let keys = |v: &Value| {
        v.as_object()
            .unwrap_or_else(|| panic!("an object: {v}"))
            .keys()
            .cloned()
            .collect::<Vec<_>>()
    };
    assert_eq!(
        keys(&v),
        ["suite", "items", "model", "results", "ner", "run"]
    );
    assert_eq!(v["items"], 2);
    // How and where the run was made.
    let run_info = &v["run"];
    assert_eq!(run_info["suite"], "apimix-atis");
    assert_eq!(run_info["catalog_mode"], "closed");
    assert!(
        run_info["suite_cases"].as_u64().is_some_and(|n| n > 2),
        "{run_info}"
    );
    assert!(
        run_info["build"]
            .as_str()
            .is_some_and(|b| b.starts_with("dss ")),
        "{run_info}"
    );
    assert!(
        run_info["machine"]
            .as_str()
            .is_some_and(|m| m.ends_with(" cores")),
        "{run_info}"
    );
    assert!(
        run_info["date"].as_str().is_some_and(|d| d.ends_with('Z')),
        "{run_info}"
    );
    assert_eq!(v["suite"], "apimix-atis");
    assert_eq!(v["model"], "smollm2-135m");
    assert_eq!(keys(&v["results"]), ["gp", "gp-json", "cd"]);
    for c in ["gp", "gp-json", "cd"] {
        let r = &v["results"][c];
        assert_eq!(keys(r), dss_eval::ConditionResult::FIELDS);
        let em = r["em"].as_f64().unwrap_or(-1.0);
        assert!((0.0..=1.0).contains(&em), "{r}");
        assert!(r["valid"].as_u64().is_some_and(|n| n <= 2), "{r}");
        assert!(r["p50_ms"].as_f64().is_some_and(|t| t > 0.0), "{r}");
    }
    assert_eq!(keys(&v["ner"]), dss_eval::NerReport::FIELDS);
    // The two golds have slot values the request names: extraction finds some of them.
    assert!(v["ner"]["tp"].as_u64().is_some_and(|n| n > 0), "{v}");
    // --out: one item line per case and condition, the report as CSV and JSON.
    let items = std::fs::read_to_string(out.join("items.jsonl")).expect("items.jsonl");
    let lines: Vec<Value> = items.lines().map(parse_json).collect();
    assert_eq!(lines.len(), 6, "{items}");
    for l in &lines {
        for k in [
            "id",
            "condition",
            "request",
            "gold",
            "output",
            "shorthand",
            "error",
            "stats",
        ] {
            assert!(l.get(k).is_some(), "{k} in {l}");
        }
        assert!(l["output"].is_null() != l["error"].is_null(), "{l}");
    }
    let report: Value =
        parse_json(&std::fs::read_to_string(out.join("report.json")).expect("report.json"));
    assert_eq!(report, v);
    let csv = std::fs::read_to_string(out.join("report.csv")).expect("report.csv");
    assert_eq!(csv.lines().count(), 4, "{csv}");
    // The report in the table of catalog modes, with where it comes from.
    let table = run_ok(&["eval", "table", path_str(&out)], None).stdout;
    let row = table
        .lines()
        .find(|l| l.starts_with("| apimix-atis | gp | **"))
        .unwrap_or_else(|| panic!("a gp row: {table}"));
    assert!(row.ends_with("[1] | not run | not run |"), "{row}");
    assert!(
        table.contains(&format!("1. `{}`: dss ", out.display())),
        "{table}"
    );
    // The plot of exact match against median latency, a point labelled per condition
    // (CI installs a font; without one the run warns and writes no plot).
    let svg = std::fs::read_to_string(out.join("report.svg")).expect("report.svg");
    assert!(svg.starts_with("<svg"), "{svg}");
    assert!(svg.contains("exact match"), "{svg}");
    for (cond, _) in report["results"].as_object().expect("results") {
        assert!(
            svg.contains(&format!(">\n{cond}\n</text>")),
            "{cond} in {svg}"
        );
    }
}
