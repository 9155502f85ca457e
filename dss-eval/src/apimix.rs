//! `import apimix DIR`: APIMixATIS / APIMixSNIPS (`*_data.json`, `*_data_schema.json`).
//!
//! JSON shape: the root is an array of 1–3 calls; each call is a one-key object naming the
//! function, whose value holds the slots: `[{"atis_airfare": {"departure_city": "nashville",
//! "destination_city": "seattle"}}]`. The schema is a `oneOf` of closed objects (one per
//! function, that key required), each slot an `enum` of the schema file's values; no slot is
//! required. dss writes this exactly as compactly as the `{"function": NAME, ...}` form
//! (`atis_airfare departure_city nashville destination_city seattle`, one call per line) and,
//! unlike that form, keeps the function's full name as the line's tag and gives every
//! (function, slot) its own path (`/*/atis_airfare/departure_city`) for catalogs. It is also
//! the upstream `output_items` layout.
//!
//! Gold strings are parsed with [`crate::pycall`]; `slot=None` means the slot is absent (the
//! data has none). A gold string followed only by stray `"` and `,` characters (one line of
//! APIMixSNIPS, a call's closing `)` followed by `",`) is repaired by dropping them; each repair
//! is returned in [`ImportSummary::repairs`] and listed in the suite's notes. Anything else
//! that does not parse is an error naming the file and the record's index.

use crate::error::{EvalError, Result};
use crate::pycall::{self, PyValue};
use crate::suite::{Case, Catalogs, PaperRule, Scoring, Suite, SuiteMeta};
use crate::{read_license, ImportSummary};
use serde_json::{json, Map, Value};
use std::path::{Path, PathBuf};

/// How an imported APIMix suite's schema writes the slots.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Slots {
    /// Every slot a free string; the dataset's values are the slots' catalogs (open: a
    /// value no catalog lists may be copied from the request). As a user's API is.
    #[default]
    Open,
    /// Every slot an `enum` of the dataset's values (the Grammar Pruning paper's setting:
    /// the schema lists every value an answer may hold).
    Enum,
}

/// Imports an APIMix folder into a suite folder `out` with open slots ([`Slots::Open`]);
/// checks the schema compiles with dss and every gold compresses and expands back equal.
pub fn import_apimix(dir: &Path, out: &Path) -> Result<ImportSummary> {
    import_apimix_with(dir, out, Slots::Open)
}

