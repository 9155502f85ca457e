//! The data model of shapes: expressions ([`Expr`]), the values each admits by JSON type
//! ([`Parts`] and its per-type parts), object forms ([`Record`]), and the built arena
//! ([`Shapes`]), and the JSON types of a shape as bits ([`Kind`]).
//!
//! These types are built from the schema when a spec is compiled or loaded, never saved
//! (`spec.json` holds the schema, [`crate::spec::SpecFile`]); what is derived from them
//! for the codec (a [`Kind`] per expression…) is in [`crate::codec::Tables`]. Their serde
//! forms are what `spec.json` versions 1 and 2 saved, read only to convert such a file.

use serde::{Deserialize, Serialize};
use serde_json::{Number, Value};
use std::sync::Arc;

pub use super::regular::RegularCheck;

pub(crate) type ExprId = u32;
/// The expression that admits every JSON value (written as plain JSON).
pub(crate) const ANY: ExprId = 0;
/// The expression that admits nothing.
pub(crate) const NEVER: ExprId = 1;

/// A lazily combined subschema.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub(crate) enum Expr {
    Any,
    Never,
    /// The subschema at this JSON pointer.
    Node(String),
    /// Values admitted by any member (sorted, deduplicated, two or more).
    Union(Vec<ExprId>),
    /// Values admitted by every member (sorted, deduplicated, two or more).
    Inter(Vec<ExprId>),
}

/// The values of one shape, by JSON type. `None` / `false` = that type is not admitted.
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub(crate) struct Parts {
    /// Unconstrained: every JSON value, written as compact JSON (the fallback).
    #[serde(default, skip_serializing_if = "is_false")]
    pub any: bool,
    #[serde(default, skip_serializing_if = "is_false")]
    pub null: bool,
    #[serde(default, skip_serializing_if = "is_false")]
    pub bool_false: bool,
    #[serde(default, skip_serializing_if = "is_false")]
    pub bool_true: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub number: Option<NumPart>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub string: Option<StrPart>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub array: Option<ArrPart>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub object: Option<ObjPart>,
    /// Arrays and objects an `enum`/`const` lists, each as its compact JSON (its one
    /// spelling in every grammar and in the codec), in schema order, without repeats (as
    /// JSON Schema compares values: [`same_json`]). Arrays are listed only where `array`
    /// is `None`, objects only where `object` is `None`: a listed value and a free one of
    /// the same type are merged into the free part (see `algebra.rs`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub listed: Option<Vec<String>>,
}

fn is_false(b: &bool) -> bool {
    !*b
}

#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub(crate) struct NumPart {
    pub integer: bool,
    /// `enum`/`const` values, if restricted.
    pub values: Option<Vec<Number>>,
    /// A lower bound a grammar can say (`minimum` 0 or 1), so a model cannot write `-3`
    /// for a count. Only for free numbers.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lower: Option<Lower>,
    /// Integer bounds a grammar says digit by digit (`minimum`/`maximum` and their
    /// exclusive forms, both present or a lower bound >= 0; see
    /// [`range_regex`](super::regular::range_regex)). Only for free integers.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub range: Option<IntRange>,
}

/// Inclusive integer bounds (`max` `None`: unbounded above).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub(crate) struct IntRange {
    pub min: i64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max: Option<i64>,
}

impl IntRange {
    /// The regular expression of the integers' text.
    pub(crate) fn regex(&self) -> Option<String> {
        super::regular::range_regex(Some(self.min), self.max)
    }
}

/// Lower bounds a grammar can express: `NonNegative` admits all `Positive` values.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub(crate) enum Lower {
    NonNegative,
    /// Integers only (`[1-9]…`).
    Positive,
}

#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub(crate) struct StrPart {
    /// `enum`/`const` values, if restricted (schema order).
    pub values: Option<Vec<String>>,
    /// A lexical form a grammar can say (a non-empty string, an asserted `date` or
    /// `date-time` format), so a model cannot write `""` or `"last spring"` there. Only for
    /// free strings.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lexical: Option<Lexical>,
}

