//! Stage 2 — shapes: what JSON values a subschema may describe, partitioned by JSON type.
//!
//! A shape never rejects a value its schema accepts (it *over-approximates*: keywords a
//! notation cannot express, such as `pattern`, `not` or `if`, are dropped), so every valid
//! instance can be written in the notation; validity itself is checked by a real validator
//! before compressing. Subschemas are combined lazily as expressions (`Union`, `Inter`) so
//! recursive schemas stay finite: an object's fields point at expressions, not at shapes.

use crate::error::CompileError;
use crate::schema::{escape_token, Draft, SchemaDoc};
use rustc_hash::FxHashMap as HashMap;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Number, Value};
use std::sync::Arc;

pub type ExprId = u32;
/// The expression that admits every JSON value (written as plain JSON).
pub const ANY: ExprId = 0;
/// The expression that admits nothing.
pub const NEVER: ExprId = 1;

/// A lazily combined subschema.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum Expr {
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
pub struct Parts {
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
}

fn is_false(b: &bool) -> bool {
    !*b
}

#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct NumPart {
    pub integer: bool,
    /// `enum`/`const` values, if restricted.
    pub values: Option<Vec<Number>>,
    /// A lower bound a grammar can say (`minimum` 0 or 1), so a model cannot write `-3`
    /// for a count. Only for free numbers.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lower: Option<Lower>,
}

/// Lower bounds a grammar can express: `NonNegative` admits all `Positive` values.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Lower {
    NonNegative,
    /// Integers only (`[1-9]…`).
    Positive,
}

#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct StrPart {
    /// `enum`/`const` values, if restricted (schema order).
    pub values: Option<Vec<String>>,
    /// A lexical form a grammar can say (a non-empty string, an asserted `date` or
    /// `date-time` format), so a model cannot write `""` or `"last spring"` there. Only for
    /// free strings.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lexical: Option<Lexical>,
}

/// String forms a grammar can express: `NonEmpty` admits every `Date` and `DateTime`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Lexical {
    NonEmpty,
    Date,
    DateTime,
}

