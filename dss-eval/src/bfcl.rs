//! `import bfcl FILE --answers FILE`: the Berkeley Function Calling Leaderboard's questions
//! (`BFCL_v4_<category>.json`) and their ground truth (`possible_answer_BFCL_v4_<category>.json`).
//!
//! Both files are JSON Lines. A question is `{"id", "question": [[{"role", "content"}, …]],
//! "function": [{"name", "description", "parameters"}, …]}`; its answer `{"id",
//! "ground_truth": [{FUNCTION: {parameter: [acceptable values]}}, …]}`, where `""` among a
//! parameter's values means it may be left out.
//!
//! Each question becomes a case that carries its own tool set ([`Case::tools`]): the
//! functions with BFCL's type names mapped as BFCL's own OpenAI handler maps them
//! ([`map_types`]: `dict` → `object`, `float` → `number`, `tuple` → `array`, …, recursively
//! in `properties` and `items`), except `any`, which becomes no type constraint. The request
//! is the content of the user's messages (one per line); system messages are kept in the
//! case's `system` field. The ground truth is kept whole in [`Case::acceptable`], which the
//! `bfcl-ast` scorer reads ([`crate::bfcl_ast`]); the gold is its first acceptable answer
//! in the shape of `dss_compiler`'s tool calls, `[{"<tool>": {<arguments>}}]` (for each
//! parameter its first acceptable value, left out where that is `""` and the parameter is
//! optional).
//!
//! An `enum` of non-array values beside `"type": "array"` (BFCL's `live_simple_71-35-0`: no
//! array can equal a string) constrains the items: it is moved into `items`, a repair
//! listed in [`ImportSummary::repairs`] and the notes. A question whose gold does not
//! validate against its own tools (a required parameter with no acceptable value, a value
//! the parameter's schema refuses) is left out of the suite, each listed in the suite's notes; a question whose first acceptable answer
//! BFCL's checker itself rejects (a parameter whose acceptable values are an empty list, or
//! that the function does not declare) is kept, and listed too. A malformed line is an error naming the file, the line and what
//! was expected.

use crate::error::{EvalError, Result};
use crate::suite::{Case, PaperRule, Scoring, Suite, SuiteMeta};
use crate::{read_license, ImportSummary, SpecCache};
use serde_json::{json, Map, Value};
use std::collections::HashMap;
use std::path::Path;

/// BFCL's type names and the JSON Schema types its OpenAI handler sends instead
/// (`GORILLA_TO_OPENAPI`). `any` and `Any` are not here: they become no type constraint.
const TYPES: &[(&str, &str)] = &[
    ("integer", "integer"),
    ("number", "number"),
    ("float", "number"),
    ("string", "string"),
    ("boolean", "boolean"),
    ("bool", "boolean"),
    ("array", "array"),
    ("list", "array"),
    ("dict", "object"),
    ("object", "object"),
    ("tuple", "array"),
    ("byte", "integer"),
    ("short", "integer"),
    ("long", "integer"),
    ("double", "number"),
    ("char", "string"),
    ("ArrayList", "array"),
    ("Array", "array"),
    ("HashMap", "object"),
    ("Hashtable", "object"),
    ("Queue", "array"),
    ("Stack", "array"),
    ("String", "string"),
    ("Bigint", "integer"),
];

/// A schema in BFCL's type names as JSON Schema: each `type` mapped by `TYPES`, `any`
/// removed (no constraint), an unknown name read as `string` (as BFCL's handler does), a
/// property without a `type` given `string` (as BFCL's handler does); recursively through
/// `properties`, `items` and `additionalProperties`. Other keywords are kept.
pub fn map_types(schema: &Value) -> Value {
    map_node(schema, false)
}

