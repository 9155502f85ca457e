//! The schema lint: what a schema says by mistake, found before it is compiled and kept
//! as [`SchemaWarning`]s ([`CompiledSpec::schema_warnings`](crate::CompiledSpec::schema_warnings)).
//!
//! - A keyword whose value is malformed (`"type": "integr"`, `"required": "x"`,
//!   `"properties": []`) is an error naming its JSON pointer and what was expected
//!   ([`CompileError::Malformed`]); compiled leniently ([`crate::CompileOptions::lenient`])
//!   it is removed with a warning instead, so the shapes and the validator both ignore it.
//!   A malformed annotation (`"description": 3`) is only a warning: no grammar depends on it.
//! - An unknown keyword that is a near miss of a known one (`propertes`) gets a
//!   did-you-mean warning; other unknown keywords are allowed, as JSON Schema allows them.
//! - A data document given as the schema (`{"name": "Bob", "age": 3}`: no keyword at all)
//!   and a tool definition where a schema is expected are reported as such.
//!
//! Every warning says what it means for the grammar. Only schema positions are visited
//! (keywords that hold subschemas): `enum`, `const`, `default`, `examples` hold data.
//! [`is_keywordless`] tells a data document given as a schema.

pub use crate::schema::is_keywordless;

use crate::error::CompileError;
use crate::schema::{escape_token, keyword, Holds, KeywordClass, KEYWORDS};
use serde_json::Value;
use std::fmt;

/// Something a schema says that is probably not what its author meant, and what it means
/// for the grammar ([`crate::CompiledSpec::schema_warnings`]).
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct SchemaWarning {
    /// Where in the input (a JSON pointer; "" is the document root).
    pub pointer: String,
    /// What is wrong there and what it means for the grammar.
    pub message: String,
}

impl fmt::Display for SchemaWarning {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let at = if self.pointer.is_empty() {
            "(root)"
        } else {
            &self.pointer
        };
        write!(f, "{at}: {}", self.message)
    }
}

/// What the value of a keyword must be.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Expect {
    Schema,
    Schemas,
    SchemaOrSchemas,
    SchemaMap,
    Dependencies,
    DependentRequired,
    Type,
    Names,
    Array,
    Object,
    Number,
    PositiveNumber,
    NumberOrBool,
    Count,
    Bool,
    Text,
    /// A regular expression (ECMA-262) the validator compiles.
    Regex,
    Any,
}

impl Expect {
    fn of(name: &str) -> Expect {
        match name {
            "type" => Expect::Type,
            "required" => Expect::Names,
            "enum" | "examples" => Expect::Array,
            "dependencies" => Expect::Dependencies,
            "dependentRequired" => Expect::DependentRequired,
            "$vocabulary" => Expect::Object,
            "multipleOf" => Expect::PositiveNumber,
            "maximum" | "minimum" => Expect::Number,
            "exclusiveMaximum" | "exclusiveMinimum" => Expect::NumberOrBool,
            "maxLength" | "minLength" | "maxItems" | "minItems" | "maxProperties"
            | "minProperties" | "minContains" | "maxContains" => Expect::Count,
            "uniqueItems" | "readOnly" | "writeOnly" | "deprecated" | "$recursiveAnchor" => {
                Expect::Bool
            }
            "pattern" => Expect::Regex,
            "format" | "contentEncoding" | "contentMediaType" | "$ref" | "$dynamicRef"
            | "$recursiveRef" | "$schema" | "$id" | "$anchor" | "$dynamicAnchor" | "title"
            | "description" | "$comment" => Expect::Text,
            // `id` is a keyword of draft-04 only: elsewhere it may be anything.
            "const" | "default" | "example" | "id" => Expect::Any,
            _ => match keyword(name).map(|k| k.holds) {
                Some(Holds::Schema) => Expect::Schema,
                Some(Holds::Schemas) => Expect::Schemas,
                Some(Holds::SchemaOrSchemas) => Expect::SchemaOrSchemas,
                Some(Holds::SchemaMap) => Expect::SchemaMap,
                _ => Expect::Any,
            },
        }
    }

