//! Stage 3 — the notation: how each shape is written.
//!
//! Syntax, everywhere: elements separated by one space; objects `( … )`, arrays `[ … ]`,
//! strings bare when they are plain words (enum values always; free strings except in
//! keyless fields, which are recognised by their first token), else JSON-quoted; numbers bare,
//! unconstrained subtrees as compact JSON. An object body lists
//!   1. an optional *tag* (discriminated unions: the variant's tag value),
//!   2. *positional* fields (required; no key),
//!   3. optional fields in a fixed order, each *keyed* (`kw value`) or *keyless* (just the
//!      value, when its first token tells which field it is),
//!   4. undeclared properties as `"key" value`.
//!
//! Required fields with a single possible value are not written at all. Every choice is
//! checked so one left-to-right pass, one token of lookahead, decides every step: that
//! makes the language unambiguous and the same under PEG (pest) and CFG (GBNF).
//! At the root, objects with array-of-object fields use a *block* layout: one `kw:` line per
//! field, each array item on its own line (the paper's `fields:` / `filters:` sections).

use crate::error::CompileError;
use crate::shape::{Cache, ExprId, Parts, Record, Shapes, ANY};
use rustc_hash::FxHashMap as HashMap;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

/// How the whole document is laid out.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum RootLayout {
    /// Root object: one `kw: value` line per field, array fields as `kw:` + one item per line.
    Block,
    /// Root object: its body on one line, without parentheses.
    Line,
    /// Root array: one item per line.
    Lines,
    /// Any other root: one inline value.
    Value,
}

/// How an object field is written.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum FieldMode {
    /// Required; written by position, without a key.
    Positional,
    /// Required with a single possible value: not written.
    Const(Value),
    /// Optional; written as `keyword value` (or `keyword` alone for single-valued fields).
    Keyed,
    /// Optional; written as its value alone, recognised by its first token.
    Keyless,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FieldLayout {
    pub name: String,
    pub expr: ExprId,
    pub mode: FieldMode,
    /// The key as written: a bare word, or a JSON-quoted string.
    pub keyword: String,
    /// Enum value -> abbreviation written instead.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub abbrev: BTreeMap<String, String>,
    /// Optional fields: the first tokens that select this field (its keyword, or, when
    /// keyless, the first tokens of its values).
    #[serde(default, skip_serializing_if = "BTreeSet::is_empty")]
    pub first: BTreeSet<First>,
    /// The field's own schema expression, for its description (shapes are shared by
    /// canonical `expr`, descriptions are not).
    pub source: ExprId,
    /// Keyed object fields: the value is written without parentheses (`kw a 1 b 2`, an
    /// empty object as `()`), because nothing that may follow it could continue it.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub open: bool,
    /// Positional fields: a free string here is always JSON-quoted, never a bare word (the
    /// leading slot of a line item, see [`mark_quoted`]). Keyless fields are always quoted.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub quoted: bool,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RecordLayout {
    /// Name used by notation edits (the schema location(s) of the object form).
    pub name: String,
    pub fields: Vec<FieldLayout>,
    /// Shape of undeclared properties, `None` when closed.
    pub extras: Option<ExprId>,
    /// The undeclared properties' own schema expression (`extras` is the canonical one,
    /// shared with equal shapes), whose local assertions the encoder checks.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub extras_source: Option<ExprId>,
    #[serde(skip)]
    index: Cache<RecordIndex>,
}

/// Lookups the encoder needs per object, built once per record on first use: merged
/// records (Vega-Lite) declare a hundred fields where an instance object has three.
///
/// Packed so that encoding one object touches a few contiguous cache lines: with one
/// document per schema (MaskBench) nothing of a record is in cache, and a [`FieldLayout`]
/// (~180 bytes, its strings elsewhere on the heap) costs a miss per field read.
#[derive(Debug, Default)]
pub struct RecordIndex {
    /// Field names, then keywords, back to back; sliced by [`FieldSlot`].
    text: String,
    /// What the encoder reads of each field.
    pub slots: Vec<FieldSlot>,
    /// Records with many fields are searched by hash instead of by a scan of the slots.
    by_name: Option<HashMap<String, usize>>,
    /// How many fields are positional or const (must be present).
    pub required: usize,
    /// The single possible value of each field, if it has one (a const field's value);
    /// read only where [`FieldSlot::single`] says there is one.
    pub single: Vec<Option<Value>>,
    /// See [`RecordLayout::bare_keys`].
    pub bare_keys: bool,
}

/// The part of a [`FieldLayout`] the encoder reads, packed.
#[derive(Debug, Clone, Copy)]
pub struct FieldSlot {
    pub expr: ExprId,
    /// The field's own schema expression (see [`FieldLayout::source`]), for its local
    /// assertions.
    pub source: ExprId,
    name: (u32, u32),
    keyword: (u32, u32),
    pub mode: SlotMode,
    /// Positional or const: must be present.
    pub required: bool,
    /// The field has a single possible value (see [`RecordIndex::single`]).
    pub single: bool,
    /// Written as a JSON string (quoted leading slot, or keyless) when a free string.
    pub quoted: bool,
    pub open: bool,
    pub abbreviated: bool,
    /// The field's shape admits free strings (no enum).
    pub free_string: bool,
    /// A block-level field written as a section (see [`is_section`]).
    pub section: bool,
}

/// [`FieldMode`] without its value.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SlotMode {
    Positional,
    Const,
    Keyed,
    Keyless,
}

/// Above this many fields a record is searched by hash.
const SCAN_MAX: usize = 16;

