//! Stage 4 — the exact mapper: JSON -> shorthand ([`Encoder`]) and shorthand -> JSON
//! ([`Decoder`]), both driven by the notation. The decoder reads left to right with one token
//! of lookahead — the notation stage guarantees that is enough — and reports errors as
//! `line:column`, what was expected and what was found. It finds the extent of each
//! terminal with the lexers of [`crate::grammar::terminal`], so it reads exactly what the
//! grammars say.
//!
//! Both read the notation through [`Tables`], its lookups by expression, derived from the
//! saved shapes and notation when a spec is compiled or loaded.
//!
//! Files: `tables.rs` (the lookup tables: kind, object layout and open line fields by
//! expression, the per-record indexes), `index.rs` (the encoder's packed per-record index),
//! `encode.rs` (the encoder), `decode.rs` (the decoder: cursor, errors, tokens, values),
//! `decode_object.rs` (the decoder's objects: block documents, records, undeclared
//! properties), `json.rs` (JSON values: equality, writing), `number.rs` (numbers as text:
//! exactness, the lexemes of the number terminals, the form the encoder writes),
//! `regular.rs` (the check of regular forms: `pattern`, `format`, lengths, integer ranges).

mod decode;
mod decode_object;
mod encode;
mod index;
mod json;
mod number;
mod regular;
mod tables;

pub(crate) use decode::{Decoder, MAX_DEPTH};
pub use encode::EncodeError;
pub(crate) use encode::Encoder;
pub use json::json_eq;
pub(crate) use number::first_inexact;
pub(crate) use tables::Tables;

use std::collections::BTreeMap;

/// No abbreviations (fields without choice words, items, undeclared properties).
static NO_ABBREV: BTreeMap<String, String> = BTreeMap::new();