/// String forms a grammar can express: `NonEmpty` admits every `Date` and `DateTime`.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Lexical {
    /// A string of at least one character.
    NonEmpty,
    /// A `format: date` string (`2024-01-31`).
    Date,
    /// A `format: date-time` string (`2024-01-31T12:00:00Z`).
    DateTime,
    /// A string matching every one of these regular expressions (`pattern`, `format`,
    /// `minLength`/`maxLength`), always written in quotes; the grammars write its
    /// automaton, the decoder checks the expressions (see `shape/regular.rs`).
    Regular(Vec<RegularCheck>),
}

impl Lexical {
    /// The regular constraints, if this form is [`Lexical::Regular`].
    pub fn regular(&self) -> Option<&[RegularCheck]> {
        match self {
            Lexical::Regular(c) => Some(c),
            _ => None,
        }
    }
    /// Always written in quotes (never a bare word).
    pub(crate) fn always_quoted(&self) -> bool {
        !matches!(self, Lexical::NonEmpty)
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub(crate) struct ArrPart {
    /// Tuple positions (`prefixItems`, or draft-07 `items: [..]`).
    pub prefix: Vec<ExprId>,
    /// Items after the prefix; `None` = no more items allowed.
    pub items: Option<ExprId>,
    /// `minItems`, so a grammar can demand the items a valid instance must have (a model
    /// must not be able to write an empty `fields:` section when the schema wants one).
    /// Never above the most items the array can hold.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub min_items: u32,
    /// `maxItems` (`None`: no bound beyond the tuple's), so a grammar can stop at it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_items: Option<u32>,
}

fn is_zero(n: &u32) -> bool {
    *n == 0
}

impl ArrPart {
    pub(crate) fn item_at(&self, i: usize) -> Option<ExprId> {
        self.prefix.get(i).copied().or(self.items)
    }
    /// The most items the array can hold (`None`: unbounded).
    pub(crate) fn max_len(&self) -> Option<usize> {
        let shape = match self.prefix.iter().position(|&e| e == NEVER) {
            Some(i) => Some(i),
            None => self.items.is_none().then_some(self.prefix.len()),
        };
        match (shape, self.max_items) {
            (Some(a), Some(b)) => Some(a.min(b as usize)),
            (a, b) => a.or(b.map(|b| b as usize)),
        }
    }
    /// An array part whose `min_items` is clamped to the most items it can hold.
    pub(super) fn new(
        prefix: Vec<ExprId>,
        items: Option<ExprId>,
        min_items: u32,
        max_items: Option<u32>,
    ) -> ArrPart {
        let mut a = ArrPart {
            prefix,
            items,
            min_items,
            max_items,
        };
        if let Some(m) = a.max_len() {
            a.min_items = a.min_items.min(m as u32);
        }
        a
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub(crate) struct ObjPart {
    /// Alternative object forms (one per `anyOf`/`oneOf` variant that is an object).
    pub records: Vec<Arc<Record>>,
    /// With two or more records: one record admitting all of them (field shapes are
    /// unions), used when no discriminating tag property exists.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub merged: Option<Arc<Record>>,
}

/// One object form: declared properties in schema order.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub(crate) struct Record {
    /// Where it was declared (a JSON pointer into the schema), for naming and notation edits.
    pub origin: String,
    pub props: Vec<(String, ExprId)>,
    pub required: Vec<String>,
    /// Shape of undeclared properties; `None` = closed (`additionalProperties: false`).
    pub extras: Option<ExprId>,
    /// The schema allows undeclared properties explicitly (`additionalProperties` other
    /// than `false`, or `patternProperties`), not only by leaving `additionalProperties`
    /// out. Only then do the generation grammars offer them (see
    /// `CompiledSpec::generation_grammar`); the mapper and the published grammars read
    /// [`extras`](Self::extras) alone.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub extras_declared: bool,
}

impl Record {
    pub(crate) fn open(origin: &str) -> Record {
        Record {
            origin: origin.to_string(),
            props: Vec::new(),
            required: Vec::new(),
            extras: Some(ANY),
            extras_declared: false,
        }
    }
    pub(crate) fn prop(&self, name: &str) -> Option<ExprId> {
        self.props.iter().find(|(n, _)| n == name).map(|(_, e)| *e)
    }
}

impl Parts {
    pub(crate) fn any() -> Parts {
        Parts {
            any: true,
            ..Parts::all_types("")
        }
    }
    pub(crate) fn never() -> Parts {
        Parts::default()
    }
    /// Every type, structured (not the JSON fallback).
    pub(crate) fn all_types(origin: &str) -> Parts {
        Parts {
            any: false,
            null: true,
            bool_false: true,
            bool_true: true,
            number: Some(NumPart {
                integer: false,
                values: None,
                lower: None,
                range: None,
            }),
            string: Some(StrPart {
                values: None,
                lexical: None,
            }),
            array: Some(ArrPart {
                prefix: Vec::new(),
                items: Some(ANY),
                min_items: 0,
                max_items: None,
            }),
            object: Some(ObjPart {
                records: vec![Arc::new(Record::open(origin))],
                merged: None,
            }),
            listed: None,
        }
    }
    /// No value is admitted.
    pub(crate) fn is_never(&self) -> bool {
        self.types() == 0
    }
    /// The JSON types admitted, as [`Kind`] bits (`Kind::ANY` for the JSON fallback).
    fn types(&self) -> u32 {
        Kind::of(self, false).0 & Kind::TYPES
    }
    /// The only value admitted, if exactly one (such values cost zero tokens as fields).
    pub(crate) fn single_value(&self) -> Option<Value> {
        if self.any {
            return None;
        }
        let mut found: Vec<Value> = Vec::new();
        if self.null {
            found.push(Value::Null);
        }
        if self.bool_false {
            found.push(Value::Bool(false));
        }
        if self.bool_true {
            found.push(Value::Bool(true));
        }
        if let Some(n) = &self.number {
            match &n.values {
                Some(vs) if vs.len() == 1 => found.push(Value::Number(vs[0].clone())),
                _ => return None,
            }
        }
        if let Some(s) = &self.string {
            match &s.values {
                Some(vs) if vs.len() == 1 => found.push(Value::String(vs[0].clone())),
                _ => return None,
            }
        }
        if self.array.is_some() || self.object.is_some() {
            return None;
        }
        if let Some(ls) = &self.listed {
            match ls.as_slice() {
                [one] => found.push(serde_json::from_str(one).ok()?),
                _ => return None,
            }
        }
        if found.len() == 1 {
            found.pop()
        } else {
            None
        }
    }
    /// Only objects are admitted.
    pub(crate) fn object_only(&self) -> bool {
        self.types() == Kind::OBJECT
    }
    /// Only arrays are admitted.
    pub(crate) fn array_only(&self) -> bool {
        self.types() == Kind::ARRAY
    }
}

/// Two JSON numbers are the same value (1 == 1.0), as JSON Schema's `enum` compares them.
pub(crate) fn same_number(a: &Number, b: &Number) -> bool {
    match (a.as_i64(), b.as_i64(), a.as_u64(), b.as_u64()) {
        (Some(x), Some(y), _, _) => x == y,
        (_, _, Some(x), Some(y)) => x == y,
        _ => a.as_f64() == b.as_f64(),
    }
}

/// Two JSON values are the same value as JSON Schema's `enum` compares them: object key
/// order ignored, numbers by value ([`same_number`]).
pub(crate) fn same_json(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => same_number(x, y),
        (Value::Array(x), Value::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(p, q)| same_json(p, q))
        }
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len()
                && x.iter()
                    .all(|(k, v)| y.get(k).is_some_and(|w| same_json(v, w)))
        }
        _ => a == b,
    }
}

