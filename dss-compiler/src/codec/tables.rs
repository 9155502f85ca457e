//! The codec's lookup tables ([`Tables`]): what the encoder and decoder ask of the shapes
//! and the notation for every value, derived from them when a spec is compiled or loaded.
//!
//! The saved form is the schema and the notation settings (`spec.json`, see
//! [`crate::spec::SpecFile`]); the shapes, the notation and these tables are the compiled
//! form, never saved, as llguidance keeps its saved `TopLevelGrammar` apart from the
//! `CGrammar` it compiles it to.

use super::index::RecordIndex;
use super::regular::Regexes;
use crate::notation::{Notation, ObjLayout, RecordLayout};
use crate::shape::{ExprId, Kind, Shapes};
use rustc_hash::{FxHashMap as HashMap, FxHashSet as HashSet};
use std::sync::OnceLock;

/// Lookups by expression, packed for the codec's hot path: with one document per schema
/// (MaskBench) nothing of a spec is in cache, and misses, not instructions, are its cost.
#[derive(Debug)]
pub(crate) struct Tables {
    /// The JSON types each expression admits: one small table instead of one `Parts` (a
    /// few cache lines) per value.
    kinds: Vec<Kind>,
    /// Per expression: 1 + the position in `layouts` of its object layout (that of its
    /// canonical expression), or 0 for none.
    object_slot: Vec<u32>,
    /// The object layouts side by side (copies of the notation's), so a cold schema costs
    /// few cache lines, each after the number of its first record (records are numbered
    /// layout by layout, a tagged union's variants in order).
    layouts: Vec<(u32, ObjLayout)>,
    /// Per record: its encoder index, built on first use: merged records (Vega-Lite)
    /// declare a hundred fields where an instance object has three, and most records of a
    /// large schema are never met.
    record_index: Vec<OnceLock<RecordIndex>>,
    /// Expressions written open on a block line (see [`Notation::opens_on_line`]).
    line_open: HashSet<ExprId>,
    /// The regular expressions of the shapes' regular forms, compiled on first use.
    pub(crate) regexes: Regexes,
}

/// An object layout as the [`Tables`] hold it: the layout and the number of its first
/// record, so each of its records can have its [`RecordIndex`].
#[derive(Debug, Clone, Copy)]
pub(crate) struct Obj<'t> {
    /// The layout.
    pub layout: &'t ObjLayout,
    first: u32,
}

/// One record of an object layout, with its number in the [`Tables`].
#[derive(Debug, Clone, Copy)]
pub(crate) struct Rec<'t> {
    /// The record's layout.
    pub layout: &'t RecordLayout,
    id: u32,
}

impl<'t> Obj<'t> {
    /// The record of a plain record layout (`None` for a tagged union).
    pub(crate) fn plain(self) -> Option<Rec<'t>> {
        match self.layout {
            ObjLayout::Record(r) => Some(Rec {
                layout: r,
                id: self.first,
            }),
            ObjLayout::Tagged { .. } => None,
        }
    }

    /// Record `variant` of the layout: a tagged union's variant, or the plain record
    /// (variant 0).
    pub(crate) fn record(self, variant: usize) -> Option<Rec<'t>> {
        Some(Rec {
            layout: self.layout.record(variant)?,
            id: self.first + variant as u32,
        })
    }

    /// A tagged union's variant whose tag is `tag` (as in the JSON), with what is written
    /// for it.
    pub(crate) fn variant(self, tag: &str) -> Option<(Rec<'t>, &'t str)> {
        let ObjLayout::Tagged { variants, .. } = self.layout else {
            return None;
        };
        variants.iter().enumerate().find_map(|(i, v)| {
            let (_, written) = v.tags.iter().find(|(value, _)| value == tag)?;
            let rec = Rec {
                layout: &v.record,
                id: self.first + i as u32,
            };
            Some((rec, written.as_str()))
        })
    }
}

