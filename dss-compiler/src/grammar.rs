//! Stage 5 — grammars. One grammar IR is built from the notation and printed as pest and
//! GBNF, so both describe exactly the language the codec reads and writes. A readable BNF
//! for prompts is printed from the notation directly (shorter, with the schema's
//! descriptions as comments, like the DSS paper's Appendix C).
//!
//! The IR is deterministic with one token of lookahead, so PEG (pest) and CFG (GBNF) read
//! it the same way. Optional fields in a fixed order use a chain of rules
//! (`R_j ::= o_j (" " R_j+1)? | R_j+1`) rather than `o? o? o?` chains, which are slow in
//! llama.cpp and need separators that depend on what was present.

use crate::notation::{
    is_section, is_word_char, render_word, FieldLayout, FieldMode, Notation, ObjLayout,
    RecordLayout, RootLayout,
};
use crate::shape::{Expr, ExprId, Shapes};
use std::collections::{BTreeMap, HashMap};
use std::fmt::Write;

/// A grammar expression.
#[derive(Debug, Clone, PartialEq)]
pub enum G {
    Lit(String),
    Rule(String),
    Seq(Vec<G>),
    Alt(Vec<G>),
    Opt(Box<G>),
    Star(Box<G>),
}

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

pub struct Rule {
    pub name: String,
    pub body: G,
    pub comment: Option<String>,
}

/// The grammar: rules in order, `document` first.
pub struct Grammar {
    pub rules: Vec<Rule>,
}

/// Shared terminals, written for each syntax.
const TERMINALS: &[&str] = &[
    "text",
    "text_nonempty",
    "bare",
    "string",
    "nonempty",
    "date",
    "date_time",
    "number",
    "nonneg_number",
    "integer",
    "natural",
    "positive",
    "json_value",
    "json_object",
    "json_array",
];

/// The terminal of a free number: bounds a grammar can say (`minimum` 0 or 1).
fn num_terminal(n: &crate::shape::NumPart) -> &'static str {
    use crate::shape::Lower;
    match (n.integer, n.lower) {
        (true, None) => "integer",
        (true, Some(Lower::NonNegative)) => "natural",
        (true, Some(Lower::Positive)) => "positive",
        (false, None) => "number",
        (false, Some(_)) => "nonneg_number",
    }
}

/// The terminal of a free string; `quoted`: never a bare word here.
fn str_terminal(s: &crate::shape::StrPart, quoted: bool) -> &'static str {
    use crate::shape::Lexical;
    match (s.lexical, quoted) {
        (None, true) => "string",
        (None, false) => "text",
        (Some(Lexical::NonEmpty), true) => "nonempty",
        (Some(Lexical::NonEmpty), false) => "text_nonempty",
        (Some(Lexical::Date), _) => "date",
        (Some(Lexical::DateTime), _) => "date_time",
    }
}

struct Builder<'a> {
    shapes: &'a Shapes,
    notation: &'a Notation,
    rules: Vec<Rule>,
    done: HashMap<String, String>,
    names: HashMap<String, usize>,
    /// Body rule name -> the body with at least one element (None: always empty).
    nonempty: HashMap<String, Option<G>>,
}

impl<'a> Builder<'a> {
    fn fresh(&mut self, base: &str) -> String {
        let mut base: String = base
            .chars()
            .map(|c| if c.is_ascii_alphanumeric() { c } else { '_' })
            .collect();
        while base.contains("__") {
            base = base.replace("__", "_");
        }
        let base = base.trim_matches('_').to_string();
        let base = if base.is_empty()
            || base.starts_with(|c: char| c.is_ascii_digit())
            || TERMINALS.contains(&base.as_str())
            || base == "document"
            || base == "root"
            || base == "WCH"
        {
            format!("r_{base}")
        } else {
            base
        };
        // `names` holds every name handed out; a numbered name may itself clash with a
        // schema name (`scheme_2`), so count on until a free one.
        let mut n = self.names.get(&base).copied().unwrap_or(0);
        loop {
            n += 1;
            let candidate = if n == 1 {
                base.clone()
            } else {
                format!("{base}_{n}")
            };
            if !self.names.contains_key(&candidate) {
                self.names.insert(base.clone(), n);
                self.names.insert(candidate.clone(), 1);
                return candidate;
            }
        }
    }