impl RecordIndex {
    fn build(r: &RecordLayout, shapes: &Shapes) -> RecordIndex {
        let mut ix = RecordIndex {
            bare_keys: r.bare_keys(),
            ..RecordIndex::default()
        };
        let push = |text: &mut String, s: &str| {
            let start = text.len() as u32;
            text.push_str(s);
            (start, text.len() as u32)
        };
        let names: Vec<(u32, u32)> = r
            .fields
            .iter()
            .map(|f| push(&mut ix.text, &f.name))
            .collect();
        let keywords: Vec<(u32, u32)> = r
            .fields
            .iter()
            .map(|f| push(&mut ix.text, &f.keyword))
            .collect();
        for (i, f) in r.fields.iter().enumerate() {
            let parts = shapes.parts(f.expr);
            let single = match &f.mode {
                FieldMode::Const(c) => Some(c.clone()),
                _ => parts.single_value(),
            };
            let required = matches!(f.mode, FieldMode::Positional | FieldMode::Const(_));
            ix.required += usize::from(required);
            ix.slots.push(FieldSlot {
                expr: f.expr,
                source: f.source,
                name: names[i],
                keyword: keywords[i],
                mode: match f.mode {
                    FieldMode::Positional => SlotMode::Positional,
                    FieldMode::Const(_) => SlotMode::Const,
                    FieldMode::Keyed => SlotMode::Keyed,
                    FieldMode::Keyless => SlotMode::Keyless,
                },
                required,
                single: single.is_some(),
                quoted: f.quoted || f.mode == FieldMode::Keyless,
                open: f.open,
                abbreviated: !f.abbrev.is_empty(),
                free_string: parts.string.as_ref().is_some_and(|sp| sp.values.is_none()),
                section: is_section(shapes, f.expr),
            });
            ix.single.push(single);
        }
        if r.fields.len() > SCAN_MAX {
            ix.by_name = Some(
                r.fields
                    .iter()
                    .enumerate()
                    .map(|(i, f)| (f.name.clone(), i))
                    .collect(),
            );
        }
        ix
    }

    /// The field named `name`.
    pub fn position(&self, name: &str) -> Option<usize> {
        if let Some(map) = &self.by_name {
            return map.get(name).copied();
        }
        self.slots.iter().position(|f| {
            (f.name.1 - f.name.0) as usize == name.len() && self.slice(f.name) == name
        })
    }

    fn slice(&self, (start, end): (u32, u32)) -> &str {
        &self.text[start as usize..end as usize]
    }

    /// Field `i`'s name.
    pub fn name(&self, i: usize) -> &str {
        self.slice(self.slots[i].name)
    }

    /// A field's keyword.
    pub fn keyword(&self, slot: &FieldSlot) -> &str {
        self.slice(slot.keyword)
    }

    /// Field `i`'s abbreviations. They are rare: only then is the (cold) field layout of
    /// `r`, this index's record, read.
    pub fn abbrev<'r>(
        &self,
        r: &'r RecordLayout,
        i: usize,
    ) -> Option<&'r BTreeMap<String, String>> {
        self.slots[i].abbreviated.then(|| &r.fields[i].abbrev)
    }
}

impl RecordLayout {
    /// `extras`: the undeclared properties' own expression and its canonical one.
    pub fn new(name: String, fields: Vec<FieldLayout>, extras: Option<(ExprId, ExprId)>) -> Self {
        RecordLayout {
            name,
            fields,
            extras: extras.map(|(_, c)| c),
            extras_source: extras.map(|(e, _)| e),
            index: Cache::default(),
        }
    }

    /// Undeclared keys may be written bare (when they are words) only if no optional
    /// field is recognised by a word: a pure map, or a record of required fields plus a map.
    pub fn bare_keys(&self) -> bool {
        self.extras.is_some()
            && self
                .fields
                .iter()
                .all(|f| !matches!(f.mode, FieldMode::Keyed | FieldMode::Keyless))
    }

    pub fn lookup(&self, shapes: &Shapes) -> &RecordIndex {
        self.index.get_or_init(|| RecordIndex::build(self, shapes))
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TaggedVariant {
    /// Tag values of this variant (as in the JSON) with what is written for each.
    pub tags: Vec<(String, String)>,
    pub record: RecordLayout,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub enum ObjLayout {
    Record(RecordLayout),
    /// A union discriminated by a required string property (`key`).
    Tagged {
        key: String,
        variants: Vec<TaggedVariant>,
    },
}

/// The whole notation: a layout per object shape, the root layout, and which expressions
/// share one rule.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Notation {
    pub root: RootLayout,
    /// Canonical representative of each expression (equal parts => same rule).
    pub canon: Vec<ExprId>,
    /// Object layouts of canonical expressions with an object part, by expression.
    pub objects: BTreeMap<ExprId, ObjLayout>,
    /// Expression -> its layout, built on first use (the codec's hot path): one small
    /// number per expression (1 + the layout's position, 0 for none) and the layouts side by
    /// side, so a cold schema costs few cache lines.
    #[serde(skip)]
    dense: Cache<(Vec<u32>, Vec<ObjLayout>)>,
    /// Expressions written open on a block line, built on first use.
    #[serde(skip)]
    line_open: Cache<rustc_hash::FxHashSet<ExprId>>,
}

impl Notation {
    pub fn new(root: RootLayout, canon: Vec<ExprId>, objects: BTreeMap<ExprId, ObjLayout>) -> Self {
        Notation {
            root,
            canon,
            objects,
            dense: Cache::default(),
            line_open: Cache::default(),
        }
    }

    /// Whether a block line writes this field's value open: the line end closes it, so
    /// any object that can be told from `()` qualifies (see [`open_layout`]).
    pub fn opens_on_line(&self, shapes: &Shapes, expr: ExprId) -> bool {
        self.line_open
            .get_or_init(|| {
                self.objects
                    .keys()
                    .copied()
                    .filter(|&e| open_layout(shapes, &self.objects, e).is_some())
                    .collect()
            })
            .contains(&expr)
    }

    pub fn object(&self, id: ExprId) -> Option<&ObjLayout> {
        let (by_expr, layouts) = self.dense.get_or_init(|| {
            let mut layouts = Vec::with_capacity(self.objects.len());
            let mut slot_of: HashMap<ExprId, u32> = HashMap::default();
            for (&k, layout) in &self.objects {
                layouts.push(layout.clone());
                slot_of.insert(k, layouts.len() as u32);
            }
            let by_expr = self
                .canon
                .iter()
                .map(|c| slot_of.get(c).copied().unwrap_or(0))
                .collect();
            (by_expr, layouts)
        });
        let slot = *by_expr.get(id as usize)? as usize;
        layouts.get(slot.checked_sub(1)?)
    }
}

/// First token classes, for deciding keyless fields and checking determinism.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub enum First {
    Null,
    True,
    False,
    Number,
    Quoted,
    Word(String),
    LParen,
    LBracket,
    LBrace,
}

const RESERVED: &[&str] = &["true", "false", "null"];

/// A string that can be written without quotes.
pub fn is_word(s: &str) -> bool {
    // Word characters are ASCII, so bytes suffice (a multi-byte character fails).
    let b = s.as_bytes();
    match b.first() {
        Some(&c) if is_word_start(c as char) => {}
        _ => return false,
    }
    b[1..].iter().all(|&c| is_word_char(c as char))
        && !RESERVED.contains(&s)
        && !s.ends_with(['.', '-'])
}

pub fn is_word_start(c: char) -> bool {
    c.is_ascii_alphabetic() || c == '_' || c == '$'
}

pub fn is_word_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || matches!(c, '_' | '$' | '.' | '-' | '/')
}