    fn describe(self) -> &'static str {
        match self {
            Expect::Schema => "a schema (an object or a boolean)",
            Expect::Schemas => "a non-empty array of schemas",
            Expect::SchemaOrSchemas => "a schema or an array of schemas",
            Expect::SchemaMap => "an object of schemas by name",
            Expect::Dependencies => {
                "an object whose members are schemas or arrays of property names"
            }
            Expect::DependentRequired => "an object whose members are arrays of property names",
            Expect::Type => {
                "a type name (\"null\", \"boolean\", \"object\", \"array\", \"number\", \"string\", \"integer\") or a non-empty array of distinct type names"
            }
            Expect::Names => "an array of property names (strings)",
            Expect::Array => "an array",
            Expect::Object => "an object",
            Expect::Number => "a number",
            Expect::PositiveNumber => "a number above 0",
            Expect::NumberOrBool => "a number (a boolean in draft-04)",
            Expect::Count => "a non-negative integer",
            Expect::Bool => "a boolean",
            Expect::Text => "a string",
            Expect::Regex => "a regular expression (ECMA-262)",
            Expect::Any => "any JSON value",
        }
    }

    /// Whether `v` is of this form (its subschemas are checked on their own).
    fn admits(self, v: &Value) -> bool {
        let names = |v: &Value| {
            v.as_array()
                .is_some_and(|xs| xs.iter().all(Value::is_string))
        };
        match self {
            Expect::Schema => is_schema(v),
            Expect::Schemas => v.as_array().is_some_and(|xs| !xs.is_empty()),
            Expect::SchemaOrSchemas => is_schema(v) || v.is_array(),
            Expect::SchemaMap | Expect::Object => v.is_object(),
            Expect::Dependencies => v
                .as_object()
                .is_some_and(|m| m.values().all(|d| is_schema(d) || names(d))),
            Expect::DependentRequired => v.as_object().is_some_and(|m| m.values().all(names)),
            Expect::Type => match v {
                Value::String(s) => TYPES.contains(&s.as_str()),
                Value::Array(xs) => {
                    !xs.is_empty()
                        && xs
                            .iter()
                            .all(|x| x.as_str().is_some_and(|s| TYPES.contains(&s)))
                        && xs.iter().enumerate().all(|(i, x)| !xs[..i].contains(x))
                }
                _ => false,
            },
            Expect::Names => names(v),
            Expect::Array => v.is_array(),
            Expect::Number => v.is_number(),
            Expect::PositiveNumber => v.as_f64().is_some_and(|x| x > 0.0),
            Expect::NumberOrBool => v.is_number() || v.is_boolean(),
            Expect::Count => {
                v.as_u64().is_some()
                    || v.as_f64()
                        .is_some_and(|x| x >= 0.0 && x.fract() == 0.0 && x < 1e15)
            }
            Expect::Bool => v.is_boolean(),
            Expect::Text => v.is_string(),
            Expect::Regex => v.as_str().is_some_and(|p| regex_error(p).is_none()),
            Expect::Any => true,
        }
    }
}

const TYPES: [&str; 7] = [
    "null", "boolean", "object", "array", "number", "string", "integer",
];

/// Why `pattern` is not a regular expression the validator compiles (`None`: it is one).
fn regex_error(pattern: &str) -> Option<String> {
    let schema = serde_json::json!({ "pattern": pattern });
    jsonschema::validator_for(&schema).err().map(|e| {
        let message = e.to_string();
        if message.chars().count() > 80 {
            format!("{}…", message.chars().take(80).collect::<String>())
        } else {
            message
        }
    })
}

fn is_schema(v: &Value) -> bool {
    v.is_object() || v.is_boolean()
}

/// A value for messages, cut to 60 characters.
fn shown(v: &Value) -> String {
    let text = v.to_string();
    if text.chars().count() > 60 {
        format!("{}…", text.chars().take(60).collect::<String>())
    } else {
        text
    }
}

/// What ignoring keyword `name` means for the grammar.
fn ignored_means(name: &str) -> &'static str {
    match name {
        "type" => "so this schema admits every JSON type",
        "enum" | "const" => "so its values are not restricted to the listed ones",
        "properties" => "so its properties are undeclared (written as plain JSON)",
        "required" => "so none of its properties is required",
        "additionalProperties" => "so undeclared properties are admitted",
        "patternProperties" => "so properties are not matched against these patterns",
        "items" | "prefixItems" | "additionalItems" => "so its items admit any JSON",
        "anyOf" | "oneOf" => {
            "so these alternatives are not offered: this schema admits what its other keywords say"
        }
        "allOf" => "so these conditions are not applied",
        "$ref" => {
            "so the reference is not followed: this schema admits what its other keywords say"
        }
        "$defs" | "definitions" => "so no reference can name them",
        _ => match keyword(name).map(|k| k.class) {
            Some(KeywordClass::Annotation) => "the grammar is unchanged",
            Some(KeywordClass::Identifier) => "so it names nothing",
            _ => "so it is not checked",
        },
    }
}

