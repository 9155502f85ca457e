//! The algebra of parts: the union (`anyOf`/`oneOf`) and intersection (`allOf`, `$ref`
//! beside other keywords) of [`Parts`], type by type, and of object forms ([`Record`]s),
//! including the one merged record admitting several forms.

use super::model::{
    same_number, ArrPart, ExprId, Lexical, Lower, NumPart, ObjPart, Parts, Record, StrPart, ANY,
    NEVER,
};
use super::Builder;
use rustc_hash::FxHashMap as HashMap;
use serde_json::Number;
use std::sync::Arc;

/// Above this many object forms per shape, intersections keep one side (over-approximate).
const MAX_RECORDS: usize = 64;

/// Bounds admitting the values of either side (the weaker).
fn lower_union(a: Option<Lower>, b: Option<Lower>) -> Option<Lower> {
    a.zip(b).map(|(x, y)| x.min(y))
}
/// Bounds admitting the values of both sides (the stronger).
fn lower_inter(a: Option<Lower>, b: Option<Lower>) -> Option<Lower> {
    a.max(b)
}
/// Lexical forms admitting the strings of either side.
fn lexical_union(a: Option<Lexical>, b: Option<Lexical>) -> Option<Lexical> {
    match (a?, b?) {
        (x, y) if x == y => Some(x),
        _ => Some(Lexical::NonEmpty),
    }
}
/// Lexical forms admitting the strings of both sides.
fn lexical_inter(a: Option<Lexical>, b: Option<Lexical>) -> Option<Lexical> {
    match (a, b) {
        (None, y) | (Some(Lexical::NonEmpty), y @ Some(_)) => y,
        (x, _) => x,
    }
}

/// Adds `v` to the listed values `xs` unless an equal one (by `same`) is there.
pub(super) fn add_value<T: Clone>(xs: &mut Vec<T>, v: &T, same: impl Fn(&T, &T) -> bool) {
    if !xs.iter().any(|x| same(x, v)) {
        xs.push(v.clone());
    }
}

/// Listed values admitting either side's (`None`, unrestricted, absorbs), in first-seen
/// order.
fn union_lists<T: Clone>(
    x: Option<Vec<T>>,
    y: &Option<Vec<T>>,
    same: impl Fn(&T, &T) -> bool,
) -> Option<Vec<T>> {
    let (mut xs, ys) = (x?, y.as_ref()?);
    for v in ys {
        add_value(&mut xs, v, &same);
    }
    Some(xs)
}

/// Listed values admitted by both sides (`None`, unrestricted, is the identity).
fn inter_lists<T: Clone>(
    x: Option<Vec<T>>,
    y: &Option<Vec<T>>,
    same: impl Fn(&T, &T) -> bool,
) -> Option<Vec<T>> {
    match (x, y) {
        (Some(xs), Some(ys)) => Some(
            xs.into_iter()
                .filter(|n| ys.iter().any(|m| same(n, m)))
                .collect(),
        ),
        (Some(xs), None) => Some(xs),
        (None, Some(ys)) => Some(ys.clone()),
        (None, None) => None,
    }
}

/// Keeps only the whole numbers of listed values (for an integer part).
pub(super) fn retain_integers(values: &mut Option<Vec<Number>>) {
    if let Some(vs) = values {
        vs.retain(|n: &Number| n.as_f64().is_some_and(|f| f.fract() == 0.0));
    }
}

/// The union of one type's optional parts: a side alone as it is, or `both` combined.
fn either<T: Clone>(x: Option<T>, y: &Option<T>, both: impl FnOnce(T, &T) -> T) -> Option<T> {
    match (x, y) {
        (x, None) => x,
        (None, y) => y.clone(),
        (Some(x), Some(y)) => Some(both(x, y)),
    }
}

/// The intersection of one type's optional parts: `None` unless both sides have one.
fn both<T>(x: Option<T>, y: &Option<T>, f: impl FnOnce(T, &T) -> Option<T>) -> Option<T> {
    match (x, y) {
        (Some(x), Some(y)) => f(x, y),
        _ => None,
    }
}

fn union_numbers(x: NumPart, y: &NumPart) -> NumPart {
    NumPart {
        integer: x.integer && y.integer,
        lower: lower_union(x.lower, y.lower),
        values: union_lists(x.values, &y.values, same_number),
    }
}

fn union_strings(x: StrPart, y: &StrPart) -> StrPart {
    StrPart {
        lexical: lexical_union(x.lexical, y.lexical),
        values: union_lists(x.values, &y.values, String::eq),
    }
}

fn union_objects(mut x: ObjPart, y: &ObjPart) -> ObjPart {
    for r in &y.records {
        if !x.records.contains(r) {
            x.records.push(r.clone());
        }
    }
    x.merged = None;
    x
}

/// `None` when no listed value is left.
fn inter_numbers(x: NumPart, y: &NumPart) -> Option<NumPart> {
    let integer = x.integer || y.integer;
    let mut values = inter_lists(x.values, &y.values, same_number);
    if integer {
        retain_integers(&mut values);
    }
    let lower = lower_inter(x.lower, y.lower);
    match &values {
        Some(vs) if vs.is_empty() => None,
        _ => Some(NumPart {
            integer,
            values,
            lower,
        }),
    }
}