/// How a string is written as a token: bare if a word, else JSON-quoted.
pub fn render_word(s: &str) -> String {
    if is_word(s) {
        s.to_string()
    } else {
        serde_json::to_string(s).unwrap_or_default()
    }
}

/// First tokens of a value of these parts.
pub fn first_set(parts: &Parts, abbrev: &BTreeMap<String, String>) -> BTreeSet<First> {
    let mut f = BTreeSet::new();
    if parts.any {
        f.extend([
            First::Null,
            First::True,
            First::False,
            First::Number,
            First::Quoted,
            First::LBracket,
            First::LBrace,
        ]);
        return f;
    }
    if parts.null {
        f.insert(First::Null);
    }
    if parts.bool_true {
        f.insert(First::True);
    }
    if parts.bool_false {
        f.insert(First::False);
    }
    if parts.number.is_some() {
        f.insert(First::Number);
    }
    if let Some(s) = &parts.string {
        match &s.values {
            None => {
                f.insert(First::Quoted);
            }
            Some(vs) => {
                for v in vs {
                    let w = abbrev.get(v).map(String::as_str).unwrap_or(v);
                    f.insert(if is_word(w) {
                        First::Word(w.to_string())
                    } else {
                        First::Quoted
                    });
                }
            }
        }
    }
    if parts.array.is_some() {
        f.insert(First::LBracket);
    }
    if parts.object.is_some() {
        f.insert(First::LParen);
    }
    f
}

/// A plain-word keyword for a property name (`@type` -> `_type`).
pub fn keyword_for(name: &str) -> String {
    if is_word(name) {
        return name.to_string();
    }
    let mut k: String = name
        .chars()
        .map(|c| if is_word_char(c) { c } else { '_' })
        .collect();
    if !k.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_' || c == '$') {
        k.insert(0, '_');
    }
    while k.ends_with(['.', '-']) {
        k.push('_');
    }
    if !is_word(&k) {
        k = format!("{k}_");
    }
    k.truncate(64);
    k
}

/// User edits of the notation, as printed by `dss init` (YAML).
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct NotationConfig {
    /// `block`, `line`, `lines` or `value`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub root: Option<RootLayout>,
    /// Object forms by name (their schema location); fields in the order they are written.
    #[serde(default)]
    pub objects: BTreeMap<String, ObjectConfig>,
}

#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct ObjectConfig {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tag: Option<String>,
    #[serde(default)]
    pub fields: Vec<FieldConfig>,
}

#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct FieldConfig {
    pub name: String,
    /// `positional`, `const`, `keyed` or `keyless`.
    pub mode: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub keyword: Option<String>,
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub abbrev: BTreeMap<String, String>,
}

