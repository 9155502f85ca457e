//! Stage 2 — shapes: what JSON values a subschema may describe, partitioned by JSON type.
//!
//! A shape never rejects a value its schema accepts (it *over-approximates*: keywords a
//! notation cannot express, such as `pattern`, `not` or `if`, are dropped), so every valid
//! instance can be written in the notation; validity itself is checked by a real validator
//! before compressing. Subschemas are combined lazily as expressions (`Union`, `Inter`) so
//! recursive schemas stay finite: an object's fields point at expressions, not at shapes.
//!
//! Files: `model` (the data model: [`Expr`], [`Parts`], [`Record`], [`Shapes`], [`Kind`]),
//! `builder` (the [`Builder`]: expression arena, materialization), `lower` (schema keywords
//! to parts, one file per keyword family), `algebra` (union and intersection of parts and
//! records), `local` (the local assertions the encoder checks per expression).

mod algebra;
mod builder;
mod local;
mod lower;
/// What the shapes' lowering leaves to the validator (read by `gaps.rs`).
pub(crate) use lower::types as lower_gaps;
mod model;
pub(crate) mod regular;

pub(crate) use builder::Builder;
pub(crate) use model::{
    same_json, same_number, ArrPart, Expr, ExprId, IntRange, Kind, Lower, NumPart, ObjPart, Parts,
    Record, Shapes, StrPart, ANY,
};
pub use model::{Lexical, RegularCheck};

use crate::error::CompileError;
use crate::schema::SchemaDoc;

/// Build the shapes of a schema document.
pub(crate) fn build(doc: &SchemaDoc<'_>) -> Result<Shapes, CompileError> {
    Builder::new(doc).build()
}

#[cfg(test)]
mod test_support {
    use super::*;
    use serde_json::Value;

    /// The shapes of `schema` (for the unit tests beside each part of the builder).
    pub(super) fn shapes(schema: Value) -> Shapes {
        let doc = SchemaDoc::new(&schema);
        build(&doc).unwrap()
    }
}