/// Bounds admitting the values of either side (the weaker).
fn lower_union(a: Option<Lower>, b: Option<Lower>) -> Option<Lower> {
    a.zip(b).map(|(x, y)| x.min(y))
}
/// Bounds admitting the values of both sides (the stronger).
fn lower_inter(a: Option<Lower>, b: Option<Lower>) -> Option<Lower> {
    a.max(b)
}
fn lexical_union(a: Option<Lexical>, b: Option<Lexical>) -> Option<Lexical> {
    match (a?, b?) {
        (x, y) if x == y => Some(x),
        _ => Some(Lexical::NonEmpty),
    }
}
fn lexical_inter(a: Option<Lexical>, b: Option<Lexical>) -> Option<Lexical> {
    match (a, b) {
        (None, y) | (Some(Lexical::NonEmpty), y @ Some(_)) => y,
        (x, _) => x,
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

#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct ArrPart {
    /// Tuple positions (`prefixItems`, or draft-07 `items: [..]`).
    pub prefix: Vec<ExprId>,
    /// Items after the prefix; `None` = no more items allowed.
    pub items: Option<ExprId>,
    /// `minItems`, so a grammar can demand the items a valid instance must have (a model
    /// must not be able to write an empty `fields:` section when the schema wants one).
    /// Never above the most items the array can hold.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub min_items: u32,
}

fn is_zero(n: &u32) -> bool {
    *n == 0
}

impl ArrPart {
    pub fn item_at(&self, i: usize) -> Option<ExprId> {
        self.prefix.get(i).copied().or(self.items)
    }
    /// The most items the array can hold (`None`: unbounded).
    pub fn max_len(&self) -> Option<usize> {
        match self.prefix.iter().position(|&e| e == NEVER) {
            Some(i) => Some(i),
            None => self.items.is_none().then_some(self.prefix.len()),
        }
    }
    fn clamp_min(mut self) -> ArrPart {
        if let Some(m) = self.max_len() {
            self.min_items = self.min_items.min(m as u32);
        }
        self
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct ObjPart {
    /// Alternative object forms (one per `anyOf`/`oneOf` variant that is an object).
    pub records: Vec<Arc<Record>>,
    /// With two or more records: one record admitting all of them (field shapes are
    /// unions), used when no discriminating tag property exists.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub merged: Option<Arc<Record>>,
}

/// One object form: declared properties in schema order.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Record {
    /// Where it was declared (a JSON pointer into the schema), for naming and notation edits.
    pub origin: String,
    pub props: Vec<(String, ExprId)>,
    pub required: Vec<String>,
    /// Shape of undeclared properties; `None` = closed (`additionalProperties: false`).
    pub extras: Option<ExprId>,
}

impl Record {
    pub fn open(origin: &str) -> Record {
        Record {
            origin: origin.to_string(),
            props: Vec::new(),
            required: Vec::new(),
            extras: Some(ANY),
        }
    }
    pub fn prop(&self, name: &str) -> Option<ExprId> {
        self.props.iter().find(|(n, _)| n == name).map(|(_, e)| *e)
    }
}

impl Parts {
    pub fn any() -> Parts {
        Parts {
            any: true,
            ..Parts::all_types("")
        }
    }
    pub fn never() -> Parts {
        Parts::default()
    }
    /// Every type, structured (not the JSON fallback).
    pub fn all_types(origin: &str) -> Parts {
        Parts {
            any: false,
            null: true,
            bool_false: true,
            bool_true: true,
            number: Some(NumPart {
                integer: false,
                values: None,
                lower: None,
            }),
            string: Some(StrPart {
                values: None,
                lexical: None,
            }),
            array: Some(ArrPart {
                prefix: Vec::new(),
                items: Some(ANY),
                min_items: 0,
            }),
            object: Some(ObjPart {
                records: vec![Arc::new(Record::open(origin))],
                merged: None,
            }),
        }
    }
    pub fn is_never(&self) -> bool {
        !self.any
            && !self.null
            && !self.bool_false
            && !self.bool_true
            && self.number.is_none()
            && self.string.is_none()
            && self.array.is_none()
            && self.object.is_none()
    }
    /// The only value admitted, if exactly one (such values cost zero tokens as fields).
    pub fn single_value(&self) -> Option<Value> {
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
        if found.len() == 1 {
            found.pop()
        } else {
            None
        }
    }
    /// Only objects are admitted.
    pub fn object_only(&self) -> bool {
        !self.any
            && self.object.is_some()
            && !self.null
            && !self.bool_false
            && !self.bool_true
            && self.number.is_none()
            && self.string.is_none()
            && self.array.is_none()
    }
    /// Only arrays are admitted.
    pub fn array_only(&self) -> bool {
        !self.any
            && self.array.is_some()
            && !self.null
            && !self.bool_false
            && !self.bool_true
            && self.number.is_none()
            && self.string.is_none()
            && self.object.is_none()
    }
}

/// Two JSON numbers are the same value (1 == 1.0), as JSON Schema's `enum` compares them.
pub fn same_number(a: &Number, b: &Number) -> bool {
    match (a.as_i64(), b.as_i64(), a.as_u64(), b.as_u64()) {
        (Some(x), Some(y), _, _) => x == y,
        (_, _, Some(x), Some(y)) => x == y,
        _ => a.as_f64() == b.as_f64(),
    }
}

/// The arena of expressions and their materialized parts.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Shapes {
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
    /// The JSON types each expression admits, as bits: what the codec asks of most values,
    /// in one small table instead of one `Parts` (a few cache lines) per value.
    #[serde(skip)]
    kinds: Cache<Vec<Kind>>,
}

/// The JSON types a shape admits, as bits (see [`Shapes::kind`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Kind(u16);

impl Kind {
    pub const ANY: u16 = 1;
    pub const NULL: u16 = 1 << 1;
    pub const FALSE: u16 = 1 << 2;
    pub const TRUE: u16 = 1 << 3;
    pub const NUMBER: u16 = 1 << 4;
    pub const INTEGER: u16 = 1 << 5;
    /// Numbers restricted to listed values.
    pub const NUMBER_VALUES: u16 = 1 << 6;
    pub const STRING: u16 = 1 << 7;
    /// Strings restricted to listed values.
    pub const STRING_VALUES: u16 = 1 << 8;
    pub const ARRAY: u16 = 1 << 9;
    pub const OBJECT: u16 = 1 << 10;
    /// The expression has local assertions (see [`Shapes::local_assertion`]).
    pub const CHECKED: u16 = 1 << 11;
    const TYPES: u16 = Self::ANY
        | Self::NULL
        | Self::FALSE
        | Self::TRUE
        | Self::NUMBER
        | Self::STRING
        | Self::ARRAY
        | Self::OBJECT;

    fn of(p: &Parts, checked: bool) -> Kind {
        let mut k = if checked { Self::CHECKED } else { 0 };
        let mut set = |bit: u16, on: bool| {
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
        }
        if let Some(s) = &p.string {
            set(Self::STRING, true);
            set(Self::STRING_VALUES, s.values.is_some());
        }
        set(Self::ARRAY, p.array.is_some());
        set(Self::OBJECT, p.object.is_some());
        Kind(k)
    }
    pub fn has(self, bits: u16) -> bool {
        self.0 & bits == bits
    }
    /// Only objects are admitted (as [`Parts::object_only`]).
    pub fn object_only(self) -> bool {
        self.0 & Self::TYPES == Self::OBJECT
    }
}

impl Shapes {
    pub fn parts(&self, id: ExprId) -> &Parts {
        &self.parts[id as usize]
    }
    /// The JSON types `id` admits (built for all expressions on first use).
    pub fn kind(&self, id: ExprId) -> Kind {
        let kinds = self.kinds.get_or_init(|| {
            self.parts
                .iter()
                .enumerate()
                .map(|(i, p)| Kind::of(p, self.local_assertion(i as ExprId).is_some()))
                .collect()
        });
        kinds.get(id as usize).copied().unwrap_or(Kind(0))
    }
    /// The index in `local_assertions` of the local assertions of `id`, if it has any.
    pub fn local_assertion(&self, id: ExprId) -> Option<usize> {
        match self.asserted.get(id as usize) {
            Some(&a) if a > 0 => Some(a as usize - 1),
            _ => None,
        }
    }
    /// The item shape of an array-only expression without a tuple part (a section's
    /// items, or a root array's); NEVER when it has none.
    pub fn items_of(&self, id: ExprId) -> ExprId {
        self.parts(id)
            .array
            .as_ref()
            .and_then(|a| a.items)
            .unwrap_or(NEVER)
    }

    /// The fewest items an array value must have (0 when it is not an array).
    pub fn min_items(&self, id: ExprId) -> usize {
        self.parts(id)
            .array
            .as_ref()
            .map_or(0, |a| a.min_items as usize)
    }

    pub fn doc(&self, id: ExprId) -> Option<&str> {
        self.docs.get(id as usize).and_then(|d| d.as_deref())
    }
}

/// A derived value computed on first use; compares equal and clones empty, so the
/// structures holding it keep their derived `PartialEq`/`Clone` meaning.
#[derive(Debug)]
pub struct Cache<T>(std::sync::OnceLock<T>);

impl<T> Default for Cache<T> {
    fn default() -> Self {
        Cache(std::sync::OnceLock::new())
    }
}

impl<T> Clone for Cache<T> {
    fn clone(&self) -> Self {
        Cache::default()
    }
}

impl<T> PartialEq for Cache<T> {
    fn eq(&self, _: &Self) -> bool {
        true
    }
}

impl<T> Cache<T> {
    pub fn get_or_init(&self, f: impl FnOnce() -> T) -> &T {
        self.0.get_or_init(f)
    }
}

/// Where [`Builder::local_of`] is for one expression.
#[derive(Clone)]
enum Local {
    Unknown,
    InProgress,
    Done(Option<Map<String, Value>>),
}

/// The JSON type names a shape admits (`number` for integers too), as `type` spells them.
fn type_names(p: &Parts) -> Vec<&'static str> {
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
    names
}

