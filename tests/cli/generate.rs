//! `dss model` and `dss generate` (feature "runtime"; the small model): output, stats, the prefix cache, prompts, examples.

use super::*;

#[cfg(feature = "runtime")]
#[test]
fn model_list_names_the_pinned_models() {
    let r = run_ok(&["model", "list"], None);
    assert!(r.stdout.contains("smollm2-135m"), "{}", r.stdout);
    assert!(
        r.stdout.contains("qwen2.5-coder-0.5b [default]"),
        "{}",
        r.stdout
    );
    let r = run(&["model", "fetch", "no-such-model"], None);
    assert_eq!(r.code, 1);
    assert!(r.stderr.contains("unknown model"), "{}", r.stderr);
}

/// `dss model bench` times calls of each size on the model and fits their cost.
#[cfg(feature = "runtime")]
#[test]
fn model_bench_times_calls_by_the_tokens_they_read() {
    if skip_model_test("model_bench_times_calls_by_the_tokens_they_read") {
        return;
    }
    let args = [
        "model",
        "bench",
        "smollm2-135m",
        "--context",
        "32",
        "--batches",
        "1,2,16",
        "--repeats",
        "2",
        "--json",
    ];
    let r = run_ok(&args, None);
    let v = parse_json(&r.stdout);
    assert_eq!(v["context"], 32, "{v:#}");
    let costs = v["costs"].as_array().expect("costs");
    let sizes: Vec<u64> = costs.iter().filter_map(|c| c["tokens"].as_u64()).collect();
    assert_eq!(sizes, [1, 2, 16], "{v:#}");
    for c in costs {
        assert_eq!(c["calls"], 2, "{v:#}");
        // llama.cpp's own counters time each call (they read 0 unless perf is on).
        assert!(
            c["llama_ms_p50"].as_f64().is_some_and(|ms| ms > 0.0),
            "{v:#}"
        );
        assert!(
            c["wall_ms_p50"].as_f64().is_some_and(|ms| ms > 0.0),
            "{v:#}"
        );
    }
    assert!(
        v["prompt_ms_per_token"].as_f64().is_some_and(|ms| ms > 0.0),
        "{v:#}"
    );
    let text = run_ok(&args[..args.len() - 1], None).stdout;
    assert!(
        text.contains("ms a call") && text.contains("tokens/s"),
        "{text}"
    );
    // A call larger than a batch is refused with what is allowed.
    let r = run(
        &["model", "bench", "smollm2-135m", "--batches", "0,600"],
        None,
    );
    assert_eq!(r.code, 1, "{}", r.stderr);
    assert!(
        r.stderr.contains("batch sizes must be 1 to 512"),
        "{}",
        r.stderr
    );
}

#[cfg(feature = "runtime")]
#[test]
fn generate_prints_valid_json_shorthand_and_stats() {
    if skip_model_test("generate_prints_valid_json_shorthand_and_stats") {
        return;
    }
    let r = run_ok(
        &viz_generate(&[
            "--max-tokens",
            "96",
            "--shorthand",
            "--stats",
            "--compact",
            "profit by region as a bar chart",
        ]),
        None,
    );
    // The shorthand comes first: it has the `fields:` section.
    assert!(r.stdout.lines().any(|l| l == "fields:"), "{}", r.stdout);
    let json_line = r.stdout.lines().last().expect("the JSON");
    let value: Value = serde_json::from_str(json_line).expect("JSON output");
    assert!(value.get("fields").is_some_and(Value::is_array), "{value}");
    let stats: Value = serde_json::from_str(r.stderr.trim()).expect("one stats line");
    for k in [
        "prompt_tokens",
        "cached_tokens",
        "ttft_ms",
        "generated_tokens",
        "forced_tokens",
        "constraint_ms",
        "total_ms",
        "load_ms",
        "uncached_prompt_tokens",
        "model_calls",
        "evaluated_tokens",
        "prompt_ms",
        "decode_calls",
        "decode_tokens",
        "decode_ms",
    ] {
        assert!(stats.get(k).is_some_and(Value::is_number), "{k} in {stats}");
    }
    // After the prompt, one call per sampled token at most (forced text rides along).
    let calls = stats["decode_calls"].as_u64().expect("calls");
    let sampled = stats["generated_tokens"].as_u64().expect("generated")
        - stats["forced_tokens"].as_u64().expect("forced");
    assert!(
        calls <= sampled,
        "{calls} calls for {sampled} sampled tokens: {stats}"
    );
    let read = stats["decode_tokens"].as_u64().expect("decode tokens");
    assert!(
        read >= calls,
        "{read} tokens read in {calls} calls: {stats}"
    );
}