/// Design the notation for shapes, honouring user edits.
pub fn design(shapes: &Shapes, config: Option<&NotationConfig>) -> Result<Notation, CompileError> {
    let canon = canonicalize(shapes);
    let mut objects = BTreeMap::new();
    let empty = NotationConfig::default();
    let config = config.unwrap_or(&empty);
    let mut used = BTreeSet::new();
    // Many shapes share one object part (`X` and `X | null`): design each part once.
    let mut designed: HashMap<&crate::shape::ObjPart, ObjLayout> = HashMap::default();
    // Only shapes reachable from the root (through canonical children) need a layout.
    let mut reached = vec![false; shapes.parts.len()];
    let mut stack = vec![canon[shapes.root as usize]];
    while let Some(id) = stack.pop() {
        if std::mem::replace(&mut reached[id as usize], true) {
            continue;
        }
        let parts = shapes.parts(id);
        let mut push = |e: ExprId| stack.push(canon[e as usize]);
        if let Some(a) = &parts.array {
            a.prefix.iter().for_each(|&e| push(e));
            a.items.into_iter().for_each(&mut push);
        }
        if let Some(o) = &parts.object {
            for r in o.records.iter().chain(o.merged.iter()) {
                r.props.iter().for_each(|(_, e)| push(*e));
                r.extras.into_iter().for_each(&mut push);
            }
        }
    }
    for (id, parts) in shapes.parts.iter().enumerate() {
        let id = id as ExprId;
        if canon[id as usize] != id || parts.any || !reached[id as usize] {
            continue;
        }
        if let Some(obj) = &parts.object {
            let layout = match designed.get(obj) {
                Some(l) => l.clone(),
                None => {
                    let l = design_object(
                        shapes,
                        &canon,
                        &obj.records,
                        obj.merged.as_ref(),
                        config,
                        &mut used,
                    )?;
                    designed.insert(obj, l.clone());
                    l
                }
            };
            objects.insert(id, layout);
        }
    }
    for name in config.objects.keys() {
        if !used.contains(name) {
            return Err(CompileError::Notation(format!(
                "object `{name}` in the notation does not exist in this schema (run `dss init` to see the names)"
            )));
        }
    }
    let root_parts = shapes.parts(shapes.root);
    let auto_root = if root_parts.object_only() {
        match objects.get(&canon[shapes.root as usize]) {
            Some(ObjLayout::Record(r)) if r.fields.iter().any(|f| is_section(shapes, f.expr)) => {
                RootLayout::Block
            }
            _ => RootLayout::Line,
        }
    } else if root_parts.array_only()
        && root_parts
            .array
            .as_ref()
            .is_some_and(|a| a.prefix.is_empty())
    {
        RootLayout::Lines
    } else {
        RootLayout::Value
    };
    let root = match config.root {
        None => auto_root,
        Some(RootLayout::Value) => RootLayout::Value,
        Some(r @ (RootLayout::Block | RootLayout::Line)) => {
            if !root_parts.object_only() {
                return Err(CompileError::Notation(
                    format!("root layout `{r:?}` needs a schema whose root is always an object")
                        .to_lowercase(),
                ));
            }
            if r == RootLayout::Block
                && !matches!(
                    objects.get(&canon[shapes.root as usize]),
                    Some(ObjLayout::Record(_))
                )
            {
                return Err(CompileError::Notation(
                    "root layout `block` needs a root object that is not a tagged union".into(),
                ));
            }
            r
        }
        Some(RootLayout::Lines) => {
            if auto_root != RootLayout::Lines {
                return Err(CompileError::Notation(
                    "root layout `lines` needs a schema whose root is always an array".into(),
                ));
            }
            RootLayout::Lines
        }
    };
    mark_open(shapes, &mut objects);
    mark_quoted(shapes, root, &canon, &mut objects);
    Ok(Notation::new(root, canon, objects))
}

/// Quote the leading slot of every line item when it is a free string.
///
/// A line of a section (or of a `lines` document) that starts with a bare word reads like
/// a keyword line: a model that wants to write `limit 5` or `filters:` there would get an
/// item whose string is `limit`. With the leading string quoted, as in the paper's
/// `"Sales" sum desc`, such a line is not in the language and the model must write a real
/// item, a section header, or stop. Tagged items already start with their tag.
fn mark_quoted(
    shapes: &Shapes,
    root: RootLayout,
    canon: &[ExprId],
    objects: &mut BTreeMap<ExprId, ObjLayout>,
) {
    let root_expr = canon[shapes.root as usize];
    let items: Vec<ExprId> = match root {
        RootLayout::Block => match objects.get(&root_expr) {
            Some(ObjLayout::Record(r)) => r
                .fields
                .iter()
                .filter(|f| is_section(shapes, f.expr))
                .map(|f| shapes.items_of(f.expr))
                .collect(),
            _ => Vec::new(),
        },
        RootLayout::Lines => vec![shapes.items_of(shapes.root)],
        RootLayout::Line | RootLayout::Value => Vec::new(),
    };
    for item in items {
        if !shapes.parts(item).object_only() {
            continue;
        }
        let Some(ObjLayout::Record(r)) = objects.get_mut(&canon[item as usize]) else {
            continue;
        };
        let first = r
            .fields
            .iter_mut()
            .find(|f| !matches!(f.mode, FieldMode::Const(_)));
        if let Some(f) = first {
            let free = shapes
                .parts(f.expr)
                .string
                .as_ref()
                .is_some_and(|s| s.values.is_none());
            if f.mode == FieldMode::Positional && free {
                f.quoted = true;
            }
        }
    }
}

/// Whether an object written without parentheses can be told from `()` (its empty form):
/// its body must not start with `(`.
pub fn starts_plain(shapes: &Shapes, layout: &ObjLayout) -> bool {
    match layout {
        ObjLayout::Tagged { .. } => true,
        ObjLayout::Record(r) => match r
            .fields
            .iter()
            .find(|f| !matches!(f.mode, FieldMode::Const(_)))
        {
            Some(f) if f.mode == FieldMode::Positional => {
                !first_set(shapes.parts(f.expr), &f.abbrev).contains(&First::LParen)
            }
            _ => r.fields.iter().all(|f| !f.first.contains(&First::LParen)),
        },
    }
}

/// The object layout of an object-only expression, if it may be written open (no parens).
pub fn open_layout<'n>(
    shapes: &Shapes,
    objects: &'n BTreeMap<ExprId, ObjLayout>,
    expr: ExprId,
) -> Option<&'n ObjLayout> {
    if !shapes.parts(expr).object_only() {
        return None;
    }
    objects.get(&expr).filter(|l| starts_plain(shapes, l))
}

