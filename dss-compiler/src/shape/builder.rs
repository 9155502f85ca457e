//! The [`Builder`]: the arena of expressions (interning, unions and intersections of
//! expressions), their materialization into [`Parts`], and the finished [`Shapes`].

use super::model::{Expr, ExprId, Parts, Record, Shapes, ANY, NEVER};
use crate::error::CompileError;
use crate::schema::SchemaDoc;
use rustc_hash::FxHashMap as HashMap;
use serde_json::Value;
use std::sync::Arc;

/// Above this many expressions, new combinations fall back to `ANY` (plain JSON), so a
/// pathological schema still compiles in bounded time.
const MAX_EXPRS: usize = 50_000;

/// Builds [`Shapes`] from a schema document.
pub(crate) struct Builder<'d, 'a> {
    pub(super) doc: &'d SchemaDoc<'a>,
    pub(super) exprs: Vec<Expr>,
    pub(super) index: HashMap<Expr, ExprId>,
    pub(super) parts: Vec<Option<Arc<Parts>>>,
    pub(super) in_progress: Vec<bool>,
    pub(super) docs: Vec<Option<String>>,
    /// The schema node of each `Node` expression (saves re-walking pointers).
    pub(super) values: Vec<Option<&'a Value>>,
    /// Resolved `$ref`s by (base URI in force, reference): a reference names the same
    /// target wherever its base is the same, and large schemas repeat a few hundred refs
    /// thousands of times.
    pub(super) refs: HashMap<(&'d str, &'a str), ExprId>,
    /// Merged records by the identity of the records merged (kept alive here, so the
    /// addresses stay unique).
    #[allow(clippy::type_complexity)]
    pub(super) merged: HashMap<Vec<usize>, (Vec<Arc<Record>>, Arc<Record>)>,
    /// Shared parts given their merged record, by the address of the original (kept alive).
    pub(super) patched: HashMap<usize, (Arc<Parts>, Arc<Parts>)>,
    /// Set when some shape may admit more than its schema (a size limit, a cycle without
    /// structure, a union of branches whose JSON types overlap), or the schema asserts
    /// what the encoder cannot check (see [`crate::schema::encoder_checks_all_assertions`]).
    pub(super) approximated: bool,
}

impl<'d, 'a> Builder<'d, 'a> {
    /// A builder for the shapes of `doc`, with the expressions `ANY` and `NEVER`.
    pub(crate) fn new(doc: &'d SchemaDoc<'a>) -> Self {
        let mut b = Builder {
            doc,
            exprs: Vec::new(),
            index: HashMap::default(),
            parts: Vec::new(),
            in_progress: Vec::new(),
            docs: Vec::new(),
            values: Vec::new(),
            refs: HashMap::default(),
            merged: HashMap::default(),
            patched: HashMap::default(),
            // Decided up front, so unions need no exactness check where it cannot matter.
            approximated: !crate::schema::encoder_checks_all_assertions(doc.root),
        };
        b.intern(Expr::Any, None);
        b.intern(Expr::Never, None);
        b
    }

    /// Build the shapes of everything reachable from the document root.
    pub(crate) fn build(mut self) -> Result<Shapes, CompileError> {
        let root = self.node("");
        // Every expression interned while materializing is reachable; the arena grows as
        // we go, so this loop is the closure.
        let mut i = 0;
        while i < self.exprs.len() {
            let id = i as ExprId;
            let parts = self.materialize(id)?;
            if let Some(patched) = self.with_merged_record(&parts) {
                self.parts[i] = Some(patched);
            }
            i += 1;
        }
        // Draft-04 counts `1.0` as no integer, where later drafts (and the encoder's type
        // check, and the integer terminal) count it as one: there the local assertions
        // check `type` again (see [`Self::local_of`]). Draft-03 is left to the validator.
        let draft3_integers = self
            .doc
            .root
            .get("$schema")
            .and_then(Value::as_str)
            .is_some_and(|s| s.contains("draft-03"))
            && self
                .parts
                .iter()
                .flatten()
                .any(|p| p.number.as_ref().is_some_and(|n| n.integer));
        let mut encoding_validates = !self.approximated && !draft3_integers;
        let (mut local_assertions, mut asserted) = (Vec::new(), Vec::new());
        if encoding_validates {
            match self.local_assertions() {
                Some((l, a)) => (local_assertions, asserted) = (l, a),
                None => encoding_validates = false,
            }
        }
        Ok(Shapes {
            exprs: self.exprs,
            parts: self
                .parts
                .into_iter()
                .map(Option::unwrap_or_default)
                .collect(),
            docs: self.docs,
            root,
            encoding_validates,
            local_assertions,
            asserted,
        })
    }

