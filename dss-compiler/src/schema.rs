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
pub(crate) enum Draft {
    /// draft-04/06/07: `$ref` siblings are ignored, `items: [..]` is a tuple, `definitions`.
    Legacy,
    /// 2019-09 / 2020-12 (and the default): `$ref` is one more conjunct, `prefixItems`.
    Modern,
}

/// A schema document with its resource index.
pub(crate) struct SchemaDoc<'a> {
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
pub(crate) fn formats_assert(root: &Value) -> bool {
    let dialect = root.get("$schema").and_then(Value::as_str).unwrap_or("");
    !(dialect.contains("2019-09") || dialect.contains("2020-12"))
}

/// How dss treats a JSON Schema keyword: what the shapes make of it and whether the
/// encoder's walk checks it, which decides where compress may skip the full validator
/// (see [`encoder_checks_all_assertions`]). Every keyword list of the compiler is a
/// filter over [`KEYWORDS`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum KeywordClass {
    /// A structural assertion the shapes capture and the encoder checks through them (or,
    /// `patternProperties`, whole at its object, see [`pattern_check`]): `type`,
    /// `enum`/`const` of scalars, `properties`, `required`, `additionalProperties`,
    /// `items` (one schema). Beside a `$ref` or a union, any of them makes the node an
    /// intersection, which the shapes approximate.
    Structural,
    /// `anyOf`/`oneOf`: a union, exact where alone on its node and its branches admit
    /// disjoint JSON types.
    Union,
    /// An assertion about one value alone (no subschema, no other location): bounds,
    /// lengths, `pattern`, `format`, `uniqueItems`, `dependentRequired`. The shapes
    /// capture them only in part, so the encoder checks them at each node where they
    /// appear, with a validator built from just those keywords (see [`local_keywords`]):
    /// the validator's own semantics, without a second walk of the document.
    Local,
    /// `$ref`: exact where it points into the document and has no sibling assertion.
    Reference,
    /// An assertion neither the shapes nor the local checks capture exactly (tuples,
    /// `allOf`, `not`, conditionals, `contains`, dynamic references, `unevaluated*`,
    /// `content*`): the shapes over-approximate it and compress keeps the validator.
    Approximated,
    /// Names a resource or its dialect: `$schema`, `$id`, anchors, `$vocabulary`.
    Identifier,
    /// `$defs`/`definitions`: subschemas kept to be referred to.
    Definitions,
    /// An annotation validators ignore: `title`, `description`, `default`, `examples`…
    Annotation,
}

/// What a keyword's value holds: where [`SchemaDoc`] and [`encode_refs`] find subschemas,
/// and which values [`encoder_checks_all_assertions`] never walks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Holds {
    /// One subschema.
    Schema,
    /// An array of subschemas.
    Schemas,
    /// One subschema or (draft-07 tuples) an array of them: `items`.
    SchemaOrSchemas,
    /// An object of subschemas by name.
    SchemaMap,
    /// A URI reference to a schema.
    Reference,
    /// Instance values or names (`enum`, `const`, `default`, `examples`, `required`,
    /// `type`…): never a schema, never walked for one.
    Data,
    /// A value of the keyword's own (a number, a string, a flag). Walked like an unknown
    /// keyword's: a `$ref` may point anywhere in the document.
    Value,
}

impl Holds {
    /// Whether the value is an object of subschemas.
    pub(crate) fn schema_map(self) -> bool {
        self == Holds::SchemaMap
    }

    /// Whether the value, where it is an array, is an array of subschemas.
    pub(crate) fn schema_array(self) -> bool {
        matches!(self, Holds::Schemas | Holds::SchemaOrSchemas)
    }

    /// Whether the value is a subschema.
    pub(crate) fn schema(self) -> bool {
        matches!(self, Holds::Schema | Holds::SchemaOrSchemas)
    }
}

/// The keyword family whose file in `shape::lower` turns a keyword into parts. A node
/// with none of the [`Family::is_own`] keywords admits every value of its own.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Family {
    /// `type` (`shape/lower/types.rs`).
    Types,
    /// `enum`/`const` (`shape/lower/values.rs`).
    Values,
    /// `properties`, `required`, … (`shape/lower/objects.rs`).
    Objects,
    /// `items`, `prefixItems`, `additionalItems` (`shape/lower/arrays.rs`).
    Arrays,
    /// `$ref`, `allOf`, `anyOf`/`oneOf`, which combine other nodes' parts
    /// (`shape/lower/combinators.rs`).
    Combinators,
}

