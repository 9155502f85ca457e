//! The JSON the encoder reads: a `serde_json::Value`, or a [`Doc`], a document read from
//! its text without building a `Value` (no map per object, no string per property name or
//! value that needs no unescaping). Both are read through [`JsonNode`], and both are
//! validated by the same `jsonschema` validator code ([`TextJson`] is the `Doc`'s JSON
//! representation for it), so compressing a text gives exactly what compressing the
//! `Value` parsed from it gives.

use crate::shape::same_number;
use jsonschema::json::{Array, Json, Node, NodeIdentity, Object};
use jsonschema::types::JsonType;
use serde::de::{Deserialize, Deserializer, MapAccess, SeqAccess, Visitor};
use serde::ser::{Serialize, SerializeMap, SerializeSeq, Serializer};
use serde_json::{Map, Number, Value};
use std::borrow::Cow;
use std::fmt;

/// One value of a [`JsonNode`], one level deep.
pub(crate) enum View<'a, N: JsonNode> {
    Null,
    Bool(bool),
    Number(&'a Number),
    String(&'a str),
    Array(&'a [N]),
    Object(&'a N::Object),
}

impl<N: JsonNode> Clone for View<'_, N> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<N: JsonNode> Copy for View<'_, N> {}

/// A JSON value the encoder reads. Serializing it writes what `serde_json::to_string` of
/// the equal `Value` writes.
pub(crate) trait JsonNode: Serialize + Sized {
    /// Its objects.
    type Object: ?Sized;
    /// Its representation for the validator.
    type Family: Json;

    /// The value, one level deep.
    fn view(&self) -> View<'_, Self>;
    /// An object's members, in order.
    fn members<'a>(obj: &'a Self::Object) -> impl Iterator<Item = (&'a str, &'a Self)>
    where
        Self: 'a;
    /// An object's member named `key`.
    fn get<'a>(obj: &'a Self::Object, key: &str) -> Option<&'a Self>;
    /// An object's number of members.
    fn len(obj: &Self::Object) -> usize;
    /// The value as the validator reads it.
    fn node(&self) -> <Self::Family as Json>::Node<'_>;
}

impl JsonNode for Value {
    type Object = Map<String, Value>;
    type Family = jsonschema::json::SerdeJson;

    fn view(&self) -> View<'_, Self> {
        match self {
            Value::Null => View::Null,
            Value::Bool(b) => View::Bool(*b),
            Value::Number(n) => View::Number(n),
            Value::String(s) => View::String(s),
            Value::Array(xs) => View::Array(xs),
            Value::Object(m) => View::Object(m),
        }
    }

    fn members<'a>(obj: &'a Map<String, Value>) -> impl Iterator<Item = (&'a str, &'a Value)>
    where
        Value: 'a,
    {
        obj.iter().map(|(k, v)| (k.as_str(), v))
    }

    fn get<'a>(obj: &'a Map<String, Value>, key: &str) -> Option<&'a Value> {
        obj.get(key)
    }

    fn len(obj: &Map<String, Value>) -> usize {
        obj.len()
    }

    fn node(&self) -> &Value {
        self
    }
}

/// `a` and `b` are the same value as [`crate::shape::same_json`] compares two values:
/// object key order ignored, numbers by value.
pub(crate) fn same_as<N: JsonNode>(a: &Value, b: &N) -> bool {
    match (a, b.view()) {
        (Value::Number(x), View::Number(y)) => same_number(x, y),
        (Value::Array(x), View::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(p, q)| same_as(p, q))
        }
        (Value::Object(x), View::Object(y)) => {
            x.len() == N::len(y)
                && x.iter()
                    .all(|(k, v)| N::get(y, k).is_some_and(|w| same_as(v, w)))
        }
        (Value::Null, View::Null) => true,
        (Value::Bool(p), View::Bool(q)) => *p == q,
        (Value::String(p), View::String(q)) => p == q,
        _ => false,
    }
}

/// A member of a [`Doc`] object.
pub(crate) type Member<'s> = (Cow<'s, str>, Doc<'s>);

