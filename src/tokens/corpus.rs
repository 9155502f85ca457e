//! Finding and reading the documents `dss tokens` measures.
//!
//! Two kinds of corpus:
//! - documents of one schema (`--spec`): JSON files (one document each) and JSONL files
//!   (one document per non-blank line), given directly or found in folders, recursively;
//! - schema test files (`--schema-tests`, alias `--maskbench`): each file carries its own
//!   schema, `{"schema": S, "tests": [{"data": D, "valid": true|false}, …]}` (MaskBench), or
//!   an array of such objects (JSON-Schema-Test-Suite). Every file is compiled on its own and
//!   its valid tests are measured; invalid tests are counted, not measured.

use crate::guard::guard;
use anyhow::{anyhow, bail, Context, Result};
use dss_compiler::{compile, CompileOptions, CompiledSpec};
use serde_json::Value;
use serde_json_path::JsonPath;
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// One document to measure.
pub(super) struct Doc {
    /// Where it is, for messages and reports: `file`, `file:LINE` (JSONL) or
    /// `file#/tests/N/data` (schema test files).
    pub name: String,
    /// The subtotal it counts in: its folder, or its source in a schema test corpus.
    pub group: String,
    pub value: Value,
    pub spec: Arc<CompiledSpec>,
}

/// A document that could not be read or measured, reported as `name: message`.
#[derive(Debug, Clone)]
pub(super) struct Failure {
    pub name: String,
    pub message: String,
}

/// What reading one file gives.
#[derive(Default)]
pub(super) struct Loaded {
    pub docs: Vec<Doc>,
    pub failures: Vec<Failure>,
    /// Documents left out by `--skip-if-present`.
    pub skipped: usize,
    /// Schema test files: tests marked `"valid": false` (not measured).
    pub invalid_tests: usize,
}

/// `--skip-if-present`: a JSON pointer (`/data/values`) or an RFC 9535 JSONPath query
/// (`$..data.values`); a document is skipped when it selects anything.
pub(super) enum SkipRule {
    Pointer(String),
    Path(Box<JsonPath>),
}

impl SkipRule {
    pub(super) fn parse(text: &str) -> Result<Self> {
        if text.is_empty() || text.starts_with('/') {
            Ok(SkipRule::Pointer(text.to_string()))
        } else if text.starts_with('$') {
            let path = JsonPath::parse(text)
                .map_err(|e| anyhow!("--skip-if-present {text}: invalid JSONPath: {e}"))?;
            Ok(SkipRule::Path(Box::new(path)))
        } else {
            bail!(
                "--skip-if-present {text}: expected a JSON pointer (`/data/values`) or a \
                 JSONPath query (`$..data.values`)"
            )
        }
    }

    pub(super) fn matches(&self, value: &Value) -> bool {
        match self {
            SkipRule::Pointer(p) => value.pointer(p).is_some(),
            SkipRule::Path(path) => !path.query(value).is_empty(),
        }
    }
}

/// A file to read, and the subtotal its documents count in.
pub(super) struct Source {
    pub path: PathBuf,
    pub group: String,
}

fn is_json_file(path: &Path) -> bool {
    path.extension()
        .is_some_and(|x| x.eq_ignore_ascii_case("json") || x.eq_ignore_ascii_case("jsonl"))
}

/// `-`: standard input.
fn is_stdin(path: &Path) -> bool {
    path.as_os_str() == "-"
}

fn walk(path: &Path, out: &mut Vec<PathBuf>) -> Result<()> {
    if is_stdin(path) {
        out.push(path.to_path_buf());
    } else if path.is_dir() {
        let mut entries = Vec::new();
        for entry in std::fs::read_dir(path)
            .with_context(|| format!("{}: cannot read folder", path.display()))?
        {
            let entry = entry.with_context(|| format!("{}: cannot read folder", path.display()))?;
            let p = entry.path();
            if p.is_dir() || is_json_file(&p) {
                entries.push(p);
            }
        }
        entries.sort();
        for p in entries {
            walk(&p, out)?;
        }
    } else if path.is_file() {
        out.push(path.to_path_buf());
    } else {
        bail!("{}: no such file or folder", path.display());
    }
    Ok(())
}

