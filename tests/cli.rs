//! End-to-end tests of the `dss` binary.

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

/// `dss prune --format lark` writes the pruned grammar as Lark, with the rules of its GBNF:
/// the chart the request names is in it, the others are not; `compile -o` writes
/// `shorthand.lark` as the library prints it.
#[test]
fn prune_writes_the_pruned_grammar_as_lark() {
    let spec = concat!(env!("CARGO_MANIFEST_DIR"), "/grammars/viz");
    let request = "average profit per month as a line chart";
    let gbnf = run_ok(&["prune", "--spec", spec, request], None).stdout;
    let lark = run_ok(
        &["prune", "--spec", spec, request, "--format", "lark"],
        None,
    )
    .stdout;
    for (name, _) in gbnf.lines().filter_map(|l| l.split_once(" ::= ")) {
        let name = name.replace('-', "_");
        let (rule, lexeme) = (
            format!("\nr_{}: ", name.to_ascii_lowercase()),
            format!("\nT_{}: ", name.to_ascii_uppercase()),
        );
        assert!(
            lark.contains(&rule) || lark.contains(&lexeme),
            "GBNF rule {name} is not in the Lark:\n{lark}"
        );
    }
    assert!(lark.contains("start: r_root"), "{lark}");
    assert!(lark.contains("\"line\""), "{lark}");
    assert!(!lark.contains("\"scatterplot\""), "{lark}");
    let f = Fixture::new();
    let spec = std::fs::read_to_string(f.spec_dir().join("spec.json")).expect("spec.json");
    let spec = dss_compiler::CompiledSpec::from_json(&spec).expect("loads");
    let lark = std::fs::read_to_string(f.spec_dir().join("shorthand.lark")).expect("lark");
    assert_eq!(lark, spec.grammar_lark().expect("prints"));
}

/// `dss prune` on a tool definition that leaves `additionalProperties` out (as OpenAI-style
/// function parameters do): the grammar offers no undeclared property, unless
/// `--allow-undeclared`; one that allows them explicitly keeps them.
#[test]
fn prune_offers_no_undeclared_property_a_tool_does_not_allow() {
    let dir = tempfile::tempdir().expect("tempdir");
    let tools = |extra: Value| {
        let mut params = json!({
            "type": "object",
            "properties": {
                "city": {"type": "string"},
                "unit": {"enum": ["celsius", "fahrenheit"]}
            },
            "required": ["city"]
        });
        if let (Some(p), Some(e)) = (params.as_object_mut(), extra.as_object()) {
            p.extend(e.clone());
        }
        json!([{"type": "function", "function": {"name": "get_weather", "parameters": params}}])
    };
    let implicit = dir.path().join("implicit.json");
    let explicit = dir.path().join("explicit.json");
    std::fs::write(&implicit, tools(json!({})).to_string()).expect("write");
    std::fs::write(
        &explicit,
        tools(json!({"additionalProperties": true})).to_string(),
    )
    .expect("write");
    let request = "the weather in Oslo in celsius";
    let prune = |spec: &Path, more: &[&str]| {
        let mut args = vec!["prune", "--spec", path_str(spec), request];
        args.extend_from_slice(more);
        run_ok(&args, None).stdout
    };
    let narrow = prune(&implicit, &[]);
    let allowed = prune(&implicit, &["--allow-undeclared"]);
    // Pruned either way: the unit nobody named is gone.
    for g in [&narrow, &allowed] {
        assert!(g.contains("celsius") && !g.contains("fahrenheit"), "{g}");
    }
    assert!(!narrow.contains("-more"), "{narrow}");
    assert!(allowed.contains("-more"), "{allowed}");
    let explicit = prune(&explicit, &[]);
    assert!(explicit.contains("-more"), "{explicit}");
    // The published grammar keeps them.
    let out = dir.path().join("out");
    run_ok(
        &["compile", path_str(&implicit), "-o", path_str(&out)],
        None,
    );
    let published = std::fs::read_to_string(out.join("shorthand.gbnf")).expect("gbnf");
    assert!(published.contains("-more"), "{published}");
}