/// [`import_apimix`] with the slots written as `slots` says.
pub fn import_apimix_with(dir: &Path, out: &Path, slots: Slots) -> Result<ImportSummary> {
    let (data_path, schema_path) = find_files(dir)?;
    let stem = data_path
        .file_name()
        .and_then(|n| n.to_str())
        .and_then(|n| n.strip_suffix("_data.json"))
        .unwrap_or("apimix")
        .to_string();
    let mut functions = read_functions(&schema_path)?;
    let schema_file = schema_path
        .file_name()
        .and_then(|n| n.to_str())
        .unwrap_or("")
        .to_string();
    let mut widened = Vec::new();
    let text = crate::suite::read(&data_path)?;
    let records: Vec<Value> = serde_json::from_str(&text).map_err(|e| {
        EvalError::format(
            &data_path,
            Some(format!("{}:{}", e.line(), e.column())),
            e.to_string(),
        )
    })?;
    let file = data_path
        .file_name()
        .and_then(|n| n.to_str())
        .unwrap_or("")
        .to_string();
    let mut cases = Vec::new();
    let mut repairs = Vec::new();
    for (i, rec) in records.iter().enumerate() {
        let at = || Some(format!("record {i}"));
        let request = rec
            .get("input")
            .and_then(Value::as_str)
            .ok_or_else(|| EvalError::format(&data_path, at(), "expected a string `input`"))?;
        let outputs = rec.get("output").and_then(Value::as_array).ok_or_else(|| {
            EvalError::format(
                &data_path,
                at(),
                "expected an array `output` of call strings",
            )
        })?;
        let mut gold = Vec::new();
        for (j, o) in outputs.iter().enumerate() {
            let s = o.as_str().ok_or_else(|| {
                EvalError::format(
                    &data_path,
                    at(),
                    format!("output[{j}]: expected a call string, found {o}"),
                )
            })?;
            let (call, repaired) = parse_gold_call(s).map_err(|e| {
                EvalError::format(&data_path, at(), format!("output[{j}] {s:?}: {e}"))
            })?;
            if let Some(dropped) = repaired {
                repairs.push(format!("{file} record {i} output[{j}]: dropped the stray {dropped:?} after the call: {s:?}"));
            }
            let c = call_to_json(&call).map_err(|m| {
                EvalError::format(&data_path, at(), format!("output[{j}] {s:?}: {m}"))
            })?;
            check_call(&c, &mut functions).map_err(|m| {
                EvalError::format(&data_path, at(), format!("output[{j}] {s:?}: {m}"))
            })?
            .into_iter()
            .for_each(|(f, slot, v)| {
                widened.push(format!("{file} record {i} output[{j}]: {f}.{slot} value {v:?} is not in {schema_file}: added to the enum"));
            });
            gold.push(c);
        }
        let mut extra = Map::new();
        extra.insert("source".into(), json!({"file": file, "record": i}));
        cases.push(Case {
            id: format!("{stem}-{i:03}"),
            request: request.to_string(),
            gold: Value::Array(gold),
            tools: None,
            acceptable: None,
            extra,
        });
    }
    let schema = build_schema(&functions, slots);
    let mut catalogs = Catalogs::new();
    for (f, slots) in &functions {
        for (slot, values) in slots {
            catalogs.insert(
                format!("/*/{}/{}", ptr(f), ptr(slot)),
                values.iter().map(|v| json!(v)).collect(),
            );
        }
    }
    let mut notes = vec![
        match slots {
            Slots::Open => "Shape: an array of 1-3 calls, each {FUNCTION: {slot: value}}; slots are free strings, the *_data_schema.json values their catalogs (open: spans of the request too); no slot is required.",
            Slots::Enum => "Shape: an array of 1-3 calls, each {FUNCTION: {slot: value}}; slots are enums of the *_data_schema.json values; no slot is required.",
        }
        .to_string(),
        "A `slot=None` argument in a gold string means the slot is absent.".to_string(),
        "Case ids are `<set>-<record index>` (0-based index into the *_data.json array).".to_string(),
        "The schema lists exactly the gold values: evaluate with --catalog-mode loo as well.".to_string(),
    ];
    if !widened.is_empty() {
        notes.push("Gold values missing from the schema file are added to their slot's enum (and catalog):".into());
        notes.extend(widened.iter().map(|r| format!("  {r}")));
    }
    if repairs.is_empty() {
        notes.push("No gold string needed a repair.".into());
    } else {
        notes.push("Repair rule: text after a call's closing `)` that is only `\"` and `,` characters is dropped. Repaired:".into());
        notes.extend(repairs.iter().map(|r| format!("  {r}")));
    }
    let suite = Suite {
        notation: Some(crate::suite::EXPLICIT_NOTATION.into()),
        meta: SuiteMeta {
            name: format!("apimix-{stem}"),
            source: format!(
                "{} ({}, from the Grammar Pruning repository octatrifan/grammar-pruning)",
                dir.file_name().and_then(|n| n.to_str()).unwrap_or(""),
                file
            ),
            license: read_license(dir),
            notes,
            scoring: Scoring {
                unordered: vec![String::new()],
                paper: PaperRule::CallSet,
            },
        },
        schema: Some(schema),
        catalogs,
        aliases: Default::default(),
        cases,
        examples: Vec::new(),
    };
    crate::finish_import(&suite, out, repairs)
}

/// `~` and `/` escaped for a JSON Pointer segment.
fn ptr(s: &str) -> String {
    s.replace('~', "~0").replace('/', "~1")
}

type Functions = Vec<(String, Vec<(String, Vec<String>)>)>;

fn find_files(dir: &Path) -> Result<(PathBuf, PathBuf)> {
    let entries = std::fs::read_dir(dir).map_err(|e| EvalError::io(dir, e))?;
    let mut data = Vec::new();
    let mut schema = Vec::new();
    for e in entries {
        let p = e.map_err(|e| EvalError::io(dir, e))?.path();
        let name = p
            .file_name()
            .and_then(|n| n.to_str())
            .unwrap_or("")
            .to_string();
        if name.ends_with("_data_schema.json") {
            schema.push(p);
        } else if name.ends_with("_data.json") {
            data.push(p);
        }
    }
    match (data.as_slice(), schema.as_slice()) {
        ([d], [s]) => Ok((d.clone(), s.clone())),
        _ => Err(EvalError::format(
            dir,
            None,
            format!(
                "expected exactly one *_data.json and one *_data_schema.json, found {} and {}",
                data.len(),
                schema.len()
            ),
        )),
    }
}