/// A JSON document read from its text: strings borrowed from the text where they need no
/// unescaping, objects as their members in order. Read by serde_json's own parser, with
/// `Value`'s rules: a key given twice keeps its first place and its last value, a number
/// too large for a double is `null`.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Doc<'s> {
    Null,
    Bool(bool),
    Number(Number),
    String(Cow<'s, str>),
    Array(Vec<Doc<'s>>),
    Object(Vec<Member<'s>>),
}

impl<'s> Doc<'s> {
    /// Parse a JSON text, as `serde_json::from_str::<Value>` parses it (same errors).
    pub(crate) fn parse(text: &'s str) -> Result<Doc<'s>, serde_json::Error> {
        serde_json::from_str(text)
    }

    /// The equal `Value`.
    pub(crate) fn value(&self) -> Value {
        match self {
            Doc::Null => Value::Null,
            Doc::Bool(b) => Value::Bool(*b),
            Doc::Number(n) => Value::Number(n.clone()),
            Doc::String(s) => Value::String(s.to_string()),
            Doc::Array(xs) => Value::Array(xs.iter().map(Doc::value).collect()),
            Doc::Object(ms) => {
                Value::Object(ms.iter().map(|(k, v)| (k.to_string(), v.value())).collect())
            }
        }
    }
}

impl<'s> JsonNode for Doc<'s> {
    type Object = [Member<'s>];
    type Family = TextJson;

    fn view(&self) -> View<'_, Self> {
        match self {
            Doc::Null => View::Null,
            Doc::Bool(b) => View::Bool(*b),
            Doc::Number(n) => View::Number(n),
            Doc::String(s) => View::String(s),
            Doc::Array(xs) => View::Array(xs.as_slice()),
            Doc::Object(ms) => View::Object(ms.as_slice()),
        }
    }

    fn members<'a>(obj: &'a [Member<'s>]) -> impl Iterator<Item = (&'a str, &'a Doc<'s>)>
    where
        Doc<'s>: 'a,
    {
        obj.iter().map(|(k, v)| (&**k, v))
    }

    fn get<'a>(obj: &'a [Member<'s>], key: &str) -> Option<&'a Doc<'s>> {
        obj.iter().find(|(k, _)| k == key).map(|(_, v)| v)
    }

    fn len(obj: &[Member<'s>]) -> usize {
        obj.len()
    }

    fn node(&self) -> &Doc<'_> {
        self
    }
}

impl Serialize for Doc<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self {
            Doc::Null => serializer.serialize_unit(),
            Doc::Bool(b) => serializer.serialize_bool(*b),
            Doc::Number(n) => n.serialize(serializer),
            Doc::String(s) => serializer.serialize_str(s),
            Doc::Array(xs) => {
                let mut seq = serializer.serialize_seq(Some(xs.len()))?;
                for x in xs {
                    seq.serialize_element(x)?;
                }
                seq.end()
            }
            Doc::Object(ms) => {
                let mut map = serializer.serialize_map(Some(ms.len()))?;
                for (k, v) in ms {
                    map.serialize_entry(&**k, v)?;
                }
                map.end()
            }
        }
    }
}

/// A property name, borrowed from the text where it needs no unescaping.
struct Key<'de>(Cow<'de, str>);

impl<'de> Deserialize<'de> for Key<'de> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct KeyVisitor;
        impl<'de> Visitor<'de> for KeyVisitor {
            type Value = Key<'de>;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a string key")
            }
            fn visit_borrowed_str<E>(self, s: &'de str) -> Result<Key<'de>, E> {
                Ok(Key(Cow::Borrowed(s)))
            }
            fn visit_str<E>(self, s: &str) -> Result<Key<'de>, E> {
                Ok(Key(Cow::Owned(s.to_owned())))
            }
            fn visit_string<E>(self, s: String) -> Result<Key<'de>, E> {
                Ok(Key(Cow::Owned(s)))
            }
        }
        deserializer.deserialize_str(KeyVisitor)
    }
}

impl<'de> Deserialize<'de> for Doc<'de> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_any(DocVisitor)
    }
}

struct DocVisitor;

