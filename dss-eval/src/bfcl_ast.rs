//! `bfcl-ast`: the Berkeley Function Calling Leaderboard's AST checker
//! (`bfcl_eval/eval_checker/ast_eval/ast_checker.py`, Python categories) on dss's tool calls.
//!
//! The output is a list of calls `[{"<function>": {<arguments>}}]`; the acceptable answers
//! are BFCL's ground truth, `[{FUNCTION: {parameter: [acceptable values]}}]`, and the
//! function definitions those of the case ([`crate::Case::tools`], types already mapped to
//! JSON Schema: `number` is BFCL's `float`, `object` its `dict`, a missing type its `any`,
//! checked as BFCL checks `any`, as a string).
//!
//! A call matches an answer when:
//! - it names the answer's function;
//! - every parameter the function requires is present;
//! - every parameter it gives is declared by the function and named by the answer;
//! - every value has the parameter's type, an integer passing for a `number` (BFCL converts
//!   an int to a float), or else the type of the answer's values (BFCL's "variable" case,
//!   then compared as is); a list's items have the items' type;
//! - every value is one of the acceptable ones: strings compared after BFCL's
//!   `standardize_string` ([`standardize`]: spaces and `,./-_*^` removed, lowercased, `'`
//!   read as `"`); a list equal item by item to an acceptable list (its strings
//!   standardized); a dict with only keys of an acceptable dict, each value among that
//!   key's acceptable values (strings standardized), every key it leaves out having `""`
//!   among them; a list of dicts item by item so; other values by Python's `==` (`1 ==
//!   1.0`);
//! - every parameter the answer names and the call leaves out has `""` among its values.
//!
//! The output must hold as many calls as the answer. One call is compared with the one
//! answer; several (a parallel answer) as BFCL does: each answer in turn takes the first
//! call not taken yet that matches it. Where BFCL checks a nested list's items strictly
//! (an int is not a float there), an int passes for a float at every depth here.

use serde_json::Value;
use thiserror::Error;

/// Why an output does not match the acceptable answers.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[non_exhaustive]
pub enum Mismatch {
    /// The output is not a list of one-key objects `{FUNCTION: {arguments}}`.
    #[error("the output is not a list of calls {{FUNCTION: {{arguments}}}}: {0}")]
    NotCalls(String),
    /// The number of calls differs from the answer's.
    #[error("wrong number of calls: expected {expected}, found {found}")]
    Count {
        /// Calls in the answer.
        expected: usize,
        /// Calls in the output.
        found: usize,
    },
    /// The call names another function.
    #[error("function `{expected}` not found in the call")]
    Function {
        /// The answer's function.
        expected: String,
    },
    /// A required parameter is missing.
    #[error("missing required parameter `{0}`")]
    MissingRequired(String),
    /// A parameter the function does not declare or the answer does not name.
    #[error("unexpected parameter `{0}`")]
    Unexpected(String),
    /// A value of the wrong type.
    #[error("parameter `{param}`: expected type {expected}, found {found}")]
    Type {
        /// The parameter.
        param: String,
        /// The type expected.
        expected: String,
        /// The value found.
        found: String,
    },
    /// A value that is none of the acceptable ones.
    #[error("parameter `{param}`: {value} is not one of {acceptable}")]
    Value {
        /// The parameter.
        param: String,
        /// The value found.
        value: String,
        /// The acceptable values.
        acceptable: String,
    },
    /// A parameter the answer names, left out although it may not be.
    #[error("parameter `{0}` left out, and the answer does not mark it optional")]
    MissingOptional(String),
    /// In a parallel answer, no remaining call matches the answer's call `index`.
    #[error("no call matches call {index} of the answer: {reason}")]
    NoMatch {
        /// The index of the answer's call.
        index: usize,
        /// Why the last call tried did not match.
        reason: Box<Mismatch>,
    },
    /// The case itself is malformed: an answer that is not `{FUNCTION: {parameter: [values]}}`,
    /// or a function the case's tools do not define.
    #[error("the case is malformed: {0}")]
    Case(String),
}

