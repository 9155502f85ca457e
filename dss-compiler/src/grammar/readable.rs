//! The readable BNF for prompts, printed from the notation (not from the grammar IR: it is
//! shorter, says "optional" as `[x]`, and carries the schema's descriptions as comments).
//! Rules are collected as data ([`RRule`]: comment, name, alternatives) and references as
//! [`Ref`]s, and printed once at the end.

use super::names::{given_name, named_at, schema_name};
use super::{block_fields, regular, Terminal};
use crate::notation::{
    is_section, render_word, FieldLayout, FieldMode, Notation, ObjLayout, RecordLayout, RootLayout,
    TaggedVariant,
};
use crate::shape::{ExprId, Shapes};
use serde_json::Value;
use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};

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
    /// The description of the rule's value, printed above it unless a field's comment
    /// already says it (each description is printed once).
    doc: Option<String>,
    /// Comment lines above it (after `doc`), each `# …\n`.
    comment: String,
    name: String,
    /// Its alternatives (one for a sequence).
    alts: Vec<String>,
    /// What separates the alternatives: ` | `, or a new line for long forms.
    alt_sep: &'static str,
}

impl RRule {
    /// The rule, with its description unless `printed` has it (which it then does).
    fn print(&self, printed: &mut HashSet<String>) -> String {
        let doc = match &self.doc {
            Some(d) if printed.insert(d.clone()) => format!("# {d}\n"),
            _ => String::new(),
        };
        format!(
            "{doc}{}<{}> ::= {}",
            self.comment,
            self.name,
            self.alts.join(self.alt_sep)
        )
    }
}

/// A rule still to write, with its place in the output.
/// Each holds the (canonical) expression, the expression it was met as (for its
/// description; none for a rule shared by several properties), the rule's name and its
/// place.
enum Job {
    Value(
        ExprId,
        Option<ExprId>,
        BTreeMap<String, String>,
        String,
        usize,
    ),
    Body(ExprId, ExprId, String, usize),
}

struct Readable<'a> {
    shapes: &'a Shapes,
    /// The schema, for the names it gives (`title`, definitions).
    schema: &'a Value,
    notation: &'a Notation,
    out: Vec<(usize, RRule)>,
    done: HashMap<String, String>,
    queue: Vec<Job>,
    names: HashMap<String, usize>,
    /// The terminals written so far (for the explanations in the header).
    used: BTreeSet<Terminal>,
    /// The descriptions written as a field's comment (a rule does not repeat them).
    described: HashSet<String>,
    /// Value shapes the schema does not name, by key: the property names met with.
    seen: HashMap<String, BTreeSet<String>>,
    /// Those met with several names (from a first pass): one rule named by its shape.
    shared: HashSet<String>,
    /// Undeclared properties wherever the schema admits them (see [`readable`]).
    undeclared: bool,
}