/// `None` when no listed value is left.
fn inter_strings(x: StrPart, y: &StrPart) -> Option<StrPart> {
    let values = inter_lists(x.values, &y.values, String::eq);
    let lexical = lexical_inter(x.lexical, y.lexical);
    match &values {
        Some(vs) if vs.is_empty() => None,
        _ => Some(StrPart { values, lexical }),
    }
}

impl Builder<'_, '_> {
    /// Union of shared parts: a side that decides the result is returned as it is, so
    /// parts (and their enum value lists) are copied only when both sides contribute.
    pub(super) fn union_rc(&mut self, a: Arc<Parts>, b: Arc<Parts>) -> Arc<Parts> {
        if a.any || b.is_never() {
            return a;
        }
        if b.any || a.is_never() {
            return b;
        }
        Arc::new(self.union_parts(Arc::unwrap_or_clone(a), &b))
    }

    /// Intersection of shared parts (see [`Self::union_rc`]).
    pub(super) fn inter_rc(&mut self, a: Arc<Parts>, b: Arc<Parts>) -> Arc<Parts> {
        if a.any {
            return b;
        }
        if b.any {
            return a;
        }
        Arc::new(self.inter_parts(Arc::unwrap_or_clone(a), &b))
    }

    pub(super) fn union_parts(&mut self, a: Parts, b: &Parts) -> Parts {
        if a.any || b.is_never() {
            return a;
        }
        if b.any || a.is_never() {
            return b.clone();
        }
        let number = either(a.number, &b.number, union_numbers);
        let string = either(a.string, &b.string, union_strings);
        let array = either(a.array, &b.array, |x, y| self.union_arrays(x, y));
        let object = either(a.object, &b.object, union_objects);
        Parts {
            any: false,
            null: a.null || b.null,
            bool_false: a.bool_false || b.bool_false,
            bool_true: a.bool_true || b.bool_true,
            number,
            string,
            array,
            object,
        }
    }

    pub(super) fn inter_parts(&mut self, a: Parts, b: &Parts) -> Parts {
        if a.any {
            return b.clone();
        }
        if b.any {
            return a;
        }
        let number = both(a.number, &b.number, inter_numbers);
        let string = both(a.string, &b.string, inter_strings);
        let array = both(a.array, &b.array, |x, y| Some(self.inter_arrays(x, y)));
        let object = both(a.object, &b.object, |x, y| Some(self.inter_objects(x, y)));
        Parts {
            any: false,
            null: a.null && b.null,
            bool_false: a.bool_false && b.bool_false,
            bool_true: a.bool_true && b.bool_true,
            number,
            string,
            array,
            object,
        }
    }

    /// Each tuple position either side has, from the two sides' items there (`None`: that
    /// side has no item at the position) combined by `f`.
    fn positions(
        &mut self,
        x: &ArrPart,
        y: &ArrPart,
        f: fn(&mut Self, Option<ExprId>, Option<ExprId>) -> ExprId,
    ) -> Vec<ExprId> {
        let n = x.prefix.len().max(y.prefix.len());
        (0..n)
            .map(|i| f(self, x.item_at(i), y.item_at(i)))
            .collect()
    }

    fn union_arrays(&mut self, x: ArrPart, y: &ArrPart) -> ArrPart {
        let prefix = self.positions(&x, y, |b, p, q| {
            let ids: Vec<ExprId> = [p, q].into_iter().flatten().collect();
            b.union(&ids)
        });
        let items = match (x.items, y.items) {
            (None, None) => None,
            (Some(i), None) | (None, Some(i)) => Some(i),
            (Some(i), Some(j)) => Some(self.union(&[i, j])),
        };
        let min_items = x.min_items.min(y.min_items);
        let max_items = match (x.max_items, y.max_items) {
            (Some(a), Some(b)) => Some(a.max(b)),
            _ => None,
        };
        ArrPart {
            prefix,
            items,
            min_items,
            max_items,
        }
    }