impl Tables {
    /// Derive the tables of `shapes` and their `notation`.
    pub(crate) fn build(shapes: &Shapes, notation: &Notation) -> Tables {
        let kinds = shapes
            .parts
            .iter()
            .enumerate()
            .map(|(i, p)| Kind::of(p, shapes.local_assertion(i as ExprId).is_some()))
            .collect();
        let mut layouts = Vec::with_capacity(notation.objects.len());
        let mut records = 0u32;
        let mut slot_of: HashMap<ExprId, u32> = HashMap::default();
        for (&k, layout) in &notation.objects {
            layouts.push((records, layout.clone()));
            records += layout.record_count() as u32;
            slot_of.insert(k, layouts.len() as u32);
        }
        let object_slot = notation
            .canon
            .iter()
            .map(|c| slot_of.get(c).copied().unwrap_or(0))
            .collect();
        let line_open = notation
            .objects
            .keys()
            .copied()
            .filter(|&e| notation.opens_on_line(shapes, e))
            .collect();
        Tables {
            kinds,
            object_slot,
            layouts,
            record_index: (0..records).map(|_| OnceLock::new()).collect(),
            line_open,
            regexes: Regexes::default(),
        }
    }

    /// The JSON types `id` admits (none for an unknown expression).
    pub(crate) fn kind(&self, id: ExprId) -> Kind {
        self.kinds.get(id as usize).copied().unwrap_or_default()
    }

    /// The object layout of `id` (that of its canonical expression), if it has one.
    pub(crate) fn object(&self, id: ExprId) -> Option<Obj<'_>> {
        let slot = (*self.object_slot.get(id as usize)? as usize).checked_sub(1)?;
        let (first, layout) = self.layouts.get(slot)?;
        Some(Obj {
            layout,
            first: *first,
        })
    }

    /// The encoder's index of a record, built on first use.
    pub(crate) fn index(&self, rec: Rec<'_>, shapes: &Shapes) -> &RecordIndex {
        // `rec` comes from these tables, so its number is in range.
        self.record_index[rec.id as usize].get_or_init(|| RecordIndex::build(rec.layout, shapes))
    }

    /// Whether a block line writes a value of `expr` open (see
    /// [`Notation::opens_on_line`]).
    pub(crate) fn opens_on_line(&self, expr: ExprId) -> bool {
        self.line_open.contains(&expr)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{compile, CompileOptions};
    use serde_json::json;

    /// The tables say what the notation says, for every expression and record.
    #[test]
    fn tables_agree_with_the_notation() {
        let schema = json!({"type": "object", "properties": {
            "shape": {"oneOf": [
                {"type": "object", "properties": {"kind": {"const": "circle"},
                    "r": {"type": "number"}}, "required": ["kind", "r"]},
                {"type": "object", "properties": {"kind": {"const": "square"},
                    "side": {"type": "number"}}, "required": ["kind", "side"]}
            ]},
            "opts": {"type": "object", "properties": {"a": {"type": "integer"}}},
            "items": {"type": "array", "items": {"type": "object",
                "properties": {"n": {"type": "string"}}, "required": ["n"]}}
        }, "required": ["items"]});
        let spec = compile(&schema, &CompileOptions::default()).unwrap();
        let (shapes, notation) = (spec.shapes(), spec.notation());
        let t = Tables::build(shapes, notation);
        assert!(t.object(shapes.root).and_then(Obj::plain).is_some());
        let mut tagged = 0;
        for id in 0..shapes.exprs.len() as ExprId {
            assert_eq!(t.object(id).map(|o| o.layout), notation.object(id), "{id}");
            assert_eq!(
                t.kind(id),
                Kind::of(shapes.parts(id), shapes.local_assertion(id).is_some())
            );
            assert_eq!(
                t.opens_on_line(id),
                notation.opens_on_line(shapes, id),
                "{id}"
            );
            let (Some(layout), Some(obj)) = (notation.object(id), t.object(id)) else {
                continue;
            };
            if let ObjLayout::Tagged { variants, .. } = layout {
                tagged += 1;
                for (v, var) in variants.iter().enumerate() {
                    let (rec, written) = obj.variant(&var.tags[0].0).unwrap();
                    assert_eq!((rec.id, written), (obj.first + v as u32, &*var.tags[0].1));
                }
                assert!(obj.plain().is_none() && obj.variant("no such tag").is_none());
            }
            for v in 0..layout.record_count() {
                let rec = obj.record(v).unwrap();
                assert_eq!(Some(rec.layout), layout.record(v));
                let ix = t.index(rec, shapes);
                for (i, f) in rec.layout.fields.iter().enumerate() {
                    assert_eq!(ix.position(&f.name), Some(i));
                }
            }
            assert!(obj.record(layout.record_count()).is_none());
        }
        // A record index is the record's own, also for each variant of a tagged union.
        assert!(tagged > 0, "the shape union is a tagged layout");
        assert_eq!(t.kind(u32::MAX), Kind::default());
        assert!(t.object(u32::MAX).is_none());
    }
}