/// Above this many expressions, new combinations fall back to `ANY` (plain JSON), so a
/// pathological schema still compiles in bounded time.
const MAX_EXPRS: usize = 50_000;
/// Above this many object forms per shape, intersections keep one side (over-approximate).
const MAX_RECORDS: usize = 64;

/// Builds [`Shapes`] from a schema document.
pub struct Builder<'d, 'a> {
    doc: &'d SchemaDoc<'a>,
    exprs: Vec<Expr>,
    index: HashMap<Expr, ExprId>,
    parts: Vec<Option<Arc<Parts>>>,
    in_progress: Vec<bool>,
    docs: Vec<Option<String>>,
    /// The schema node of each `Node` expression (saves re-walking pointers).
    values: Vec<Option<&'a Value>>,
    /// Resolved `$ref`s by (base URI in force, reference): a reference names the same
    /// target wherever its base is the same, and large schemas repeat a few hundred refs
    /// thousands of times.
    refs: HashMap<(&'d str, &'a str), ExprId>,
    /// Merged records by the identity of the records merged (kept alive here, so the
    /// addresses stay unique).
    #[allow(clippy::type_complexity)]
    merged: HashMap<Vec<usize>, (Vec<Arc<Record>>, Arc<Record>)>,
    /// Shared parts given their merged record, by the address of the original (kept alive).
    patched: HashMap<usize, (Arc<Parts>, Arc<Parts>)>,
    /// Set when some shape may admit more than its schema (a size limit, a cycle without
    /// structure, a union of branches whose JSON types overlap), or the schema asserts
    /// what the encoder cannot check (see [`crate::schema::encoder_checks_all_assertions`]).
    approximated: bool,
}

impl<'d, 'a> Builder<'d, 'a> {
    pub fn new(doc: &'d SchemaDoc<'a>) -> Self {
        let mut b = Builder {
            doc,
            exprs: Vec::new(),
            index: HashMap::default(),
            parts: Vec::new(),
            in_progress: Vec::new(),
            docs: Vec::new(),
            values: Vec::new(),
            refs: HashMap::default(),
            merged: HashMap::default(),
            patched: HashMap::default(),
            // Decided up front, so unions need no exactness check where it cannot matter.
            approximated: !crate::schema::encoder_checks_all_assertions(doc.root),
        };
        b.intern(Expr::Any, None);
        b.intern(Expr::Never, None);
        b
    }

    /// Build the shapes of everything reachable from the document root.
    pub fn build(mut self) -> Result<Shapes, CompileError> {
        let root = self.node("");
        // Every expression interned while materializing is reachable; the arena grows as
        // we go, so this loop is the closure.
        let mut i = 0;
        while i < self.exprs.len() {
            let id = i as ExprId;
            let parts = self.materialize(id)?;
            if let Some(obj) = &parts.object {
                if obj.records.len() >= 2 && obj.merged.is_none() {
                    // Parts are shared by many expressions: patch each shared value once.
                    let old = Arc::as_ptr(&parts) as usize;
                    let patched = match self.patched.get(&old) {
                        Some((_, new)) => new.clone(),
                        None => {
                            let merged = self.merged_record(&obj.records);
                            let mut new = Parts::clone(&parts);
                            if let Some(o) = &mut new.object {
                                o.merged = Some(merged);
                            }
                            let new = Arc::new(new);
                            self.patched.insert(old, (parts.clone(), new.clone()));
                            new
                        }
                    };
                    self.parts[i] = Some(patched);
                }
            }
            i += 1;
        }
        let mut encoding_validates = !self.approximated;
        let (mut local_assertions, mut asserted) = (Vec::new(), Vec::new());
        if encoding_validates {
            match self.local_assertions() {
                Some((l, a)) => (local_assertions, asserted) = (l, a),
                None => encoding_validates = false,
            }
        }
        Ok(Shapes {
            exprs: self.exprs,
            parts: self
                .parts
                .into_iter()
                .map(Option::unwrap_or_default)
                .collect(),
            docs: self.docs,
            root,
            encoding_validates,
            local_assertions,
            asserted,
            kinds: Cache::default(),
        })
    }

    /// The local assertions of every expression (see [`Shapes::local_assertion`]), for a
    /// schema whose other assertions the shapes capture exactly, each a schema of its own
    /// in the document's dialect. `None` if they cannot be told (a reference chain not
    /// followed while building, a cycle).
    fn local_assertions(&self) -> Option<(Vec<Value>, Vec<u32>)> {
        let mut distinct: Vec<Value> = Vec::new();
        let mut index: HashMap<String, u32> = HashMap::default();
        let mut memo = vec![Local::Unknown; self.exprs.len()];
        let mut asserted = vec![0u32; self.exprs.len()];
        for (id, slot) in asserted.iter_mut().enumerate() {
            let Some(mut local) = self.local_of(id, &mut memo)? else {
                continue;
            };
            if let Some(dialect) = self.doc.root.get("$schema") {
                local.insert("$schema".into(), dialect.clone());
            }
            let local = Value::Object(local);
            let key = local.to_string();
            *slot = match index.get(&key) {
                Some(&i) => i,
                None => {
                    distinct.push(local);
                    let i = distinct.len() as u32;
                    index.insert(key, i);
                    i
                }
            };
        }
        if distinct.is_empty() {
            asserted.clear();
        }
        Some((distinct, asserted))
    }

