//! The algebra of parts: the union (`anyOf`/`oneOf`) and intersection (`allOf`, `$ref`
//! beside other keywords) of [`Parts`], type by type, and of object forms ([`Record`]s),
//! including the one merged record admitting several forms.

use super::model::{
    json_key, same_number, ArrPart, ExprId, IntRange, Lexical, Lower, NumPart, ObjPart, Parts,
    Record, StrPart, ANY, NEVER,
};
use super::Builder;
use rustc_hash::{FxHashMap as HashMap, FxHashSet as HashSet};
use serde_json::Number;
use smallvec::SmallVec;
use std::hash::BuildHasher;
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
        // A pattern may admit "".
        (Lexical::Regular(_), _) | (_, Lexical::Regular(_)) => None,
        _ => Some(Lexical::NonEmpty),
    }
}
/// Lexical forms admitting the strings of both sides (of two regular forms, the one
/// with more constraints: the other is left to the validator).
fn lexical_inter(a: Option<Lexical>, b: Option<Lexical>) -> Option<Lexical> {
    match (a, b) {
        (None, y) | (Some(Lexical::NonEmpty), y @ Some(_)) => y,
        (Some(Lexical::Date | Lexical::DateTime), y @ Some(Lexical::Regular(_))) => y,
        (Some(Lexical::Regular(x)), Some(Lexical::Regular(y))) if y.len() > x.len() => {
            Some(Lexical::Regular(y))
        }
        (x, _) => x,
    }
}
/// Integer ranges admitting the values of either side (the hull, if both have one).
fn range_union(a: Option<IntRange>, b: Option<IntRange>) -> Option<IntRange> {
    let (a, b) = (a?, b?);
    Some(IntRange {
        min: a.min.min(b.min),
        max: a.max.zip(b.max).map(|(x, y)| x.max(y)),
    })
}
/// Integer ranges admitting the values of both sides (`None` where they do not meet: the
/// validator tells).
fn range_inter(a: Option<IntRange>, b: Option<IntRange>) -> Option<IntRange> {
    match (a, b) {
        (None, y) => y,
        (x, None) => x,
        (Some(a), Some(b)) => {
            let r = IntRange {
                min: a.min.max(b.min),
                max: match (a.max, b.max) {
                    (Some(x), Some(y)) => Some(x.min(y)),
                    (x, y) => x.or(y),
                },
            };
            r.regex().map(|_| r)
        }
    }
}

/// A listed value (`enum`/`const`): strings, or numbers compared as JSON Schema compares
/// them ([`same_number`]: `1` and `1.0` are one value).
pub(super) trait Listed: Clone {
    /// A hash under which values that are [`Self::same`] always fall together.
    fn key(&self) -> u64;
    /// Whether two values are the same listed value.
    fn same(&self, other: &Self) -> bool;
}

impl Listed for String {
    fn key(&self) -> u64 {
        rustc_hash::FxBuildHasher.hash_one(self.as_str())
    }
    fn same(&self, other: &Self) -> bool {
        self == other
    }
}

impl Listed for Number {
    /// Values [`same_number`] finds equal have equal `f64`s (`0.0` for `-0.0`), so that is
    /// the key; distinct integers beyond 2^53 may share one, and are told apart by `same`.
    fn key(&self) -> u64 {
        match self.as_f64() {
            // -0.0 too: a float pattern compares as `==` does.
            Some(0.0) => 0,
            Some(f) => f.to_bits(),
            None => u64::MAX,
        }
    }
    fn same(&self, other: &Self) -> bool {
        same_number(self, other)
    }
}

/// Positions of listed values by [`Listed::key`]: whether a value is among them costs
/// O(1), not a scan (an `enum` of 100,000 strings).
#[derive(Default)]
struct KeyIndex(HashMap<u64, SmallVec<[u32; 1]>>);

impl KeyIndex {
    /// The index of all of `values`.
    fn over<T: Listed>(values: &[T]) -> Self {
        let mut index = KeyIndex::default();
        index.0.reserve(values.len());
        for (i, v) in values.iter().enumerate() {
            index.0.entry(v.key()).or_default().push(i as u32);
        }
        index
    }

    /// Whether `values` (indexed here) has the same value as `v`.
    fn has<T: Listed>(&self, values: &[T], v: &T) -> bool {
        self.0
            .get(&v.key())
            .is_some_and(|at| at.iter().any(|&i| values[i as usize].same(v)))
    }

