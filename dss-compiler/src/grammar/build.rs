//! Notation -> grammar IR: one rule per value, object body, optional-field chain and
//! document line, named from where they are in the schema.

use super::names::{expr_name, RuleNames};
use super::terminal::is_word_char;
use super::{block_fields, Grammar, Rule, Terminal, G};
use crate::notation::{
    is_section, render_word, FieldLayout, FieldMode, Notation, ObjLayout, RecordLayout, RootLayout,
};
use crate::shape::{ArrPart, ExprId, Parts, Shapes};
use std::collections::{BTreeMap, HashMap};

fn seq(items: Vec<G>) -> G {
    let mut flat = Vec::new();
    for g in items {
        match g {
            G::Seq(xs) => flat.extend(xs),
            G::Lit(s) if s.is_empty() => {}
            g => flat.push(g),
        }
    }
    // Merge adjacent literals.
    let mut merged: Vec<G> = Vec::new();
    for g in flat {
        if let (Some(G::Lit(prev)), G::Lit(s)) = (merged.last_mut(), &g) {
            if !prev.ends_with(is_word_char) || !s.starts_with(is_word_char) {
                prev.push_str(s);
                continue;
            }
        }
        merged.push(g);
    }
    if merged.len() == 1 {
        merged.pop().unwrap_or(G::Lit(String::new()))
    } else {
        G::Seq(merged)
    }
}

fn lit(s: &str) -> G {
    G::Lit(s.to_string())
}

/// Alternatives of literals, longest first so PEG never stops at a prefix.
fn lit_alts(mut words: Vec<String>) -> G {
    words.sort_by(|a, b| b.len().cmp(&a.len()).then(a.cmp(b)));
    words.dedup();
    if words.len() == 1 {
        G::Lit(words.remove(0))
    } else {
        G::Alt(words.into_iter().map(G::Lit).collect())
    }
}

struct Builder<'a> {
    shapes: &'a Shapes,
    notation: &'a Notation,
    rules: Vec<Rule>,
    done: HashMap<String, String>,
    names: RuleNames,
    /// Body rule name -> the body with at least one element (None: always empty).
    nonempty: HashMap<String, Option<G>>,
}