    /// `parts` with the merged record of its object forms, where it has two or more and
    /// none yet. Parts are shared by many expressions: each shared value is patched once.
    fn with_merged_record(&mut self, parts: &Arc<Parts>) -> Option<Arc<Parts>> {
        let obj = parts.object.as_ref()?;
        if obj.records.len() < 2 || obj.merged.is_some() {
            return None;
        }
        let old = Arc::as_ptr(parts) as usize;
        if let Some((_, new)) = self.patched.get(&old) {
            return Some(new.clone());
        }
        let merged = self.merged_record(&obj.records);
        let mut new = Parts::clone(parts);
        if let Some(o) = &mut new.object {
            o.merged = Some(merged);
        }
        let new = Arc::new(new);
        self.patched.insert(old, (parts.clone(), new.clone()));
        Some(new)
    }

    fn intern(&mut self, e: Expr, value: Option<&'a Value>) -> ExprId {
        if let Some(&id) = self.index.get(&e) {
            return id;
        }
        if self.exprs.len() >= MAX_EXPRS {
            self.approximated = true;
            return ANY;
        }
        let id = self.exprs.len() as ExprId;
        let doc = value.and_then(describe);
        self.values.push(value);
        self.exprs.push(e.clone());
        self.index.insert(e, id);
        self.parts.push(None);
        self.in_progress.push(false);
        self.docs.push(doc);
        id
    }

    /// The expression of the subschema at `pointer`.
    pub(crate) fn node(&mut self, pointer: &str) -> ExprId {
        let v = self.doc.node(pointer);
        self.node_at(pointer.to_string(), v)
    }

    /// A node whose value is already at hand (children of the node being read).
    pub(super) fn node_at(&mut self, pointer: String, v: &'a Value) -> ExprId {
        match v {
            Value::Bool(true) => ANY,
            Value::Bool(false) => NEVER,
            _ => self.intern(Expr::Node(pointer), Some(v)),
        }
    }

    /// The expression admitting what any of `ids` admits.
    pub(crate) fn union(&mut self, ids: &[ExprId]) -> ExprId {
        self.combine(ids, true)
    }

    /// The expression admitting what all of `ids` admit.
    pub(crate) fn inter(&mut self, ids: &[ExprId]) -> ExprId {
        self.combine(ids, false)
    }

    /// Union (`any_of`) or intersection of expressions, flattened, sorted and deduplicated
    /// so equal combinations intern to one id. ANY absorbs a union and is the identity of
    /// an intersection; NEVER the other way round.
    fn combine(&mut self, ids: &[ExprId], any_of: bool) -> ExprId {
        let (absorbing, identity) = if any_of { (ANY, NEVER) } else { (NEVER, ANY) };
        let mut flat = Vec::new();
        for &id in ids {
            match &self.exprs[id as usize] {
                _ if id == absorbing => return absorbing,
                _ if id == identity => {}
                Expr::Union(xs) if any_of => flat.extend(xs.iter().copied()),
                Expr::Inter(xs) if !any_of => flat.extend(xs.iter().copied()),
                _ => flat.push(id),
            }
        }
        flat.sort_unstable();
        flat.dedup();
        match flat.len() {
            0 => identity,
            1 => flat[0],
            _ if any_of => self.intern(Expr::Union(flat), None),
            _ => self.intern(Expr::Inter(flat), None),
        }
    }

    /// The parts of `id`, computed on first use (a cycle without structure admits all).
    /// Recursive through `$ref`, `allOf` and `anyOf` (one level per link of a chain, at
    /// most [`MAX_EXPRS`] deep: an expression in progress is not entered again), on a
    /// growing stack.
    pub(crate) fn materialize(&mut self, id: ExprId) -> Result<Arc<Parts>, CompileError> {
        crate::stack::deep(|| self.materialize_now(id))
    }