/// BFCL's `standardize_string`: spaces and `,./-_*^` removed, lowercased, `'` as `"`.
pub fn standardize(s: &str) -> String {
    s.chars()
        .filter(|c| !matches!(c, ' ' | ',' | '.' | '/' | '-' | '_' | '*' | '^'))
        .flat_map(char::to_lowercase)
        .map(|c| if c == '\'' { '"' } else { c })
        .collect()
}

/// Checks `output` (a list of calls) against `acceptable` (BFCL's ground truth) with the
/// function definitions `tools` (an OpenAI-style function list).
pub fn check(output: &Value, tools: &Value, acceptable: &Value) -> Result<(), Mismatch> {
    let answers = acceptable
        .as_array()
        .ok_or_else(|| Mismatch::Case("the acceptable answers are not a list".into()))?;
    let calls = output
        .as_array()
        .ok_or_else(|| Mismatch::NotCalls(short(output)))?;
    if calls.len() != answers.len() {
        return Err(Mismatch::Count {
            expected: answers.len(),
            found: calls.len(),
        });
    }
    if answers.len() == 1 {
        return check_call(&calls[0], tools, &answers[0]);
    }
    let mut taken = vec![false; calls.len()];
    for (i, answer) in answers.iter().enumerate() {
        let mut last = None;
        for (j, call) in calls.iter().enumerate() {
            if taken[j] {
                continue;
            }
            match check_call(call, tools, answer) {
                Ok(()) => {
                    taken[j] = true;
                    last = None;
                    break;
                }
                Err(e @ Mismatch::Case(_)) => return Err(e),
                Err(e) => last = Some(e),
            }
        }
        if let Some(reason) = last {
            return Err(Mismatch::NoMatch {
                index: i,
                reason: Box::new(reason),
            });
        }
    }
    Ok(())
}

/// BFCL's `simple_function_checker`: one call against one answer.
fn check_call(call: &Value, tools: &Value, answer: &Value) -> Result<(), Mismatch> {
    let (name, answer) = answer
        .as_object()
        .filter(|m| m.len() == 1)
        .and_then(|m| m.iter().next())
        .and_then(|(n, a)| Some((n, a.as_object()?)))
        .ok_or_else(|| {
            Mismatch::Case(format!(
                "an answer is not {{FUNCTION: {{parameter: [values]}}}}: {}",
                short(answer)
            ))
        })?;
    let params = crate::bfcl::tool_parameters(tools, name)
        .ok_or_else(|| Mismatch::Case(format!("the tools define no function `{name}`")))?;
    let declared = params.get("properties").and_then(Value::as_object);
    let call = call
        .as_object()
        .ok_or_else(|| Mismatch::NotCalls(short(call)))?;
    let Some(args) = call.get(name) else {
        return Err(Mismatch::Function {
            expected: name.clone(),
        });
    };
    let args = args
        .as_object()
        .ok_or_else(|| Mismatch::NotCalls(short(args)))?;
    let required = params.get("required").and_then(Value::as_array);
    for r in required.into_iter().flatten().filter_map(Value::as_str) {
        if !args.contains_key(r) {
            return Err(Mismatch::MissingRequired(r.to_string()));
        }
    }
    for (p, value) in args {
        let (Some(schema), Some(vals)) = (declared.and_then(|d| d.get(p)), answer.get(p)) else {
            return Err(Mismatch::Unexpected(p.clone()));
        };
        let vals = vals.as_array().map(Vec::as_slice).unwrap_or_default();
        check_param(p, value, schema, vals)?;
    }
    for (p, vals) in answer {
        let optional = vals
            .as_array()
            .is_some_and(|v| v.iter().any(|x| x.as_str() == Some("")));
        if !args.contains_key(p) && !optional {
            return Err(Mismatch::MissingOptional(p.clone()));
        }
    }
    Ok(())
}

/// Python's types of JSON values, as BFCL's type check sees them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Py {
    Str,
    Int,
    Float,
    Bool,
    List,
    Dict,
    None,
}