/// A readable CFG of the notation with the schema's descriptions as comments.
///
/// Rules are named after the schema (see [`Readable::value_ref`]). A value shape the schema
/// does not name, met under several property names (`"notes"` and an attendee's `"name"`
/// both `null | <string>`), is one rule named after its shape (`<StringOrNull>`), never
/// after whichever property came first: a first pass finds those shapes.
///
/// `undeclared`: undeclared properties wherever the schema admits them (the published
/// grammar); otherwise only where it allows them explicitly, as the generation grammars
/// have them (`RecordLayout::extras_declared`), so that a prompt shows what the model
/// may write.
pub(crate) fn readable(
    shapes: &Shapes,
    notation: &Notation,
    schema: &Value,
    undeclared: bool,
) -> String {
    let mut first = Readable::new(shapes, notation, schema, HashSet::new(), undeclared);
    first.run();
    let shared = (first.seen.into_iter())
        .filter(|(_, names)| names.len() > 1)
        .map(|(key, _)| key)
        .collect();
    let mut p = Readable::new(shapes, notation, schema, shared, undeclared);
    let doc = p.run();
    let mut out = String::from(HEADER);
    for (terms, what) in EXPLAINED {
        if terms.iter().any(|t| p.used.contains(t)) {
            out.push_str(&format!("# {what}.\n"));
        }
    }
    // Each description once: a rule's is left out where a field's comment gives it.
    let mut printed = p.described.clone();
    if let Some(d) = shapes.doc(shapes.root) {
        let d = one_line(d);
        out.push_str(&format!("# {d}\n"));
        printed.insert(d);
    }
    out.push_str(&doc);
    out.push('\n');
    for (_, r) in &p.out {
        out.push('\n');
        out.push_str(&r.print(&mut printed));
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

impl<'a> Readable<'a> {
    fn new(
        shapes: &'a Shapes,
        notation: &'a Notation,
        schema: &'a Value,
        shared: HashSet<String>,
        undeclared: bool,
    ) -> Self {
        Readable {
            undeclared,
            shapes,
            schema,
            notation,
            out: Vec::new(),
            done: HashMap::new(),
            queue: Vec::new(),
            names: HashMap::new(),
            used: BTreeSet::new(),
            described: HashSet::new(),
            seen: HashMap::new(),
            shared,
        }
    }

    /// The `<Document>` rule; every other rule collected into `out`, in order.
    fn run(&mut self) -> String {
        let doc = self.document();
        while let Some(job) = self.queue.pop() {
            let (order, rule) = self.emit(job);
            self.out.push((order, rule));
        }
        self.out.sort_by_key(|(i, _)| *i);
        doc
    }

    /// The name the schema gives `source` (see [`schema_name`]), capitalized.
    fn base_name(&self, source: ExprId) -> String {
        capitalized(&schema_name(self.shapes, self.schema, source))
    }

    /// Whether the schema names `source` itself (a `title`, a definition), not only by
    /// where it is.
    fn schema_named(&self, source: ExprId) -> bool {
        given_name(self.shapes, self.schema, source).is_some()
    }

    /// The name the schema gives the object `expr` (its record's definition or title).
    fn record_name(&self, expr: ExprId) -> Option<String> {
        match self.notation.object(expr) {
            Some(ObjLayout::Record(r)) => r
                .name
                .strip_prefix('#')
                .and_then(|p| named_at(self.schema, p))
                .map(|n| capitalized(&n)),
            _ => None,
        }
    }

    /// A name from what a value shape admits (`StringOrNull`, `NumberOrExprRef`), for a
    /// shape without choices or lists whose object part, if any, the schema names.
    fn shape_name(&self, expr: ExprId) -> Option<String> {
        let p = self.shapes.parts(expr);
        if p.array.is_some()
            || p.listed.is_some()
            || p.number.as_ref().is_some_and(|n| n.values.is_some())
            || p.string.as_ref().is_some_and(|s| s.values.is_some())
        {
            return None;
        }
        let mut words: Vec<String> = Vec::new();
        if let Some(n) = &p.number {
            words.push(if n.integer { "Integer" } else { "Number" }.into());
        }
        if p.string.is_some() {
            words.push("String".into());
        }
        if p.bool_true || p.bool_false {
            words.push("Boolean".into());
        }
        if p.object.is_some() {
            words.push(self.record_name(expr)?);
        }
        if p.null {
            words.push("Null".into());
        }
        Some(words.join("Or"))
    }

    /// A fresh rule name from `base`, numbered when taken.
    fn fresh(&mut self, base: &str) -> String {
        let mut c = base.to_string();
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

    /// Simple values in place, or a reference to a rule (queued to be written), named
    /// after `source`, the expression as the schema has it there: equal shapes share a
    /// rule only where the schema gives them the same name.
    fn value_ref(
        &mut self,
        expr: ExprId,
        source: ExprId,
        abbrev: &BTreeMap<String, String>,
    ) -> Ref {
        let expr = self.notation.canon[expr as usize];
        let p = self.shapes.parts(expr);
        if p.any {
            return Ref::Term(Terminal::JsonValue);
        }
        let mut base = self.base_name(source);
        let mut key = format!("v{expr}:{abbrev:?}");
        let unnamed = !self.schema_named(source);
        if unnamed {
            self.seen
                .entry(key.clone())
                .or_default()
                .insert(base.clone());
        }
        let mut described_by = Some(source);
        match self.shape_name(expr) {
            Some(shape) if unnamed && self.shared.contains(&key) => {
                base = shape;
                described_by = None;
            }
            _ => key = format!("{key}:{base}"),
        }
        if let Some(n) = self.done.get(&key) {
            return Ref::Rule(n.clone());
        }
        // Scalars without choices are written in place.
        let mut simple = Vec::new();
        let mut only_simple = p.array.is_none() && p.object.is_none() && p.listed.is_none();
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
        let name = self.fresh(&base);
        self.done.insert(key, name.clone());
        let order = self.done.len();
        self.queue.push(Job::Value(
            expr,
            described_by,
            abbrev.clone(),
            name.clone(),
            order,
        ));
        Ref::Rule(name)
    }

    /// A reference to the rule of an object's body, named after `source` (as
    /// [`Readable::value_ref`]).
    fn body_ref(&mut self, expr: ExprId, source: ExprId) -> Ref {
        let expr = self.notation.canon[expr as usize];
        // An object the schema names (a definition, a title) is named so wherever it is
        // met, also as a branch of a union (`<ExprRef>` of `number | ExprRef`).
        let named = self.record_name(expr);
        let key = match (&named, self.notation.object(expr)) {
            // A named object is one rule wherever it is met (also in several unions).
            (Some(_), Some(layout)) => format!("b{layout:?}"),
            _ => format!("b{expr}:{}", self.base_name(source)),
        };
        let base = named.unwrap_or_else(|| self.base_name(source));
        if let Some(n) = self.done.get(&key) {
            return Ref::Rule(n.clone());
        }
        let name = self.fresh(&base);
        self.done.insert(key, name.clone());
        let order = self.done.len();
        self.queue
            .push(Job::Body(expr, source, name.clone(), order));
        Ref::Rule(name)
    }

    fn line_item_ref(&mut self, expr: ExprId, source: ExprId) -> Ref {
        if self.shapes.parts(expr).object_only() {
            self.body_ref(expr, source)
        } else {
            self.value_ref(expr, source, &BTreeMap::new())
        }
    }

    /// The description of `source`, on one line.
    fn doc_of(&self, source: ExprId) -> Option<String> {
        self.shapes.doc(source).map(one_line)
    }

    /// `field_comments`, noting the descriptions as written.
    fn field_comments(&mut self, docs: &[(String, String)], indent: &str) -> String {
        self.described.extend(docs.iter().map(|(_, d)| d.clone()));
        field_comments(docs, indent)
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
                let b = self.body_ref(root, root);
                (String::new(), format!("{} [\\n]", self.text(b)))
            }
            RootLayout::Lines => {
                let item = self.shapes.items_of(root);
                let li = self.line_item_ref(item, item);
                let line = format!("({} \\n)", self.text(li));
                let min = self.shapes.min_items(root);
                let max = self.shapes.max_items(root);
                (String::new(), repeat_ref(&line, min, max))
            }
            RootLayout::Value => {
                let v = self.value_ref(root, root, &BTreeMap::new());
                (String::new(), format!("{} [\\n]", self.text(v)))
            }
        };
        RRule {
            doc: None,
            comment,
            name: "Document".into(),
            alts: vec![seq],
            alt_sep: " | ",
        }
        .print(&mut HashSet::new())
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
        if self.extras(r).is_some() {
            seq.push_str("\n    (\"other key\": <json> \\n)*");
        }
        Some((self.field_comments(&docs, " "), seq))
    }

    /// The undeclared properties shown in `r` (see [`readable`]).
    fn extras(&self, r: &RecordLayout) -> Option<ExprId> {
        r.extras.filter(|_| self.undeclared || r.extras_declared)
    }

    /// A block's line for a field: `kw value \n`, or a section `kw:\n (item \n)*`.
    fn statement(&mut self, f: &FieldLayout) -> String {
        if is_section(self.shapes, f.expr) {
            let item = self.shapes.items_of(f.expr);
            let source = self.shapes.items_of(f.source);
            let li = self.line_item_ref(item, source);
            let li = self.text(li);
            let lines = repeat_ref(
                &format!("({li} \\n)"),
                self.shapes.min_items(f.expr),
                self.shapes.max_items(f.expr),
            );
            format!("{}:\\n {lines}", f.keyword)
        } else {
            let v = if self.notation.opens_on_line(self.shapes, f.expr) {
                self.body_ref(f.expr, f.source)
            } else {
                self.value_ref(f.expr, f.source, &f.abbrev)
            };
            format!("{} {} \\n", f.keyword, self.text(v))
        }
    }

    fn emit(&mut self, job: Job) -> (usize, RRule) {
        match job {
            Job::Value(expr, source, abbrev, name, order) => {
                (order, self.value_rule(expr, source, &abbrev, name))
            }
            Job::Body(expr, source, name, order) => {
                let rule = match self.notation.object(expr).cloned() {
                    Some(ObjLayout::Record(r)) if !r.forms.is_empty() && r.extras.is_none() => {
                        let (docs, alts) = self.forms_rhs(&r);
                        RRule {
                            doc: self.doc_of(source),
                            comment: self.field_comments(&docs, " "),
                            name,
                            alts,
                            alt_sep: " | ",
                        }
                    }
                    Some(ObjLayout::Record(r)) => {
                        let (docs, rhs) = self.record_rhs(&r);
                        RRule {
                            doc: self.doc_of(source),
                            comment: self.field_comments(&docs, " "),
                            name,
                            alts: vec![rhs],
                            alt_sep: " | ",
                        }
                    }
                    Some(ObjLayout::Tagged { key, variants }) => {
                        self.tagged_rule(source, &key, &variants, name)
                    }
                    None => RRule {
                        doc: self.doc_of(source),
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
        source: Option<ExprId>,
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
                let v = self.value_ref(*e, *e, &BTreeMap::new());
                let v = self.text(v);
                parts.push(if i < min { v } else { format!("[{v}]") });
            }
            if let Some(it) = a.items {
                let v = self.value_ref(it, it, &BTreeMap::new());
                let v = self.text(v);
                let max = a.max_len().map(|m| m.saturating_sub(a.prefix.len()));
                parts.push(repeat_ref(&v, min.saturating_sub(a.prefix.len()), max));
            }
            alts.push(format!("\"[\" {} \"]\"", parts.join(" ")));
        }
        if p.object.is_some() {
            let b = self.body_ref(expr, source.unwrap_or(expr));
            alts.push(format!("\"(\" {} \")\"", self.text(b)));
        }
        // Listed arrays and objects, written as their JSON.
        alts.extend(p.listed.iter().flatten().cloned());
        RRule {
            doc: source.and_then(|s| self.doc_of(s)),
            comment: String::new(),
            name,
            alts,
            alt_sep: " | ",
        }
    }

    /// A tagged union: one form per tag, each form's field comments under a heading.
    fn tagged_rule(
        &mut self,
        source: ExprId,
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
                comment.push_str(&self.field_comments(&docs, "   "));
            }
            forms.push(format!("{head} {rhs}").trim_end().to_string());
        }
        comment.push_str(&format!(
            "# the first word is the `{key}`{legend}; it selects the form\n"
        ));
        RRule {
            doc: self.doc_of(source),
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
        if let Some(e) = self.extras(r) {
            let v = self.value_ref(e, r.extras_source.unwrap_or(e), &BTreeMap::new());
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
                FieldMode::Positional if f.named => {
                    let v = self.value_ref(f.expr, f.source, &f.abbrev);
                    let v = if f.quoted { v.quoted() } else { v };
                    Some((format!("{} {}", f.keyword, self.text(v)), false))
                }
                FieldMode::Positional => {
                    let v = self.value_ref(f.expr, f.source, &f.abbrev);
                    let v = if f.quoted { v.quoted() } else { v };
                    Some((self.labeled(&f.name, v), false))
                }
                FieldMode::Keyless => {
                    // Recognised by its first token, so a free string is quoted here.
                    let v = self.value_ref(f.expr, f.source, &f.abbrev).quoted();
                    Some((self.labeled(&f.name, v), true))
                }
                FieldMode::Keyed if f.is_flag(self.shapes) => Some((f.keyword.clone(), true)),
                FieldMode::Keyed => {
                    let v = if f.open {
                        self.body_ref(f.expr, f.source)
                    } else {
                        self.value_ref(f.expr, f.source, &f.abbrev)
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

/// A rule name from a schema name: identifier characters only, capitalized.
fn capitalized(name: &str) -> String {
    let mut c: String = name
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
    c
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

    #[test]
    fn names_rules_after_the_schema_and_describes_once() {
        // `name` has the shape of `notes`: their rule is named after the shape, not after
        // whichever came first; a definition keeps its name; no description is written
        // twice.
        let schema = json!({"type": "object", "required": ["attendees"], "properties": {
            "notes": {"type": ["string", "null"], "description": "Free notes."},
            "kind": {"$ref": "#/$defs/MeetingKind", "description": "What kind of meeting."},
            "attendees": {"type": "array", "items": {"type": "object",
                "required": ["email", "name"], "additionalProperties": false, "properties": {
                "email": {"type": "string", "description": "Email address."},
                "name": {"type": ["string", "null"], "description": "Full name."}}}}},
            "$defs": {"MeetingKind": {"enum": ["standup", "review"]}}});
        let bnf = compile(&schema, &CompileOptions::default())
            .unwrap()
            .grammar_bnf();
        assert!(bnf.contains("<email:\"string\"> <StringOrNull>"), "{bnf}");
        assert!(bnf.contains("[notes <StringOrNull>"), "{bnf}");
        assert!(
            bnf.contains("<StringOrNull> ::= null | <string>\n"),
            "{bnf}"
        );
        assert!(!bnf.contains("<Notes>"), "{bnf}");
        assert!(bnf.contains("<MeetingKind> ::= standup | review"), "{bnf}");
        for d in [
            "Free notes.",
            "Full name.",
            "What kind of meeting.",
            "Email address.",
        ] {
            assert_eq!(bnf.matches(d).count(), 1, "{d} in {bnf}");
        }
        // A shape met under one name only is named after it.
        let schema = json!({"type": "object", "required": ["attendees"], "properties": {
            "attendees": {"type": "array", "items": {"type": "object",
                "required": ["email", "name"], "additionalProperties": false, "properties": {
                "email": {"type": "string"}, "name": {"type": ["string", "null"]}}}}}});
        let bnf = compile(&schema, &CompileOptions::default())
            .unwrap()
            .grammar_bnf();
        assert!(bnf.contains("<email:\"string\"> <Name>"), "{bnf}");
        assert!(bnf.contains("<Name> ::= null | <string>"), "{bnf}");
    }
}