    fn inter_arrays(&mut self, x: ArrPart, y: &ArrPart) -> ArrPart {
        let mut prefix = self.positions(&x, y, |b, p, q| match (p, q) {
            (Some(p), Some(q)) => b.inter(&[p, q]),
            _ => NEVER,
        });
        // Trailing NEVER positions just cap the length.
        while prefix.last() == Some(&NEVER) {
            prefix.pop();
        }
        let items = match (x.items, y.items) {
            (Some(i), Some(j)) => Some(self.inter(&[i, j])),
            _ => None,
        };
        let min_items = x.min_items.max(y.min_items);
        let max_items = match (x.max_items, y.max_items) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        };
        ArrPart {
            prefix,
            items,
            min_items,
            max_items,
        }
        .clamp_min()
    }

    /// Every pairwise intersection of the two sides' object forms; beyond
    /// [`MAX_RECORDS`] of them, the side with fewer forms (a superset).
    fn inter_objects(&mut self, x: ObjPart, y: &ObjPart) -> ObjPart {
        if x.records.len() * y.records.len() > MAX_RECORDS {
            // Keep one side: a superset of the intersection.
            self.approximated = true;
            let mut keep = if x.records.len() <= y.records.len() {
                x
            } else {
                y.clone()
            };
            keep.merged = None;
            return keep;
        }
        let mut records = Vec::new();
        for rx in &x.records {
            for ry in &y.records {
                let r = self.inter_records(rx, ry);
                if !records.iter().any(|x: &Arc<Record>| **x == *r) {
                    records.push(r);
                }
            }
        }
        ObjPart {
            records,
            merged: None,
        }
    }

    fn inter_records(&mut self, x: &Arc<Record>, y: &Arc<Record>) -> Arc<Record> {
        // An open record without declarations is the identity of intersection.
        let trivial =
            |r: &Record| r.props.is_empty() && r.required.is_empty() && r.extras == Some(ANY);
        if trivial(x) {
            return y.clone();
        }
        if trivial(y) {
            return x.clone();
        }
        let mut props = Vec::new();
        for (name, ex) in &x.props {
            let e = match y.prop(name) {
                Some(ey) => self.inter(&[*ex, ey]),
                None => *ex,
            };
            props.push((name.clone(), e));
        }
        for (name, ey) in &y.props {
            if x.prop(name).is_none() {
                props.push((name.clone(), *ey));
            }
        }
        let mut required = x.required.clone();
        for r in &y.required {
            if !required.contains(r) {
                required.push(r.clone());
            }
        }
        let extras = match (x.extras, y.extras) {
            (Some(a), Some(b)) => Some(self.inter(&[a, b])),
            _ => None,
        };
        Arc::new(Record {
            origin: x.origin.clone(),
            props,
            required,
            extras,
        })
    }

    /// The merged record of a set of object forms. Many shapes share one set (`X`,
    /// `X | null`, …): each set is merged once.
    pub(super) fn merged_record(&mut self, records: &[Arc<Record>]) -> Arc<Record> {
        let key: Vec<usize> = records.iter().map(|r| Arc::as_ptr(r) as usize).collect();
        if let Some((_, m)) = self.merged.get(&key) {
            return m.clone();
        }
        let m = Arc::new(self.merge_records(records));
        self.merged.insert(key, (records.to_vec(), m.clone()));
        m
    }

    /// One record admitting every object any of `records` admits.
    fn merge_records(&mut self, records: &[Arc<Record>]) -> Record {
        // Property names in first-seen order, and for each the shapes the records give it;
        // one pass over every record's properties (merged records have a hundred fields).
        let mut slot: HashMap<&str, usize> = HashMap::default();
        let mut names: Vec<&str> = Vec::new();
        let mut members: Vec<Vec<ExprId>> = Vec::new();
        let mut seen: Vec<bool> = Vec::new();
        for r in records {
            for (n, _) in &r.props {
                slot.entry(n.as_str()).or_insert_with(|| {
                    names.push(n.as_str());
                    members.push(Vec::new());
                    names.len() - 1
                });
            }
        }
        for r in records {
            seen.clear();
            seen.resize(names.len(), false);
            for (n, e) in &r.props {
                if let Some(&i) = slot.get(n.as_str()) {
                    // A repeated name counts once, as `Record::prop` finds the first.
                    if !std::mem::replace(&mut seen[i], true) {
                        members[i].push(*e);
                    }
                }
            }
            // A record without the property may still have it as an undeclared one.
            if let Some(x) = r.extras {
                for (i, m) in members.iter_mut().enumerate() {
                    if !seen[i] {
                        m.push(x);
                    }
                }
            }
        }
        let mut props = Vec::with_capacity(names.len());
        for (n, m) in names.iter().zip(&members) {
            let e = self.union(m);
            props.push((n.to_string(), e));
        }
        let required = records[0]
            .required
            .iter()
            .filter(|n| records.iter().all(|r| r.required.contains(n)))
            .cloned()
            .collect();
        let extras = if records.iter().all(|r| r.extras.is_none()) {
            None
        } else {
            let members: Vec<ExprId> = records.iter().filter_map(|r| r.extras).collect();
            Some(self.union(&members))
        };
        let mut origins: Vec<&str> = records.iter().map(|r| r.origin.as_str()).collect();
        origins.dedup();
        Record {
            origin: origins.join("|"),
            props,
            required,
            extras,
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::shape::test_support::shapes;
    use serde_json::json;

    #[test]
    fn any_of_merges_types() {
        let s =
            shapes(json!({"anyOf": [{"type": "string"}, {"type": "integer"}, {"const": null}]}));
        let p = s.parts(s.root);
        assert!(p.null && p.string.is_some() && p.number.as_ref().unwrap().integer);
        assert!(p.object.is_none() && p.array.is_none());
    }

    #[test]
    fn all_of_intersects() {
        let s = shapes(json!({"allOf": [
            {"type": ["string", "number"]},
            {"type": ["number", "null"]},
            {"properties": {"a": {}}}
        ]}));
        let p = s.parts(s.root);
        assert!(p.number.is_some() && p.string.is_none() && !p.null);
        assert_eq!(p.single_value(), None);
    }
}