impl Py {
    fn of(v: &Value) -> Py {
        match v {
            Value::String(_) => Py::Str,
            Value::Number(n) if n.is_f64() => Py::Float,
            Value::Number(_) => Py::Int,
            Value::Bool(_) => Py::Bool,
            Value::Array(_) => Py::List,
            Value::Object(_) => Py::Dict,
            Value::Null => Py::None,
        }
    }

    /// The type a (mapped) schema asks for; no type is BFCL's `any`, checked as a string.
    fn expected(schema: Option<&Value>) -> Py {
        match schema.and_then(|s| s.get("type")).and_then(Value::as_str) {
            Some("integer") => Py::Int,
            Some("number") => Py::Float,
            Some("boolean") => Py::Bool,
            Some("array") => Py::List,
            Some("object") => Py::Dict,
            _ => Py::Str,
        }
    }

    fn name(self) -> &'static str {
        match self {
            Py::Str => "string",
            Py::Int => "integer",
            Py::Float => "number",
            Py::Bool => "boolean",
            Py::List => "array",
            Py::Dict => "object",
            Py::None => "null",
        }
    }
}

/// The type of a value, an int read as a float where a float is expected.
fn type_for(v: &Value, expected: Py) -> Py {
    match Py::of(v) {
        Py::Int if expected == Py::Float => Py::Float,
        t => t,
    }
}

/// The type of the first acceptable value that is not `""` (BFCL's
/// `get_possible_answer_type`).
fn answer_type(vals: &[Value]) -> Option<Py> {
    vals.iter().find(|v| v.as_str() != Some("")).map(Py::of)
}

/// BFCL's `type_checker`: `Ok(true)` where the value is a "variable" (of the answer's type,
/// not the parameter's), compared as is.
fn type_check(
    p: &str,
    value: &Value,
    vals: &[Value],
    expected: Py,
    nested: Option<Py>,
) -> Result<bool, Mismatch> {
    let answer = answer_type(vals);
    let variable = answer.is_some_and(|a| a != expected);
    let found = type_for(value, expected);
    if found == expected {
        let Some(inner) = nested else {
            return Ok(variable);
        };
        let items = value.as_array().map(Vec::as_slice).unwrap_or_default();
        // Each acceptable value that is a list must admit the items' type (one level).
        let fits = vals.iter().any(|a| match a.as_array() {
            Some(inner_vals) => items
                .iter()
                .all(|x| type_check(p, x, inner_vals, inner, None).is_ok()),
            None => true,
        });
        if fits {
            return Ok(variable);
        }
        return Err(Mismatch::Type {
            param: p.to_string(),
            expected: format!("{} of {}", expected.name(), inner.name()),
            found: short(value),
        });
    }
    if answer == Some(found) {
        return Ok(true);
    }
    Err(Mismatch::Type {
        param: p.to_string(),
        expected: expected.name().to_string(),
        found: short(value),
    })
}

/// One parameter's value against its acceptable values.
fn check_param(p: &str, value: &Value, schema: &Value, vals: &[Value]) -> Result<(), Mismatch> {
    let expected = Py::expected(Some(schema));
    let nested = (expected == Py::List)
        .then(|| schema.get("items"))
        .flatten()
        .map(|items| Py::expected(Some(items)));
    let variable = type_check(p, value, vals, expected, nested)?;
    let ok = if variable {
        vals.iter().any(|a| py_eq(value, a))
    } else {
        match (expected, nested) {
            (Py::Dict, _) => dict_ok(value, vals),
            (Py::List, Some(Py::Dict)) => list_dict_ok(value, vals),
            (Py::Str, _) => value.as_str().is_some_and(|s| {
                let s = standardize(s);
                vals.iter()
                    .filter_map(Value::as_str)
                    .any(|a| standardize(a) == s)
            }),
            (Py::List, _) => list_ok(value, vals),
            _ => vals.iter().any(|a| py_eq(value, a)),
        }
    };
    if ok {
        Ok(())
    } else {
        Err(Mismatch::Value {
            param: p.to_string(),
            value: short(value),
            acceptable: short(&Value::Array(vals.to_vec())),
        })
    }
}