fn map_node(schema: &Value, property: bool) -> Value {
    let Value::Object(m) = schema else {
        return schema.clone();
    };
    let mut out = Map::new();
    for (k, v) in m {
        match k.as_str() {
            "type" => {
                if let Value::String(t) = v {
                    if t.eq_ignore_ascii_case("any") {
                        continue;
                    }
                    let mapped = TYPES
                        .iter()
                        .find(|(from, _)| from == t)
                        .map_or("string", |(_, to)| to);
                    out.insert(k.clone(), json!(mapped));
                } else {
                    out.insert(k.clone(), v.clone());
                }
            }
            "properties" => {
                let props = match v {
                    Value::Object(p) => Value::Object(
                        p.iter()
                            .map(|(name, s)| (name.clone(), map_node(s, true)))
                            .collect(),
                    ),
                    other => other.clone(),
                };
                out.insert(k.clone(), props);
            }
            "items" => {
                let items = match v {
                    Value::Array(list) => {
                        Value::Array(list.iter().map(|s| map_node(s, false)).collect())
                    }
                    other => map_node(other, false),
                };
                out.insert(k.clone(), items);
            }
            "additionalProperties" => {
                out.insert(k.clone(), map_node(v, false));
            }
            _ => {
                out.insert(k.clone(), v.clone());
            }
        }
    }
    if property && !m.contains_key("type") {
        out.insert("type".into(), json!("string"));
    }
    Value::Object(out)
}

/// Repairs, in a mapped schema, an `enum` of values that are no arrays beside `"type":
/// "array"` (no array could be one of them): it constrains the items, so it is moved into
/// `items`. Returns the instance paths repaired (`/metrics`), recursively through
/// `properties` and `items`.
pub fn repair_array_enums(schema: &mut Value) -> Vec<String> {
    let mut out = Vec::new();
    repair_at(schema, String::new(), &mut out);
    out
}

fn repair_at(schema: &mut Value, at: String, out: &mut Vec<String>) {
    let Value::Object(m) = schema else {
        return;
    };
    let scalar_enum = m.get("type").and_then(Value::as_str) == Some("array")
        && m.get("enum")
            .and_then(Value::as_array)
            .is_some_and(|e| !e.is_empty() && e.iter().all(|v| !v.is_array()));
    if scalar_enum {
        if let Some(e) = m.remove("enum") {
            let items = m.entry("items").or_insert_with(|| json!({}));
            if let Value::Object(items) = items {
                items.insert("enum".into(), e);
                out.push(if at.is_empty() {
                    "/".into()
                } else {
                    at.clone()
                });
            }
        }
    }
    if let Some(Value::Object(props)) = m.get_mut("properties") {
        for (name, sub) in props.iter_mut() {
            repair_at(sub, format!("{at}/{name}"), out);
        }
    }
    if let Some(items @ Value::Object(_)) = m.get_mut("items") {
        repair_at(items, format!("{at}/*"), out);
    }
}

/// One parsed question line.
struct Question {
    id: String,
    line: usize,
    request: String,
    system: Vec<String>,
    tools: Vec<Value>,
    /// The repairs made to its tools ([`repair_array_enums`]), as `FUNCTION/path`.
    repaired: Vec<String>,
}

