//! End-to-end tests of the `dss` binary: what every test shares here, the tests in
//! one module per command or theme.

use dss_compiler::codec::json_eq;

use serde_json::{json, Value};

use std::io::Write;

use std::path::{Path, PathBuf};

use std::process::{Command, Output, Stdio};

const DSS: &str = env!("CARGO_BIN_EXE_dss");

const WORKSPACE: &str = env!("CARGO_MANIFEST_DIR");

/// A small schema: an object with required and optional fields, an enum, a nested array.
fn person_schema() -> Value {
    json!({
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "title": "Person",
        "type": "object",
        "properties": {
            "name": {"type": "string", "description": "Full name"},
            "age": {"type": "integer", "minimum": 0},
            "role": {"enum": ["admin", "user", "guest"]},
            "tags": {"type": "array", "items": {"type": "string"}}
        },
        "required": ["name"],
        "additionalProperties": false
    })
}

fn good_people() -> Vec<Value> {
    vec![
        json!({"name": "Ada Lovelace", "age": 36, "role": "admin", "tags": ["math", "poetry"]}),
        json!({"name": "Bob"}),
        json!({"name": "Eve \"the spy\"\nline two", "tags": []}),
    ]
}

struct Run {
    code: i32,
    stdout: String,
    stderr: String,
}

fn run(args: &[&str], stdin: Option<&str>) -> Run {
    run_in(args, stdin, &[])
}

/// `dss args`, given `stdin` (none: empty) and the environment variables `env`.
fn run_in(args: &[&str], stdin: Option<&str>, env: &[(&str, &str)]) -> Run {
    let mut child = Command::new(DSS)
        .args(args)
        .envs(env.iter().copied())
        .stdin(if stdin.is_some() {
            Stdio::piped()
        } else {
            Stdio::null()
        })
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("cannot start dss");
    // Feed stdin from a thread (no deadlock on big outputs); dss may exit before reading
    // all of it (e.g. on an error), so a broken pipe is not a test failure.
    let writer = stdin.map(|input| {
        let mut pipe = child.stdin.take().expect("stdin is piped");
        let input = input.to_string();
        std::thread::spawn(move || match pipe.write_all(input.as_bytes()) {
            Err(e) if e.kind() != std::io::ErrorKind::BrokenPipe => panic!("write stdin: {e}"),
            _ => {}
        })
    });
    let Output {
        status,
        stdout,
        stderr,
    } = child.wait_with_output().expect("wait for dss");
    if let Some(w) = writer {
        w.join().expect("stdin writer");
    }
    Run {
        code: status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&stdout).into_owned(),
        stderr: String::from_utf8_lossy(&stderr).into_owned(),
    }
}

/// `dss args` started with stdin, stdout and stderr piped (for tests that feed or close them).
fn spawn_piped(args: &[&str]) -> std::process::Child {
    Command::new(DSS)
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start dss")
}

/// `dss tokens --spec SPEC PATH --format FORMAT`, then `more`.
fn tokens_args<'a>(
    spec: &'a str,
    path: &'a Path,
    format: &'a str,
    more: &[&'a str],
) -> Vec<&'a str> {
    let mut args = vec!["tokens", "--spec", spec, path_str(path), "--format", format];
    args.extend_from_slice(more);
    args
}

fn run_ok(args: &[&str], stdin: Option<&str>) -> Run {
    let r = run(args, stdin);
    assert_eq!(
        r.code, 0,
        "dss {args:?} failed (exit {})\nstderr:\n{}",
        r.code, r.stderr
    );
    r
}

fn path_str(p: &Path) -> &str {
    p.to_str().expect("temp paths are UTF-8")
}

/// `tools` written to `tools.json` in `dir`: its path.
fn tools_file(dir: &tempfile::TempDir, tools: &Value) -> PathBuf {
    let path = dir.path().join("tools.json");
    std::fs::write(&path, tools.to_string()).expect("write");
    path
}

/// A tempdir with the person schema written to schema.json and compiled into spec/.
struct Fixture {
    dir: tempfile::TempDir,
}

impl Fixture {
    fn new() -> Self {
        let dir = tempfile::tempdir().expect("tempdir");
        let f = Fixture { dir };
        std::fs::write(f.schema(), person_schema().to_string()).expect("write schema");
        run_ok(
            &[
                "compile",
                path_str(&f.schema()),
                "-o",
                path_str(&f.spec_dir()),
            ],
            None,
        );
        f
    }
    fn path(&self, name: &str) -> PathBuf {
        self.dir.path().join(name)
    }
    fn schema(&self) -> PathBuf {
        self.path("schema.json")
    }
    fn spec_dir(&self) -> PathBuf {
        self.path("spec")
    }
    fn write(&self, name: &str, text: &str) -> PathBuf {
        let p = self.path(name);
        std::fs::write(&p, text).expect("write test file");
        p
    }
    fn spec(&self) -> String {
        path_str(&self.spec_dir()).to_string()
    }
}