    /// A readable name for an expression, from where it is in the schema.
    fn expr_name(&self, id: ExprId) -> String {
        match &self.shapes.exprs[id as usize] {
            Expr::Node(p) => {
                let segs: Vec<&str> = p.split('/').filter(|s| !s.is_empty()).collect();
                let mut name = String::new();
                let mut i = segs.len();
                // Walk back to the last named thing: a definition or a property.
                while i > 0 {
                    i -= 1;
                    let s = segs[i];
                    if i > 0
                        && matches!(
                            segs[i - 1],
                            "$defs" | "definitions" | "properties" | "patternProperties"
                        )
                    {
                        name = if name.is_empty() {
                            s.to_string()
                        } else {
                            format!("{s}_{name}")
                        };
                        break;
                    }
                    if !matches!(
                        s,
                        "items"
                            | "anyOf"
                            | "oneOf"
                            | "allOf"
                            | "prefixItems"
                            | "additionalProperties"
                    ) && s.parse::<usize>().is_err()
                    {
                        continue;
                    }
                    let label = match s {
                        "items" | "prefixItems" => "item",
                        "additionalProperties" => "value",
                        s if s.parse::<usize>().is_ok() => s,
                        _ => continue,
                    };
                    name = if name.is_empty() {
                        label.to_string()
                    } else {
                        format!("{label}_{name}")
                    };
                }
                if name.is_empty() {
                    "top".into()
                } else {
                    name.replace('~', "_")
                }
            }
            _ => format!("alt{id}"),
        }
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
            return G::Rule("json_value".into());
        }
        // A scalar that is just one terminal is written in place (`number`, `string`).
        if p.array.is_none() && p.object.is_none() && !p.null && !p.bool_true && !p.bool_false {
            match (&p.number, &p.string) {
                (Some(n), None) if n.values.is_none() => return G::Rule(num_terminal(n).into()),
                (None, Some(s)) if s.values.is_none() => {
                    return G::Rule(str_terminal(s, quoted).into())
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
                None => alts.push(G::Rule(num_terminal(n).into())),
            }
        }
        if let Some(s) = &p.string {
            match &s.values {
                Some(vs) => {
                    words.extend(vs.iter().map(|v| render_word(abbrev.get(v).unwrap_or(v))))
                }
                None => alts.push(G::Rule(str_terminal(s, quoted).into())),
            }
        }
        if !words.is_empty() {
            match lit_alts(words) {
                G::Alt(xs) => alts.extend(xs),
                g => alts.push(g),
            }
        }
        if let Some(a) = &p.array {
            // The items from position `i` on (starting with the item at `i`); items below
            // `min_items` are mandatory.
            fn tail(b: &mut Builder, a: &crate::shape::ArrPart, i: usize) -> Option<G> {
                let min = a.min_items as usize;
                if i < a.prefix.len() {
                    let head = b.value(a.prefix[i], &BTreeMap::new());
                    Some(match tail(b, a, i + 1) {
                        Some(t) if i + 1 < min => seq(vec![head, lit(" "), t]),
                        Some(t) => seq(vec![head, G::Opt(Box::new(seq(vec![lit(" "), t])))]),
                        None => head,
                    })
                } else {
                    a.items.map(|it| {
                        let v = b.value(it, &BTreeMap::new());
                        at_least(v.clone(), seq(vec![lit(" "), v]), min.saturating_sub(i))
                    })
                }
            }
            let inner = tail(self, a, 0);
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
                for (k, v) in variants.iter().enumerate() {
                    let tag = lit_alts(v.tags.iter().map(|(_, w)| w.clone()).collect());
                    let vname = self.fresh(&format!("{name}_{}", tag_label(&v.tags)));
                    let g = self.record(&v.record, Some(tag), &vname);
                    let _ = k;
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
            let quoted = seq(vec![G::Rule("string".into()), lit(":"), v.clone()]);
            let (first, rest) = if r.bare_keys() {
                let bare = seq(vec![G::Rule("bare".into()), lit(" "), v]);
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

    fn document(&mut self) -> G {
        let root = self.shapes.root;
        match self.notation.root {
            RootLayout::Block => {
                let Some(ObjLayout::Record(r)) = self.notation.object(root).cloned() else {
                    return G::Alt(Vec::new());
                };
                let mut items = Vec::new();
                // Plain lines first, then sections (see `Encoder::block`).
                let (sections, plain): (Vec<&FieldLayout>, Vec<&FieldLayout>) = r
                    .fields
                    .iter()
                    .partition(|f| is_section(self.shapes, f.expr));
                for f in plain.into_iter().chain(sections) {
                    if matches!(f.mode, FieldMode::Const(_)) {
                        continue;
                    }
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
                        G::Rule("string".into()),
                        lit(": "),
                        v,
                        lit("\n"),
                    ]))));
                }
                seq(items)
            }
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
        names: HashMap::new(),
        nonempty: HashMap::new(),
    };
    for t in TERMINALS {
        b.names.insert(t.to_string(), 1);
    }
    let doc = b.document();
    let mut rules = vec![Rule {
        name: "document".into(),
        body: doc,
        comment: shapes.doc(shapes.root).map(str::to_string),
    }];
    rules.extend(b.rules);
    Grammar { rules }
}