impl Family {
    /// Whether the family lowers a node's own keywords (every family but the combinators).
    pub(crate) fn is_own(self) -> bool {
        self != Family::Combinators
    }
}

/// A JSON Schema draft, for the [`Drafts`] that define a keyword.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum DraftVersion {
    /// draft-04.
    V4,
    /// draft-06.
    V6,
    /// draft-07.
    V7,
    /// 2019-09.
    V2019,
    /// 2020-12.
    V2020,
}

/// The drafts that define a keyword (its meta-schema lists it), a contiguous range; none
/// for a keyword outside the standard (OpenAPI's `example`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Drafts(Option<(DraftVersion, DraftVersion)>);

impl Drafts {
    /// No draft defines it.
    pub(crate) const NONE: Drafts = Drafts(None);
    /// Every draft from draft-04 on.
    pub(crate) const ALL: Drafts = Drafts::range(DraftVersion::V4, DraftVersion::V2020);

    /// The drafts from `first` to `last`.
    pub(crate) const fn range(first: DraftVersion, last: DraftVersion) -> Drafts {
        Drafts(Some((first, last)))
    }

    /// The drafts from `first` on.
    pub(crate) const fn since(first: DraftVersion) -> Drafts {
        Drafts::range(first, DraftVersion::V2020)
    }

    /// Whether `draft` defines the keyword.
    #[cfg(test)]
    pub(crate) fn contains(self, draft: DraftVersion) -> bool {
        self.0.is_some_and(|(a, b)| a <= draft && draft <= b)
    }
}

/// One JSON Schema keyword as dss sees it: one row of [`KEYWORDS`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Keyword {
    /// The keyword.
    pub name: &'static str,
    /// What the shapes and the encoder make of it.
    pub class: KeywordClass,
    /// What its value holds.
    pub holds: Holds,
    /// The lowering family that reads it (`None`: the shapes do not).
    pub family: Option<Family>,
    /// The drafts that define it.
    pub drafts: Drafts,
}

/// The keyword table: [`KEYWORDS`] and [`keyword`], from one list of rows.
macro_rules! keyword_table {
    ($($name:literal => $class:ident, $holds:ident, $family:expr, $drafts:expr;)*) => {
        /// Every keyword dss knows, with its class, what its value holds, the lowering
        /// family that reads it and the drafts that define it. Any other keyword is
        /// ignored, as validators ignore it (but walked: a `$ref` may point into it).
        pub(crate) const KEYWORDS: &[Keyword] = &[$(Keyword {
            name: $name,
            class: KeywordClass::$class,
            holds: Holds::$holds,
            family: $family,
            drafts: $drafts,
        }),*];

        /// The row of [`KEYWORDS`] for `name` (`None`: not a keyword dss knows).
        pub(crate) fn keyword(name: &str) -> Option<&'static Keyword> {
            match name {
                $($name => {
                    const ROW: Keyword = Keyword {
                        name: $name,
                        class: KeywordClass::$class,
                        holds: Holds::$holds,
                        family: $family,
                        drafts: $drafts,
                    };
                    Some(&ROW)
                })*
                _ => None,
            }
        }
    };
}

// Short names for the table's columns.
use DraftVersion::{V2019, V2020, V4, V6, V7};
const ALL: Drafts = Drafts::ALL;
const TYPES: Option<Family> = Some(Family::Types);
const VALUES: Option<Family> = Some(Family::Values);
const OBJECTS: Option<Family> = Some(Family::Objects);
const ARRAYS: Option<Family> = Some(Family::Arrays);
const COMBINATORS: Option<Family> = Some(Family::Combinators);

