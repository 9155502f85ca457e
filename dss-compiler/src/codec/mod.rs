//! Stage 4 — the exact mapper: JSON -> shorthand ([`Encoder`]) and shorthand -> JSON
//! ([`Decoder`]), both driven by the notation. The decoder reads left to right with one token
//! of lookahead — the notation stage guarantees that is enough — and reports errors as
//! `line:column`, what was expected and what was found. It finds the extent of each
//! terminal with the lexers of [`crate::grammar::terminal`], so it reads exactly what the
//! grammars say.
//!
//! Files: `encode.rs` (the encoder), `decode.rs` (the decoder: cursor, errors, tokens,
//! values), `decode_object.rs` (the decoder's objects: block documents, records, undeclared
//! properties), `json.rs` (JSON values: equality, writing).

mod decode;
mod decode_object;
mod encode;
mod json;

pub use decode::{Decoder, MAX_DEPTH};
pub use encode::{EncodeError, Encoder, Ptr};
pub use json::json_eq;

use std::collections::BTreeMap;

/// No abbreviations (fields without choice words, items, undeclared properties).
static NO_ABBREV: BTreeMap<String, String> = BTreeMap::new();