/// A key under which values [`same_json`] finds equal fall together: compact JSON with
/// object keys sorted and numbers by value (integers exactly, others as `f64` bits).
pub(crate) fn json_key(v: &Value) -> String {
    fn walk(v: &Value, out: &mut String) {
        match v {
            Value::Number(n) => match (n.as_i64(), n.as_u64(), n.as_f64()) {
                (Some(i), _, _) => out.push_str(&i.to_string()),
                (_, Some(u), _) => out.push_str(&u.to_string()),
                (_, _, Some(f)) if f.fract() == 0.0 && f.abs() < 9.0e15 => {
                    out.push_str(&(f as i64).to_string())
                }
                (_, _, Some(f)) => out.push_str(&format!("f{:x}", f.to_bits())),
                _ => out.push_str(&n.to_string()),
            },
            Value::Array(xs) => {
                out.push('[');
                for (i, x) in xs.iter().enumerate() {
                    if i > 0 {
                        out.push(',');
                    }
                    walk(x, out);
                }
                out.push(']');
            }
            Value::Object(m) => {
                let mut keys: Vec<&String> = m.keys().collect();
                keys.sort();
                out.push('{');
                for (i, k) in keys.into_iter().enumerate() {
                    if i > 0 {
                        out.push(',');
                    }
                    out.push_str(&serde_json::to_string(k).unwrap_or_default());
                    out.push(':');
                    if let Some(x) = m.get(k) {
                        walk(x, out);
                    }
                }
                out.push('}');
            }
            v => out.push_str(&serde_json::to_string(v).unwrap_or_default()),
        }
    }
    let mut out = String::new();
    walk(v, &mut out);
    out
}