/// Decide which keyed object fields are written without parentheses.
///
/// An open object ends where no token could continue it, so its continuation tokens (the
/// first tokens of its optional fields and, when it is open-ended, a quoted key) must not
/// be able to start anything that may follow it: the optional fields after it in its
/// parent, the parent's undeclared keys, and, when the parent is open too, whatever may
/// follow the parent. Follow sets are computed as if every candidate were open (a
/// fixpoint over the object graph); the real ones are subsets, so each decision is safe.
fn mark_open(shapes: &Shapes, objects: &mut BTreeMap<ExprId, ObjLayout>) {
    // Tokens as bit positions.
    let mut ids: HashMap<First, usize> = HashMap::default();
    let mut id = |t: &First| {
        let n = ids.len();
        *ids.entry(t.clone()).or_insert(n)
    };
    type Bits = Vec<u64>;
    fn set(b: &mut Bits, i: usize) {
        if b.len() <= i / 64 {
            b.resize(i / 64 + 1, 0);
        }
        b[i / 64] |= 1 << (i % 64);
    }
    fn union(a: &mut Bits, b: &Bits) -> bool {
        if a.len() < b.len() {
            a.resize(b.len(), 0);
        }
        let mut changed = false;
        for (x, y) in a.iter_mut().zip(b) {
            let n = *x | y;
            changed |= n != *x;
            *x = n;
        }
        changed
    }
    fn meets(a: &Bits, b: &Bits) -> bool {
        a.iter().zip(b).any(|(x, y)| x & y != 0)
    }
    let quoted = id(&First::Quoted);
    fn records(l: &ObjLayout) -> Vec<&RecordLayout> {
        match l {
            ObjLayout::Record(r) => vec![r],
            ObjLayout::Tagged { variants, .. } => variants.iter().map(|v| &v.record).collect(),
        }
    }
    // Per record: the tokens that may follow each optional field within the record.
    struct Site {
        parent: ExprId,
        /// The record within the parent's layout (a tagged union's variant) and the field.
        variant: usize,
        field: usize,
        child: ExprId,
        local: Bits,
    }
    let mut cont: BTreeMap<ExprId, Bits> = BTreeMap::new();
    let mut sites: Vec<Site> = Vec::new();
    // Objects continued by any word (bare map keys) are never open.
    let endless: BTreeSet<ExprId> = objects
        .iter()
        .filter(|(_, l)| records(l).iter().any(|r| r.bare_keys()))
        .map(|(&e, _)| e)
        .collect();
    for (&e, layout) in objects.iter() {
        let mut c = Bits::new();
        for (ri, r) in records(layout).into_iter().enumerate() {
            let mut suffix = Bits::new();
            if r.extras.is_some() {
                set(&mut suffix, quoted);
            }
            for (fi, f) in r.fields.iter().enumerate().rev() {
                if !matches!(f.mode, FieldMode::Keyed | FieldMode::Keyless) {
                    continue;
                }
                if f.mode == FieldMode::Keyed
                    && !endless.contains(&f.expr)
                    && shapes.parts(f.expr).single_value().is_none()
                    && open_layout(shapes, objects, f.expr).is_some()
                {
                    sites.push(Site {
                        parent: e,
                        variant: ri,
                        field: fi,
                        child: f.expr,
                        local: suffix.clone(),
                    });
                }
                for t in &f.first {
                    set(&mut suffix, id(t));
                }
            }
            union(&mut c, &suffix);
        }
        cont.insert(e, c);
    }
    // Open every candidate whose own parent's later fields cannot continue it; then,
    // while an open object could be continued by what follows its (open) parent, close
    // that parent's sites: inner objects are the more frequent, so they keep priority.
    let clash = |s: &Site, follow: &BTreeMap<ExprId, Bits>| {
        let Some(c) = cont.get(&s.child) else {
            return false;
        };
        meets(c, &s.local) || follow.get(&s.parent).is_some_and(|p| meets(c, p))
    };
    let none = BTreeMap::new();
    let mut open: Vec<bool> = sites.iter().map(|s| !clash(s, &none)).collect();
    loop {
        // Follow sets of the objects written open, to a fixpoint.
        let mut follow: BTreeMap<ExprId, Bits> = BTreeMap::new();
        loop {
            let mut changed = false;
            for (s, _) in sites.iter().zip(&open).filter(|(_, o)| **o) {
                let mut f = s.local.clone();
                if let Some(p) = follow.get(&s.parent) {
                    union(&mut f, p);
                }
                changed |= union(follow.entry(s.child).or_default(), &f);
            }
            if !changed {
                break;
            }
        }
        let mut closed_any = false;
        for k in 0..sites.len() {
            if !open[k] || !clash(&sites[k], &follow) {
                continue;
            }
            let parent = sites[k].parent;
            let mut closed = false;
            for (j, s) in sites.iter().enumerate() {
                if s.child == parent && open[j] {
                    open[j] = false;
                    closed = true;
                }
            }
            if !closed {
                open[k] = false;
            }
            closed_any = true;
        }
        if !closed_any {
            break;
        }
    }
    for (s, open) in sites.into_iter().zip(open) {
        if let Some(layout) = objects.get_mut(&s.parent) {
            let r = match layout {
                ObjLayout::Record(r) => Some(r),
                ObjLayout::Tagged { variants, .. } => {
                    variants.get_mut(s.variant).map(|v| &mut v.record)
                }
            };
            if let Some(field) = r.and_then(|r| r.fields.get_mut(s.field)) {
                field.open = open;
            }
        }
    }
}

/// Array-only fields with no tuple part become sections (`kw:` + one item per line).
pub fn is_section(shapes: &Shapes, expr: ExprId) -> bool {
    let p = shapes.parts(expr);
    p.array_only()
        && p.array
            .as_ref()
            .is_some_and(|a| a.prefix.is_empty() && a.items.is_some())
}

/// Expressions with equal parts share a layout and a grammar rule.
fn canonicalize(shapes: &Shapes) -> Vec<ExprId> {
    let mut seen: HashMap<&Parts, ExprId> = HashMap::default();
    // Expressions often share one parts value: those need no deep hash.
    let mut shared: HashMap<*const Parts, ExprId> = HashMap::default();
    let mut canon = Vec::with_capacity(shapes.parts.len());
    for (id, p) in shapes.parts.iter().enumerate() {
        let c = match shared.get(&Arc::as_ptr(p)) {
            Some(&c) => c,
            None => {
                let c = *seen.entry(&**p).or_insert(id as ExprId);
                shared.insert(Arc::as_ptr(p), c);
                c
            }
        };
        canon.push(c);
    }
    canon
}

