//! The readable BNF for prompts, printed from the notation (not from the grammar IR: it is
//! shorter, says "optional" as `[x]`, and carries the schema's descriptions as comments).
//! Rules are collected as data ([`RRule`]: comment, name, alternatives) and references as
//! [`Ref`]s, and printed once at the end.

use super::names::expr_name;
use super::{block_fields, regular, Terminal};
use crate::notation::{
    is_section, render_word, FieldLayout, FieldMode, Notation, ObjLayout, RecordLayout, RootLayout,
    TaggedVariant,
};
use crate::shape::{ExprId, Shapes};
use std::collections::{BTreeMap, BTreeSet, HashMap};

const HEADER: &str = "# Shorthand notation (BNF). Lines starting with # are comments.\n\
    # Elements are separated by one space. ( ) is an object, [ ] a list; [x] in a rule\n\
    # means x is optional; x* means zero or more x, x+ one or more, x{n,} n or more, x{n,m} n to m. A <string> is \"double-quoted\", or\n\
    # bare when it is one word (letters, digits, _ $ . - /; starting with a letter);\n\
    # a <\"string\"> is always quoted. Words from a list of choices are written bare.\n\
    # <json> is compact JSON. An object right after its keyword has no ( ): it ends\n\
    # where its own fields end (an empty one is written ()).\n";

/// What the terminals mean, explained only when the grammar uses them (prompt tokens are
/// not free).
const EXPLAINED: [(&[Terminal], &str); 3] = [
    (
        &[Terminal::Natural, Terminal::Positive],
        "<natural> is an integer >= 0, <positive> one >= 1",
    ),
    (&[Terminal::NonnegNumber], "<number>=0> is a number >= 0"),
    (
        &[Terminal::Date, Terminal::DateTime],
        "<date> is \"YYYY-MM-DD\", <date-time> \"YYYY-MM-DDThh:mm:ssZ\"",
    ),
];

/// What a value is, as the readable grammar refers to it.
#[derive(Clone)]
enum Ref {
    /// A shared terminal (`<number>`, `<string>`…).
    Term(Terminal),
    /// Words written in place (`null`, `true | false`).
    Words(&'static str),
    /// A rule of this grammar, by name.
    Rule(String),
    /// A regular form written in place (`<"string" matching …>`, `<integer 1..10>`).
    Form(String),
}

impl Ref {
    /// The same reference where a free string must be quoted: `<"string">`.
    fn quoted(self) -> Ref {
        match self {
            Ref::Term(t) => Ref::Term(t.quoted()),
            r => r,
        }
    }
}

/// A rule of the readable grammar, kept as data until printed.
struct RRule {
    /// Comment lines above it, each `# …\n`.
    comment: String,
    name: String,
    /// Its alternatives (one for a sequence).
    alts: Vec<String>,
    /// What separates the alternatives: ` | `, or a new line for long forms.
    alt_sep: &'static str,
}

impl RRule {
    fn print(&self) -> String {
        format!(
            "{}<{}> ::= {}",
            self.comment,
            self.name,
            self.alts.join(self.alt_sep)
        )
    }
}

/// A rule still to write, with its place in the output.
enum Job {
    Value(ExprId, BTreeMap<String, String>, String, usize),
    Body(ExprId, String, usize),
}

struct Readable<'a> {
    shapes: &'a Shapes,
    notation: &'a Notation,
    out: Vec<(usize, RRule)>,
    done: HashMap<String, String>,
    queue: Vec<Job>,
    names: HashMap<String, usize>,
    /// The terminals written so far (for the explanations in the header).
    used: BTreeSet<Terminal>,
}

/// A readable CFG of the notation with the schema's descriptions as comments.
pub(crate) fn readable(shapes: &Shapes, notation: &Notation) -> String {
    let mut p = Readable {
        shapes,
        notation,
        out: Vec::new(),
        done: HashMap::new(),
        queue: Vec::new(),
        names: HashMap::new(),
        used: BTreeSet::new(),
    };
    let doc = p.document();
    while let Some(job) = p.queue.pop() {
        let (order, rule) = p.emit(job);
        p.out.push((order, rule));
    }
    p.out.sort_by_key(|(i, _)| *i);
    let mut out = String::from(HEADER);
    for (terms, what) in EXPLAINED {
        if terms.iter().any(|t| p.used.contains(t)) {
            out.push_str(&format!("# {what}.\n"));
        }
    }
    if let Some(d) = shapes.doc(shapes.root) {
        out.push_str(&format!("# {}\n", one_line(d)));
    }
    out.push_str(&doc);
    out.push('\n');
    for (_, r) in &p.out {
        out.push('\n');
        out.push_str(&r.print());
    }
    out
}