/// Imports BFCL questions (`questions`, JSON Lines) with their ground truth (`answers`,
/// JSON Lines) into a suite folder `out`, one case per question with its own tools; checks
/// that each case's tools compile with dss and its gold compresses and expands back equal.
pub fn import_bfcl(questions: &Path, answers: &Path, out: &Path) -> Result<ImportSummary> {
    let qs = read_questions(questions)?;
    let mut truth = read_answers(answers)?;
    let qfile = file_name(questions);
    let afile = file_name(answers);
    let mut specs = SpecCache::default();
    let mut cases = Vec::new();
    let mut left_out = Vec::new();
    let mut unsatisfiable = Vec::new();
    let mut repairs = Vec::new();
    for q in qs {
        let Some((_, ground)) = truth.remove(&q.id) else {
            return Err(EvalError::format(
                questions,
                Some(q.line.to_string()),
                format!("question `{}` has no answer in {afile}", q.id),
            ));
        };
        for r in &q.repaired {
            repairs.push(format!(
                "{qfile} line {} `{}`: the `enum` of the array {r} constrains its items: moved into `items`",
                q.line, q.id
            ));
        }
        let tools = Value::Array(q.tools);
        let gold = gold_of(&ground, &tools);
        if let Err(why) = check_gold(&mut specs, &tools, &gold) {
            left_out.push(format!("{qfile} line {} `{}`: {why}", q.line, q.id));
            continue;
        }
        if let Err(why) = crate::bfcl_ast::check(&gold, &tools, &ground) {
            unsatisfiable.push(format!("{qfile} line {} `{}`: {why}", q.line, q.id));
        }
        let mut extra = Map::new();
        extra.insert("source".into(), json!({"file": qfile, "line": q.line}));
        if !q.system.is_empty() {
            extra.insert("system".into(), json!(q.system.join("\n")));
        }
        cases.push(Case {
            id: q.id,
            request: q.request,
            gold,
            tools: Some(tools),
            acceptable: Some(ground),
            extra,
        });
    }
    if let Some((id, (line, _))) = truth.iter().min_by_key(|(_, (line, _))| *line) {
        return Err(EvalError::format(
            answers,
            Some(line.to_string()),
            format!("answer `{id}` answers no question of {qfile}"),
        ));
    }
    let stem = qfile
        .strip_suffix(".json")
        .unwrap_or(&qfile)
        .trim_start_matches("BFCL_v4_")
        .replace('_', "-");
    let mut notes = vec![
        "Shape: each case carries its own tools (`tools`, BFCL's functions with BFCL's type names mapped as its OpenAI handler maps them; `any` is no type constraint); a document is a list of calls [{FUNCTION: {parameter: value}}].".to_string(),
        "The request is the content of the user's messages (one per line); system messages are in the case's `system` field.".to_string(),
        "`acceptable` holds BFCL's ground truth; em_paper is BFCL's AST checker on it (`bfcl-ast`), em is exact match against `gold`, the first acceptable answer.".to_string(),
        "Case ids are BFCL's question ids.".to_string(),
    ];
    if left_out.is_empty() {
        notes.push("No question was left out.".into());
    } else {
        notes.push(format!(
            "Left out: {} question(s) whose first acceptable answer does not validate against their own tools:",
            left_out.len()
        ));
        notes.extend(left_out.iter().map(|r| format!("  {r}")));
    }
    if repairs.is_empty() {
        notes.push("No tool definition needed a repair.".into());
    } else {
        notes.push("Repair rule: an `enum` of non-array values beside `\"type\": \"array\"` (no array can be one of them) constrains the items, and is moved into `items`. Repaired:".into());
        notes.extend(repairs.iter().map(|r| format!("  {r}")));
    }
    if !unsatisfiable.is_empty() {
        notes.push("Kept, though BFCL's checker rejects their first acceptable answer (an empty list of acceptable values, a parameter the function does not declare):".into());
        notes.extend(unsatisfiable.iter().map(|r| format!("  {r}")));
    }
    let dir = questions.parent().unwrap_or(Path::new("."));
    let suite = Suite {
        notation: None,
        meta: SuiteMeta {
            name: format!("bfcl-{stem}"),
            source: format!(
                "Berkeley Function Calling Leaderboard ({qfile}, {afile}; ShishirPatil/gorilla, berkeley-function-call-leaderboard)"
            ),
            license: read_license(dir),
            notes,
            scoring: Scoring {
                unordered: vec![String::new()],
                paper: PaperRule::BfclAst,
            },
        },
        schema: None,
        catalogs: Default::default(),
        aliases: Default::default(),
        cases,
        examples: Vec::new(),
    };
    crate::finish_import(&suite, out, repairs)
}

fn file_name(p: &Path) -> String {
    p.file_name()
        .and_then(|n| n.to_str())
        .unwrap_or("")
        .to_string()
}

/// The JSON value of each non-empty line, with its 1-based number.
fn json_lines(path: &Path) -> Result<Vec<(usize, Value)>> {
    let text = crate::suite::read(path)?;
    let mut out = Vec::new();
    for (i, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let v: Value = serde_json::from_str(line).map_err(|e| {
            EvalError::format(
                path,
                Some(format!("{}:{}", i + 1, e.column())),
                e.to_string(),
            )
        })?;
        out.push((i + 1, v));
    }
    Ok(out)
}