/// Does `text` contain `prefix` directly followed by `<digits>:<digits>:`?
fn has_line_col_after(text: &str, prefix: &str) -> bool {
    text.match_indices(prefix).any(|(i, _)| {
        let rest = &text[i + prefix.len()..];
        let mut parts = rest.splitn(3, ':');
        let line = parts.next().unwrap_or("");
        let col = parts.next().unwrap_or("");
        parts.next().is_some()
            && !line.is_empty()
            && line.chars().all(|c| c.is_ascii_digit())
            && !col.is_empty()
            && col.chars().all(|c| c.is_ascii_digit())
    })
}

fn stderr_records(stderr: &str) -> Vec<Value> {
    stderr
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| {
            serde_json::from_str(l)
                .unwrap_or_else(|e| panic!("stderr line is not JSON ({e}): {l}\nstderr:\n{stderr}"))
        })
        .collect()
}

/// The five artifacts of `compile -o`, by name, with their contents.
fn artifact_set(dir: &Path) -> Vec<(String, String)> {
    [
        "spec.json",
        "shorthand.bnf",
        "shorthand.pest",
        "shorthand.gbnf",
        "shorthand.lark",
    ]
    .iter()
    .map(|n| {
        let text = std::fs::read_to_string(dir.join(n))
            .unwrap_or_else(|e| panic!("{}: {e}", dir.join(n).display()));
        (n.to_string(), text)
    })
    .collect()
}

/// Entries of `dir` whose name holds `dss-tmp` (the staging directories of `compile -o`).
fn leftovers(dir: &Path) -> Vec<String> {
    std::fs::read_dir(dir)
        .expect("read dir")
        .map(|e| e.expect("entry").file_name().to_string_lossy().into_owned())
        .filter(|n| n.contains("dss-tmp"))
        .collect()
}

fn artifact_set_without_gbnf(dir: &Path) -> Vec<(String, String)> {
    let mut set = Vec::new();
    for n in ["spec.json", "shorthand.bnf", "shorthand.pest"] {
        let text = std::fs::read_to_string(dir.join(n)).expect("artifact");
        set.push((n.to_string(), text));
    }
    set
}

/// 500 records, every fifth bad: `(good, bad, input)`.
fn mixed_records() -> (usize, usize, String) {
    let (mut good, mut bad, mut input) = (0, 0, String::new());
    for i in 0..500 {
        if i % 5 == 4 {
            bad += 1;
            input.push_str("{\"age\": \"old\"}\n");
        } else {
            good += 1;
            input.push_str(&format!("{{\"name\": \"n{i}\"}}\n"));
        }
    }
    (good, bad, input)
}

/// A person with every field set.
fn verbose_person() -> Value {
    json!({
        "name": "Grace Hopper",
        "age": 85,
        "role": "admin",
        "tags": ["navy", "cobol", "compilers", "nanoseconds"]
    })
}

/// Write `docs` as `dir/p{i}.json` under the fixture.
fn write_docs(f: &Fixture, dir: &str, docs: &[Value]) -> PathBuf {
    let d = f.path(dir);
    std::fs::create_dir_all(&d).expect("mkdir");
    for (i, doc) in docs.iter().enumerate() {
        std::fs::write(d.join(format!("p{i}.json")), doc.to_string()).expect("write doc");
    }
    d
}

fn parse_json(text: &str) -> Value {
    serde_json::from_str(text).unwrap_or_else(|e| panic!("not JSON ({e}):\n{text}"))
}

const FORMAT_KEYS: [&str; 5] = ["pretty", "compact", "yaml", "toon", "dss"];

fn csv_rows(stdout: &str) -> Vec<Vec<String>> {
    stdout
        .lines()
        .map(|l| l.split(',').map(str::to_string).collect())
        .collect()
}

