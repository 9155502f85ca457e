//! Hostile inputs and lost output.

use super::*;

#[test]
fn compile_out_replaces_the_set_whole_or_not_at_all() {
    let f = Fixture::new();
    let before = artifact_set(&f.spec_dir());
    let mut other = person_schema();
    other["properties"]["email"] = json!({"type": "string"});
    let other = f.write("other.json", &other.to_string());
    let compile_other = || run(&["compile", path_str(&other), "-o", &f.spec()], None);

    // A grammar file that cannot be replaced (a directory there): nothing changes. (A
    // failure during the renames is undone too: see the unit test in src/artifacts.rs.)
    let blocker = f.spec_dir().join("shorthand.gbnf");
    std::fs::remove_file(&blocker).expect("remove gbnf");
    std::fs::create_dir(&blocker).expect("gbnf as a directory");
    std::fs::write(blocker.join("keep"), "x").expect("non-empty");
    let r = compile_other();
    assert_eq!(r.code, 1, "{}", r.stderr);
    assert!(r.stderr.contains("it is a directory"), "{}", r.stderr);
    let now: Vec<_> = artifact_set_without_gbnf(&f.spec_dir());
    assert_eq!(now, before[..3].to_vec(), "the previous set is intact");
    assert!(
        leftovers(f.dir.path()).is_empty(),
        "{:?}",
        leftovers(f.dir.path())
    );

    // A schema that fails to compile leaves the set as it was too.
    std::fs::remove_dir_all(&blocker).expect("remove blocker");
    std::fs::write(&blocker, &before[3].1).expect("restore gbnf");
    let bad = f.write(
        "bad.json",
        r##"{"type": "object", "properties": {"a": {"$ref": "#/nope"}}}"##,
    );
    let r = run(&["compile", path_str(&bad), "-o", &f.spec()], None);
    assert_eq!(r.code, 1, "{}", r.stderr);
    assert_eq!(artifact_set(&f.spec_dir()), before);

    // Success replaces every file; other files in the directory are kept.
    f.write("spec/notes.txt", "mine");
    let r = compile_other();
    assert_eq!(r.code, 0, "{}", r.stderr);
    let after = artifact_set(&f.spec_dir());
    assert!(after[0].1.contains("email") && after[1].1.contains("email"));
    assert!(f.spec_dir().join("notes.txt").is_file());
    assert!(leftovers(f.dir.path()).is_empty());

    // A new directory (and its parents) appears with the whole set.
    let fresh = f.path("a/b/new");
    run_ok(
        &["compile", path_str(&f.schema()), "-o", path_str(&fresh)],
        None,
    );
    assert_eq!(artifact_set(&fresh), before);

    // -o given a file is a clear error, and the file is untouched.
    let file = f.write("plain.txt", "hello");
    let r = run(
        &["compile", path_str(&f.schema()), "-o", path_str(&file)],
        None,
    );
    assert_eq!(r.code, 1);
    assert!(
        r.stderr.contains("this is a file; -o takes the directory"),
        "{}",
        r.stderr
    );
    assert_eq!(std::fs::read_to_string(&file).expect("read"), "hello");
}

#[test]
fn jsonl_over_long_line_is_a_bad_record_and_the_run_goes_on() {
    let f = Fixture::new();
    let good = good_people()[1].to_string();
    let long = json!({"name": "x".repeat(500)}).to_string();
    let input = format!("{good}\n{long}\n{good}\n");
    let args = [
        "compress",
        "--spec",
        &f.spec(),
        "--jsonl",
        "--max-line",
        "100",
    ];
    let r = run(&[&args[..], &["--keep-going"]].concat(), Some(&input));
    assert_eq!(r.code, 1, "{}", r.stderr);
    assert_eq!(r.stdout.lines().count(), 2, "{}", r.stdout);
    let reports = stderr_records(&r.stderr);
    assert_eq!(reports.len(), 1, "{}", r.stderr);
    assert_eq!(reports[0]["line"], 2);
    let message = reports[0]["error"].as_str().expect("error");
    assert!(
        message.contains(&format!(
            "({} bytes) is longer than the limit of 100 bytes",
            long.len()
        )),
        "{message}"
    );
    // Without --keep-going the run stops there, naming the line.
    let r = run(&args, Some(&input));
    assert_eq!(r.code, 1);
    assert!(
        r.stderr
            .contains("<stdin>:2: the line is longer than the limit"),
        "{}",
        r.stderr
    );
    // The same limit applies to expand; sizes take K/M/G.
    let r = run(
        &[
            "expand",
            "--spec",
            &f.spec(),
            "--jsonl",
            "--keep-going",
            "--max-line",
            "1K",
        ],
        Some(&format!("\"{}\"\n", "x".repeat(2000))),
    );
    assert!(
        r.stderr.contains("longer than the limit of 1 KiB"),
        "{}",
        r.stderr
    );
    let r = run(&[&args[..4], &["--max-line", "0"]].concat(), Some(&input));
    assert_eq!(r.code, 2, "{}", r.stderr);
}