keyword_table! {
    // Core: identifiers, definitions, references.
    "$schema" => Identifier, Value, None, ALL;
    "id" => Identifier, Value, None, Drafts::range(V4, V4);
    "$id" => Identifier, Value, None, Drafts::since(V6);
    "$anchor" => Identifier, Value, None, Drafts::since(V2019);
    "$dynamicAnchor" => Identifier, Value, None, Drafts::since(V2020);
    "$recursiveAnchor" => Identifier, Value, None, Drafts::since(V2019);
    "$vocabulary" => Identifier, Value, None, Drafts::since(V2019);
    "$defs" => Definitions, SchemaMap, None, Drafts::since(V2019);
    "definitions" => Definitions, SchemaMap, None, ALL;
    // draft-04 takes `$ref` from JSON Reference; its meta-schema does not list it.
    "$ref" => Reference, Reference, COMBINATORS, ALL;
    "$dynamicRef" => Approximated, Reference, None, Drafts::since(V2020);
    "$recursiveRef" => Approximated, Reference, None, Drafts::since(V2019);
    // Combining subschemas.
    "allOf" => Approximated, Schemas, COMBINATORS, ALL;
    "anyOf" => Union, Schemas, COMBINATORS, ALL;
    "oneOf" => Union, Schemas, COMBINATORS, ALL;
    "not" => Approximated, Schema, None, ALL;
    "if" => Approximated, Schema, None, Drafts::since(V7);
    "then" => Approximated, Schema, None, Drafts::since(V7);
    "else" => Approximated, Schema, None, Drafts::since(V7);
    // Any instance.
    "type" => Structural, Data, TYPES, ALL;
    "enum" => Structural, Data, VALUES, ALL;
    "const" => Structural, Data, VALUES, Drafts::since(V6);
    // Numbers.
    "multipleOf" => Local, Value, None, ALL;
    "maximum" => Local, Value, None, ALL;
    "exclusiveMaximum" => Local, Value, None, ALL;
    "minimum" => Local, Value, None, ALL;
    "exclusiveMinimum" => Local, Value, None, ALL;
    // Strings.
    "maxLength" => Local, Value, None, ALL;
    "minLength" => Local, Value, None, ALL;
    "pattern" => Local, Value, None, ALL;
    "format" => Local, Value, None, ALL;
    "contentEncoding" => Approximated, Value, None, Drafts::since(V7);
    "contentMediaType" => Approximated, Value, None, Drafts::since(V7);
    "contentSchema" => Approximated, Schema, None, Drafts::since(V2019);
    // Arrays.
    "items" => Structural, SchemaOrSchemas, ARRAYS, ALL;
    "prefixItems" => Approximated, Schemas, ARRAYS, Drafts::since(V2020);
    "additionalItems" => Approximated, Schema, ARRAYS, Drafts::range(V4, V2019);
    "contains" => Approximated, Schema, None, Drafts::since(V6);
    "minContains" => Approximated, Value, None, Drafts::since(V2019);
    "maxContains" => Approximated, Value, None, Drafts::since(V2019);
    "unevaluatedItems" => Approximated, Schema, None, Drafts::since(V2019);
    "maxItems" => Local, Value, None, ALL;
    "minItems" => Local, Value, None, ALL;
    "uniqueItems" => Local, Value, None, ALL;
    // Objects.
    "properties" => Structural, SchemaMap, OBJECTS, ALL;
    "required" => Structural, Data, OBJECTS, ALL;
    "additionalProperties" => Structural, Schema, OBJECTS, ALL;
    "patternProperties" => Structural, SchemaMap, OBJECTS, ALL;
    "propertyNames" => Approximated, Schema, None, Drafts::since(V6);
    "dependencies" => Approximated, SchemaMap, None, ALL;
    "dependentSchemas" => Approximated, SchemaMap, None, Drafts::since(V2019);
    "dependentRequired" => Local, Data, None, Drafts::since(V2019);
    "unevaluatedProperties" => Approximated, Schema, None, Drafts::since(V2019);
    "maxProperties" => Local, Value, None, ALL;
    "minProperties" => Local, Value, None, ALL;
    // Annotations.
    "title" => Annotation, Value, None, ALL;
    "description" => Annotation, Value, None, ALL;
    "default" => Annotation, Data, None, ALL;
    "examples" => Annotation, Data, None, Drafts::since(V6);
    "example" => Annotation, Data, None, Drafts::NONE;
    "$comment" => Annotation, Value, None, Drafts::since(V7);
    "readOnly" => Annotation, Value, None, Drafts::since(V7);
    "writeOnly" => Annotation, Value, None, Drafts::since(V7);
    "deprecated" => Annotation, Value, None, Drafts::since(V2019);
}

/// Whether `schema` is an object with keys but not one JSON Schema keyword dss knows: most
/// likely a data document given as a schema. Such a schema accepts every document (its
/// keys are ignored, as validators ignore unknown keywords), so callers should warn. The
/// empty schema `{}` is not keywordless: it asks for "anything" on purpose.
pub fn is_keywordless(schema: &Value) -> bool {
    schema
        .as_object()
        .is_some_and(|o| !o.is_empty() && o.keys().all(|k| keyword(k).is_none()))
}

/// The class of keyword `name` (`None`: not a keyword dss knows).
pub(crate) fn keyword_class(name: &str) -> Option<KeywordClass> {
    keyword(name).map(|k| k.class)
}