/// The known keyword `key` is a near miss of, if any: a different case, a missing `$`, a
/// plural `s`, or one or two edits (damerau-levenshtein) from a long enough keyword.
pub(crate) fn near_keyword(key: &str) -> Option<&'static str> {
    // `x-…` are extensions, `_…` a keyword switched off on purpose (`_format`).
    if key.starts_with("x-") || key.starts_with('_') || keyword(key).is_some() {
        return None;
    }
    let mut best: Option<(usize, &'static str)> = None;
    for row in KEYWORDS {
        let kw = row.name;
        let close = if kw.eq_ignore_ascii_case(key) || kw.strip_prefix('$') == Some(key) {
            Some(0)
        } else if key.strip_suffix('s') == Some(kw) {
            Some(1)
        } else {
            let d = strsim::damerau_levenshtein(key, kw);
            let len = kw.chars().count();
            ((d == 1 && len >= 5) || (d == 2 && len >= 9)).then_some(d)
        };
        if let Some(d) = close {
            if best.is_none_or(|(b, _)| d < b) {
                best = Some((d, kw));
            }
        }
    }
    best.map(|(_, kw)| kw)
}

/// The type name a malformed one is a near miss of.
fn near_type(name: &str) -> Option<&'static str> {
    TYPES
        .iter()
        .map(|t| {
            (
                strsim::damerau_levenshtein(&name.to_ascii_lowercase(), t),
                *t,
            )
        })
        .filter(|&(d, t)| d <= if t.len() >= 6 { 2 } else { 1 })
        .min_by_key(|&(d, _)| d)
        .map(|(_, t)| t)
}

/// The lint of one schema document.
pub(crate) struct Lint {
    lenient: bool,
    warnings: Vec<SchemaWarning>,
}

impl Lint {
    /// Lint `schema`, found at `base` in the input (pointers in messages are the input's),
    /// removing what it ignores when `lenient`. `document`: the schema is the whole input, so
    /// a data document given as the schema is reported.
    pub(crate) fn run(
        schema: &mut Value,
        base: &str,
        lenient: bool,
        document: bool,
    ) -> Result<Vec<SchemaWarning>, CompileError> {
        let mut lint = Lint {
            lenient,
            warnings: Vec::new(),
        };
        if document {
            lint.data_document(schema);
        }
        lint.schema(schema, base)?;
        Ok(lint.warnings)
    }

    fn warn(&mut self, pointer: &str, message: String) {
        self.warnings.push(SchemaWarning {
            pointer: pointer.to_string(),
            message,
        });
    }

    /// A root object with members but no keyword at all.
    fn data_document(&mut self, schema: &Value) {
        let Some(m) = schema.as_object() else { return };
        if !crate::schema::is_keywordless(schema)
            || m.keys().any(|k| near_keyword(k).is_some())
            || crate::tools::looks_like_tool(schema).is_some()
        {
            return;
        }
        let mut names: Vec<String> = m.keys().take(3).map(|k| format!("\"{k}\"")).collect();
        if m.len() > 3 {
            names.push("…".into());
        }
        let names = names.join(", ");
        let schemas = m.values().all(|v| {
            v.as_object()
                .is_some_and(|o| o.keys().any(|k| keyword(k).is_some()))
        });
        let message = if schemas {
            format!(
                "no JSON Schema keyword here, and every member ({names}) is a schema: is this a `properties` map? \
                 Wrap it in {{\"type\": \"object\", \"properties\": …}}. As written it admits any JSON, so the grammar is plain JSON"
            )
        } else {
            format!(
                "not one JSON Schema keyword (`type`, `properties`, `$ref`…), only members that look like data ({names}): \
                 is this a data document? As a schema it accepts every JSON document, so the grammar is plain JSON"
            )
        };
        self.warn("", message);
    }