    /// The local assertions of one expression: its node's own (a bare `$ref`: its
    /// target's); for an exact `anyOf`/`oneOf` (see [`Self::exact_union`]), also those of
    /// the branch the value's type selects (`{"anyOf": [{"type": T, ..}, ..]}`), and for
    /// several object branches which branch's property names the object has.
    fn local_of(&self, id: usize, memo: &mut [Local]) -> Option<Option<Map<String, Value>>> {
        match &memo[id] {
            Local::Done(x) => return Some(x.clone()),
            Local::InProgress => return None,
            Local::Unknown => {}
        }
        memo[id] = Local::InProgress;
        let mut at = id;
        let mut hops = 0;
        let node = loop {
            let Expr::Node(p) = &self.exprs[at] else {
                // `true`/`false`, or a combination of branches (the encoder gives values
                // their node's expression, never one of these): nothing local.
                break None;
            };
            let v = self.values[at].unwrap_or_else(|| self.doc.node(p));
            match v.get("$ref").and_then(Value::as_str) {
                Some(_) if hops == 64 => return None,
                Some(r) => at = *self.refs.get(&(self.doc.base_at(p), r))? as usize,
                None => break Some((p, v)),
            }
            hops += 1;
        };
        let mut local = Map::new();
        if let Some((p, v)) = node {
            local = crate::schema::local_keywords(v, self.doc.formats_assert);
            if let Some(check) = crate::schema::pattern_check(v) {
                local.extend(check);
            }
            for key in ["anyOf", "oneOf"] {
                let Some(Value::Array(xs)) = v.get(key) else {
                    continue;
                };
                let mut ids = Vec::with_capacity(xs.len());
                for (i, x) in xs.iter().enumerate() {
                    ids.push(match x {
                        Value::Bool(true) => ANY,
                        Value::Bool(false) => NEVER,
                        _ => *self.index.get(&Expr::Node(format!("{p}/{key}/{i}")))?,
                    });
                }
                let objects = ids
                    .iter()
                    .filter(|&&b| {
                        self.parts[b as usize]
                            .as_ref()
                            .is_some_and(|p| p.object.is_some())
                    })
                    .count();
                // Several object branches share the type `object`: the merged record checks
                // each property against its one branch, and this check which branch's
                // property names (required, and no others) the object has.
                let mut any_local = objects >= 2;
                let mut branches = Vec::new();
                for b in ids {
                    let parts = self.parts[b as usize].as_ref()?;
                    if parts.is_never() {
                        continue;
                    }
                    let mut branch = self.local_of(b as usize, memo)?.unwrap_or_default();
                    any_local |= !branch.is_empty();
                    if !parts.any {
                        branch.insert("type".into(), type_names(parts).into());
                    }
                    if let (true, Some(o)) = (objects >= 2, &parts.object) {
                        let r = o.records.first()?;
                        // `{}`, not `true`: draft-04 has no boolean schemas.
                        let names: Map<String, Value> = r
                            .props
                            .iter()
                            .map(|(n, _)| (n.clone(), Value::Object(Map::new())))
                            .collect();
                        branch.insert("required".into(), r.required.clone().into());
                        branch.insert("properties".into(), Value::Object(names));
                        branch.insert("additionalProperties".into(), Value::Bool(false));
                    }
                    branches.push(Value::Object(branch));
                }
                if any_local {
                    local.insert(key.into(), Value::Array(branches));
                }
            }
        }
        let local = (!local.is_empty()).then_some(local);
        memo[id] = Local::Done(local.clone());
        Some(local)
    }

    /// Whether the union of the branches' shapes is exact, with a value's branch told by
    /// the encoder's checks: the branches admit disjoint JSON types (numbers and integers
    /// are one type, `true` and `false` one), except that several may be objects if each is
    /// one closed record and no property name is declared by two of them (the merged
    /// record then checks each property against its one branch; [`Self::local_of`] adds
    /// which branch's names the object has).
    fn exact_union(&mut self, ids: &[ExprId]) -> Result<bool, CompileError> {
        let mut seen: Vec<&'static str> = Vec::new();
        let mut objects = Vec::new();
        for &id in ids {
            let parts = self.materialize(id)?;
            if parts.any && ids.len() > 1 {
                return Ok(false);
            }
            for t in type_names(&parts) {
                if t != "object" && seen.contains(&t) {
                    return Ok(false);
                }
                seen.push(t);
            }
            if parts.object.is_some() {
                objects.push(parts);
            }
        }
        if objects.len() < 2 {
            return Ok(true);
        }
        let mut names = std::collections::HashSet::new();
        for parts in &objects {
            let Some(o) = &parts.object else { continue };
            let [r] = o.records.as_slice() else {
                return Ok(false);
            };
            if r.extras.is_some() || !r.props.iter().all(|(n, _)| names.insert(n.clone())) {
                return Ok(false);
            }
        }
        Ok(true)
    }

    /// The merged record of a set of object forms. Many shapes share one set (`X`,
    /// `X | null`, …): each set is merged once.
    fn merged_record(&mut self, records: &[Arc<Record>]) -> Arc<Record> {
        let key: Vec<usize> = records.iter().map(|r| Arc::as_ptr(r) as usize).collect();
        if let Some((_, m)) = self.merged.get(&key) {
            return m.clone();
        }
        let m = Arc::new(self.merge_records(records));
        self.merged.insert(key, (records.to_vec(), m.clone()));
        m
    }

    /// One record admitting every object any of `records` admits.
    fn merge_records(&mut self, records: &[Arc<Record>]) -> Record {
        // Property names in first-seen order, and for each the shapes the records give it;
        // one pass over every record's properties (merged records have a hundred fields).
        let mut slot: HashMap<&str, usize> = HashMap::default();
        let mut names: Vec<&str> = Vec::new();
        let mut members: Vec<Vec<ExprId>> = Vec::new();
        let mut seen: Vec<bool> = Vec::new();
        for r in records {
            for (n, _) in &r.props {
                slot.entry(n.as_str()).or_insert_with(|| {
                    names.push(n.as_str());
                    members.push(Vec::new());
                    names.len() - 1
                });
            }
        }
        for r in records {
            seen.clear();
            seen.resize(names.len(), false);
            for (n, e) in &r.props {
                if let Some(&i) = slot.get(n.as_str()) {
                    // A repeated name counts once, as `Record::prop` finds the first.
                    if !std::mem::replace(&mut seen[i], true) {
                        members[i].push(*e);
                    }
                }
            }
            // A record without the property may still have it as an undeclared one.
            if let Some(x) = r.extras {
                for (i, m) in members.iter_mut().enumerate() {
                    if !seen[i] {
                        m.push(x);
                    }
                }
            }
        }
        let mut props = Vec::with_capacity(names.len());
        for (n, m) in names.iter().zip(&members) {
            let e = self.union(m);
            props.push((n.to_string(), e));
        }
        let required = records[0]
            .required
            .iter()
            .filter(|n| records.iter().all(|r| r.required.contains(n)))
            .cloned()
            .collect();
        let extras = if records.iter().all(|r| r.extras.is_none()) {
            None
        } else {
            let members: Vec<ExprId> = records.iter().filter_map(|r| r.extras).collect();
            Some(self.union(&members))
        };
        let mut origins: Vec<&str> = records.iter().map(|r| r.origin.as_str()).collect();
        origins.dedup();
        Record {
            origin: origins.join("|"),
            props,
            required,
            extras,
        }
    }