// ---------------------------------------------------------------------------------------
// Printers

fn uses(g: &G, name: &str) -> bool {
    match g {
        G::Rule(n) => n == name,
        G::Lit(_) => false,
        G::Seq(xs) | G::Alt(xs) => xs.iter().any(|x| uses(x, name)),
        G::Opt(x) | G::Star(x) => uses(x, name),
    }
}

impl Grammar {
    fn uses_terminal(&self, t: &str) -> bool {
        self.rules.iter().any(|r| uses(&r.body, t))
    }

    /// Which terminals are needed (json_value pulls in the others it uses).
    fn terminals(&self) -> Vec<&'static str> {
        let json = self.uses_terminal("json_value");
        TERMINALS
            .iter()
            .copied()
            .filter(|t| match *t {
                "json_value" | "json_object" | "json_array" => json,
                "bare" => {
                    self.uses_terminal("text")
                        || self.uses_terminal("text_nonempty")
                        || self.uses_terminal(t)
                }
                "string" => json || self.uses_terminal(t) || self.uses_terminal("text"),
                "nonempty" => self.uses_terminal(t) || self.uses_terminal("text_nonempty"),
                "number" => json || self.uses_terminal(t),
                _ => self.uses_terminal(t),
            })
            .collect()
    }

    pub fn to_pest(&self) -> String {
        let mut out = String::from(
            "// Generated by dss from a JSON Schema. Start rule: `document`.\n\
             // Elements are separated by exactly one space; lines end with \"\\n\".\n\n",
        );
        for (i, r) in self.rules.iter().enumerate() {
            if let Some(c) = &r.comment {
                for line in c.lines() {
                    let _ = writeln!(out, "// {line}");
                }
            }
            let body = print_expr(&r.body, 0, &PEST);
            if i == 0 {
                let _ = writeln!(out, "document = {{ SOI ~ {body} ~ EOI }}");
            } else {
                let _ = writeln!(out, "{} = {{ {body} }}", r.name);
            }
        }
        out.push_str("\nWCH = _{ ASCII_ALPHANUMERIC | \"_\" | \"$\" | \".\" | \"-\" | \"/\" }\n");
        for t in self.terminals() {
            out.push_str(match t {
                "text" => "text = { string | bare }\n",
                "text_nonempty" => "text_nonempty = { nonempty | bare }\n",
                "nonempty" => "nonempty = @{ \"\\\"\" ~ (!(\"\\\"\" | \"\\\\\" | '\\u{00}'..'\\u{1F}') ~ ANY | \"\\\\\" ~ (\"\\\"\" | \"\\\\\" | \"/\" | \"b\" | \"f\" | \"n\" | \"r\" | \"t\" | \"u\" ~ ASCII_HEX_DIGIT{4}))+ ~ \"\\\"\" }\n",
                "date" => "date = @{ \"\\\"\" ~ ASCII_DIGIT{4} ~ \"-\" ~ ASCII_DIGIT{2} ~ \"-\" ~ ASCII_DIGIT{2} ~ \"\\\"\" }\n",
                "date_time" => "date_time = @{ \"\\\"\" ~ ASCII_DIGIT{4} ~ \"-\" ~ ASCII_DIGIT{2} ~ \"-\" ~ ASCII_DIGIT{2} ~ (\"T\" | \"t\" | \" \") ~ ASCII_DIGIT{2} ~ \":\" ~ ASCII_DIGIT{2} ~ \":\" ~ ASCII_DIGIT{2} ~ (\".\" ~ ASCII_DIGIT+)? ~ (\"Z\" | \"z\" | (\"+\" | \"-\") ~ ASCII_DIGIT{2} ~ \":\" ~ ASCII_DIGIT{2}) ~ \"\\\"\" }\n",
                "nonneg_number" => "nonneg_number = @{ (\"0\" | ASCII_NONZERO_DIGIT ~ ASCII_DIGIT*) ~ (\".\" ~ ASCII_DIGIT+)? ~ ((\"e\" | \"E\") ~ (\"+\" | \"-\")? ~ ASCII_DIGIT+)? }\n",
                "natural" => "natural = @{ (\"0\" | ASCII_NONZERO_DIGIT ~ ASCII_DIGIT*) ~ (\".\" ~ \"0\"+)? ~ ((\"e\" | \"E\") ~ \"+\"? ~ ASCII_DIGIT+)? }\n",
                "positive" => "positive = @{ ASCII_NONZERO_DIGIT ~ ASCII_DIGIT* ~ (\".\" ~ \"0\"+)? ~ ((\"e\" | \"E\") ~ \"+\"? ~ ASCII_DIGIT+)? }\n",
                "bare" => "bare = @{ (ASCII_ALPHA | \"_\" | \"$\") ~ WCH* }\n",
                "string" => "string = @{ \"\\\"\" ~ (!(\"\\\"\" | \"\\\\\" | '\\u{00}'..'\\u{1F}') ~ ANY | \"\\\\\" ~ (\"\\\"\" | \"\\\\\" | \"/\" | \"b\" | \"f\" | \"n\" | \"r\" | \"t\" | \"u\" ~ ASCII_HEX_DIGIT{4}))* ~ \"\\\"\" }\n",
                "number" => "number = @{ \"-\"? ~ (\"0\" | ASCII_NONZERO_DIGIT ~ ASCII_DIGIT*) ~ (\".\" ~ ASCII_DIGIT+)? ~ ((\"e\" | \"E\") ~ (\"+\" | \"-\")? ~ ASCII_DIGIT+)? }\n",
                "integer" => "integer = @{ \"-\"? ~ (\"0\" | ASCII_NONZERO_DIGIT ~ ASCII_DIGIT*) ~ (\".\" ~ \"0\"+)? ~ ((\"e\" | \"E\") ~ \"+\"? ~ ASCII_DIGIT+)? }\n",
                "json_value" => "json_value = { json_object | json_array | string | number | \"true\" | \"false\" | \"null\" }\n",
                "json_object" => "json_object = { \"{\" ~ (string ~ \":\" ~ json_value ~ (\",\" ~ string ~ \":\" ~ json_value)*)? ~ \"}\" }\n",
                "json_array" => "json_array = { \"[\" ~ (json_value ~ (\",\" ~ json_value)*)? ~ \"]\" }\n",
                _ => "",
            });
        }
        out
    }

    pub fn to_gbnf(&self) -> String {
        let mut out = String::from("# Generated by dss from a JSON Schema. Start rule: root.\n\n");
        for (i, r) in self.rules.iter().enumerate() {
            let name = if i == 0 {
                "root".to_string()
            } else {
                gbnf_name(&r.name)
            };
            let _ = writeln!(out, "{name} ::= {}", print_expr(&r.body, 0, &GBNF));
        }
        out.push('\n');
        for t in self.terminals() {
            out.push_str(match t {
                "text" => "text ::= string | bare\n",
                "text_nonempty" => "text-nonempty ::= nonempty | bare\n",
                "nonempty" => "nonempty ::= \"\\\"\" ( [^\"\\\\\\x00-\\x1F] | \"\\\\\" ( [\"\\\\/bfnrt] | \"u\" [0-9a-fA-F]{4} ) )+ \"\\\"\"\n",
                "date" => "date ::= \"\\\"\" [0-9]{4} \"-\" [0-9]{2} \"-\" [0-9]{2} \"\\\"\"\n",
                "date_time" => "date-time ::= \"\\\"\" [0-9]{4} \"-\" [0-9]{2} \"-\" [0-9]{2} [Tt ] [0-9]{2} \":\" [0-9]{2} \":\" [0-9]{2} ( \".\" [0-9]+ )? ( [Zz] | [-+] [0-9]{2} \":\" [0-9]{2} ) \"\\\"\"\n",
                "nonneg_number" => "nonneg-number ::= ( \"0\" | [1-9] [0-9]* ) ( \".\" [0-9]+ )? ( [eE] [-+]? [0-9]+ )?\n",
                "natural" => "natural ::= ( \"0\" | [1-9] [0-9]* ) ( \".\" \"0\"+ )? ( [eE] \"+\"? [0-9]+ )?\n",
                "positive" => "positive ::= [1-9] [0-9]* ( \".\" \"0\"+ )? ( [eE] \"+\"? [0-9]+ )?\n",
                "bare" => "bare ::= [A-Za-z_$] [A-Za-z0-9_$./-]*\n",
                "string" => "string ::= \"\\\"\" ( [^\"\\\\\\x00-\\x1F] | \"\\\\\" ( [\"\\\\/bfnrt] | \"u\" [0-9a-fA-F]{4} ) )* \"\\\"\"\n",
                "number" => "number ::= \"-\"? ( \"0\" | [1-9] [0-9]* ) ( \".\" [0-9]+ )? ( [eE] [-+]? [0-9]+ )?\n",
                "integer" => "integer ::= \"-\"? ( \"0\" | [1-9] [0-9]* ) ( \".\" \"0\"+ )? ( [eE] \"+\"? [0-9]+ )?\n",
                "json_value" => "json-value ::= json-object | json-array | string | number | \"true\" | \"false\" | \"null\"\n",
                "json_object" => "json-object ::= \"{\" ( string \":\" json-value ( \",\" string \":\" json-value )* )? \"}\"\n",
                "json_array" => "json-array ::= \"[\" ( json-value ( \",\" json-value )* )? \"]\"\n",
                _ => "",
            });
        }
        out
    }
}