impl Builder<'_> {
    fn fresh(&mut self, base: &str) -> String {
        self.names.fresh(base)
    }

    fn expr_name(&self, id: ExprId) -> String {
        expr_name(self.shapes, id)
    }

    fn add(&mut self, name: String, body: G, comment: Option<String>) {
        self.rules.push(Rule {
            name,
            body,
            comment,
        });
    }

    /// Rule for an inline value of `expr` (with a field's abbreviations).
    fn value(&mut self, expr: ExprId, abbrev: &BTreeMap<String, String>) -> G {
        self.value_as(expr, abbrev, false)
    }

    /// `quoted`: free strings only in quotes (keyless fields, which are recognised by their
    /// first token: a bare word there would read as a keyword).
    fn value_as(&mut self, expr: ExprId, abbrev: &BTreeMap<String, String>, quoted: bool) -> G {
        let expr = self.notation.canon[expr as usize];
        let p = self.shapes.parts(expr).clone();
        if p.any {
            return G::Term(Terminal::JsonValue);
        }
        // A scalar that is just one terminal is written in place (`number`, `string`).
        if p.array.is_none() && p.object.is_none() && !p.null && !p.bool_true && !p.bool_false {
            match (&p.number, &p.string) {
                (Some(n), None) if n.values.is_none() => return G::Term(Terminal::of_number(n)),
                (None, Some(s)) if s.values.is_none() => {
                    return G::Term(Terminal::of_string(s, quoted))
                }
                _ => {}
            }
        }
        let quoted = quoted && p.string.as_ref().is_some_and(|s| s.values.is_none());
        let key = format!("v{expr}:{abbrev:?}:{quoted}");
        if let Some(n) = self.done.get(&key) {
            return G::Rule(n.clone());
        }
        let name = self.fresh(&self.expr_name(expr));
        self.done.insert(key, name.clone());
        let mut alts = scalar_alts(&p, abbrev, quoted);
        if let Some(a) = &p.array {
            let inner = self.array_tail(a, 0);
            alts.push(match inner {
                Some(g) if a.min_items > 0 => seq(vec![lit("["), g, lit("]")]),
                Some(g) => seq(vec![lit("["), G::Opt(Box::new(g)), lit("]")]),
                None => lit("[]"),
            });
        }
        if p.object.is_some() {
            let body = self.body(expr);
            alts.push(seq(vec![lit("("), body, lit(")")]));
        }
        let body = match alts.len() {
            0 => G::Alt(Vec::new()),
            1 => alts.remove(0),
            _ => G::Alt(alts),
        };
        let comment = self.shapes.doc(expr).map(str::to_string);
        self.add(name.clone(), body, comment);
        G::Rule(name)
    }

    /// The items of an array from position `i` on (starting with the item at `i`); items
    /// below `min_items` are mandatory.
    fn array_tail(&mut self, a: &ArrPart, i: usize) -> Option<G> {
        let min = a.min_items as usize;
        if i < a.prefix.len() {
            let head = self.value(a.prefix[i], &BTreeMap::new());
            Some(match self.array_tail(a, i + 1) {
                Some(t) if i + 1 < min => seq(vec![head, lit(" "), t]),
                Some(t) => seq(vec![head, G::Opt(Box::new(seq(vec![lit(" "), t])))]),
                None => head,
            })
        } else {
            a.items.map(|it| {
                let v = self.value(it, &BTreeMap::new());
                at_least(v.clone(), seq(vec![lit(" "), v]), min.saturating_sub(i))
            })
        }
    }

    /// Rule for the body of an object (without parentheses).
    fn body(&mut self, expr: ExprId) -> G {
        let expr = self.notation.canon[expr as usize];
        let key = format!("b{expr}");
        if let Some(n) = self.done.get(&key) {
            return G::Rule(n.clone());
        }
        let name = self.fresh(&format!("{}_body", self.expr_name(expr)));
        self.done.insert(key, name.clone());
        let g = match self.notation.object(expr).cloned() {
            Some(ObjLayout::Record(r)) => self.record(&r, None, &name),
            Some(ObjLayout::Tagged { variants, .. }) => {
                let mut alts = Vec::new();
                for v in variants {
                    let tag = lit_alts(v.tags.iter().map(|(_, w)| w.clone()).collect());
                    let vname = self.fresh(&format!("{name}_{}", tag_label(&v.tags)));
                    let g = self.record(&v.record, Some(tag), &vname);
                    self.add(vname.clone(), g, None);
                    alts.push(G::Rule(vname));
                }
                G::Alt(alts)
            }
            None => G::Alt(Vec::new()),
        };
        // The body with at least one element: an open object's text when not `()`.
        let nonempty = match &g {
            G::Opt(inner) => Some((**inner).clone()),
            G::Lit(s) if s.is_empty() => None,
            _ => Some(G::Rule(name.clone())),
        };
        self.nonempty.insert(name.clone(), nonempty);
        self.add(name.clone(), g, None);
        G::Rule(name)
    }

    /// An object without parentheses (see `FieldLayout::open`): `()` when empty.
    fn open_value(&mut self, expr: ExprId) -> G {
        let body = self.body(expr);
        let nonempty = match &body {
            G::Rule(n) => self.nonempty.get(n).cloned().flatten(),
            _ => None,
        };
        match nonempty {
            Some(g) => G::Alt(vec![lit("()"), g]),
            None => lit("()"),
        }
    }

    fn field_slot(&mut self, f: &FieldLayout) -> G {
        match f.mode {
            FieldMode::Keyed => {
                if self.shapes.parts(f.expr).single_value().is_some() {
                    lit(&f.keyword)
                } else if f.open {
                    let v = self.open_value(f.expr);
                    seq(vec![lit(&f.keyword), lit(" "), v])
                } else {
                    let v = self.value(f.expr, &f.abbrev);
                    seq(vec![lit(&f.keyword), lit(" "), v])
                }
            }
            FieldMode::Keyless => self.value_as(f.expr, &f.abbrev, true),
            _ => self.value(f.expr, &f.abbrev),
        }
    }

    fn record(&mut self, r: &RecordLayout, tag: Option<G>, name: &str) -> G {
        let mut mandatory: Vec<G> = tag.into_iter().collect();
        let mut optional: Vec<G> = Vec::new();
        for f in &r.fields {
            match f.mode {
                FieldMode::Const(_) => {}
                FieldMode::Positional => {
                    let g = self.value_as(f.expr, &f.abbrev, f.quoted);
                    mandatory.push(g);
                }
                FieldMode::Keyed | FieldMode::Keyless => {
                    let g = self.field_slot(f);
                    optional.push(g);
                }
            }
        }
        // The chain R_j over optional slots, then the repeated undeclared properties.
        let mut next: Option<G> = None;
        if let Some(e) = r.extras {
            let v = self.value(e, &BTreeMap::new());
            // `"a":1,"b":2`; in a pure map a bare key follows a space: `a 1 b 2,"c d":3`.
            let quoted = seq(vec![G::Term(Terminal::String), lit(":"), v.clone()]);
            let (first, rest) = if r.bare_keys() {
                let bare = seq(vec![G::Term(Terminal::Bare), lit(" "), v]);
                (
                    G::Alt(vec![quoted.clone(), bare.clone()]),
                    G::Alt(vec![seq(vec![lit(","), quoted]), seq(vec![lit(" "), bare])]),
                )
            } else {
                (quoted.clone(), seq(vec![lit(","), quoted]))
            };
            let xname = self.fresh(&format!("{name}_more"));
            self.add(
                xname.clone(),
                seq(vec![first, G::Star(Box::new(rest))]),
                None,
            );
            next = Some(G::Rule(xname));
        }
        for (j, o) in optional.into_iter().enumerate().rev() {
            let g = match next.take() {
                Some(n) => G::Alt(vec![
                    seq(vec![o, G::Opt(Box::new(seq(vec![lit(" "), n.clone()])))]),
                    n,
                ]),
                None => o,
            };
            let rname = self.fresh(&format!("{name}_opt{j}"));
            self.add(rname.clone(), g, None);
            next = Some(G::Rule(rname));
        }
        if mandatory.is_empty() {
            match next {
                Some(n) => G::Opt(Box::new(n)),
                None => lit(""),
            }
        } else {
            let mut items = Vec::new();
            for (i, m) in mandatory.into_iter().enumerate() {
                if i > 0 {
                    items.push(lit(" "));
                }
                items.push(m);
            }
            if let Some(n) = next {
                items.push(G::Opt(Box::new(seq(vec![lit(" "), n]))));
            }
            seq(items)
        }
    }

    fn line_item(&mut self, expr: ExprId) -> G {
        if self.shapes.parts(expr).object_only() {
            self.body(expr)
        } else {
            self.value(expr, &BTreeMap::new())
        }
    }

    /// A block document: one line per field, plain lines first, then sections (see
    /// `Encoder::block`), then undeclared properties.
    fn block(&mut self) -> G {
        let root = self.shapes.root;
        let Some(ObjLayout::Record(r)) = self.notation.object(root).cloned() else {
            return G::Alt(Vec::new());
        };
        let mut items = Vec::new();
        for f in block_fields(self.shapes, &r) {
            let stmt = if is_section(self.shapes, f.expr) {
                let item = self.shapes.items_of(f.expr);
                let li = seq(vec![self.line_item(item), lit("\n")]);
                let min = self.shapes.min_items(f.expr);
                seq(vec![
                    lit(&format!("{}:\n", f.keyword)),
                    lines_at_least(li, min),
                ])
            } else {
                let v = if self.notation.opens_on_line(self.shapes, f.expr) {
                    self.open_value(f.expr)
                } else {
                    self.value(f.expr, &f.abbrev)
                };
                seq(vec![lit(&format!("{} ", f.keyword)), v, lit("\n")])
            };
            let sname = self.fresh(&format!("{}_line", f.keyword));
            let comment = self.shapes.doc(f.source).map(str::to_string);
            self.add(sname.clone(), stmt, comment);
            items.push(if f.mode == FieldMode::Positional {
                G::Rule(sname)
            } else {
                G::Opt(Box::new(G::Rule(sname)))
            });
        }
        if let Some(e) = r.extras {
            let v = self.value(e, &BTreeMap::new());
            items.push(G::Star(Box::new(seq(vec![
                G::Term(Terminal::String),
                lit(": "),
                v,
                lit("\n"),
            ]))));
        }
        seq(items)
    }

    fn document(&mut self) -> G {
        let root = self.shapes.root;
        match self.notation.root {
            RootLayout::Block => self.block(),
            // One-line documents: the final newline is optional (the encoder leaves it out).
            RootLayout::Line => {
                let b = self.body(root);
                seq(vec![b, G::Opt(Box::new(lit("\n")))])
            }
            RootLayout::Lines => {
                let item = self.shapes.items_of(root);
                let li = seq(vec![self.line_item(item), lit("\n")]);
                lines_at_least(li, self.shapes.min_items(root))
            }
            RootLayout::Value => {
                let v = self.value(root, &BTreeMap::new());
                seq(vec![v, G::Opt(Box::new(lit("\n")))])
            }
        }
    }
}