    fn intern(&mut self, e: Expr, value: Option<&'a Value>) -> ExprId {
        if let Some(&id) = self.index.get(&e) {
            return id;
        }
        if self.exprs.len() >= MAX_EXPRS {
            self.approximated = true;
            return ANY;
        }
        let id = self.exprs.len() as ExprId;
        let doc = value.and_then(describe);
        self.values.push(value);
        self.exprs.push(e.clone());
        self.index.insert(e, id);
        self.parts.push(None);
        self.in_progress.push(false);
        self.docs.push(doc);
        id
    }

    pub fn node(&mut self, pointer: &str) -> ExprId {
        let v = self.doc.node(pointer);
        self.node_at(pointer.to_string(), v)
    }

    /// A node whose value is already at hand (children of the node being read).
    fn node_at(&mut self, pointer: String, v: &'a Value) -> ExprId {
        match v {
            Value::Bool(true) => ANY,
            Value::Bool(false) => NEVER,
            _ => self.intern(Expr::Node(pointer), Some(v)),
        }
    }

    pub fn union(&mut self, ids: &[ExprId]) -> ExprId {
        self.combine(ids, true)
    }

    pub fn inter(&mut self, ids: &[ExprId]) -> ExprId {
        self.combine(ids, false)
    }

    /// Union (`any_of`) or intersection of expressions, flattened, sorted and deduplicated
    /// so equal combinations intern to one id. ANY absorbs a union and is the identity of
    /// an intersection; NEVER the other way round.
    fn combine(&mut self, ids: &[ExprId], any_of: bool) -> ExprId {
        let (absorbing, identity) = if any_of { (ANY, NEVER) } else { (NEVER, ANY) };
        let mut flat = Vec::new();
        for &id in ids {
            match &self.exprs[id as usize] {
                _ if id == absorbing => return absorbing,
                _ if id == identity => {}
                Expr::Union(xs) if any_of => flat.extend(xs.iter().copied()),
                Expr::Inter(xs) if !any_of => flat.extend(xs.iter().copied()),
                _ => flat.push(id),
            }
        }
        flat.sort_unstable();
        flat.dedup();
        match flat.len() {
            0 => identity,
            1 => flat[0],
            _ if any_of => self.intern(Expr::Union(flat), None),
            _ => self.intern(Expr::Inter(flat), None),
        }
    }

    pub fn materialize(&mut self, id: ExprId) -> Result<Arc<Parts>, CompileError> {
        if let Some(p) = &self.parts[id as usize] {
            return Ok(p.clone());
        }
        if self.in_progress[id as usize] {
            // A cycle that does not pass through a property or an item (e.g. `{"$ref": "#"}`
            // at the root): nothing structural can be said, so admit everything.
            self.approximated = true;
            return Ok(Arc::new(Parts::any()));
        }
        self.in_progress[id as usize] = true;
        let parts = match self.exprs[id as usize].clone() {
            Expr::Any => Arc::new(Parts::any()),
            Expr::Never => Arc::new(Parts::never()),
            Expr::Node(p) => {
                let v = self.values[id as usize].unwrap_or_else(|| self.doc.node(&p));
                let shared = self.node_parts(&p, v)?;
                self.in_progress[id as usize] = false;
                self.parts[id as usize] = Some(shared.clone());
                return Ok(shared);
            }
            Expr::Union(xs) => {
                let mut acc = Arc::new(Parts::never());
                for x in xs {
                    let px = self.materialize(x)?;
                    acc = self.union_rc(acc, px);
                }
                acc
            }
            Expr::Inter(xs) => {
                let mut acc = Arc::new(Parts::any());
                for x in xs {
                    let px = self.materialize(x)?;
                    acc = self.inter_rc(acc, px);
                }
                acc
            }
        };
        self.in_progress[id as usize] = false;
        self.parts[id as usize] = Some(parts.clone());
        Ok(parts)
    }

    /// The expression a `$ref` found at `p` names.
    fn resolve(&mut self, p: &str, reference: &'a str) -> Result<ExprId, CompileError> {
        let base = self.doc.base_at(p);
        if let Some(&id) = self.refs.get(&(base, reference)) {
            return Ok(id);
        }
        let target = self.doc.resolve(p, reference)?;
        let id = self.node(&target);
        self.refs.insert((base, reference), id);
        Ok(id)
    }

    fn node_parts(&mut self, p: &str, v: &'a Value) -> Result<Arc<Parts>, CompileError> {
        let m = match v {
            Value::Bool(true) => return Ok(Arc::new(Parts::any())),
            Value::Bool(false) => return Ok(Arc::new(Parts::never())),
            Value::Object(m) => m,
            // Not a schema: validators ignore it, so do we.
            _ => return Ok(Arc::new(Parts::any())),
        };
        // A bare `$ref` (or draft-07 `$ref` with ignored siblings) shares its target's parts.
        if let Some(r) = m.get("$ref").and_then(Value::as_str) {
            let only_ref = self.doc.draft == Draft::Legacy
                || m.keys().all(|k| {
                    matches!(
                        k.as_str(),
                        "$ref" | "description" | "title" | "$comment" | "default" | "examples"
                    )
                });
            if only_ref {
                match self.resolve(p, r) {
                    Ok(t) => return self.materialize(t),
                    Err(CompileError::RemoteRef { .. }) if is_metaschema(r) => {
                        return Ok(Arc::new(Parts::any()))
                    }
                    Err(e) => return Err(e),
                }
            }
        }
        let mut acc = Arc::new(self.own_parts(m, p));
        if let Some(r) = m.get("$ref").and_then(Value::as_str) {
            let t = match self.resolve(p, r) {
                Ok(t) => t,
                // The standard metaschemas ship with the validator: validated there,
                // unconstrained (plain JSON) here.
                Err(CompileError::RemoteRef { .. }) if is_metaschema(r) => return Ok(acc),
                Err(e) => return Err(e),
            };
            let pt = self.materialize(t)?;
            acc = self.inter_rc(acc, pt);
        }
        if let Some(Value::Array(xs)) = m.get("allOf") {
            for (i, x) in xs.iter().enumerate() {
                let e = self.node_at(format!("{p}/allOf/{i}"), x);
                let pe = self.materialize(e)?;
                acc = self.inter_rc(acc, pe);
            }
        }
        for key in ["anyOf", "oneOf"] {
            if let Some(Value::Array(xs)) = m.get(key) {
                let ids: Vec<ExprId> = xs
                    .iter()
                    .enumerate()
                    .map(|(i, x)| self.node_at(format!("{p}/{key}/{i}"), x))
                    .collect();
                let u = self.union(&ids);
                let pu = self.materialize(u)?;
                if !self.approximated && !self.exact_union(&ids)? {
                    self.approximated = true;
                }
                acc = self.inter_rc(acc, pu);
            }
        }
        Ok(acc)
    }

