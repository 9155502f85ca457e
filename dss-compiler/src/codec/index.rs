//! The encoder's per-record lookups ([`RecordIndex`]), packed for cache locality.

use crate::notation::{is_section, FieldMode, First, RecordLayout};
use crate::shape::{ExprId, Shapes};
use rustc_hash::FxHashMap as HashMap;
use serde_json::Value;
use std::collections::BTreeMap;

/// Lookups the encoder needs per object, built once per record on first use (kept by
/// [`Tables::index`](super::Tables::index)): merged records (Vega-Lite) declare a hundred
/// fields where an instance object has three.
///
/// Packed so that encoding one object touches a few contiguous cache lines: with one
/// document per schema (MaskBench) nothing of a record is in cache, and a
/// [`FieldLayout`](crate::notation::FieldLayout) (~180 bytes, its strings elsewhere on the heap) costs
/// a miss per field read.
#[derive(Debug, Default)]
pub(crate) struct RecordIndex {
    /// Field names, then keywords, then names as JSON strings, back to back; sliced by
    /// [`FieldSlot`].
    text: String,
    /// What the encoder reads of each field.
    pub slots: Vec<FieldSlot>,
    /// Each field's [`name_key`], by field: a scan for a property name reads these (four
    /// to a cache line) and reads a name only where a long name's key matches.
    keys: Vec<u128>,
    /// Records with many fields are searched by hash instead of by a scan of the keys.
    by_name: Option<HashMap<String, usize>>,
    /// How many fields are positional or const (must be present).
    pub required: usize,
    /// The single possible value of each field, if it has one (a const field's value);
    /// read only where [`FieldSlot::single`] says there is one.
    pub single: Vec<Option<Value>>,
    /// See [`RecordLayout::bare_keys`].
    pub bare_keys: bool,
    /// The decoder's choice of an optional field by its first token: the fields (in order)
    /// a token class selects, by [`class_slot`].
    by_class: [Vec<u32>; CLASSES],
    /// The distinct bare words that select fields (keywords, enum values of keyless
    /// fields), each as its [`name_key`]: the decoder scans these, four to a cache line.
    word_keys: Vec<u128>,
    /// By word (as `word_keys`): its text in `text`, and its fields' range in
    /// `word_fields`.
    word_spans: Vec<((u32, u32), (u32, u32))>,
    /// The fields (in order) each word selects, back to back.
    word_fields: Vec<u32>,
    /// Above [`SCAN_MAX`] words: each word's place in `word_keys`, by hash.
    word_map: Option<HashMap<Box<str>, u32>>,
    /// The const fields, in order (they take their value without being written).
    pub consts: Vec<u32>,
    /// Field `i`'s order among the block lines: plain lines first, then sections.
    pub block_order: Vec<u32>,
}

/// The token classes other than words ([`First`] less [`First::Word`]).
const CLASSES: usize = 8;

/// The slot of a token class in [`RecordIndex`]'s class table (`None` for a word).
fn class_slot(f: &First) -> Option<usize> {
    Some(match f {
        First::Null => 0,
        First::True => 1,
        First::False => 2,
        First::Number => 3,
        First::Quoted => 4,
        First::LParen => 5,
        First::LBracket => 6,
        First::LBrace => 7,
        First::Word(_) => return None,
    })
}

/// The part of a [`FieldLayout`](crate::notation::FieldLayout) the encoder reads, packed.
#[derive(Debug, Clone, Copy)]
pub(crate) struct FieldSlot {
    pub expr: ExprId,
    /// The field's own schema expression (see
    /// [`FieldLayout::source`](crate::notation::FieldLayout::source)), for its local assertions.
    pub source: ExprId,
    name: (u32, u32),
    keyword: (u32, u32),
    /// The name as a JSON string, quotes included (as `serde_json` writes it).
    json_name: (u32, u32),
    pub mode: SlotMode,
    /// Positional or const: must be present.
    pub required: bool,
    /// The field has a single possible value (see [`RecordIndex::single`]).
    pub single: bool,
    /// Written as a JSON string (quoted leading slot, or keyless) when a free string.
    pub quoted: bool,
    /// A positional field written `keyword value` (see `FieldLayout::named`).
    pub named: bool,
    pub open: bool,
    /// Written as its keyword alone (see `FieldLayout::is_flag`): its value is
    /// [`RecordIndex::single`].
    pub flag: bool,
    pub abbreviated: bool,
    /// The field's shape admits free strings (no enum).
    pub free_string: bool,
    /// A block-level field written as a section (see [`is_section`]).
    pub section: bool,
}