fn read_questions(path: &Path) -> Result<Vec<Question>> {
    let mut out: Vec<Question> = Vec::new();
    for (line, v) in json_lines(path)? {
        let err = |m: String| EvalError::format(path, Some(line.to_string()), m);
        let id = v
            .get("id")
            .and_then(Value::as_str)
            .ok_or_else(|| err("expected a string `id`".into()))?
            .to_string();
        if out.iter().any(|q| q.id == id) {
            return Err(err(format!("duplicate id `{id}`")));
        }
        let turns = v.get("question").and_then(Value::as_array).ok_or_else(|| {
            err(
                "expected `question`: a list of turns, each a list of {role, content} messages"
                    .into(),
            )
        })?;
        let mut users = Vec::new();
        let mut system = Vec::new();
        for (t, turn) in turns.iter().enumerate() {
            let messages = turn.as_array().ok_or_else(|| {
                err(format!(
                    "question[{t}]: expected a list of {{role, content}} messages"
                ))
            })?;
            for (m, msg) in messages.iter().enumerate() {
                let role = msg.get("role").and_then(Value::as_str);
                let content = msg.get("content").and_then(Value::as_str);
                let (Some(role), Some(content)) = (role, content) else {
                    return Err(err(format!(
                        "question[{t}][{m}]: expected a message with a string `role` and `content`"
                    )));
                };
                match role {
                    "user" => users.push(content.to_string()),
                    "system" => system.push(content.to_string()),
                    _ => {}
                }
            }
        }
        if users.is_empty() {
            return Err(err("the question has no user message".into()));
        }
        let functions = v.get("function").and_then(Value::as_array).ok_or_else(|| {
            err("expected `function`: a list of {name, description, parameters}".into())
        })?;
        let mut tools = Vec::with_capacity(functions.len());
        let mut repaired = Vec::new();
        for (f, func) in functions.iter().enumerate() {
            let name = func.get("name").and_then(Value::as_str);
            let params = func.get("parameters").filter(|p| p.is_object());
            let (Some(name), Some(params)) = (name, params) else {
                return Err(err(format!(
                    "function[{f}]: expected a string `name` and an object `parameters`"
                )));
            };
            let mut tool = Map::new();
            tool.insert("name".into(), json!(name));
            if let Some(d) = func.get("description") {
                tool.insert("description".into(), d.clone());
            }
            let mut params = map_types(params);
            repaired.extend(
                repair_array_enums(&mut params)
                    .into_iter()
                    .map(|p| format!("{name}{p}")),
            );
            tool.insert("parameters".into(), params);
            tools.push(Value::Object(tool));
        }
        if tools.is_empty() {
            return Err(err("`function` is an empty list".into()));
        }
        out.push(Question {
            id,
            line,
            request: users.join("\n"),
            system,
            tools,
            repaired,
        });
    }
    Ok(out)
}

/// Answers by id: (line, ground truth), each checked to be a list of one-key objects
/// `{FUNCTION: {parameter: [acceptable values]}}`.
fn read_answers(path: &Path) -> Result<HashMap<String, (usize, Value)>> {
    let mut out = HashMap::new();
    for (line, v) in json_lines(path)? {
        let err = |m: String| EvalError::format(path, Some(line.to_string()), m);
        let id = v
            .get("id")
            .and_then(Value::as_str)
            .ok_or_else(|| err("expected a string `id`".into()))?
            .to_string();
        let ground = v
            .get("ground_truth")
            .and_then(Value::as_array)
            .ok_or_else(|| {
                err("expected `ground_truth`: a list of {FUNCTION: {parameter: [acceptable values]}}".into())
            })?;
        for (c, call) in ground.iter().enumerate() {
            let params = call
                .as_object()
                .filter(|m| m.len() == 1)
                .and_then(|m| m.values().next())
                .and_then(Value::as_object)
                .ok_or_else(|| {
                    err(format!(
                        "ground_truth[{c}]: expected one {{FUNCTION: {{parameter: [acceptable values]}}}}"
                    ))
                })?;
            if let Some((p, _)) = params.iter().find(|(_, vals)| !vals.is_array()) {
                return Err(err(format!(
                    "ground_truth[{c}].{p}: expected a list of acceptable values"
                )));
            }
        }
        if out
            .insert(id.clone(), (line, Value::Array(ground.clone())))
            .is_some()
        {
            return Err(err(format!("duplicate id `{id}`")));
        }
    }
    Ok(out)
}

/// The first acceptable answer as tool calls `[{FUNCTION: {parameter: value}}]`.
pub fn gold_of(ground: &Value, tools: &Value) -> Value {
    let calls = ground.as_array().map(Vec::as_slice).unwrap_or_default();
    Value::Array(
        calls
            .iter()
            .filter_map(Value::as_object)
            .filter_map(|call| call.iter().next())
            .map(|(name, params)| {
                let schema = tool_parameters(tools, name);
                json!({ name: pick_object(params, schema, true) })
            })
            .collect(),
    )
}

/// The parameters' schema of the tool `name` in a function list.
pub(crate) fn tool_parameters<'a>(tools: &'a Value, name: &str) -> Option<&'a Value> {
    tools
        .as_array()?
        .iter()
        .find(|t| t.get("name").and_then(Value::as_str) == Some(name))?
        .get("parameters")
}