fn read_functions(path: &Path) -> Result<Functions> {
    let text = crate::suite::read(path)?;
    let v: Value = serde_json::from_str(&text).map_err(|e| {
        EvalError::format(
            path,
            Some(format!("{}:{}", e.line(), e.column())),
            e.to_string(),
        )
    })?;
    let obj = v.as_object().ok_or_else(|| {
        EvalError::format(
            path,
            None,
            "expected an object {function: {slot: [values]}}",
        )
    })?;
    let mut out = Vec::new();
    for (f, slots) in obj {
        let slots = slots.as_object().ok_or_else(|| {
            EvalError::format(
                path,
                Some(format!("/{f}")),
                "expected an object {slot: [values]}",
            )
        })?;
        let mut s = Vec::new();
        for (slot, values) in slots {
            let at = || Some(format!("/{f}/{slot}"));
            let arr = values
                .as_array()
                .ok_or_else(|| EvalError::format(path, at(), "expected an array of strings"))?;
            let mut vals: Vec<String> = Vec::new();
            for v in arr {
                let v = v.as_str().ok_or_else(|| {
                    EvalError::format(path, at(), format!("expected a string value, found {v}"))
                })?;
                if !vals.iter().any(|x| x == v) {
                    vals.push(v.to_string());
                }
            }
            if vals.is_empty() {
                return Err(EvalError::format(
                    path,
                    at(),
                    "a slot needs at least one value",
                ));
            }
            s.push((slot.clone(), vals));
        }
        out.push((f.clone(), s));
    }
    if out.is_empty() {
        return Err(EvalError::format(path, None, "no function"));
    }
    Ok(out)
}

fn build_schema(functions: &Functions, form: Slots) -> Value {
    let branches: Vec<Value> = functions
        .iter()
        .map(|(f, slots)| {
            let props: Map<String, Value> = slots
                .iter()
                .map(|(s, v)| {
                    let slot = match form {
                        Slots::Open => json!({"type": "string", "minLength": 1}),
                        Slots::Enum => json!({"enum": v}),
                    };
                    (s.clone(), slot)
                })
                .collect();
            json!({
                "type": "object",
                "additionalProperties": false,
                "required": [f],
                "properties": {f: {"type": "object", "additionalProperties": false, "properties": props}}
            })
        })
        .collect();
    json!({
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "description": "A list of 1-3 API calls.",
        "type": "array",
        "minItems": 1,
        "maxItems": 3,
        "items": {"oneOf": branches}
    })
}

/// Parses one gold call string. Returns the call and, if it was repaired, the dropped text.
pub fn parse_gold_call(
    s: &str,
) -> std::result::Result<(PyValue, Option<String>), pycall::PyParseError> {
    match pycall::parse(s) {
        Ok(v) => Ok((v, None)),
        Err(e) => {
            let (v, rest) = pycall::parse_prefix(s).map_err(|_| e.clone())?;
            let r = rest.trim();
            if matches!(v, PyValue::Call { .. })
                && !r.is_empty()
                && r.chars().all(|c| c == '"' || c == ',')
            {
                Ok((v, Some(r.to_string())))
            } else {
                Err(e)
            }
        }
    }
}

/// Checks a gold call against the functions: an unknown function or slot is an error; a
/// value missing from the slot's list is added to it and returned as (function, slot, value).
fn check_call(
    call: &Value,
    functions: &mut Functions,
) -> std::result::Result<Vec<(String, String, String)>, String> {
    let mut added = Vec::new();
    let Some((name, slots)) = call.as_object().and_then(|m| m.iter().next()) else {
        return Ok(added);
    };
    let Some((_, known)) = functions.iter_mut().find(|(f, _)| f == name) else {
        return Err(format!("function `{name}` is not in the schema file"));
    };
    for (slot, v) in slots.as_object().into_iter().flatten() {
        let Some((_, values)) = known.iter_mut().find(|(s, _)| s == slot) else {
            return Err(format!("`{name}` has no slot `{slot}` in the schema file"));
        };
        let v = v.as_str().unwrap_or_default().to_string();
        if !values.contains(&v) {
            values.push(v.clone());
            added.push((name.clone(), slot.clone(), v));
        }
    }
    Ok(added)
}

