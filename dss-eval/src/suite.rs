//! The evaluation suite folder: loading, writing, and instance-path patterns.

use crate::error::{EvalError, Result};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::collections::BTreeMap;
use std::fs;
use std::path::Path;

/// Catalogs: instance path pattern -> the values allowed there (JSON values).
pub type Catalogs = BTreeMap<String, Vec<Value>>;
/// Aliases: instance path pattern -> value (as text) -> phrases that name it.
pub type Aliases = BTreeMap<String, BTreeMap<String, Vec<String>>>;

/// One evaluated case (a line of `cases.jsonl`) or worked example (`examples.jsonl`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Case {
    /// Unique id within the file.
    pub id: String,
    /// The user's request.
    pub request: String,
    /// The expected JSON instance; it validates against `schema.json`, or against the
    /// schema of the case's own `tools`.
    pub gold: Value,
    /// The case's own tool set, where it carries one: an OpenAI-style function list
    /// (`[{"name", "description", "parameters"}, …]`, JSON Schema types). The case's schema
    /// is then the schema of a list of calls of these tools, `[{"<tool>": {<arguments>}}]`,
    /// as `dss compile` reads tool definitions, instead of the suite's `schema.json`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tools: Option<Value>,
    /// The acceptable answers, where the suite's scoring reads more than `gold`
    /// ([`PaperRule::BfclAst`]: BFCL's ground truth, a list of
    /// `{FUNCTION: {parameter: [acceptable values]}}`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub acceptable: Option<Value>,
    /// Any other fields (source file and line, notes), kept as they are.
    #[serde(flatten)]
    pub extra: serde_json::Map<String, Value>,
}

/// The paper's own exact-match rule, chosen per suite (see [`crate::score::em_paper`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "kebab-case")]
pub enum PaperRule {
    /// APIMix: the root list is compared as a *set* of calls (duplicates collapse); each
    /// call's arguments compared by name.
    CallSet,
    /// FoodOrdering: the root list of orders is sorted (compared as a multiset); every other
    /// list keeps its order (topping order counts).
    SortedOrders,
    /// Same as `em`.
    #[default]
    Em,
    /// BFCL's AST checker (see [`crate::bfcl_ast`]): each case's `acceptable` answers and
    /// its own `tools` decide, not `gold` alone.
    BfclAst,
}

/// Scoring rules of a suite.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default)]
pub struct Scoring {
    /// Instance path patterns of the arrays whose order carries no meaning: `em` compares
    /// them as multisets. `""` is the root.
    #[serde(default)]
    pub unordered: Vec<String>,
    /// The rule of `em_paper`.
    #[serde(default)]
    pub paper: PaperRule,
}

/// `suite.yaml`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SuiteMeta {
    /// Suite name (used in reports).
    pub name: String,
    /// Where the data comes from.
    #[serde(default)]
    pub source: String,
    /// The data's license.
    #[serde(default)]
    pub license: String,
    /// Free notes: decisions of the importer, repairs, widenings.
    #[serde(default)]
    pub notes: Vec<String>,
    /// Scoring rules.
    #[serde(default)]
    pub scoring: Scoring,
}

/// A loaded evaluation suite.
#[derive(Debug, Clone, PartialEq)]
pub struct Suite {
    /// `suite.yaml`.
    pub meta: SuiteMeta,
    /// `schema.json`; `None` where every case carries its own `tools` (a suite of per-case
    /// schemas, as BFCL's questions are).
    pub schema: Option<Value>,
    /// `catalogs.yaml` (empty if absent).
    pub catalogs: Catalogs,
    /// `aliases.yaml` (empty if absent).
    pub aliases: Aliases,
    /// `cases.jsonl`.
    pub cases: Vec<Case>,
    /// `examples.jsonl` (empty if absent).
    pub examples: Vec<Case>,
    /// `notation.yaml`: notation edits as `dss init` writes them (or just `style: explicit`),
    /// with which the suite's schema is compiled. `None` if absent (the automatic design).
    pub notation: Option<String>,
}

/// The `notation.yaml` importers write: every optional field `keyword value` (the notation
/// small models write calls in most reliably; see `dss compile --style`).
pub const EXPLICIT_NOTATION: &str = "# Notation edits for this suite (see `dss init`): every optional field is written\n# `keyword value`, the style small models write calls in most reliably.\nstyle: explicit\n";