/// The scalar alternatives of a value: free numbers and strings as terminals, then the
/// words (`null`, `true`, `false`, enum values) longest first.
fn scalar_alts(p: &Parts, abbrev: &BTreeMap<String, String>, quoted: bool) -> Vec<G> {
    let mut alts = Vec::new();
    let mut words = Vec::new();
    if p.null {
        words.push("null".to_string());
    }
    if p.bool_true {
        words.push("true".to_string());
    }
    if p.bool_false {
        words.push("false".to_string());
    }
    if let Some(n) = &p.number {
        match &n.values {
            Some(vs) => words.extend(vs.iter().map(|v| v.to_string())),
            None => alts.push(G::Term(Terminal::of_number(n))),
        }
    }
    if let Some(s) = &p.string {
        match &s.values {
            Some(vs) => words.extend(vs.iter().map(|v| render_word(abbrev.get(v).unwrap_or(v)))),
            None => alts.push(G::Term(Terminal::of_string(s, quoted))),
        }
    }
    if !words.is_empty() {
        match lit_alts(words) {
            G::Alt(xs) => alts.extend(xs),
            g => alts.push(g),
        }
    }
    alts
}

/// Unrolled copies of a mandatory item; beyond this a grammar demands no more (it
/// over-approximates, as shapes do, and the validator has the last word).
const MAX_UNROLL: usize = 32;