/// An object of acceptable-value lists as one object: each member its first acceptable
/// value that is not `null` (`null` only where nothing else is acceptable), spelled as the
/// member's `enum` spells it; left out where the first is `""` unless `schema` requires it
/// (then its first other value, or `""` where there is none); a member with no acceptable value, or that
/// `schema` does not declare, is left out.
///
/// `top`: the object is a call's parameters (members a function does not declare are left
/// out, and a dict member's answer is itself an object of acceptable-value lists); else it
/// is a dict parameter's answer, whose members' values are taken as they are.
fn pick_object(params: &Value, schema: Option<&Value>, top: bool) -> Value {
    let Some(params) = params.as_object() else {
        return params.clone();
    };
    let required = |p: &str| {
        schema
            .and_then(|s| s.get("required"))
            .and_then(Value::as_array)
            .is_some_and(|r| r.iter().any(|x| x.as_str() == Some(p)))
    };
    let declared = schema.and_then(|s| s.get("properties"));
    let mut out = Map::new();
    for (p, vals) in params {
        let vals = vals.as_array().map(Vec::as_slice).unwrap_or_default();
        let sub = declared.and_then(|ps| ps.get(p));
        // A parameter the function does not declare (BFCL's checker rejects it anyway).
        if top && declared.is_some() && sub.is_none() {
            continue;
        }
        let may_omit = !required(p) && vals.iter().any(|v| v.as_str() == Some(""));
        let chosen = match vals.first() {
            None => None,
            Some(Value::String(s)) if s.is_empty() && !required(p) => None,
            // The first value that is neither `""` nor `null` (which few schemas admit).
            Some(_) => match vals.iter().find(|v| v.as_str() != Some("") && !v.is_null()) {
                Some(v) => Some(v),
                None if may_omit => None,
                None => vals
                    .iter()
                    .find(|v| v.as_str() != Some(""))
                    .or(vals.first()),
            },
        };
        if let Some(v) = chosen {
            let v = match v {
                _ if top => pick_value(v, sub),
                Value::String(t) => Value::String(enum_spelling(t, sub)),
                other => other.clone(),
            };
            out.insert(p.clone(), v);
        }
    }
    Value::Object(out)
}

/// One acceptable value as the value itself: a dict parameter's answer is itself an object
/// of acceptable-value lists, a list of dicts' answer a list of such objects.
fn pick_value(v: &Value, schema: Option<&Value>) -> Value {
    let ty = schema.and_then(|s| s.get("type")).and_then(Value::as_str);
    match (ty, v) {
        (Some("object"), Value::Object(_)) => pick_object(v, schema, false),
        (_, Value::String(text)) => Value::String(enum_spelling(text, schema)),
        (Some("array"), Value::Array(items)) => {
            let item_schema = schema.and_then(|s| s.get("items"));
            let item_ty = item_schema
                .and_then(|s| s.get("type"))
                .and_then(Value::as_str);
            if item_ty == Some("object") {
                Value::Array(
                    items
                        .iter()
                        .map(|x| match x {
                            Value::Object(_) => pick_object(x, item_schema, false),
                            other => other.clone(),
                        })
                        .collect(),
                )
            } else {
                Value::Array(
                    items
                        .iter()
                        .map(|x| match x {
                            Value::String(t) => Value::String(enum_spelling(t, item_schema)),
                            other => other.clone(),
                        })
                        .collect(),
                )
            }
        }
        _ => v.clone(),
    }
}

/// A string as the schema's `enum` spells it, where the enum lists it in another spelling
/// BFCL's checker takes as the same ([`crate::bfcl_ast::standardize`]: `Any` for `any`).
fn enum_spelling(text: &str, schema: Option<&Value>) -> String {
    let Some(list) = schema.and_then(|s| s.get("enum")).and_then(Value::as_array) else {
        return text.to_string();
    };
    if list.iter().any(|e| e.as_str() == Some(text)) {
        return text.to_string();
    }
    let wanted = crate::bfcl_ast::standardize(text);
    list.iter()
        .filter_map(Value::as_str)
        .find(|e| crate::bfcl_ast::standardize(e) == wanted)
        .unwrap_or(text)
        .to_string()
}

