//! Stage 1 — the JSON Schema document: which draft it is, where every `$id` and anchor
//! lives, and how a `$ref` resolves to a location (a JSON pointer) inside the document.
//!
//! Subschemas are named by their JSON pointer from the document root; later stages never
//! hold references into the JSON tree, only pointers, so the compiled spec is serializable.

use crate::error::CompileError;
use serde_json::Value;
use std::borrow::Cow;
use std::collections::HashMap;

/// Which family of keyword semantics applies.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Draft {
    /// draft-04/06/07: `$ref` siblings are ignored, `items: [..]` is a tuple, `definitions`.
    Legacy,
    /// 2019-09 / 2020-12 (and the default): `$ref` is one more conjunct, `prefixItems`.
    Modern,
}

/// A schema document with its resource index.
pub struct SchemaDoc<'a> {
    pub root: &'a Value,
    pub draft: Draft,
    /// Absolute or document-relative resource URI (no fragment) -> pointer of its root.
    resources: HashMap<String, String>,
    /// `uri#anchor` -> pointer.
    anchors: HashMap<String, String>,
    /// Pointers of nodes that carry an `$id`, with the base URI they establish.
    bases: Vec<(String, String)>,
    draft04: bool,
    /// Whether `format` is an assertion (see [`formats_assert`]).
    pub formats_assert: bool,
}

/// `format` asserts, as structured-output users expect, except where the schema declares a
/// dialect in which it is only an annotation (2019-09 and 2020-12). The validator and the
/// grammars follow the same rule.
pub fn formats_assert(root: &Value) -> bool {
    let dialect = root.get("$schema").and_then(Value::as_str).unwrap_or("");
    !(dialect.contains("2019-09") || dialect.contains("2020-12"))
}

/// Assertions about one value alone (no subschema, no other location): bounds, lengths,
/// `pattern`, `format`, `uniqueItems`, `dependentRequired`. The shapes capture them only
/// in part, so the encoder checks them at each node where they appear, with a validator
/// built from just those keywords (see [`local_keywords`]): the validator's own
/// semantics, without a second walk of the document.
pub const LOCAL_KEYWORDS: &[&str] = &[
    "multipleOf",
    "maximum",
    "exclusiveMaximum",
    "minimum",
    "exclusiveMinimum",
    "maxLength",
    "minLength",
    "pattern",
    "format",
    "maxItems",
    "minItems",
    "uniqueItems",
    "maxProperties",
    "minProperties",
    "dependentRequired",
];

/// Assertion keywords neither the shapes nor the local checks capture exactly. Any other
/// keyword is captured exactly (see [`encoder_checks_all_assertions`]), local, or an
/// annotation that validators ignore.
const INEXACT_KEYWORDS: &[&str] = &[
    "prefixItems",
    "additionalItems",
    "contains",
    "minContains",
    "maxContains",
    "dependencies",
    "dependentSchemas",
    "propertyNames",
    "if",
    "then",
    "else",
    "allOf",
    "not",
    "$dynamicRef",
    "$recursiveRef",
    "unevaluatedItems",
    "unevaluatedProperties",
    "contentEncoding",
    "contentMediaType",
    "contentSchema",
];

/// The local assertions of one schema node (see [`LOCAL_KEYWORDS`]); `format` counts only
/// where it asserts (`formats`, see [`formats_assert`]).
pub fn local_keywords(node: &Value, formats: bool) -> serde_json::Map<String, Value> {
    let mut local = serde_json::Map::new();
    if let Value::Object(m) = node {
        for (k, v) in m {
            if LOCAL_KEYWORDS.contains(&k.as_str()) && (k != "format" || formats) {
                local.insert(k.clone(), v.clone());
            }
        }
    }
    local
}

/// Whether a subschema holds no reference (so it means the same copied elsewhere).
fn self_contained(v: &Value) -> bool {
    match v {
        Value::Object(m) => m.iter().all(|(k, x)| {
            !matches!(k.as_str(), "$ref" | "$dynamicRef" | "$recursiveRef") && self_contained(x)
        }),
        Value::Array(xs) => xs.iter().all(self_contained),
        _ => true,
    }
}

