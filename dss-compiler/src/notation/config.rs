//! The user-editable notation (`dss init` prints it as YAML): the edit types, the edits
//! read back from a designed [`Notation`] ([`to_config`]), and the checks that an edit
//! fits the schema.

use super::layout::{FieldMode, Notation, ObjLayout, RecordLayout, RootLayout};
use super::words::{is_word, render_word};
use crate::error::CompileError;
use crate::shape::{ExprId, Parts, Record, Shapes};
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, BTreeSet};

/// User edits of the notation, as printed by `dss init` (YAML). An unknown key (a
/// misspelling) is an error, never an edit silently ignored.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct NotationConfig {
    /// `block`, `line`, `lines` or `value`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) root: Option<RootLayout>,
    /// How fields the edits do not name are designed (`compact` or `explicit`).
    #[serde(default, skip_serializing_if = "NotationStyle::is_compact")]
    pub(crate) style: NotationStyle,
    /// Object forms by name (their schema location); fields in the order they are written.
    #[serde(default)]
    pub(crate) objects: BTreeMap<String, ObjectConfig>,
    /// Name the only call: a record `{"name": {…}}` (one required property, closed) writes
    /// its property's name as a keyword, as it would if it chose among several such records
    /// (see `design::design_object`). `compile` sets it when it read tool definitions; an
    /// edit sets it for any schema (`name_calls: true`): an order list of one kind of order
    /// reads `drink 1 size large …` as a venue with several kinds does.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub(crate) name_calls: bool,
}

/// How the automatic design writes optional fields.
#[derive(Debug, Clone, Copy, Default, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
#[non_exhaustive]
pub enum NotationStyle {
    /// The fewest tokens: an optional enum field whose values identify it is written as its
    /// value alone (keyless), a single-valued optional field as its keyword alone (a flag).
    #[default]
    Compact,
    /// Every optional field is written `keyword value`: a few tokens more, but what a
    /// small model writes most reliably when it generates calls (each value announced by
    /// its field's name, as in a function call's keyword arguments).
    Explicit,
    /// Every field is written `keyword value`, required ones too (in their fixed place):
    /// the most tokens of the three, but each value is announced by its field's name, so a
    /// small model filling a tool's parameters from a request puts a value where it
    /// belongs and a value of several words cannot spill into the next field.
    Named,
}

impl NotationStyle {
    fn is_compact(&self) -> bool {
        *self == NotationStyle::Compact
    }

    /// The style named `s` (`compact`, `explicit`, `named`).
    pub fn from_name(s: &str) -> Option<Self> {
        match s {
            "compact" => Some(Self::Compact),
            "explicit" => Some(Self::Explicit),
            "named" => Some(Self::Named),
            _ => None,
        }
    }
}

impl NotationConfig {
    /// No edits, the automatic design in `style`.
    pub fn with_style(style: NotationStyle) -> Self {
        NotationConfig {
            style,
            ..Default::default()
        }
    }

    /// Sets the style of the fields the edits do not name.
    pub fn set_style(&mut self, style: NotationStyle) {
        self.style = style;
    }

    /// The style of the fields the edits do not name.
    pub fn style(&self) -> NotationStyle {
        self.style
    }
}

#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub(crate) struct ObjectConfig {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tag: Option<String>,
    #[serde(default)]
    pub fields: Vec<FieldConfig>,
}

#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub(crate) struct FieldConfig {
    pub name: String,
    /// `positional`, `named` (a required field written `keyword value` in its place),
    /// `const`, `keyed`, `flag` (a single-valued optional field written as its keyword
    /// alone) or `keyless`.
    pub mode: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub keyword: Option<String>,
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub abbrev: BTreeMap<String, String>,
}

impl NotationConfig {
    /// Every object the edits name must exist in the schema (`used`: the names the design
    /// met).
    pub(super) fn check_used(&self, used: &BTreeSet<String>) -> Result<(), CompileError> {
        for name in self.objects.keys() {
            if !used.contains(name) {
                return Err(CompileError::Notation(format!(
                    "object `{name}` in the notation does not exist in this schema (run `dss init` to see the names)"
                )));
            }
        }
        Ok(())
    }
}

/// The root layout an edit asks for, if the schema allows it: `auto` is the automatic one,
/// `object_only` whether the root is always an object, `record` whether its layout is a
/// record (not a tagged union).
pub(super) fn check_root(
    asked: RootLayout,
    auto: RootLayout,
    object_only: bool,
    record: bool,
) -> Result<RootLayout, CompileError> {
    match asked {
        RootLayout::Value => Ok(RootLayout::Value),
        r @ (RootLayout::Block | RootLayout::Line) => {
            if !object_only {
                return Err(CompileError::Notation(
                    format!("root layout `{r:?}` needs a schema whose root is always an object")
                        .to_lowercase(),
                ));
            }
            if r == RootLayout::Block && !record {
                return Err(CompileError::Notation(
                    "root layout `block` needs a root object that is not a tagged union".into(),
                ));
            }
            Ok(r)
        }
        RootLayout::Lines => {
            if auto != RootLayout::Lines {
                return Err(CompileError::Notation(
                    "root layout `lines` needs a schema whose root is always an array".into(),
                ));
            }
            Ok(RootLayout::Lines)
        }
    }
}