/// [`FieldMode`] without its value.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum SlotMode {
    Positional,
    Const,
    Keyed,
    Keyless,
}

/// Above this many fields a record is searched by hash.
const SCAN_MAX: usize = 32;

/// A name's length and first bytes in 16 bytes: names of at most [`KEY_EXACT`] bytes
/// (most property names) are equal exactly when their keys are; longer ones with equal
/// keys are compared in full.
fn name_key(name: &str) -> u128 {
    let b = name.as_bytes();
    let mut k = [0u8; 16];
    let n = b.len().min(KEY_EXACT);
    k[..n].copy_from_slice(&b[..n]);
    k[KEY_EXACT] = u8::try_from(b.len()).unwrap_or(u8::MAX);
    u128::from_le_bytes(k)
}

/// The longest name its [`name_key`] holds whole.
const KEY_EXACT: usize = 15;

impl RecordIndex {
    /// The index of record `r`.
    pub(super) fn build(r: &RecordLayout, shapes: &Shapes) -> RecordIndex {
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
        let json_names: Vec<(u32, u32)> = r
            .fields
            .iter()
            .map(|f| {
                let mut quoted = String::with_capacity(f.name.len() + 2);
                super::out::write_escaped(&f.name, &mut quoted);
                push(&mut ix.text, &quoted)
            })
            .collect();
        let mut by_word: HashMap<&str, Vec<u32>> = HashMap::default();
        for (i, f) in r.fields.iter().enumerate() {
            let parts = shapes.parts(f.expr);
            let single = match &f.mode {
                FieldMode::Const(c) => Some(c.clone()),
                FieldMode::Keyed if f.explicit => None,
                _ => parts.single_value(),
            };
            // Also a keyed field every form requires (a tool call's name, see
            // `design::design_named_call`).
            let required = matches!(f.mode, FieldMode::Positional | FieldMode::Const(_))
                || (!r.forms.is_empty() && r.forms.iter().all(|form| form.required.contains(&i)));
            ix.required += usize::from(required);
            ix.slots.push(FieldSlot {
                expr: f.expr,
                source: f.source,
                name: names[i],
                keyword: keywords[i],
                json_name: json_names[i],
                mode: match f.mode {
                    FieldMode::Positional => SlotMode::Positional,
                    FieldMode::Const(_) => SlotMode::Const,
                    FieldMode::Keyed => SlotMode::Keyed,
                    FieldMode::Keyless => SlotMode::Keyless,
                },
                required,
                single: single.is_some(),
                quoted: f.quoted || f.mode == FieldMode::Keyless,
                named: f.named && f.mode == FieldMode::Positional,
                open: f.open,
                flag: f.mode == FieldMode::Keyed && !f.explicit && single.is_some(),
                abbreviated: !f.abbrev.is_empty(),
                free_string: parts.string.as_ref().is_some_and(|sp| sp.values.is_none()),
                section: is_section(shapes, f.expr),
            });
            ix.single.push(single);
            if matches!(f.mode, FieldMode::Const(_)) {
                ix.consts.push(i as u32);
            }
            for first in &f.first {
                match (class_slot(first), first) {
                    (Some(c), _) => ix.by_class[c].push(i as u32),
                    (None, First::Word(w)) => by_word.entry(w.as_str()).or_default().push(i as u32),
                    (None, _) => {}
                }
            }
        }
        ix.keys = r.fields.iter().map(|f| name_key(&f.name)).collect();
        let mut words: Vec<(&str, Vec<u32>)> = by_word.into_iter().collect();
        words.sort_unstable();
        for (w, fields) in &words {
            let start = ix.word_fields.len() as u32;
            ix.word_fields.extend(fields);
            let span = push(&mut ix.text, w);
            ix.word_keys.push(name_key(w));
            ix.word_spans
                .push((span, (start, ix.word_fields.len() as u32)));
        }
        if words.len() > SCAN_MAX {
            ix.word_map = Some(
                words
                    .iter()
                    .enumerate()
                    .map(|(at, (w, _))| (Box::from(*w), at as u32))
                    .collect(),
            );
        }
        let (plain, sections): (Vec<u32>, Vec<u32>) =
            (0..r.fields.len() as u32).partition(|&i| !ix.slots[i as usize].section);
        ix.block_order = plain.into_iter().chain(sections).collect();
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
    #[cfg(test)]
    pub(crate) fn position(&self, name: &str) -> Option<usize> {
        self.position_keyed(name, name_key(name))
    }

    /// The field named `name`, given its [`name_key`].
    fn position_keyed(&self, name: &str, key: u128) -> Option<usize> {
        if let Some(map) = &self.by_name {
            return map.get(name).copied();
        }
        self.keys
            .iter()
            .enumerate()
            .find(|&(i, &k)| k == key && self.is_named(i, name))
            .map(|(i, _)| i)
    }

    /// Whether field `i`, whose key is `name`'s, is named `name`.
    fn is_named(&self, i: usize, name: &str) -> bool {
        name.len() <= KEY_EXACT || self.name(i) == name
    }

    /// The field named `name`, trying field `hint` first: an object's properties mostly
    /// come in the record's field order, so the field after the last one found is tried
    /// before any search.
    pub(crate) fn position_after(&self, name: &str, hint: usize) -> Option<usize> {
        let key = name_key(name);
        match self.keys.get(hint) {
            Some(&k) if k == key && self.is_named(hint, name) => Some(hint),
            _ => self.position_keyed(name, key),
        }
    }

    /// The fields a token selects, in order: words by their text, other tokens by class.
    pub(crate) fn selected_by(&self, word: Option<&str>, class: Option<&First>) -> &[u32] {
        let found = match (word, class) {
            (Some(w), _) => return self.word_selects(w),
            (None, Some(c)) => class_slot(c).map(|c| &self.by_class[c]),
            (None, None) => None,
        };
        found.map_or(&[], Vec::as_slice)
    }

    /// The fields (in order) bare word `w` selects.
    fn word_selects(&self, w: &str) -> &[u32] {
        let at = match &self.word_map {
            Some(map) => map.get(w).map(|&at| at as usize),
            None => {
                let key = name_key(w);
                self.word_keys.iter().enumerate().position(|(at, &k)| {
                    k == key && (w.len() <= KEY_EXACT || self.slice(self.word_spans[at].0) == w)
                })
            }
        };
        match at.and_then(|at| self.word_spans.get(at)) {
            Some(&(_, (start, end))) => &self.word_fields[start as usize..end as usize],
            None => &[],
        }
    }

    fn slice(&self, (start, end): (u32, u32)) -> &str {
        &self.text[start as usize..end as usize]
    }

    /// Field `i`'s name.
    pub(crate) fn name(&self, i: usize) -> &str {
        self.slice(self.slots[i].name)
    }

    /// A field's keyword.
    pub(crate) fn keyword(&self, slot: &FieldSlot) -> &str {
        self.slice(slot.keyword)
    }

    /// Field `i`'s name as a JSON string, quotes included.
    pub(crate) fn json_name(&self, i: usize) -> &str {
        self.slice(self.slots[i].json_name)
    }

    /// Field `i`'s abbreviations. They are rare: only then is the (cold) field layout of
    /// `r`, this index's record, read.
    pub(crate) fn abbrev<'r>(
        &self,
        r: &'r RecordLayout,
        i: usize,
    ) -> Option<&'r BTreeMap<String, String>> {
        self.slots[i].abbreviated.then(|| &r.fields[i].abbrev)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::codec::Tables;
    use crate::{compile, CompileOptions};
    use serde_json::json;

