//! Follow-set analysis: which keyed object fields are written open (without parentheses).

use super::first::{first_set, First};
use super::layout::{FieldMode, ObjLayout};
use crate::shape::{ExprId, Shapes};
use rustc_hash::FxHashMap as HashMap;
use std::collections::{BTreeMap, BTreeSet};

/// Whether an object written without parentheses can be told from `()` (its empty form):
/// its body must not start with `(`.
pub(crate) fn starts_plain(shapes: &Shapes, layout: &ObjLayout) -> bool {
    match layout {
        ObjLayout::Tagged { .. } => true,
        ObjLayout::Record(r) => match r
            .fields
            .iter()
            .find(|f| !matches!(f.mode, FieldMode::Const(_)))
        {
            Some(f) if f.mode == FieldMode::Positional && f.named => true,
            Some(f) if f.mode == FieldMode::Positional => {
                !first_set(shapes.parts(f.expr), &f.abbrev).contains(&First::LParen)
            }
            _ => r.fields.iter().all(|f| !f.first.contains(&First::LParen)),
        },
    }
}

/// The object layout of an object-only expression, if it may be written open (no parens).
pub(crate) fn open_layout<'n>(
    shapes: &Shapes,
    objects: &'n BTreeMap<ExprId, ObjLayout>,
    expr: ExprId,
) -> Option<&'n ObjLayout> {
    if !shapes.parts(expr).object_only() {
        return None;
    }
    objects.get(&expr).filter(|l| starts_plain(shapes, l))
}

/// Decide which keyed object fields are written without parentheses.
///
/// An open object ends where no token could continue it, so its continuation tokens (the
/// first tokens of its optional fields and, when it is open-ended, a quoted key) must not
/// be able to start anything that may follow it: the optional fields after it in its
/// parent, the parent's undeclared keys, and, when the parent is open too, whatever may
/// follow the parent. Follow sets are computed as if every candidate were open (a
/// fixpoint over the object graph); the real ones are subsets, so each decision is safe.
pub(super) fn mark_open(shapes: &Shapes, objects: &mut BTreeMap<ExprId, ObjLayout>) {
    let analysis = find_sites(shapes, objects);
    let open = analysis.choose_open();
    write_open(objects, analysis.sites, open);
}

/// A set of tokens, as bits numbered by [`TokenIds`].
#[derive(Debug, Clone, Default)]
struct Bits(Vec<u64>);

impl Bits {
    fn set(&mut self, i: usize) {
        if self.0.len() <= i / 64 {
            self.0.resize(i / 64 + 1, 0);
        }
        self.0[i / 64] |= 1 << (i % 64);
    }

    /// Adds the tokens of `b`; whether any was new.
    fn union(&mut self, b: &Bits) -> bool {
        if self.0.len() < b.0.len() {
            self.0.resize(b.0.len(), 0);
        }
        let mut changed = false;
        for (x, y) in self.0.iter_mut().zip(&b.0) {
            let n = *x | y;
            changed |= n != *x;
            *x = n;
        }
        changed
    }

    /// Whether the two sets share a token.
    fn meets(&self, b: &Bits) -> bool {
        self.0.iter().zip(&b.0).any(|(x, y)| x & y != 0)
    }
}

/// Tokens numbered in the order they are first seen.
#[derive(Default)]
struct TokenIds(HashMap<First, usize>);

impl TokenIds {
    fn id(&mut self, t: &First) -> usize {
        let n = self.0.len();
        *self.0.entry(t.clone()).or_insert(n)
    }
}

/// A keyed field whose object value may be written open.
struct Site {
    parent: ExprId,
    /// The record within the parent's layout (a tagged union's variant) and the field.
    variant: usize,
    field: usize,
    child: ExprId,
    /// The tokens that may follow the field within its record.
    local: Bits,
}

/// The candidate sites, and per object the tokens that may continue it (the first tokens
/// of its optional fields, and a quoted key when it is open-ended).
struct Analysis {
    sites: Vec<Site>,
    cont: BTreeMap<ExprId, Bits>,
}