/// What a node with `patternProperties` asserts of its keys, as a schema of its own
/// (`None` without): the patterns with their schemas, the declared names, and
/// `additionalProperties`. The shapes only approximate it (undeclared values get the union
/// of the schemas they might need), so the encoder checks it whole at the object; the
/// schema walk has made sure the schemas in it hold no reference.
pub fn pattern_check(node: &Value) -> Option<serde_json::Map<String, Value>> {
    let pats = node.get("patternProperties").filter(|p| p.is_object())?;
    let mut check = serde_json::Map::new();
    check.insert("patternProperties".into(), pats.clone());
    let names: serde_json::Map<String, Value> = node
        .get("properties")
        .and_then(Value::as_object)
        .into_iter()
        .flat_map(|ps| ps.keys())
        .map(|k| (k.clone(), Value::Object(serde_json::Map::new())))
        .collect();
    check.insert("properties".into(), Value::Object(names));
    if let Some(a) = node.get("additionalProperties") {
        check.insert("additionalProperties".into(), a.clone());
    }
    Some(check)
}

/// The structural assertions the encoder checks, through the shapes or whole at their node
/// (with the [`LOCAL_KEYWORDS`], all it checks). Beside a `$ref` or a union, any of them
/// makes the node an intersection, which the shapes approximate.
const CHECKED_STRUCTURE: &[&str] = &[
    "type",
    "enum",
    "const",
    "properties",
    "required",
    "additionalProperties",
    "patternProperties",
    "items",
    "anyOf",
    "oneOf",
];

/// Whether the encoder checks every assertion in the schema: the shapes capture `type`,
/// `properties`, `required`, `additionalProperties`, `items` (one schema), `enum`/`const`
/// of scalars and local `$ref`s without sibling assertions exactly, and the
/// [`LOCAL_KEYWORDS`] are checked node by node. `anyOf`/`oneOf` alone on their node pass
/// here; the shape builder then requires their branches to admit disjoint JSON types
/// (`X` or `null`), where the union of the branches' shapes is exact. Then a successful
/// encode is a complete validation, and compress needs no second walk with the full
/// validator. Conservative: anything else (`allOf`, tuples, a remote or unusual
/// reference) answers false.
pub fn encoder_checks_all_assertions(root: &Value) -> bool {
    fn scalar(v: &Value) -> bool {
        !matches!(v, Value::Array(_) | Value::Object(_))
    }
    fn walk(node: &Value, formats: bool, depth: usize) -> bool {
        if depth > 256 {
            return false;
        }
        let map = match node {
            Value::Object(map) => map,
            Value::Array(xs) => return xs.iter().all(|x| walk(x, formats, depth + 1)),
            _ => return true,
        };
        let mut assertions = 0;
        for (key, value) in map {
            let exact = match key.as_str() {
                k if INEXACT_KEYWORDS.contains(&k) => false,
                "$ref" => value.as_str().is_some_and(|r| r.starts_with('#')),
                "enum" => value.as_array().is_some_and(|xs| xs.iter().all(scalar)),
                "const" => scalar(value),
                "items" => matches!(value, Value::Object(_) | Value::Bool(_)),
                // Checked whole at its object (see [`pattern_check`]): its schemas, and
                // `additionalProperties` beside it, must not reach out of it.
                "patternProperties" => {
                    value
                        .as_object()
                        .is_some_and(|ps| ps.values().all(self_contained))
                        && map.get("additionalProperties").is_none_or(self_contained)
                }
                k @ ("anyOf" | "oneOf") => {
                    value.as_array().is_some_and(|xs| !xs.is_empty())
                        && map.keys().all(|o| {
                            o == k || !(o == "$ref" || CHECKED_STRUCTURE.contains(&o.as_str()))
                        })
                }
                _ => true,
            };
            if !exact {
                return false;
            }
            let asserts = match key.as_str() {
                "format" => formats,
                k => LOCAL_KEYWORDS.contains(&k) || CHECKED_STRUCTURE.contains(&k),
            };
            if asserts {
                assertions += 1;
            }
            // Every value that may hold a schema is walked, unknown keywords included: a
            // `$ref` may point anywhere in the document.
            let ok = match key.as_str() {
                "enum" | "const" | "default" | "examples" | "example" | "required" | "type"
                | "dependentRequired" => true,
                k if SCHEMA_MAP_KEYWORDS.contains(&k) => match value {
                    Value::Object(m) => m.values().all(|v| walk(v, formats, depth + 1)),
                    other => walk(other, formats, depth + 1),
                },
                _ => walk(value, formats, depth + 1),
            };
            if !ok {
                return false;
            }
        }
        // With `$ref`, siblings are ignored (draft-07) or one more conjunct (2019-09): a
        // conjunction the shapes approximate, so keep the validator.
        !(map.contains_key("$ref") && assertions > 0)
    }
    walk(root, formats_assert(root), 0)
}