/// `head -c 3000000000 /dev/zero | dss compress --spec viz --jsonl` aborted on memory: a
/// line past the default limit (64 MiB) is now one bad record, never held in memory.
#[test]
fn jsonl_endless_line_is_a_record_error_not_an_abort() {
    let f = Fixture::new();
    let mut child = spawn_piped(&["compress", "--spec", &f.spec(), "--jsonl", "--keep-going"]);
    let mut stdin = child.stdin.take().expect("stdin");
    let good = good_people()[1].to_string();
    let writer = std::thread::spawn(move || {
        let zeros = vec![0u8; 1 << 20];
        for _ in 0..70 {
            stdin.write_all(&zeros).expect("write zeros");
        }
        stdin
            .write_all(format!("\n{good}\n").as_bytes())
            .expect("write");
    });
    let out = child.wait_with_output().expect("wait");
    writer.join().expect("writer");
    assert_eq!(out.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&out.stderr);
    let reports = stderr_records(&stderr);
    assert_eq!(reports.len(), 1, "{stderr}");
    assert_eq!(reports[0]["line"], 1);
    assert!(
        reports[0]["error"]
            .as_str()
            .is_some_and(|e| e.contains("(73400320 bytes) is longer than the limit of 64 MiB")),
        "{stderr}"
    );
    assert_eq!(String::from_utf8_lossy(&out.stdout).lines().count(), 1);
}

/// With `--keep-going`, stderr's reader going away lost the rest of the run (68 of 500 good
/// records, exit 1): reports that cannot be written are lost, records are not.
#[test]
fn keep_going_survives_stderr_going_away() {
    let f = Fixture::new();
    let (good, bad, input) = mixed_records();
    assert!(good > 0 && bad > 0);
    let mut child = spawn_piped(&["compress", "--spec", &f.spec(), "--jsonl", "--keep-going"]);
    drop(child.stderr.take()); // nobody reads stderr any more
    let mut stdin = child.stdin.take().expect("stdin");
    let writer = std::thread::spawn(move || stdin.write_all(input.as_bytes()));
    let out = child.wait_with_output().expect("wait");
    writer
        .join()
        .expect("writer")
        .expect("dss read all its input");
    assert_eq!(out.status.code(), Some(1), "some records failed");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(stdout.lines().count(), good, "every good record is written");
}

/// Output that cannot be written is never exit 0: a closed stdout, a full disk and a reader
/// that went away are exit 3; `> /dev/null` is not mistaken for a closed stdout.
#[test]
fn failed_writes_to_stdout_have_their_own_exit_code() {
    let f = Fixture::new();
    let doc = good_people()[0].to_string();
    let input = f.write("doc.json", &doc);
    let compress = ["compress", "--spec", &f.spec(), path_str(&input)];

    // Closed (`>&-`): Rust's runtime would silently put /dev/null there.
    let out = Command::new("sh")
        .arg("-c")
        .arg("exec \"$0\" \"$@\" >&-")
        .arg(DSS)
        .args(compress)
        .output()
        .expect("run sh");
    assert_eq!(out.status.code(), Some(3), "{out:?}");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("standard output is closed"), "{stderr}");

    // A full disk.
    if Path::new("/dev/full").exists() {
        let full = std::fs::OpenOptions::new()
            .write(true)
            .open("/dev/full")
            .expect("/dev/full");
        let out = Command::new(DSS)
            .args(compress)
            .stdout(full)
            .output()
            .expect("run dss");
        assert_eq!(out.status.code(), Some(3));
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(
            stderr.contains("cannot write to standard output"),
            "{stderr}"
        );
    }

    // The reader went away before the first record: exit 3, quietly.
    let mut child = spawn_piped(&["compress", "--spec", &f.spec(), "--jsonl"]);
    drop(child.stdout.take());
    let mut stdin = child.stdin.take().expect("stdin");
    let (_, _, records) = mixed_records();
    let writer = std::thread::spawn(move || {
        let _ = stdin.write_all(records.as_bytes());
    });
    let out = child.wait_with_output().expect("wait");
    writer.join().expect("writer");
    assert_eq!(out.status.code(), Some(3), "{out:?}");

    // /dev/null on purpose is fine.
    let out = Command::new(DSS)
        .args(compress)
        .stdout(Stdio::null())
        .output()
        .expect("run dss");
    assert_eq!(out.status.code(), Some(0), "{out:?}");
}

