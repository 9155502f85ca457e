//! What a schema asserts that no grammar says: every assertion left to the validator
//! after generation ([`CompiledSpec::grammar_gaps`](crate::CompiledSpec::grammar_gaps)),
//! with its JSON pointer, so `dss compile` can list them (and `--strict-grammar` refuse
//! them).
//!
//! Read node by node, as the shapes lower each node's own keywords
//! (`shape/lower/types.rs`): `pattern`, `format`, `minLength`/`maxLength` where they fit
//! a grammar ([`crate::shape::regular`]), integer ranges, lower bounds 0 and 1,
//! `minItems`/`maxItems` are in the grammar; `multipleOf`, `uniqueItems`, property counts,
//! `dependentRequired`, other number bounds, and the approximated keywords (`not`,
//! `if`/`then`/`else`, `contains`, `propertyNames`, `dependencies`…) are not.
//! `enum`/`const` of objects and arrays are in the grammar (each listed value as its
//! compact JSON), so they are no gap where every listed value passes the node's other
//! keywords (checked here with the validator; a node that refers elsewhere is a gap: the
//! grammar does not filter the listed values by them). A node's keywords can still be
//! lost where unions of different forms meet: the list is per node.

use crate::schema::{keyword, Family, Holds, KeywordClass};
use crate::shape::lower_gaps;
use serde::Serialize;
use serde_json::{Map, Value};

/// An assertion of the schema the grammars do not say (checked after generation).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct GrammarGap {
    /// Where: the JSON pointer of the keyword in the schema (`/properties/x/pattern`).
    pub pointer: String,
    /// The keyword (`pattern`, `multipleOf`…).
    pub keyword: String,
    /// Why it is not in the grammar.
    pub reason: String,
}

impl std::fmt::Display for GrammarGap {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{}: {}; checked after generation",
            self.pointer, self.reason
        )
    }
}

/// The gaps of every node of `schema` (`formats_assert`: whether `format` is an
/// assertion in its dialect).
pub(crate) fn gaps(schema: &Value, formats_assert: bool) -> Vec<GrammarGap> {
    let mut out = Vec::new();
    let cx = Cx {
        formats: formats_assert,
        root: schema,
    };
    walk(schema, &mut String::new(), &cx, &mut out, 0);
    out
}

/// What every node's gaps are read with: whether `format` asserts, the schema document.
struct Cx<'v> {
    formats: bool,
    root: &'v Value,
}

fn walk(v: &Value, at: &mut String, cx: &Cx<'_>, out: &mut Vec<GrammarGap>, depth: usize) {
    if depth > 512 {
        return;
    }
    let Value::Object(m) = v else { return };
    node(m, at, cx, out);
    for (k, x) in m {
        let Some(row) = keyword(k) else { continue };
        let len = at.len();
        at.push('/');
        at.push_str(&escape(k));
        match (row.holds, x) {
            (Holds::Schema | Holds::SchemaOrSchemas, Value::Object(_)) => {
                walk(x, at, cx, out, depth + 1)
            }
            (Holds::Schemas | Holds::SchemaOrSchemas, Value::Array(xs)) => {
                for (i, y) in xs.iter().enumerate() {
                    let l = at.len();
                    at.push_str(&format!("/{i}"));
                    walk(y, at, cx, out, depth + 1);
                    at.truncate(l);
                }
            }
            (Holds::SchemaMap, Value::Object(ys)) => {
                for (n, y) in ys {
                    let l = at.len();
                    at.push('/');
                    at.push_str(&escape(n));
                    walk(y, at, cx, out, depth + 1);
                    at.truncate(l);
                }
            }
            _ => {}
        }
        at.truncate(len);
    }
}

fn escape(s: &str) -> String {
    s.replace('~', "~0").replace('/', "~1")
}