/// The JSON type names a shape admits (`number` for integers too), as `type` spells them.
pub(super) fn type_names(p: &Parts) -> Vec<&'static str> {
    let mut names = Vec::new();
    let mut add = |on: bool, name| {
        if on {
            names.push(name);
        }
    };
    add(p.null, "null");
    add(p.bool_false || p.bool_true, "boolean");
    add(p.number.is_some(), "number");
    add(p.string.is_some(), "string");
    add(p.array.is_some(), "array");
    add(p.object.is_some(), "object");
    if let Some(ls) = &p.listed {
        add(
            ls.iter().any(|l| l.starts_with('[')) && p.array.is_none(),
            "array",
        );
        add(
            ls.iter().any(|l| l.starts_with('{')) && p.object.is_none(),
            "object",
        );
    }
    names
}

/// The arena of expressions and their materialized parts.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub(crate) struct Shapes {
    pub exprs: Vec<Expr>,
    /// Shared: many expressions have equal parts (`$ref`s to one definition).
    pub parts: Vec<Arc<Parts>>,
    /// Schema `description` (or `title`) of each expression, if it has one.
    pub docs: Vec<Option<String>>,
    pub root: ExprId,
    /// Whether encoding an instance checks everything the schema asserts (see
    /// [`crate::schema::encoder_checks_all_assertions`]; no shape was approximated), so a
    /// successful encode is a successful validation. `false` in older spec files.
    #[serde(default)]
    pub encoding_validates: bool,
    /// Where `encoding_validates`: the distinct local assertions the encoder checks (bounds,
    /// `pattern`, `format`…, each as a schema of its own; see
    /// [`crate::schema::local_keywords`]).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub local_assertions: Vec<Value>,
    /// For each expression, 1 + the index of its local assertions, or 0 (none). Empty when
    /// there are none at all.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub asserted: Vec<u32>,
}

/// The JSON types a shape admits, as bits: what the codec asks of most values, in one
/// small table ([`Tables::kind`](crate::codec::Tables::kind)) instead of one `Parts` (a few
/// cache lines) per value. The default admits nothing.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct Kind(u32);