fn design_object(
    shapes: &Shapes,
    canon: &[ExprId],
    records: &[Arc<Record>],
    merged: Option<&Arc<Record>>,
    config: &NotationConfig,
    used: &mut BTreeSet<String>,
) -> Result<ObjLayout, CompileError> {
    if records.len() >= 2 {
        if let Some(key) = find_discriminator(shapes, records) {
            let mut variants = Vec::new();
            for r in records {
                let tag_expr = r.prop(&key).unwrap_or(ANY);
                let values = shapes
                    .parts(tag_expr)
                    .string
                    .as_ref()
                    .and_then(|s| s.values.clone())
                    .unwrap_or_default();
                let mut rest = Record::clone(r);
                rest.props.retain(|(n, _)| *n != key);
                rest.required.retain(|n| *n != key);
                let layout = design_record(shapes, canon, &rest, config, used)?;
                let tag_cfg = config.objects.get(&layout.name).and_then(|c| c.tag.clone());
                let single = values_len(shapes, tag_expr) == 1;
                let tags = values
                    .into_iter()
                    .map(|v| {
                        let w = match &tag_cfg {
                            Some(t) if single => t.clone(),
                            _ => v.clone(),
                        };
                        (v, w)
                    })
                    .collect();
                variants.push(TaggedVariant {
                    tags,
                    record: layout,
                });
            }
            let user_tags = variants.iter().any(|v| {
                config
                    .objects
                    .get(&v.record.name)
                    .is_some_and(|c| c.tag.is_some())
            });
            if !user_tags {
                shorten_tags(&mut variants);
            }
            for v in &mut variants {
                for (_, w) in &mut v.tags {
                    *w = render_word(w);
                }
            }
            check_tags(&key, &variants)?;
            return Ok(ObjLayout::Tagged { key, variants });
        }
    }
    let merged = match (records.len(), merged) {
        (1, _) => &records[0],
        (_, Some(m)) => m,
        _ => {
            return Err(CompileError::Notation(
                "internal: union of objects was not merged".into(),
            ))
        }
    };
    Ok(ObjLayout::Record(design_record(
        shapes, canon, merged, config, used,
    )?))
}

/// Short tags for union variants, as the DSS paper writes them (`relative-date` -> `rd`,
/// `categorical` -> `cat`): initials of compound values, a three-letter prefix of long
/// words. All or nothing: if any two would collide, the union keeps its full values.
fn shorten_tags(variants: &mut [TaggedVariant]) {
    let short = |v: &str| -> String {
        let parts: Vec<&str> = v
            .split(['-', '_', ' ', '.'])
            .filter(|p| !p.is_empty())
            .collect();
        let mut words: Vec<String> = Vec::new();
        for p in parts {
            // camelCase splits too.
            let mut cur = String::new();
            for c in p.chars() {
                if c.is_ascii_uppercase() && !cur.is_empty() {
                    words.push(std::mem::take(&mut cur));
                }
                cur.push(c);
            }
            if !cur.is_empty() {
                words.push(cur);
            }
        }
        if words.len() >= 2 {
            words
                .iter()
                .filter_map(|w| w.chars().next())
                .collect::<String>()
                .to_ascii_lowercase()
        } else if v.chars().count() > 6 {
            v.chars().take(3).collect::<String>().to_ascii_lowercase()
        } else {
            v.to_string()
        }
    };
    let mut seen = BTreeSet::new();
    let mut planned = Vec::new();
    for var in variants.iter() {
        for (v, _) in &var.tags {
            let s = short(v);
            if !is_word(&s) || !seen.insert(s.clone()) {
                return;
            }
            planned.push(s);
        }
    }
    let mut it = planned.into_iter();
    for var in variants.iter_mut() {
        for (_, w) in var.tags.iter_mut() {
            if let Some(s) = it.next() {
                *w = s;
            }
        }
    }
}

fn values_len(shapes: &Shapes, e: ExprId) -> usize {
    shapes
        .parts(e)
        .string
        .as_ref()
        .and_then(|s| s.values.as_ref())
        .map_or(0, |v| v.len())
}

fn check_tags(key: &str, variants: &[TaggedVariant]) -> Result<(), CompileError> {
    let mut seen = BTreeSet::new();
    for v in variants {
        for (_, w) in &v.tags {
            if !seen.insert(w.clone()) {
                return Err(CompileError::Ambiguous(format!(
                    "tag `{w}` of `{key}` is written for two variants"
                )));
            }
        }
    }
    Ok(())
}

/// A property required by every record, whose values are string enums disjoint across them.
fn find_discriminator(shapes: &Shapes, records: &[Arc<Record>]) -> Option<String> {
    let first = &records[0];
    'candidates: for name in &first.required {
        let mut seen: BTreeSet<&str> = BTreeSet::new();
        for r in records {
            if !r.required.contains(name) {
                continue 'candidates;
            }
            let Some(e) = r.prop(name) else {
                continue 'candidates;
            };
            let p = shapes.parts(e);
            let only_string = p.string.is_some()
                && !p.any
                && !p.null
                && !p.bool_false
                && !p.bool_true
                && p.number.is_none()
                && p.array.is_none()
                && p.object.is_none();
            let Some(values) = p.string.as_ref().and_then(|s| s.values.as_ref()) else {
                continue 'candidates;
            };
            if !only_string {
                continue 'candidates;
            }
            for v in values {
                if !seen.insert(v.as_str()) {
                    continue 'candidates;
                }
            }
        }
        return Some(name.clone());
    }
    None
}