/// A double-quoted grammar literal with C-style escapes for `"`, `\\`, `\n`, `\r` and
/// `\t`; `other` escapes any further character it returns text for (each grammar syntax
/// writes the remaining control characters its own way).
pub fn quote_lit(s: &str, other: impl Fn(char) -> Option<String>) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c => match other(c) {
                Some(e) => out.push_str(&e),
                None => out.push(c),
            },
        }
    }
    out.push('"');
    out
}

fn pest_lit(s: &str) -> String {
    let out = quote_lit(s, |c| {
        ((c as u32) < 0x20).then(|| format!("\\u{{{:02X}}}", c as u32))
    });
    // A literal ending in a word character must end at a word boundary, or PEG would
    // accept a prefix of a longer word or number.
    if s.ends_with(is_word_char) {
        format!("({out} ~ !WCH)")
    } else {
        out
    }
}

/// What differs between the grammar syntaxes the IR is printed in.
struct Syntax {
    lit: fn(&str) -> String,
    rule: fn(&str) -> String,
    seq_sep: &'static str,
    /// An alternative that matches nothing.
    never: &'static str,
}

const PEST: Syntax = Syntax {
    lit: pest_lit,
    rule: str::to_string,
    seq_sep: " ~ ",
    never: "!ANY ~ ANY",
};