impl ObjectConfig {
    /// Put the fields of record `r` (named `name`) in the order the edit lists them, the
    /// unlisted ones after, keeping their order; every listed field must exist.
    pub(super) fn order(
        &self,
        name: &str,
        r: &Record,
        order: &mut [&(String, ExprId)],
    ) -> Result<(), CompileError> {
        for f in &self.fields {
            if r.prop(&f.name).is_none() {
                return Err(CompileError::Notation(format!(
                    "object `{name}` has no field `{}`",
                    f.name
                )));
            }
        }
        let pos = |n: &str| {
            self.fields
                .iter()
                .position(|f| f.name == n)
                .unwrap_or(usize::MAX)
        };
        order.sort_by_key(|(n, _)| pos(n));
        Ok(())
    }

    /// The edit of field `name`, if any.
    pub(super) fn field(&self, name: &str) -> Option<&FieldConfig> {
        self.fields.iter().find(|f| f.name == name)
    }
}

impl FieldConfig {
    /// The mode this edit asks for, if the field allows it (of record `record`; `parts`:
    /// the field's shape).
    pub(super) fn checked_mode(
        &self,
        record: &str,
        required: bool,
        parts: &Parts,
    ) -> Result<FieldMode, CompileError> {
        let n = &self.name;
        Ok(match self.mode.as_str() {
            "positional" | "named" if required => FieldMode::Positional,
            "const" => match (required, parts.single_value()) {
                (true, Some(v)) => FieldMode::Const(v),
                _ => {
                    return Err(CompileError::Ambiguous(format!(
                        "`{record}` field `{n}`: only a required field with a single possible value can be omitted (const)"
                    )))
                }
            },
            "keyed" => FieldMode::Keyed,
            "flag" if !required && parts.single_value().is_some() => FieldMode::Keyed,
            "flag" => {
                return Err(CompileError::Ambiguous(format!(
                    "`{record}` field `{n}`: only an optional field with a single possible value can be a flag"
                )))
            }
            "keyless" if !required => FieldMode::Keyless,
            m @ ("positional" | "named" | "keyless") => {
                return Err(CompileError::Ambiguous(format!(
                    "`{record}` field `{n}` is {}: it cannot be {m}",
                    if required { "required" } else { "optional (it may be absent, so its position cannot identify it)" }
                )))
            }
            m => {
                return Err(CompileError::Notation(format!(
                    "`{record}` field `{n}`: unknown mode `{m}` (positional, named, const, keyed, flag or keyless)"
                )))
            }
        })
    }

    /// The keyword this edit asks for, if any; it must be a plain word.
    pub(super) fn checked_keyword(&self, record: &str) -> Result<Option<String>, CompileError> {
        match &self.keyword {
            Some(k) if !is_word(k) => Err(CompileError::Notation(format!(
                "`{record}` field `{}`: keyword `{k}` must be a plain word (letters, digits, _ $ . -; not true/false/null)",
                self.name
            ))),
            k => Ok(k.clone()),
        }
    }

    /// The abbreviations this edit asks for, if they are plain words standing for distinct
    /// values of the field's string enum (`parts`).
    pub(super) fn checked_abbrev(
        &self,
        record: &str,
        parts: &Parts,
    ) -> Result<BTreeMap<String, String>, CompileError> {
        let (abbrev, field) = (&self.abbrev, &self.name);
        if abbrev.is_empty() {
            return Ok(BTreeMap::new());
        }
        let Some(values) = parts.string.as_ref().and_then(|s| s.values.as_ref()) else {
            return Err(CompileError::Notation(format!(
                "`{record}` field `{field}`: abbreviations need an enum of strings"
            )));
        };
        let mut written = BTreeSet::new();
        for v in values {
            let w = abbrev.get(v).unwrap_or(v);
            if !written.insert(render_word(w)) {
                return Err(CompileError::Ambiguous(format!(
                    "`{record}` field `{field}`: `{w}` would stand for two values"
                )));
            }
        }
        for (k, w) in abbrev {
            if !values.contains(k) {
                return Err(CompileError::Notation(format!(
                    "`{record}` field `{field}`: `{k}` is not one of its values"
                )));
            }
            if !is_word(w) {
                return Err(CompileError::Notation(format!(
                    "`{record}` field `{field}`: abbreviation `{w}` must be a plain word"
                )));
            }
        }
        Ok(abbrev.clone())
    }
}