fn design_record(
    shapes: &Shapes,
    canon: &[ExprId],
    r: &Record,
    config: &NotationConfig,
    used: &mut BTreeSet<String>,
) -> Result<RecordLayout, CompileError> {
    let name = format!("#{}", r.origin.replace('|', "|#"));
    let cfg = config.objects.get(&name);
    if cfg.is_some() {
        used.insert(name.clone());
    }
    let c = |e: ExprId| canon[e as usize];
    // Default order: required fields first (schema order), then optional ones.
    let mut order: Vec<&(String, ExprId)> = r
        .props
        .iter()
        .filter(|(n, _)| r.required.contains(n))
        .collect();
    order.extend(r.props.iter().filter(|(n, _)| !r.required.contains(n)));
    if let Some(cfg) = cfg {
        for f in &cfg.fields {
            if r.prop(&f.name).is_none() {
                return Err(CompileError::Notation(format!(
                    "object `{name}` has no field `{}`",
                    f.name
                )));
            }
        }
        let pos = |n: &str| {
            cfg.fields
                .iter()
                .position(|f| f.name == n)
                .unwrap_or(usize::MAX)
        };
        order.sort_by_key(|(n, _)| pos(n));
    }
    let mut fields = Vec::new();
    for (n, e) in order {
        let parts = shapes.parts(*e);
        let required = r.required.contains(n);
        let keyword = keyword_for(n);
        let auto_mode = match (required, parts.single_value()) {
            (true, Some(v)) => FieldMode::Const(v),
            (true, None) => FieldMode::Positional,
            (false, _) => FieldMode::Keyed,
        };
        let fc = cfg.and_then(|c| c.fields.iter().find(|f| &f.name == n));
        let mode = match fc.map(|f| f.mode.as_str()) {
            None => auto_mode,
            Some("positional") if required => FieldMode::Positional,
            Some("const") => match (required, parts.single_value()) {
                (true, Some(v)) => FieldMode::Const(v),
                _ => {
                    return Err(CompileError::Ambiguous(format!(
                        "`{name}` field `{n}`: only a required field with a single possible value can be omitted (const)"
                    )))
                }
            },
            Some("keyed") => FieldMode::Keyed,
            Some("keyless") if !required => FieldMode::Keyless,
            Some(m @ ("positional" | "keyless")) => {
                return Err(CompileError::Ambiguous(format!(
                    "`{name}` field `{n}` is {}: it cannot be {m}",
                    if required { "required" } else { "optional (it may be absent, so its position cannot identify it)" }
                )))
            }
            Some(m) => {
                return Err(CompileError::Notation(format!(
                    "`{name}` field `{n}`: unknown mode `{m}` (positional, const, keyed or keyless)"
                )))
            }
        };
        let mode = if required && mode == FieldMode::Keyed {
            FieldMode::Positional
        } else {
            mode
        };
        let keyword = match fc.and_then(|f| f.keyword.clone()) {
            Some(k) if is_word(&k) => k,
            Some(k) => {
                return Err(CompileError::Notation(format!(
                    "`{name}` field `{n}`: keyword `{k}` must be a plain word (letters, digits, _ $ . -; not true/false/null)"
                )))
            }
            None => keyword,
        };
        let abbrev = fc.map(|f| f.abbrev.clone()).unwrap_or_default();
        if !abbrev.is_empty() {
            check_abbrev(&name, n, parts, &abbrev)?;
        }
        fields.push(FieldLayout {
            name: n.clone(),
            expr: c(*e),
            mode,
            keyword,
            abbrev,
            first: BTreeSet::new(),
            source: *e,
            open: false,
            quoted: false,
        });
    }
    // Positional fields come first.
    if let Some(first_opt) = fields
        .iter()
        .position(|f| matches!(f.mode, FieldMode::Keyed | FieldMode::Keyless))
    {
        if let Some(late) = fields[first_opt..]
            .iter()
            .find(|f| f.mode == FieldMode::Positional)
        {
            return Err(CompileError::Ambiguous(format!(
                "`{name}`: positional field `{}` must come before the optional fields",
                late.name
            )));
        }
    }
    let user_fixed = cfg.is_some();
    assign_keyless(shapes, &name, &mut fields, r.extras.is_some(), user_fixed)?;
    Ok(RecordLayout::new(name, fields, r.extras.map(|e| (e, c(e)))))
}

fn check_abbrev(
    name: &str,
    field: &str,
    parts: &Parts,
    abbrev: &BTreeMap<String, String>,
) -> Result<(), CompileError> {
    let Some(values) = parts.string.as_ref().and_then(|s| s.values.as_ref()) else {
        return Err(CompileError::Notation(format!(
            "`{name}` field `{field}`: abbreviations need an enum of strings"
        )));
    };
    let mut written = BTreeSet::new();
    for v in values {
        let w = abbrev.get(v).unwrap_or(v);
        if !written.insert(render_word(w)) {
            return Err(CompileError::Ambiguous(format!(
                "`{name}` field `{field}`: `{w}` would stand for two values"
            )));
        }
    }
    for (k, w) in abbrev {
        if !values.contains(k) {
            return Err(CompileError::Notation(format!(
                "`{name}` field `{field}`: `{k}` is not one of its values"
            )));
        }
        if !is_word(w) {
            return Err(CompileError::Notation(format!(
                "`{name}` field `{field}`: abbreviation `{w}` must be a plain word"
            )));
        }
    }
    Ok(())
}

