//! The `type` keyword, and what a grammar can say of the numbers and strings it admits:
//! lower bounds (`minimum`/`exclusiveMinimum`) and lexical forms (`minLength`, asserted
//! `format`s).

use crate::shape::model::{Lexical, Lower, NumPart, Parts};
use serde_json::{Map, Value};

/// Restricts `parts` (every type) to the types `type` names, and gives its numbers and
/// strings the bounds and lexical forms a grammar can say.
pub(super) fn lower_type(m: &Map<String, Value>, formats_assert: bool, parts: &mut Parts) {
    if let Some(t) = m.get("type") {
        let names: Vec<&str> = match t {
            Value::String(s) => vec![s.as_str()],
            Value::Array(xs) => xs.iter().filter_map(Value::as_str).collect(),
            _ => vec!["null", "boolean", "number", "string", "array", "object"],
        };
        let has = |n: &str| names.contains(&n);
        parts.null = has("null");
        parts.bool_false = has("boolean");
        parts.bool_true = has("boolean");
        parts.number = (has("number") || has("integer")).then(|| NumPart {
            integer: !has("number"),
            values: None,
            lower: None,
        });
        if !has("string") {
            parts.string = None;
        }
        if !has("array") {
            parts.array = None;
        }
        if !has("object") {
            parts.object = None;
        }
    }
    if let Some(np) = &mut parts.number {
        np.lower = lower_bound(m, np.integer);
    }
    if let Some(sp) = &mut parts.string {
        sp.lexical = lexical_form(m, formats_assert);
    }
}

/// What `minimum`/`exclusiveMinimum` let a grammar say about a number.
fn lower_bound(m: &Map<String, Value>, integer: bool) -> Option<Lower> {
    let min = m.get("minimum").and_then(Value::as_f64);
    let exclusive = match m.get("exclusiveMinimum") {
        Some(Value::Bool(true)) => min, // draft-04
        Some(v) => v.as_f64(),
        None => None,
    };
    // Above 0 (an integer is then at least 1), or at least 0.
    let strict = exclusive.is_some_and(|e| e >= 0.0) || min.is_some_and(|x| x >= 1.0);
    let loose = min.is_some_and(|x| x >= 0.0) || strict;
    match (strict && integer, loose) {
        (true, _) => Some(Lower::Positive),
        (false, true) => Some(Lower::NonNegative),
        _ => None,
    }
}

/// What `format` (when it asserts) and `minLength` let a grammar say about a string.
fn lexical_form(m: &Map<String, Value>, formats_assert: bool) -> Option<Lexical> {
    match m.get("format").and_then(Value::as_str) {
        Some("date") if formats_assert => return Some(Lexical::Date),
        Some("date-time") if formats_assert => return Some(Lexical::DateTime),
        _ => {}
    }
    m.get("minLength")
        .and_then(Value::as_u64)
        .is_some_and(|n| n >= 1)
        .then_some(Lexical::NonEmpty)
}