impl Suite {
    /// Loads a suite folder. Errors name the file and, for JSONL, the line.
    /// Checks: unique case ids, no worked example whose id or request is a case's, and,
    /// without `schema.json`, that every case and example carries its own `tools`.
    pub fn load(dir: &Path) -> Result<Suite> {
        let meta: SuiteMeta = read_yaml(&dir.join("suite.yaml"))?;
        let schema_path = dir.join("schema.json");
        let schema: Option<Value> = if schema_path.exists() {
            Some(serde_json::from_str(&read(&schema_path)?).map_err(|e| {
                EvalError::format(
                    &schema_path,
                    Some(format!("{}:{}", e.line(), e.column())),
                    e.to_string(),
                )
            })?)
        } else {
            None
        };
        let catalogs = optional_yaml(&dir.join("catalogs.yaml"))?.unwrap_or_default();
        let aliases = optional_yaml(&dir.join("aliases.yaml"))?.unwrap_or_default();
        let cases = read_cases(&dir.join("cases.jsonl"))?;
        let ex_path = dir.join("examples.jsonl");
        let examples = if ex_path.exists() {
            read_cases(&ex_path)?
        } else {
            Vec::new()
        };
        check_examples(&cases, &examples, &ex_path)?;
        if schema.is_none() {
            for (path, list) in [(dir.join("cases.jsonl"), &cases), (ex_path, &examples)] {
                if let Some(c) = list.iter().find(|c| c.tools.is_none()) {
                    return Err(EvalError::format(
                        path,
                        None,
                        format!("case `{}` carries no `tools`, and the suite has no schema.json: expected either", c.id),
                    ));
                }
            }
        }
        let notation_path = dir.join("notation.yaml");
        let notation = if notation_path.exists() {
            Some(read(&notation_path)?)
        } else {
            None
        };
        Ok(Suite {
            notation,
            meta,
            schema,
            catalogs,
            aliases,
            cases,
            examples,
        })
    }

    /// Writes the suite folder (creating it). Empty catalogs/aliases/examples are not written.
    pub fn write(&self, dir: &Path) -> Result<()> {
        fs::create_dir_all(dir).map_err(|e| EvalError::io(dir, e))?;
        write_file(&dir.join("suite.yaml"), &to_yaml(&self.meta, dir)?)?;
        if let Some(schema) = &self.schema {
            let schema = serde_json::to_string_pretty(schema).unwrap_or_default() + "\n";
            write_file(&dir.join("schema.json"), &schema)?;
        }
        if !self.catalogs.is_empty() {
            write_file(&dir.join("catalogs.yaml"), &to_yaml(&self.catalogs, dir)?)?;
        }
        if !self.aliases.is_empty() {
            write_file(&dir.join("aliases.yaml"), &to_yaml(&self.aliases, dir)?)?;
        }
        write_file(&dir.join("cases.jsonl"), &jsonl(&self.cases))?;
        if !self.examples.is_empty() {
            write_file(&dir.join("examples.jsonl"), &jsonl(&self.examples))?;
        }
        if let Some(n) = &self.notation {
            write_file(&dir.join("notation.yaml"), n)?;
        }
        Ok(())
    }

    /// The schema a case's gold and output are read against: the schema of calls of its
    /// own `tools` (tool definitions, which `dss_compiler::compile` reads as such), or the
    /// suite's `schema.json`. `None` only for a case without tools in a suite without a
    /// schema, which [`Suite::load`] refuses.
    pub fn schema_of<'a>(&'a self, case: &'a Case) -> Option<&'a Value> {
        case.tools.as_ref().or(self.schema.as_ref())
    }
}

fn jsonl(cases: &[Case]) -> String {
    cases
        .iter()
        .map(|c| serde_json::to_string(c).unwrap_or_default() + "\n")
        .collect()
}

fn to_yaml<T: Serialize>(v: &T, dir: &Path) -> Result<String> {
    serde_norway::to_string(v).map_err(|e| EvalError::format(dir, None, e.to_string()))
}

pub(crate) fn read(path: &Path) -> Result<String> {
    fs::read_to_string(path).map_err(|e| EvalError::io(path, e))
}

pub(crate) fn write_file(path: &Path, text: &str) -> Result<()> {
    fs::write(path, text).map_err(|e| EvalError::io(path, e))
}

fn read_yaml<T: for<'de> Deserialize<'de>>(path: &Path) -> Result<T> {
    serde_norway::from_str(&read(path)?).map_err(|e| {
        let at = e.location().map(|l| format!("{}:{}", l.line(), l.column()));
        EvalError::format(path, at, e.to_string())
    })
}

fn optional_yaml<T: for<'de> Deserialize<'de>>(path: &Path) -> Result<Option<T>> {
    if path.exists() {
        read_yaml(path).map(Some)
    } else {
        Ok(None)
    }
}

/// Worked examples must not come from the evaluated cases (same id or request).
pub(crate) fn check_examples(cases: &[Case], examples: &[Case], ex_path: &Path) -> Result<()> {
    for (i, ex) in examples.iter().enumerate() {
        if let Some(c) = cases
            .iter()
            .find(|c| c.id == ex.id || c.request.trim() == ex.request.trim())
        {
            return Err(EvalError::format(
                ex_path,
                Some((i + 1).to_string()),
                format!("worked example `{}` is the evaluated case `{}`: examples must not come from the cases", ex.id, c.id),
            ));
        }
    }
    Ok(())
}