/// `dss prune --after LINES` prints the grammar of the rest of the document after lines
/// already written, with what they used consumed; lines that do not read are an error
/// that says where.
#[test]
fn prune_after_lines_prints_the_grammar_of_the_rest() {
    let dir = tempfile::tempdir().expect("tempdir");
    let tools = json!([{"type": "function", "function": {"name": "get_weather",
        "parameters": {"type": "object", "required": ["city"], "properties": {
            "city": {"type": "string"},
            "unit": {"enum": ["celsius", "fahrenheit"]}}}}}]);
    let path = tools_file(&dir, &tools);
    let request = "the weather in Oslo and in Bergen, in celsius";
    let spec = path_str(&path);
    let first = run_ok(&["prune", "--spec", spec, request], None).stdout;
    assert!(
        first.contains("Oslo") && first.contains("Bergen"),
        "{first}"
    );
    let after = |lines: &str| run(&["prune", "--spec", spec, request, "--after", lines], None);
    let rest = after("get_weather city \"Oslo\" unit celsius\n");
    assert_eq!(rest.code, 0, "{}", rest.stderr);
    // The city and the unit written are used up; the other city is left, and a second
    // call is offered for it (`Oslo and in Bergen` joins them) although the unit found
    // nothing more.
    assert!(rest.stdout.contains("Bergen"), "{}", rest.stdout);
    assert!(!rest.stdout.contains("Oslo"), "{}", rest.stdout);
    assert!(!rest.stdout.contains("celsius"), "{}", rest.stdout);
    assert!(
        rest.stdout.contains("root ::= (item-body"),
        "{}",
        rest.stdout
    );
    let done = after("get_weather city \"Oslo\" unit celsius\nget_weather city \"Bergen\"\n");
    assert!(done.stdout.contains("root ::= \"\""), "{}", done.stdout);
    let bad = after("get_wether Oslo\n");
    assert_ne!(bad.code, 0);
    assert!(bad.stderr.contains("--after"), "{}", bad.stderr);
}

/// A tool the request names is offered although nothing of it was found, beside a tool
/// kept for a number the request gives; a tool it neither names nor gives a value for is
/// not.
#[test]
fn prune_offers_the_tool_a_request_names() {
    let dir = tempfile::tempdir().expect("tempdir");
    let tools = json!([
        {"type": "function", "function": {"name": "search_web",
            "description": "Look up pages about a topic.",
            "parameters": {"type": "object", "required": ["query"], "properties": {
                "query": {"type": "string"},
                "engine": {"enum": ["alpha", "beta"]}}}}},
        {"type": "function", "function": {"name": "resize_photo",
            "description": "Scale a picture to a width in pixels.",
            "parameters": {"type": "object", "required": ["path"], "properties": {
                "path": {"type": "string"},
                "width": {"type": "integer"}}}}},
        {"type": "function", "function": {"name": "translate_text",
            "description": "Put a passage into another language.",
            "parameters": {"type": "object", "required": ["passage"], "properties": {
                "passage": {"type": "string"},
                "target": {"enum": ["fr", "de"]}}}}}]);
    let path = tools_file(&dir, &tools);
    let request = "Search the web for tide tables of Porto published after 2021";
    let grammar = run_ok(&["prune", "--spec", path_str(&path), request], None).stdout;
    assert!(grammar.contains("\"search_web "), "{grammar}");
    // Kept for the number, as before; the unnamed tool with nothing found is not offered.
    assert!(grammar.contains("\"resize_photo "), "{grammar}");
    assert!(!grammar.contains("translate_text"), "{grammar}");
}

/// After a call, numbers left that repeat the labels of the numbers it used (`3 kg … 7
/// kg`) ask for another call of their own; once they are used, nothing more is offered.
#[test]
fn prune_after_a_call_offers_another_where_numbers_repeat_their_labels() {
    let dir = tempfile::tempdir().expect("tempdir");
    let tools = json!([{"type": "function", "function": {"name": "shipping_cost",
        "parameters": {"type": "object", "required": ["weight_kg", "distance_km"],
            "properties": {
                "weight_kg": {"type": "number"},
                "distance_km": {"type": "integer"}}}}}]);
    let path = tools_file(&dir, &tools);
    let spec = path_str(&path);
    let request = "What would it cost to ship 3 kg over 120 km, and 7 kg over 40 km?";
    let after = |lines: &str| run_ok(&["prune", "--spec", spec, request, "--after", lines], None);
    let rest = after("shipping_cost (weight_kg 3 distance_km 120)\n").stdout;
    assert!(rest.contains("root ::= (item-body"), "{rest}");
    // Each number offered as a literal of its own or at the end of one (`"weight_kg 7"`).
    let offers = |n: &str| rest.contains(&format!("\"{n}\"")) || rest.contains(&format!(" {n}\""));
    assert!(offers("7") && offers("40"), "{rest}");
    let done = after(
        "shipping_cost (weight_kg 3 distance_km 120)\nshipping_cost (weight_kg 7 distance_km 40)\n",
    )
    .stdout;
    assert!(done.contains("root ::= \"\""), "{done}");
}