/// A value as BFCL compares it after standardizing: a string standardized, else as is.
fn std_eq(value: &Value, acceptable: &Value) -> bool {
    match (value, acceptable) {
        (Value::String(a), Value::String(b)) => standardize(a) == standardize(b),
        (Value::String(_), _) | (_, Value::String(_)) => false,
        _ => py_eq(value, acceptable),
    }
}

/// BFCL's `list_checker`: equal item by item (strings standardized) to an acceptable list.
fn list_ok(value: &Value, vals: &[Value]) -> bool {
    let Some(items) = value.as_array() else {
        return false;
    };
    vals.iter().any(|a| match a {
        Value::Array(xs) => {
            xs.len() == items.len() && items.iter().zip(xs).all(|(v, x)| std_eq(v, x))
        }
        // `""` reads as an empty list in BFCL's loop over its characters.
        Value::String(s) => s.is_empty() && items.is_empty(),
        _ => false,
    })
}

/// BFCL's `dict_checker` against each acceptable dict (a `""` is skipped).
fn dict_ok(value: &Value, vals: &[Value]) -> bool {
    let Some(m) = value.as_object() else {
        return false;
    };
    vals.iter().filter_map(Value::as_object).any(|answer| {
        m.iter().all(|(k, v)| {
            answer
                .get(k)
                .and_then(Value::as_array)
                .is_some_and(|acc| acc.iter().any(|a| std_eq(v, a)))
        }) && answer.iter().all(|(k, acc)| {
            m.contains_key(k)
                || acc
                    .as_array()
                    .is_some_and(|a| a.iter().any(|x| x.as_str() == Some("")))
        })
    })
}

/// BFCL's `list_dict_checker`: as many dicts as an acceptable list, each matching its own.
fn list_dict_ok(value: &Value, vals: &[Value]) -> bool {
    let Some(items) = value.as_array() else {
        return false;
    };
    vals.iter().any(|a| {
        let answer: &[Value] = match a {
            Value::Array(xs) => xs,
            Value::String(s) if s.is_empty() => &[],
            _ => return false,
        };
        answer.len() == items.len()
            && items
                .iter()
                .zip(answer)
                .all(|(v, x)| dict_ok(v, std::slice::from_ref(x)))
    })
}

/// Python's `==` on JSON values: numbers by value (`1 == 1.0`, `True == 1`), lists item by
/// item, dicts key by key.
fn py_eq(a: &Value, b: &Value) -> bool {
    let num = |v: &Value| match v {
        Value::Number(n) => n.as_f64(),
        Value::Bool(b) => Some(if *b { 1.0 } else { 0.0 }),
        _ => None,
    };
    match (a, b) {
        (Value::Array(x), Value::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(p, q)| py_eq(p, q))
        }
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len() && x.iter().all(|(k, v)| y.get(k).is_some_and(|w| py_eq(v, w)))
        }
        (Value::Number(_) | Value::Bool(_), Value::Number(_) | Value::Bool(_)) => num(a) == num(b),
        _ => a == b,
    }
}