    /// Appends `v` to `values` (indexed here) unless the same value is there.
    fn push_new<T: Listed>(&mut self, values: &mut Vec<T>, v: T) {
        let at = self.0.entry(v.key()).or_default();
        if !at.iter().any(|&i| values[i as usize].same(&v)) {
            at.push(values.len() as u32);
            values.push(v);
        }
    }
}

/// `values` without repeats (the first of each), in order.
pub(super) fn dedup_values<T: Listed>(values: Vec<T>) -> Vec<T> {
    let mut index = KeyIndex::default();
    let mut out = Vec::with_capacity(values.len());
    for v in values {
        index.push_new(&mut out, v);
    }
    out
}

/// Listed values admitting either side's (`None`, unrestricted, absorbs), in first-seen
/// order.
fn union_lists<T: Listed>(x: Option<Vec<T>>, y: &Option<Vec<T>>) -> Option<Vec<T>> {
    let (mut xs, ys) = (x?, y.as_ref()?);
    let mut index = KeyIndex::over(&xs);
    for v in ys {
        if !index.has(&xs, v) {
            index.push_new(&mut xs, v.clone());
        }
    }
    Some(xs)
}

/// Listed values admitting any side's (`None`, unrestricted, absorbs), in first-seen
/// order.
fn union_many<'v, T: Listed + 'v>(
    lists: impl Iterator<Item = &'v Option<Vec<T>>>,
) -> Option<Vec<T>> {
    let mut out = Vec::new();
    let mut index = KeyIndex::default();
    for list in lists {
        for v in list.as_ref()? {
            if !index.has(&out, v) {
                index.push_new(&mut out, v.clone());
            }
        }
    }
    Some(out)
}

/// Listed values admitted by both sides (`None`, unrestricted, is the identity).
fn inter_lists<T: Listed>(x: Option<Vec<T>>, y: &Option<Vec<T>>) -> Option<Vec<T>> {
    match (x, y) {
        (Some(xs), Some(ys)) => {
            let index = KeyIndex::over(ys);
            Some(xs.into_iter().filter(|n| index.has(ys, n)).collect())
        }
        (Some(xs), None) => Some(xs),
        (None, Some(ys)) => Some(ys.clone()),
        (None, None) => None,
    }
}

/// The properties of `r` by name (the first of a name, as [`Record::prop`] finds).
fn props_by_name(r: &Record) -> HashMap<&str, ExprId> {
    let mut m: HashMap<&str, ExprId> = HashMap::default();
    m.reserve(r.props.len());
    for (n, e) in &r.props {
        m.entry(n.as_str()).or_insert(*e);
    }
    m
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
        range: if x.integer && y.integer {
            range_union(x.range, y.range)
        } else {
            None
        },
        values: union_lists(x.values, &y.values),
    }
}

fn union_strings(x: StrPart, y: &StrPart) -> StrPart {
    StrPart {
        lexical: lexical_union(x.lexical, y.lexical.clone()),
        values: union_lists(x.values, &y.values),
    }
}

/// The listed arrays and objects of every side, in first-seen order without repeats
/// (`None` when no side lists any).
fn union_listed<'p>(all: impl Iterator<Item = &'p Option<Vec<String>>>) -> Option<Vec<String>> {
    let mut out: Option<Vec<String>> = None;
    let mut seen: HashSet<String> = HashSet::default();
    for ls in all.flatten() {
        let out = out.get_or_insert_with(Vec::new);
        if seen.is_empty() && out.is_empty() {
            // The first side is already without repeats: no parse unless another follows.
            out.extend(ls.iter().cloned());
            continue;
        }
        if seen.is_empty() {
            seen.extend(out.iter().map(|l| listed_key(l)));
        }
        for l in ls {
            if seen.insert(listed_key(l)) {
                out.push(l.clone());
            }
        }
    }
    out
}

/// The key of a listed value's text under which equal values fall together.
pub(super) fn listed_key(text: &str) -> String {
    serde_json::from_str(text).map_or_else(|_| text.to_string(), |v| json_key(&v))
}