/// A request that names two tools, each with a value of its own, asks for a call of the
/// other after a call of one, and that line is a call of the tool named; a place named
/// nowhere near the other tool's name asks for nothing.
#[test]
fn prune_after_a_call_offers_the_other_tool_the_request_names() {
    let dir = tempfile::tempdir().expect("tempdir");
    let tools = json!([
        {"type": "function", "function": {"name": "get_weather",
            "description": "Current conditions in a city.",
            "parameters": {"type": "object", "required": ["city"], "properties": {
                "city": {"type": "string"},
                "unit": {"enum": ["celsius", "fahrenheit"]}}}}},
        {"type": "function", "function": {"name": "shipping_cost",
            "description": "Price of sending a parcel.",
            "parameters": {"type": "object", "required": ["weight_kg", "distance_km"],
                "properties": {
                    "weight_kg": {"type": "number"},
                    "distance_km": {"type": "integer"}}}}},
        {"type": "function", "function": {"name": "stock_quote",
            "description": "Latest price of a share.",
            "parameters": {"type": "object", "required": ["symbol"], "properties": {
                "symbol": {"type": "string"}}}}}]);
    let path = tools_file(&dir, &tools);
    let spec = path_str(&path);
    let after = |request: &str, lines: &str| {
        run_ok(&["prune", "--spec", spec, request, "--after", lines], None).stdout
    };
    let request = "How is the weather in Tromso, and what does shipping 6 kg over 250 km cost?";
    let grammar = run_ok(&["prune", "--spec", spec, request], None).stdout;
    assert!(grammar.contains("\"shipping_cost "), "{grammar}");
    let shipped = "shipping_cost (weight_kg 6 distance_km 250)\n";
    let rest = after(request, shipped);
    assert!(rest.contains("root ::= (item-body"), "{rest}");
    assert!(
        rest.contains("\"get_weather ") && rest.contains("Tromso"),
        "{rest}"
    );
    let done = after(request, &format!("{shipped}get_weather city \"Tromso\"\n"));
    assert!(done.contains("root ::= \"\""), "{done}");
    // The weather tool is not named: the town is where the parcel goes, not a call.
    let rest = after(
        "What does shipping 6 kg over 250 km to Tromso cost?",
        shipped,
    );
    assert!(rest.contains("root ::= \"\""), "{rest}");
    // Asked for by the weather tool's name alone, the line is a weather call: the quote
    // tool written, which could take `Madrid` too, is not offered again.
    let rest = after(
        "Get me a stock quote for TSLA; also, how is the weather in Madrid?",
        "stock_quote (symbol \"TSLA\")\n",
    );
    assert!(
        rest.contains("\"get_weather ") && rest.contains("Madrid"),
        "{rest}"
    );
    assert!(!rest.contains("\"stock_quote "), "{rest}");
}