    /// Parts from a node's own keywords (not `$ref`/`allOf`/`anyOf`/`oneOf`).
    fn own_parts(&mut self, m: &'a Map<String, Value>, p: &str) -> Parts {
        const STRUCTURAL: &[&str] = &[
            "type",
            "enum",
            "const",
            "properties",
            "required",
            "additionalProperties",
            "patternProperties",
            "items",
            "prefixItems",
            "additionalItems",
        ];
        if !STRUCTURAL.iter().any(|k| m.contains_key(*k)) {
            return Parts::any();
        }
        let mut parts = Parts::all_types(p);
        // type
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
            if has("number") {
                parts.number = Some(NumPart {
                    integer: false,
                    values: None,
                    lower: None,
                });
            } else if has("integer") {
                parts.number = Some(NumPart {
                    integer: true,
                    values: None,
                    lower: None,
                });
            } else {
                parts.number = None;
            }
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
        // Bounds and lexical forms a grammar can say.
        if let Some(np) = &mut parts.number {
            np.lower = lower_bound(m, np.integer);
        }
        if let Some(sp) = &mut parts.string {
            sp.lexical = lexical_form(m, self.doc.formats_assert);
        }
        // enum / const
        let listed: Option<Vec<&Value>> = match (m.get("const"), m.get("enum")) {
            (Some(c), _) => Some(vec![c]),
            (None, Some(Value::Array(xs))) => Some(xs.iter().collect()),
            _ => None,
        };
        if let Some(values) = listed {
            let mut e = Parts::never();
            for v in values {
                match v {
                    Value::Null => e.null = true,
                    Value::Bool(false) => e.bool_false = true,
                    Value::Bool(true) => e.bool_true = true,
                    Value::Number(n) => {
                        let np = e.number.get_or_insert(NumPart {
                            integer: false,
                            values: Some(Vec::new()),
                            lower: None,
                        });
                        if let Some(vs) = &mut np.values {
                            if !vs.iter().any(|x| same_number(x, n)) {
                                vs.push(n.clone());
                            }
                        }
                    }
                    Value::String(s) => {
                        let sp = e.string.get_or_insert(StrPart {
                            values: Some(Vec::new()),
                            lexical: None,
                        });
                        if let Some(vs) = &mut sp.values {
                            if !vs.contains(s) {
                                vs.push(s.clone());
                            }
                        }
                    }
                    Value::Array(_) => {
                        e.array = Some(ArrPart {
                            prefix: Vec::new(),
                            items: Some(ANY),
                            min_items: 0,
                        });
                    }
                    Value::Object(_) => {
                        e.object = Some(ObjPart {
                            records: vec![Arc::new(Record::open(p))],
                            merged: None,
                        });
                    }
                }
            }
            if let (Some(en), Some(tn)) = (&mut e.number, &parts.number) {
                if tn.integer {
                    if let Some(vs) = &mut en.values {
                        vs.retain(|n| n.as_f64().is_some_and(|f| f.fract() == 0.0));
                    }
                }
            }
            parts = self.inter_parts(parts, &e);
        }
        // object keywords
        if parts.object.is_some() {
            let mut rec = Record {
                origin: p.to_string(),
                props: Vec::new(),
                required: Vec::new(),
                extras: Some(ANY),
            };
            if let Some(Value::Object(props)) = m.get("properties") {
                for (name, sub) in props {
                    let e = self.node_at(format!("{p}/properties/{}", escape_token(name)), sub);
                    rec.props.push((name.clone(), e));
                }
            }
            if let Some(Value::Array(req)) = m.get("required") {
                for r in req.iter().filter_map(Value::as_str) {
                    if !rec.required.iter().any(|x| x == r) {
                        rec.required.push(r.to_string());
                    }
                }
            }
            let mut extra_ids = Vec::new();
            if let Some(Value::Object(pats)) = m.get("patternProperties") {
                for (name, sub) in pats {
                    extra_ids.push(
                        self.node_at(format!("{p}/patternProperties/{}", escape_token(name)), sub),
                    );
                }
            }
            let additional = match m.get("additionalProperties") {
                None => Some(ANY),
                Some(sub) => {
                    let e = self.node_at(format!("{p}/additionalProperties"), sub);
                    if e == NEVER {
                        None
                    } else {
                        Some(e)
                    }
                }
            };
            rec.extras = match additional {
                // Keys matching a pattern must satisfy its schema; others, additionalProperties.
                Some(a) => {
                    extra_ids.push(a);
                    Some(self.union(&extra_ids))
                }
                None if extra_ids.is_empty() => None,
                None => Some(self.union(&extra_ids)),
            };
            // Required but undeclared properties are positional fields of the extras' shape.
            for r in rec.required.clone() {
                if rec.prop(&r).is_none() {
                    let e = rec.extras.unwrap_or(ANY);
                    rec.props.push((r, e));
                }
            }
            parts.object = Some(ObjPart {
                records: vec![Arc::new(rec)],
                merged: None,
            });
        }
        // array keywords
        if parts.array.is_some() {
            let mut prefix = Vec::new();
            let mut items = Some(ANY);
            let tuple_key = if m.get("prefixItems").is_some_and(Value::is_array) {
                Some("prefixItems")
            } else if m.get("items").is_some_and(Value::is_array) {
                Some("items")
            } else {
                None
            };
            if let Some(k) = tuple_key {
                if let Some(Value::Array(xs)) = m.get(k) {
                    for (i, x) in xs.iter().enumerate() {
                        prefix.push(self.node_at(format!("{p}/{k}/{i}"), x));
                    }
                }
                if k == "items" {
                    if let Some(sub) = m.get("additionalItems") {
                        items = Some(self.node_at(format!("{p}/additionalItems"), sub));
                    }
                } else if let Some(sub) = m.get("items").filter(|v| !v.is_array()) {
                    items = Some(self.node_at(format!("{p}/items"), sub));
                }
            } else if let Some(sub) = m.get("items") {
                items = Some(self.node_at(format!("{p}/items"), sub));
            }
            if items == Some(NEVER) {
                items = None;
            }
            let min_items = m
                .get("minItems")
                .and_then(Value::as_u64)
                .map_or(0, |n| n.min(u64::from(u32::MAX)) as u32);
            parts.array = Some(
                ArrPart {
                    prefix,
                    items,
                    min_items,
                }
                .clamp_min(),
            );
        }
        parts
    }

