//! First use: error records, CRLF, completions, man, confirmations.

use super::*;

#[test]
fn jsonl_error_records_carry_pointer_keyword_and_message_apart() {
    let f = Fixture::new();
    let r = run(
        &["compress", "--spec", &f.spec(), "--jsonl", "--keep-going"],
        Some(&first_hour_mixed()),
    );
    assert_eq!(r.code, 1, "{}", r.stderr);
    assert_eq!(r.stdout.lines().count(), 2, "{}", r.stdout);
    let errors = stderr_records(&r.stderr);
    assert_eq!(errors.len(), 2, "{}", r.stderr);
    let invalid = &errors[0];
    assert_eq!(invalid["line"], 2, "{invalid}");
    assert_eq!(invalid["pointer"], "/age", "{invalid}");
    assert_eq!(invalid["keyword"], "minimum", "{invalid}");
    let message = invalid["message"].as_str().expect("message");
    assert!(
        message.contains("-3") && !message.contains("/age"),
        "{invalid}"
    );
    assert!(invalid["error"]
        .as_str()
        .is_some_and(|e| e.contains("/age")));
    let not_json = &errors[1];
    assert_eq!(not_json["line"], 4, "{not_json}");
    assert_eq!(not_json["position"], "1:2", "{not_json}");
    assert!(not_json.get("pointer").is_none(), "{not_json}");

    // expand: a syntax error has its place in the record's shorthand, expected and found.
    let bad = json!("Ada age -1").to_string();
    let r = run(
        &["expand", "--spec", &f.spec(), "--jsonl", "--keep-going"],
        Some(&format!("{bad}\n")),
    );
    assert_eq!(r.code, 1, "{}", r.stderr);
    let e = &stderr_records(&r.stderr)[0];
    assert_eq!(e["line"], 1, "{e}");
    assert!(
        e["position"].as_str().is_some_and(|p| p.starts_with("1:")),
        "{e}"
    );
    assert!(e["expected"].is_string() && e["found"].is_string(), "{e}");
}

#[test]
fn errors_inline_keeps_outputs_aligned_with_inputs() {
    let f = Fixture::new();
    let spec = f.spec();
    let inline = ["compress", "--spec", &spec, "--jsonl", "--errors", "inline"];
    let r = run(&inline, Some(&first_hour_mixed()));
    assert_eq!(
        r.code, 1,
        "any failed record still fails the run\n{}",
        r.stderr
    );
    assert!(r.stderr.is_empty(), "{}", r.stderr);
    let out: Vec<Value> = r
        .stdout
        .lines()
        .map(|l| serde_json::from_str(l).expect("each output line is JSON"))
        .collect();
    // One output line per non-blank input line, in order.
    assert_eq!(out.len(), 4, "{}", r.stdout);
    assert!(out[0].is_string() && out[3].is_string(), "{}", r.stdout);
    assert_eq!(out[1]["dss_error"]["line"], 2, "{}", r.stdout);
    assert_eq!(out[1]["dss_error"]["keyword"], "minimum", "{}", r.stdout);
    assert_eq!(out[2]["dss_error"]["line"], 4, "{}", r.stdout);
    // All good: exit 0, nothing inline.
    let good = format!("{}\n", good_people()[1]);
    let r = run_ok(&inline, Some(&good));
    assert!(!r.stdout.contains("dss_error"), "{}", r.stdout);
    // --errors needs --jsonl.
    assert_eq!(
        run(
            &["compress", "--spec", &f.spec(), "--errors", "inline"],
            Some("{}")
        )
        .code,
        2
    );
}

#[test]
fn expand_reads_windows_line_endings_and_names_invisible_characters() {
    let viz = Path::new(WORKSPACE).join("grammars/viz");
    let text = "chart bar\r\nfields:\r\n\"Sales\" sum\r\n";
    let r = run_ok(
        &["expand", "--spec", path_str(&viz), "--compact"],
        Some(text),
    );
    let v: Value = serde_json::from_str(&r.stdout).expect("JSON");
    assert_eq!(v["chart"], "bar", "{v}");
    for (bad, name) in [
        ("fields:\n\"Sales\"\u{a0}sum\n", "U+00A0 NO-BREAK SPACE"),
        (
            "fields:\n\"Sales\"\u{200b} sum\n",
            "U+200B ZERO WIDTH SPACE",
        ),
        ("\u{feff}fields:\n\"Sales\"\n", "U+FEFF"),
        ("fields:\n\"Sales\"\tsum\n", "U+0009 CHARACTER TABULATION"),
        ("fields:\r\"Sales\"\n", "U+000D CARRIAGE RETURN"),
    ] {
        let r = run(&["expand", "--spec", path_str(&viz)], Some(bad));
        assert_eq!(r.code, 1, "{bad:?}: {}", r.stdout);
        assert!(r.stderr.contains(name), "{bad:?}: {}", r.stderr);
    }
}