impl<'de> Visitor<'de> for DocVisitor {
    type Value = Doc<'de>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("any valid JSON value")
    }
    fn visit_bool<E>(self, b: bool) -> Result<Doc<'de>, E> {
        Ok(Doc::Bool(b))
    }
    fn visit_i64<E>(self, n: i64) -> Result<Doc<'de>, E> {
        Ok(Doc::Number(n.into()))
    }
    fn visit_u64<E>(self, n: u64) -> Result<Doc<'de>, E> {
        Ok(Doc::Number(n.into()))
    }
    fn visit_f64<E>(self, f: f64) -> Result<Doc<'de>, E> {
        // As `Value` reads it: a number no double holds is `null`.
        Ok(Number::from_f64(f).map_or(Doc::Null, Doc::Number))
    }
    fn visit_borrowed_str<E>(self, s: &'de str) -> Result<Doc<'de>, E> {
        Ok(Doc::String(Cow::Borrowed(s)))
    }
    fn visit_str<E>(self, s: &str) -> Result<Doc<'de>, E> {
        Ok(Doc::String(Cow::Owned(s.to_owned())))
    }
    fn visit_string<E>(self, s: String) -> Result<Doc<'de>, E> {
        Ok(Doc::String(Cow::Owned(s)))
    }
    fn visit_none<E>(self) -> Result<Doc<'de>, E> {
        Ok(Doc::Null)
    }
    fn visit_some<D: Deserializer<'de>>(self, d: D) -> Result<Doc<'de>, D::Error> {
        Deserialize::deserialize(d)
    }
    fn visit_unit<E>(self) -> Result<Doc<'de>, E> {
        Ok(Doc::Null)
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Doc<'de>, A::Error> {
        let mut xs = Vec::with_capacity(seq.size_hint().unwrap_or(0));
        while let Some(x) = seq.next_element()? {
            xs.push(x);
        }
        Ok(Doc::Array(xs))
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Doc<'de>, A::Error> {
        let mut ms: Vec<Member<'de>> = Vec::with_capacity(map.size_hint().unwrap_or(0));
        while let Some(Key(k)) = map.next_key()? {
            let v = map.next_value()?;
            ms.push((k, v));
        }
        if has_duplicates(&ms) {
            ms = merge_duplicates(ms);
        }
        Ok(Doc::Object(ms))
    }
}

/// Whether a key is given twice (rare: then [`merge_duplicates`] makes it `Value`'s map).
fn has_duplicates(ms: &[Member<'_>]) -> bool {
    if ms.len() < 2 {
        return false;
    }
    if ms.len() <= 16 {
        return ms
            .iter()
            .enumerate()
            .any(|(i, (k, _))| ms[..i].iter().any(|(j, _)| j == k));
    }
    let mut seen = rustc_hash::FxHashSet::default();
    !ms.iter().all(|(k, _)| seen.insert(&**k))
}

/// A key given twice keeps its first place and its last value, as in a `Value`'s map.
fn merge_duplicates(ms: Vec<Member<'_>>) -> Vec<Member<'_>> {
    let mut at: rustc_hash::FxHashMap<String, usize> = rustc_hash::FxHashMap::default();
    let mut out: Vec<Member<'_>> = Vec::with_capacity(ms.len());
    for (k, v) in ms {
        match at.get(&*k) {
            Some(&i) => out[i].1 = v,
            None => {
                at.insert(k.to_string(), out.len());
                out.push((k, v));
            }
        }
    }
    out
}

/// [`Doc`] as the validator reads it.
pub(crate) struct TextJson;

impl Json for TextJson {
    type Node<'a> = &'a Doc<'a>;
    type PreparedKey = String;
    type StringBuffer = ();

    fn prepare_key(key: &str) -> String {
        key.to_owned()
    }

    fn with_string_node<T>(_: &mut (), string: &str, f: impl FnOnce(Self::Node<'_>) -> T) -> T {
        f(&Doc::String(Cow::Borrowed(string)))
    }
}

/// A [`Doc`] object as the validator reads it.
#[derive(Clone, Copy)]
pub(crate) struct DocObject<'a>(&'a [Member<'a>]);

/// A [`Doc`] array as the validator reads it.
#[derive(Clone, Copy)]
pub(crate) struct DocArray<'a>(&'a [Doc<'a>]);

impl<'a> Node<'a, TextJson> for &'a Doc<'a> {
    type Object = DocObject<'a>;
    type Array = DocArray<'a>;
    type Number = &'a Number;

    fn as_object(&self) -> Option<DocObject<'a>> {
        match self {
            Doc::Object(ms) => Some(DocObject(ms)),
            _ => None,
        }
    }

    fn as_array(&self) -> Option<DocArray<'a>> {
        match self {
            Doc::Array(xs) => Some(DocArray(xs)),
            _ => None,
        }
    }

    fn as_string(&self) -> Option<Cow<'a, str>> {
        match self {
            Doc::String(s) => Some(Cow::Borrowed(&**s)),
            _ => None,
        }
    }

    fn as_number(&self) -> Option<&'a Number> {
        match self {
            Doc::Number(n) => Some(n),
            _ => None,
        }
    }

    fn as_boolean(&self) -> Option<bool> {
        match self {
            Doc::Bool(b) => Some(*b),
            _ => None,
        }
    }

    fn is_null(&self) -> bool {
        matches!(self, Doc::Null)
    }

    fn json_type(&self) -> JsonType {
        match self {
            Doc::Null => JsonType::Null,
            Doc::Bool(_) => JsonType::Boolean,
            Doc::Number(_) => JsonType::Number,
            Doc::String(_) => JsonType::String,
            Doc::Array(_) => JsonType::Array,
            Doc::Object(_) => JsonType::Object,
        }
    }

    fn equals_value(&self, expected: &Value) -> bool {
        match (*self, expected) {
            (Doc::Null, Value::Null) => true,
            (Doc::Bool(a), Value::Bool(b)) => a == b,
            (Doc::String(a), Value::String(b)) => a == b,
            (Doc::Number(a), Value::Number(_)) => {
                jsonschema::json::cmp::equal(&Value::Number(a.clone()), expected)
            }
            (Doc::Array(_), Value::Array(_)) | (Doc::Object(_), Value::Object(_)) => {
                jsonschema::json::cmp::equal(&self.value(), expected)
            }
            _ => false,
        }
    }

    fn to_value(&self) -> Cow<'a, Value> {
        Cow::Owned(self.value())
    }

    fn identity(&self) -> Option<NodeIdentity> {
        Some(NodeIdentity::new(
            std::ptr::from_ref::<Doc<'a>>(*self) as usize
        ))
    }
}

