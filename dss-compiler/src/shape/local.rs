//! Local assertions: for a schema the shapes capture exactly, the keywords the encoder
//! checks value by value (bounds, `pattern`, `format`…, and which branch of an exact
//! `anyOf`/`oneOf` a value takes), one schema per expression (see
//! [`Shapes::local_assertion`](super::Shapes::local_assertion)).

use super::model::{type_names, Expr, Parts, ANY, NEVER};
use super::Builder;
use rustc_hash::FxHashMap as HashMap;
use serde_json::{Map, Value};

/// Where [`Builder::local_of`] is for one expression.
#[derive(Clone)]
enum Local {
    Unknown,
    InProgress,
    Done(Option<Map<String, Value>>),
}

impl<'a> Builder<'_, 'a> {
    /// The local assertions of every expression (see [`Shapes::local_assertion`]), for a
    /// schema whose other assertions the shapes capture exactly, each a schema of its own
    /// in the document's dialect. `None` if they cannot be told (a reference chain not
    /// followed while building, a cycle).
    ///
    /// [`Shapes::local_assertion`]: super::Shapes::local_assertion
    pub(super) fn local_assertions(&self) -> Option<(Vec<Value>, Vec<u32>)> {
        let mut distinct: Vec<Value> = Vec::new();
        let mut index: HashMap<String, u32> = HashMap::default();
        let mut memo = vec![Local::Unknown; self.exprs.len()];
        let mut asserted = vec![0u32; self.exprs.len()];
        for (id, slot) in asserted.iter_mut().enumerate() {
            let Some(mut local) = self.local_of(id, &mut memo)? else {
                continue;
            };
            if let Some(dialect) = self.doc.root.get("$schema") {
                local.insert("$schema".into(), dialect.clone());
            }
            let local = Value::Object(local);
            let key = local.to_string();
            *slot = match index.get(&key) {
                Some(&i) => i,
                None => {
                    distinct.push(local);
                    let i = distinct.len() as u32;
                    index.insert(key, i);
                    i
                }
            };
        }
        if distinct.is_empty() {
            asserted.clear();
        }
        Some((distinct, asserted))
    }

    /// The local assertions of one expression: its node's own (a bare `$ref`: its
    /// target's); for an exact `anyOf`/`oneOf` (see [`Self::exact_union`]), also those of
    /// the branch the value's type selects (`{"anyOf": [{"type": T, ..}, ..]}`), and for
    /// several object branches which branch's property names the object has.
    fn local_of(&self, id: usize, memo: &mut [Local]) -> Option<Option<Map<String, Value>>> {
        match &memo[id] {
            Local::Done(x) => return Some(x.clone()),
            Local::InProgress => return None,
            Local::Unknown => {}
        }
        memo[id] = Local::InProgress;
        let mut local = Map::new();
        if let Some((p, v)) = self.local_node(id)? {
            local = crate::schema::local_keywords(v, self.doc.formats_assert);
            if let Some(t) = self.written_integer_type(v) {
                local.insert("allOf".into(), Value::Array(vec![t]));
            }
            if let Some(check) = crate::schema::pattern_check(v) {
                local.extend(check);
            }
            for key in crate::schema::keywords_of(crate::schema::KeywordClass::Union) {
                if let Some(branches) = self.branch_locals(p, v, key, memo)? {
                    local.insert(key.into(), Value::Array(branches));
                }
            }
        }
        let local = (!local.is_empty()).then_some(local);
        memo[id] = Local::Done(local.clone());
        Some(local)
    }

    /// Where the document's dialect is draft-04 and node `v`'s `type` admits integers but
    /// not all numbers: that `type` again, as a schema of its own (`{"type": ..}`). Draft-04
    /// counts only a number written without fraction or exponent as an integer (`1.0` is
    /// none), where the shapes and the encoder count every whole number; checked in the
    /// document's dialect, it is the validator's own test. Under `allOf`, so it stays
    /// apart from the `type` that tells an `anyOf`/`oneOf` branch.
    fn written_integer_type(&self, v: &Value) -> Option<Value> {
        let dialect = self.doc.root.get("$schema").and_then(Value::as_str)?;
        if !dialect.contains("draft-04") {
            return None;
        }
        let t = v.get("type")?;
        let names: Vec<&str> = match t {
            Value::String(s) => vec![s.as_str()],
            Value::Array(xs) => xs.iter().filter_map(Value::as_str).collect(),
            _ => return None,
        };
        (names.contains(&"integer") && !names.contains(&"number"))
            .then(|| serde_json::json!({ "type": t }))
    }

    /// The schema node whose keywords are local to expression `id`: its own, or through a
    /// chain of bare `$ref`s its target's. Inside `None` for `true`/`false` and for a
    /// combination of branches (the encoder gives values their node's expression, never
    /// one of these: nothing local); `None` for a chain not followed while building or
    /// longer than 64 hops.
    fn local_node(&self, id: usize) -> Option<Option<(&str, &'a Value)>> {
        let mut at = id;
        let mut hops = 0;
        loop {
            let Expr::Node(p) = &self.exprs[at] else {
                return Some(None);
            };
            let v = self.values[at].unwrap_or_else(|| self.doc.node(p));
            match v.get("$ref").and_then(Value::as_str) {
                Some(_) if hops == 64 => return None,
                Some(r) => at = *self.refs.get(&(self.doc.base_at(p), r))? as usize,
                None => return Some(Some((p, v))),
            }
            hops += 1;
        }
    }

    /// The branches of the `key` (`anyOf`/`oneOf`) of node `v` at `p`, each as a schema
    /// of its local assertions and what tells it from the others; inside `None` when the
    /// node has no such keyword or no branch needs telling apart.
    fn branch_locals(
        &self,
        p: &str,
        v: &Value,
        key: &str,
        memo: &mut [Local],
    ) -> Option<Option<Vec<Value>>> {
        let Some(Value::Array(xs)) = v.get(key) else {
            return Some(None);
        };
        let mut ids = Vec::with_capacity(xs.len());
        for (i, x) in xs.iter().enumerate() {
            ids.push(match x {
                Value::Bool(true) => ANY,
                Value::Bool(false) => NEVER,
                _ => *self.index.get(&Expr::Node(format!("{p}/{key}/{i}")))?,
            });
        }
        let objects = ids
            .iter()
            .filter(|&&b| {
                self.parts[b as usize]
                    .as_ref()
                    .is_some_and(|p| p.object.is_some())
            })
            .count();
        // Several object branches share the type `object`: the merged record checks
        // each property against its one branch, and this check which branch's
        // property names (required, and no others) the object has.
        let mut any_local = objects >= 2;
        let mut branches = Vec::new();
        for b in ids {
            let parts = self.parts[b as usize].as_ref()?;
            if parts.is_never() {
                continue;
            }
            let mut branch = self.local_of(b as usize, memo)?.unwrap_or_default();
            any_local |= !branch.is_empty();
            tell_branch(&mut branch, parts, objects >= 2)?;
            branches.push(Value::Object(branch));
        }
        Some(any_local.then_some(branches))
    }
}

/// Adds to a branch's local assertions what tells the branch apart: its JSON types, and
/// when it is one of several object branches (`by_names`), its property names (`None`:
/// an object branch without a record).
fn tell_branch(branch: &mut Map<String, Value>, parts: &Parts, by_names: bool) -> Option<()> {
    if !parts.any {
        branch.insert("type".into(), type_names(parts).into());
    }
    if let (true, Some(o)) = (by_names, &parts.object) {
        let r = o.records.first()?;
        // `{}`, not `true`: draft-04 has no boolean schemas.
        let names: Map<String, Value> = r
            .props
            .iter()
            .map(|(n, _)| (n.clone(), Value::Object(Map::new())))
            .collect();
        branch.insert("required".into(), r.required.clone().into());
        branch.insert("properties".into(), Value::Object(names));
        branch.insert("additionalProperties".into(), Value::Bool(false));
    }
    Some(())
}
