//! The notation's result: how the document, each object and each field is written.
//!
//! These types are designed from the shapes under the notation settings when a spec is
//! compiled or loaded, never saved (`spec.json` holds the settings,
//! [`crate::spec::SpecFile`]); the codec's lookup tables derived from them (expression ->
//! layout, per-record indexes, open fields) are [`crate::codec::Tables`]. Their serde
//! forms are what `spec.json` versions 1 and 2 saved, compared to convert such a file.

use super::first::First;
use super::open::open_layout;
use crate::shape::{ExprId, Shapes};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::collections::{BTreeMap, BTreeSet};

/// How the whole document is laid out.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub(crate) enum RootLayout {
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
pub(crate) enum FieldMode {
    /// Required; written by position, without a key.
    Positional,
    /// Required with a single possible value: not written.
    Const(Value),
    /// Optional; written as `keyword value`, or `keyword` alone for a single-valued field
    /// (a *flag*) unless [`FieldLayout::explicit`].
    Keyed,
    /// Optional; written as its value alone, recognised by its first token.
    Keyless,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct FieldLayout {
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
    /// leading slot of a line item, see `design.rs`, `mark_quoted`). Keyless
    /// fields are always quoted.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub quoted: bool,
    /// Keyed single-valued fields: written `keyword value` rather than as the keyword
    /// alone (the `explicit` style, or `mode: keyed` on such a field in the notation YAML).
    /// Easier for a model to write than a flag; older spec files (without it) keep flags.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub explicit: bool,
    /// Positional fields: written `keyword value`, in their place, rather than as the value
    /// alone (the `named` style, or `mode: named` in the notation YAML). A value announced
    /// by its name is what a small model fills most reliably (a call's keyword arguments),
    /// and a value of several bare words cannot spill into the next field.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub named: bool,
}

impl FieldLayout {
    /// Written as its keyword alone: a keyed field with a single possible value, not
    /// [`explicit`](Self::explicit).
    pub(crate) fn is_flag(&self, shapes: &Shapes) -> bool {
        self.mode == FieldMode::Keyed
            && !self.explicit
            && shapes.parts(self.expr).single_value().is_some()
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct RecordLayout {
    /// Name used by notation edits (the schema location(s) of the object form).
    pub name: String,
    pub fields: Vec<FieldLayout>,
    /// Shape of undeclared properties, `None` when closed.
    pub extras: Option<ExprId>,
    /// The undeclared properties' own schema expression (`extras` is the canonical one,
    /// shared with equal shapes), whose local assertions the encoder checks.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub extras_source: Option<ExprId>,
    /// The schema allows the undeclared properties explicitly (see
    /// `Record::extras_declared`): only then do the generation grammars offer them.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub extras_declared: bool,
    /// A union of closed object forms merged into this record: the fields each form
    /// declares, so that the grammars admit one form's fields at a time (see
    /// `design::record_forms`). Empty: any combination of the fields.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub forms: Vec<Form>,
}

/// One object form of a merged union (see [`RecordLayout::forms`]): indices into the
/// record's fields, in field order. Its first field is required in this form and declared
/// by no other, and written with its keyword, so the first keyword selects the form.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct Form {
    /// The keyed and keyless fields this form declares.
    pub fields: Vec<usize>,
    /// Those of them it requires.
    pub required: Vec<usize>,
}

impl RecordLayout {
    /// `extras`: the undeclared properties' own expression and its canonical one.
    pub(crate) fn new(
        name: String,
        fields: Vec<FieldLayout>,
        extras: Option<(ExprId, ExprId)>,
    ) -> Self {
        RecordLayout {
            name,
            fields,
            extras: extras.map(|(_, c)| c),
            extras_source: extras.map(|(e, _)| e),
            extras_declared: false,
            forms: Vec::new(),
        }
    }

    /// Undeclared keys may be written bare (when they are words) only if no optional
    /// field is recognised by a word: a pure map, or a record of required fields plus a map.
    pub(crate) fn bare_keys(&self) -> bool {
        self.extras.is_some()
            && self
                .fields
                .iter()
                .all(|f| !matches!(f.mode, FieldMode::Keyed | FieldMode::Keyless))
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct TaggedVariant {
    /// Tag values of this variant (as in the JSON) with what is written for each.
    pub tags: Vec<(String, String)>,
    pub record: RecordLayout,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) enum ObjLayout {
    Record(RecordLayout),
    /// A union discriminated by a required string property (`key`).
    Tagged {
        key: String,
        variants: Vec<TaggedVariant>,
    },
}

impl ObjLayout {
    /// The records of this layout: the record, or each variant's.
    pub(super) fn records(&self) -> Vec<&RecordLayout> {
        match self {
            ObjLayout::Record(r) => vec![r],
            ObjLayout::Tagged { variants, .. } => variants.iter().map(|v| &v.record).collect(),
        }
    }

    /// Record `variant` of this layout: a tagged union's variant, or the plain record
    /// (variant 0).
    pub(crate) fn record(&self, variant: usize) -> Option<&RecordLayout> {
        match self {
            ObjLayout::Record(r) => (variant == 0).then_some(r),
            ObjLayout::Tagged { variants, .. } => variants.get(variant).map(|v| &v.record),
        }
    }

    /// How many records this layout has: 1, or a tagged union's variants.
    pub(crate) fn record_count(&self) -> usize {
        match self {
            ObjLayout::Record(_) => 1,
            ObjLayout::Tagged { variants, .. } => variants.len(),
        }
    }

    /// Record `variant` of this layout (a plain record ignores `variant`).
    pub(super) fn record_mut(&mut self, variant: usize) -> Option<&mut RecordLayout> {
        match self {
            ObjLayout::Record(r) => Some(r),
            ObjLayout::Tagged { variants, .. } => variants.get_mut(variant).map(|v| &mut v.record),
        }
    }
}

/// The whole notation: a layout per object shape, the root layout, and which expressions
/// share one rule.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub(crate) struct Notation {
    pub root: RootLayout,
    /// Canonical representative of each expression (equal parts => same rule).
    pub canon: Vec<ExprId>,
    /// Object layouts of canonical expressions with an object part, by expression.
    pub objects: BTreeMap<ExprId, ObjLayout>,
}

impl Notation {
    pub(crate) fn new(
        root: RootLayout,
        canon: Vec<ExprId>,
        objects: BTreeMap<ExprId, ObjLayout>,
    ) -> Self {
        Notation {
            root,
            canon,
            objects,
        }
    }

    /// Whether a block line writes this field's value open: the line end closes it, so
    /// any object that can be told from `()` qualifies (see [`open_layout`]). Computed on
    /// each call (grammars ask once per root field); the codec reads
    /// [`Tables::opens_on_line`](crate::codec::Tables::opens_on_line).
    pub(crate) fn opens_on_line(&self, shapes: &Shapes, expr: ExprId) -> bool {
        open_layout(shapes, &self.objects, expr).is_some()
    }

    /// The object layout of `id` (that of its canonical expression), if it has one. A
    /// search of [`Self::objects`]; the codec reads
    /// [`Tables::object`](crate::codec::Tables::object), one table lookup.
    pub(crate) fn object(&self, id: ExprId) -> Option<&ObjLayout> {
        self.objects.get(self.canon.get(id as usize)?)
    }
}

/// Array-only fields with no tuple part become sections (`kw:` + one item per line).
pub(crate) fn is_section(shapes: &Shapes, expr: ExprId) -> bool {
    let p = shapes.parts(expr);
    p.array_only()
        && p.array
            .as_ref()
            .is_some_and(|a| a.prefix.is_empty() && a.items.is_some())
}