/// The members of a [`Doc`] object, for the validator.
pub(crate) struct DocMembers<'a>(std::slice::Iter<'a, Member<'a>>);

impl<'a> Iterator for DocMembers<'a> {
    type Item = (&'a str, &'a Doc<'a>);

    fn next(&mut self) -> Option<Self::Item> {
        self.0.next().map(|(k, v)| (&**k, v))
    }
}

impl<'a> Object<'a, TextJson> for DocObject<'a> {
    type Node = &'a Doc<'a>;
    type MemberName = &'a str;
    type MembersIter = DocMembers<'a>;

    fn len(&self) -> usize {
        self.0.len()
    }

    fn get(&self, key: &String) -> Option<&'a Doc<'a>> {
        self.0.iter().find(|(k, _)| k == key).map(|(_, v)| v)
    }

    fn members(&self) -> DocMembers<'a> {
        DocMembers(self.0.iter())
    }
}

impl<'a> Array<'a, TextJson> for DocArray<'a> {
    type Node = &'a Doc<'a>;
    type ElementsIter = std::slice::Iter<'a, Doc<'a>>;

    fn len(&self) -> usize {
        self.0.len()
    }

    fn elements(&self) -> std::slice::Iter<'a, Doc<'a>> {
        self.0.iter()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A text read as a `Doc` is the `Value` serde_json reads, written back the same way.
    #[test]
    fn a_doc_is_the_value_of_its_text() {
        for text in [
            r#"{"a": 1, "b": [true, null, "x\"y"], "c": {"d": 1.5e3, "e": -0.0}}"#,
            r#"{"k": 1, "j": 2, "k": 3}"#,
            r#"[1e300, 18446744073709551615, -9223372036854775808, "\u00e9"]"#,
            r#""plain""#,
        ] {
            let value: Value = serde_json::from_str(text).unwrap();
            let doc = Doc::parse(text).unwrap();
            assert_eq!(doc.value(), value, "{text}");
            assert_eq!(
                serde_json::to_string(&doc).unwrap(),
                serde_json::to_string(&value).unwrap()
            );
        }
        for bad in ["{", "[1e400]", "[1,]", "", "{\"a\" 1}", "1 2"] {
            let a = Doc::parse(bad).unwrap_err().to_string();
            let b = serde_json::from_str::<Value>(bad).unwrap_err().to_string();
            assert_eq!(a, b);
        }
    }

    #[test]
    fn a_key_given_twice_keeps_its_first_place_and_last_value() {
        let many: String = (0..40).map(|i| format!("\"k{i}\": {i}, ")).collect();
        let text = format!("{{{many}\"k3\": \"last\"}}");
        let value: Value = serde_json::from_str(&text).unwrap();
        assert_eq!(Doc::parse(&text).unwrap().value(), value);
        assert_eq!(value["k3"], "last");
    }
}