/// The listed arrays and objects both sides admit: each side's listed values the other
/// side lists too or admits by type (its array or object part; what that part asserts
/// inside the value is left to the validator).
fn inter_listed(a: &Parts, b: &Parts) -> Option<Vec<String>> {
    let by_type = |p: &Parts, l: &str| {
        p.any
            || if l.starts_with('[') {
                p.array.is_some()
            } else {
                p.object.is_some()
            }
    };
    let out: Vec<String> = match (&a.listed, &b.listed) {
        (None, None) => return None,
        (Some(ls), None) => ls.iter().filter(|l| by_type(b, l)).cloned().collect(),
        (None, Some(ls)) => ls.iter().filter(|l| by_type(a, l)).cloned().collect(),
        (Some(la), Some(lb)) => {
            let ka: HashSet<String> = la.iter().map(|l| listed_key(l)).collect();
            let kb: HashSet<String> = lb.iter().map(|l| listed_key(l)).collect();
            let mut seen: HashSet<String> = HashSet::default();
            let mut out = Vec::new();
            for (from, other, other_keys) in [(la, b, &kb), (lb, a, &ka)] {
                for l in from {
                    let key = listed_key(l);
                    if (other_keys.contains(&key) || by_type(other, l)) && seen.insert(key) {
                        out.push(l.clone());
                    }
                }
            }
            out
        }
    };
    (!out.is_empty()).then_some(out)
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
    let mut values = inter_lists(x.values, &y.values);
    if integer {
        retain_integers(&mut values);
    }
    let lower = lower_inter(x.lower, y.lower);
    let range = range_inter(x.range, y.range);
    match &values {
        Some(vs) if vs.is_empty() => None,
        _ => Some(NumPart {
            integer,
            values,
            lower,
            range,
        }),
    }
}