/// `first rest*` with at least `min` items in all (`first` is the first item, `rest` each
/// later one with its separator). With `min == 0` the caller makes the whole optional.
fn at_least(first: G, rest: G, min: usize) -> G {
    let mut xs = vec![first];
    xs.extend(std::iter::repeat_n(
        rest.clone(),
        min.clamp(1, MAX_UNROLL) - 1,
    ));
    xs.push(G::Star(Box::new(rest)));
    seq(xs)
}

/// `line*` with at least `min` lines.
fn lines_at_least(line: G, min: usize) -> G {
    if min == 0 {
        G::Star(Box::new(line))
    } else {
        at_least(line.clone(), line, min)
    }
}

fn tag_label(tags: &[(String, String)]) -> String {
    tags.first().map(|(v, _)| v.clone()).unwrap_or_default()
}

/// Build the grammar of a notation.
pub fn build(shapes: &Shapes, notation: &Notation) -> Grammar {
    let mut b = Builder {
        shapes,
        notation,
        rules: Vec::new(),
        done: HashMap::new(),
        names: RuleNames::new(),
        nonempty: HashMap::new(),
    };
    let doc = b.document();
    let mut rules = vec![Rule {
        name: "document".into(),
        body: doc,
        comment: shapes.doc(shapes.root).map(str::to_string),
    }];
    rules.extend(b.rules);
    Grammar { rules }
}