/// `expand` read 128 levels of nesting, `compress` (serde_json) only 127: expand wrote JSON
/// that compress rejected.
#[test]
fn expand_and_compress_agree_on_nesting_depth() {
    let f = Fixture::new();
    let schema = f.write(
        "nested.json",
        &json!({"$defs": {"a": {"type": "array", "items": {"$ref": "#/$defs/a"}}}, "$ref": "#/$defs/a"})
            .to_string(),
    );
    let spec = path_str(&schema);
    let nested = |n: usize| format!("{}{}", "[".repeat(n), "]".repeat(n));
    let c = run_ok(&["compress", "--spec", spec], Some(&nested(127)));
    let e = run_ok(&["expand", "--spec", spec, "--compact"], Some(&c.stdout));
    assert_eq!(e.stdout.trim(), nested(127));
    let c = run(&["compress", "--spec", spec], Some(&nested(128)));
    assert_eq!(c.code, 1, "{}", c.stderr);
    let e = run(&["expand", "--spec", spec], Some(&nested(128)));
    assert_eq!(e.code, 1, "{}", e.stdout);
    assert!(
        e.stderr.contains("at most 127 levels of nesting"),
        "{}",
        e.stderr
    );
}

/// A `$ref` to a standard metaschema worked only for the schema's own draft.
#[test]
fn every_shipped_metaschema_resolves_from_every_draft() {
    let f = Fixture::new();
    let metas = [
        "http://json-schema.org/draft-04/schema#",
        "http://json-schema.org/draft-06/schema#",
        "http://json-schema.org/draft-07/schema#",
        "https://json-schema.org/draft/2019-09/schema",
        "https://json-schema.org/draft/2020-12/schema",
    ];
    for dialect in metas {
        for meta in metas {
            let schema = json!({"$schema": dialect, "properties": {"s": {"$ref": meta}}});
            let path = f.write("meta.json", &schema.to_string());
            let args = ["compress", "--spec", path_str(&path)];
            let ok = run(&args, Some(r#"{"s": {"type": "string"}}"#));
            assert_eq!(ok.code, 0, "{dialect} -> {meta}: {}", ok.stderr);
            let bad = run(&args, Some(r#"{"s": {"type": 5}}"#));
            assert_eq!(bad.code, 1, "{dialect} -> {meta}: {}", bad.stdout);
            assert!(
                bad.stderr.contains("/s/type"),
                "{dialect} -> {meta}: {}",
                bad.stderr
            );
        }
    }
}

/// `kyeword:` in a notation file was silently ignored.
#[test]
fn misspelled_notation_keys_are_errors_with_a_suggestion() {
    let f = Fixture::new();
    let yaml = run_ok(&["init", path_str(&f.schema())], None).stdout;
    let (i, _) = yaml.match_indices("mode:").nth(1).expect("a second field");
    let bad = format!("{}kyeword: nm\n    {}", &yaml[..i], &yaml[i..]);
    let line = bad[..i].lines().count();
    let path = f.write("bad.yaml", &bad);
    let r = run(
        &[
            "compile",
            path_str(&f.schema()),
            "--notation",
            path_str(&path),
        ],
        None,
    );
    assert_eq!(r.code, 1, "{}", r.stderr);
    assert!(
        r.stderr.contains(&format!("bad.yaml:{line}:")),
        "line {line}: {}",
        r.stderr
    );
    assert!(r.stderr.contains("unknown field `kyeword`"), "{}", r.stderr);
    assert!(
        r.stderr.contains("(did you mean `keyword`?)"),
        "{}",
        r.stderr
    );
    let root = f.write("root.yaml", &yaml.replacen("\nroot: ", "\nrooot: ", 1));
    let r = run(
        &["init", path_str(&f.schema()), "--notation", path_str(&root)],
        None,
    );
    assert!(r.stderr.contains("did you mean `root`?"), "{}", r.stderr);
}

/// `--spec data.json` took a data document as an accept-all schema without a word.
#[test]
fn a_schema_without_keywords_gets_a_warning() {
    let f = Fixture::new();
    let data = f.write("data.json", &good_people()[0].to_string());
    let r = run_ok(
        &["compress", "--spec", path_str(&data)],
        Some("{\"any\": 1}"),
    );
    assert!(
        r.stderr.contains("warning:") && r.stderr.contains("is this a data document?"),
        "{}",
        r.stderr
    );
    for schema in ["{}", "true", r#"{"title": "t"}"#] {
        let s = f.write("s.json", schema);
        let r = run_ok(&["compress", "--spec", path_str(&s)], Some("1"));
        assert!(!r.stderr.contains("warning"), "{schema}: {}", r.stderr);
    }
}

/// Messages quoted the whole instance: 10 MB of stderr for a 10 MB string.
#[test]
fn long_values_in_messages_are_shortened() {
    let f = Fixture::new();
    let int = f.write("int.json", r#"{"type": "integer"}"#);
    let big = json!("a".repeat(1_000_000)).to_string();
    let r = run(&["compress", "--spec", path_str(&int)], Some(&big));
    assert_eq!(r.code, 1);
    assert!(r.stderr.len() < 400, "{} bytes of stderr", r.stderr.len());
    assert!(
        r.stderr.contains("…\" (1000000 chars) is not of type"),
        "{}",
        r.stderr
    );
    let r = run(
        &[
            "compress",
            "--spec",
            path_str(&int),
            "--jsonl",
            "--keep-going",
        ],
        Some(&format!("{big}\n")),
    );
    assert!(r.stderr.len() < 400, "{}", r.stderr.len());
    assert!(stderr_records(&r.stderr)[0]["error"]
        .as_str()
        .is_some_and(|e| e.contains("(1000000 chars)")));
    // A long array, quoted as JSON, keeps its head and the message's tail.
    let array = json!(vec![1; 200_000]).to_string();
    let r = run(&["compress", "--spec", path_str(&int)], Some(&array));
    assert!(r.stderr.len() < 3000, "{}", r.stderr.len());
    assert!(r.stderr.contains("chars left out"), "{}", r.stderr);
    assert!(
        r.stderr.trim_end().ends_with("(keyword `type`)"),
        "{}",
        r.stderr
    );
}

/// The empty pointer printed as `at  `.
#[test]
fn the_root_pointer_is_named() {
    let f = Fixture::new();
    let schema = f.write("ref.json", r##"{"$ref": "#/nope"}"##);
    let r = run(&["compress", "--spec", path_str(&schema)], Some("1"));
    assert_eq!(r.code, 1);
    assert!(
        r.stderr.contains("schema at the document root:"),
        "{}",
        r.stderr
    );
    assert!(!r.stderr.contains("at  "), "{}", r.stderr);
    let remote = f.write("remote.json", r#"{"$ref": "http://example.com/a.json"}"#);
    let r = run(&["compress", "--spec", path_str(&remote)], Some("1"));
    assert!(
        r.stderr.contains("at the document root is not fetched"),
        "{}",
        r.stderr
    );
}

/// `dss tokens` on one 10 MB word took 34 s (100 MB aborted): such a document is an error
/// of its own, quickly, and the other documents are counted.
#[test]
fn tokens_reports_a_giant_word_instead_of_stalling() {
    let f = Fixture::new();
    let docs = f.path("docs");
    std::fs::create_dir(&docs).expect("mkdir");
    let mut word = good_people()[0].clone();
    word["name"] = json!("a".repeat(3 << 20));
    std::fs::write(docs.join("word.json"), word.to_string()).expect("write");
    std::fs::write(docs.join("ok.json"), good_people()[1].to_string()).expect("write");
    let start = std::time::Instant::now();
    let r = run(
        &[
            "tokens",
            "--spec",
            &f.spec(),
            "--format",
            "json",
            path_str(&docs),
        ],
        None,
    );
    assert!(start.elapsed().as_secs() < 30, "{:?}", start.elapsed());
    assert_eq!(r.code, 1, "{}", r.stderr);
    assert!(r.stderr.contains("word.json: a run of"), "{}", r.stderr);
    assert!(r.stderr.contains("without a word break"), "{}", r.stderr);
    assert_eq!(parse_json(&r.stdout)["documents"], 1, "{}", r.stdout);
}