/// The notation design as editable YAML, saying what is written: under `root: block`
/// every field of the root object is a line that starts with its keyword (`kw value`, or
/// a section `kw:` with one item per line; plain lines first), so those fields are listed
/// with their keyword, an optional one as `keyed`, a required one as `positional`
/// (required: its line is always there). A single-valued optional field written as its
/// keyword alone is a `flag`.
pub(crate) fn to_config(n: &Notation, shapes: &Shapes) -> NotationConfig {
    let block_root = match (n.root, n.object(shapes.root)) {
        (RootLayout::Block, Some(ObjLayout::Record(r))) => Some(r.name.as_str()),
        _ => None,
    };
    let mut objects = BTreeMap::new();
    for layout in n.objects.values() {
        for (name, edit) in object_edits(layout, shapes, block_root) {
            objects.entry(name).or_insert(edit);
        }
    }
    NotationConfig {
        root: Some(n.root),
        style: NotationStyle::Compact,
        objects,
        name_calls: false,
    }
}

/// The edits of one object layout, by record name, as written (for [`to_config`]);
/// `block_root`: the name of the root record of a block layout.
fn object_edits(
    layout: &ObjLayout,
    shapes: &Shapes,
    block_root: Option<&str>,
) -> Vec<(String, ObjectConfig)> {
    let edit = |r: &RecordLayout, tag: Option<String>| {
        let block = block_root == Some(r.name.as_str());
        let fields = r
            .fields
            .iter()
            .map(|f| {
                let mode = match f.mode {
                    FieldMode::Keyed if f.is_flag(shapes) => "flag",
                    FieldMode::Positional if f.named => "named",
                    FieldMode::Positional => "positional",
                    FieldMode::Const(_) => "const",
                    FieldMode::Keyed => "keyed",
                    // A block's line always starts with its keyword.
                    FieldMode::Keyless if block => "keyed",
                    FieldMode::Keyless => "keyless",
                };
                let with_keyword = f.mode == FieldMode::Keyed
                    || f.named
                    || (block && !matches!(f.mode, FieldMode::Const(_)));
                FieldConfig {
                    name: f.name.clone(),
                    mode: mode.into(),
                    keyword: with_keyword.then(|| f.keyword.clone()),
                    abbrev: f.abbrev.clone(),
                }
            })
            .collect();
        (r.name.clone(), ObjectConfig { tag, fields })
    };
    match layout {
        ObjLayout::Record(r) => vec![edit(r, None)],
        ObjLayout::Tagged { variants, .. } => variants
            .iter()
            .map(|v| {
                let tag = match v.tags.as_slice() {
                    [(_, w)] => Some(w.clone()),
                    _ => None,
                };
                edit(&v.record, tag)
            })
            .collect(),
    }
}

#[cfg(test)]
mod tests {
    use super::NotationConfig;

    /// A misspelled key is an error (with its line), never an edit silently ignored.
    #[test]
    fn unknown_keys_are_errors() {
        let yaml =
            "objects:\n  '#':\n    fields:\n    - name: a\n      mode: keyed\n      kyeword: x\n";
        let e = serde_norway::from_str::<NotationConfig>(yaml).expect_err("kyeword");
        assert!(e.to_string().contains("unknown field `kyeword`"), "{e}");
        assert_eq!(e.location().map(|l| l.line()), Some(6));
        for bad in ["rooot: block\n", "objects:\n  '#':\n    feilds: []\n"] {
            assert!(
                serde_norway::from_str::<NotationConfig>(bad).is_err(),
                "{bad}"
            );
        }
        let ok = "root: block\nobjects:\n  '#':\n    fields:\n    - name: a\n      mode: keyed\n      keyword: x\n";
        assert!(serde_norway::from_str::<NotationConfig>(ok).is_ok());
    }

    /// Under `root: block` the YAML lists the root's fields as they are written (each line
    /// starts with its keyword, plain lines before sections), and reading it back gives the
    /// same language.
    #[test]
    fn block_root_fields_are_listed_as_written() {
        use crate::{compile, CompileOptions};
        let schema = serde_json::json!({"type": "object", "required": ["rows"],
            "additionalProperties": false, "properties": {
            "rows": {"type": "array", "items": {"type": "object", "required": ["a"],
                "properties": {"a": {"type": "string"}}, "additionalProperties": false}},
            "chart": {"enum": ["bar", "line"]}}});
        let auto = compile(&schema, &CompileOptions::default()).unwrap();
        let yaml = auto.notation_yaml().unwrap();
        let cfg: NotationConfig = serde_norway::from_str(&yaml).unwrap();
        let root = &cfg.objects["#"].fields;
        let listed: Vec<(&str, &str, Option<&str>)> = root
            .iter()
            .map(|f| (f.name.as_str(), f.mode.as_str(), f.keyword.as_deref()))
            .collect();
        assert_eq!(
            listed,
            [
                ("rows", "positional", Some("rows")),
                ("chart", "keyed", Some("chart"))
            ],
            "{yaml}"
        );
        assert!(!yaml.contains("`key:` line"), "{yaml}");
        let edited = compile(
            &schema,
            &CompileOptions {
                notation: Some(cfg),
                ..Default::default()
            },
        )
        .unwrap();
        assert_eq!(edited.grammar_pest(), auto.grammar_pest());
        let x = serde_json::json!({"chart": "bar", "rows": [{"a": "x"}]});
        assert_eq!(edited.compress(&x).unwrap(), auto.compress(&x).unwrap());
    }
}