/// The gaps of one node's own keywords.
fn node(m: &Map<String, Value>, at: &str, cx: &Cx<'_>, out: &mut Vec<GrammarGap>) {
    let formats = cx.formats;
    let mut add = |k: &str, reason: String| {
        out.push(GrammarGap {
            pointer: format!("{at}/{}", escape(k)),
            keyword: k.to_string(),
            reason,
        })
    };
    // A node with none of the keywords the shapes lower is written as plain JSON.
    let lowered = m.keys().any(|k| {
        keyword(k)
            .and_then(|r| r.family)
            .is_some_and(Family::is_own)
    });
    let types: Vec<&str> = match m.get("type") {
        Some(Value::String(s)) => vec![s.as_str()],
        Some(Value::Array(xs)) => xs.iter().filter_map(Value::as_str).collect(),
        _ => vec!["string", "number", "integer", "array", "object"],
    };
    let listed = m.contains_key("enum") || m.contains_key("const");
    for (k, x) in m {
        let Some(row) = keyword(k) else { continue };
        match row.class {
            KeywordClass::Local => {}
            KeywordClass::Approximated
                if !["allOf", "prefixItems", "additionalItems"].contains(&k.as_str()) =>
            {
                add(k, format!("`{k}` is not in the grammar"));
                continue;
            }
            KeywordClass::Structural if (k == "enum" || k == "const") => {
                let compound = match x {
                    Value::Array(xs) if k == "enum" => {
                        xs.iter().any(|v| v.is_array() || v.is_object())
                    }
                    v => k == "const" && (v.is_array() || v.is_object()),
                };
                if compound {
                    if let Some(reason) = listed_unchecked(m, cx) {
                        add(k, reason);
                    }
                }
                continue;
            }
            _ => continue,
        }
        if k == "format"
            && !formats
            && crate::shape::regular::format_regex(x.as_str().unwrap_or("")).is_none()
        {
            continue; // an annotation dss does not write
        }
        let string_kw = matches!(k.as_str(), "pattern" | "format" | "minLength" | "maxLength");
        let number_kw = matches!(
            k.as_str(),
            "minimum" | "maximum" | "exclusiveMinimum" | "exclusiveMaximum" | "multipleOf"
        );
        let applies = (string_kw && types.contains(&"string"))
            || (number_kw && (types.contains(&"number") || types.contains(&"integer")))
            || !(string_kw || number_kw);
        if !applies {
            continue; // asserts nothing about the values the node admits
        }
        if !lowered {
            add(
                k,
                "the node is plain JSON in the grammar (it has no `type`)".into(),
            );
            continue;
        }
        if listed && (string_kw || number_kw) {
            continue; // the listed values are the grammar's
        }
        match k.as_str() {
            "pattern" | "format" | "minLength" | "maxLength" => {}
            "minimum" | "maximum" | "exclusiveMinimum" | "exclusiveMaximum" => {
                let integer = !types.contains(&"number");
                if !lower_gaps::bounds_in_grammar(m, integer) {
                    add(
                        k,
                        if integer {
                            "integer bounds other than both bounds or a lower bound >= 0".into()
                        } else {
                            "bounds of a non-integer number other than `minimum: 0`".into()
                        },
                    );
                }
            }
            "minItems" | "maxItems" => {}
            _ => add(k, format!("`{k}` is not in the grammar")),
        }
    }
    if types.contains(&"string") && lowered && !listed {
        for (k, reason) in lower_gaps::string_gaps(m, formats) {
            add(k, reason);
        }
    }
}