/// `x*`, `x+`, `x{n,}` or `x{n,m}`: `min` to `max` copies of `x`, in the readable grammar.
fn repeat_ref(x: &str, min: usize, max: Option<usize>) -> String {
    match (min, max) {
        (_, Some(m)) if m >= min => format!("{x}{{{min},{m}}}"),
        (0, _) => format!("{x}*"),
        (1, _) => format!("{x}+"),
        (n, _) => format!("{x}{{{n},}}"),
    }
}

fn one_line(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// Comment lines `#{indent}label: description`.
fn field_comments(docs: &[(String, String)], indent: &str) -> String {
    docs.iter()
        .map(|(label, d)| format!("#{indent}{label}: {d}\n"))
        .collect()
}

impl Readable<'_> {
    /// A fresh rule name for `expr`: capitalized, numbered when taken.
    fn name(&mut self, expr: ExprId) -> String {
        let base = expr_name(self.shapes, expr);
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

    /// A terminal as written (and noted as used).
    fn term(&mut self, t: Terminal) -> &'static str {
        self.used.insert(t);
        t.readable()
    }

    fn text(&mut self, r: Ref) -> String {
        match r {
            Ref::Term(t) => self.term(t).to_string(),
            Ref::Words(w) => w.to_string(),
            Ref::Rule(n) => format!("<{n}>"),
            Ref::Form(f) => f,
        }
    }

    /// A reference in a field's slot: a bare terminal carries the field's name
    /// (`<fieldName:string>`).
    fn labeled(&mut self, field: &str, r: Ref) -> String {
        match r {
            Ref::Term(t) if !t.is_json() => format!("<{field}:{}", &self.term(t)[1..]),
            Ref::Form(f) => format!("<{field}:{}", &f[1..]),
            r => self.text(r),
        }
    }

    /// Simple values in place, or a reference to a rule (queued to be written).
    fn value_ref(&mut self, expr: ExprId, abbrev: &BTreeMap<String, String>) -> Ref {
        let expr = self.notation.canon[expr as usize];
        let p = self.shapes.parts(expr);
        if p.any {
            return Ref::Term(Terminal::JsonValue);
        }
        let key = format!("v{expr}:{abbrev:?}");
        if let Some(n) = self.done.get(&key) {
            return Ref::Rule(n.clone());
        }
        // Scalars without choices are written in place.
        let mut simple = Vec::new();
        let mut only_simple = p.array.is_none() && p.object.is_none();
        if let Some(n) = &p.number {
            if n.values.is_some() {
                only_simple = false;
            } else {
                simple.push(match regular::readable_number(n) {
                    Some(f) => Ref::Form(f),
                    None => Ref::Term(Terminal::of_number(n)),
                });
            }
        }
        if let Some(s) = &p.string {
            if s.values.is_some() {
                only_simple = false;
            } else {
                simple.push(match regular::readable_string(s) {
                    Some(f) => Ref::Form(f),
                    None => Ref::Term(Terminal::of_string(s, false)),
                });
            }
        }
        if p.null {
            simple.push(Ref::Words("null"));
        }
        match (p.bool_true, p.bool_false) {
            (true, true) => simple.push(Ref::Words("true | false")),
            (true, false) => simple.push(Ref::Words("true")),
            (false, true) => simple.push(Ref::Words("false")),
            (false, false) => {}
        }
        if only_simple && simple.len() == 1 {
            return simple.remove(0);
        }
        let name = self.name(expr);
        self.done.insert(key, name.clone());
        let order = self.done.len();
        self.queue
            .push(Job::Value(expr, abbrev.clone(), name.clone(), order));
        Ref::Rule(name)
    }

    fn body_ref(&mut self, expr: ExprId) -> Ref {
        let expr = self.notation.canon[expr as usize];
        let key = format!("b{expr}");
        if let Some(n) = self.done.get(&key) {
            return Ref::Rule(n.clone());
        }
        let name = self.name(expr);
        self.done.insert(key, name.clone());
        let order = self.done.len();
        self.queue.push(Job::Body(expr, name.clone(), order));
        Ref::Rule(name)
    }

    fn line_item_ref(&mut self, expr: ExprId) -> Ref {
        if self.shapes.parts(expr).object_only() {
            self.body_ref(expr)
        } else {
            self.value_ref(expr, &BTreeMap::new())
        }
    }

    fn doc_comment(&self, expr: ExprId) -> String {
        self.shapes
            .doc(expr)
            .map(|d| format!("# {}\n", one_line(d)))
            .unwrap_or_default()
    }

    /// The `<Document>` rule (nothing for a block root that is not a record).
    fn document(&mut self) -> String {
        let root = self.shapes.root;
        let (comment, seq) = match self.notation.root {
            RootLayout::Block => match self.block() {
                Some(block) => block,
                None => return String::new(),
            },
            RootLayout::Line => {
                let b = self.body_ref(root);
                (String::new(), format!("{} [\\n]", self.text(b)))
            }
            RootLayout::Lines => {
                let item = self.shapes.items_of(root);
                let li = self.line_item_ref(item);
                let line = format!("({} \\n)", self.text(li));
                let min = self.shapes.min_items(root);
                let max = self.shapes.max_items(root);
                (String::new(), repeat_ref(&line, min, max))
            }
            RootLayout::Value => {
                let v = self.value_ref(root, &BTreeMap::new());
                (String::new(), format!("{} [\\n]", self.text(v)))
            }
        };
        RRule {
            comment,
            name: "Document".into(),
            alts: vec![seq],
            alt_sep: " | ",
        }
        .print()
    }

    /// A block document: one statement per line (plain lines first, then sections), each
    /// field's description as a comment above the rule.
    fn block(&mut self) -> Option<(String, String)> {
        let root = self.shapes.root;
        let Some(ObjLayout::Record(r)) = self.notation.object(root) else {
            return None;
        };
        let mut docs = Vec::new();
        let mut stmts = Vec::new();
        for f in block_fields(self.shapes, r) {
            if let Some(d) = self.shapes.doc(f.source) {
                docs.push((f.keyword.clone(), one_line(d)));
            }
            let stmt = self.statement(f);
            stmts.push(if f.mode == FieldMode::Positional {
                stmt
            } else {
                format!("[{stmt}]")
            });
        }
        let mut seq = stmts.join("\n    ");
        if r.extras.is_some() {
            seq.push_str("\n    (\"other key\": <json> \\n)*");
        }
        Some((field_comments(&docs, " "), seq))
    }

    /// A block's line for a field: `kw value \n`, or a section `kw:\n (item \n)*`.
    fn statement(&mut self, f: &FieldLayout) -> String {
        if is_section(self.shapes, f.expr) {
            let item = self.shapes.items_of(f.expr);
            let li = self.line_item_ref(item);
            let li = self.text(li);
            let lines = repeat_ref(
                &format!("({li} \\n)"),
                self.shapes.min_items(f.expr),
                self.shapes.max_items(f.expr),
            );
            format!("{}:\\n {lines}", f.keyword)
        } else {
            let v = if self.notation.opens_on_line(self.shapes, f.expr) {
                self.body_ref(f.expr)
            } else {
                self.value_ref(f.expr, &f.abbrev)
            };
            format!("{} {} \\n", f.keyword, self.text(v))
        }
    }

    fn emit(&mut self, job: Job) -> (usize, RRule) {
        match job {
            Job::Value(expr, abbrev, name, order) => (order, self.value_rule(expr, &abbrev, name)),
            Job::Body(expr, name, order) => {
                let rule = match self.notation.object(expr).cloned() {
                    Some(ObjLayout::Record(r)) if !r.forms.is_empty() && r.extras.is_none() => {
                        let (docs, alts) = self.forms_rhs(&r);
                        RRule {
                            comment: self.doc_comment(expr) + &field_comments(&docs, " "),
                            name,
                            alts,
                            alt_sep: " | ",
                        }
                    }
                    Some(ObjLayout::Record(r)) => {
                        let (docs, rhs) = self.record_rhs(&r);
                        RRule {
                            comment: self.doc_comment(expr) + &field_comments(&docs, " "),
                            name,
                            alts: vec![rhs],
                            alt_sep: " | ",
                        }
                    }
                    Some(ObjLayout::Tagged { key, variants }) => {
                        self.tagged_rule(expr, &key, &variants, name)
                    }
                    None => RRule {
                        comment: String::new(),
                        name,
                        alts: vec!["<json>".into()],
                        alt_sep: " | ",
                    },
                };
                (order, rule)
            }
        }
    }

    /// The rule of a value: its words, terminals, list and object forms.
    fn value_rule(
        &mut self,
        expr: ExprId,
        abbrev: &BTreeMap<String, String>,
        name: String,
    ) -> RRule {
        let p = self.shapes.parts(expr).clone();
        let mut alts: Vec<String> = Vec::new();
        for (on, w) in [
            (p.null, "null"),
            (p.bool_true, "true"),
            (p.bool_false, "false"),
        ] {
            if on {
                alts.push(w.into());
            }
        }
        if let Some(n) = &p.number {
            match &n.values {
                Some(vs) => alts.extend(vs.iter().map(|v| v.to_string())),
                None => alts.push(match regular::readable_number(n) {
                    Some(f) => f,
                    None => self.term(Terminal::of_number(n)).into(),
                }),
            }
        }
        if let Some(s) = &p.string {
            match &s.values {
                Some(vs) => alts.extend(vs.iter().map(|v| render_word(abbrev.get(v).unwrap_or(v)))),
                None => alts.push(match regular::readable_string(s) {
                    Some(f) => f,
                    None => self.term(Terminal::of_string(s, false)).into(),
                }),
            }
        }
        if let Some(a) = &p.array {
            let mut parts: Vec<String> = Vec::new();
            let min = a.min_items as usize;
            for (i, e) in a.prefix.iter().enumerate() {
                let v = self.value_ref(*e, &BTreeMap::new());
                let v = self.text(v);
                parts.push(if i < min { v } else { format!("[{v}]") });
            }
            if let Some(it) = a.items {
                let v = self.value_ref(it, &BTreeMap::new());
                let v = self.text(v);
                let max = a.max_len().map(|m| m.saturating_sub(a.prefix.len()));
                parts.push(repeat_ref(&v, min.saturating_sub(a.prefix.len()), max));
            }
            alts.push(format!("\"[\" {} \"]\"", parts.join(" ")));
        }
        if p.object.is_some() {
            let b = self.body_ref(expr);
            alts.push(format!("\"(\" {} \")\"", self.text(b)));
        }
        RRule {
            comment: self.doc_comment(expr),
            name,
            alts,
            alt_sep: " | ",
        }
    }

    /// A tagged union: one form per tag, each form's field comments under a heading.
    fn tagged_rule(
        &mut self,
        expr: ExprId,
        key: &str,
        variants: &[TaggedVariant],
        name: String,
    ) -> RRule {
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
        let mut comment = String::new();
        let mut forms = Vec::new();
        for v in variants {
            let (docs, rhs) = self.record_rhs(&v.record);
            let tags: Vec<&str> = v.tags.iter().map(|(_, w)| w.as_str()).collect();
            let head = if tags.len() == 1 {
                tags[0].to_string()
            } else {
                format!("({})", tags.join(" | "))
            };
            if !docs.is_empty() {
                let title: Vec<&str> = v.tags.iter().map(|(val, _)| val.as_str()).collect();
                comment.push_str(&format!("# {head} ({}):\n", title.join(" / ")));
                comment.push_str(&field_comments(&docs, "   "));
            }
            forms.push(format!("{head} {rhs}").trim_end().to_string());
        }
        comment.push_str(&self.doc_comment(expr));
        comment.push_str(&format!(
            "# the first word is the `{key}`{legend}; it selects the form\n"
        ));
        RRule {
            comment,
            name,
            alts: forms,
            alt_sep: "\n    | ",
        }
    }

    /// A record's fields in order (`[…]` when optional), and their descriptions.
    fn record_rhs(&mut self, r: &RecordLayout) -> (Vec<(String, String)>, String) {
        let (docs, parts) = self.field_parts(r);
        let mut out: Vec<String> = parts
            .into_iter()
            .filter_map(|p| p.map(|(text, optional)| bracket(text, optional)))
            .collect();
        if let Some(e) = r.extras {
            let v = self.value_ref(e, &BTreeMap::new());
            let v = self.text(v);
            // Undeclared properties: `"key":value`; in a pure map a one-word key is bare.
            out.push(if r.bare_keys() {
                format!("[<\"key\">:{v} | <key> {v}] (\",\"<\"key\">:{v} | <key> {v})*")
            } else {
                format!("[<\"key\">:{v} (\",\"<\"key\">:{v})*]")
            });
        }
        (docs, out.join(" "))
    }

    /// A merged union of closed forms: one alternative per form (its positional fields,
    /// then the fields it declares, `[…]` when optional in it).
    fn forms_rhs(&mut self, r: &RecordLayout) -> (Vec<(String, String)>, Vec<String>) {
        let (docs, parts) = self.field_parts(r);
        let head: Vec<String> = r
            .fields
            .iter()
            .zip(&parts)
            .filter(|(f, _)| f.mode == FieldMode::Positional)
            .filter_map(|(_, p)| p.as_ref().map(|(t, _)| t.clone()))
            .collect();
        let alts = r
            .forms
            .iter()
            .map(|form| {
                let mut xs = head.clone();
                for &i in &form.fields {
                    if let Some(Some((text, _))) = parts.get(i) {
                        xs.push(bracket(text.clone(), !form.required.contains(&i)));
                    }
                }
                xs.join(" ")
            })
            .collect();
        (docs, alts)
    }

    /// Each field's text and whether it is optional (`None`: not written), and the
    /// fields' descriptions.
    #[allow(clippy::type_complexity)]
    fn field_parts(
        &mut self,
        r: &RecordLayout,
    ) -> (Vec<(String, String)>, Vec<Option<(String, bool)>>) {
        let mut docs = Vec::new();
        let mut parts = Vec::new();
        for f in &r.fields {
            let part = match f.mode {
                FieldMode::Const(_) => None,
                FieldMode::Positional => {
                    let v = self.value_ref(f.expr, &f.abbrev);
                    let v = if f.quoted { v.quoted() } else { v };
                    Some((self.labeled(&f.name, v), false))
                }
                FieldMode::Keyless => {
                    // Recognised by its first token, so a free string is quoted here.
                    let v = self.value_ref(f.expr, &f.abbrev).quoted();
                    Some((self.labeled(&f.name, v), true))
                }
                FieldMode::Keyed if self.shapes.parts(f.expr).single_value().is_some() => {
                    Some((f.keyword.clone(), true))
                }
                FieldMode::Keyed => {
                    let v = if f.open {
                        self.body_ref(f.expr)
                    } else {
                        self.value_ref(f.expr, &f.abbrev)
                    };
                    Some((format!("{} {}", f.keyword, self.text(v)), true))
                }
            };
            parts.push(part);
            if matches!(f.mode, FieldMode::Const(_)) {
                continue;
            }
            if let Some(d) = self.shapes.doc(f.source) {
                docs.push((f.name.clone(), one_line(d)));
            }
        }
        (docs, parts)
    }
}

/// `[text]` when optional.
fn bracket(text: String, optional: bool) -> String {
    if optional {
        format!("[{text}]")
    } else {
        text
    }
}

#[cfg(test)]
mod tests {
    use crate::{compile, CompileOptions};
    use serde_json::json;

    #[test]
    fn explains_only_the_terminals_it_uses() {
        // A rule named like a terminal (`<Get_event_date>`) is not a date.
        let schema = json!({"type": "object", "properties": {"get_event_date": {
            "type": "object", "properties": {"event": {"type": "string"}}}}});
        let bnf = compile(&schema, &CompileOptions::default())
            .unwrap()
            .grammar_bnf();
        assert!(bnf.contains("date>"), "{bnf}");
        assert!(!bnf.contains("# <date> is"), "{bnf}");
        let schema = json!({"type": "object", "properties": {
            "day": {"type": "string", "format": "date"},
            "n": {"type": "integer", "minimum": 0}}});
        let bnf = compile(&schema, &CompileOptions::default())
            .unwrap()
            .grammar_bnf();
        assert!(bnf.contains("# <date> is"), "{bnf}");
        assert!(bnf.contains("# <natural> is"), "{bnf}");
        assert!(!bnf.contains("# <number>=0> is"), "{bnf}");
    }
}