/// The first parameter (`FUNCTION.parameter`) whose list of acceptable values is empty.
#[cfg(test)]
fn empty_acceptable(ground: &Value) -> Option<String> {
    ground
        .as_array()?
        .iter()
        .filter_map(Value::as_object)
        .flat_map(|c| c.iter())
        .find_map(|(f, params)| {
            params.as_object()?.iter().find_map(|(p, vals)| {
                vals.as_array()
                    .is_some_and(|v| v.is_empty())
                    .then(|| format!("{f}.{p}"))
            })
        })
}

/// Whether the gold validates against the calls of `tools` and round-trips through dss.
fn check_gold(
    specs: &mut SpecCache,
    tools: &Value,
    gold: &Value,
) -> std::result::Result<(), String> {
    let spec = specs
        .get(tools, None)
        .map_err(|e| format!("its tools do not compile: {e}"))?;
    let text = spec
        .compress(gold)
        .map_err(|e| format!("the first acceptable answer {gold} does not compress: {e}"))?;
    match spec.expand(&text) {
        Ok(back) if back == *gold => Ok(()),
        Ok(back) => Err(format!(
            "the shorthand {text:?} expands to {back}, not {gold}"
        )),
        Err(e) => Err(format!("the shorthand {text:?} does not expand: {e}")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The data directory's BFCL files, or the fixture's (`dss_data::corpus`: under
    /// `CI=true` the full corpus is required).
    fn bfcl_dir() -> std::path::PathBuf {
        let corpus = dss_data::corpus("bfcl").unwrap_or_else(|e| panic!("{e}"));
        eprintln!("corpus bfcl: {corpus}");
        corpus.path().to_path_buf()
    }

    #[test]
    fn every_imported_gold_passes_the_ast_checker() {
        let dir = bfcl_dir();
        for category in ["live_simple", "live_multiple"] {
            let q = dir.join(format!("BFCL_v4_{category}.json"));
            if !q.exists() {
                continue;
            }
            let a = dir.join(format!("possible_answer_BFCL_v4_{category}.json"));
            let out = tempfile::tempdir().unwrap();
            let summary = import_bfcl(&q, &a, out.path()).unwrap();
            let suite = Suite::load(out.path()).unwrap();
            assert_eq!(suite.cases.len(), summary.cases);
            assert!(suite.schema.is_none());
            assert_eq!(suite.meta.scoring.paper, PaperRule::BfclAst);
            let lines = crate::suite::read(&q).unwrap().lines().count();
            let kept_at = summary
                .notes
                .iter()
                .position(|n| n.starts_with("Kept, though"))
                .unwrap_or(summary.notes.len());
            let left_out = summary
                .notes
                .iter()
                .skip_while(|n| !n.starts_with("Left out:"))
                .skip(1)
                .take_while(|n| n.starts_with("  "))
                .count();
            let rejected = &summary.notes[kept_at..];
            assert_eq!(suite.cases.len() + left_out, lines, "{:#?}", summary.notes);
            // At most 2% of the questions have answers their own tools cannot take.
            assert!(left_out * 50 <= lines, "{:#?}", summary.notes);
            crate::testdata::assert_golds_round_trip(&suite);
            let mut unsatisfiable = 0;
            for c in &suite.cases {
                let r = crate::bfcl_ast::check(
                    &c.gold,
                    c.tools.as_ref().unwrap(),
                    c.acceptable.as_ref().unwrap(),
                );
                let noted = rejected.iter().any(|n| n.contains(&format!("`{}`", c.id)));
                if noted {
                    unsatisfiable += 1;
                }
                assert_eq!(r.is_err(), noted, "{}: {} {r:?}", c.id, c.gold);
                if empty_acceptable(c.acceptable.as_ref().unwrap()).is_some() {
                    assert!(noted, "{}", c.id);
                }
            }
            eprintln!(
                "{category}: {} cases, {left_out} left out, {unsatisfiable} unsatisfiable",
                suite.cases.len()
            );
        }
    }

    #[test]
    fn bad_records_name_the_file_and_line() {
        let dir = tempfile::tempdir().unwrap();
        let q = dir.path().join("BFCL_v4_x.json");
        let a = dir.path().join("possible_answer_BFCL_v4_x.json");
        let question = r#"{"id": "x_0", "question": [[{"role": "user", "content": "weather in Paris"}]], "function": [{"name": "w", "parameters": {"type": "dict", "properties": {"city": {"type": "string"}}, "required": ["city"]}}]}"#;
        let answer = r#"{"id": "x_0", "ground_truth": [{"w": {"city": ["Paris"]}}]}"#;
        let import = |qs: &str, ans: &str| {
            std::fs::write(&q, qs).unwrap();
            std::fs::write(&a, ans).unwrap();
            import_bfcl(&q, &a, &dir.path().join("suite")).map_err(|e| e.to_string())
        };
        assert_eq!(import(question, answer).map(|s| s.cases), Ok(1));
        let e = import(&format!("{question}\n{{\"id\": 3}}\n"), answer).unwrap_err();
        assert!(
            e.contains("BFCL_v4_x.json:2: expected a string `id`"),
            "{e}"
        );
        let e = import(&format!("{question}\n{{oops\n"), answer).unwrap_err();
        assert!(e.contains("BFCL_v4_x.json:2:2"), "{e}");
        let no_user = question.replace("\"user\"", "\"system\"");
        let e = import(&no_user, answer).unwrap_err();
        assert!(e.contains(":1: the question has no user message"), "{e}");
        let e = import(
            question,
            r#"{"id": "x_0", "ground_truth": [{"w": {"city": "Paris"}}]}"#,
        )
        .unwrap_err();
        assert!(
            e.contains("possible_answer_BFCL_v4_x.json:1: ground_truth[0].city: expected a list of acceptable values"),
            "{e}"
        );
        let e = import(question, r#"{"id": "x_1", "ground_truth": []}"#).unwrap_err();
        assert!(
            e.contains("BFCL_v4_x.json:1: question `x_0` has no answer"),
            "{e}"
        );
        let two = format!("{answer}\n{}", answer.replace("x_0", "x_9"));
        let e = import(question, &two).unwrap_err();
        assert!(
            e.contains("possible_answer_BFCL_v4_x.json:2: answer `x_9` answers no question"),
            "{e}"
        );
        // An answer naming a parameter the tool does not declare: left out, with a note.
        let s = import(
            question,
            r#"{"id": "x_0", "ground_truth": [{"w": {"town": ["Paris"]}}]}"#,
        )
        .unwrap();
        assert_eq!(s.cases, 0);
        assert!(
            s.notes.iter().any(|n| n.contains("`x_0`")),
            "{:#?}",
            s.notes
        );
    }

    #[test]
    fn types_are_mapped_recursively() {
        let params = json!({
            "type": "dict",
            "required": ["a"],
            "properties": {
                "a": {"type": "float", "description": "x"},
                "b": {"type": "tuple", "items": {"type": "dict", "properties": {"c": {"type": "any"}, "d": {}}}},
                "e": {"type": "any"},
                "f": {"type": "HashMap", "additionalProperties": {"type": "long"}},
                "g": {"type": "weird"}
            }
        });
        assert_eq!(
            map_types(&params),
            json!({
                "type": "object",
                "required": ["a"],
                "properties": {
                    "a": {"type": "number", "description": "x"},
                    "b": {"type": "array", "items": {"type": "object", "properties": {"c": {}, "d": {"type": "string"}}}},
                    "e": {},
                    "f": {"type": "object", "additionalProperties": {"type": "integer"}},
                    "g": {"type": "string"}
                }
            })
        );
    }

    #[test]
    fn the_gold_is_the_first_acceptable_answer() {
        let tools = json!([{"name": "set", "parameters": {"type": "object", "required": ["mode", "id"], "properties": {
            "mode": {"type": "string"}, "id": {"type": "string"}, "n": {"type": "integer"},
            "body": {"type": "object", "properties": {"speed": {"type": "string"}, "on": {"type": "boolean"}}},
            "rows": {"type": "array", "items": {"type": "object", "properties": {"k": {"type": "string"}}}}
        }}}]);
        let ground = json!([{"set": {
            "mode": ["", "cool"],
            "id": [""],
            "n": ["", 3],
            "body": [{"speed": ["HIGH", "high"], "on": ["", true]}],
            "rows": [[{"k": ["a"]}, {"k": ["b", "B"]}]]
        }}]);
        assert_eq!(
            gold_of(&ground, &tools),
            json!([{"set": {"mode": "cool", "id": "", "body": {"speed": "HIGH"}, "rows": [{"k": "a"}, {"k": "b"}]}}])
        );
        assert_eq!(empty_acceptable(&ground), None);
        assert_eq!(
            empty_acceptable(&json!([{"f": {"a": ["x"], "b": []}}])).as_deref(),
            Some("f.b")
        );
    }
}