/// Tools whose parameters are all free strings list no values, and generation still
/// prunes by the request: every string written is a span of it (the full grammar let a
/// model write any text there).
#[cfg(feature = "runtime")]
#[test]
fn generate_prunes_tools_of_free_strings_to_the_request_s_words() {
    if skip_model_test("generate_prunes_tools_of_free_strings_to_the_request_s_words") {
        return;
    }
    let dir = tempfile::tempdir().expect("tempdir");
    let tools = json!([
        {"type": "function", "function": {"name": "translate_text",
            "description": "Put a passage into another language.",
            "parameters": {"type": "object", "required": ["text", "language"], "properties": {
                "text": {"type": "string"},
                "language": {"type": "string"}}}}},
        {"type": "function", "function": {"name": "find_movies",
            "description": "Films showing in a city.",
            "parameters": {"type": "object", "required": ["city"], "properties": {
                "city": {"type": "string"},
                "genre": {"type": "string"}}}}}]);
    let path = tools_file(&dir, &tools);
    let request = "Translate 'see you tomorrow' into Welsh";
    let r = run_ok(
        &[
            "generate",
            "--spec",
            path_str(&path),
            "--model",
            "smollm2-135m",
            "--no-examples",
            "--max-tokens",
            "64",
            "--stats",
            "--compact",
            request,
        ],
        None,
    );
    let stats = r.stderr.lines().last().expect("the stats line");
    let stats: Value = serde_json::from_str(stats).expect("a stats line");
    assert!(stats.get("prune_tier").is_some(), "{stats}");
    let value: Value = serde_json::from_str(r.stdout.trim()).expect("JSON output");
    let mut strings = Vec::new();
    fn collect<'v>(v: &'v Value, out: &mut Vec<&'v str>) {
        match v {
            Value::String(s) => out.push(s),
            Value::Array(a) => a.iter().for_each(|x| collect(x, out)),
            Value::Object(o) => o.values().for_each(|x| collect(x, out)),
            _ => {}
        }
    }
    collect(&value, &mut strings);
    assert!(!strings.is_empty(), "{value}");
    let words = |t: &str| -> Vec<String> {
        t.split(|c: char| !c.is_alphanumeric())
            .filter(|w| !w.is_empty())
            .map(str::to_string)
            .collect()
    };
    let request_words = words(request);
    for s in strings {
        let span = words(s);
        assert!(
            !span.is_empty() && request_words.windows(span.len()).any(|w| w == span),
            "{s:?} is no run of the request's words: {value}"
        );
    }
}

#[cfg(feature = "runtime")]
#[test]
fn generate_prefix_cache_file_starts_a_new_process_warm() {
    if skip_model_test("generate_prefix_cache_file_starts_a_new_process_warm") {
        return;
    }
    let dir = tempfile::tempdir().expect("tempdir");
    let cache = dir.path().to_string_lossy().to_string();
    let args = viz_generate(&[
        "--max-tokens",
        "96",
        "--stats",
        "--compact",
        "--prefix-cache",
        &cache,
        "sales by region",
    ]);
    let first = run_ok(&args, None);
    let second = run_ok(&args, None);
    let stats = |r: &Run| -> Value { serde_json::from_str(r.stderr.trim()).expect("stats") };
    assert_eq!(stats(&first)["prefix_cache"], "saved", "{}", first.stderr);
    assert_eq!(
        stats(&second)["prefix_cache"],
        "loaded",
        "{}",
        second.stderr
    );
    assert_eq!(first.stdout, second.stdout, "the file changes speed only");
}