/// `dss prune` and `dss extract` learn from the spec's worked examples as `dss generate`
/// does (here: that a clause names one call, so a clause's values go to the call that takes
/// the most of them and the call its words name), and `--no-examples` learns nothing.
#[test]
fn prune_learns_from_the_worked_examples_as_generate_does() {
    let dir = tempfile::tempdir().expect("tempdir");
    let call = |fields: &[&str]| {
        let props: serde_json::Map<String, Value> = fields
            .iter()
            .map(|f| {
                let values = if *f == "airline" {
                    json!(["delta", "united"])
                } else {
                    json!(["boston", "denver", "dallas"])
                };
                (f.to_string(), json!({ "enum": values }))
            })
            .collect();
        json!({"type": "object", "properties": props, "additionalProperties": false})
    };
    let calls = [
        ("flight", call(&["airline", "departure_city"])),
        ("day_name", call(&["airline", "departure_city"])),
        ("ground_service", call(&["city"])),
    ];
    let schema = json!({"type": "array", "maxItems": 3, "items": {"oneOf": calls
        .iter()
        .map(|(name, body)| json!({"type": "object", "properties": {*name: body},
            "required": [name], "additionalProperties": false}))
        .collect::<Vec<_>>()}});
    let schema_path = dir.path().join("schema.json");
    std::fs::write(&schema_path, schema.to_string()).expect("write schema");
    let spec_dir = dir.path().join("spec");
    run_ok(
        &["compile", path_str(&schema_path), "-o", path_str(&spec_dir)],
        None,
    );
    std::fs::write(
        spec_dir.join("examples.jsonl"),
        concat!(
            r#"{"request": "united flights from dallas, and taxis in denver", "output": "#,
            r#"[{"flight": {"airline": "united", "departure_city": "dallas"}}, "#,
            r#"{"ground_service": {"city": "denver"}}]}"#,
            "\n"
        ),
    )
    .expect("write examples");
    let spec = path_str(&spec_dir);
    let request = "what day does delta leave from boston";
    let learned = run_ok(&["prune", "--spec", spec, request], None).stdout;
    assert!(learned.contains("\"day_name \""), "{learned}");
    assert!(!learned.contains("\"flight \""), "{learned}");
    let plain = run_ok(&["prune", "--spec", spec, request, "--no-examples"], None).stdout;
    assert!(plain.contains("\"day_name \""), "{plain}");
    assert!(plain.contains("\"flight \""), "{plain}");
    // `dss extract` reports the same: the readings ruled out are not candidates.
    let a: Value =
        serde_json::from_str(&run_ok(&["extract", "--spec", spec, request], None).stdout)
            .expect("extract prints JSON");
    let at = |site: &str| {
        a["candidates"][site]
            .as_array()
            .cloned()
            .unwrap_or_default()
    };
    assert_eq!(at("/*/day_name/airline"), [json!("delta")], "{a}");
    assert!(at("/*/flight/airline").is_empty(), "{a}");
}

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

// ── Hostile inputs and lost output ─────────────────────────────────────────────

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

fn artifact_set_without_gbnf(dir: &Path) -> Vec<(String, String)> {
    let mut set = Vec::new();
    for n in ["spec.json", "shorthand.bnf", "shorthand.pest"] {
        let text = std::fs::read_to_string(dir.join(n)).expect("artifact");
        set.push((n.to_string(), text));
    }
    set
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

// ── dss tokens ───────────────────────────────────────────────────────────────

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

// ── dss model / dss generate (feature "runtime"; the small model) ─────────────

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

// ── dss eval ──────────────────────────────────────────────────────────────────

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
    let bad = run(&["eval", path_str(&suite), "--perturb", "typos"], None);
    assert_eq!(bad.code, 2, "{}", bad.stderr);
    assert!(bad.stderr.contains("typo:SEED"), "{}", bad.stderr);
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
    assert_eq!(keys(&v), ["suite", "items", "model", "results", "ner"]);
    assert_eq!(v["items"], 2);
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

// ── expand reads what the grammars say; numbers; tampered specs ─────────────────

/// The viz spec compiled into a tempdir: (the dir, the spec path).
fn viz_spec() -> (tempfile::TempDir, String) {
    let dir = tempfile::tempdir().expect("tempdir");
    let spec = dir.path().join("viz");
    let schema = Path::new(WORKSPACE).join("specs/viz.schema.json");
    run_ok(&["compile", path_str(&schema), "-o", path_str(&spec)], None);
    let spec = path_str(&spec).to_string();
    (dir, spec)
}

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

// ── First use: error records, CRLF, completions, man, confirmations ─────────────

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

// ── Tool definitions and the schema lint ────────────────────────────────────────

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

/// Every input form compiles, says what it read, and maps the same calls the same way.
#[test]
fn tool_definitions_compile_as_they_are() {
    let f = Fixture::new();
    let tools = openai_tools();
    let defs: Vec<Value> = tools
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["function"].clone())
        .collect();
    let anthropic: Vec<Value> = defs
        .iter()
        .map(|d| json!({"name": d["name"], "description": d["description"], "input_schema": d.get("parameters").cloned().unwrap_or(json!({"type": "object", "additionalProperties": false}))}))
        .collect();
    let mcp: Vec<Value> = defs
        .iter()
        .map(|d| json!({"name": d["name"], "inputSchema": d.get("parameters").cloned().unwrap_or(json!({"type": "object", "additionalProperties": false}))}))
        .collect();
    let forms = [
        (
            "openai.json",
            tools.clone(),
            "read an OpenAI tools array: 3 tools",
        ),
        (
            "anthropic.json",
            json!(anthropic),
            "read an Anthropic tools array: 3 tools",
        ),
        (
            "mcp.json",
            json!({"tools": mcp}),
            "read an MCP tools/list result: 3 tools",
        ),
        (
            "rpc.json",
            json!({"jsonrpc": "2.0", "id": 7, "result": {"tools": mcp}}),
            "read an MCP tools/list response: 3 tools",
        ),
    ];
    let calls = tool_calls().to_string();
    let mut texts = Vec::new();
    for (name, input, said) in forms {
        let path = f.write(name, &input.to_string());
        let out = f.path(&format!("{name}.spec"));
        let r = run_ok(&["compile", path_str(&path), "-o", path_str(&out)], None);
        assert!(r.stderr.contains(said), "{name}: {}", r.stderr);
        assert!(!r.stderr.contains("warning"), "{name}: {}", r.stderr);
        let text = run_ok(&["compress", "--spec", path_str(&out)], Some(&calls)).stdout;
        assert_eq!(text.lines().count(), 3, "{name}: one call per line\n{text}");
        let back = run_ok(
            &["expand", "--spec", path_str(&out), "--compact"],
            Some(&text),
        )
        .stdout;
        assert!(json_eq(&parse_json(&back), &tool_calls()), "{name}: {back}");
        texts.push(text);
    }
    assert!(texts.iter().all(|t| t == &texts[0]), "{texts:?}");
    assert!(
        // Tools take the named style: every argument is written with its keyword.
        texts[0].starts_with("get_weather city Paris unit celsius\n"),
        "{}",
        texts[0]
    );
    // The readable grammar documents each call by its tool's description.
    let bnf = run_ok(
        &["compile", path_str(&f.write("t.json", &tools.to_string()))],
        None,
    )
    .stdout;
    assert!(
        bnf.contains("Book a table") && bnf.contains("get_time"),
        "{bnf}"
    );
}