/// A source as messages and the report name it: `<stdin>` for `-`.
fn source_name(path: &Path) -> String {
    if is_stdin(path) {
        "<stdin>".to_string()
    } else {
        path.display().to_string()
    }
}

fn folder_of(path: &Path) -> String {
    if is_stdin(path) {
        return "<stdin>".to_string();
    }
    match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.display().to_string(),
        _ => ".".to_string(),
    }
}

/// The source of a MaskBench file, from its name: `Github_easy---o10008.json` is
/// `Github_easy`, `BFCL_java_12.json` is `BFCL_java`; other names are their own source.
fn schema_test_source(path: &Path) -> String {
    let stem = path
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default();
    if let Some((source, _)) = stem.split_once("---") {
        return source.to_string();
    }
    match stem.rsplit_once('_') {
        Some((head, tail))
            if !head.is_empty() && !tail.is_empty() && tail.bytes().all(|b| b.is_ascii_digit()) =>
        {
            head.to_string()
        }
        _ => stem,
    }
}

/// Every file under `paths` (folders recursively: `*.json`, `*.jsonl`), in a stable order,
/// with its group: its folder; with `schema_tests`, its source (prefixed by its folder when
/// the files come from several folders).
pub(super) fn sources(paths: &[PathBuf], schema_tests: bool) -> Result<Vec<Source>> {
    let mut files = Vec::new();
    for p in paths {
        walk(p, &mut files)?;
    }
    let folders: BTreeSet<String> = files.iter().map(|f| folder_of(f)).collect();
    Ok(files
        .into_iter()
        .map(|path| {
            let group = if schema_tests {
                let source = schema_test_source(&path);
                if folders.len() > 1 {
                    format!("{}/{source}", folder_of(&path))
                } else {
                    source
                }
            } else {
                folder_of(&path)
            };
            Source { path, group }
        })
        .collect())
}

impl Loaded {
    /// The text of a source, or a failure recorded for it.
    fn read(&mut self, source: &Source) -> Option<String> {
        read_text(&source.path)
            .map_err(|message| self.fail(source_name(&source.path), message))
            .ok()
    }
}

fn read_text(path: &Path) -> Result<String, String> {
    let bytes = if is_stdin(path) {
        let mut bytes = Vec::new();
        std::io::Read::read_to_end(&mut std::io::stdin(), &mut bytes)
            .map_err(|e| format!("cannot read: {e}"))?;
        bytes
    } else {
        std::fs::read(path).map_err(|e| format!("cannot read: {e}"))?
    };
    String::from_utf8(bytes).map_err(|e| {
        format!(
            "not UTF-8 text (invalid byte at offset {})",
            e.utf8_error().valid_up_to()
        )
    })
}

fn json_message(e: &serde_json::Error) -> String {
    format!("invalid JSON: {}", crate::json_error_message(e))
}

impl Loaded {
    fn fail(&mut self, name: String, message: String) {
        self.failures.push(Failure { name, message });
    }

    fn push(&mut self, doc: Doc, skip: &[SkipRule]) {
        if skip.iter().any(|r| r.matches(&doc.value)) {
            self.skipped += 1;
        } else {
            self.docs.push(doc);
        }
    }
}

/// Read one file of documents of `spec`: a JSON document, or JSONL.
pub(super) fn load_documents(
    source: &Source,
    spec: &Arc<CompiledSpec>,
    skip: &[SkipRule],
) -> Loaded {
    let mut out = Loaded::default();
    let file = source_name(&source.path);
    let Some(text) = out.read(source) else {
        return out;
    };
    // Standard input is JSON Lines where it is not one JSON document.
    let jsonl = if is_stdin(&source.path) {
        serde_json::from_str::<Value>(&text).is_err()
            && text.lines().filter(|l| !l.trim().is_empty()).count() > 1
    } else {
        source
            .path
            .extension()
            .is_some_and(|x| x.eq_ignore_ascii_case("jsonl"))
    };
    let doc = |name: String, value: Value| Doc {
        name,
        group: source.group.clone(),
        value,
        spec: Arc::clone(spec),
    };
    if jsonl {
        for (i, line) in text.lines().enumerate() {
            if line.trim().is_empty() {
                continue;
            }
            let name = format!("{file}:{}", i + 1);
            match serde_json::from_str(line) {
                Ok(value) => out.push(doc(name, value), skip),
                Err(e) => out.fail(format!("{name}:{}", e.column()), json_message(&e)),
            }
        }
    } else {
        match serde_json::from_str(&text) {
            Ok(value) => out.push(doc(file, value), skip),
            Err(e) => out.fail(
                format!("{file}:{}:{}", e.line(), e.column()),
                json_message(&e),
            ),
        }
    }
    out
}

