//! The request's restriction applied to the JSON Schema itself: what a model writing
//! compact JSON (not shorthand) may write under the same extraction and pruning, for a
//! JSON generation grammar (llguidance reads JSON Schema). It is the baseline that
//! separates the notation's effect from pruning's (`dss eval --conditions gp-json`).
//!
//! The rules follow the shorthand grammar's pruning ([`Restriction`]), leaf by leaf:
//! - an `enum`/`const` site takes the values found for it; nothing found: an optional
//!   field is left out, a required one keeps the schema's values;
//! - a string site takes the values found, and where it is a span site
//!   ([`Restriction::span_sites`]) the request's spans as its [`SpanPolicy`] offers them
//!   (any span of at most [`MAX_SPAN_WORDS`] words where it offers any); nothing: left out
//!   (optional) or unpruned (required). A free string no catalog binds and no span reaches
//!   stays free;
//! - a number site takes the values found and, where it is a number site
//!   ([`Restriction::number_sites`]), the request's numbers, within the schema's type and
//!   bounds;
//! - a `oneOf`/`anyOf` branch (a kind of record) is kept where a value was found inside it;
//!   none: every branch is kept;
//! - an optional property with a value found inside it is required: where `gp` holds a
//!   line open until its found values are written, a JSON Schema can only require them.
//!
//! One schema per request: JSON has no lines, so there is no per-line consumption (the
//! shorthand grammar's iterative pruning); `$ref`s are left unpruned.

use super::prune::{same_value, Restriction, SpanPolicy};
use serde_json::{Map, Value};

/// The most words of a span offered at a span site with no narrowing policy.
const MAX_SPAN_WORDS: usize = 6;
/// The most spans offered at one site.
const MAX_SPANS: usize = 256;

impl Restriction {
    /// `schema` (a JSON Schema whose instance paths are this restriction's site paths)
    /// with each site narrowed to what the request gives (see the module docs). Where
    /// nothing at all could be written, the schema unchanged.
    pub fn pruned_schema(&self, schema: &Value) -> Value {
        prune(self, schema, "", 0).unwrap_or_else(|| schema.clone())
    }
}

/// Nesting beyond which a schema is left as it is.
const MAX_DEPTH: usize = 64;

/// The pruned schema at instance path `path`; `None`: nothing the request gives can be
/// written here (the caller leaves an optional field out).
fn prune(r: &Restriction, schema: &Value, path: &str, depth: usize) -> Option<Value> {
    let Value::Object(o) = schema else {
        return Some(schema.clone());
    };
    if depth > MAX_DEPTH || o.contains_key("$ref") {
        return Some(schema.clone());
    }
    for key in ["oneOf", "anyOf"] {
        if let Some(Value::Array(branches)) = o.get(key) {
            let found: Vec<&Value> = branches
                .iter()
                .filter(|b| found_inside(r, b, path, depth + 1))
                .collect();
            let chosen = if found.is_empty() {
                branches.iter().collect()
            } else {
                found
            };
            let kept: Vec<Value> = chosen
                .into_iter()
                .filter_map(|b| prune(r, b, path, depth + 1))
                .collect();
            if kept.is_empty() {
                return None;
            }
            let mut out = o.clone();
            out.insert(key.into(), Value::Array(kept));
            return Some(Value::Object(out));
        }
    }
    if let Some(values) = closed_values(o) {
        let found: Vec<Value> = r
            .at(path)
            .iter()
            .filter(|v| values.iter().any(|e| same_value(e, v)))
            .cloned()
            .collect();
        return (!found.is_empty()).then(|| enum_of(dedup(found)));
    }
    match type_of(o) {
        Some("object") => Some(prune_object(r, o, path, depth)),
        Some("array") => {
            let items = o.get("items")?;
            let item_path = format!("{path}/*");
            let pruned = prune(r, items, &item_path, depth + 1)?;
            let mut out = o.clone();
            out.insert("items".into(), pruned);
            Some(Value::Object(out))
        }
        Some("string") => prune_string(r, o, path),
        Some("integer" | "number") => prune_number(r, o, path),
        _ => Some(schema.clone()),
    }
}

/// An object's properties pruned: an optional one with nothing to write is left out, a
/// required one kept as the schema has it, and an optional one with a value found inside
/// it required (as `gp`'s found values ask for their line and hold it open).
fn prune_object(r: &Restriction, o: &Map<String, Value>, path: &str, depth: usize) -> Value {
    let mut out = o.clone();
    let mut required: Vec<String> = o
        .get("required")
        .and_then(Value::as_array)
        .map(|a| {
            a.iter()
                .filter_map(Value::as_str)
                .map(str::to_string)
                .collect()
        })
        .unwrap_or_default();
    if let Some(Value::Object(props)) = o.get("properties") {
        let mut kept = Map::new();
        for (k, sub) in props {
            let sub_path = format!("{path}/{}", escape(k));
            let is_required = required.contains(k);
            match prune(r, sub, &sub_path, depth + 1) {
                Some(p) => {
                    if !is_required && found_inside(r, sub, &sub_path, depth + 1) {
                        required.push(k.clone());
                    }
                    kept.insert(k.clone(), p);
                }
                None if is_required => {
                    kept.insert(k.clone(), sub.clone());
                }
                None => {}
            }
        }
        out.insert("properties".into(), Value::Object(kept));
        if !required.is_empty() {
            out.insert(
                "required".into(),
                Value::Array(required.into_iter().map(Value::String).collect()),
            );
        }
    }
    Value::Object(out)
}