/// Scan each record's optional fields backwards, collecting what may follow each field
/// within the record, and the keyed object fields that are candidates for being open.
fn find_sites(shapes: &Shapes, objects: &BTreeMap<ExprId, ObjLayout>) -> Analysis {
    let mut ids = TokenIds::default();
    let quoted = ids.id(&First::Quoted);
    let mut cont: BTreeMap<ExprId, Bits> = BTreeMap::new();
    let mut sites: Vec<Site> = Vec::new();
    // Objects continued by any word (bare map keys) are never open.
    let endless: BTreeSet<ExprId> = objects
        .iter()
        .filter(|(_, l)| l.records().iter().any(|r| r.bare_keys()))
        .map(|(&e, _)| e)
        .collect();
    for (&e, layout) in objects.iter() {
        let mut c = Bits::default();
        for (ri, r) in layout.records().into_iter().enumerate() {
            let mut suffix = Bits::default();
            if r.extras.is_some() {
                suffix.set(quoted);
            }
            for (fi, f) in r.fields.iter().enumerate().rev() {
                if !matches!(f.mode, FieldMode::Keyed | FieldMode::Keyless) {
                    continue;
                }
                if f.mode == FieldMode::Keyed
                    && !endless.contains(&f.expr)
                    && shapes.parts(f.expr).single_value().is_none()
                    && open_layout(shapes, objects, f.expr).is_some()
                {
                    sites.push(Site {
                        parent: e,
                        variant: ri,
                        field: fi,
                        child: f.expr,
                        local: suffix.clone(),
                    });
                }
                for t in &f.first {
                    suffix.set(ids.id(t));
                }
            }
            c.union(&suffix);
        }
        cont.insert(e, c);
    }
    Analysis { sites, cont }
}

impl Analysis {
    /// Open every candidate whose own parent's later fields cannot continue it; then,
    /// while an open object could be continued by what follows its (open) parent, close
    /// that parent's sites: inner objects are the more frequent, so they keep priority.
    fn choose_open(&self) -> Vec<bool> {
        let none = BTreeMap::new();
        let mut open: Vec<bool> = self.sites.iter().map(|s| !self.clash(s, &none)).collect();
        loop {
            let follow = self.follow_sets(&open);
            if !self.close_clashing(&mut open, &follow) {
                return open;
            }
        }
    }

    /// Whether the site's object could be continued by what may follow it: its record's
    /// later fields, or what may follow its parent.
    fn clash(&self, s: &Site, follow: &BTreeMap<ExprId, Bits>) -> bool {
        let Some(c) = self.cont.get(&s.child) else {
            return false;
        };
        c.meets(&s.local) || follow.get(&s.parent).is_some_and(|p| c.meets(p))
    }

    /// Follow sets of the objects written open, to a fixpoint.
    fn follow_sets(&self, open: &[bool]) -> BTreeMap<ExprId, Bits> {
        let mut follow: BTreeMap<ExprId, Bits> = BTreeMap::new();
        loop {
            let mut changed = false;
            for (s, _) in self.sites.iter().zip(open).filter(|(_, o)| **o) {
                let mut f = s.local.clone();
                if let Some(p) = follow.get(&s.parent) {
                    f.union(p);
                }
                changed |= follow.entry(s.child).or_default().union(&f);
            }
            if !changed {
                return follow;
            }
        }
    }

    /// For each open site that clashes, close the sites of its parent (or, when the parent
    /// is not open anywhere, the site itself); whether any site clashed.
    fn close_clashing(&self, open: &mut [bool], follow: &BTreeMap<ExprId, Bits>) -> bool {
        let mut closed_any = false;
        for k in 0..self.sites.len() {
            if !open[k] || !self.clash(&self.sites[k], follow) {
                continue;
            }
            let parent = self.sites[k].parent;
            let mut closed = false;
            for (j, s) in self.sites.iter().enumerate() {
                if s.child == parent && open[j] {
                    open[j] = false;
                    closed = true;
                }
            }
            if !closed {
                open[k] = false;
            }
            closed_any = true;
        }
        closed_any
    }
}

/// Record the decisions in the layouts.
fn write_open(objects: &mut BTreeMap<ExprId, ObjLayout>, sites: Vec<Site>, open: Vec<bool>) {
    for (s, open) in sites.into_iter().zip(open) {
        let field = objects
            .get_mut(&s.parent)
            .and_then(|l| l.record_mut(s.variant))
            .and_then(|r| r.fields.get_mut(s.field));
        if let Some(field) = field {
            field.open = open;
        }
    }
}