/// `--calls one`: a document is one call; a single function without its wrapper reads too.
#[test]
fn one_call_or_a_list_of_calls() {
    let f = Fixture::new();
    let tools = f.write("tools.json", &openai_tools().to_string());
    let out = f.path("one");
    let r = run_ok(
        &[
            "compile",
            path_str(&tools),
            "--calls",
            "one",
            "-o",
            path_str(&out),
        ],
        None,
    );
    assert!(r.stderr.contains("(one call)"), "{}", r.stderr);
    let call = json!({"book": {"at": {"day": "monday", "hour": 12}}});
    let text = run_ok(
        &["compress", "--spec", path_str(&out)],
        Some(&call.to_string()),
    )
    .stdout;
    assert_eq!(text.trim_end().lines().count(), 1, "{text}");
    let back = run_ok(
        &["expand", "--spec", path_str(&out), "--compact"],
        Some(&text),
    )
    .stdout;
    assert!(json_eq(&parse_json(&back), &call), "{back}");
    let r = run(
        &["compress", "--spec", path_str(&out)],
        Some(&tool_calls().to_string()),
    );
    assert_eq!(r.code, 1, "a list is not one call: {}", r.stdout);

    let single = f.write("f.json", &openai_tools()[0]["function"].to_string());
    let r = run_ok(&["compile", path_str(&single), "--calls", "one"], None);
    assert!(
        r.stderr
            .contains("read an OpenAI function: 1 tool (one call)"),
        "{}",
        r.stderr
    );
    let r = run(&["compile", path_str(&single), "--calls", "some"], None);
    assert_eq!(r.code, 2, "{}", r.stderr);
}

/// Tool definitions that cannot be read are errors naming where.
#[test]
fn bad_tool_definitions_name_where() {
    let f = Fixture::new();
    for (input, expected) in [
        (
            json!([{"type": "function", "function": {"description": "no name", "parameters": {}}}]),
            "/0/function",
        ),
        (
            json!([{"name": "a", "parameters": {}}, {"name": "a", "parameters": {}}]),
            "already the name of the tool at /0",
        ),
        (
            json!([{"name": "a", "parameters": {"type": "array"}}]),
            "/0/parameters: its parameters must be an object schema",
        ),
        (
            json!({"tools": [{"name": "a", "inputSchema": {"properties": {"x": {"type": "strin"}}}}]}),
            "/tools/0/inputSchema/properties/x/type: malformed \"type\"",
        ),
    ] {
        let path = f.write("bad.json", &input.to_string());
        let r = run(&["compile", path_str(&path)], None);
        assert_eq!(r.code, 1, "{input}");
        assert!(r.stderr.contains(expected), "{input}: {}", r.stderr);
        assert!(!r.stderr.contains("panicked"), "{}", r.stderr);
    }
}

