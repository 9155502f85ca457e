//! Combinators: `$ref` (shared with its target when bare, else intersected), `allOf`
//! (intersection) and `anyOf`/`oneOf` (union), and whether such a union is exact.

use crate::error::CompileError;
use crate::schema::{is_class, keywords_of, Draft, KeywordClass};
use crate::shape::model::{type_names, ExprId, Parts};
use crate::shape::Builder;
use serde_json::{Map, Value};
use std::sync::Arc;

impl<'a> Builder<'_, 'a> {
    /// The parts of a bare `$ref` (or draft-07 `$ref` with ignored siblings): its target's,
    /// shared. `None` where the node is not one.
    pub(super) fn bare_ref(
        &mut self,
        m: &'a Map<String, Value>,
        p: &str,
    ) -> Result<Option<Arc<Parts>>, CompileError> {
        let Some(r) = m.get("$ref").and_then(Value::as_str) else {
            return Ok(None);
        };
        let only_ref = self.doc.draft == Draft::Legacy
            || m.keys()
                .all(|k| k == "$ref" || is_class(k, KeywordClass::Annotation));
        if !only_ref {
            return Ok(None);
        }
        match self.resolve(p, r) {
            Ok(t) => self.materialize(t).map(Some),
            Err(CompileError::RemoteRef { .. }) if is_metaschema(r) => {
                Ok(Some(Arc::new(Parts::any())))
            }
            Err(e) => Err(e),
        }
    }

    /// `own` (the parts of a node's own keywords) intersected with its `$ref`'s target, its
    /// `allOf` branches and the union of the branches of each of `anyOf`/`oneOf`.
    pub(super) fn with_combinators(
        &mut self,
        m: &'a Map<String, Value>,
        p: &str,
        own: Arc<Parts>,
    ) -> Result<Arc<Parts>, CompileError> {
        let mut acc = own;
        if let Some(r) = m.get("$ref").and_then(Value::as_str) {
            let t = match self.resolve(p, r) {
                Ok(t) => t,
                // The standard metaschemas ship with the validator: validated there,
                // unconstrained (plain JSON) here.
                Err(CompileError::RemoteRef { .. }) if is_metaschema(r) => return Ok(acc),
                Err(e) => return Err(e),
            };
            let pt = self.materialize(t)?;
            acc = self.inter_rc(acc, pt);
        }
        if let Some(Value::Array(xs)) = m.get("allOf") {
            for (i, x) in xs.iter().enumerate() {
                let e = self.node_at(format!("{p}/allOf/{i}"), x);
                let pe = self.materialize(e)?;
                acc = self.inter_rc(acc, pe);
            }
        }
        for key in keywords_of(KeywordClass::Union) {
            if let Some(Value::Array(xs)) = m.get(key) {
                let ids: Vec<ExprId> = xs
                    .iter()
                    .enumerate()
                    .map(|(i, x)| self.node_at(format!("{p}/{key}/{i}"), x))
                    .collect();
                let u = self.union(&ids);
                let pu = self.materialize(u)?;
                if !self.approximated && !self.exact_union(&ids)? {
                    self.approximated = true;
                }
                acc = self.inter_rc(acc, pu);
            }
        }
        Ok(acc)
    }

    /// Whether the union of the branches' shapes is exact, with a value's branch told by
    /// the encoder's checks: the branches admit disjoint JSON types (numbers and integers
    /// are one type, `true` and `false` one), except that several may be objects if each is
    /// one closed record and no property name is declared by two of them (the merged
    /// record then checks each property against its one branch; [`Self::local_of`] adds
    /// which branch's names the object has).
    fn exact_union(&mut self, ids: &[ExprId]) -> Result<bool, CompileError> {
        let mut seen: Vec<&'static str> = Vec::new();
        let mut objects = Vec::new();
        for &id in ids {
            let parts = self.materialize(id)?;
            if parts.any && ids.len() > 1 {
                return Ok(false);
            }
            for t in type_names(&parts) {
                if t != "object" && seen.contains(&t) {
                    return Ok(false);
                }
                seen.push(t);
            }
            if parts.object.is_some() {
                objects.push(parts);
            }
        }
        if objects.len() < 2 {
            return Ok(true);
        }
        let mut names = std::collections::HashSet::new();
        for parts in &objects {
            let Some(o) = &parts.object else { continue };
            let [r] = o.records.as_slice() else {
                return Ok(false);
            };
            if r.extras.is_some() || !r.props.iter().all(|(n, _)| names.insert(n.clone())) {
                return Ok(false);
            }
        }
        Ok(true)
    }

    /// The expression a `$ref` found at `p` names.
    fn resolve(&mut self, p: &str, reference: &'a str) -> Result<ExprId, CompileError> {
        let base = self.doc.base_at(p);
        if let Some(&id) = self.refs.get(&(base, reference)) {
            return Ok(id);
        }
        let target = self.doc.resolve(p, reference)?;
        let id = self.node(&target);
        self.refs.insert((base, reference), id);
        Ok(id)
    }
}

/// Whether `reference` names one of the standard JSON Schema metaschemas.
fn is_metaschema(reference: &str) -> bool {
    let r = reference
        .trim_start_matches("https://")
        .trim_start_matches("http://");
    r.starts_with("json-schema.org/draft-0")
        || r.starts_with("json-schema.org/draft/20")
        || r.starts_with("json-schema.org/schema")
}

#[cfg(test)]
mod tests {
    use crate::shape::test_support::shapes;
    use serde_json::json;

    #[test]
    fn recursive_ref_is_finite() {
        let s = shapes(json!({
            "$defs": {"node": {"type": "object", "properties": {"kids": {"type": "array", "items": {"$ref": "#/$defs/node"}}}}},
            "$ref": "#/$defs/node"
        }));
        assert!(s.parts(s.root).object_only());
    }
}