impl Kind {
    pub(crate) const ANY: u32 = 1;
    pub(crate) const NULL: u32 = 1 << 1;
    pub(crate) const FALSE: u32 = 1 << 2;
    pub(crate) const TRUE: u32 = 1 << 3;
    pub(crate) const NUMBER: u32 = 1 << 4;
    pub(crate) const INTEGER: u32 = 1 << 5;
    /// Numbers restricted to listed values.
    pub(crate) const NUMBER_VALUES: u32 = 1 << 6;
    pub(crate) const STRING: u32 = 1 << 7;
    /// Strings restricted to listed values.
    pub(crate) const STRING_VALUES: u32 = 1 << 8;
    pub(crate) const ARRAY: u32 = 1 << 9;
    pub(crate) const OBJECT: u32 = 1 << 10;
    /// The expression has local assertions (see [`Shapes::local_assertion`]).
    pub(crate) const CHECKED: u32 = 1 << 11;
    /// A free string always written in quotes (a date, a regular form).
    pub(crate) const STRING_FORM: u32 = 1 << 12;
    /// A free integer in a range the grammar says digit by digit.
    pub(crate) const NUMBER_RANGE: u32 = 1 << 13;
    /// Arrays or objects an `enum`/`const` lists ([`Parts::listed`]).
    pub(crate) const LISTED: u32 = 1 << 14;
    /// A free string with a lexical form ([`StrPart::lexical`]), quoted or not.
    pub(crate) const STRING_LEXICAL: u32 = 1 << 15;
    /// A free number with a lower bound a grammar says ([`NumPart::lower`]).
    pub(crate) const NUMBER_LOWER: u32 = 1 << 16;
    const TYPES: u32 = Self::ANY
        | Self::LISTED
        | Self::NULL
        | Self::FALSE
        | Self::TRUE
        | Self::NUMBER
        | Self::STRING
        | Self::ARRAY
        | Self::OBJECT;

    /// The kind of `p`; `checked`: the expression has local assertions.
    pub(crate) fn of(p: &Parts, checked: bool) -> Kind {
        let mut k = if checked { Self::CHECKED } else { 0 };
        let mut set = |bit: u32, on: bool| {
            if on {
                k |= bit;
            }
        };
        set(Self::ANY, p.any);
        set(Self::NULL, p.null);
        set(Self::FALSE, p.bool_false);
        set(Self::TRUE, p.bool_true);
        if let Some(n) = &p.number {
            set(Self::NUMBER, true);
            set(Self::INTEGER, n.integer);
            set(Self::NUMBER_VALUES, n.values.is_some());
            set(Self::NUMBER_RANGE, n.values.is_none() && n.range.is_some());
            set(Self::NUMBER_LOWER, n.lower.is_some());
        }
        if let Some(s) = &p.string {
            set(Self::STRING, true);
            set(Self::STRING_VALUES, s.values.is_some());
            set(
                Self::STRING_FORM,
                s.values.is_none() && s.lexical.as_ref().is_some_and(Lexical::always_quoted),
            );
            set(
                Self::STRING_LEXICAL,
                s.values.is_none() && s.lexical.is_some(),
            );
        }
        set(Self::ARRAY, p.array.is_some());
        set(Self::OBJECT, p.object.is_some());
        set(Self::LISTED, p.listed.is_some());
        Kind(k)
    }
    pub(crate) fn has(self, bits: u32) -> bool {
        self.0 & bits == bits
    }
    /// Only objects are admitted (as [`Parts::object_only`]).
    pub(crate) fn object_only(self) -> bool {
        self.0 & Self::TYPES == Self::OBJECT
    }
}

impl Shapes {
    pub(crate) fn parts(&self, id: ExprId) -> &Parts {
        &self.parts[id as usize]
    }
    /// The index in `local_assertions` of the local assertions of `id`, if it has any.
    pub(crate) fn local_assertion(&self, id: ExprId) -> Option<usize> {
        match self.asserted.get(id as usize) {
            Some(&a) if a > 0 => Some(a as usize - 1),
            _ => None,
        }
    }
    /// The item shape of an array-only expression without a tuple part (a section's
    /// items, or a root array's); NEVER when it has none.
    pub(crate) fn items_of(&self, id: ExprId) -> ExprId {
        self.parts(id)
            .array
            .as_ref()
            .and_then(|a| a.items)
            .unwrap_or(NEVER)
    }

    /// The most items an array value may have (`None`: unbounded or not an array).
    pub(crate) fn max_items(&self, id: ExprId) -> Option<usize> {
        self.parts(id).array.as_ref().and_then(ArrPart::max_len)
    }

    /// The fewest items an array value must have (0 when it is not an array).
    pub(crate) fn min_items(&self, id: ExprId) -> usize {
        self.parts(id)
            .array
            .as_ref()
            .map_or(0, |a| a.min_items as usize)
    }

    pub(crate) fn doc(&self, id: ExprId) -> Option<&str> {
        self.docs.get(id as usize).and_then(|d| d.as_deref())
    }
}