    fn materialize_now(&mut self, id: ExprId) -> Result<Arc<Parts>, CompileError> {
        if let Some(p) = &self.parts[id as usize] {
            return Ok(p.clone());
        }
        if self.in_progress[id as usize] {
            // A cycle that does not pass through a property or an item (e.g. `{"$ref": "#"}`
            // at the root): nothing structural can be said, so admit everything.
            self.approximated = true;
            return Ok(Arc::new(Parts::any()));
        }
        self.in_progress[id as usize] = true;
        let parts = match self.exprs[id as usize].clone() {
            Expr::Any => Arc::new(Parts::any()),
            Expr::Never => Arc::new(Parts::never()),
            Expr::Node(p) => {
                let v = self.values[id as usize].unwrap_or_else(|| self.doc.node(&p));
                let shared = self.node_parts(&p, v)?;
                self.in_progress[id as usize] = false;
                self.parts[id as usize] = Some(shared.clone());
                return Ok(shared);
            }
            Expr::Union(xs) => {
                let mut all = Vec::with_capacity(xs.len());
                for &x in &xs {
                    all.push(self.materialize(x)?);
                }
                self.union_all(all)
            }
            Expr::Inter(xs) => self.fold(&xs, Parts::any(), Self::inter_rc)?,
        };
        self.in_progress[id as usize] = false;
        self.parts[id as usize] = Some(parts.clone());
        Ok(parts)
    }

    /// The parts of `xs` combined by `op`, starting from `start`.
    fn fold(
        &mut self,
        xs: &[ExprId],
        start: Parts,
        op: fn(&mut Self, Arc<Parts>, Arc<Parts>) -> Arc<Parts>,
    ) -> Result<Arc<Parts>, CompileError> {
        let mut acc = Arc::new(start);
        for &x in xs {
            let px = self.materialize(x)?;
            acc = op(self, acc, px);
        }
        Ok(acc)
    }
}

/// The documentation of a schema node: its `description`, else its `title`.
fn describe(v: &Value) -> Option<String> {
    let m = v.as_object()?;
    m.get("description")
        .or_else(|| m.get("title"))
        .and_then(Value::as_str)
        .map(|s| s.to_string())
}

#[cfg(test)]
mod tests {
    use crate::shape::test_support::shapes;
    use crate::stack::on_small_stack;
    use serde_json::{json, Map, Value};

    /// `{"$defs": {d0: link(1), …, d{n}: {"type": "integer"}}, "$ref": "#/$defs/d0"}`.
    fn chain(n: usize, link: fn(Value) -> Value) -> Value {
        let mut defs: Map<String, Value> = (0..n)
            .map(|i| {
                (
                    format!("d{i}"),
                    link(json!({"$ref": format!("#/$defs/d{}", i + 1)})),
                )
            })
            .collect();
        defs.insert(format!("d{n}"), json!({"type": "integer"}));
        json!({"$defs": defs, "$ref": "#/$defs/d0"})
    }

    #[test]
    fn long_reference_chains_materialize() {
        on_small_stack(|| {
            for schema in [
                chain(10_000, |r| r),
                chain(5_000, |r| json!({"allOf": [r]})),
                chain(5_000, |r| json!({"anyOf": [r, {"type": "integer"}]})),
            ] {
                let s = shapes(schema);
                let p = s.parts(s.root);
                assert!(p.number.as_ref().is_some_and(|n| n.integer), "{p:?}");
                assert!(p.string.is_none() && p.object.is_none());
            }
        });
    }

    #[test]
    fn cycle_of_unions_without_structure_admits_all() {
        on_small_stack(|| {
            let n = 5_000;
            let defs: Map<String, Value> = (0..n)
                .map(|i| {
                    let next = json!({"$ref": format!("#/$defs/d{}", (i + 1) % n)});
                    (format!("d{i}"), json!({"anyOf": [next, {"type": "null"}]}))
                })
                .collect();
            let s = shapes(json!({"$defs": defs, "$ref": "#/$defs/d0"}));
            assert!(s.parts(s.root).any);
        });
    }
}