/// Decide keyless fields (automatic) or check them (user edits), scanning backwards: an
/// optional field may be keyless only if its first tokens cannot start anything after it.
fn assign_keyless(
    shapes: &Shapes,
    name: &str,
    fields: &mut [FieldLayout],
    open: bool,
    user_fixed: bool,
) -> Result<(), CompileError> {
    let mut follow: BTreeSet<First> = BTreeSet::new();
    if open {
        follow.insert(First::Quoted);
    }
    let mut keywords = BTreeSet::new();
    // Value first-tokens of every optional field: a keyless field must not share any with a
    // sibling, or a reader (model or human) could not tell `[start] [end]` apart.
    let mut value_firsts: Vec<BTreeSet<First>> = fields
        .iter()
        .map(|f| match f.mode {
            FieldMode::Keyed | FieldMode::Keyless => first_set(shapes.parts(f.expr), &f.abbrev),
            _ => BTreeSet::new(),
        })
        .collect();
    let shared: Vec<bool> = {
        let mut counts: HashMap<&First, usize> = HashMap::default();
        for set in &value_firsts {
            for t in set {
                *counts.entry(t).or_insert(0) += 1;
            }
        }
        value_firsts
            .iter()
            .map(|set| set.iter().any(|t| counts.get(t).copied().unwrap_or(0) > 1))
            .collect()
    };
    for (idx, f) in fields.iter_mut().enumerate().rev() {
        let shared = shared[idx];
        if !matches!(f.mode, FieldMode::Keyed | FieldMode::Keyless) {
            continue;
        }
        let parts = shapes.parts(f.expr);
        let first = std::mem::take(&mut value_firsts[idx]);
        let clash = first.iter().find(|t| follow.contains(t)).cloned();
        let keyless_ok = clash.is_none() && parts.single_value().is_none();
        if f.mode == FieldMode::Keyless && !keyless_ok {
            return Err(CompileError::Ambiguous(format!(
                "`{name}` field `{}` cannot be keyless: {}",
                f.name,
                match clash {
                    Some(t) =>
                        format!("a value starting with {t:?} could also start what follows it"),
                    None =>
                        "it has a single value, so without a keyword it would be invisible".into(),
                }
            )));
        }
        if !user_fixed && f.mode == FieldMode::Keyed && keyless_ok && !shared && auto_keyless(parts)
        {
            f.mode = FieldMode::Keyless;
        }
        if f.mode == FieldMode::Keyless {
            follow.extend(first.iter().cloned());
            f.first = first;
        } else {
            let clashes = |k: &str, follow: &BTreeSet<First>, keywords: &BTreeSet<String>| {
                follow.contains(&First::Word(k.to_string())) || keywords.contains(k)
            };
            if clashes(&f.keyword, &follow, &keywords) {
                if user_fixed {
                    return Err(CompileError::Ambiguous(format!(
                        "`{name}` field `{}`: keyword `{}` could also start what follows it",
                        f.name, f.keyword
                    )));
                }
                let mut k = format!("{}_", f.keyword);
                while clashes(&k, &follow, &keywords) {
                    k.push('_');
                }
                f.keyword = k;
            }
            keywords.insert(f.keyword.clone());
            follow.insert(First::Word(f.keyword.clone()));
            f.first = BTreeSet::from([First::Word(f.keyword.clone())]);
        }
    }
    Ok(())
}

/// Which optional fields the automatic design writes without a key: enums, numbers and
/// free strings read naturally by value; booleans, arrays and objects keep their key.
/// Only words from a list of choices are keyless by default: `desc` says what it is, a
/// bare `5` or `"Region"` does not. A model that wants to write `limit 5` must be able to,
/// rather than guess that a number after `desc` is the limit. (A user may still make a
/// number or free string keyless in the notation file.)
fn auto_keyless(parts: &Parts) -> bool {
    !parts.any
        && !parts.bool_true
        && !parts.bool_false
        && parts.array.is_none()
        && parts.object.is_none()
        && parts.number.is_none()
        && parts.string.as_ref().is_some_and(|s| s.values.is_some())
}

/// The notation design as editable YAML.
pub fn to_config(n: &Notation) -> NotationConfig {
    let mut objects = BTreeMap::new();
    let mut add = |r: &RecordLayout, tag: Option<String>| {
        let fields = r
            .fields
            .iter()
            .map(|f| FieldConfig {
                name: f.name.clone(),
                mode: match f.mode {
                    FieldMode::Positional => "positional",
                    FieldMode::Const(_) => "const",
                    FieldMode::Keyed => "keyed",
                    FieldMode::Keyless => "keyless",
                }
                .into(),
                keyword: (f.mode == FieldMode::Keyed).then(|| f.keyword.clone()),
                abbrev: f.abbrev.clone(),
            })
            .collect();
        objects
            .entry(r.name.clone())
            .or_insert(ObjectConfig { tag, fields });
    };
    for layout in n.objects.values() {
        match layout {
            ObjLayout::Record(r) => add(r, None),
            ObjLayout::Tagged { variants, .. } => {
                for v in variants {
                    let tag = (v.tags.len() == 1).then(|| v.tags[0].1.clone());
                    add(&v.record, tag);
                }
            }
        }
    }
    NotationConfig {
        root: Some(n.root),
        objects,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{compile, CompileOptions};
    use serde_json::json;

    fn record_index_finds_every_field(n: usize) {
        // Names of equal length and shared prefixes, so the scan must compare bytes.
        let props: serde_json::Map<String, Value> = (0..n)
            .map(|i| (format!("f{i:02}"), json!({"type": "integer"})))
            .collect();
        let schema = json!({"type": "object", "properties": props, "required": ["f00"]});
        let spec = compile(&schema, &CompileOptions::default()).unwrap();
        let Some(ObjLayout::Record(r)) = spec.notation().object(spec.shapes().root) else {
            panic!("the root is a record");
        };
        let ix = r.lookup(spec.shapes());
        for (i, f) in r.fields.iter().enumerate() {
            assert_eq!(ix.position(&f.name), Some(i), "{n} fields: {}", f.name);
            assert_eq!(ix.name(i), f.name);
            assert_eq!(ix.keyword(&ix.slots[i]), f.keyword);
        }
        for missing in ["f", "f0", "f000", "g00", ""] {
            assert_eq!(ix.position(missing), None, "{n} fields: `{missing}`");
        }
        assert_eq!(ix.required, 1);
        assert!(ix.slots[0].required && !ix.slots[1].required);
        assert!(spec.shapes().kind(spec.shapes().root).object_only());
    }

    #[test]
    fn record_index_small_and_large() {
        record_index_finds_every_field(3);
        record_index_finds_every_field(SCAN_MAX + 4);
    }
}