pub(crate) fn read_cases(path: &Path) -> Result<Vec<Case>> {
    let text = read(path)?;
    let mut out: Vec<Case> = Vec::new();
    for (i, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let case: Case = serde_json::from_str(line).map_err(|e| {
            EvalError::format(
                path,
                Some(format!("{}:{}", i + 1, e.column())),
                e.to_string(),
            )
        })?;
        if out.iter().any(|c| c.id == case.id) {
            return Err(EvalError::format(
                path,
                Some((i + 1).to_string()),
                format!("duplicate id `{}`", case.id),
            ));
        }
        out.push(case);
    }
    Ok(out)
}

/// A path pattern: JSON Pointer segments where `*` matches any array index.
/// `""` is the root; `/*/atis_airfare/departure_city` is that slot in any call.
pub fn pattern_matches(pattern: &str, path: &[PathSeg]) -> bool {
    let segs: Vec<&str> = if pattern.is_empty() {
        vec![]
    } else {
        pattern.split('/').skip(1).collect()
    };
    segs.len() == path.len()
        && segs.iter().zip(path).all(|(s, p)| match p {
            PathSeg::Index(_) => *s == "*",
            PathSeg::Key(k) => unescape(s) == *k,
        })
}

/// The pattern of a concrete path (indices become `*`).
pub fn pattern_of(path: &[PathSeg]) -> String {
    path.iter()
        .map(|p| match p {
            PathSeg::Index(_) => "/*".to_string(),
            PathSeg::Key(k) => format!("/{}", k.replace('~', "~0").replace('/', "~1")),
        })
        .collect()
}

fn unescape(s: &str) -> String {
    s.replace("~1", "/").replace("~0", "~")
}

/// One step of a concrete instance path.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PathSeg {
    /// An object key.
    Key(String),
    /// An array index.
    Index(usize),
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn suite() -> Suite {
        Suite {
            notation: Some(EXPLICIT_NOTATION.into()),
            meta: SuiteMeta {
                name: "t".into(),
                source: "here".into(),
                license: "MIT".into(),
                notes: vec!["a note".into()],
                scoring: Scoring {
                    unordered: vec!["".into()],
                    paper: PaperRule::CallSet,
                },
            },
            schema: Some(json!({"type": "array"})),
            catalogs: [("/*/f/a".to_string(), vec![json!("x")])].into(),
            aliases: [(
                "/*/f/a".to_string(),
                [("x".to_string(), vec!["ex".to_string()])].into(),
            )]
            .into(),
            cases: vec![Case {
                id: "1".into(),
                request: "do x".into(),
                gold: json!([{"f": {"a": "x"}}]),
                tools: None,
                acceptable: None,
                extra: Default::default(),
            }],
            examples: vec![Case {
                id: "e1".into(),
                request: "do y".into(),
                gold: json!([]),
                tools: None,
                acceptable: None,
                extra: Default::default(),
            }],
        }
    }

    #[test]
    fn write_then_load_is_identity() {
        let dir = tempfile::tempdir().unwrap();
        let s = suite();
        s.write(dir.path()).unwrap();
        assert_eq!(Suite::load(dir.path()).unwrap(), s);
    }

    #[test]
    fn errors_name_file_and_line() {
        let dir = tempfile::tempdir().unwrap();
        suite().write(dir.path()).unwrap();
        let cases = dir.path().join("cases.jsonl");
        fs::write(
            &cases,
            "{\"id\":\"1\",\"request\":\"r\",\"gold\":1}\n{\"id\": 2}\n",
        )
        .unwrap();
        let e = Suite::load(dir.path()).unwrap_err().to_string();
        assert!(e.contains("cases.jsonl:2:"), "{e}");
        fs::write(&cases, "{\"id\":\"1\",\"request\":\"r\",\"gold\":1}\n{\"id\":\"1\",\"request\":\"s\",\"gold\":1}\n").unwrap();
        let e = Suite::load(dir.path()).unwrap_err().to_string();
        assert!(e.contains("cases.jsonl:2: duplicate id"), "{e}");
        fs::write(&cases, "{\"id\":\"9\",\"request\":\"do y\",\"gold\":1}\n").unwrap();
        let e = Suite::load(dir.path()).unwrap_err().to_string();
        assert!(e.contains("examples.jsonl:1: worked example"), "{e}");
        fs::write(dir.path().join("suite.yaml"), "name: [").unwrap();
        let e = Suite::load(dir.path()).unwrap_err().to_string();
        assert!(e.contains("suite.yaml:"), "{e}");
    }

    #[test]
    fn patterns() {
        let p = [
            PathSeg::Index(2),
            PathSeg::Key("f".into()),
            PathSeg::Key("a/b".into()),
        ];
        assert_eq!(pattern_of(&p), "/*/f/a~1b");
        assert!(pattern_matches("/*/f/a~1b", &p));
        assert!(!pattern_matches("/*/f", &p));
        assert!(pattern_matches("", &[]));
    }
}