/// The bundled viz spec compiled into a tempdir, and the bundled viz examples folder (its
/// documents compress well: the README's Appendix A is 80 dss tokens for 169 compact).
fn viz_corpus() -> (tempfile::TempDir, String, PathBuf) {
    let schema = Path::new(WORKSPACE).join("specs/viz.schema.json");
    let examples = Path::new(WORKSPACE).join("examples/viz");
    let dir = tempfile::tempdir().expect("tempdir");
    let spec = dir.path().join("viz");
    run_ok(&["compile", path_str(&schema), "-o", path_str(&spec)], None);
    let spec = path_str(&spec).to_string();
    (dir, spec, examples)
}

/// `dss generate` on the viz spec with the small model, then `rest`: the model tests'
/// command line.
#[cfg(feature = "runtime")]
fn viz_generate<'a>(rest: &[&'a str]) -> Vec<&'a str> {
    const VIZ: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/grammars/viz");
    let mut args = vec!["generate", "--spec", VIZ, "--model", "smollm2-135m"];
    // A loaded test machine may take longer than the default budget: these tests check
    // what is written, not how fast (the budget's own test sets its own).
    if !rest.contains(&"--timeout") {
        args.extend_from_slice(&["--timeout", "600"]);
    }
    args.extend_from_slice(rest);
    args
}

/// Whether `test`, which runs the small model, is skipped (`DSS_SKIP_MODEL_TESTS`; recorded
/// by `dss_data::skip_model_test`, a failure under `CI=true`).
#[cfg(feature = "runtime")]
fn skip_model_test(test: &str) -> bool {
    dss_data::skip_model_test(test, "smollm2-135m")
}

/// `dss eval import apimix` on the ATIS fixture into `dir/atis`; returns the suite folder.
fn import_atis(dir: &Path) -> PathBuf {
    let source = Path::new(WORKSPACE)
        .join(dss_data::FIXTURES_DIR)
        .join("APIMixATIS");
    let suite = dir.join("atis");
    let r = run_ok(
        &[
            "eval",
            "import",
            "apimix",
            path_str(&source),
            "-o",
            path_str(&suite),
        ],
        None,
    );
    assert!(r.stdout.starts_with("imported "), "{}", r.stdout);
    assert!(r.stdout.contains("repairs: none"), "{}", r.stdout);
    for f in ["suite.yaml", "schema.json", "catalogs.yaml", "cases.jsonl"] {
        assert!(suite.join(f).is_file(), "{f}");
    }
    suite
}

/// The viz spec compiled into a tempdir: (the dir, the spec path).
fn viz_spec() -> (tempfile::TempDir, String) {
    let dir = tempfile::tempdir().expect("tempdir");
    let spec = dir.path().join("viz");
    let schema = Path::new(WORKSPACE).join("specs/viz.schema.json");
    run_ok(&["compile", path_str(&schema), "-o", path_str(&spec)], None);
    let spec = path_str(&spec).to_string();
    (dir, spec)
}

/// The person fixture's JSONL with a good line, an invalid one, a blank one, one that is not
/// JSON and a good one.
fn first_hour_mixed() -> String {
    format!(
        "{}\n{}\n\n{}\n{}\n",
        good_people()[0],
        json!({"name": "x", "age": -3}),
        "{not json",
        good_people()[1],
    )
}

/// Three OpenAI tools: one with an enum, one with a `$ref` into its own `$defs`, one
/// without parameters.
fn openai_tools() -> Value {
    json!([
        {"type": "function", "function": {"name": "get_weather", "description": "Current weather in a city",
            "parameters": {"type": "object", "properties": {
                "city": {"type": "string"}, "unit": {"enum": ["celsius", "fahrenheit"]}},
                "required": ["city"], "additionalProperties": false}}},
        {"type": "function", "function": {"name": "book", "description": "Book a table",
            "parameters": {"type": "object", "$defs": {"When": {"type": "object",
                "properties": {"day": {"type": "string"}, "hour": {"type": "integer"}},
                "required": ["day", "hour"], "additionalProperties": false}},
                "properties": {"at": {"$ref": "#/$defs/When"}, "people": {"type": "integer"}},
                "required": ["at"], "additionalProperties": false}}},
        {"type": "function", "function": {"name": "get_time"}}
    ])
}

fn tool_calls() -> Value {
    json!([
        {"get_weather": {"city": "Paris", "unit": "celsius"}},
        {"book": {"at": {"day": "friday", "hour": 20}, "people": 4}},
        {"get_time": {}}
    ])
}

#[cfg(feature = "runtime")]
fn run_with_env(args: &[&str], env: &[(&str, &str)]) -> Run {
    run_in(args, None, env)
}

mod codec;
mod eval;
mod expand;
mod first_use;
mod generate;
mod hostile;
mod prune;
mod stdin;
mod tokens;
mod tools;