/// Keywords whose value is a subschema.
const SCHEMA_KEYWORDS: &[&str] = &[
    "additionalProperties",
    "additionalItems",
    "items",
    "contains",
    "not",
    "if",
    "then",
    "else",
    "propertyNames",
    "unevaluatedProperties",
    "unevaluatedItems",
    "contentSchema",
];
/// Keywords whose value is an array of subschemas (or, for `items`, possibly one).
const SCHEMA_ARRAY_KEYWORDS: &[&str] = &["allOf", "anyOf", "oneOf", "prefixItems", "items"];
/// Keywords whose value is an object of subschemas.
const SCHEMA_MAP_KEYWORDS: &[&str] = &[
    "properties",
    "patternProperties",
    "$defs",
    "definitions",
    "dependentSchemas",
    "dependencies",
];

impl<'a> SchemaDoc<'a> {
    pub fn new(root: &'a Value) -> Self {
        let draft04 = root
            .get("$schema")
            .and_then(Value::as_str)
            .is_some_and(|s| s.contains("draft-04") || s.contains("draft-03"));
        let draft = match root.get("$schema").and_then(Value::as_str) {
            Some(s)
                if s.contains("draft-04") || s.contains("draft-06") || s.contains("draft-07") =>
            {
                Draft::Legacy
            }
            Some(s) if s.contains("draft-03") => Draft::Legacy,
            _ => Draft::Modern,
        };
        let mut doc = SchemaDoc {
            formats_assert: formats_assert(root),
            root,
            draft,
            resources: HashMap::new(),
            anchors: HashMap::new(),
            bases: Vec::new(),
            draft04,
        };
        doc.resources.insert(String::new(), String::new());
        doc.index(root, &mut String::new(), "");
        doc
    }