/// A value's JSON, cut to 80 characters for messages.
fn short(v: &Value) -> String {
    let t = v.to_string();
    if t.chars().count() > 80 {
        format!("{}…", t.chars().take(80).collect::<String>())
    } else {
        t
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn weather_tools() -> Value {
        json!([
            {"name": "get_weather", "parameters": {"type": "object", "required": ["city"], "properties": {
                "city": {"type": "string"},
                "unit": {"type": "string", "enum": ["celsius", "fahrenheit"]},
                "days": {"type": "integer"},
                "lat": {"type": "number"},
                "tags": {"type": "array", "items": {"type": "string"}},
                "opts": {"type": "object", "properties": {"mode": {"type": "string"}, "n": {"type": "integer"}}},
                "stops": {"type": "array", "items": {"type": "object", "properties": {"at": {"type": "string"}}}},
                "extra": {}
            }}},
            {"name": "get_time", "parameters": {"type": "object", "required": ["zone"], "properties": {
                "zone": {"type": "string"}
            }}}
        ])
    }

    fn answer() -> Value {
        json!([{"get_weather": {
            "city": ["San Francisco, CA", "San Francisco"],
            "unit": ["", "celsius"],
            "days": [3],
            "lat": [37.5],
            "tags": [["rain", "wind"], ""],
            "opts": ["", {"mode": ["fast"], "n": ["", 2]}],
            "stops": [[{"at": ["Home"]}, {"at": ["Work", "Office"]}]]
        }}])
    }

    fn ok(out: Value) -> Result<(), Mismatch> {
        check(&out, &weather_tools(), &answer())
    }

    #[test]
    fn strings_are_standardized() {
        assert_eq!(standardize("San Francisco, CA"), "sanfranciscoca");
        assert_eq!(standardize("It's 2-1/2 *big*^"), "it\"s212big");
        let base = json!({"city": "san-francisco ca", "days": 3, "lat": 37.5, "stops": [{"at": "home"}, {"at": "OFFICE"}]});
        assert_eq!(ok(json!([{"get_weather": base}])), Ok(()));
        let mut wrong = base.clone();
        wrong["city"] = json!("Oakland");
        assert!(
            matches!(ok(json!([{"get_weather": wrong}])), Err(Mismatch::Value { param, .. }) if param == "city")
        );
    }

    #[test]
    fn numbers_and_types() {
        // An int passes for a number; 37.5 only by value.
        let good = json!({"city": "San Francisco", "days": 3, "lat": 37.5, "stops": [{"at": "Home"}, {"at": "Work"}]});
        assert_eq!(ok(json!([{"get_weather": good.clone()}])), Ok(()));
        let mut float_days = good.clone();
        float_days["days"] = json!(3.0);
        assert!(
            matches!(ok(json!([{"get_weather": float_days}])), Err(Mismatch::Type { param, .. }) if param == "days")
        );
        let ans = json!([{"get_weather": {"city": ["x"], "lat": [37]}}]);
        assert_eq!(
            check(
                &json!([{"get_weather": {"city": "x", "lat": 37}}]),
                &weather_tools(),
                &ans
            ),
            Ok(())
        );
        assert_eq!(
            check(
                &json!([{"get_weather": {"city": "x", "lat": 37.0}}]),
                &weather_tools(),
                &ans
            ),
            Ok(())
        );
        let mut text_days = good;
        text_days["days"] = json!("3");
        assert!(matches!(
            ok(json!([{"get_weather": text_days}])),
            Err(Mismatch::Type { .. })
        ));
    }

    #[test]
    fn parameters_required_unknown_and_optional() {
        let good = json!({"city": "San Francisco", "days": 3, "lat": 37.5, "stops": [{"at": "Home"}, {"at": "Work"}]});
        let mut no_city = good.clone();
        no_city.as_object_mut().unwrap().remove("city");
        assert_eq!(
            ok(json!([{"get_weather": no_city}])),
            Err(Mismatch::MissingRequired("city".into()))
        );
        let mut unknown = good.clone();
        unknown["wind"] = json!(true);
        assert_eq!(
            ok(json!([{"get_weather": unknown}])),
            Err(Mismatch::Unexpected("wind".into()))
        );
        // Declared by the function but not named by the answer.
        let mut unnamed = good.clone();
        unnamed["extra"] = json!("x");
        assert_eq!(
            ok(json!([{"get_weather": unnamed}])),
            Err(Mismatch::Unexpected("extra".into()))
        );
        // `days` has no "" among its values: it may not be left out.
        let mut no_days = good.clone();
        no_days.as_object_mut().unwrap().remove("days");
        assert_eq!(
            ok(json!([{"get_weather": no_days}])),
            Err(Mismatch::MissingOptional("days".into()))
        );
        // An optional one given with an acceptable value.
        let mut unit = good;
        unit["unit"] = json!("Celsius");
        assert_eq!(ok(json!([{"get_weather": unit}])), Ok(()));
    }

    #[test]
    fn lists_and_dicts_item_by_item() {
        let good = json!({"city": "San Francisco", "days": 3, "lat": 37.5, "stops": [{"at": "Home"}, {"at": "Work"}]});
        let with = |k: &str, v: Value| {
            let mut g = good.clone();
            g[k] = v;
            ok(json!([{"get_weather": g}]))
        };
        assert_eq!(with("tags", json!(["Rain", "wind"])), Ok(()));
        assert!(
            with("tags", json!(["wind", "rain"])).is_err(),
            "a list keeps its order"
        );
        assert!(with("tags", json!(["rain"])).is_err());
        assert_eq!(with("opts", json!({"mode": "FAST"})), Ok(()));
        assert_eq!(with("opts", json!({"mode": "fast", "n": 2})), Ok(()));
        assert!(
            with("opts", json!({"n": 2})).is_err(),
            "`mode` may not be left out"
        );
        assert!(with("opts", json!({"mode": "fast", "x": 1})).is_err());
        assert!(with("stops", json!([{"at": "Work"}, {"at": "Home"}])).is_err());
        assert!(with("stops", json!([{"at": "Home"}])).is_err());
    }

    #[test]
    fn calls_count_name_and_parallel_multiset() {
        let good = json!({"city": "San Francisco", "days": 3, "lat": 37.5, "stops": [{"at": "Home"}, {"at": "Work"}]});
        assert_eq!(
            ok(json!([])),
            Err(Mismatch::Count {
                expected: 1,
                found: 0
            })
        );
        assert_eq!(
            ok(json!([{"get_time": {"zone": "PST"}}])),
            Err(Mismatch::Function {
                expected: "get_weather".into()
            })
        );
        assert!(matches!(
            ok(json!({"get_weather": good})),
            Err(Mismatch::NotCalls(_))
        ));
        let parallel = json!([
            {"get_time": {"zone": ["PST", "America/Los_Angeles"]}},
            {"get_time": {"zone": ["CET"]}}
        ]);
        let tools = weather_tools();
        let out =
            json!([{"get_time": {"zone": "cet"}}, {"get_time": {"zone": "america/los angeles"}}]);
        assert_eq!(check(&out, &tools, &parallel), Ok(()));
        let twice = json!([{"get_time": {"zone": "CET"}}, {"get_time": {"zone": "CET"}}]);
        assert!(matches!(
            check(&twice, &tools, &parallel),
            Err(Mismatch::NoMatch { index: 0, .. })
        ));
        // A function the tools do not define is the case's fault, not the output's.
        let bad = json!([{"nope": {"a": [1]}}]);
        assert!(matches!(
            check(&json!([{"nope": {"a": 1}}]), &tools, &bad),
            Err(Mismatch::Case(_))
        ));
    }

    #[test]
    fn variables_and_python_equality() {
        // An integer parameter whose answer is a string (BFCL's "variable"): compared as is.
        let tools = json!([{"name": "f", "parameters": {"type": "object", "properties": {"n": {"type": "integer"}, "b": {"type": "boolean"}}}}]);
        let ans = json!([{"f": {"n": ["x_count"]}}]);
        assert_eq!(
            check(&json!([{"f": {"n": "x_count"}}]), &tools, &ans),
            Ok(())
        );
        assert!(check(&json!([{"f": {"n": "X count"}}]), &tools, &ans).is_err());
        assert!(py_eq(&json!(1), &json!(1.0)));
        assert!(py_eq(&json!(true), &json!(1)));
        assert!(!py_eq(&json!("1"), &json!(1)));
        let ans = json!([{"f": {"b": [false]}}]);
        assert_eq!(check(&json!([{"f": {"b": false}}]), &tools, &ans), Ok(()));
        assert!(matches!(
            check(&json!([{"f": {"b": 0}}]), &tools, &ans),
            Err(Mismatch::Type { .. })
        ));
    }
}
