//! Every grammar form dss emits is read by the serving engine it is for, with that engine's
//! own parser, and accepts the shorthand the mapper writes:
//! - the Lark grammar (`shorthand.lark`, `dss prune --format lark`) by llguidance, the
//!   engine behind vLLM's `guidance` backend, SGLang's `llguidance` backend and OpenAI's CFG
//!   custom tools (the Rust crate, with a byte-level tokenizer: no model needed);
//! - the GBNF (`shorthand.gbnf`) by XGrammar, vLLM's and SGLang's default backend, through
//!   its Python package (`tests/xgrammar_check.py`: `Grammar.from_ebnf(text, "root")`).
//!   The test runs where `xgrammar` imports (`DSS_XGRAMMAR_PYTHON`, else the virtualenv
//!   `.ci/install-deps` makes, else `python3`); under `CI=true` a missing package fails it.
//!
//! llama.cpp's own parser reads the GBNF in dss-runtime's `tests/gbnf_agrees.rs`.
//!
//! The grammars: the bundled specs (`specs/`) with their examples, the grammar pruned to each
//! bundled example's own values (`grammars/*/examples.jsonl`), and a sample of the corpora
//! (every 20th MaskBench file, every 10th Vega-Lite example; full corpus or fixture, found by
//! `dss-data`).

use dss_compiler::prune::{Restriction, Resume};
use dss_compiler::{compile, CompileOptions, CompiledSpec};
use llguidance::api::TopLevelGrammar;
use llguidance::{Matcher, ParserFactory};
use serde_json::Value;
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::OnceLock;
use toktrie::{ApproximateTokEnv, TokEnv};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