    /// The node at a pointer (pointers come from this module, so they exist).
    pub fn node(&self, pointer: &str) -> &'a Value {
        static TRUE: Value = Value::Bool(true);
        self.root.pointer(pointer).unwrap_or(&TRUE)
    }

    /// Walk schema positions, registering `$id`s and anchors. `pointer` is one buffer,
    /// grown and cut back as we descend, so nothing is allocated per node.
    fn index(&mut self, node: &'a Value, pointer: &mut String, base: &str) {
        let Value::Object(map) = node else { return };
        let mut base = base.to_string();
        let id_key = if self.draft04 { "id" } else { "$id" };
        // Up to draft-07 every sibling of `$ref`, `$id` included, is ignored.
        let ignored = self.draft == Draft::Legacy && map.contains_key("$ref");
        if let Some(id) = map.get(id_key).and_then(Value::as_str).filter(|_| !ignored) {
            if let Some(anchor) = id.strip_prefix('#') {
                self.anchors
                    .insert(format!("{base}#{anchor}"), pointer.clone());
            } else {
                let (resource, fragment) = split_fragment(&join_uri(&base, id));
                base = resource.clone();
                self.resources.insert(resource.clone(), pointer.clone());
                self.bases.push((pointer.clone(), resource.clone()));
                if !fragment.is_empty() && !fragment.starts_with('/') {
                    self.anchors
                        .insert(format!("{resource}#{fragment}"), pointer.clone());
                }
            }
        }
        for key in ["$anchor", "$dynamicAnchor"] {
            if let Some(anchor) = map.get(key).and_then(Value::as_str) {
                self.anchors
                    .entry(format!("{base}#{anchor}"))
                    .or_insert_with(|| pointer.clone());
            }
        }
        let len = pointer.len();
        for (key, value) in map {
            let is_map = SCHEMA_MAP_KEYWORDS.contains(&key.as_str());
            let is_array = SCHEMA_ARRAY_KEYWORDS.contains(&key.as_str()) && value.is_array();
            let is_schema = SCHEMA_KEYWORDS.contains(&key.as_str());
            if !(is_map || is_array || is_schema) {
                continue;
            }
            pointer.push('/');
            push_token(pointer, key);
            let child_len = pointer.len();
            match value {
                Value::Object(children) if is_map => {
                    for (name, sub) in children {
                        pointer.push('/');
                        push_token(pointer, name);
                        self.index(sub, pointer, &base);
                        pointer.truncate(child_len);
                    }
                }
                Value::Array(items) if is_array => {
                    for (i, sub) in items.iter().enumerate() {
                        use std::fmt::Write;
                        let _ = write!(pointer, "/{i}");
                        self.index(sub, pointer, &base);
                        pointer.truncate(child_len);
                    }
                }
                _ if is_schema => self.index(value, pointer, &base),
                _ => {}
            }
            pointer.truncate(len);
        }
    }

    /// The base URI in force at a pointer: the nearest enclosing `$id`. A `$ref` resolves
    /// to the same target wherever this base is the same.
    pub fn base_at(&self, pointer: &str) -> &str {
        self.bases
            .iter()
            .filter(|(p, _)| {
                pointer == p
                    || (pointer.starts_with(p.as_str()) && pointer[p.len()..].starts_with('/'))
            })
            .max_by_key(|(p, _)| p.len())
            .map(|(_, b)| b.as_str())
            .unwrap_or("")
    }

    /// Resolve a `$ref` found at `pointer` to the pointer of its target.
    pub fn resolve(&self, pointer: &str, reference: &str) -> Result<String, CompileError> {
        let base = self.base_at(pointer);
        let target = join_uri(base, reference);
        let (resource, fragment) = split_fragment(&target);
        let fragment = percent_decode(&fragment);
        let Some(resource_ptr) = self.resources.get(&resource) else {
            return Err(CompileError::RemoteRef {
                pointer: pointer.to_string(),
                reference: reference.to_string(),
            });
        };
        let resolved = if fragment.is_empty() {
            resource_ptr.clone()
        } else if fragment.starts_with('/') {
            format!("{resource_ptr}{fragment}")
        } else {
            match self.anchors.get(&format!("{resource}#{fragment}")) {
                Some(p) => p.clone(),
                None => {
                    return Err(CompileError::Schema {
                        pointer: pointer.to_string(),
                        message: format!(
                            "$ref `{reference}`: no anchor `{fragment}` in this document"
                        ),
                    })
                }
            }
        };
        if self.root.pointer(&resolved).is_none() {
            return Err(CompileError::Schema {
                pointer: pointer.to_string(),
                message: format!("$ref `{reference}` points to `{resolved}`, which does not exist"),
            });
        }
        Ok(resolved)
    }
}

/// Percent-encode characters that are not allowed in a URI reference inside every `$ref`
/// (Vega-Lite writes `#/definitions/Foo<Bar|null>`). Same target, and strict validators
/// accept it. Only schema positions are visited, never `const`/`enum`/`default` data.
pub fn encode_refs(v: &mut Value) {
    let Value::Object(map) = v else { return };
    for (key, value) in map.iter_mut() {
        if key == "$ref" {
            if let Value::String(r) = value {
                if r.chars().any(needs_encoding) {
                    let mut out = String::with_capacity(r.len() + 8);
                    for c in r.chars() {
                        if needs_encoding(c) {
                            let mut buf = [0u8; 4];
                            for b in c.encode_utf8(&mut buf).bytes() {
                                out.push_str(&format!("%{b:02X}"));
                            }
                        } else {
                            out.push(c);
                        }
                    }
                    *r = out;
                }
            }
        } else if SCHEMA_MAP_KEYWORDS.contains(&key.as_str()) {
            if let Value::Object(children) = value {
                children.values_mut().for_each(encode_refs);
            }
        } else if SCHEMA_ARRAY_KEYWORDS.contains(&key.as_str()) && value.is_array() {
            if let Value::Array(items) = value {
                items.iter_mut().for_each(encode_refs);
            }
        } else if SCHEMA_KEYWORDS.contains(&key.as_str()) {
            encode_refs(value);
        }
    }
}