/// A tiny `--timeout`: every request ends with an error record saying so (not a hang, not
/// a retry under the full grammar), and the exit code says some failed.
#[cfg(feature = "runtime")]
#[test]
fn generate_past_its_time_budget_is_an_error_record() {
    if skip_model_test("generate_past_its_time_budget_is_an_error_record") {
        return;
    }
    let started = std::time::Instant::now();
    let r = run(
        &viz_generate(&["--timeout", "0.001", "--jsonl", "--keep-going"]),
        Some("\"sales by region\"\n\"monthly profit\"\n"),
    );
    assert_eq!(r.code, 1, "{}", r.stderr);
    assert!(r.stdout.trim().is_empty(), "{}", r.stdout);
    let records = stderr_records(
        &r.stderr
            .lines()
            .filter(|l| !l.starts_with("warning: "))
            .collect::<Vec<_>>()
            .join("\n"),
    );
    assert_eq!(records.len(), 2, "{records:?}");
    for (i, rec) in records.iter().enumerate() {
        assert_eq!(rec["line"], i + 1, "{rec}");
        let e = rec["error"].as_str().unwrap_or_default();
        assert!(e.contains("time budget of 0.001 s"), "{rec}");
    }
    assert!(
        !r.stderr.contains("retrying under the full grammar"),
        "{}",
        r.stderr
    );
    assert!(started.elapsed().as_secs() < 120, "{:?}", started.elapsed());
    // `--input -` reads the requests from standard input as well.
    let r = run(
        &viz_generate(&[
            "--timeout",
            "0.001",
            "--jsonl",
            "--keep-going",
            "--input",
            "-",
        ]),
        Some("\"sales by region\"\n"),
    );
    assert_eq!(r.code, 1, "{}", r.stderr);
    assert!(r.stderr.contains("time budget of 0.001 s"), "{}", r.stderr);
    // A budget must be a positive number of seconds.
    let r = run(&viz_generate(&["--timeout", "0", "sales by region"]), None);
    assert_eq!(r.code, 2, "{}", r.stderr);
}

#[cfg(feature = "runtime")]
#[test]
fn generate_jsonl_reuses_the_prefix() {
    if skip_model_test("generate_jsonl_reuses_the_prefix") {
        return;
    }
    let r = run(
        &viz_generate(&["--max-tokens", "96", "--jsonl", "--stats", "--keep-going"]),
        Some("\"sales by region\"\n42\n\"monthly profit\"\n"),
    );
    // Line 2 is not a JSON string: reported, the others go on, exit code 1.
    assert_eq!(r.code, 1, "{}", r.stderr);
    let outputs: Vec<Value> = r
        .stdout
        .lines()
        .map(|l| serde_json::from_str(l).expect("one JSON value per line"))
        .collect();
    assert_eq!(outputs.len(), 2, "{}", r.stdout);
    // Human warnings (a pruned decoding retried under the full grammar) may come between.
    let json_lines: Vec<&str> = r
        .stderr
        .lines()
        .filter(|l| !l.starts_with("warning: "))
        .collect();
    let records = stderr_records(&json_lines.join("\n"));
    let errors: Vec<&Value> = records
        .iter()
        .filter(|v| v.get("error").is_some())
        .collect();
    assert_eq!(errors.len(), 1, "{records:?}");
    assert_eq!(errors[0]["line"], 2);
    let stats: Vec<&Value> = records
        .iter()
        .filter(|v| v.get("total_ms").is_some())
        .collect();
    assert_eq!(stats.len(), 2);
    let cached = stats[1]["cached_tokens"].as_u64().unwrap_or(0);
    assert!(
        cached > 100,
        "the second request reuses the prefix: {stats:?}"
    );
}

#[cfg(feature = "runtime")]
#[test]
fn generate_reports_a_missing_model_clearly() {
    let spec = format!("{WORKSPACE}/grammars/viz");
    let r = run(
        &[
            "generate",
            "--spec",
            &spec,
            "--model",
            "/nonexistent/model.gguf",
            "x",
        ],
        None,
    );
    assert_eq!(r.code, 1);
    assert!(r.stderr.contains("unknown model"), "{}", r.stderr);
}