#[test]
fn completions_and_man_pages() {
    for shell in ["bash", "zsh", "fish", "elvish", "powershell"] {
        let r = run_ok(&["completions", shell], None);
        assert!(r.stdout.contains("dss"), "{shell}: {}", r.stdout);
        assert!(r.stdout.contains("compress"), "{shell}");
    }
    assert_eq!(run(&["completions", "tcsh"], None).code, 2);
    let r = run_ok(&["man"], None);
    assert!(r.stdout.contains(".TH dss 1"), "{}", r.stdout);
    assert!(r.stdout.contains("compress"), "{}", r.stdout);
    let r = run_ok(&["man", "expand"], None);
    assert!(r.stdout.contains(".TH dss-expand"), "{}", r.stdout);
    assert!(r.stdout.contains("no\\-validate"), "{}", r.stdout);
    let r = run(&["man", "nope"], None);
    assert_eq!(r.code, 1);
    assert!(r.stderr.contains("compile"), "{}", r.stderr);
}

#[test]
fn help_lists_the_documented_commands_and_no_build_paths() {
    let r = run_ok(&["--help"], None);
    for command in ["bench", "completions", "man", "tokens", "extract"] {
        assert!(
            r.stdout
                .lines()
                .any(|l| l.trim_start().starts_with(command)),
            "{command} in\n{}",
            r.stdout
        );
    }
    // No default names a path of the machine dss was built on (in any command's page).
    let commands: Vec<&str> = r
        .stdout
        .lines()
        .skip_while(|l| !l.starts_with("Commands:"))
        .skip(1)
        .take_while(|l| l.starts_with("  "))
        .filter_map(|l| l.split_whitespace().next())
        .filter(|c| *c != "help")
        .collect();
    assert!(commands.contains(&"compile"), "{commands:?}");
    for c in std::iter::once(None).chain(commands.iter().map(Some)) {
        let args: Vec<&str> = std::iter::once("man").chain(c.copied()).collect();
        let page = run_ok(&args, None).stdout;
        assert!(!page.contains(WORKSPACE), "{c:?}: {page}");
    }
}

#[test]
fn compile_says_what_it_wrote_and_what_the_grammar_costs() {
    let f = Fixture::new();
    let out = f.path("again");
    let r = run_ok(
        &["compile", path_str(&f.schema()), "-o", path_str(&out)],
        None,
    );
    let line = r.stderr.trim();
    assert_eq!(line.lines().count(), 1, "{}", r.stderr);
    assert!(
        line.starts_with(&format!("wrote {}", path_str(&out))),
        "{line}"
    );
    assert!(line.contains("tokens (o200k)"), "{line}");
    // The count is the one `dss tokens --grammar` gives.
    let t = run_ok(
        &[
            "tokens",
            "--spec",
            path_str(&out),
            "--grammar",
            "--format",
            "json",
        ],
        None,
    );
    let t: Value = serde_json::from_str(&t.stdout).expect("JSON");
    let n = t["grammar_bnf"].as_u64().expect("grammar_bnf");
    assert!(line.contains(&format!(" {n} tokens")), "{line} vs {n}");
    // Without -o the BNF goes to stdout and the cost to stderr.
    let r = run_ok(&["compile", path_str(&f.schema())], None);
    assert!(r.stdout.contains("::="), "{}", r.stdout);
    assert!(r.stderr.contains(&format!(" {n} tokens")), "{}", r.stderr);
}

#[test]
fn tokens_plot_confirms_and_skip_invalid_leaves_out_rejected_documents() {
    let f = Fixture::new();
    let dir = f.path("docs");
    std::fs::create_dir_all(&dir).expect("mkdir");
    std::fs::write(dir.join("good.json"), good_people()[0].to_string()).expect("write");
    std::fs::write(dir.join("bad.json"), json!({"name": 1}).to_string()).expect("write");
    let r = run(&["tokens", "--spec", &f.spec(), path_str(&dir)], None);
    assert_eq!(r.code, 1, "an invalid document fails the run by default");
    let svg = f.path("r.svg");
    let r = run_ok(
        &[
            "tokens",
            "--spec",
            &f.spec(),
            path_str(&dir),
            "--skip-invalid",
            "--format",
            "json",
            "--plot",
            path_str(&svg),
        ],
        None,
    );
    let v: Value = serde_json::from_str(&r.stdout).expect("JSON");
    assert_eq!(v["documents"], 1, "{v}");
    assert_eq!(v["skipped"], 1, "{v}");
    assert!(r.stderr.contains("bad.json"), "{}", r.stderr);
    assert!(
        r.stderr.contains(&format!("wrote {}", path_str(&svg))),
        "{}",
        r.stderr
    );
}

#[test]
fn init_lists_a_block_roots_fields_with_their_keywords() {
    let viz = Path::new(WORKSPACE).join("specs/viz.schema.json");
    let r = run_ok(&["init", path_str(&viz)], None);
    let yaml = &r.stdout;
    assert!(!yaml.contains("one `key:` line"), "{yaml}");
    // `chart bar` is written with its keyword under `root: block`.
    assert!(
        yaml.contains("- name: chart\n      mode: keyed\n      keyword: chart"),
        "{yaml}"
    );
    assert!(
        yaml.contains("- name: fields\n      mode: positional\n      keyword: fields"),
        "{yaml}"
    );
}