fn needs_encoding(c: char) -> bool {
    matches!(
        c,
        ' ' | '<' | '>' | '|' | '"' | '{' | '}' | '^' | '`' | '\\'
    ) || (c as u32) < 0x20
}

/// Append a key as a JSON-pointer token.
pub fn push_token(out: &mut String, key: &str) {
    out.push_str(&escape_token(key));
}

/// Escape a key as a JSON-pointer token (borrowed unless it has `~` or `/`).
pub fn escape_token(key: &str) -> Cow<'_, str> {
    if key.contains(['~', '/']) {
        Cow::Owned(key.replace('~', "~0").replace('/', "~1"))
    } else {
        Cow::Borrowed(key)
    }
}

fn split_fragment(uri: &str) -> (String, String) {
    match uri.split_once('#') {
        Some((r, f)) => (r.to_string(), f.to_string()),
        None => (uri.to_string(), String::new()),
    }
}

fn has_scheme(uri: &str) -> bool {
    match uri.find(':') {
        Some(i) => {
            uri[..i]
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || "+-.".contains(c))
                && i > 0
        }
        None => false,
    }
}

/// RFC 3986 reference resolution, reduced to what schemas use: absolute URIs,
/// fragment-only references, absolute paths and relative paths with `./` / `../`.
fn join_uri(base: &str, reference: &str) -> String {
    if has_scheme(reference) {
        return reference.to_string();
    }
    if let Some(fragment) = reference.strip_prefix('#') {
        let (resource, _) = split_fragment(base);
        return format!("{resource}#{fragment}");
    }
    let (base, _) = split_fragment(base);
    if reference.starts_with("//") {
        let scheme = base.split(':').next().unwrap_or("");
        return format!("{scheme}:{reference}");
    }
    // Authority part of the base (scheme://host), kept for absolute paths.
    let authority_end = base
        .find("://")
        .map(|i| {
            base[i + 3..]
                .find('/')
                .map(|j| i + 3 + j)
                .unwrap_or(base.len())
        })
        .unwrap_or(0);
    let (authority, path) = base.split_at(authority_end);
    let mut segments: Vec<&str> = if reference.starts_with('/') {
        Vec::new()
    } else {
        let dir = match path.rfind('/') {
            Some(i) => &path[..i],
            None => "",
        };
        dir.split('/').collect()
    };
    for seg in reference.trim_start_matches('/').split('/') {
        match seg {
            "." => {}
            ".." => {
                if segments.len() > 1 {
                    segments.pop();
                }
            }
            s => segments.push(s),
        }
    }
    let joined = segments.join("/");
    if authority.is_empty() {
        if path.starts_with('/') || reference.starts_with('/') {
            format!("/{}", joined.trim_start_matches('/'))
        } else {
            joined.trim_start_matches('/').to_string()
        }
    } else {
        format!("{authority}/{}", joined.trim_start_matches('/'))
    }
}