    /// Union of shared parts: a side that decides the result is returned as it is, so
    /// parts (and their enum value lists) are copied only when both sides contribute.
    fn union_rc(&mut self, a: Arc<Parts>, b: Arc<Parts>) -> Arc<Parts> {
        if a.any || b.is_never() {
            return a;
        }
        if b.any || a.is_never() {
            return b;
        }
        Arc::new(self.union_parts(Arc::unwrap_or_clone(a), &b))
    }

    /// Intersection of shared parts (see [`Self::union_rc`]).
    fn inter_rc(&mut self, a: Arc<Parts>, b: Arc<Parts>) -> Arc<Parts> {
        if a.any {
            return b;
        }
        if b.any {
            return a;
        }
        Arc::new(self.inter_parts(Arc::unwrap_or_clone(a), &b))
    }

    fn union_parts(&mut self, a: Parts, b: &Parts) -> Parts {
        if a.any || b.is_never() {
            return a;
        }
        if b.any || a.is_never() {
            return b.clone();
        }
        let number = match (a.number, &b.number) {
            (x, None) => x,
            (None, y) => y.clone(),
            (Some(x), Some(y)) => Some(NumPart {
                integer: x.integer && y.integer,
                lower: lower_union(x.lower, y.lower),
                values: match (x.values, &y.values) {
                    (Some(mut xs), Some(ys)) => {
                        for n in ys {
                            if !xs.iter().any(|v| same_number(v, n)) {
                                xs.push(n.clone());
                            }
                        }
                        Some(xs)
                    }
                    _ => None,
                },
            }),
        };
        let string = match (a.string, &b.string) {
            (x, None) => x,
            (None, y) => y.clone(),
            (Some(x), Some(y)) => Some(StrPart {
                lexical: lexical_union(x.lexical, y.lexical),
                values: match (x.values, &y.values) {
                    (Some(mut xs), Some(ys)) => {
                        for s in ys {
                            if !xs.contains(s) {
                                xs.push(s.clone());
                            }
                        }
                        Some(xs)
                    }
                    _ => None,
                },
            }),
        };
        let array = match (a.array, &b.array) {
            (x, None) => x,
            (None, y) => y.clone(),
            (Some(x), Some(y)) => {
                let n = x.prefix.len().max(y.prefix.len());
                let mut prefix = Vec::with_capacity(n);
                for i in 0..n {
                    let ids: Vec<ExprId> =
                        [x.item_at(i), y.item_at(i)].into_iter().flatten().collect();
                    prefix.push(self.union(&ids));
                }
                let items = match (x.items, y.items) {
                    (None, None) => None,
                    (Some(i), None) | (None, Some(i)) => Some(i),
                    (Some(i), Some(j)) => Some(self.union(&[i, j])),
                };
                let min_items = x.min_items.min(y.min_items);
                Some(ArrPart {
                    prefix,
                    items,
                    min_items,
                })
            }
        };
        let object = match (a.object, &b.object) {
            (x, None) => x,
            (None, y) => y.clone(),
            (Some(mut x), Some(y)) => {
                for r in &y.records {
                    if !x.records.contains(r) {
                        x.records.push(r.clone());
                    }
                }
                x.merged = None;
                Some(x)
            }
        };
        Parts {
            any: false,
            null: a.null || b.null,
            bool_false: a.bool_false || b.bool_false,
            bool_true: a.bool_true || b.bool_true,
            number,
            string,
            array,
            object,
        }
    }