/// Whether `name` is a keyword of class `class`.
pub(crate) fn is_class(name: &str, class: KeywordClass) -> bool {
    keyword_class(name) == Some(class)
}

/// The keywords of class `class`, in table order.
pub(crate) fn keywords_of(class: KeywordClass) -> impl Iterator<Item = &'static str> {
    KEYWORDS
        .iter()
        .filter(move |k| k.class == class)
        .map(|k| k.name)
}

/// What the value of keyword `name` holds ([`Holds::Value`] for a keyword dss does not
/// know).
fn holds(name: &str) -> Holds {
    keyword(name).map_or(Holds::Value, |k| k.holds)
}

/// The local assertions of one schema node (see [`KeywordClass::Local`]); `format` counts only
/// where it asserts (`formats`, see [`formats_assert`]).
pub(crate) fn local_keywords(node: &Value, formats: bool) -> serde_json::Map<String, Value> {
    let mut local = serde_json::Map::new();
    if let Value::Object(m) = node {
        for (k, v) in m {
            if is_class(k, KeywordClass::Local) && (k != "format" || formats) {
                local.insert(k.clone(), v.clone());
            }
        }
    }
    local
}

/// Whether a subschema holds no reference (so it means the same copied elsewhere).
fn self_contained(v: &Value) -> bool {
    match v {
        Value::Object(m) => m
            .iter()
            .all(|(k, x)| holds(k) != Holds::Reference && self_contained(x)),
        Value::Array(xs) => xs.iter().all(self_contained),
        _ => true,
    }
}

