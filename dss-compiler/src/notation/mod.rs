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
//!
//! Where each concern lives (files of this folder):
//! - `layout.rs`: the result — [`Notation`], its object layouts and field modes;
//! - `words.rs`: which strings are bare words, quoting, keywords for property names;
//! - `first.rs`: the first-token classes of values, for deciding and checking choices;
//! - `design.rs`: [`design()`], the list of passes that builds a [`Notation`] from shapes;
//! - `fields.rs`: one record's fields: order, mode, keyword, keyless;
//! - `tags.rs`: discriminated unions: finding the tag property, short tags;
//! - `open.rs`: the follow-set analysis deciding which object values are written open;
//! - `config.rs`: the user-editable YAML ([`NotationConfig`]), reading and checking edits.
//!
//! The encoder's packed per-record lookups are the codec's (`codec/index.rs`).

mod config;
mod design;
mod fields;
mod first;
mod layout;
mod open;
mod tags;
mod words;

pub(crate) use config::to_config;
pub use config::{NotationConfig, NotationStyle};
pub(crate) use design::design;
pub(crate) use first::First;
pub(crate) use layout::{
    is_section, FieldLayout, FieldMode, Form, Notation, ObjLayout, RecordLayout, RootLayout,
    TaggedVariant,
};
pub(crate) use words::render_word;