/// `None` when no listed value is left.
fn inter_strings(x: StrPart, y: &StrPart) -> Option<StrPart> {
    let values = inter_lists(x.values, &y.values);
    let lexical = lexical_inter(x.lexical, y.lexical.clone());
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

    /// Union of many shared parts at once (the branches of an `anyOf`), in time linear in
    /// their size: folding [`Self::union_rc`] would copy the growing value lists and object
    /// forms once per branch (1,000 branches of 100 `enum` values each). The same result
    /// as that fold.
    pub(super) fn union_all(&mut self, all: Vec<Arc<Parts>>) -> Arc<Parts> {
        if let Some(any) = all.iter().find(|p| p.any) {
            return any.clone();
        }
        let all: Vec<Arc<Parts>> = all.into_iter().filter(|p| !p.is_never()).collect();
        if all.len() <= 2 {
            return all
                .into_iter()
                .fold(Arc::new(Parts::never()), |a, b| self.union_rc(a, b));
        }
        let nums: Vec<&NumPart> = all.iter().filter_map(|p| p.number.as_ref()).collect();
        let number = (!nums.is_empty()).then(|| NumPart {
            integer: nums.iter().all(|n| n.integer),
            lower: nums.iter().map(|n| n.lower).reduce(lower_union).flatten(),
            range: if nums.iter().all(|n| n.integer) {
                nums.iter().map(|n| n.range).reduce(range_union).flatten()
            } else {
                None
            },
            values: union_many(nums.iter().map(|n| &n.values)),
        });
        let strs: Vec<&StrPart> = all.iter().filter_map(|p| p.string.as_ref()).collect();
        let string = (!strs.is_empty()).then(|| StrPart {
            lexical: strs
                .iter()
                .map(|s| s.lexical.clone())
                .reduce(lexical_union)
                .flatten(),
            values: union_many(strs.iter().map(|s| &s.values)),
        });
        let arrs: Vec<&ArrPart> = all.iter().filter_map(|p| p.array.as_ref()).collect();
        let array = (!arrs.is_empty()).then(|| self.union_arrays_all(&arrs));
        let objs: Vec<&ObjPart> = all.iter().filter_map(|p| p.object.as_ref()).collect();
        let object = (!objs.is_empty()).then(|| {
            let mut seen: HashSet<&Arc<Record>> = HashSet::default();
            let records = objs
                .iter()
                .flat_map(|o| &o.records)
                .filter(|r| seen.insert(r))
                .cloned()
                .collect();
            ObjPart {
                records,
                merged: None,
            }
        });
        let listed = union_listed(all.iter().map(|p| &p.listed));
        let mut out = Parts {
            any: false,
            null: all.iter().any(|p| p.null),
            bool_false: all.iter().any(|p| p.bool_false),
            bool_true: all.iter().any(|p| p.bool_true),
            number,
            string,
            array,
            object,
            listed,
        };
        self.settle_listed(&mut out);
        Arc::new(out)
    }

    /// Keeps [`Parts::listed`]'s invariant: listed arrays beside a free array part (listed
    /// objects beside an object part) are merged into it as any array (object), an
    /// over-approximation the validator completes.
    fn settle_listed(&mut self, p: &mut Parts) {
        let Some(ls) = p.listed.take() else { return };
        let (mut arrays, mut objects) = (false, false);
        let kept: Vec<String> = ls
            .into_iter()
            .filter(|l| {
                let array = l.starts_with('[');
                if array && p.array.is_some() {
                    arrays = true;
                    false
                } else if !array && p.object.is_some() {
                    objects = true;
                    false
                } else {
                    true
                }
            })
            .collect();
        if arrays {
            self.approximated = true;
            let any = ArrPart {
                prefix: Vec::new(),
                items: Some(ANY),
                min_items: 0,
                max_items: None,
            };
            p.array = p.array.take().map(|a| self.union_arrays(a, &any));
        }
        if objects {
            self.approximated = true;
            let origin = p
                .object
                .as_ref()
                .and_then(|o| o.records.first())
                .map(|r| r.origin.clone())
                .unwrap_or_default();
            // What the approximation lost may be declared properties: it offers
            // undeclared ones as before, to generation too.
            let any = ObjPart {
                records: vec![Arc::new(Record {
                    extras_declared: true,
                    ..Record::open(&origin)
                })],
                merged: None,
            };
            p.object = p.object.take().map(|o| union_objects(o, &any));
        }
        p.listed = (!kept.is_empty()).then_some(kept);
    }

    /// [`Self::union_arrays`] of many arrays at once.
    fn union_arrays_all(&mut self, arrs: &[&ArrPart]) -> ArrPart {
        let n = arrs.iter().map(|a| a.prefix.len()).max().unwrap_or(0);
        let prefix = (0..n)
            .map(|i| {
                let ids: Vec<ExprId> = arrs.iter().filter_map(|a| a.item_at(i)).collect();
                self.union(&ids)
            })
            .collect();
        let items: Vec<ExprId> = arrs.iter().filter_map(|a| a.items).collect();
        ArrPart {
            prefix,
            items: (!items.is_empty()).then(|| self.union(&items)),
            min_items: arrs.iter().map(|a| a.min_items).min().unwrap_or(0),
            // Unbounded if any is.
            max_items: arrs
                .iter()
                .map(|a| a.max_items)
                .try_fold(0, |m, x| x.map(|x| m.max(x))),
        }
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
        let listed = union_listed([&a.listed, &b.listed].into_iter());
        let mut out = Parts {
            any: false,
            null: a.null || b.null,
            bool_false: a.bool_false || b.bool_false,
            bool_true: a.bool_true || b.bool_true,
            number,
            string,
            array,
            object,
            listed,
        };
        self.settle_listed(&mut out);
        out
    }

    pub(super) fn inter_parts(&mut self, a: Parts, b: &Parts) -> Parts {
        if a.any {
            return b.clone();
        }
        if b.any {
            return a;
        }
        let listed = inter_listed(&a, b);
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
            listed,
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
        ArrPart::new(prefix, items, min_items, max_items)
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
        // A trivial record that allows undeclared properties explicitly passes that on.
        let with_declared = |r: &Arc<Record>, declared: bool| {
            if declared && r.extras.is_some() && !r.extras_declared {
                Arc::new(Record {
                    extras_declared: true,
                    ..(**r).clone()
                })
            } else {
                r.clone()
            }
        };
        if trivial(x) {
            return with_declared(y, x.extras_declared);
        }
        if trivial(y) {
            return with_declared(x, y.extras_declared);
        }
        // Names looked up in maps, not scanned (records of 10,000 properties); the first
        // property of a name counts, as in `Record::prop`.
        let (in_x, in_y) = (props_by_name(x), props_by_name(y));
        let mut props = Vec::new();
        for (name, ex) in &x.props {
            let e = match in_y.get(name.as_str()) {
                Some(&ey) => self.inter(&[*ex, ey]),
                None => *ex,
            };
            props.push((name.clone(), e));
        }
        for (name, ey) in &y.props {
            if !in_x.contains_key(name.as_str()) {
                props.push((name.clone(), *ey));
            }
        }
        let mut required = x.required.clone();
        let mut seen: HashSet<&str> = x.required.iter().map(String::as_str).collect();
        for r in &y.required {
            if seen.insert(r) {
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
            extras_declared: extras.is_some() && (x.extras_declared || y.extras_declared),
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
        // Per name, the records declaring it (by index, once each).
        let mut declaring: Vec<Vec<u32>> = Vec::new();
        for (ri, r) in records.iter().enumerate() {
            for (n, e) in &r.props {
                let i = *slot.entry(n.as_str()).or_insert_with(|| {
                    names.push(n.as_str());
                    members.push(Vec::new());
                    declaring.push(Vec::new());
                    names.len() - 1
                });
                // A repeated name counts once, as `Record::prop` finds the first.
                if declaring[i].last() != Some(&(ri as u32)) {
                    declaring[i].push(ri as u32);
                    members[i].push(*e);
                }
            }
        }
        // A record without the property may still have it as an undeclared one: each
        // distinct extras shape joins the names that some record having it lacks. Counted
        // per name, not pushed per (record, name) pair: 5,000 open records of 10 fields each
        // would make 250 million pairs.
        let mut extras: Vec<(ExprId, usize)> = Vec::new();
        let mut extras_at: HashMap<ExprId, usize> = HashMap::default();
        let mut extras_slot: Vec<Option<usize>> = Vec::with_capacity(records.len());
        for r in records {
            extras_slot.push(r.extras.map(|x| {
                let k = *extras_at.entry(x).or_insert_with(|| {
                    extras.push((x, 0));
                    extras.len() - 1
                });
                extras[k].1 += 1;
                k
            }));
        }
        let mut props = Vec::with_capacity(names.len());
        let mut lacking = vec![0usize; extras.len()];
        for ((n, m), decl) in names.iter().zip(&mut members).zip(&declaring) {
            lacking
                .iter_mut()
                .zip(&extras)
                .for_each(|(l, (_, total))| *l = *total);
            for &ri in decl {
                if let Some(k) = extras_slot[ri as usize] {
                    lacking[k] -= 1;
                }
            }
            for (&l, &(x, _)) in lacking.iter().zip(&extras) {
                if l > 0 {
                    m.push(x);
                }
            }
            let e = self.union(m);
            props.push((n.to_string(), e));
        }
        let required_by: Vec<std::collections::HashSet<&str, rustc_hash::FxBuildHasher>> = records
            .iter()
            .map(|r| r.required.iter().map(String::as_str).collect())
            .collect();
        let required = records[0]
            .required
            .iter()
            .filter(|n| required_by.iter().all(|req| req.contains(n.as_str())))
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
            extras_declared: records
                .iter()
                .any(|r| r.extras.is_some() && r.extras_declared),
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
    fn union_of_many_branches() {
        // More than two branches take `union_all`: the same as folding two at a time.
        let s = shapes(
            json!({"$defs": {"o": {"type": "object", "properties": {"x": {}}}}, "anyOf": [
                {"enum": ["a", "b", 1]},
                {"enum": ["b", "c", 1.0, 2]},
                {"type": "integer", "minimum": 1},
                {"type": "array", "prefixItems": [{"type": "string"}], "items": false, "minItems": 1},
                {"type": "array", "items": {"type": "null"}, "minItems": 2},
                {"$ref": "#/$defs/o"},
                {"$ref": "#/$defs/o"},
                {"type": "object", "properties": {"y": {"type": "null"}}},
            ]}),
        );
        let p = s.parts(s.root);
        assert_eq!(
            p.string.as_ref().unwrap().values.as_ref().unwrap(),
            &vec!["a", "b", "c"]
        );
        // A free integer absorbs the listed numbers.
        let n = p.number.as_ref().unwrap();
        assert!(n.values.is_none() && !n.integer && n.lower.is_none());
        let a = p.array.as_ref().unwrap();
        assert_eq!((a.prefix.len(), a.min_items), (1, 1));
        let first = s.parts(a.prefix[0]);
        assert!(first.string.is_some() && first.null);
        assert!(s.parts(a.items.unwrap()).null);
        // One object form counts once.
        assert_eq!(p.object.as_ref().unwrap().records.len(), 2);
    }

    #[test]
    fn merged_record_of_open_records() {
        let branches: Vec<_> = (0..500)
            .map(|i| json!({"type": "object", "properties": {format!("x{i}"): {"type": "string"}}, "required": [format!("x{i}")]}))
            .collect();
        let s = shapes(json!({"oneOf": branches}));
        let o = s.parts(s.root).object.as_ref().unwrap();
        let m = o.merged.as_ref().unwrap();
        assert_eq!(m.props.len(), 500);
        assert!(m.required.is_empty());
        // Each name is a string where declared, and anything where another record has it
        // as an undeclared property.
        assert!(m.props.iter().all(|(_, e)| s.parts(*e).any));
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