/// Read one schema test file: compile each schema, keep its valid tests.
pub(super) fn load_schema_tests(source: &Source, skip: &[SkipRule]) -> Loaded {
    let mut out = Loaded::default();
    let file = source.path.display().to_string();
    let Some(text) = out.read(source) else {
        return out;
    };
    let root: Value = match serde_json::from_str(&text) {
        Ok(v) => v,
        Err(e) => {
            out.fail(
                format!("{file}:{}:{}", e.line(), e.column()),
                json_message(&e),
            );
            return out;
        }
    };
    // MaskBench: one object; JSON-Schema-Test-Suite: an array of them.
    let cases: Vec<(String, &Value)> = match &root {
        Value::Array(items) => items
            .iter()
            .enumerate()
            .map(|(i, c)| (format!("/{i}"), c))
            .collect(),
        other => vec![(String::new(), other)],
    };
    for (at, case) in cases {
        let (Some(schema), Some(Value::Array(tests))) = (case.get("schema"), case.get("tests"))
        else {
            out.fail(
                format!("{file}#{at}"),
                "not a schema test file: expected {\"schema\": …, \"tests\": [{\"data\": …, \
                 \"valid\": …}]} (or an array of them)"
                    .to_string(),
            );
            continue;
        };
        let mut valid = Vec::new();
        for (i, test) in tests.iter().enumerate() {
            let name = format!("{file}#{at}/tests/{i}/data");
            match (test.get("data"), test.get("valid")) {
                (Some(data), Some(Value::Bool(true))) => valid.push((name, data)),
                (Some(_), Some(Value::Bool(false))) => out.invalid_tests += 1,
                _ => out.fail(
                    format!("{file}#{at}/tests/{i}"),
                    "a test needs `data` and `\"valid\": true|false`".to_string(),
                ),
            }
        }
        if valid.is_empty() {
            continue;
        }
        let compiled = guard("compile", || compile(schema, &CompileOptions::default()))
            .and_then(|r| r.map_err(|e| e.to_string()));
        let spec = match compiled {
            Ok(spec) => Arc::new(spec),
            Err(e) => {
                let message = format!("the schema at #{at}/schema does not compile: {e}");
                for (name, _) in valid {
                    out.fail(name, message.clone());
                }
                continue;
            }
        };
        for (name, data) in valid {
            let doc = Doc {
                name,
                group: source.group.clone(),
                value: data.clone(),
                spec: Arc::clone(&spec),
            };
            out.push(doc, skip);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn skip_rules() {
        let doc = json!({"layer": [{"data": {"values": [1]}}], "mark": "bar"});
        assert!(!SkipRule::parse("/data/values").expect("ptr").matches(&doc));
        assert!(SkipRule::parse("/layer/0/data").expect("ptr").matches(&doc));
        assert!(SkipRule::parse("$..data.values")
            .expect("path")
            .matches(&doc));
        assert!(!SkipRule::parse("$..data.url").expect("path").matches(&doc));
        assert!(SkipRule::parse("data/values").is_err());
        assert!(SkipRule::parse("$[").is_err());
    }

    #[test]
    fn schema_test_sources() {
        let s = |n: &str| schema_test_source(Path::new(n));
        assert_eq!(s("d/Github_easy---o10008.json"), "Github_easy");
        assert_eq!(s("d/BFCL_java_12.json"), "BFCL_java");
        assert_eq!(s("d/items.json"), "items");
        assert_eq!(s("d/_1.json"), "_1");
    }
}
