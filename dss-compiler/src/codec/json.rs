//! JSON values: equality by value, and writing them as shorthand tokens.

use super::node::{JsonNode, View};
use crate::grammar::terminal::is_word;
use crate::shape::same_json;
use serde_json::{Number, Value};

/// JSON values are equal as dss's round trip promises them: object key order ignored,
/// numbers compared by value (`1` equals `1.0`; integers exactly).
///
/// ```
/// use dss_compiler::codec::json_eq;
/// use serde_json::json;
/// assert!(json_eq(&json!({"a": 1, "b": [2.0]}), &json!({"b": [2], "a": 1.0})));
/// assert!(!json_eq(&json!("1"), &json!(1)));
/// ```
pub fn json_eq(a: &Value, b: &Value) -> bool {
    same_json(a, b)
}

/// A string as a token: bare if a word, else quoted.
pub(super) fn write_word(s: &str, out: &mut String) {
    if is_word(s) {
        out.push_str(s);
    } else {
        write_json_string(s, out);
    }
}

pub(super) fn write_number(n: &Number, out: &mut String) {
    use std::fmt::Write;
    let _ = write!(out, "{n}");
}

/// A JSON string literal, appended without an intermediate allocation.
pub(super) fn write_json_string(s: &str, out: &mut String) {
    if !super::out::needs_escape(s.as_bytes()) {
        out.push('"');
        out.push_str(s);
        out.push('"');
    } else {
        out.push_str(&serde_json::to_string(s).unwrap_or_default());
    }
}

pub(super) fn type_name<N: JsonNode>(v: &N) -> &'static str {
    match v.view() {
        View::Null => "null",
        View::Bool(_) => "boolean",
        View::Number(_) => "number",
        View::String(_) => "string",
        View::Array(_) => "array",
        View::Object(_) => "object",
    }
}