/// In GBNF a character class that matches nothing is not portable; a NUL byte is never
/// valid shorthand.
const GBNF: Syntax = Syntax {
    lit: gbnf_lit,
    rule: gbnf_name,
    seq_sep: " ",
    never: "[\\x00] [\\x00]",
};

fn print_expr(g: &G, prec: u8, sx: &Syntax) -> String {
    let group = |s: String, at: u8| if prec > at { format!("({s})") } else { s };
    match g {
        G::Lit(s) => (sx.lit)(s),
        G::Rule(n) => (sx.rule)(n),
        G::Seq(xs) => group(
            xs.iter()
                .map(|x| print_expr(x, 2, sx))
                .collect::<Vec<_>>()
                .join(sx.seq_sep),
            1,
        ),
        G::Alt(xs) if xs.is_empty() => sx.never.to_string(),
        G::Alt(xs) => group(
            xs.iter()
                .map(|x| print_expr(x, 1, sx))
                .collect::<Vec<_>>()
                .join(" | "),
            0,
        ),
        G::Opt(x) => format!("{}?", print_expr(x, 3, sx)),
        G::Star(x) => format!("{}*", print_expr(x, 3, sx)),
    }
}

fn gbnf_name(n: &str) -> String {
    n.replace('_', "-")
}

fn gbnf_lit(s: &str) -> String {
    quote_lit(s, |c| {
        ((c as u32) < 0x20).then(|| format!("\\x{:02X}", c as u32))
    })
}

// ---------------------------------------------------------------------------------------
// Readable BNF for prompts

/// A free string that must be written quoted: `<"string">`.
fn quoted_ref(v: String) -> String {
    if v == "<string>" {
        "<\"string\">".into()
    } else {
        v
    }
}

/// `x*`, `x+` or `x{n,}`: at least `min` copies of `x`, in the readable grammar.
fn repeat_ref(x: &str, min: usize) -> String {
    match min {
        0 => format!("{x}*"),
        1 => format!("{x}+"),
        n => format!("{x}{{{n},}}"),
    }
}

