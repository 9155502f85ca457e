//! Lowering: a schema node's keywords to its [`Parts`], one file per keyword family:
//! [`types`] (`type`, and the bounds and lexical forms a grammar can say), [`values`]
//! (`enum`/`const`), [`objects`], [`arrays`], and [`combinators`] (`$ref`, `allOf`,
//! `anyOf`/`oneOf`, which combine other nodes' parts). Which keywords a family reads is
//! its [`Family`] column in the keyword table ([`crate::schema::KEYWORDS`]).

mod arrays;
mod combinators;
mod objects;
pub(crate) mod types;
mod values;

use super::model::Parts;
use super::Builder;
use crate::error::CompileError;
use crate::schema::{keyword, Family};
use serde_json::{Map, Value};
use std::sync::Arc;

impl<'a> Builder<'_, 'a> {
    /// The parts of the schema node `v` at pointer `p`.
    pub(super) fn node_parts(&mut self, p: &str, v: &'a Value) -> Result<Arc<Parts>, CompileError> {
        let m = match v {
            Value::Bool(true) => return Ok(Arc::new(Parts::any())),
            Value::Bool(false) => return Ok(Arc::new(Parts::never())),
            Value::Object(m) => m,
            // Not a schema: validators ignore it, so do we.
            _ => return Ok(Arc::new(Parts::any())),
        };
        if let Some(shared) = self.bare_ref(m, p)? {
            return Ok(shared);
        }
        let own = Arc::new(self.own_parts(m, p));
        self.with_combinators(m, p, own)
    }

    /// Parts from a node's own keywords (not `$ref`/`allOf`/`anyOf`/`oneOf`): every type
    /// where it has none of them.
    fn own_parts(&mut self, m: &'a Map<String, Value>, p: &str) -> Parts {
        let own = |k: &String| {
            keyword(k)
                .and_then(|r| r.family)
                .is_some_and(Family::is_own)
        };
        if !m.keys().any(own) {
            return Parts::any();
        }
        let mut parts = Parts::all_types(p);
        types::lower_type(m, self.doc.formats_assert, &mut parts);
        if let Some(listed) = values::listed_parts(m, &parts) {
            parts = self.inter_parts(parts, &listed);
        }
        if parts.object.is_some() {
            parts.object = Some(self.lower_object(m, p));
        }
        if parts.array.is_some() {
            parts.array = Some(self.lower_array(m, p));
        }
        parts
    }
}