    fn inter_parts(&mut self, a: Parts, b: &Parts) -> Parts {
        if a.any {
            return b.clone();
        }
        if b.any {
            return a;
        }
        let number = match (a.number, &b.number) {
            (Some(x), Some(y)) => {
                let integer = x.integer || y.integer;
                let mut values = match (x.values, &y.values) {
                    (Some(xs), Some(ys)) => Some(
                        xs.into_iter()
                            .filter(|n| ys.iter().any(|m| same_number(n, m)))
                            .collect(),
                    ),
                    (Some(xs), None) => Some(xs),
                    (None, Some(ys)) => Some(ys.clone()),
                    (None, None) => None,
                };
                if integer {
                    if let Some(vs) = &mut values {
                        vs.retain(|n: &Number| n.as_f64().is_some_and(|f| f.fract() == 0.0));
                    }
                }
                let lower = lower_inter(x.lower, y.lower);
                match &values {
                    Some(vs) if vs.is_empty() => None,
                    _ => Some(NumPart {
                        integer,
                        values,
                        lower,
                    }),
                }
            }
            _ => None,
        };
        let string = match (a.string, &b.string) {
            (Some(x), Some(y)) => {
                let values = match (x.values, &y.values) {
                    (Some(xs), Some(ys)) => {
                        Some(xs.into_iter().filter(|s| ys.contains(s)).collect())
                    }
                    (Some(xs), None) => Some(xs),
                    (None, Some(ys)) => Some(ys.clone()),
                    (None, None) => None,
                };
                let lexical = lexical_inter(x.lexical, y.lexical);
                match &values {
                    Some(vs) if vs.is_empty() => None,
                    _ => Some(StrPart { values, lexical }),
                }
            }
            _ => None,
        };
        let array = match (a.array, &b.array) {
            (Some(x), Some(y)) => {
                let n = x.prefix.len().max(y.prefix.len());
                let mut prefix = Vec::with_capacity(n);
                for i in 0..n {
                    let e = match (x.item_at(i), y.item_at(i)) {
                        (Some(p), Some(q)) => self.inter(&[p, q]),
                        _ => NEVER,
                    };
                    prefix.push(e);
                }
                // Trailing NEVER positions just cap the length.
                while prefix.last() == Some(&NEVER) {
                    prefix.pop();
                }
                let items = match (x.items, y.items) {
                    (Some(i), Some(j)) => Some(self.inter(&[i, j])),
                    _ => None,
                };
                let min_items = x.min_items.max(y.min_items);
                Some(
                    ArrPart {
                        prefix,
                        items,
                        min_items,
                    }
                    .clamp_min(),
                )
            }
            _ => None,
        };
        let object = match (a.object, &b.object) {
            (Some(x), Some(y)) => {
                if x.records.len() * y.records.len() > MAX_RECORDS {
                    // Keep one side: a superset of the intersection.
                    self.approximated = true;
                    let mut keep = if x.records.len() <= y.records.len() {
                        x
                    } else {
                        y.clone()
                    };
                    keep.merged = None;
                    Some(keep)
                } else {
                    let mut records = Vec::new();
                    for rx in &x.records {
                        for ry in &y.records {
                            let r = self.inter_records(rx, ry);
                            if !records.iter().any(|x: &Arc<Record>| **x == *r) {
                                records.push(r);
                            }
                        }
                    }
                    Some(ObjPart {
                        records,
                        merged: None,
                    })
                }
            }
            _ => None,
        };
        Parts {
            any: false,
            null: a.null && b.null,
            bool_false: a.bool_false && b.bool_false,
            bool_true: a.bool_true && b.bool_true,
            number,
            string,
            array,
            object,
        }
    }

    fn inter_records(&mut self, x: &Arc<Record>, y: &Arc<Record>) -> Arc<Record> {
        // An open record without declarations is the identity of intersection.
        let trivial =
            |r: &Record| r.props.is_empty() && r.required.is_empty() && r.extras == Some(ANY);
        if trivial(x) {
            return y.clone();
        }
        if trivial(y) {
            return x.clone();
        }
        let mut props = Vec::new();
        for (name, ex) in &x.props {
            let e = match y.prop(name) {
                Some(ey) => self.inter(&[*ex, ey]),
                None => *ex,
            };
            props.push((name.clone(), e));
        }
        for (name, ey) in &y.props {
            if x.prop(name).is_none() {
                props.push((name.clone(), *ey));
            }
        }
        let mut required = x.required.clone();
        for r in &y.required {
            if !required.contains(r) {
                required.push(r.clone());
            }
        }
        let extras = match (x.extras, y.extras) {
            (Some(a), Some(b)) => Some(self.inter(&[a, b])),
            _ => None,
        };
        Arc::new(Record {
            origin: x.origin.clone(),
            props,
            required,
            extras,
        })
    }
}

fn is_metaschema(reference: &str) -> bool {
    let r = reference
        .trim_start_matches("https://")
        .trim_start_matches("http://");
    r.starts_with("json-schema.org/draft-0")
        || r.starts_with("json-schema.org/draft/20")
        || r.starts_with("json-schema.org/schema")
}

fn describe(v: &Value) -> Option<String> {
    let m = v.as_object()?;
    m.get("description")
        .or_else(|| m.get("title"))
        .and_then(Value::as_str)
        .map(|s| s.to_string())
}

/// Build the shapes of a schema document.
pub fn build(doc: &SchemaDoc) -> Result<Shapes, CompileError> {
    Builder::new(doc).build()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn shapes(schema: Value) -> Shapes {
        let doc = SchemaDoc::new(&schema);
        build(&doc).unwrap()
    }

    #[test]
    fn object_with_required_and_enum() {
        let s = shapes(json!({
            "type": "object",
            "properties": {"a": {"type": "string"}, "b": {"enum": ["x", "y"]}},
            "required": ["a"],
            "additionalProperties": false
        }));
        let p = s.parts(s.root);
        assert!(p.object_only());
        let r = &p.object.as_ref().unwrap().records[0];
        assert_eq!(r.required, vec!["a"]);
        assert_eq!(r.extras, None);
        let b = s.parts(r.prop("b").unwrap());
        assert_eq!(
            b.string.as_ref().unwrap().values.as_ref().unwrap(),
            &vec!["x", "y"]
        );
        assert!(b.number.is_none());
    }

    #[test]
    fn recursive_ref_is_finite() {
        let s = shapes(json!({
            "$defs": {"node": {"type": "object", "properties": {"kids": {"type": "array", "items": {"$ref": "#/$defs/node"}}}}},
            "$ref": "#/$defs/node"
        }));
        assert!(s.parts(s.root).object_only());
    }

    #[test]
    fn any_of_merges_types() {
        let s =
            shapes(json!({"anyOf": [{"type": "string"}, {"type": "integer"}, {"const": null}]}));
        let p = s.parts(s.root);
        assert!(p.null && p.string.is_some() && p.number.as_ref().unwrap().integer);
        assert!(p.object.is_none() && p.array.is_none());
    }

    #[test]
    fn all_of_intersects() {
        let s = shapes(json!({"allOf": [
            {"type": ["string", "number"]},
            {"type": ["number", "null"]},
            {"properties": {"a": {}}}
        ]}));
        let p = s.parts(s.root);
        assert!(p.number.is_some() && p.string.is_none() && !p.null);
        assert_eq!(p.single_value(), None);
    }

    #[test]
    fn const_is_single_value() {
        let s = shapes(json!({"const": "x"}));
        assert_eq!(s.parts(s.root).single_value(), Some(json!("x")));
    }
}