/// A readable CFG of the notation with the schema's descriptions as comments.
pub fn readable(shapes: &Shapes, notation: &Notation) -> String {
    let mut p = Readable {
        shapes,
        notation,
        out: Vec::new(),
        done: HashMap::new(),
        queue: Vec::new(),
        names: HashMap::new(),
    };
    let header = "# Shorthand notation (BNF). Lines starting with # are comments.\n\
                  # Elements are separated by one space. ( ) is an object, [ ] a list; [x] in a rule\n\
                  # means x is optional; x* means zero or more x, x+ one or more, x{n,} n or more. A <string> is \"double-quoted\", or\n\
                  # bare when it is one word (letters, digits, _ $ . - /; starting with a letter);\n\
                  # a <\"string\"> is always quoted. Words from a list of choices are written bare.\n\
                  # <json> is compact JSON. An object right after its keyword has no ( ): it ends\n\
                  # where its own fields end (an empty one is written ()).\n";
    let root = shapes.root;
    let doc = match notation.root {
        RootLayout::Block => {
            let mut lines = Vec::new();
            if let Some(ObjLayout::Record(r)) = notation.object(root) {
                let (sections, plain): (Vec<&FieldLayout>, Vec<&FieldLayout>) =
                    r.fields.iter().partition(|f| is_section(shapes, f.expr));
                for f in plain.into_iter().chain(sections) {
                    if matches!(f.mode, FieldMode::Const(_)) {
                        continue;
                    }
                    let desc = shapes
                        .doc(f.source)
                        .map(|d| format!("# {}: {}\n", f.keyword, one_line(d)))
                        .unwrap_or_default();
                    let stmt = if is_section(shapes, f.expr) {
                        let item = shapes.items_of(f.expr);
                        let li = p.line_item_ref(item);
                        let lines = repeat_ref(&format!("({li} \\n)"), shapes.min_items(f.expr));
                        format!("{}:\\n {lines}", f.keyword)
                    } else {
                        let v = if notation.opens_on_line(shapes, f.expr) {
                            p.body_ref(f.expr)
                        } else {
                            p.value_ref(f.expr, &f.abbrev)
                        };
                        format!("{} {v} \\n", f.keyword)
                    };
                    let stmt = if f.mode == FieldMode::Positional {
                        stmt
                    } else {
                        format!("[{stmt}]")
                    };
                    lines.push(format!("{desc}<Document> ::= ... {stmt}"));
                }
                let body: Vec<String> = lines
                    .iter()
                    .map(|l| l.rsplit("... ").next().unwrap_or("").to_string())
                    .collect();
                let mut s = String::new();
                for l in &lines {
                    if let Some((d, _)) = l.split_once("<Document>") {
                        s.push_str(d);
                    }
                }
                let _ = write!(s, "<Document> ::= {}", body.join("\n    "));
                if r.extras.is_some() {
                    s.push_str("\n    (\"other key\": <json> \\n)*");
                }
                s
            } else {
                String::new()
            }
        }
        RootLayout::Line => format!("<Document> ::= {} [\\n]", p.body_ref(root)),
        RootLayout::Lines => {
            let item = shapes.items_of(root);
            let line = format!("({} \\n)", p.line_item_ref(item));
            format!(
                "<Document> ::= {}",
                repeat_ref(&line, shapes.min_items(root))
            )
        }
        RootLayout::Value => format!(
            "<Document> ::= {} [\\n]",
            p.value_ref(root, &BTreeMap::new())
        ),
    };
    while let Some(job) = p.queue.pop() {
        p.emit(job);
    }
    p.out.sort_by_key(|(i, _)| *i);
    let mut body = doc;
    body.push('\n');
    for (_, r) in p.out {
        body.push('\n');
        body.push_str(&r);
    }
    let mut out = String::from(header);
    // Only the terminals this grammar uses are explained (prompt tokens are not free).
    for (terms, what) in [
        (
            &["natural>", "positive>"][..],
            "<natural> is an integer >= 0, <positive> one >= 1",
        ),
        (&["number>=0>"], "<number>=0> is a number >= 0"),
        (
            &["date>", "date-time>"],
            "<date> is \"YYYY-MM-DD\", <date-time> \"YYYY-MM-DDThh:mm:ssZ\"",
        ),
    ] {
        if terms.iter().any(|t| body.contains(t)) {
            let _ = writeln!(out, "# {what}.");
        }
    }
    if let Some(d) = shapes.doc(root) {
        let _ = writeln!(out, "# {}", one_line(d));
    }
    out.push_str(&body);
    out
}

/// A free number in the readable grammar.
fn num_ref(n: &crate::shape::NumPart) -> &'static str {
    match num_terminal(n) {
        "natural" => "<natural>",
        "positive" => "<positive>",
        "nonneg_number" => "<number>=0>",
        "integer" => "<integer>",
        _ => "<number>",
    }
}

/// A free string in the readable grammar (a non-empty one reads as any string).
fn str_ref(s: &crate::shape::StrPart) -> &'static str {
    match str_terminal(s, false) {
        "date" => "<date>",
        "date_time" => "<date-time>",
        _ => "<string>",
    }
}

fn one_line(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

enum Job {
    Value(ExprId, BTreeMap<String, String>, String, usize),
    Body(ExprId, String, usize),
}

struct Readable<'a> {
    shapes: &'a Shapes,
    notation: &'a Notation,
    out: Vec<(usize, String)>,
    done: HashMap<String, String>,
    queue: Vec<Job>,
    names: HashMap<String, usize>,
}