    /// A malformed keyword value at `pointer`: an error, or (lenient, or an annotation) a
    /// warning, and the caller removes it.
    fn malformed(
        &mut self,
        pointer: &str,
        name: &str,
        expect: Expect,
        found: &Value,
    ) -> Result<(), CompileError> {
        let mut found_text = shown(found);
        if expect == Expect::Type {
            let bad = match found {
                Value::String(s) => Some(s.as_str()),
                Value::Array(xs) => xs
                    .iter()
                    .filter_map(Value::as_str)
                    .find(|s| !TYPES.contains(s)),
                _ => None,
            };
            if let Some(t) = bad.and_then(near_type) {
                found_text.push_str(&format!(" (did you mean \"{t}\"?)"));
            }
        }
        if expect == Expect::Regex {
            if let Some(e) = found.as_str().and_then(regex_error) {
                found_text.push_str(&format!(" ({e})"));
            }
        }
        let annotation = keyword(name).is_some_and(|k| k.class == KeywordClass::Annotation);
        if self.lenient || annotation {
            self.warn(
                pointer,
                format!(
                    "ignored malformed \"{name}\": expected {}, found {found_text}; {}",
                    expect.describe(),
                    ignored_means(name)
                ),
            );
            Ok(())
        } else {
            Err(CompileError::Malformed {
                pointer: pointer.to_string(),
                keyword: name.to_string(),
                expected: expect.describe().to_string(),
                found: found_text,
            })
        }
    }

    /// A member of a list or map of schemas that is not one: an error, or (lenient) `true`.
    fn member(&mut self, v: &mut Value, pointer: &str, name: &str) -> Result<bool, CompileError> {
        if is_schema(v) {
            return Ok(true);
        }
        if !self.lenient {
            return Err(CompileError::Malformed {
                pointer: pointer.to_string(),
                keyword: name.to_string(),
                expected: Expect::Schema.describe().to_string(),
                found: shown(v),
            });
        }
        self.warn(
            pointer,
            format!(
                "ignored malformed schema in \"{name}\": expected {}, found {}; so this subschema admits any JSON",
                Expect::Schema.describe(),
                shown(v)
            ),
        );
        *v = Value::Bool(true);
        Ok(false)
    }

    /// One schema at `pointer`.
    fn schema(&mut self, v: &mut Value, pointer: &str) -> Result<(), CompileError> {
        if let Some((what, inner)) = crate::tools::looks_like_tool(v) {
            let message = format!(
                "this is {what}, not a JSON Schema: its schema is at {pointer}{inner} \
                 (give dss the tool definitions themselves, or that schema)"
            );
            if !self.lenient {
                return Err(CompileError::Schema {
                    pointer: pointer.to_string(),
                    message,
                });
            }
            self.warn(
                pointer,
                format!("{message}; as written its keywords are ignored, so it admits any JSON"),
            );
            // Its `"type": "function"` is not a type: ignored below.
        }
        let Value::Object(map) = v else {
            return Ok(());
        };
        let keys: Vec<String> = map.keys().cloned().collect();
        for key in keys {
            let here = format!("{pointer}/{}", escape_token(&key));
            if keyword(&key).is_none() {
                if let Some(kw) = near_keyword(&key) {
                    self.warn(
                        pointer,
                        format!(
                            "unknown keyword \"{key}\"; did you mean \"{kw}\"? As written it is ignored, {}",
                            ignored_means(kw)
                        ),
                    );
                }
                continue;
            }
            let expect = Expect::of(&key);
            let Some(value) = map.get_mut(&key) else {
                continue;
            };
            if !expect.admits(value) {
                let found = value.clone();
                self.malformed(&here, &key, expect, &found)?;
                map.remove(&key);
                continue;
            }
            crate::stack::deep(|| self.children(value, &here, &key, expect))?;
        }
        Ok(())
    }

    /// The names of `patternProperties` are regular expressions: one that is not is an
    /// error, or (lenient) removed with its schema.
    fn pattern_names(
        &mut self,
        members: &mut serde_json::Map<String, Value>,
        here: &str,
    ) -> Result<(), CompileError> {
        let bad: Vec<(String, String)> = members
            .keys()
            .filter_map(|k| regex_error(k).map(|e| (k.clone(), e)))
            .collect();
        for (name, error) in bad {
            let at = format!("{here}/{}", escape_token(&name));
            let expected = "property name patterns that are regular expressions (ECMA-262)";
            let found = format!("{} ({error})", Value::String(name.clone()));
            if !self.lenient {
                return Err(CompileError::Malformed {
                    pointer: at,
                    keyword: "patternProperties".into(),
                    expected: expected.into(),
                    found,
                });
            }
            self.warn(
                &at,
                format!(
                    "ignored malformed \"patternProperties\": expected {expected}, found {found}; so no property is matched against it"
                ),
            );
            members.remove(&name);
        }
        Ok(())
    }