fn prune_string(r: &Restriction, o: &Map<String, Value>, path: &str) -> Option<Value> {
    let open = r.span_sites.contains(path);
    let bound = r.bound.contains(path) || !r.at(path).is_empty();
    if !open && !bound {
        return Some(Value::Object(o.clone()));
    }
    let mut values: Vec<Value> = r
        .at(path)
        .iter()
        .filter(|v| v.is_string())
        .cloned()
        .collect();
    if open {
        let policy = r
            .span_policy
            .get(path)
            .cloned()
            .unwrap_or(SpanPolicy::default());
        let spans = policy
            .offered(&r.spans, MAX_SPAN_WORDS, false)
            .unwrap_or_else(|| r.spans.texts(MAX_SPAN_WORDS));
        values.extend(spans.into_iter().take(MAX_SPANS).map(Value::String));
    }
    // A pattern the regex crate cannot read admits nothing, as before a value is offered.
    let pattern = o
        .get("pattern")
        .and_then(Value::as_str)
        .map(|p| regex::Regex::new(p).ok());
    let values: Vec<Value> = values
        .into_iter()
        .filter(|v| string_fits(o, pattern.as_ref(), v))
        .collect();
    (!values.is_empty()).then(|| enum_of(dedup(values)))
}

fn prune_number(r: &Restriction, o: &Map<String, Value>, path: &str) -> Option<Value> {
    let open = r.number_sites.contains(path);
    let bound = r.bound.contains(path) || !r.at(path).is_empty();
    if !open && !bound {
        return Some(Value::Object(o.clone()));
    }
    let mut values: Vec<Value> = r.at(path).to_vec();
    if open {
        values.extend(r.numbers.iter().cloned());
    }
    let values: Vec<Value> = values.into_iter().filter(|v| number_fits(o, v)).collect();
    (!values.is_empty()).then(|| enum_of(dedup(values)))
}

/// Whether a value was found anywhere inside `schema` (at `path` or below).
fn found_inside(r: &Restriction, schema: &Value, path: &str, depth: usize) -> bool {
    let Value::Object(o) = schema else {
        return false;
    };
    if depth > MAX_DEPTH {
        return false;
    }
    if !r.at(path).is_empty() && o.get("properties").is_none() {
        return true;
    }
    let branches = ["oneOf", "anyOf", "allOf"]
        .iter()
        .filter_map(|k| o.get(*k).and_then(Value::as_array))
        .flatten();
    for b in branches {
        if found_inside(r, b, path, depth + 1) {
            return true;
        }
    }
    if let Some(Value::Object(props)) = o.get("properties") {
        for (k, sub) in props {
            if found_inside(r, sub, &format!("{path}/{}", escape(k)), depth + 1) {
                return true;
            }
        }
    }
    if let Some(items) = o.get("items") {
        if found_inside(r, items, &format!("{path}/*"), depth + 1) {
            return true;
        }
    }
    false
}

/// The values an `enum` or `const` allows.
fn closed_values(o: &Map<String, Value>) -> Option<Vec<Value>> {
    if let Some(Value::Array(e)) = o.get("enum") {
        return Some(e.clone());
    }
    o.get("const").map(|c| vec![c.clone()])
}

fn type_of(o: &Map<String, Value>) -> Option<&str> {
    match o.get("type") {
        Some(Value::String(t)) => Some(t),
        _ if o.contains_key("properties") => Some("object"),
        _ if o.contains_key("items") => Some("array"),
        _ => None,
    }
}

fn enum_of(values: Vec<Value>) -> Value {
    let mut m = Map::new();
    m.insert("enum".into(), Value::Array(values));
    Value::Object(m)
}

fn dedup(values: Vec<Value>) -> Vec<Value> {
    let mut out: Vec<Value> = Vec::new();
    for v in values {
        if !out.iter().any(|x| same_value(x, &v)) {
            out.push(v);
        }
    }
    out
}

/// A property name as a site path segment writes it (JSON Pointer escaping).
fn escape(k: &str) -> String {
    k.replace('~', "~0").replace('/', "~1")
}