fn read(path: &Path) -> Value {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

fn sorted_files(dir: &Path, ext: &str) -> Vec<PathBuf> {
    dss_data::sorted_files(dir, &format!(".{ext}"))
        .unwrap_or_else(|e| panic!("{}: {e} (set DSS_DATA_DIR; see README)", dir.display()))
}

/// One grammar in both forms, with the texts it must accept.
struct Case {
    name: String,
    gbnf: String,
    lark: String,
    texts: Vec<String>,
}

/// A case from a spec's full grammar and the shorthand of `instances` (those the spec
/// compresses; `None` when none does).
fn full_case(name: &str, spec: &CompiledSpec, instances: &[Value]) -> Option<Case> {
    let texts: Vec<String> = instances
        .iter()
        .filter_map(|x| spec.compress(x).ok())
        .collect();
    (!texts.is_empty()).then(|| Case {
        name: name.to_string(),
        gbnf: spec.grammar_gbnf(),
        lark: spec
            .grammar_lark()
            .unwrap_or_else(|e| panic!("{name}: {e}")),
        texts,
    })
}

/// The grammar pruned to the values `text` itself uses (what a request naming exactly them
/// gets), which must accept `text`.
fn pruned_case(name: &str, spec: &CompiledSpec, text: &str) -> Case {
    let lines = if text.ends_with('\n') {
        text.to_string()
    } else {
        format!("{text}\n")
    };
    let progress = spec
        .progress(&lines, &spec.sites())
        .unwrap_or_else(|e| panic!("{name}: {e}\n{text}"));
    let mut restriction = Restriction::default();
    for (site, value) in progress.used {
        restriction.candidates.entry(site).or_default().push(value);
    }
    let g = spec.pruned_grammar(&restriction, Resume::Start);
    Case {
        name: name.to_string(),
        gbnf: g.to_gbnf(),
        lark: g.to_lark().unwrap_or_else(|e| panic!("{name}: {e}")),
        texts: vec![text.to_string()],
    }
}

fn corpus(name: &str) -> dss_data::Corpus {
    let corpus = dss_data::corpus(name).unwrap_or_else(|e| panic!("{e}"));
    eprintln!("corpus {name}: {corpus}");
    corpus
}

/// Every case, built once for both engines' tests.
fn cases() -> &'static [Case] {
    static CASES: OnceLock<Vec<Case>> = OnceLock::new();
    CASES.get_or_init(|| {
        let mut cases = Vec::new();
        // The bundled specs, with the worked examples and their own examples.
        let viz_examples: Vec<Value> = sorted_files(&root().join("examples/viz"), "json")
            .iter()
            .map(|p| read(p))
            .collect();
        assert!(!viz_examples.is_empty(), "examples/viz/ has no example");
        for schema_path in sorted_files(&root().join("specs"), "json") {
            let file = schema_path
                .file_name()
                .and_then(|n| n.to_str())
                .unwrap_or_default()
                .to_string();
            let Some(name) = file.strip_suffix(".schema.json") else {
                continue;
            };
            let spec = compile(&read(&schema_path), &CompileOptions::default())
                .unwrap_or_else(|e| panic!("{name}: {e}"));
            let mut instances = viz_examples.clone();
            let jsonl = root().join("grammars").join(name).join("examples.jsonl");
            let own: Vec<Value> = std::fs::read_to_string(&jsonl)
                .map(|t| {
                    t.lines()
                        .filter(|l| !l.trim().is_empty())
                        .map(|l| {
                            let v: Value = serde_json::from_str(l)
                                .unwrap_or_else(|e| panic!("{}: {e}", jsonl.display()));
                            v["output"].clone()
                        })
                        .collect()
                })
                .unwrap_or_default();
            instances.extend(own.iter().cloned());
            let case = full_case(name, &spec, &instances)
                .unwrap_or_else(|| panic!("{name}: no example compresses"));
            assert_eq!(
                case.texts.len(),
                instances.len(),
                "{name}: every bundled example compresses"
            );
            cases.push(case);
            for (i, x) in own.iter().enumerate() {
                let text = spec
                    .compress(x)
                    .unwrap_or_else(|e| panic!("{name} example {i}: {e}"));
                cases.push(pruned_case(
                    &format!("{name} pruned to example {i}"),
                    &spec,
                    &text,
                ));
            }
        }
        // MaskBench: every 20th file, its valid instances.
        let maskbench = corpus("maskbench");
        for path in sorted_files(&maskbench.path().join("data"), "json")
            .iter()
            .step_by(20)
        {
            let file = read(path);
            let Ok(spec) = compile(&file["schema"], &CompileOptions::default()) else {
                continue;
            };
            let valid = dss_data::maskbench_valid(&file);
            let name = path.file_name().map(|n| n.to_string_lossy().into_owned());
            if let Some(case) = full_case(&name.unwrap_or_default(), &spec, &valid) {
                cases.push(case);
            }
        }
        assert!(
            cases.len() > maskbench.pick(100, 2),
            "{} cases: too few MaskBench schemas compiled",
            cases.len()
        );
        // Vega-Lite: every 10th example.
        let vega_lite = corpus("vega-lite");
        let spec = compile(
            &read(&vega_lite.path().join("vega-lite-schema.json")),
            &CompileOptions::default(),
        )
        .unwrap_or_else(|e| panic!("vega-lite: {e}"));
        let examples: Vec<Value> = sorted_files(&vega_lite.path().join("examples"), "json")
            .iter()
            .step_by(10)
            .map(|p| read(p))
            .collect();
        let case = full_case("vega-lite", &spec, &examples).expect("vega-lite examples compress");
        assert!(case.texts.len() >= vega_lite.pick(40, 1));
        cases.push(case);
        cases
    })
}

/// The failures, at most `n` of them, for a message.
fn first(failures: &[String], n: usize) -> String {
    let shown: Vec<&str> = failures.iter().take(n).map(String::as_str).collect();
    format!(
        "{} failures; the first {}:\n{}",
        failures.len(),
        shown.len(),
        shown.join("\n\n")
    )
}