    fn record_index_finds_every_field(n: usize) {
        // Names of equal length and shared prefixes, so the scan must compare bytes.
        let props: serde_json::Map<String, Value> = (0..n)
            .map(|i| (format!("f{i:02}"), json!({"type": "integer"})))
            .collect();
        let schema = json!({"type": "object", "properties": props, "required": ["f00"]});
        let spec = compile(&schema, &CompileOptions::default()).unwrap();
        let tables = Tables::build(spec.shapes(), spec.notation());
        let rec = tables
            .object(spec.shapes().root)
            .and_then(|o| o.plain())
            .expect("the root is a record");
        let (r, ix) = (rec.layout, tables.index(rec, spec.shapes()));
        for (i, f) in r.fields.iter().enumerate() {
            assert_eq!(ix.position(&f.name), Some(i), "{n} fields: {}", f.name);
            for hint in [0, i, i + 1, n + 3] {
                assert_eq!(ix.position_after(&f.name, hint), Some(i), "{n}: {hint}");
            }
            for first in &f.first {
                if let First::Word(w) = first {
                    assert!(ix.selected_by(Some(w), None).contains(&(i as u32)), "`{w}`");
                }
            }
            assert_eq!(ix.name(i), f.name);
            assert_eq!(ix.keyword(&ix.slots[i]), f.keyword);
            assert_eq!(ix.json_name(i), serde_json::to_string(&f.name).unwrap());
        }
        let words = r.fields.iter().flat_map(|f| &f.first);
        assert!(words.filter(|w| matches!(w, First::Word(_))).count() > n / 2);
        for missing in ["f", "f0", "f000", "g00", "", "f00\0"] {
            assert!(
                ix.selected_by(Some(missing), None).is_empty(),
                "`{missing}`"
            );
            assert_eq!(ix.position(missing), None, "{n} fields: `{missing}`");
            assert_eq!(
                ix.position_after(missing, 1),
                None,
                "{n} fields: `{missing}`"
            );
        }
        assert_eq!(ix.required, 1);
        assert!(ix.slots[0].required && !ix.slots[1].required);
        assert!(tables.kind(spec.shapes().root).object_only());
    }