fn percent_decode(s: &str) -> String {
    if !s.contains('%') {
        return s.to_string();
    }
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' && i + 2 < bytes.len() {
            if let Ok(b) = u8::from_str_radix(&s[i + 1..i + 3], 16) {
                out.push(b);
                i += 3;
                continue;
            }
        }
        out.push(bytes[i]);
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn checkable_assertions_are_told_apart() {
        let structural = json!({
            "type": "object",
            "title": "t",
            "x-vendor": {"note": 1},
            "properties": {
                "minimum": {"type": "integer", "minimum": 0},
                "kind": {"enum": ["a", "b", 1, null]},
                "tags": {"type": "array", "items": {"$ref": "#/definitions/tag"}, "maxItems": 3}
            },
            "required": ["kind"],
            "additionalProperties": false,
            "definitions": {"tag": {"type": "string", "format": "email", "pattern": "@"}}
        });
        assert!(encoder_checks_all_assertions(&structural));
        for inexact in [
            json!({"properties": {"a": {"propertyNames": {"maxLength": 3}}}}),
            // Checked whole at its object, so its schemas must not refer elsewhere.
            json!({"patternProperties": {"x": {"$ref": "#/$defs/a"}}, "$defs": {"a": {}}}),
            json!({"allOf": [{"type": "string"}]}),
            // A union beside other structure is an intersection.
            json!({"type": "object", "anyOf": [{"required": ["a"]}, {"required": ["b"]}]}),
            json!({"enum": [{"a": 1}]}),
            json!({"const": [1]}),
            json!({"items": [{"type": "string"}]}),
            json!({"$ref": "http://example.com/s.json"}),
            json!({"$ref": "#/definitions/a", "type": "object", "definitions": {"a": {}}}),
            // A local assertion beside `$ref` is a conjunct (2019-09) the shapes do not keep.
            json!({"$ref": "#/definitions/a", "minimum": 1, "definitions": {"a": {}}}),
            json!({"$ref": "#/$defs/a", "patternProperties": {"x": {}}, "$defs": {"a": {}}}),
            // A `$ref` may point into an unknown keyword: it is walked too.
            json!({"$ref": "#/x-defs/a", "x-defs": {"a": {"not": {}}}}),
        ] {
            assert!(!encoder_checks_all_assertions(&inexact), "{inexact}");
        }
    }

    #[test]
    fn local_keywords_assert_formats_where_the_dialect_does() {
        let node = json!({"type": "string", "format": "email", "maxLength": 9, "title": "t"});
        let local = |formats| Value::Object(local_keywords(&node, formats));
        assert_eq!(local(false), json!({"maxLength": 9}));
        assert_eq!(local(true), json!({"format": "email", "maxLength": 9}));
        assert!(local_keywords(&json!({"type": "string"}), true).is_empty());
    }

    #[test]
    fn local_refs_and_ids() {
        let schema = json!({
            "$id": "http://example.com/root.json",
            "$defs": {
                "a": {"$id": "a.json", "$defs": {"x": {"$anchor": "here", "type": "string"}}},
                "b~/c": {"type": "integer"}
            }
        });
        let doc = SchemaDoc::new(&schema);
        assert_eq!(doc.resolve("", "#/$defs/b~0~1c").unwrap(), "/$defs/b~0~1c");
        assert_eq!(doc.resolve("", "a.json").unwrap(), "/$defs/a");
        assert_eq!(doc.resolve("", "a.json#here").unwrap(), "/$defs/a/$defs/x");
        assert_eq!(
            doc.resolve("/$defs/a", "#/$defs/x").unwrap(),
            "/$defs/a/$defs/x"
        );
        assert!(matches!(
            doc.resolve("", "http://other.org/s.json"),
            Err(CompileError::RemoteRef { .. })
        ));
        assert!(matches!(
            doc.resolve("", "#/$defs/missing"),
            Err(CompileError::Schema { .. })
        ));
    }

    #[test]
    fn uri_join() {
        assert_eq!(
            join_uri("http://x.org/a/b.json", "c.json"),
            "http://x.org/a/c.json"
        );
        assert_eq!(
            join_uri("http://x.org/a/b.json", "../c.json"),
            "http://x.org/c.json"
        );
        assert_eq!(
            join_uri("http://x.org/a/b.json", "/d.json"),
            "http://x.org/d.json"
        );
        assert_eq!(
            join_uri("http://x.org/a/b.json", "#foo"),
            "http://x.org/a/b.json#foo"
        );
        assert_eq!(join_uri("", "#/definitions/a"), "#/definitions/a");
        assert_eq!(percent_decode("/a%25b"), "/a%b");
    }

    #[test]
    fn draft_detection() {
        let s = json!({"$schema": "http://json-schema.org/draft-07/schema#"});
        assert_eq!(SchemaDoc::new(&s).draft, Draft::Legacy);
        let s = json!({});
        assert_eq!(SchemaDoc::new(&s).draft, Draft::Modern);
    }
}