#[test]
fn llguidance_reads_the_lark_grammars() {
    let tok_env: TokEnv = ApproximateTokEnv::single_byte_env();
    let mut factory = ParserFactory::new_simple(&tok_env).expect("parser factory");
    factory.quiet();
    let (mut grammars, mut texts, mut failures) = (0, 0, Vec::new());
    for case in cases() {
        let parser = factory.create_parser(TopLevelGrammar::from_lark(case.lark.clone()));
        let matcher = Matcher::new(parser);
        if let Some(e) = matcher.get_error() {
            failures.push(format!(
                "{}: llguidance rejects the Lark grammar: {e}",
                case.name
            ));
            continue;
        }
        grammars += 1;
        for text in &case.texts {
            texts += 1;
            let mut m = matcher.deep_clone();
            let tokens = tok_env.tokenize_bytes(text.as_bytes());
            let accepted = m.consume_tokens(&tokens).is_ok() && m.is_accepting().unwrap_or(false);
            if !accepted {
                failures.push(format!(
                    "{}: not a sentence of the Lark grammar ({}):\n{text}",
                    case.name,
                    m.get_error().unwrap_or_default()
                ));
            }
        }
    }
    println!("llguidance: {grammars} Lark grammars read, {texts} texts checked");
    assert!(failures.is_empty(), "{}", first(&failures, 8));
    assert!(
        grammars >= 3 && texts > grammars,
        "{grammars} grammars, {texts} texts"
    );
}

/// The Python with XGrammar: `DSS_XGRAMMAR_PYTHON`, else the virtualenv `.ci/install-deps`
/// makes, else `python3`; `None` (the test is skipped, recorded by `dss_data::skip`) when
/// `xgrammar` does not import there, except under `CI=true`, where that fails the test.
fn xgrammar_python() -> Option<PathBuf> {
    let venv = std::env::var_os("HOME")
        .map(|h| PathBuf::from(h).join(".cache/dss/xgrammar-venv/bin/python3"));
    let python = std::env::var_os("DSS_XGRAMMAR_PYTHON")
        .map(PathBuf::from)
        .or(venv.filter(|p| p.exists()))
        .unwrap_or_else(|| PathBuf::from("python3"));
    let imports = Command::new(&python)
        .args(["-c", "import xgrammar"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    if imports {
        return Some(python);
    }
    let message = format!(
        "XGrammar's Python package is not installed: `import xgrammar` fails with {} \
         (`.ci/install-deps` installs it into ~/.cache/dss/xgrammar-venv; or set \
         DSS_XGRAMMAR_PYTHON to a Python that has it)",
        python.display()
    );
    assert!(!dss_data::under_ci(), "{message}");
    dss_data::skip("xgrammar_reads_the_gbnf", &message);
    None
}

#[test]
fn xgrammar_reads_the_gbnf() {
    let Some(python) = xgrammar_python() else {
        return;
    };
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/xgrammar_check.py");
    let mut child = Command::new(&python)
        .arg(&script)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("{}: {e}", python.display()));
    let cases = cases();
    let mut stdin = child.stdin.take().expect("stdin");
    // Written from a thread: the script answers line by line while it reads.
    let jobs: Vec<String> = cases
        .iter()
        .map(|c| {
            serde_json::json!({"name": c.name, "grammar": c.gbnf, "texts": c.texts}).to_string()
        })
        .collect();
    let writer = std::thread::spawn(move || {
        for job in jobs {
            writeln!(stdin, "{job}").expect("write to the XGrammar check");
        }
    });
    let stdout = child.stdout.take().expect("stdout");
    let answers: Vec<Value> = BufReader::new(stdout)
        .lines()
        .map(|l| serde_json::from_str(&l.expect("read")).expect("the check writes JSON"))
        .collect();
    writer.join().expect("writer");
    let status = child.wait().expect("wait");
    assert!(status.success(), "the XGrammar check failed: {status}");
    assert_eq!(answers.len(), cases.len(), "one answer per grammar");
    let (mut texts, mut failures) = (0, Vec::new());
    for (case, answer) in cases.iter().zip(&answers) {
        assert_eq!(answer["name"], Value::String(case.name.clone()));
        if let Some(e) = answer["error"].as_str() {
            failures.push(format!("{}: XGrammar rejects the GBNF: {e}", case.name));
            continue;
        }
        texts += case.texts.len();
        for i in answer["rejected"].as_array().into_iter().flatten() {
            let text = i
                .as_u64()
                .and_then(|i| case.texts.get(i as usize))
                .expect("an index of a text");
            failures.push(format!(
                "{}: not a sentence of the GBNF under XGrammar:\n{text}",
                case.name
            ));
        }
    }
    println!(
        "xgrammar: {} GBNF grammars read, {texts} texts checked",
        cases.len()
    );
    assert!(failures.is_empty(), "{}", first(&failures, 8));
    assert!(texts > cases.len());
}