    #[test]
    fn record_index_small_and_large() {
        record_index_finds_every_field(3);
        record_index_finds_every_field(SCAN_MAX + 4);
    }

    /// Names up to [`KEY_EXACT`] bytes are told apart by their keys alone; longer ones
    /// that share a key are compared in full.
    #[test]
    fn name_keys_tell_short_names_apart() {
        let full = "a".repeat(KEY_EXACT);
        let short = [
            "",
            "a",
            "a\0",
            "ab",
            "abcdefg",
            "abcdef",
            "é",
            &full,
            &full[1..],
        ];
        for x in short {
            for y in short {
                assert_eq!(name_key(x) == name_key(y), x == y, "`{x}` `{y}`");
            }
        }
        let (long1, long2) = (format!("{full}b"), format!("{full}c"));
        assert_eq!(name_key(&long1), name_key(&long2));
        assert_ne!(name_key(&long1), name_key(&format!("{long1}d")));
        let props: serde_json::Map<String, Value> = [&long1, &long2, "x"]
            .iter()
            .map(|n| (n.to_string(), json!({"type": "integer"})))
            .collect();
        let schema = json!({"type": "object", "properties": props});
        let spec = compile(&schema, &CompileOptions::default()).unwrap();
        let tables = Tables::build(spec.shapes(), spec.notation());
        let rec = tables
            .object(spec.shapes().root)
            .and_then(|o| o.plain())
            .unwrap();
        let (r, ix) = (rec.layout, tables.index(rec, spec.shapes()));
        for (i, f) in r.fields.iter().enumerate() {
            assert_eq!(ix.position(&f.name), Some(i));
            assert_eq!(ix.position_after(&f.name, (i + 1) % 3), Some(i));
        }
        assert_eq!(ix.position(&format!("{full}d")), None);
        assert_eq!(ix.position(&full), None);
    }
}