/// Whether `v` is a string within `o`'s lengths and `pattern` (compiled once per site:
/// `Some(None)` where the schema's pattern does not compile).
fn string_fits(o: &Map<String, Value>, pattern: Option<&Option<regex::Regex>>, v: &Value) -> bool {
    let Some(s) = v.as_str() else {
        return false;
    };
    let n = s.chars().count() as u64;
    let min_ok = o
        .get("minLength")
        .and_then(Value::as_u64)
        .is_none_or(|m| n >= m);
    let max_ok = o
        .get("maxLength")
        .and_then(Value::as_u64)
        .is_none_or(|m| n <= m);
    let pattern_ok = pattern.is_none_or(|re| re.as_ref().is_some_and(|re| re.is_match(s)));
    min_ok && max_ok && pattern_ok
}

fn number_fits(o: &Map<String, Value>, v: &Value) -> bool {
    let Some(x) = v.as_f64() else {
        return false;
    };
    let integer = o.get("type").and_then(Value::as_str) == Some("integer");
    let bound = |k: &str| o.get(k).and_then(Value::as_f64);
    (!integer || x.fract() == 0.0)
        && bound("minimum").is_none_or(|m| x >= m)
        && bound("maximum").is_none_or(|m| x <= m)
        && bound("exclusiveMinimum").is_none_or(|m| x > m)
        && bound("exclusiveMaximum").is_none_or(|m| x < m)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// A venue's order list, written for this test: two kinds of record.
    fn orders() -> Value {
        json!({
            "type": "array",
            "items": {"oneOf": [
                {"type": "object", "required": ["pizza"], "properties": {"pizza": {
                    "type": "object", "required": ["count"], "properties": {
                        "count": {"type": "integer", "minimum": 1},
                        "size": {"enum": ["small", "medium", "large"]},
                        "note": {"type": "string", "maxLength": 12}
                    }}}},
                {"type": "object", "required": ["drink"], "properties": {"drink": {
                    "type": "object", "required": ["kind"], "properties": {
                        "kind": {"enum": ["cola", "water"]},
                        "size": {"enum": ["small", "large"]}
                    }}}}
            ]}
        })
    }

    fn restriction() -> Restriction {
        let mut r = Restriction::default();
        r.candidates
            .insert("/*/pizza/size".into(), vec![json!("large"), json!("huge")]);
        r.numbers = vec![json!(2), json!(2.5), json!(0)];
        r.number_sites.insert("/*/pizza/count".into());
        r.span_sites.insert("/*/pizza/note".into());
        r.spans = crate::grammar::prune::Spans::of("two large pizzas extra crispy please");
        r
    }

    #[test]
    fn each_site_takes_what_the_request_gives_within_the_schema() {
        let pruned = restriction().pruned_schema(&orders());
        // The drink record has nothing found: its branch is gone.
        let branches = pruned["items"]["oneOf"].as_array().expect("branches");
        assert_eq!(branches.len(), 1, "{pruned:#}");
        let pizza = &branches[0]["properties"]["pizza"]["properties"];
        // Found values outside the enum are not offered; a found one is written.
        assert_eq!(pizza["size"], json!({"enum": ["large"]}));
        let required = &branches[0]["properties"]["pizza"]["required"];
        assert_eq!(required, &json!(["count", "size"]));
        // Numbers of the request within the type and bounds.
        assert_eq!(pizza["count"], json!({"enum": [2]}));
        // Spans, within maxLength.
        let notes = pizza["note"]["enum"].as_array().expect("spans");
        assert!(notes.contains(&json!("extra crispy")), "{notes:?}");
        assert!(notes
            .iter()
            .all(|n| n.as_str().is_some_and(|s| s.len() <= 12)));
    }

    #[test]
    fn required_fields_stay_and_nothing_found_keeps_every_branch() {
        let r = Restriction::default();
        let pruned = r.pruned_schema(&orders());
        let branches = pruned["items"]["oneOf"].as_array().expect("branches");
        assert_eq!(branches.len(), 2);
        let drink = &branches[1]["properties"]["drink"]["properties"];
        // Required `kind` with nothing found keeps its values; optional `size` is left out.
        assert_eq!(drink["kind"], json!({"enum": ["cola", "water"]}));
        assert!(drink.get("size").is_none(), "{drink:#}");
    }

    #[test]
    fn every_instance_of_the_pruned_schema_is_one_of_the_schema() {
        let pruned = restriction().pruned_schema(&orders());
        let narrow = jsonschema::validator_for(&pruned).expect("pruned schema compiles");
        let full = jsonschema::validator_for(&orders()).expect("schema compiles");
        for doc in [
            json!([{"pizza": {"count": 2, "size": "large"}}]),
            json!([{"pizza": {"count": 2, "size": "large", "note": "extra crispy"}}]),
        ] {
            assert!(narrow.is_valid(&doc), "{doc}");
            assert!(full.is_valid(&doc), "{doc}");
        }
        for doc in [
            json!([{"pizza": {"count": 3}}]),
            json!([{"pizza": {"count": 2, "size": "small"}}]),
            json!([{"drink": {"kind": "cola"}}]),
            json!([{"pizza": {"count": 2}}]),
        ] {
            assert!(!narrow.is_valid(&doc), "{doc}");
        }
    }
}