/// Why the listed values of a node with arrays or objects among them may admit what the
/// node's other keywords reject (the grammar writes every listed value of the node's
/// types), or `None` where each listed value passes them.
fn listed_unchecked(m: &Map<String, Value>, cx: &Cx<'_>) -> Option<String> {
    let types: Vec<&str> = match m.get("type") {
        Some(Value::String(s)) => vec![s.as_str()],
        Some(Value::Array(xs)) => xs.iter().filter_map(Value::as_str).collect(),
        _ => vec!["array", "object"],
    };
    // Only the values the grammar writes matter: arrays and objects of the node's types
    // (scalars are the shapes' own, as before).
    let written = |v: &&Value| {
        (v.is_array() && types.contains(&"array")) || (v.is_object() && types.contains(&"object"))
    };
    let listed: Vec<&Value> = match (m.get("const"), m.get("enum")) {
        (Some(c), _) => vec![c],
        (None, Some(Value::Array(xs))) => xs.iter().collect(),
        _ => return None,
    };
    let listed: Vec<&Value> = listed.into_iter().filter(written).collect();
    let mut rest: Map<String, Value> = m
        .iter()
        .filter(|(k, _)| *k != "enum" && *k != "const")
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect();
    if let Some(meta) = cx.root.get("$schema").filter(|s| s.is_string()) {
        rest.insert("$schema".into(), meta.clone());
    }
    let unchecked = || {
        Some("the listed objects or arrays are in the grammar, but not the node's other keywords on them".to_string())
    };
    let Ok(validator) = crate::checks::build_validator::<jsonschema::json::SerdeJson>(
        cx.root,
        &Value::Object(rest),
    ) else {
        return unchecked();
    };
    if listed.iter().all(|v| validator.is_valid(v)) {
        None
    } else {
        unchecked()
    }
}

#[cfg(test)]
mod tests {
    use crate::{compile, CompileOptions};
    use serde_json::json;

    fn gaps(schema: serde_json::Value) -> Vec<(String, String)> {
        compile(&schema, &CompileOptions::default())
            .unwrap()
            .grammar_gaps()
            .into_iter()
            .map(|g| (g.pointer, g.keyword))
            .collect()
    }

    #[test]
    fn lists_what_the_grammar_leaves_to_the_validator() {
        let schema = json!({"type": "object", "properties": {
            "time": {"type": "string", "pattern": "^[0-2][0-9]:[0-5][0-9]$"},
            "code": {"type": "string", "pattern": "^(?!X)[A-Z]+$"},
            "mail": {"type": "string", "format": "email", "maxLength": 1000},
            "n": {"type": "integer", "minimum": 1, "maximum": 10},
            "m": {"type": "integer", "maximum": 10},
            "x": {"type": "number", "minimum": 0, "multipleOf": 0.5},
            "tags": {"type": "array", "items": {"type": "string"}, "uniqueItems": true, "maxItems": 3},
            "p": {"enum": [{"a": 1}, "b"]},
            "r": {"type": "array", "maxItems": 1, "enum": [[1], [1, 2]]},
            "q": {"not": {"type": "null"}},
            "free": {"pattern": "^a"}
        }});
        let mut found = gaps(schema);
        found.sort();
        let want: Vec<(String, String)> = [
            ("/properties/code/pattern", "pattern"),
            ("/properties/free/pattern", "pattern"),
            ("/properties/m/maximum", "maximum"),
            ("/properties/mail/maxLength", "maxLength"),
            ("/properties/q/not", "not"),
            ("/properties/r/enum", "enum"),
            ("/properties/tags/uniqueItems", "uniqueItems"),
            ("/properties/x/multipleOf", "multipleOf"),
        ]
        .iter()
        .map(|(p, k)| (p.to_string(), k.to_string()))
        .collect();
        assert_eq!(found, want);
    }

    #[test]
    fn a_schema_the_grammar_says_whole_has_none() {
        let schema = json!({"type": "object", "properties": {
            "at": {"type": "string", "format": "date-time"},
            "id": {"type": "string", "format": "uuid"},
            "name": {"type": "string", "minLength": 1, "maxLength": 40},
            "count": {"type": "integer", "minimum": 0},
            "level": {"type": "integer", "exclusiveMinimum": 0, "maximum": 5}
        }, "required": ["at"]});
        assert_eq!(gaps(schema), Vec::<(String, String)>::new());
    }
}