/// Malformed keyword values are errors (with `--lenient`, warnings saying what the grammar
/// makes of them); near misses of keywords, data documents and tools given as a schema are
/// reported.
#[test]
fn the_schema_lint() {
    let f = Fixture::new();
    let bad = f.write(
        "bad.json",
        r#"{"type": "object", "properties": {"x": {"propertes": {}}, "y": {"type": "integr"}, "z": {"required": "a"}}}"#,
    );
    let r = run(&["compile", path_str(&bad)], None);
    assert_eq!(r.code, 1);
    assert!(
        r.stderr.contains("/properties/y/type")
            && r.stderr.contains("did you mean \"integer\"?")
            && r.stderr.contains("--lenient"),
        "{}",
        r.stderr
    );
    let r = run_ok(&["compile", "--lenient", path_str(&bad)], None);
    for said in [
        "/properties/x: unknown keyword \"propertes\"; did you mean \"properties\"?",
        "/properties/y/type: ignored malformed \"type\"",
        "so this schema admits every JSON type",
        "/properties/z/required: ignored malformed \"required\"",
        "so none of its properties is required",
    ] {
        assert!(r.stderr.contains(said), "{said}\n{}", r.stderr);
    }
    // The lenient spec ignores what it warned about, in its grammar and when compressing.
    let out = f.path("lenient");
    run_ok(
        &["compile", "--lenient", path_str(&bad), "-o", path_str(&out)],
        None,
    );
    run_ok(
        &["compress", "--spec", path_str(&out)],
        Some(r#"{"y": [1, "a"], "z": {}}"#),
    );

    let data = f.write("bob.json", r#"{"name": "Bob", "age": 3}"#);
    let r = run_ok(&["compile", path_str(&data)], None);
    assert!(
        r.stderr.contains("(root): ") && r.stderr.contains("is this a data document?"),
        "{}",
        r.stderr
    );
    let map = f.write(
        "map.json",
        r#"{"city": {"type": "string"}, "days": {"type": "integer"}}"#,
    );
    let r = run_ok(&["compile", path_str(&map)], None);
    assert!(
        r.stderr.contains("is this a `properties` map?"),
        "{}",
        r.stderr
    );

    let nested = json!({"type": "object", "properties": {"f": openai_tools()[0]}});
    let path = f.write("nested.json", &nested.to_string());
    let r = run(&["compile", path_str(&path)], None);
    assert_eq!(r.code, 1);
    assert!(
        r.stderr.contains("/properties/f")
            && r.stderr.contains("OpenAI tool, not a JSON Schema")
            && r.stderr.contains("/properties/f/function/parameters"),
        "{}",
        r.stderr
    );
}

/// Vega-Lite's references with `[]` (`#/definitions/MarkPropDef<number[]>`) are read as the
/// references they are: no "ignored malformed keyword" warning.
#[test]
fn references_with_brackets_are_not_malformed() {
    let f = Fixture::new();
    let schema = json!({
        "definitions": {"List<number[]>": {"type": "array", "items": {"type": "number"}}},
        "type": "object",
        "properties": {"a": {"$ref": "#/definitions/List<number[]>"}}
    });
    let path = f.write("brackets.json", &schema.to_string());
    let r = run_ok(&["compile", path_str(&path)], None);
    assert!(!r.stderr.contains("warning"), "{}", r.stderr);
    let r = run(
        &["compress", "--spec", path_str(&path)],
        Some(r#"{"a": ["x"]}"#),
    );
    assert_eq!(r.code, 1, "the reference is followed: {}", r.stdout);
}

// ── dss generate: default prefix cache, --print-prompt, failed --stats, examples ──

#[cfg(feature = "runtime")]
fn run_with_env(args: &[&str], env: &[(&str, &str)]) -> Run {
    run_in(args, None, env)
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

// ── `-` reads standard input ───────────────────────────────────────────────────

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