    /// The subschemas in the value of keyword `name` (of the form `expect`).
    fn children(
        &mut self,
        value: &mut Value,
        here: &str,
        name: &str,
        expect: Expect,
    ) -> Result<(), CompileError> {
        match (expect, value) {
            (Expect::Schema | Expect::SchemaOrSchemas, v @ (Value::Object(_) | Value::Bool(_))) => {
                self.schema(v, here)
            }
            (Expect::Schemas | Expect::SchemaOrSchemas, Value::Array(items)) => {
                for (i, item) in items.iter_mut().enumerate() {
                    let at = format!("{here}/{i}");
                    if self.member(item, &at, name)? {
                        self.schema(item, &at)?;
                    }
                }
                Ok(())
            }
            (Expect::SchemaMap, Value::Object(members)) => {
                if name == "patternProperties" {
                    self.pattern_names(members, here)?;
                }
                for (k, item) in members.iter_mut() {
                    let at = format!("{here}/{}", escape_token(k));
                    if self.member(item, &at, name)? {
                        self.schema(item, &at)?;
                    }
                }
                Ok(())
            }
            (Expect::Dependencies, Value::Object(members)) => {
                for (k, item) in members.iter_mut() {
                    if is_schema(item) {
                        self.schema(item, &format!("{here}/{}", escape_token(k)))?;
                    }
                }
                Ok(())
            }
            _ => Ok(()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn lint(schema: Value, lenient: bool) -> (Value, Result<Vec<SchemaWarning>, CompileError>) {
        let mut s = schema;
        let r = Lint::run(&mut s, "", lenient, true);
        (s, r)
    }

    fn warnings(schema: Value) -> Vec<String> {
        lint(schema, false)
            .1
            .map(|ws| ws.iter().map(ToString::to_string).collect())
            .unwrap_or_else(|e| vec![format!("error: {e}")])
    }

    #[test]
    fn near_misses_of_keywords_get_a_suggestion() {
        let w = warnings(json!({"type": "object", "properties": {"x": {"propertes": {}}}}));
        assert_eq!(w.len(), 1, "{w:?}");
        assert!(
            w[0].starts_with(
                "/properties/x: unknown keyword \"propertes\"; did you mean \"properties\"?"
            ),
            "{w:?}"
        );
        assert!(w[0].contains("written as plain JSON"), "{w:?}");
        for (typo, kw) in [
            ("Type", "type"),
            ("ref", "$ref"),
            ("types", "type"),
            ("additionalproperties", "additionalProperties"),
            ("minimun", "minimum"),
            ("requried", "required"),
            ("defintions", "definitions"),
            ("maxlength", "maxLength"),
        ] {
            assert_eq!(near_keyword(typo), Some(kw), "{typo}");
        }
        // Unknown keywords in general are allowed, and get no warning.
        for other in [
            "x-vendor",
            "_format",
            "nullable",
            "name",
            "tip",
            "of",
            "discriminator",
            "node",
        ] {
            assert_eq!(near_keyword(other), None, "{other}");
        }
        assert!(warnings(json!({"type": "string", "nullable": true, "x-a": 1})).is_empty());
    }

    #[test]
    fn malformed_values_are_errors_with_their_pointer() {
        for (schema, pointer, keyword) in [
            (
                json!({"properties": {"a": {"type": "integr"}}}),
                "/properties/a/type",
                "type",
            ),
            (json!({"required": "x"}), "/required", "required"),
            (json!({"properties": []}), "/properties", "properties"),
            (json!({"items": 3}), "/items", "items"),
            (json!({"anyOf": []}), "/anyOf", "anyOf"),
            (
                json!({"anyOf": [{"type": "string"}, 1]}),
                "/anyOf/1",
                "anyOf",
            ),
            (
                json!({"properties": {"a": "string"}}),
                "/properties/a",
                "properties",
            ),
            (json!({"minLength": -1}), "/minLength", "minLength"),
            (json!({"maximum": "5"}), "/maximum", "maximum"),
            (json!({"multipleOf": 0}), "/multipleOf", "multipleOf"),
            (json!({"enum": "a"}), "/enum", "enum"),
            (json!({"$ref": 1}), "/$ref", "$ref"),
            (json!({"pattern": "(("}), "/pattern", "pattern"),
            (
                json!({"patternProperties": {"^a": {}, "[z": {}}}),
                "/patternProperties/[z",
                "patternProperties",
            ),
            (json!({"type": ["string", "string"]}), "/type", "type"),
            (json!({"type": []}), "/type", "type"),
            (
                json!({"$defs": {"a": {"items": {"uniqueItems": "yes"}}}}),
                "/$defs/a/items/uniqueItems",
                "uniqueItems",
            ),
        ] {
            match lint(schema.clone(), false).1 {
                Err(CompileError::Malformed {
                    pointer: p,
                    keyword: k,
                    expected,
                    ..
                }) => {
                    assert_eq!((p.as_str(), k.as_str()), (pointer, keyword), "{schema}");
                    assert!(!expected.is_empty());
                }
                other => panic!("{schema}: {other:?}"),
            }
        }
        let e = lint(json!({"type": "integr"}), false)
            .1
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("did you mean \"integer\"?") && e.contains("/type"),
            "{e}"
        );
    }

    #[test]
    fn well_formed_values_pass() {
        let schema = json!({
            "$schema": "http://json-schema.org/draft-04/schema#",
            "type": ["object", "null"],
            "properties": {
                "n": {"type": "number", "minimum": 0, "exclusiveMinimum": true, "multipleOf": 0.5},
                "s": {"type": "string", "maxLength": 3.0, "pattern": "^\\p{L}+(?!x)\\d{2,}$", "format": "email"},
                "p": {"patternProperties": {"^[a-z_]+$": {}, "\\w": true}},
                "t": {"items": [{"type": "string"}, true], "additionalItems": false},
                "enum": {"enum": [1, "a", {"type": 5}]},
                "const": {"const": {"required": 3}, "default": {"properties": []}}
            },
            "required": [],
            "dependencies": {"a": ["b"], "c": {"required": ["d"]}},
            "definitions": {"x": true}
        });
        assert_eq!(warnings(schema), Vec::<String>::new());
    }

    #[test]
    fn lenient_removes_what_it_ignores_and_says_what_it_means() {
        let (fixed, r) = lint(
            json!({"properties": {"a": {"type": "integr"}, "b": 5}, "required": "a", "title": 1}),
            true,
        );
        let w: Vec<String> = r.unwrap().iter().map(ToString::to_string).collect();
        assert_eq!(fixed, json!({"properties": {"a": {}, "b": true}}));
        assert_eq!(w.len(), 4, "{w:?}");
        assert!(
            w.iter().any(
                |w| w.starts_with("/properties/a/type: ignored malformed \"type\"")
                    && w.ends_with("so this schema admits every JSON type")
            ),
            "{w:?}"
        );
        assert!(
            w.iter()
                .any(|w| w.starts_with("/properties/b:") && w.contains("admits any JSON")),
            "{w:?}"
        );
        assert!(
            w.iter()
                .any(|w| w.contains("none of its properties is required")),
            "{w:?}"
        );
        // A malformed annotation is a warning even when strict.
        let (fixed, r) = lint(json!({"type": "string", "description": ["a"]}), false);
        assert_eq!(fixed, json!({"type": "string"}));
        assert!(r.unwrap()[0].message.contains("the grammar is unchanged"));
    }

    #[test]
    fn data_documents_are_recognised() {
        let w = warnings(json!({"name": "Bob", "age": 3}));
        assert_eq!(w.len(), 1);
        assert!(
            w[0].starts_with("(root): ") && w[0].contains("is this a data document?"),
            "{w:?}"
        );
        assert!(
            w[0].contains("\"name\", \"age\"") && w[0].contains("plain JSON"),
            "{w:?}"
        );
        let w = warnings(json!({"city": {"type": "string"}, "days": {"type": "integer"}}));
        assert!(w[0].contains("is this a `properties` map?"), "{w:?}");
        for schema in [
            json!({}),
            json!(true),
            json!({"title": "t", "x": 1}),
            json!({"type": "object"}),
        ] {
            assert!(warnings(schema.clone()).is_empty(), "{schema}");
        }
    }

    #[test]
    fn tool_definitions_where_a_schema_is_expected_are_recognised() {
        let tool = json!({"type": "function", "function": {"name": "f", "parameters": {"type": "object"}}});
        let e = lint(json!({"type": "object", "properties": {"f": tool}}), false)
            .1
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("/properties/f")
                && e.contains("OpenAI tool")
                && e.contains("/properties/f/function/parameters"),
            "{e}"
        );
        let anthropic = json!({"name": "f", "input_schema": {"type": "object"}});
        let e = lint(json!({"items": anthropic}), false)
            .1
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("Anthropic tool") && e.contains("/items/input_schema"),
            "{e}"
        );
        let (_, r) = lint(json!({"items": {"name": "f", "inputSchema": {}}}), true);
        assert!(r.unwrap()[0].message.contains("MCP tool"));
    }
}