#[cfg(feature = "runtime")]
#[test]
fn generate_caches_the_prefix_by_default_and_not_with_no_prefix_cache() {
    if skip_model_test("generate_caches_the_prefix_by_default_and_not_with_no_prefix_cache") {
        return;
    }
    let dir = tempfile::tempdir().expect("tempdir");
    let cache = dir.path().to_string_lossy().to_string();
    let base = viz_generate(&["--max-tokens", "64", "--stats", "sales by region"]);
    let kv_files = || -> usize {
        std::fs::read_dir(dir.path().join("prefix"))
            .map(|d| d.filter_map(Result::ok).count())
            .unwrap_or(0)
    };
    let mut off = base.to_vec();
    off.insert(1, "--no-prefix-cache");
    let r = run_with_env(&off, &[("DSS_CACHE_DIR", &cache)]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_eq!(kv_files(), 0, "--no-prefix-cache writes nothing");
    let first = run_with_env(&base, &[("DSS_CACHE_DIR", &cache)]);
    assert_eq!(first.code, 0, "{}", first.stderr);
    assert_eq!(kv_files(), 1, "the default cache holds the prefix");
    let second = run_with_env(&base, &[("DSS_CACHE_DIR", &cache)]);
    assert!(
        second.stderr.contains("\"prefix_cache\":\"loaded\""),
        "{}",
        second.stderr
    );
    assert_eq!(first.stdout, second.stdout);
    assert_eq!(r.stdout, first.stdout, "the cache changes speed only");
}

#[cfg(feature = "runtime")]
#[test]
fn generate_print_prompt_shows_the_prompt_and_generates_nothing() {
    if skip_model_test("generate_print_prompt_shows_the_prompt_and_generates_nothing") {
        return;
    }
    let r = run_ok(
        &viz_generate(&[
            "--no-prefix-cache",
            "--print-prompt",
            "total sales by region",
        ]),
        None,
    );
    // The system message holds the readable grammar; the request comes last, with the
    // values found in it.
    assert!(r.stdout.contains("<Document> ::="), "{}", r.stdout);
    let at = r
        .stdout
        .rfind("total sales by region")
        .expect("the request");
    assert!(
        r.stdout[at..].contains("Items found:"),
        "{}",
        &r.stdout[at..]
    );
    assert!(!r.stdout.contains("\"fields\""), "no JSON was generated");
}

#[cfg(feature = "runtime")]
#[test]
fn generate_stats_report_a_failed_request_too() {
    if skip_model_test("generate_stats_report_a_failed_request_too") {
        return;
    }
    let r = run(
        &viz_generate(&[
            "--no-prefix-cache",
            "--max-tokens",
            "1",
            "--stats",
            "total sales by region and by month",
        ]),
        None,
    );
    assert_eq!(
        r.code, 1,
        "one token cannot hold the document: {}",
        r.stdout
    );
    let line = r
        .stderr
        .lines()
        .find(|l| l.starts_with('{'))
        .expect("a stats line");
    let stats: Value = serde_json::from_str(line).expect("stats JSON");
    assert_eq!(stats["ok"], false, "{line}");
    assert!(
        stats["error"].as_str().is_some_and(|e| e.contains("limit")),
        "{line}"
    );
    assert!(
        stats["prompt_tokens"].as_u64().is_some_and(|n| n > 0),
        "{line}"
    );
}

#[cfg(feature = "runtime")]
#[test]
fn generate_warns_when_a_spec_has_no_worked_examples() {
    if skip_model_test("generate_warns_when_a_spec_has_no_worked_examples") {
        return;
    }
    let f = Fixture::new();
    let schema = f.write(
        "weather.json",
        r#"{"type": "object", "properties": {"city": {"enum": ["paris", "rome"]}}, "required": ["city"]}"#,
    );
    let args = |extra: &'static str| {
        vec![
            "generate".to_string(),
            "--spec".into(),
            path_str(&schema).to_string(),
            "--model".into(),
            "smollm2-135m".into(),
            "--no-prefix-cache".into(),
            extra.into(),
            "weather in rome".into(),
        ]
    };
    let with_warning = args("--compact");
    let r = run_ok(
        &with_warning.iter().map(String::as_str).collect::<Vec<_>>(),
        None,
    );
    assert!(r.stderr.contains("no worked examples"), "{}", r.stderr);
    let silenced = args("--no-examples");
    let r = run_ok(
        &silenced.iter().map(String::as_str).collect::<Vec<_>>(),
        None,
    );
    assert!(!r.stderr.contains("no worked examples"), "{}", r.stderr);
}