/// A parsed call -> `{"NAME": {slot: value}}`; `None` arguments are left out.
pub fn call_to_json(call: &PyValue) -> std::result::Result<Value, String> {
    let PyValue::Call { name, args } = call else {
        return Err(format!("expected a call, found {call}"));
    };
    let mut slots = Map::new();
    for (k, v) in args {
        match v {
            PyValue::None => {}
            PyValue::Str(s) => {
                slots.insert(k.clone(), json!(s));
            }
            other => {
                return Err(format!(
                    "slot `{k}`: expected a string or None, found {other}"
                ))
            }
        }
    }
    Ok(json!({ name.clone(): slots }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gold_calls_and_the_repair_rule() {
        let (v, r) = parse_gold_call("AddToPlaylist(playlist='x', music_item=None)").unwrap();
        assert_eq!(r, None);
        assert_eq!(
            call_to_json(&v).unwrap(),
            json!({"AddToPlaylist": {"playlist": "x"}})
        );
        let (v, r) = parse_gold_call("AddToPlaylist(artist='a')\",").unwrap();
        assert_eq!(r.as_deref(), Some("\","));
        assert_eq!(
            call_to_json(&v).unwrap(),
            json!({"AddToPlaylist": {"artist": "a"}})
        );
        assert!(parse_gold_call("AddToPlaylist(artist='a') and more").is_err());
        assert!(parse_gold_call("AddToPlaylist(artist='a'").is_err());
        assert!(call_to_json(&pycall::parse("F(a=1)").unwrap()).is_err());
    }

    #[test]
    fn unreadable_record_is_an_error_with_file_and_index() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(
            dir.path().join("x_data_schema.json"),
            r#"{"F": {"a": ["p", "q"]}}"#,
        )
        .unwrap();
        std::fs::write(
            dir.path().join("x_data.json"),
            r#"[{"input": "p", "output": ["F(a='p')"]}, {"input": "q", "output": ["F(a='q'"]}]"#,
        )
        .unwrap();
        let out = tempfile::tempdir().unwrap();
        let e = import_apimix(dir.path(), out.path())
            .unwrap_err()
            .to_string();
        assert!(e.contains("x_data.json:record 1: output[0]"), "{e}");
        // A slot outside the schema file is an error; a value outside its list is added.
        std::fs::write(
            dir.path().join("x_data.json"),
            r#"[{"input": "p", "output": ["F(b='p')"]}]"#,
        )
        .unwrap();
        let e = import_apimix(dir.path(), out.path())
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("x_data.json:record 0: output[0]") && e.contains("no slot `b`"),
            "{e}"
        );
        std::fs::write(
            dir.path().join("x_data.json"),
            r#"[{"input": "p", "output": ["F(a='z')"]}]"#,
        )
        .unwrap();
        let s = import_apimix(dir.path(), out.path()).unwrap();
        assert!(
            s.notes
                .iter()
                .any(|n| n.contains("F.a value \"z\" is not in x_data_schema.json")),
            "{:?}",
            s.notes
        );
    }

    /// Imports the set `name`: its full corpus, else its fixture (the same files, unchanged;
    /// `dss_data::corpus`, which requires the full corpus under `CI=true`).
    fn import_set(name: &str, stem: &str) {
        let corpus = dss_data::corpus(name).unwrap_or_else(|e| panic!("{e}"));
        eprintln!("corpus {name}: {corpus}");
        let out = tempfile::tempdir().unwrap();
        let summary = import_apimix(corpus.path(), out.path()).unwrap();
        assert_eq!(summary.cases, 103);
        let suite = Suite::load(out.path()).unwrap();
        assert_eq!(suite.meta.name, format!("apimix-{stem}"));
        assert_eq!(suite.cases.len(), 103);
        crate::testdata::assert_golds_round_trip(&suite);
        if stem == "snips" {
            assert_eq!(summary.repairs.len(), 1, "{:?}", summary.repairs);
            assert!(
                summary.repairs[0].starts_with("snips_data.json record 56 output[1]"),
                "{:?}",
                summary.repairs
            );
            assert!(suite.meta.notes.iter().any(|n| n.contains("record 56")));
            // One gold value is missing from the schema file's list; it is added and noted.
            assert!(
                suite.meta.notes.iter().any(|n| n.contains(
                    "record 3 output[1]: RateBook.object_name value \"shadow of suribachi\""
                )),
                "{:?}",
                suite.meta.notes
            );
            assert_eq!(
                suite.cases[56].gold[1],
                json!({"AddToPlaylist": {"artist": "jency anthony", "playlist_owner": "my", "playlist": "this is mozart"}})
            );
            // `music_item = 'pangaea'` (spaces around `=`) is read too.
            assert_eq!(
                suite.cases[19].gold[0]["AddToPlaylist"]["music_item"],
                "pangaea"
            );
        } else {
            assert!(summary.repairs.is_empty());
            assert_eq!(
                suite.cases[1].gold[0],
                json!({"atis_airfare": {"departure_city": "nashville", "destination_city": "seattle"}})
            );
        }
        // Every gold value is in its catalog.
        for c in &suite.cases {
            for (slot, value) in crate::score::gold_pairs(&c.gold, suite.catalogs.keys()) {
                assert!(
                    suite.catalogs[&slot].contains(&json!(value)),
                    "{} {slot} {value}",
                    c.id
                );
            }
        }
    }

    #[test]
    fn imports_apimix_snips() {
        import_set("APIMixSNIPS", "snips");
    }

    #[test]
    fn imports_apimix_atis() {
        import_set("APIMixATIS", "atis");
    }
}