/// What a node with `patternProperties` asserts of its keys, as a schema of its own
/// (`None` without): the patterns with their schemas, the declared names, and
/// `additionalProperties`. The shapes only approximate it (undeclared values get the union
/// of the schemas they might need), so the encoder checks it whole at the object; the
/// schema walk has made sure the schemas in it hold no reference.
pub(crate) fn pattern_check(node: &Value) -> Option<serde_json::Map<String, Value>> {
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

/// Whether the encoder checks every assertion in the schema: the shapes capture the
/// [`KeywordClass::Structural`] keywords, `type`,
/// `properties`, `required`, `additionalProperties`, `items` (one schema), `enum`/`const`
/// of scalars and local `$ref`s without sibling assertions exactly, and the
/// [`KeywordClass::Local`] ones are checked node by node. `anyOf`/`oneOf` alone on their node pass
/// here; the shape builder then requires their branches to admit disjoint JSON types
/// (`X` or `null`), where the union of the branches' shapes is exact. Then a successful
/// encode is a complete validation, and compress needs no second walk with the full
/// validator. Conservative: anything else (`allOf`, tuples, a remote or unusual
/// reference) answers false.
pub(crate) fn encoder_checks_all_assertions(root: &Value) -> bool {
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
            let row = keyword(key);
            let class = row.map(|k| k.class);
            let exact = match key.as_str() {
                _ if class == Some(KeywordClass::Approximated) => false,
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
                // A union alone among the structural keywords of its node.
                k if class == Some(KeywordClass::Union) => {
                    value.as_array().is_some_and(|xs| !xs.is_empty())
                        && map.keys().all(|o| {
                            o == k
                                || !matches!(
                                    keyword_class(o),
                                    Some(
                                        KeywordClass::Structural
                                            | KeywordClass::Union
                                            | KeywordClass::Reference
                                    )
                                )
                        })
                }
                _ => true,
            };
            if !exact {
                return false;
            }
            let asserts = match class {
                _ if key == "format" => formats,
                Some(KeywordClass::Local | KeywordClass::Structural | KeywordClass::Union) => true,
                _ => false,
            };
            if asserts {
                assertions += 1;
            }
            // Every value that may hold a schema is walked, unknown keywords included: a
            // `$ref` may point anywhere in the document.
            let ok = match row.map_or(Holds::Value, |k| k.holds) {
                Holds::Data => true,
                Holds::SchemaMap => match value {
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

impl<'a> SchemaDoc<'a> {
    pub(crate) fn new(root: &'a Value) -> Self {
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
    pub(crate) fn node(&self, pointer: &str) -> &'a Value {
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
            let holds = holds(key);
            let is_map = holds.schema_map();
            let is_array = holds.schema_array() && value.is_array();
            let is_schema = holds.schema();
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
    pub(crate) fn base_at(&self, pointer: &str) -> &str {
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
    pub(crate) fn resolve(&self, pointer: &str, reference: &str) -> Result<String, CompileError> {
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
pub(crate) fn encode_refs(v: &mut Value) {
    let Value::Object(map) = v else { return };
    for (key, value) in map.iter_mut() {
        if key == "$ref" {
            if let Value::String(r) = value {
                if let Some(encoded) = encode_ref(r) {
                    *r = encoded;
                }
            }
        } else {
            let holds = holds(key);
            if holds.schema_map() {
                if let Value::Object(children) = value {
                    children.values_mut().for_each(encode_refs);
                }
            } else if holds.schema_array() && value.is_array() {
                if let Value::Array(items) = value {
                    items.iter_mut().for_each(encode_refs);
                }
            } else if holds.schema() {
                encode_refs(value);
            }
        }
    }
}

/// `reference` with the characters a URI reference may not hold percent-encoded (`None`:
/// it has none). In the fragment, `[`, `]` and `#` are encoded too: they are delimiters a
/// fragment may not hold (Vega-Lite writes `#/definitions/MarkPropDef<number[]>`).
fn encode_ref(reference: &str) -> Option<String> {
    let fragment_at = reference.find('#').map_or(reference.len(), |i| i + 1);
    let needs =
        |i: usize, c: char| needs_encoding(c) || (i >= fragment_at && matches!(c, '[' | ']' | '#'));
    if !reference.char_indices().any(|(i, c)| needs(i, c)) {
        return None;
    }
    let mut out = String::with_capacity(reference.len() + 8);
    for (i, c) in reference.char_indices() {
        if needs(i, c) {
            let mut buf = [0u8; 4];
            for b in c.encode_utf8(&mut buf).bytes() {
                out.push_str(&format!("%{b:02X}"));
            }
        } else {
            out.push(c);
        }
    }
    Some(out)
}

fn needs_encoding(c: char) -> bool {
    matches!(
        c,
        ' ' | '<' | '>' | '|' | '"' | '{' | '}' | '^' | '`' | '\\'
    ) || (c as u32) < 0x20
}

/// Append a key as a JSON-pointer token.
pub(crate) fn push_token(out: &mut String, key: &str) {
    out.push_str(&escape_token(key));
}

/// Escape a key as a JSON-pointer token (borrowed unless it has `~` or `/`).
pub(crate) fn escape_token(key: &str) -> Cow<'_, str> {
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

/// Decode `%XX` escapes (a URI fragment as a JSON pointer).
pub(crate) fn percent_decode(s: &str) -> String {
    if !s.contains('%') {
        return s.to_string();
    }
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        // Two hex digits after `%` (read as bytes: a `%` before a multi-byte character is
        // kept as it is).
        let hex = bytes
            .get(i + 1..i + 3)
            .and_then(|h| std::str::from_utf8(h).ok())
            .and_then(|h| u8::from_str_radix(h, 16).ok());
        match (bytes[i], hex) {
            (b'%', Some(b)) => {
                out.push(b);
                i += 3;
            }
            (b, _) => {
                out.push(b);
                i += 1;
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// The keywords each draft's meta-schema lists (2019-09 and 2020-12: every vocabulary's).
    fn vocabulary(draft: DraftVersion) -> std::collections::BTreeSet<String> {
        use referencing::meta;
        let metas: Vec<&Value> = match draft {
            DraftVersion::V4 => vec![&meta::DRAFT4],
            DraftVersion::V6 => vec![&meta::DRAFT6],
            DraftVersion::V7 => vec![&meta::DRAFT7],
            DraftVersion::V2019 => vec![
                &meta::DRAFT201909,
                &meta::DRAFT201909_CORE,
                &meta::DRAFT201909_APPLICATOR,
                &meta::DRAFT201909_VALIDATION,
                &meta::DRAFT201909_META_DATA,
                &meta::DRAFT201909_FORMAT,
                &meta::DRAFT201909_CONTENT,
            ],
            DraftVersion::V2020 => vec![
                &meta::DRAFT202012,
                &meta::DRAFT202012_CORE,
                &meta::DRAFT202012_APPLICATOR,
                &meta::DRAFT202012_UNEVALUATED,
                &meta::DRAFT202012_VALIDATION,
                &meta::DRAFT202012_META_DATA,
                &meta::DRAFT202012_FORMAT_ANNOTATION,
                &meta::DRAFT202012_FORMAT_ASSERTION,
                &meta::DRAFT202012_CONTENT,
            ],
        };
        metas
            .into_iter()
            .filter_map(|m| m.get("properties").and_then(Value::as_object))
            .flat_map(|ps| ps.keys().cloned())
            .collect()
    }

    #[test]
    fn keywordless_objects_are_data_not_schemas() {
        assert!(super::is_keywordless(&json!({"name": "Ada", "age": 36})));
        assert!(!super::is_keywordless(&json!({})));
        assert!(!super::is_keywordless(&json!(true)));
        assert!(!super::is_keywordless(&json!({"title": "t", "x": 1})));
        assert!(!super::is_keywordless(&json!({"type": "object"})));
    }

    /// Every keyword of every draft's vocabularies (draft-07 and 2020-12 included) has a
    /// row, and a row names exactly the drafts whose meta-schema lists it.
    #[test]
    fn every_vocabulary_keyword_has_a_class() {
        use DraftVersion::*;
        for draft in [V4, V6, V7, V2019, V2020] {
            let listed = vocabulary(draft);
            assert!(listed.len() > 30, "{draft:?}: {listed:?}");
            for name in &listed {
                let row = keyword(name);
                assert!(row.is_some(), "{draft:?}: `{name}` has no class");
                assert!(
                    row.is_some_and(|r| r.drafts.contains(draft)),
                    "{draft:?} defines `{name}`"
                );
            }
            for row in KEYWORDS.iter().filter(|r| r.drafts.contains(draft)) {
                // draft-04 takes `$ref` from JSON Reference, outside its meta-schema.
                let exception = draft == V4 && row.name == "$ref";
                assert!(
                    listed.contains(row.name) || exception,
                    "{draft:?} does not define `{}`",
                    row.name
                );
            }
        }
        assert_eq!(keyword_class("minimum"), Some(KeywordClass::Local));
        assert_eq!(keyword_class("x-vendor"), None);
    }

    /// [`keyword`] answers each row of [`KEYWORDS`], and no keyword has two rows.
    #[test]
    fn keyword_lookup_is_the_table() {
        let mut names = std::collections::HashSet::new();
        for row in KEYWORDS {
            assert!(names.insert(row.name), "`{}` twice", row.name);
            assert_eq!(keyword(row.name), Some(row));
        }
        // The subschema positions the document index and `encode_refs` visit.
        assert!(holds("items").schema() && holds("items").schema_array());
        assert!(holds("$defs").schema_map() && !holds("$defs").schema());
        assert!(!holds("enum").schema() && !holds("x-vendor").schema_map());
    }

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

    /// Vega-Lite's `#/definitions/MarkPropDef<number[]>`: `[` and `]` may not be in a URI
    /// fragment, so the validator's meta-schema rejected the reference until encoded.
    #[test]
    fn references_are_encoded_as_uri_references() {
        assert_eq!(
            encode_ref("#/definitions/MarkPropDef<number[]>").as_deref(),
            Some("#/definitions/MarkPropDef%3Cnumber%5B%5D%3E")
        );
        assert_eq!(encode_ref("#/definitions/a"), None);
        // Brackets before the fragment (an IPv6 host) are the URI's own.
        assert_eq!(
            encode_ref("http://[::1]/s.json#/a[0]").as_deref(),
            Some("http://[::1]/s.json#/a%5B0%5D")
        );
        let mut schema = json!({"properties": {"a": {"$ref": "#/definitions/L<x[]>"}}, "enum": [{"$ref": "a b"}]});
        encode_refs(&mut schema);
        assert_eq!(
            schema["properties"]["a"]["$ref"],
            json!("#/definitions/L%3Cx%5B%5D%3E")
        );
        assert_eq!(schema["enum"][0]["$ref"], json!("a b"));
        let doc_schema = json!({"definitions": {"L<x[]>": {"type": "string"}}, "$ref": "#/definitions/L%3Cx%5B%5D%3E"});
        let doc = SchemaDoc::new(&doc_schema);
        assert_eq!(
            doc.resolve("", "#/definitions/L%3Cx%5B%5D%3E").unwrap(),
            "/definitions/L<x[]>"
        );
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
        // A `%` before a multi-byte character is not an escape (and not a panic).
        assert_eq!(percent_decode("/a%bé"), "/a%bé");
    }

    #[test]
    fn draft_detection() {
        let s = json!({"$schema": "http://json-schema.org/draft-07/schema#"});
        assert_eq!(SchemaDoc::new(&s).draft, Draft::Legacy);
        let s = json!({});
        assert_eq!(SchemaDoc::new(&s).draft, Draft::Modern);
    }
}