impl Readable<'_> {
    fn name(&mut self, expr: ExprId, suffix: &str) -> String {
        let b = Builder {
            shapes: self.shapes,
            notation: self.notation,
            rules: Vec::new(),
            done: HashMap::new(),
            names: HashMap::new(),
            nonempty: HashMap::new(),
        };
        let base = format!("{}{suffix}", b.expr_name(expr));
        let mut c: String = base
            .chars()
            .map(|c| {
                if c.is_ascii_alphanumeric() || c == '_' {
                    c
                } else {
                    '_'
                }
            })
            .collect();
        if let Some(f) = c.get_mut(0..1) {
            f.make_ascii_uppercase();
        }
        let n = self.names.entry(c.clone()).or_insert(0);
        *n += 1;
        if *n > 1 {
            c = format!("{c}{n}");
        }
        c
    }

    /// Inline text for simple values, or a reference to a rule.
    fn value_ref(&mut self, expr: ExprId, abbrev: &BTreeMap<String, String>) -> String {
        let expr = self.notation.canon[expr as usize];
        let p = self.shapes.parts(expr);
        if p.any {
            return "<json>".into();
        }
        let key = format!("v{expr}:{abbrev:?}");
        if let Some(n) = self.done.get(&key) {
            return format!("<{n}>");
        }
        // Scalars without choices are written in place.
        let mut simple = Vec::new();
        let mut only_simple = p.array.is_none() && p.object.is_none();
        if let Some(n) = &p.number {
            if n.values.is_some() {
                only_simple = false;
            } else {
                simple.push(num_ref(n));
            }
        }
        if let Some(s) = &p.string {
            if s.values.is_some() {
                only_simple = false;
            } else {
                simple.push(str_ref(s));
            }
        }
        if p.null {
            simple.push("null");
        }
        if p.bool_true && p.bool_false {
            simple.push("true | false");
        } else if p.bool_true {
            simple.push("true");
        } else if p.bool_false {
            simple.push("false");
        }
        if only_simple && simple.len() == 1 {
            return simple[0].to_string();
        }
        let name = self.name(expr, "");
        self.done.insert(key, name.clone());
        let order = self.done.len();
        self.queue
            .push(Job::Value(expr, abbrev.clone(), name.clone(), order));
        format!("<{name}>")
    }

    fn body_ref(&mut self, expr: ExprId) -> String {
        let expr = self.notation.canon[expr as usize];
        let key = format!("b{expr}");
        if let Some(n) = self.done.get(&key) {
            return format!("<{n}>");
        }
        let name = self.name(expr, "");
        self.done.insert(key, name.clone());
        let order = self.done.len();
        self.queue.push(Job::Body(expr, name.clone(), order));
        format!("<{name}>")
    }

    fn line_item_ref(&mut self, expr: ExprId) -> String {
        if self.shapes.parts(expr).object_only() {
            self.body_ref(expr)
        } else {
            self.value_ref(expr, &BTreeMap::new())
        }
    }

    fn emit(&mut self, job: Job) {
        match job {
            Job::Value(expr, abbrev, name, order) => {
                let p = self.shapes.parts(expr).clone();
                let mut alts: Vec<String> = Vec::new();
                if p.null {
                    alts.push("null".into());
                }
                if p.bool_true {
                    alts.push("true".into());
                }
                if p.bool_false {
                    alts.push("false".into());
                }
                if let Some(n) = &p.number {
                    match &n.values {
                        Some(vs) => alts.extend(vs.iter().map(|v| v.to_string())),
                        None => alts.push(num_ref(n).into()),
                    }
                }
                if let Some(s) = &p.string {
                    match &s.values {
                        Some(vs) => {
                            alts.extend(vs.iter().map(|v| render_word(abbrev.get(v).unwrap_or(v))))
                        }
                        None => alts.push(str_ref(s).into()),
                    }
                }
                if let Some(a) = &p.array {
                    let mut parts: Vec<String> = Vec::new();
                    let min = a.min_items as usize;
                    for (i, e) in a.prefix.clone().into_iter().enumerate() {
                        let v = self.value_ref(e, &BTreeMap::new());
                        parts.push(if i < min { v } else { format!("[{v}]") });
                    }
                    if let Some(it) = a.items {
                        let v = self.value_ref(it, &BTreeMap::new());
                        parts.push(repeat_ref(&v, min.saturating_sub(a.prefix.len())));
                    }
                    alts.push(format!("\"[\" {} \"]\"", parts.join(" ")));
                }
                if p.object.is_some() {
                    let b = self.body_ref(expr);
                    alts.push(format!("\"(\" {b} \")\""));
                }
                let doc = self
                    .shapes
                    .doc(expr)
                    .map(|d| format!("# {}\n", one_line(d)))
                    .unwrap_or_default();
                let text = format!("{doc}<{name}> ::= {}", alts.join(" | "));
                self.out.push((order, text));
            }
            Job::Body(expr, name, order) => {
                let doc = self
                    .shapes
                    .doc(expr)
                    .map(|d| format!("# {}\n", one_line(d)))
                    .unwrap_or_default();
                let text = match self.notation.object(expr).cloned() {
                    Some(ObjLayout::Record(r)) => {
                        let (comments, rhs) = self.record_rhs(&r);
                        format!("{doc}{comments}<{name}> ::= {rhs}")
                    }
                    Some(ObjLayout::Tagged { key, variants }) => {
                        let legend: Vec<String> = variants
                            .iter()
                            .flat_map(|v| v.tags.iter())
                            .filter(|(v, w)| v != w)
                            .map(|(v, w)| format!("{w} = {v}"))
                            .collect();
                        let legend = if legend.is_empty() {
                            String::new()
                        } else {
                            format!(" ({})", legend.join(", "))
                        };
                        let mut s = format!("{doc}# the first word is the `{key}`{legend}; it selects the form\n<{name}> ::= ");
                        let mut forms = Vec::new();
                        for v in &variants {
                            let (comments, rhs) = self.record_rhs(&v.record);
                            let tags: Vec<String> = v.tags.iter().map(|(_, w)| w.clone()).collect();
                            let head = if tags.len() == 1 {
                                tags[0].clone()
                            } else {
                                format!("({})", tags.join(" | "))
                            };
                            // Each form's field comments under a heading naming the form.
                            let comments = if comments.is_empty() {
                                comments
                            } else {
                                let title = v
                                    .tags
                                    .iter()
                                    .map(|(val, _)| val.as_str())
                                    .collect::<Vec<_>>()
                                    .join(" / ");
                                format!("# {head} ({title}):\n{}", comments.replace("# ", "#   "))
                            };
                            forms.push((comments, format!("{head} {rhs}").trim_end().to_string()));
                        }
                        let c: String = forms.iter().map(|(c, _)| c.clone()).collect();
                        s = format!("{c}{s}");
                        s.push_str(
                            &forms
                                .iter()
                                .map(|(_, f)| f.clone())
                                .collect::<Vec<_>>()
                                .join("\n    | "),
                        );
                        s
                    }
                    None => format!("<{name}> ::= <json>"),
                };
                self.out.push((order, text));
            }
        }
    }

    fn record_rhs(&mut self, r: &RecordLayout) -> (String, String) {
        let mut comments = String::new();
        let mut parts = Vec::new();
        for f in &r.fields {
            let d = self.shapes.doc(f.source).map(one_line);
            // Bare terminals carry the field's name: `<fieldName:string>`.
            let labeled = |v: String| match v.strip_prefix('<') {
                Some(t)
                    if matches!(
                        t,
                        "string>"
                            | "\"string\">"
                            | "number>"
                            | "integer>"
                            | "natural>"
                            | "positive>"
                            | "number>=0>"
                            | "date>"
                            | "date-time>"
                    ) =>
                {
                    format!("<{}:{t}", f.name)
                }
                _ => v,
            };
            match f.mode {
                FieldMode::Const(_) => continue,
                FieldMode::Positional => {
                    let v = self.value_ref(f.expr, &f.abbrev);
                    parts.push(labeled(if f.quoted { quoted_ref(v) } else { v }))
                }
                FieldMode::Keyless => {
                    // Recognised by its first token, so a free string is quoted here.
                    let v = quoted_ref(self.value_ref(f.expr, &f.abbrev));
                    parts.push(format!("[{}]", labeled(v)))
                }
                FieldMode::Keyed => {
                    if self.shapes.parts(f.expr).single_value().is_some() {
                        parts.push(format!("[{}]", f.keyword));
                    } else {
                        let v = if f.open {
                            self.body_ref(f.expr)
                        } else {
                            self.value_ref(f.expr, &f.abbrev)
                        };
                        parts.push(format!("[{} {v}]", f.keyword));
                    }
                }
            }
            if let Some(d) = d {
                let _ = writeln!(comments, "# {}: {d}", f.name);
            }
        }
        if r.extras.is_some() {
            let v = r
                .extras
                .map(|e| self.value_ref(e, &BTreeMap::new()))
                .unwrap_or_default();
            // Undeclared properties: `"key":value`; in a pure map a one-word key is bare.
            parts.push(if r.bare_keys() {
                format!("[<\"key\">:{v} | <key> {v}] (\",\"<\"key\">:{v} | <key> {v})*")
            } else {
                format!("[<\"key\">:{v} (\",\"<\"key\">:{v})*]")
            });
        }
        (comments, parts.join(" "))
    }
}
