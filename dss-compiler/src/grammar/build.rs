//! Notation -> grammar IR: one rule per value, object body, optional-field chain and
//! document line, named from where they are in the schema.

use super::names::{expr_name, RuleNames};
use super::prune::{
    below, content_words, form_evidence, is_action, same_value, stem_key, Restriction, Resume,
    Status,
};
use super::terminal::is_word_char;
use super::{block_fields, Grammar, Rule, Terminal, G};
use crate::codec::{Decoder, Tables};
use crate::notation::{
    is_section, render_word, FieldLayout, FieldMode, Form, Notation, ObjLayout, RecordLayout,
    RootLayout,
};
use crate::shape::{ArrPart, ExprId, Lexical, NumPart, Parts, Shapes, StrPart};
use crate::sites::escape_segment;
use crate::stack::deep;
use serde_json::Value;
use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};

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
    /// Body rules that are never empty (a required field, a tag): no `()` for them.
    never_empty: HashSet<String>,
    /// Pruning by a request's candidates (`None`: the full grammar).
    prune: Option<Pruner<'a>>,
    /// The instance path being built (sites' form: `*` for array items).
    path: String,
    /// Pruning: one site held to one of its candidates while the item of a distinct list
    /// is built for that value (see [`Builder::distinct_items`]).
    pin: Option<(String, Vec<Value>)>,
    /// Undeclared properties are offered wherever the schema admits them (the published
    /// grammars), not only where it allows them explicitly ([`Builder::extras`]).
    undeclared: bool,
    /// Pruning, a `lines` document resumed after a line: every line built is a later one,
    /// whose span sites take marked spans ([`SpanPolicy::offered`](super::prune::SpanPolicy::offered)).
    later_line: bool,
    /// Pruning, a `lines` document: the forms a line may be where the line is asked for
    /// only as a call of a tool the request names apart ([`Builder::form_named_left`]).
    line_forms: Option<Vec<usize>>,
    /// The rule of each word of the request's spans ([`Builder::span_body`]), once made.
    span_word_rules: Vec<String>,
    /// The value being built is a required field's ([`Builder::positional`]) or a keyed
    /// field's ([`Builder::field_slot`]): under pruning, a list there whose items have
    /// candidates is written with one at least.
    required_value: bool,
}

/// A restriction and what the builder derives from it.
struct Pruner<'a> {
    restriction: &'a Restriction,
    /// The codec's lookups, to check that a literal reads back as its value.
    tables: &'a Tables,
    /// Every prefix of every site path: below these, rules are built per path.
    prefixes: &'a HashSet<String>,
    /// (canonical expression, path) -> the status of its sites.
    status: HashMap<(ExprId, String), Status>,
    /// Expressions whose status is being computed (a recursive schema stops there).
    stack: Vec<ExprId>,
}

impl Builder<'_> {
    /// The undeclared properties this grammar offers in `r`: those the schema admits, or
    /// for generation (without [`Builder::undeclared`]) only those it allows explicitly
    /// (`RecordLayout::extras_declared`). Only alternatives go, so the language shrinks.
    fn extras(&self, r: &RecordLayout) -> Option<ExprId> {
        r.extras.filter(|_| self.undeclared || r.extras_declared)
    }

    /// Whether rules here are built for this path alone (pruning, within the listed sites).
    fn specialized(&self) -> bool {
        self.prune
            .as_ref()
            .is_some_and(|p| p.prefixes.contains(&self.path))
    }

    /// The candidates at the current path, when pruning there.
    fn candidates(&self) -> Option<Vec<Value>> {
        let p = self.prune.as_ref()?;
        if let Some((_, v)) = self.pin.as_ref().filter(|_| self.pinned_here()) {
            return Some(v.clone());
        }
        let c = self.found_here();
        (!c.is_empty()
            && p.prefixes.contains(&self.path)
            && !p.restriction.free.contains(&self.path))
        .then_some(c)
    }

    /// The values found at the current path. While the item of a distinct list is built
    /// for one value (`pin`), a modifier tied to another value at the pinned site
    /// ([`Restriction::ties`]) is left out: the `extra` of "extra onions lettuce and
    /// pickles" goes with the onions only (a small model had copied it to every topping).
    fn found_here(&self) -> Vec<Value> {
        let Some(p) = self.prune.as_ref() else {
            return Vec::new();
        };
        let found = p.restriction.at(&self.path);
        let Some((pin_site, pinned)) = &self.pin else {
            return found.to_vec();
        };
        let ties_to = |x: &Value, mine: bool| {
            p.restriction
                .ties
                .iter()
                .filter(|((s, v), (hs, hv))| {
                    *s == self.path
                        && same_value(v, x)
                        && hs == pin_site
                        && pinned.iter().any(|w| same_value(w, hv)) == mine
                })
                .count()
        };
        // Held lists: the item of the value a modifier is tied to writes that modifier.
        if self.tied_to_pin(&self.path) {
            return found
                .iter()
                .filter(|x| ties_to(x, true) > 0)
                .cloned()
                .collect();
        }
        let mut out: Vec<Value> = Vec::new();
        for x in found {
            let seen = out.iter().filter(|o| same_value(o, x)).count();
            let total = found.iter().filter(|o| same_value(o, x)).count();
            let others = ties_to(x, false);
            if ties_to(x, true) > 0 || seen + others < total {
                out.push(x.clone());
            }
        }
        out
    }

    /// Pruning with lists held ([`Restriction::hold_lists`]): whether a value found at
    /// `path` is a modifier tied to the value the current distinct list item is built for
    /// (`no` to `mayo` in "ketchup no mayo"). That item then writes it: left optional, the
    /// model closed `(mayonnaise)` without it, and the unwritten `negation` opened a second
    /// main dish of its own.
    fn tied_to_pin(&self, path: &str) -> bool {
        let (Some(p), Some((pin_site, pinned))) = (self.prune.as_ref(), self.pin.as_ref()) else {
            return false;
        };
        p.restriction.hold_lists
            && p.restriction.ties.iter().any(|((s, _), (hs, hv))| {
                s == path && hs == pin_site && pinned.iter().any(|w| same_value(w, hv))
            })
    }

    /// Runs `f` with `seg` appended to the current path.
    fn at<T>(&mut self, seg: &str, f: impl FnOnce(&mut Self) -> T) -> T {
        let len = self.path.len();
        self.path.push('/');
        self.path.push_str(seg);
        let out = f(self);
        self.path.truncate(len);
        out
    }

    /// What the sites of `expr` at the current path say (neutral when not pruning).
    fn status(&mut self, expr: ExprId) -> Status {
        let pin = self.pin_key();
        let Some(p) = self.prune.as_mut() else {
            return Status::default();
        };
        let canon = self.notation.canon[expr as usize];
        if !p.prefixes.contains(&self.path) || p.stack.contains(&canon) {
            return Status {
                free: true,
                open: true,
                ..Status::default()
            };
        }
        let key = (canon, format!("{}{pin}", self.path));
        if let Some(&s) = p.status.get(&key) {
            return s;
        }
        p.stack.push(canon);
        let s = deep(|| self.status_of(canon));
        if let Some(p) = self.prune.as_mut() {
            p.stack.pop();
            p.status.insert(key, s);
        }
        s
    }

    fn status_of(&mut self, canon: ExprId) -> Status {
        let parts = self.shapes.parts(canon).clone();
        if parts.any {
            return Status {
                free: true,
                open: true,
                ..Status::default()
            };
        }
        let mut st = Status::default();
        if parts.listed.is_some() {
            // Listed arrays and objects are no site: written whole, as JSON is.
            st.free = true;
            st.open = true;
        }
        let (restriction, bound_here) = match &self.prune {
            Some(p) => (p.restriction, p.restriction.bound.contains(&self.path)),
            None => return st,
        };
        let found = self.found_here();
        let mut choice: Vec<Value> = Vec::new();
        let unpruned = restriction.free.contains(&self.path);
        if let Some(s) = &parts.string {
            match &s.values {
                Some(vs) => choice.extend(vs.iter().cloned().map(Value::String)),
                None if !unpruned && !bound_here && restriction.span_sites.contains(&self.path) => {
                    // A site no catalog binds is as free as before, its values the
                    // request's spans; with no span of its form left, as a bound site
                    // that found nothing (an optional field there is left out).
                    let spans = match &s.lexical {
                        None | Some(Lexical::NonEmpty) => match self.narrowed_spans() {
                            Some(offered) => !offered.is_empty(),
                            None => !restriction.spans.is_empty(),
                        },
                        Some(_) => !self.formed_spans(canon).is_empty(),
                    };
                    st = st.or(Status {
                        bound: !spans,
                        candidate: false,
                        found: false,
                        free: spans,
                        open: spans,
                    })
                }
                None => st = st.or(free_site(bound_here, !found.is_empty())),
            }
        }
        if let Some(n) = &parts.number {
            match &n.values {
                Some(vs) => choice.extend(vs.iter().cloned().map(Value::Number)),
                None if !unpruned
                    && !bound_here
                    && restriction.number_sites.contains(&self.path) =>
                {
                    // The request's numbers are this site's values, and the codes its
                    // words name there.
                    st = st.or(Status {
                        bound: true,
                        candidate: !found.is_empty() || !self.request_numbers(n).is_empty(),
                        found: !found.is_empty(),
                        free: false,
                        open: false,
                    })
                }
                None => st = st.or(free_site(bound_here, !found.is_empty())),
            }
        }
        if parts.bool_true {
            choice.push(Value::Bool(true));
        }
        if parts.bool_false {
            choice.push(Value::Bool(false));
        }
        if !choice.is_empty() && restriction.free.contains(&self.path) {
            st.free = true;
        } else if !choice.is_empty() {
            let hit = found
                .iter()
                .any(|c| choice.iter().any(|v| same_value(c, v)));
            st = st.or(Status {
                bound: true,
                candidate: hit,
                found: hit,
                free: false,
                open: false,
            });
        }
        if let Some(a) = &parts.array {
            for (i, &e) in a.prefix.iter().enumerate() {
                st = st.or(self.at(&i.to_string(), |b| b.status(e)));
            }
            if let Some(items) = a.items {
                st = st.or(self.at("*", |b| b.status(items)));
            }
        }
        if parts.object.is_some() {
            match self.notation.object(canon).cloned() {
                Some(ObjLayout::Record(r)) => st = st.or(self.record_status(&r)),
                Some(ObjLayout::Tagged { key, variants }) => {
                    for v in &variants {
                        st = st.or(self.variant_status(&key, &v.tags, &v.record));
                    }
                }
                None => {}
            }
        }
        st
    }

    fn record_status(&mut self, r: &RecordLayout) -> Status {
        let mut st = Status::default();
        for f in &r.fields {
            if !matches!(f.mode, FieldMode::Const(_)) {
                st = st.or(self.at(&escape_segment(&f.name), |b| b.status(f.expr)));
            }
        }
        if self.extras(r).is_some() {
            st.free = true;
            st.open = true;
        }
        st
    }

    /// A variant's sites: its tag (a choice) and its record's.
    fn variant_status(&mut self, key: &str, tags: &[(String, String)], r: &RecordLayout) -> Status {
        let tag_found = self.at(&escape_segment(key), |b| {
            b.candidates().is_some_and(|c| {
                c.iter()
                    .any(|c| tags.iter().any(|(t, _)| c.as_str() == Some(t.as_str())))
            })
        });
        let tag = Status {
            bound: true,
            candidate: tag_found,
            found: tag_found,
            free: false,
            open: false,
        };
        tag.or(self.record_status(r))
    }

    fn fresh(&mut self, base: &str) -> String {
        self.names.fresh(base)
    }

    /// The expression of a free number: the rules of its integer range, or its terminal.
    fn free_number(&mut self, n: &NumPart) -> G {
        if self.at_open_site(|r| &r.number_sites) {
            return self.bounded_number(n);
        }
        match n.range.and_then(|r| r.regex()) {
            Some(x) => self
                .regular_rules(&[x.as_str()], false, "int_range")
                .unwrap_or(G::Term(Terminal::of_number(n))),
            None => G::Term(Terminal::of_number(n)),
        }
    }

    /// Whether the current path is one of the open sites `which` selects, pruned here (not
    /// left unpruned, [`Restriction::free`]).
    fn at_open_site(&self, which: impl Fn(&Restriction) -> &BTreeSet<String>) -> bool {
        self.prune.as_ref().is_some_and(|p| {
            p.prefixes.contains(&self.path)
                && which(p.restriction).contains(&self.path)
                && !p.restriction.free.contains(&self.path)
        })
    }

    /// A number a model cannot run on for ever: at most [`MAX_INT_DIGITS`] digits before
    /// the point and [`MAX_FRACTION_DIGITS`] after it, within the schema's own range and
    /// sign (a sublanguage of the number terminal).
    fn bounded_number(&mut self, n: &NumPart) -> G {
        let sign = if n.lower.is_some() { "" } else { "-?" };
        let int = match n.lower {
            Some(crate::shape::Lower::Positive) if n.integer => {
                format!("[1-9][0-9]{{0,{}}}", MAX_INT_DIGITS - 1)
            }
            _ => format!("(0|[1-9][0-9]{{0,{}}})", MAX_INT_DIGITS - 1),
        };
        let frac = if n.integer {
            String::new()
        } else {
            format!("(\\.[0-9]{{1,{MAX_FRACTION_DIGITS}}})?")
        };
        let bounded = format!("{sign}{int}{frac}");
        let range = n.range.and_then(|r| r.regex());
        let mut regexes = vec![bounded.as_str()];
        regexes.extend(range.as_deref());
        self.regular_rules(&regexes, false, "bounded_number")
            .unwrap_or(G::Term(Terminal::of_number(n)))
    }

    /// The numbers of the request ([`Restriction::numbers`]) a free number here takes:
    /// of its type (an integer site takes whole numbers only) and within what the grammar
    /// says of its bounds.
    fn request_numbers(&self, n: &NumPart) -> Vec<Value> {
        let Some(p) = self.prune.as_ref() else {
            return Vec::new();
        };
        let mut out: Vec<Value> = Vec::new();
        for v in &p.restriction.numbers {
            let Some(x) = v.as_f64() else { continue };
            let whole = x.fract() == 0.0;
            if n.integer && !whole {
                continue;
            }
            match n.lower {
                Some(crate::shape::Lower::Positive) if x < 1.0 => continue,
                Some(_) if x < 0.0 => continue,
                _ => {}
            }
            if let Some(r) = n.range {
                if x < r.min as f64 || r.max.is_some_and(|m| x > m as f64) {
                    continue;
                }
            }
            // An integer site writes `5` for the `5.0` a request may give.
            let v = if n.integer && whole && x.abs() < 1e15 {
                Value::from(x as i64)
            } else {
                v.clone()
            };
            if !out.iter().any(|o| same_value(o, &v)) {
                out.push(v);
            }
        }
        out
    }

    /// The spans of the request a free string here may be (see [`Spans`](super::prune::Spans)), always
    /// quoted: any run of whole words (one rule per word, shared by every such site). `None`
    /// where the site takes no spans, or none is left.
    ///
    /// Never bare, even where the notation writes a one-word string bare: a bare word ends
    /// the value at the next space, so a model that starts a value of several words with
    /// its first word bare has ended it there (`content go` for "go to the gym"). Quoted,
    /// where the value ends is a choice the model makes after each word. A quoted string
    /// reads as the same value as the bare one, so every sentence is still one of the
    /// full grammar.
    fn span_value(&mut self, expr: ExprId, s: &StrPart) -> Option<G> {
        if !self.at_open_site(|r| &r.span_sites) {
            return None;
        }
        let p = self.prune.as_ref()?;
        // A catalog-bound site takes its values found; spans only where it must be written
        // and none was (an optional one with nothing found is left out before this).
        if p.restriction.bound.contains(&self.path)
            && self.candidates().is_some_and(|c| !c.is_empty())
        {
            return None;
        }
        if !matches!(s.lexical, None | Some(Lexical::NonEmpty)) {
            // A date, a date-time or a regular form: only the request's values of that form.
            let lits = self.formed_spans(expr);
            return (!lits.is_empty()).then(|| lit_alts(lits));
        }
        if let Some(offered) = self.narrowed_spans() {
            // The site's policy narrows its spans: each one offered as a quoted literal.
            let lits: Vec<String> = offered
                .iter()
                .map(|t| serde_json::to_string(t).unwrap_or_default())
                .collect();
            return (!lits.is_empty()).then(|| lit_alts(lits));
        }
        if p.restriction.spans.is_empty() {
            return None;
        }
        if let Some(words) = self.completed_tail() {
            // The examples' form asked for and none in the request: the cities the request
            // names, completed with their region; else a span with a tail of the model's
            // own, shaped as the examples' tails.
            let codes = p
                .restriction
                .span_policy
                .get(&self.path)
                .is_some_and(|policy| policy.tail_codes);
            let mut places: Vec<String> = Vec::new();
            for place in &p.restriction.places {
                let t = serde_json::to_string(&place.completed(codes)).unwrap_or_default();
                if !places.contains(&t) {
                    places.push(t);
                }
            }
            if !places.is_empty() {
                return Some(lit_alts(places));
            }
            let body = self.span_body(true)?;
            return Some(G::Seq(vec![
                G::Text("\"".into()),
                body,
                G::Text(", ".into()),
                tail_words(words),
                G::Text("\"".into()),
            ]));
        }
        self.quoted_spans()
    }

    /// See [`SpanPolicy::completed_tail`](super::prune::SpanPolicy::completed_tail): the
    /// most words of the tail a required span site of a `Head, Tail` form adds to a span.
    fn completed_tail(&self) -> Option<usize> {
        if self.later_line {
            return None;
        }
        let r = self.prune.as_ref()?.restriction;
        r.span_policy
            .get(&self.path)?
            .completed_tail(&r.spans, MAX_CHECKED_SPAN_WORDS)
    }

    /// The spans the site here may take where its [`SpanPolicy`](super::prune::SpanPolicy)
    /// narrows them (at most [`MAX_CHECKED_SPANS`], of at most [`MAX_CHECKED_SPAN_WORDS`]
    /// words); `None` where it takes any span.
    fn narrowed_spans(&self) -> Option<Vec<String>> {
        let r = self.prune.as_ref()?.restriction;
        let policy = r.span_policy.get(&self.path);
        if policy.is_none() && !self.later_line {
            return None;
        }
        let policy = policy.cloned().unwrap_or_default();
        if let Some(form) = &policy.moment {
            // A date or time field: the request's moments, as the field writes them.
            let mut moments: Vec<String> = Vec::new();
            for m in r.dates.iter().filter_map(|d| d.as_str()) {
                if let Some(t) = crate::moments::Moment::parse(m).and_then(|m| form.render(&m)) {
                    if !moments.contains(&t) {
                        moments.push(t);
                    }
                }
            }
            if !moments.is_empty() {
                return Some(moments);
            }
        }
        let mut offered = policy.offered(&r.spans, MAX_CHECKED_SPAN_WORDS, self.later_line)?;
        if policy.optional {
            // A code the name of another field of this record labels (`serial number
            // Q3CC-8` beside `sensorSerial`) is that field's, not this optional one's.
            // The record a site lies in, a list's items lying in the list's record.
            let record = |site: &str| {
                let mut s = site;
                while let Some(t) = s.strip_suffix("/*") {
                    s = t;
                }
                s.rsplit_once('/').map_or("", |(p, _)| p).to_string()
            };
            let here = record(&self.path);
            let labelled: Vec<&str> = r
                .span_policy
                .iter()
                .filter(|(site, _)| *site != &self.path && record(site) == here)
                .flat_map(|(_, sibling)| {
                    (0..r.spans.words.len())
                        .filter(|&i| !r.spans.words[i].used && sibling.labels(&r.spans, i))
                        .map(|i| r.spans.words[i].text.as_str())
                })
                .collect();
            let bare = |w: &str| w.trim_matches(|c: char| !c.is_alphanumeric()).to_string();
            let labelled: Vec<String> = labelled.into_iter().map(bare).collect();
            offered.retain(|t| !t.split_whitespace().any(|w| labelled.contains(&bare(w))));
        }
        offered.truncate(MAX_CHECKED_SPANS);
        Some(offered)
    }

    /// At a span site whose strings have a form (a date, a `pattern`, a length): the
    /// request's dates ([`Restriction::dates`]) and spans (of at most
    /// [`MAX_CHECKED_SPAN_WORDS`] words) that are of that form, each checked with the
    /// decoder, as quoted literals.
    fn formed_spans(&self, expr: ExprId) -> Vec<String> {
        let Some(p) = self.prune.as_ref() else {
            return Vec::new();
        };
        let r = p.restriction;
        // A moment as ISO 8601 writes it, and its date alone (`format: date`).
        let dates = r
            .dates
            .iter()
            .filter_map(|d| d.as_str().and_then(crate::moments::Moment::parse))
            .flat_map(|m| {
                [
                    Some(m.iso()),
                    crate::moments::MomentForm::iso_date().render(&m),
                ]
            })
            .flatten();
        let mut lits = Vec::new();
        for t in dates.chain(r.spans.texts(MAX_CHECKED_SPAN_WORDS)) {
            let text = serde_json::to_string(&t).unwrap_or_default();
            if !lits.contains(&text)
                && Decoder::reads_as(
                    &text,
                    self.shapes,
                    self.notation,
                    p.tables,
                    expr,
                    true,
                    &Value::String(t),
                )
            {
                lits.push(text);
            }
            if lits.len() >= MAX_CHECKED_SPANS {
                break;
            }
        }
        lits
    }

    /// The rule of every span of the request in quotes: `"` S_i `"` over the words a span
    /// may start at ([`Builder::span_body`]). Shared by every span site of the grammar.
    fn quoted_spans(&mut self) -> Option<G> {
        const KEY: &str = "spans:quoted";
        if let Some(n) = self.done.get(KEY) {
            return Some(G::Rule(n.clone()));
        }
        let body = self.span_body(false)?;
        let name = self.fresh("span");
        self.done.insert(KEY.to_string(), name.clone());
        let body = G::Seq(vec![G::Text("\"".into()), body, G::Text("\"".into())]);
        self.add(name.clone(), body, None);
        Some(G::Rule(name))
    }

    /// The rule of every span of the request, unquoted (escaped as inside quotes): one of
    /// S_i over the words a span may start at, with `S_i ::= w_i (gap_i S_i+1)?` (the gap
    /// taken where the next word belongs to the same name). Shared by every span site.
    /// `capital`: only the spans that start with a capital letter (a name's).
    fn span_body(&mut self, capital: bool) -> Option<G> {
        let key = if capital {
            "spans:body:capital"
        } else {
            "spans:body"
        };
        if let Some(n) = self.done.get(key) {
            return Some(G::Rule(n.clone()));
        }
        if capital {
            // The word rules are shared with the spans of any start.
            self.span_body(false)?;
            let spans = &self.prune.as_ref()?.restriction.spans;
            let starts: Vec<G> = (0..spans.words.len())
                .filter(|&i| {
                    spans.starts_at(i) && spans.words[i].text.starts_with(char::is_uppercase)
                })
                .map(|i| G::Rule(self.span_word_rules[i].clone()))
                .collect();
            if starts.is_empty() {
                return None;
            }
            let name = self.fresh("span_name");
            self.done.insert(key.to_string(), name.clone());
            self.add(name.clone(), G::Alt(starts), None);
            return Some(G::Rule(name));
        }
        let spans = self.prune.as_ref()?.restriction.spans.clone();
        let name = self.fresh("span_body");
        let names: Vec<String> = (0..spans.words.len())
            .map(|i| self.fresh(&format!("span_{i}")))
            .collect();
        let escape = |t: &str| {
            let q = serde_json::to_string(t).unwrap_or_default();
            q[1..q.len() - 1].to_string()
        };
        let starts: Vec<G> = (0..spans.words.len())
            .filter(|&i| spans.starts_at(i))
            .map(|i| G::Rule(names[i].clone()))
            .collect();
        if starts.is_empty() {
            return None;
        }
        // The rules reached from the starts.
        let mut reach = vec![false; spans.words.len()];
        for i in 0..spans.words.len() {
            reach[i] = spans.starts_at(i) || (i > 0 && reach[i - 1] && spans.continues(i - 1));
        }
        for (i, w) in spans.words.iter().enumerate() {
            if !reach[i] {
                continue;
            }
            let word = G::Text(escape(&w.text));
            let body = if spans.continues(i) {
                let more = G::Seq(vec![
                    G::Text(escape(w.gap.as_deref().unwrap_or(" "))),
                    G::Rule(names[i + 1].clone()),
                ]);
                if w.joined {
                    G::Seq(vec![word, more])
                } else {
                    G::Seq(vec![word, G::Opt(Box::new(more))])
                }
            } else {
                word
            };
            self.add(names[i].clone(), body, None);
        }
        self.done.insert(key.to_string(), name.clone());
        self.add(name.clone(), G::Alt(starts), None);
        self.span_word_rules = names;
        Some(G::Rule(name))
    }

    /// The expression of a free string: the rules of its regular form, or its terminal.
    fn free_string(&mut self, s: &StrPart, quoted: bool) -> G {
        let Some(checks) = s.lexical.as_ref().and_then(Lexical::regular) else {
            return G::Term(Terminal::of_string(s, quoted));
        };
        let base = match checks.first() {
            Some(c) if c.keyword == "format" => {
                c.source.replace(|c: char| !c.is_ascii_alphanumeric(), "_")
            }
            Some(c) => c.keyword.clone(),
            None => "regular".into(),
        };
        if let [c] = checks {
            if let Some((lo, hi)) = c.length_bounds() {
                return self.length_rule(lo, hi);
            }
        }
        let regexes: Vec<&str> = checks.iter().map(|c| c.regex.as_str()).collect();
        self.regular_rules(&regexes, true, &base)
            .unwrap_or(G::Term(Terminal::String))
    }

    /// A rule for a string of `lo` to `hi` characters (a bounded repetition), shared.
    fn length_rule(&mut self, lo: u64, hi: Option<u64>) -> G {
        let key = format!("len:{lo}:{hi:?}");
        if let Some(n) = self.done.get(&key) {
            return G::Rule(n.clone());
        }
        let name = self.fresh("length");
        self.done.insert(key, name.clone());
        let (lo, hi) = (lo as u32, hi.map(|h| h as u32));
        self.add(name.clone(), super::regular::length(lo, hi), None);
        G::Rule(name)
    }

    /// A rule for the texts matching every one of `regexes` (a quoted JSON string or a
    /// bare lexeme), with one rule per state of their automaton; shared by every value
    /// with the same constraints. `None` if they have no automaton (the shapes keep only
    /// those that do).
    fn regular_rules(&mut self, regexes: &[&str], quoted: bool, base: &str) -> Option<G> {
        let key = format!("re:{quoted}:{regexes:?}");
        if let Some(n) = self.done.get(&key) {
            return Some(G::Rule(n.clone()));
        }
        let dfa = crate::shape::regular::dfa(regexes).ok()?;
        let name = self.fresh(base);
        self.done.insert(key, name.clone());
        let (value, rules) =
            super::regular::rules(&dfa, quoted, |i| self.names.fresh(&format!("{name}_{i}")));
        self.add(name.clone(), value, None);
        self.rules.extend(rules);
        Some(G::Rule(name))
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
        let required = std::mem::take(&mut self.required_value);
        let expr = self.notation.canon[expr as usize];
        let p = self.shapes.parts(expr).clone();
        if p.any {
            return G::Term(Terminal::JsonValue);
        }
        let quoted = quoted
            || self
                .prune
                .as_ref()
                .is_some_and(|pr| pr.restriction.composed.contains(&self.path));
        let literals = self.free_literals(expr, &p, quoted);
        let spans = match &p.string {
            Some(s) if s.values.is_none() => self.span_value(expr, s),
            _ => None,
        };
        // A scalar that is just one terminal is written in place (`number`, `string`).
        if p.array.is_none()
            && p.object.is_none()
            && p.listed.is_none()
            && !p.null
            && !p.bool_true
            && !p.bool_false
        {
            match (&p.number, &p.string, &literals, &spans) {
                (_, _, Some(lits), Some(g)) => {
                    return G::Alt(vec![lit_alts(lits.clone()), g.clone()])
                }
                (_, _, Some(lits), None) => return lit_alts(lits.clone()),
                (None, Some(_), None, Some(g)) => return g.clone(),
                (Some(n), None, _, _) if n.values.is_none() => return self.free_number(n),
                (None, Some(s), _, _) if s.values.is_none() => return self.free_string(s, quoted),
                _ => {}
            }
        }
        let quoted = quoted && p.string.as_ref().is_some_and(|s| s.values.is_none());
        // A field's list (a required field's, or a keyed field's written at all) is never
        // written empty where the request gives its items values: the list is there to
        // carry them (`ids [102 103]`, not `ids []`), found or spans of the request
        // (`names ["Ada" "Bo"]`).
        let filled = required
            && self.prune.is_some()
            && p.array.as_ref().is_some_and(|a| {
                a.items.is_some_and(|i| {
                    self.at("*", |b| {
                        let st = b.status(i);
                        st.candidate || (st.open && b.at_open_site(|r| &r.span_sites))
                    })
                })
            });
        let key = if self.specialized() {
            format!(
                "v{expr}:{abbrev:?}:{quoted}:{filled}@{}{}",
                self.path,
                self.pin_key()
            )
        } else {
            format!("v{expr}:{abbrev:?}:{quoted}:{filled}")
        };
        if let Some(n) = self.done.get(&key) {
            return G::Rule(n.clone());
        }
        let name = self.fresh(&self.expr_name(expr));
        self.done.insert(key, name.clone());
        let found = self.candidates();
        let spans_offered = spans.is_some();
        let free = Free {
            number: p
                .number
                .as_ref()
                .filter(|n| n.values.is_none())
                .map(|n| self.free_number(n)),
            string: match spans {
                Some(g) => Some(g),
                None => p
                    .string
                    .as_ref()
                    .filter(|s| s.values.is_none())
                    .map(|s| self.free_string(s, quoted)),
            },
            spans: spans_offered,
        };
        let mut alts = scalar_alts(&p, abbrev, free, found.as_deref(), literals);
        // Recursive (a field's value may be an object with fields…): on a growing stack.
        if let Some(a) = &p.array {
            let inner = deep(|| self.array_tail(a, 0));
            alts.push(match inner {
                Some(g) if a.min_items > 0 || filled => seq(vec![lit("["), g, lit("]")]),
                Some(g) => seq(vec![lit("["), G::Opt(Box::new(g)), lit("]")]),
                None => lit("[]"),
            });
        }
        if p.object.is_some() {
            let body = deep(|| self.body(expr));
            let body = match &body {
                G::Rule(n) if self.found_inside(expr) => {
                    self.nonempty.get(n).cloned().flatten().unwrap_or(body)
                }
                _ => body,
            };
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
            let head = self.at(&i.to_string(), |b| b.value(a.prefix[i], &BTreeMap::new()));
            Some(match deep(|| self.array_tail(a, i + 1)) {
                Some(t) if i + 1 < min => seq(vec![head, lit(" "), t]),
                Some(t) => seq(vec![head, G::Opt(Box::new(seq(vec![lit(" "), t])))]),
                None => head,
            })
        } else {
            let items = a.items?;
            if a.max_len().is_some_and(|m| m <= i) {
                return None;
            }
            if i == 0 {
                if let Some(g) = self.distinct_items(a, items) {
                    return Some(g);
                }
            }
            let v = self.at("*", |b| b.value(items, &BTreeMap::new()));
            let more = self.at("*", |b| b.status(items)).droppable();
            Some(if more && min > i {
                exactly(v.clone(), seq(vec![lit(" "), v]), min - i)
            } else {
                let max = a.max_len().map(|m| m.saturating_sub(i));
                at_least(
                    v.clone(),
                    seq(vec![lit(" "), v]),
                    min.saturating_sub(i),
                    max,
                )
            })
        }
    }

    /// Whether the current path is held to some values ([`Builder::pin`]).
    fn pinned_here(&self) -> bool {
        self.pin
            .as_ref()
            .is_some_and(|(path, _)| *path == self.path)
    }

    /// The pin in rule keys: rules built under a pin are its own.
    fn pin_key(&self) -> String {
        match &self.pin {
            Some((path, v)) => format!("#{path}={}", Value::Array(v.clone())),
            None => String::new(),
        }
    }

    /// Pruning: the site that tells a list's items apart, with its candidates. The items
    /// of the array at the current path are scalars at a site with candidates, or records
    /// with a positional (required) field at such a site; the site is bound (no value
    /// outside the candidates can be written there) and each item writes one value there.
    fn distinct_site(&mut self, items: ExprId) -> Option<(String, Vec<Value>)> {
        if !self.specialized() || self.pin.is_some() {
            return None;
        }
        let canon = self.notation.canon[items as usize];
        let p = self.shapes.parts(canon).clone();
        if p.any || p.array.is_some() || p.listed.is_some() || p.null {
            return None;
        }
        self.at("*", |b| {
            if p.object.is_none() {
                let c = b.candidates()?;
                let st = b.status(canon);
                return (st.bound && !st.free).then(|| (b.path.clone(), c));
            }
            if p.string.is_some() || p.number.is_some() || p.bool_true || p.bool_false {
                return None;
            }
            let Some(ObjLayout::Record(r)) = b.notation.object(canon).cloned() else {
                return None;
            };
            if !r.forms.is_empty() {
                return None;
            }
            r.fields.iter().find_map(|f| {
                if f.mode != FieldMode::Positional {
                    return None;
                }
                b.at(&escape_segment(&f.name), |b| {
                    let c = b.candidates()?;
                    let st = b.status(f.expr);
                    let scalar = b.shapes.parts(b.notation.canon[f.expr as usize]);
                    (st.bound
                        && !st.free
                        && scalar.array.is_none()
                        && scalar.object.is_none()
                        && scalar.listed.is_none())
                    .then(|| (b.path.clone(), c))
                })
            })
        })
    }

    /// Pruning: an inline list whose items each write a found value at one site
    /// ([`Builder::distinct_site`]) writes each found value at most as often as it was
    /// found. Values are consumed when a line ends; within a line, without this, a list
    /// could repeat one value forever (`[(lettuce) (lettuce) …`). Up to
    /// [`MAX_DISTINCT_ITEMS`] values, in any order: `R_S ::= item_v (" " R_S+v)? | …` over
    /// the values not in `S`, one rule per set `S` written (as [`Builder::any_order`]); more
    /// values in the order the request names them, any of them left out
    /// ([`Builder::ordered_items`]). With lists held ([`Restriction::list_holds`]) the list
    /// does not end before it has written the values only it could take. `None` (the usual
    /// list) when `minItems` asks for more items than values.
    fn distinct_items(&mut self, a: &ArrPart, items: ExprId) -> Option<G> {
        let (path, values) = self.distinct_site(items)?;
        let n = values.len();
        let min = a.min_items as usize;
        if n == 0 || n > MAX_ORDERED_ITEMS || min > n {
            return None;
        }
        let max = a.max_len().map_or(n, |m| m.min(n));
        // One item rule per distinct value; a value found twice may be written twice.
        let mut item_of: Vec<usize> = Vec::with_capacity(n);
        let mut rules_of: Vec<G> = Vec::new();
        let mut distinct: Vec<&Value> = Vec::new();
        for v in &values {
            match distinct.iter().position(|d| same_value(d, v)) {
                Some(k) => item_of.push(k),
                None => {
                    distinct.push(v);
                    item_of.push(distinct.len() - 1);
                    self.pin = Some((path.clone(), vec![v.clone()]));
                    let g = self.at("*", |b| b.value(items, &BTreeMap::new()));
                    self.pin = None;
                    rules_of.push(g);
                }
            }
        }
        // The occurrences the list must write: the first k of a value held k times.
        let mut holds = self
            .prune
            .as_ref()
            .map(|p| p.restriction.list_holds(&path, &self.path))
            .unwrap_or_default();
        let mut must = 0usize;
        for (i, v) in values.iter().enumerate() {
            if let Some(k) = holds.iter().position(|h| same_value(h, v)) {
                holds.remove(k);
                must |= 1 << i;
            }
        }
        if must.count_ones() as usize > max {
            must = 0;
        }
        let items: Vec<G> = item_of.iter().map(|&k| rules_of[k].clone()).collect();
        if n > MAX_DISTINCT_ITEMS {
            return (min <= 1 && max == n).then(|| self.ordered_items(&items, must));
        }
        let name = self.fresh("distinct");
        let full = (1usize << n) - 1;
        let mut rules: HashMap<usize, String> = HashMap::new();
        for mask in 0..full {
            // A set from which the values held can still all be written.
            if ((mask | must).count_ones() as usize) <= max && (mask.count_ones() as usize) < max {
                rules.insert(mask, self.fresh(&format!("{name}{mask}")));
            }
        }
        let mut masks: Vec<usize> = rules.keys().copied().collect();
        masks.sort_unstable();
        for &mask in masks.iter().rev() {
            let mut alts = Vec::new();
            for j in 0..n {
                // Occurrences of one value are taken in order: the first unused one.
                let first_unused =
                    (0..n).find(|&i| item_of[i] == item_of[j] && mask & (1 << i) == 0);
                if first_unused != Some(j) {
                    continue;
                }
                let with = mask | (1 << j);
                if (with | must).count_ones() as usize > max {
                    continue;
                }
                let count = with.count_ones() as usize;
                let open = count < min || with & must != must;
                let item = items[j].clone();
                let more = rules.get(&with).cloned();
                alts.push(match more {
                    Some(r) if open => seq(vec![item, lit(" "), G::Rule(r)]),
                    Some(r) => seq(vec![
                        item,
                        G::Opt(Box::new(seq(vec![lit(" "), G::Rule(r)]))),
                    ]),
                    None if open => continue,
                    None => item,
                });
            }
            let rname = rules[&mask].clone();
            self.add(rname, G::Alt(alts), None);
        }
        rules.get(&0).cloned().map(G::Rule)
    }

    /// A list of found values in the order the request names them (`items`, one per
    /// occurrence), each written at most once, any of them left out but those in `must`
    /// (a bit per item): `O_i ::= item_j (" " O_j+1)? | …` for `j >= i` up to the first
    /// item that must be written; past the last one that must, the list may end.
    fn ordered_items(&mut self, items: &[G], must: usize) -> G {
        let n = items.len();
        let name = self.fresh("ordered");
        let names: Vec<String> = (0..n).map(|i| self.fresh(&format!("{name}{i}"))).collect();
        for i in 0..n {
            let mut alts = Vec::new();
            for j in i..n {
                let item = items[j].clone();
                let held_after = must >> (j + 1) != 0;
                alts.push(if j + 1 == n {
                    item
                } else if held_after {
                    seq(vec![item, lit(" "), G::Rule(names[j + 1].clone())])
                } else {
                    seq(vec![
                        item,
                        G::Opt(Box::new(seq(vec![lit(" "), G::Rule(names[j + 1].clone())]))),
                    ])
                });
                if must & (1 << j) != 0 {
                    break;
                }
            }
            self.add(names[i].clone(), G::Alt(alts), None);
        }
        G::Rule(names[0].clone())
    }

    /// Rule for the body of an object (without parentheses).
    fn body(&mut self, expr: ExprId) -> G {
        let expr = self.notation.canon[expr as usize];
        let key = if self.specialized() {
            format!("b{expr}@{}{}", self.path, self.pin_key())
        } else {
            format!("b{expr}")
        };
        if let Some(n) = self.done.get(&key) {
            return G::Rule(n.clone());
        }
        let name = self.fresh(&format!("{}_body", self.expr_name(expr)));
        self.done.insert(key, name.clone());
        let g = match self.notation.object(expr).cloned() {
            Some(ObjLayout::Record(r)) => self.record(&r, None, &name),
            Some(ObjLayout::Tagged { key, mut variants }) => {
                if self.specialized() {
                    let keep: Vec<bool> = variants
                        .iter()
                        .map(|v| {
                            self.variant_status(&key, &v.tags, &v.record)
                                .keeps_variant()
                        })
                        .collect();
                    if keep.iter().any(|&k| k) {
                        let mut k = keep.into_iter();
                        variants.retain(|_| k.next().unwrap_or(true));
                    }
                }
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
            _ => {
                self.never_empty.insert(name.clone());
                Some(G::Rule(name.clone()))
            }
        };
        self.nonempty.insert(name.clone(), nonempty);
        self.add(name.clone(), g, None);
        G::Rule(name)
    }

    /// An object without parentheses (see `FieldLayout::open`): `()` when empty.
    fn open_value(&mut self, expr: ExprId) -> G {
        let body = deep(|| self.body(expr));
        let (nonempty, never_empty) = match &body {
            G::Rule(n) => (
                self.nonempty.get(n).cloned().flatten(),
                self.never_empty.contains(n),
            ),
            _ => (None, false),
        };
        match nonempty {
            Some(g) if never_empty || self.found_inside(expr) => g,
            Some(g) => G::Alt(vec![lit("()"), g]),
            None => lit("()"),
        }
    }

    /// Pruning: whether an object here has a found item in its fields (and nothing free,
    /// or one of its own choices found: a call's `genre Western` beside free text fields),
    /// so it is not written empty: an empty object would leave its items unused, and
    /// the object was kept for them.
    fn found_inside(&mut self, expr: ExprId) -> bool {
        if !self.specialized() {
            return false;
        }
        let st = self.status(expr);
        st.candidate && (!st.free || st.found)
    }

    fn field_slot(&mut self, f: &FieldLayout) -> G {
        match f.mode {
            FieldMode::Keyed => {
                if f.is_flag(self.shapes) {
                    lit(&f.keyword)
                } else if f.open {
                    let v = self.open_value(f.expr);
                    seq(vec![lit(&f.keyword), lit(" "), v])
                } else {
                    // A list written under its keyword is filled where the request gives
                    // its items values, as a required one is: an optional field left out
                    // says what an empty list would (`pairings []` named nothing asked).
                    self.required_value = true;
                    let v = self.value(f.expr, &f.abbrev);
                    self.required_value = false;
                    seq(vec![lit(&f.keyword), lit(" "), v])
                }
            }
            FieldMode::Keyless => self.value_as(f.expr, &f.abbrev, true),
            _ => self.value(f.expr, &f.abbrev),
        }
    }

    fn record(&mut self, r: &RecordLayout, tag: Option<G>, name: &str) -> G {
        if !r.forms.is_empty() && self.extras(r).is_none() {
            return self.record_forms(r, tag, name);
        }
        // Pruned, a value found once (a catalog value, a number the request says once)
        // that several fields of the record could take is written at most once in it: the
        // required fields (in their order) and the few found optional fields written in
        // any order (below) are then built split by those values (`shared_alts`), with
        // the values used so far in the state of each rule.
        // A modifier tied to the value this list item is built for is written with it.
        let forced: Vec<bool> = r
            .fields
            .iter()
            .map(|f| {
                matches!(f.mode, FieldMode::Keyed | FieldMode::Keyless)
                    && self.tied_to_pin(&format!("{}/{}", self.path, escape_segment(&f.name)))
            })
            .collect();
        let optional_fields: Vec<&FieldLayout> = r
            .fields
            .iter()
            .zip(&forced)
            .filter(|(_, &forced)| !forced)
            .map(|(f, _)| f)
            .filter(|f| {
                matches!(f.mode, FieldMode::Keyed | FieldMode::Keyless)
                    && !self
                        .at(&escape_segment(&f.name), |b| b.status(f.expr))
                        .droppable()
            })
            .collect();
        let few_optional = self.prune.is_some()
            && self.extras(r).is_none()
            && (1..=MAX_ANY_ORDER).contains(&optional_fields.len());
        let any_order = few_optional && optional_fields.len() >= 2;
        let positional_fields: Vec<&FieldLayout> = r
            .fields
            .iter()
            .filter(|f| f.mode == FieldMode::Positional)
            .collect();
        let mut sharing: Vec<&FieldLayout> = positional_fields.clone();
        if few_optional {
            sharing.extend(optional_fields.iter().copied());
        }
        let shared = if self.prune.is_some() && sharing.len() >= 2 {
            self.shared_values(&sharing)
        } else {
            None
        };
        let shared_optional = few_optional && shared.is_some();
        // Each mandatory item: its alternatives, each with the shared values it uses and
        // those that must be used already for it to be offered.
        let mut mandatory: Vec<Vec<(G, u32, u32)>> =
            tag.into_iter().map(|t| vec![(t, 0, 0)]).collect();
        let mut optional: Vec<G> = Vec::new();
        for (f, &forced) in r.fields.iter().zip(&forced) {
            let seg = escape_segment(&f.name);
            match f.mode {
                FieldMode::Const(_) => {}
                FieldMode::Positional => {
                    let alts = match &shared {
                        Some(shared) => {
                            let i = sharing
                                .iter()
                                .position(|x| std::ptr::eq(*x, f))
                                .unwrap_or(0);
                            self.shared_alts(f, shared, i, true)
                        }
                        None => vec![(self.at(&seg, |b| b.positional(f)), 0, 0)],
                    };
                    mandatory.push(alts);
                }
                FieldMode::Keyed | FieldMode::Keyless if forced => {
                    let g = self.at(&seg, |b| b.field_slot(f));
                    mandatory.push(vec![(g, 0, 0)]);
                }
                FieldMode::Keyed | FieldMode::Keyless => {
                    if shared_optional || self.at(&seg, |b| b.status(f.expr)).droppable() {
                        continue;
                    }
                    let g = self.at(&seg, |b| b.field_slot(f));
                    optional.push(g);
                }
            }
        }
        // The chain R_j over optional slots, then the repeated undeclared properties.
        let mut next: Option<G> = None;
        if let Some(e) = self.extras(r) {
            let v = self.at("*", |b| b.value(e, &BTreeMap::new()));
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
        // Pruned for a request, a few found fields may come in any order (the model writes
        // them as the request names them; `CompiledSpec::expand_any_order` reads them).
        let mut optional_shared: Option<Vec<Vec<(G, u32)>>> = None;
        if let Some(sv) = shared.as_ref().filter(|_| shared_optional) {
            let from = positional_fields.len();
            let mut slots = Vec::new();
            for (i, f) in optional_fields.iter().enumerate() {
                let alts = self.shared_alts(f, sv, from + i, false);
                slots.push(alts.into_iter().map(|(g, bits, _)| (g, bits)).collect());
            }
            optional_shared = Some(slots);
        } else if any_order {
            next = Some(self.any_order(&optional, name));
            optional.clear();
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
        // What may follow the mandatory items, by the shared values they used.
        let ends = self.mandatory_ends(&mandatory);
        let tails: HashMap<u32, Option<G>> = match &optional_shared {
            Some(slots) => self.any_order_shared(slots, name, &ends),
            None => ends.iter().map(|&u| (u, next.clone())).collect(),
        };
        if mandatory.is_empty() {
            return match tails.get(&0).cloned().flatten() {
                Some(n) => G::Opt(Box::new(n)),
                None => lit(""),
            };
        }
        let mut rules: HashMap<(usize, u32), G> = HashMap::new();
        self.mandatory_chain(&mandatory, 0, 0, &tails, name, &mut rules)
    }

    /// The sets of shared values the `mandatory` items ([`Builder::record`]) may have used
    /// once all are written.
    fn mandatory_ends(&self, mandatory: &[Vec<(G, u32, u32)>]) -> Vec<u32> {
        let mut states: BTreeSet<u32> = BTreeSet::from([0]);
        for alts in mandatory {
            states = states
                .iter()
                .flat_map(|&used| {
                    alts.iter()
                        .filter(move |(_, bits, needs)| bits & used == 0 && needs & used == *needs)
                        .map(move |(_, bits, _)| used | bits)
                })
                .collect();
        }
        states.into_iter().collect()
    }

    /// The mandatory items from `i` on, with the shared values `used` before them, then
    /// what may follow (`tails`): written in place while an item has one plain
    /// alternative, else one rule per (item, values used) state.
    fn mandatory_chain(
        &mut self,
        mandatory: &[Vec<(G, u32, u32)>],
        i: usize,
        used: u32,
        tails: &HashMap<u32, Option<G>>,
        name: &str,
        rules: &mut HashMap<(usize, u32), G>,
    ) -> G {
        if i == mandatory.len() {
            return match tails.get(&used).cloned().flatten() {
                Some(n) => G::Opt(Box::new(seq(vec![lit(" "), n]))),
                None => lit(""),
            };
        }
        if let Some(g) = rules.get(&(i, used)) {
            return g.clone();
        }
        let then = |b: &mut Self, rules: &mut HashMap<(usize, u32), G>, bits: u32| {
            let rest = b.mandatory_chain(mandatory, i + 1, used | bits, tails, name, rules);
            if i + 1 == mandatory.len() {
                rest
            } else {
                seq(vec![lit(" "), rest])
            }
        };
        if let [(g, 0, 0)] = mandatory[i].as_slice() {
            let g = g.clone();
            let rest = then(self, rules, 0);
            return seq(vec![g, rest]);
        }
        let mut alts = Vec::new();
        for (g, bits, needs) in &mandatory[i] {
            if bits & used != 0 || needs & used != *needs {
                continue;
            }
            let rest = then(self, rules, *bits);
            alts.push(seq(vec![g.clone(), rest]));
        }
        let rname = self.fresh(&format!("{name}_req{i}_{used}"));
        self.add(rname.clone(), G::Alt(alts), None);
        let g = G::Rule(rname);
        rules.insert((i, used), g.clone());
        g
    }

    /// Pruning: what field `f` may take where it could share a value with another field:
    /// its candidates, and at an open number site the request's numbers (those no
    /// candidate is), apart.
    fn shareable(&mut self, f: &FieldLayout) -> Shareable {
        self.at(&escape_segment(&f.name), |b| {
            if !b.specialized() {
                return None;
            }
            let found = b.candidates().unwrap_or_default();
            let mut numbers = Vec::new();
            let expr = b.notation.canon[f.expr as usize];
            let p = b.shapes.parts(expr);
            let scalar = p.array.is_none() && p.object.is_none() && p.listed.is_none();
            if let Some(n) = p.number.as_ref().filter(|n| scalar && n.values.is_none()) {
                if b.at_open_site(|r| &r.number_sites) {
                    numbers = b
                        .request_numbers(n)
                        .into_iter()
                        .filter(|v| !found.iter().any(|x| same_value(x, v)))
                        .collect();
                }
            }
            (!found.is_empty() || !numbers.is_empty()).then(|| FieldValues {
                site: b.path.clone(),
                found,
                numbers,
            })
        })
    }

    /// Pruning: what `fields` may take ([`Builder::shareable`]) and the values one mention
    /// in the request gives that two or more of them could take, each written once: a
    /// number the request says once (the `5` of "node 5" as node and as pod; one said
    /// twice may be written twice), or a value one span of the request offers at several
    /// sites ([`Restriction::readings`]: `dallas` as departure and as destination city;
    /// not the code `1` that one word names for a service and another for a province).
    /// With each field, the bits of the shared values it takes by that mention. `None`
    /// when no value is shared (or more than [`MAX_SHARED`] are, or a pin is already held).
    fn shared_values(&mut self, fields: &[&FieldLayout]) -> Option<SharedValues> {
        if self.pin.is_some() {
            return None;
        }
        let takes: Vec<Shareable> = fields.iter().map(|f| self.shareable(f)).collect();
        let r = self.prune.as_ref()?.restriction;
        let said = |v: &Value| r.numbers.iter().filter(|n| same_value(n, v)).count();
        let one_mention = |a: &str, b: &str, v: &Value| {
            r.readings.iter().any(|g| {
                g.iter().any(|(s, x)| s == a && same_value(x, v))
                    && g.iter().any(|(s, x)| s == b && same_value(x, v))
            })
        };
        // (value, the fields that take it by one mention)
        let mut shared: Vec<(Value, Vec<usize>)> = Vec::new();
        let mut add = |v: &Value, members: Vec<usize>| {
            if members.len() < 2 || shared.iter().any(|(x, _)| same_value(x, v)) {
                return;
            }
            shared.push((v.clone(), members));
        };
        for (i, t) in takes.iter().enumerate() {
            let Some(t) = t else { continue };
            for v in &t.numbers {
                if said(v) == 1 {
                    let members = takes
                        .iter()
                        .enumerate()
                        .filter(|(_, o)| {
                            o.as_ref()
                                .is_some_and(|o| o.numbers.iter().any(|x| same_value(x, v)))
                        })
                        .map(|(j, _)| j)
                        .collect();
                    add(v, members);
                }
            }
            for v in &t.found {
                let once = takes
                    .iter()
                    .flatten()
                    .all(|o| o.found.iter().filter(|x| same_value(x, v)).count() <= 1);
                if !once {
                    continue;
                }
                let members = takes
                    .iter()
                    .enumerate()
                    .filter(|(j, o)| {
                        o.as_ref().is_some_and(|o| {
                            o.found.iter().any(|x| same_value(x, v))
                                && (*j == i || one_mention(&t.site, &o.site, v))
                        })
                    })
                    .map(|(j, _)| j)
                    .collect();
                add(v, members);
            }
        }
        if shared.is_empty() || shared.len() > MAX_SHARED {
            return None;
        }
        let mut bits = vec![0u32; fields.len()];
        for (k, (_, members)) in shared.iter().enumerate() {
            for &j in members {
                bits[j] |= 1 << k;
            }
        }
        let values = shared.into_iter().map(|(v, _)| v).collect();
        Some(SharedValues {
            takes,
            values,
            bits,
        })
    }

    /// The slot of field `i` of `shared` ([`Builder::shared_values`]) split by the shared
    /// values it takes: one alternative per such value, using its bit, and one (no bit)
    /// for its other values. Each alternative comes with the bits that must be used
    /// already for it to be offered: a required field (`positional`) whose values are all
    /// shared takes, once they are all used, what it takes where nothing was found, so
    /// it can always be written.
    fn shared_alts(
        &mut self,
        f: &FieldLayout,
        shared: &SharedValues,
        i: usize,
        positional: bool,
    ) -> Vec<(G, u32, u32)> {
        let seg = escape_segment(&f.name);
        let slot = |b: &mut Self| {
            b.at(&seg, |b| {
                if positional {
                    b.positional(f)
                } else {
                    b.field_slot(f)
                }
            })
        };
        let (Some(t), mine) = (&shared.takes[i], shared.bits[i]) else {
            return vec![(slot(self), 0, 0)];
        };
        if mine == 0 {
            return vec![(slot(self), 0, 0)];
        }
        let path = format!("{}/{seg}", self.path);
        let pinned = |b: &mut Self, values: Vec<Value>| {
            b.pin = Some((path.clone(), values));
            let g = slot(b);
            b.pin = None;
            g
        };
        let mut alts = Vec::new();
        let all: Vec<&Value> = t.found.iter().chain(&t.numbers).collect();
        let is_mine = |x: &Value| {
            shared
                .values
                .iter()
                .enumerate()
                .any(|(k, v)| mine & (1 << k) != 0 && same_value(x, v))
        };
        for (k, v) in shared.values.iter().enumerate() {
            if mine & (1 << k) != 0 {
                alts.push((pinned(self, vec![v.clone()]), 1 << k, 0));
            }
        }
        let rest: Vec<Value> = all.into_iter().filter(|x| !is_mine(x)).cloned().collect();
        if !rest.is_empty() {
            alts.push((pinned(self, rest), 0, 0));
        } else if positional {
            // Held to no value: what the field takes where the request gives it nothing
            // (every choice, any number in its range).
            alts.push((pinned(self, Vec::new()), 0, mine));
        }
        alts
    }

    /// [`Builder::any_order`] over slots with alternatives, each using a set of shared
    /// values (bits): a value is written at most once in the record. One rule per reachable
    /// (slots written, values used) state, from each set of values used before (`starts`):
    /// the rule for each start where anything can be written, `None` where nothing can.
    fn any_order_shared(
        &mut self,
        slots: &[Vec<(G, u32)>],
        name: &str,
        starts: &[u32],
    ) -> HashMap<u32, Option<G>> {
        let full = (1usize << slots.len()) - 1;
        // Whether anything can still be written from a state.
        let open = |mask: usize, used: u32| {
            slots.iter().enumerate().any(|(j, alts)| {
                mask & (1 << j) == 0 && alts.iter().any(|(_, bits)| bits & used == 0)
            })
        };
        let mut rules: HashMap<(usize, u32), String> = HashMap::new();
        let mut todo: Vec<(usize, u32)> = starts
            .iter()
            .filter(|&&u| open(0, u))
            .map(|&u| (0, u))
            .collect();
        let mut order = Vec::new();
        while let Some(state) = todo.pop() {
            if rules.contains_key(&state) {
                continue;
            }
            let rname = self.fresh(&format!("{name}_any{}_{}", state.0, state.1));
            rules.insert(state, rname);
            order.push(state);
            let (mask, used) = state;
            for (j, alts) in slots.iter().enumerate() {
                if mask & (1 << j) != 0 {
                    continue;
                }
                for (_, bits) in alts {
                    let next = (mask | (1 << j), used | bits);
                    if bits & used == 0 && next.0 != full && open(next.0, next.1) {
                        todo.push(next);
                    }
                }
            }
        }
        for (mask, used) in order {
            let mut alts = Vec::new();
            for (j, slot) in slots.iter().enumerate() {
                if mask & (1 << j) != 0 {
                    continue;
                }
                for (g, bits) in slot {
                    if bits & used != 0 {
                        continue;
                    }
                    let next = (mask | (1 << j), used | bits);
                    alts.push(match rules.get(&next) {
                        Some(r) => seq(vec![
                            g.clone(),
                            G::Opt(Box::new(seq(vec![lit(" "), G::Rule(r.clone())]))),
                        ]),
                        None => g.clone(),
                    });
                }
            }
            let rname = rules[&(mask, used)].clone();
            self.add(rname, G::Alt(alts), None);
        }
        starts
            .iter()
            .map(|&u| (u, rules.get(&(0, u)).map(|r| G::Rule(r.clone()))))
            .collect()
    }

    /// Each of `slots` at most once, in any order, at least one: `R_S ::= o_j (" " R_S+j)?
    /// | …` for every `j` not in `S`, one rule per set `S` of slots written.
    fn any_order(&mut self, slots: &[G], name: &str) -> G {
        let full = (1usize << slots.len()) - 1;
        let mut rules: HashMap<usize, String> = HashMap::new();
        for mask in (0..full).rev() {
            let rname = self.fresh(&format!("{name}_any{mask}"));
            rules.insert(mask, rname);
        }
        for mask in (0..full).rev() {
            let mut alts = Vec::new();
            for (j, o) in slots.iter().enumerate() {
                if mask & (1 << j) != 0 {
                    continue;
                }
                let with = mask | (1 << j);
                alts.push(match rules.get(&with) {
                    Some(r) => seq(vec![
                        o.clone(),
                        G::Opt(Box::new(seq(vec![lit(" "), G::Rule(r.clone())]))),
                    ]),
                    None => o.clone(),
                });
            }
            let rname = rules[&mask].clone();
            self.add(rname, G::Alt(alts), None);
        }
        G::Rule(rules[&0].clone())
    }

    /// Pruning: the forms of a merged union a request asks for (indexes into `r.forms`;
    /// none: nothing says which). A form is kept as a union variant is: for a found item
    /// in it, or when it has no known site at all (a free number beside enums that found
    /// nothing does not keep an order of a drink nobody asked for). A value every form
    /// could take (`a` read as the number 1 of any order) does not say which form the
    /// request asks for: it keeps none. `statuses` are those of `r.fields`.
    fn kept_forms(&mut self, r: &RecordLayout, statuses: &[Status]) -> Vec<usize> {
        let found: Vec<Vec<Value>> = r
            .forms
            .iter()
            .map(|form| match form.fields.first() {
                Some(&i) => self.at(&escape_segment(&r.fields[i].name), |b| b.found_below()),
                None => Vec::new(),
            })
            .collect();
        let shared = |v: &Value| {
            found.len() >= 2 && found.iter().all(|f| f.iter().any(|x| same_value(x, v)))
        };
        let mut kept: Vec<usize> = r
            .forms
            .iter()
            .zip(&found)
            .enumerate()
            .filter(|(_, (form, found))| {
                form.fields.first().is_some_and(|&i| {
                    let st = statuses[i];
                    !st.bound
                        || (st.candidate && found.iter().any(|v| !shared(v)))
                        || (st.candidate && found.is_empty())
                })
            })
            .map(|(k, _)| k)
            .collect();
        if !kept.is_empty() && kept.len() < r.forms.len() {
            // A form the request names is asked for although nothing of it was found: named
            // at least as much as any form kept for its values and half as much as the
            // form named most, where it has something to write (a free parameter:
            // `search` beside a tool kept for a number the request gives). A call of
            // optional catalog values none of which was found would be written empty.
            let evidence = self.form_evidence(r);
            let most = evidence.iter().copied().max().unwrap_or(0);
            let kept_most = kept.iter().map(|&k| evidence[k]).max().unwrap_or(0);
            for (k, &e) in evidence.iter().enumerate() {
                let writes = r.forms[k]
                    .fields
                    .first()
                    .is_some_and(|&i| !statuses[i].droppable());
                if e > 0 && 2 * e >= most && e >= kept_most && writes && !kept.contains(&k) {
                    kept.push(k);
                }
            }
            kept.sort_unstable();
        }
        kept
    }

    /// What the sites of each field of `r` say, at the current path.
    fn field_statuses(&mut self, r: &RecordLayout) -> Vec<Status> {
        r.fields
            .iter()
            .map(|f| self.at(&escape_segment(&f.name), |b| b.status(f.expr)))
            .collect()
    }

    /// A field's description (a form's: what its tool is for), from its value's schema or
    /// the property's.
    fn field_doc(&self, f: &FieldLayout) -> Option<&str> {
        self.shapes
            .doc(f.expr)
            .or_else(|| self.shapes.doc(f.source))
    }

    /// How much the request names each form of `r` by its name and description
    /// ([`form_evidence`]).
    fn form_evidence(&self, r: &RecordLayout) -> Vec<usize> {
        let Some(p) = self.prune.as_ref() else {
            return vec![0; r.forms.len()];
        };
        let request = p
            .restriction
            .spans
            .words
            .iter()
            .flat_map(|w| content_words(&w.text))
            .collect();
        let forms: Vec<(&str, Option<&str>)> = r
            .forms
            .iter()
            .map(|form| match form.fields.first() {
                Some(&i) => (r.fields[i].name.as_str(), self.field_doc(&r.fields[i])),
                None => ("", None),
            })
            .collect();
        form_evidence(&request, &forms)
    }

    /// Whether a request asks for another line of a root list whose items are a merged
    /// union of forms: some form is kept for a value of its own ([`Builder::kept_forms`]).
    /// A value every form could take alone (the `1` of an `a` no order used) starts no
    /// line: in a release build Qwen2.5-Coder-0.5B wrote `drink 1` after the orders.
    /// Beside it: whether some form has a free site the request's values can still fill
    /// (a second city for a weather tool whose unit found nothing).
    fn forms_asked(&mut self, item: ExprId) -> (bool, bool) {
        let canon = self.notation.canon[item as usize];
        let Some(ObjLayout::Record(r)) = self.notation.object(canon).cloned() else {
            return (true, true);
        };
        if r.forms.is_empty() {
            return (true, true);
        }
        let statuses = self.field_statuses(&r);
        let fillable = r
            .forms
            .iter()
            .any(|form| form.fields.first().is_some_and(|&i| statuses[i].open));
        (!self.kept_forms(&r, &statuses).is_empty(), fillable)
    }

    /// The forms of a line item no line wrote yet that the request asks for after lines of
    /// other forms: those it names apart from them, with a value of their own left
    /// ([`Builder::named_apart`]). A request that names two tools, each with its own
    /// values, asks for both.
    fn form_named_left(&mut self, item: ExprId) -> Vec<usize> {
        let canon = self.notation.canon[item as usize];
        let Some(ObjLayout::Record(r)) = self.notation.object(canon).cloned() else {
            return Vec::new();
        };
        let Some(p) = self.prune.as_ref() else {
            return Vec::new();
        };
        let restriction = p.restriction;
        if r.forms.len() < 2 || restriction.written.is_empty() {
            return Vec::new();
        }
        let written: BTreeSet<&str> = restriction
            .written
            .keys()
            .filter_map(|s| s.split('/').nth(2))
            .collect();
        let told: Vec<usize> = (0..r.forms.len())
            .filter(|&k| {
                r.forms[k]
                    .fields
                    .first()
                    .is_some_and(|&i| written.contains(escape_segment(&r.fields[i].name).as_str()))
            })
            .collect();
        if told.is_empty() {
            return Vec::new();
        }
        let statuses = self.field_statuses(&r);
        self.named_apart(&r, &statuses, &told)
    }

    /// The forms of `r` besides `told` that the request names apart from those: a word of
    /// the form's name, not a verb many tools share (`find`), is a word of the request that
    /// no name or description of the forms `told` has (`shipping` for `shipping_cost`
    /// beside `get_weather`, "Get the current weather for a city"), with a value left for
    /// the form near it ([`Spans::named_near`]): a number of the request that fits it, or a
    /// word the request marks as a value's (`Oslo`) for a free site of it. `statuses` are
    /// those of `r.fields`.
    fn named_apart(&self, r: &RecordLayout, statuses: &[Status], told: &[usize]) -> Vec<usize> {
        let Some(p) = self.prune.as_ref() else {
            return Vec::new();
        };
        let mut words = BTreeSet::new();
        for &k in told {
            if let Some(&i) = r.forms[k].fields.first() {
                let f = &r.fields[i];
                let told = content_words(&f.name)
                    .into_iter()
                    .chain(self.field_doc(f).map(content_words).unwrap_or_default());
                words.extend(told.map(|w| stem_key(&w)));
            }
        }
        (0..r.forms.len())
            .filter(|k| !told.contains(k))
            .filter(|&k| {
                r.forms[k].fields.first().is_some_and(|&i| {
                    let st = statuses[i];
                    let names: BTreeSet<String> = content_words(&r.fields[i].name)
                        .into_iter()
                        .filter(|w| !words.contains(&stem_key(w)) && !is_action(w))
                        .collect();
                    !names.is_empty()
                        && p.restriction
                            .spans
                            .named_near(&names, st.candidate, st.open)
                })
            })
            .collect()
    }

    /// A positional field's slot: its value, after its keyword where it is named.
    fn positional(&mut self, f: &FieldLayout) -> G {
        self.required_value = true;
        let v = self.value_as(f.expr, &f.abbrev, f.quoted);
        self.required_value = false;
        if f.named {
            seq(vec![lit(&format!("{} ", f.keyword)), v])
        } else {
            v
        }
    }

    /// A merged union of closed forms (see `RecordLayout::forms`): its positional fields,
    /// then one form's fields. Pruning drops a form whose first field has no candidate
    /// (all are kept when none has), and a form's optional fields without one.
    fn record_forms(&mut self, r: &RecordLayout, tag: Option<G>, name: &str) -> G {
        let mut head: Vec<G> = tag.into_iter().collect();
        for f in &r.fields {
            if f.mode == FieldMode::Positional {
                let seg = escape_segment(&f.name);
                head.push(self.at(&seg, |b| b.positional(f)));
            }
        }
        let statuses = self.field_statuses(r);
        let droppable: Vec<bool> = r
            .fields
            .iter()
            .zip(&statuses)
            .map(|(f, st)| {
                matches!(f.mode, FieldMode::Keyed | FieldMode::Keyless) && st.droppable()
            })
            .collect();
        let kept = match &self.line_forms {
            Some(only) if self.path == "/*" => only.clone(),
            _ => self.kept_forms(r, &statuses),
        };
        let mut forms: Vec<&Form> = kept.iter().map(|&k| &r.forms[k]).collect();
        if forms.is_empty() {
            forms = r.forms.iter().collect();
        }
        let mut alts = Vec::new();
        for (k, form) in forms.into_iter().enumerate() {
            let slots: Vec<(usize, bool)> = form
                .fields
                .iter()
                .map(|&i| (i, form.required.contains(&i)))
                .filter(|&(i, req)| req || !droppable[i])
                .collect();
            let fname = self.fresh(&format!("{name}_form{k}"));
            if let Some(g) = self.chain(r, &slots, &fname) {
                self.add(fname.clone(), g, None);
                alts.push(G::Rule(fname));
            }
        }
        let forms = G::Alt(alts);
        if head.is_empty() {
            return forms;
        }
        let mut items = Vec::new();
        for h in head {
            items.push(h);
            items.push(lit(" "));
        }
        items.push(forms);
        seq(items)
    }

    /// Pruning: the candidates at the sites at or below the current path (not the sites
    /// left free).
    fn found_below(&self) -> Vec<Value> {
        let Some(p) = self.prune.as_ref() else {
            return Vec::new();
        };
        let below = |site: &str| {
            site == self.path
                || (site.starts_with(self.path.as_str())
                    && site.as_bytes().get(self.path.len()) == Some(&b'/'))
        };
        p.restriction
            .candidates
            .iter()
            .filter(|(site, _)| below(site) && !p.restriction.free.contains(site.as_str()))
            .flat_map(|(_, vs)| vs.iter().cloned())
            .collect()
    }

    /// Fields `slots` of `r` (index, mandatory) in order, one space apart: the text with
    /// at least one of them, or `None` when they are all optional and none is given.
    /// Optional runs use the chain `R_j ::= o_j (" " R_j+1)? | R_j+1`.
    fn chain(&mut self, r: &RecordLayout, slots: &[(usize, bool)], name: &str) -> Option<G> {
        // From the end: the nonempty text of slots j.., and whether it may be empty.
        let mut next: Option<G> = None;
        let mut may_be_empty = true;
        for (j, &(i, mandatory)) in slots.iter().enumerate().rev() {
            let f = &r.fields[i];
            let slot = self.at(&escape_segment(&f.name), |b| b.field_slot(f));
            let then = match (&next, may_be_empty) {
                (None, _) => slot.clone(),
                (Some(n), true) => seq(vec![
                    slot.clone(),
                    G::Opt(Box::new(seq(vec![lit(" "), n.clone()]))),
                ]),
                (Some(n), false) => seq(vec![slot.clone(), lit(" "), n.clone()]),
            };
            let g = if mandatory {
                may_be_empty = false;
                then
            } else {
                match &next {
                    Some(n) => G::Alt(vec![then, n.clone()]),
                    None => then,
                }
            };
            if j == 0 {
                return Some(g);
            }
            let rname = self.fresh(&format!("{name}_{j}"));
            self.add(rname.clone(), g, None);
            next = Some(G::Rule(rname));
        }
        None
    }

    fn line_item(&mut self, expr: ExprId) -> G {
        if self.shapes.parts(expr).object_only() {
            deep(|| self.body(expr))
        } else {
            self.value(expr, &BTreeMap::new())
        }
    }

    /// A block document: one line per field, plain lines first, then sections (see
    /// `Encoder::block`), then undeclared properties. From `resume` on, when given.
    fn block(&mut self, resume: Option<(usize, usize)>) -> G {
        let root = self.shapes.root;
        let Some(ObjLayout::Record(r)) = self.notation.object(root).cloned() else {
            return G::Alt(Vec::new());
        };
        let mut items = Vec::new();
        let fields = block_fields(self.shapes, &r);
        // Required fields still open: to write, or the section being written.
        let open_required: Vec<String> = fields
            .iter()
            .enumerate()
            .filter(|(i, f)| {
                f.mode == FieldMode::Positional
                    && match resume {
                        Some((at, _)) => *i > at || (*i == at && is_section(self.shapes, f.expr)),
                        None => true,
                    }
            })
            .map(|(_, f)| format!("{}/{}", self.path, escape_segment(&f.name)))
            .collect();
        // The fields offered, with the lines of a section written already (None: the line
        // or section is still to write).
        let mut plan: Vec<Option<Option<usize>>> = Vec::with_capacity(fields.len());
        for (i, f) in fields.iter().enumerate() {
            let seg = escape_segment(&f.name);
            let section = is_section(self.shapes, f.expr);
            let written = match resume {
                Some((at, _)) if i < at => None,
                Some((at, _)) if i == at && !section => None,
                Some((at, n)) if i == at => Some(Some(n)),
                _ => Some(None),
            };
            let dropped = written == Some(None)
                && f.mode != FieldMode::Positional
                && (self.at(&seg, |b| b.status(f.expr)).droppable()
                    || self.shadowed(&format!("{}/{seg}", self.path), &open_required));
            plan.push(written.filter(|_| !dropped));
        }
        let paths: Vec<String> = fields
            .iter()
            .map(|f| format!("{}/{}", self.path, escape_segment(&f.name)))
            .collect();
        for (i, f) in fields.into_iter().enumerate() {
            let seg = escape_segment(&f.name);
            let section = is_section(self.shapes, f.expr);
            let Some(written) = plan[i] else {
                continue;
            };
            // A resumed section still owes lines when its array needs more items, or when
            // a value found for its items' key that no later part offered could take is
            // still unwritten (`per customer` after `Segment`: the sort is not offered, so
            // ending the fields there would drop the column).
            let later: Vec<String> = (i + 1..paths.len())
                .filter(|&j| plan[j].is_some())
                .map(|j| paths[j].clone())
                .collect();
            let holds = section
                && (written.is_some() || f.mode == FieldMode::Positional)
                && self.section_holds(&paths[i], f.expr, &later);
            let owes = written.is_some_and(|n| self.shapes.min_items(f.expr) > n)
                || (written.is_some() && holds);
            let stmt = if section {
                let item = self.shapes.items_of(f.expr);
                let li = self.at(&seg, |b| {
                    b.at("*", |b| seq(vec![b.line_item(item), lit("\n")]))
                });
                let st = self.at(&seg, |b| b.at("*", |b| b.status(item)));
                let more = if self.prune.is_some() {
                    st.asks_for_more()
                } else {
                    !st.droppable()
                };
                let min = self
                    .shapes
                    .min_items(f.expr)
                    .saturating_sub(written.unwrap_or(0))
                    .max(usize::from(holds));
                let max = self
                    .shapes
                    .max_items(f.expr)
                    .map(|m| m.saturating_sub(written.unwrap_or(0)));
                let lines = lines_between(li, min, more, max);
                match written {
                    Some(_) => lines,
                    None => seq(vec![lit(&format!("{}:\n", f.keyword)), lines]),
                }
            } else {
                let v = self.at(&seg, |b| {
                    if b.notation.opens_on_line(b.shapes, f.expr) {
                        b.open_value(f.expr)
                    } else {
                        b.value(f.expr, &f.abbrev)
                    }
                });
                seq(vec![lit(&format!("{} ", f.keyword)), v, lit("\n")])
            };
            let sname = self.fresh(&format!("{}_line", f.keyword));
            let comment = self.shapes.doc(f.source).map(str::to_string);
            self.add(sname.clone(), stmt, comment);
            items.push(
                if (f.mode == FieldMode::Positional && written.is_none()) || owes {
                    G::Rule(sname)
                } else {
                    G::Opt(Box::new(G::Rule(sname)))
                },
            );
        }
        if let Some(e) = self.extras(&r) {
            let v = self.at("*", |b| b.value(e, &BTreeMap::new()));
            items.push(G::Star(Box::new(seq(vec![
                G::Term(Terminal::String),
                lit(": "),
                v,
                lit("\n"),
            ]))));
        }
        seq(items)
    }

    /// Pruning: an optional line or section of a block whose every found value is a
    /// reading of a mention that a required one still open can take (`required`: their
    /// paths) is left out: the words go where they must go first. Without it Qwen2.5-Coder
    /// wrote "profit by region" as the field `Profit` sorted by `Region`; a word only
    /// the optional part can take (`top`, `ascending`, a filter's value) keeps it.
    fn shadowed(&self, field: &str, required: &[String]) -> bool {
        let Some(p) = self.prune.as_ref() else {
            return false;
        };
        let r = p.restriction;
        let mut found = r
            .candidates
            .iter()
            .filter(|(s, _)| below(s, field) && !r.free.contains(*s))
            .flat_map(|(s, vs)| vs.iter().map(move |v| (s, v)))
            .peekable();
        found.peek().is_some()
            && found.all(|(s, v)| {
                r.readings.iter().any(|g| {
                    g.iter().any(|(gs, gv)| gs == s && same_value(gv, v))
                        && g.iter()
                            .any(|(gs, _)| required.iter().any(|req| below(gs, req)))
                })
            })
    }

    /// Pruning with lists held ([`Restriction::hold_lists`]): whether the section at
    /// `path` (a block field whose items are records) must write another line: a value found at its items' key (a required field of the
    /// item) is unwritten, and no reading of its mention lies under `later` (the parts
    /// of the block still offered after it).
    fn section_holds(&self, path: &str, expr: ExprId, later: &[String]) -> bool {
        let Some(p) = self.prune.as_ref() else {
            return false;
        };
        let r = p.restriction;
        if !r.hold_lists {
            return false;
        }
        let item = self.notation.canon[self.shapes.items_of(expr) as usize];
        let Some(ObjLayout::Record(rec)) = self.notation.object(item) else {
            return false;
        };
        rec.fields
            .iter()
            .filter(|f| f.mode == FieldMode::Positional)
            .map(|f| format!("{path}/*/{}", escape_segment(&f.name)))
            .any(|site| {
                r.at(&site).iter().any(|v| {
                    !r.readings.iter().any(|g| {
                        g.iter().any(|(s, x)| *s == site && same_value(x, v))
                            && g.iter().any(|(s, _)| later.iter().any(|l| below(s, l)))
                    })
                })
            })
    }

    fn document(&mut self, resume: Resume) -> G {
        let root = self.shapes.root;
        match self.notation.root {
            RootLayout::Block => self.block(match resume {
                Resume::Block { field, items } => Some((field, items)),
                _ => None,
            }),
            // One-line documents: the final newline is optional (the encoder leaves it out).
            RootLayout::Line => {
                let b = self.body(root);
                seq(vec![b, G::Opt(Box::new(lit("\n")))])
            }
            RootLayout::Lines => {
                let item = self.shapes.items_of(root);
                // Resumed after a line, every line here is a later one.
                self.later_line = matches!(resume, Resume::Lines { items } if items > 0);
                // Lines go on while an item has a found value (or sites nothing can bind):
                // the paper's stop on exhaustion. A free part of an item (a boolean flag)
                // does not keep the document going.
                let st = self.at("*", |b| b.status(item));
                let written = match resume {
                    Resume::Lines { items } => items,
                    _ => 0,
                };
                let more = match &self.prune {
                    Some(p) => {
                        // Words and numbers are not evidence of another line: after the
                        // first, a line whose sites could take only the request's spans
                        // and numbers (no value found for it) is asked for only while a
                        // word the request marks as a value is left where it reads as
                        // another line's: quoted, or listed with a word a line took
                        // ([`Spans::listed_left`]), or a number labelled as one a line
                        // used ([`Spans::numbers_listed_left`]: `3 kg … and 7 kg`). A
                        // small model otherwise wrote one call per leftover word, or per
                        // number of an address.
                        // A value found is evidence only where it could not have gone
                        // in a line written ([`Restriction::found_asks_for_a_line`]).
                        let r = p.restriction;
                        let found_left = st.found && (written == 0 || r.found_asks_for_a_line());
                        // A line with nothing found for it is no evidence either, not
                        // even where its sites are free (an untyped value): a model wrote
                        // call after call of made-up values there.
                        let open_only = !found_left;
                        let evidence = written == 0
                            || !open_only
                            || r.spans.listed_left()
                            || r.spans.numbers_listed_left();
                        // A call whose free site can take what is left (a second city
                        // for a weather tool whose unit found nothing) is asked for again
                        // where the request joins a marked word left to one a line took
                        // (`Lisbon and Tallinn`). Numbers left are no evidence here: a
                        // year repeated after a date wrote a call for a city "2023".
                        let kept = st.keeps_variant() && evidence;
                        let again = written > 0 && st.open && r.spans.joined_left();
                        let asked = (kept || again) && {
                            let (asked, fillable) = self.at("*", |b| b.forms_asked(item));
                            (kept && asked) || (again && (asked || fillable))
                        };
                        // A call of another tool the request names apart, with a value of
                        // its own left near its name (`… in Oslo, and shipping 4 kg`), is
                        // asked for after the lines of the tools written; asked for only
                        // so, the line is a call of such a tool (where no line must follow
                        // anyway).
                        if !asked && written > 0 {
                            let named = self.at("*", |b| b.form_named_left(item));
                            let any = !named.is_empty();
                            let due = self.shapes.min_items(root) > written;
                            self.line_forms = (any && !due).then_some(named);
                            any
                        } else {
                            asked
                        }
                    }
                    None => !st.droppable(),
                };
                let li = self.at("*", |b| seq(vec![b.line_item(item), lit("\n")]));
                self.line_forms = None;
                let min = self.shapes.min_items(root).saturating_sub(written);
                let max = self
                    .shapes
                    .max_items(root)
                    .map(|m| m.saturating_sub(written));
                lines_between(li, min, more, max)
            }
            RootLayout::Value => {
                let v = self.value(root, &BTreeMap::new());
                seq(vec![v, G::Opt(Box::new(lit("\n")))])
            }
        }
    }

    /// A free string or number at a bound site with candidates: the candidates it admits,
    /// as written here (checked with the decoder, so each reads back as its value). With
    /// none, its known values ([`Restriction::known`]) the same way.
    fn free_literals(&self, expr: ExprId, p: &Parts, quoted: bool) -> Option<Vec<String>> {
        let prune = self.prune.as_ref()?;
        let mut found = if prune.restriction.bound.contains(&self.path) {
            // With no candidate, the site's known values ([`Restriction::known`]) where it
            // is written at all (an optional site with nothing found is left out before
            // this); a span site offers the request's spans instead.
            match self.candidates() {
                Some(found) => found,
                None if prune.prefixes.contains(&self.path)
                    && !prune.restriction.free.contains(&self.path)
                    && !prune.restriction.span_sites.contains(&self.path) =>
                {
                    prune
                        .restriction
                        .known
                        .get(&self.path)
                        .cloned()
                        .unwrap_or_default()
                }
                None => return None,
            }
        } else if prune.restriction.span_sites.contains(&self.path) {
            // A value found at a span site no catalog binds (a code its description
            // explains) is offered beside the spans.
            self.candidates().unwrap_or_default()
        } else {
            Vec::new()
        };
        // The request's own numbers at open number sites, after the codes its words name
        // there (`ironing` for the `2` a description explains).
        if let Some(n) = p.number.as_ref().filter(|n| n.values.is_none()) {
            if self.at_open_site(|r| &r.number_sites) {
                found.extend(self.candidates().unwrap_or_default());
                // Held to some values ([`Builder::shared_alts`]): those alone.
                if !self.pinned_here() {
                    found.extend(self.request_numbers(n));
                }
            }
        }
        if found.is_empty() {
            return None;
        }
        let free_string = p.string.as_ref().is_some_and(|s| s.values.is_none());
        let free_number = p.number.as_ref().is_some_and(|n| n.values.is_none());
        let mut lits: Vec<String> = Vec::new();
        for v in &found {
            let text = match v {
                Value::String(s) if free_string => {
                    let always = p
                        .string
                        .as_ref()
                        .and_then(|sp| sp.lexical.as_ref())
                        .is_some_and(Lexical::always_quoted);
                    if quoted || always {
                        serde_json::to_string(s).unwrap_or_default()
                    } else {
                        render_word(s)
                    }
                }
                Value::Number(n) if free_number => n.to_string(),
                _ => continue,
            };
            if Decoder::reads_as(
                &text,
                self.shapes,
                self.notation,
                prune.tables,
                expr,
                quoted,
                v,
            ) && !lits.contains(&text)
            {
                lits.push(text);
            }
        }
        (!lits.is_empty()).then_some(lits)
    }
}

/// Whether a free site bound by a catalog (or left free) has something.
fn free_site(bound: bool, found: bool) -> Status {
    Status {
        bound,
        candidate: bound && found,
        found: bound && found,
        free: !bound,
        open: !bound,
    }
}

/// The scalar alternatives of a value: free numbers and strings as terminals, then the
/// words (`null`, `true`, `false`, enum values) longest first.
///
/// When pruning, `found` are the candidates here: the enum values among them are the only
/// ones offered (all of them when none is), and `literals` replace a free terminal.
/// The expressions of a value's free number and free string (terminals or the rules of
/// their regular forms).
struct Free {
    number: Option<G>,
    string: Option<G>,
    /// The string is the request's spans ([`Builder::span_value`]): offered beside the
    /// literals found, not replaced by them.
    spans: bool,
}

fn scalar_alts(
    p: &Parts,
    abbrev: &BTreeMap<String, String>,
    given: Free,
    found: Option<&[Value]>,
    literals: Option<Vec<String>>,
) -> Vec<G> {
    let mut alts = Vec::new();
    let mut words = Vec::new();
    if p.null {
        words.push("null".to_string());
    }
    // A flag the request sets or clears offers that value alone.
    let flags: Vec<bool> = found
        .into_iter()
        .flatten()
        .filter_map(Value::as_bool)
        .collect();
    if p.bool_true && (flags.is_empty() || flags.contains(&true)) {
        words.push("true".to_string());
    }
    if p.bool_false && (flags.is_empty() || flags.contains(&false)) {
        words.push("false".to_string());
    }
    let mut free = Vec::new();
    if let Some(n) = &p.number {
        match &n.values {
            Some(vs) => {
                let vs = offered(vs, found, |v| Value::Number(v.clone()));
                words.extend(vs.iter().map(|v| v.to_string()))
            }
            None => free.extend(given.number.clone()),
        }
    }
    if let Some(s) = &p.string {
        match &s.values {
            Some(vs) => {
                let vs = offered(vs, found, |v| Value::String(v.clone()));
                words.extend(vs.iter().map(|v| render_word(abbrev.get(*v).unwrap_or(v))))
            }
            None => free.extend(given.string.clone()),
        }
    }
    match literals {
        Some(lits) => {
            words.extend(lits);
            if given.spans {
                alts.extend(given.string);
            }
        }
        None => alts.extend(free),
    }
    // Listed arrays and objects: their compact JSON, each a literal (none is a prefix of
    // another, so PEG and CFG read the same alternatives).
    words.extend(p.listed.iter().flatten().cloned());
    if !words.is_empty() {
        match lit_alts(words) {
            G::Alt(xs) => alts.extend(xs),
            g => alts.push(g),
        }
    }
    alts
}

/// The enum values offered: those among the candidates, or all when none is.
fn offered<'v, T>(
    values: &'v [T],
    found: Option<&[Value]>,
    json: impl Fn(&T) -> Value,
) -> Vec<&'v T> {
    let all = || values.iter().collect();
    let Some(found) = found else {
        return all();
    };
    let kept: Vec<&T> = values
        .iter()
        .filter(|v| {
            let j = json(v);
            found.iter().any(|c| same_value(c, &j))
        })
        .collect();
    if kept.is_empty() {
        all()
    } else {
        kept
    }
}

/// Digits a number written at an open site may have before its point when nothing the
/// request gives fits there ([`Builder::bounded_number`]).
const MAX_INT_DIGITS: usize = 15;
/// Digits after the point of such a number.
const MAX_FRACTION_DIGITS: usize = 6;
/// A tail the model writes after a span ([`Builder::completed_tail`]): one to `words`
/// capitalized words (a letter, then up to 23 letters, `.`, `'` or `-`), or a code of
/// capitals and digits (`CA`, `NSW`), one space between words.
fn tail_words(words: usize) -> G {
    let upper = G::Class(vec![('A', 'Z'), ('\u{c0}', '\u{d6}'), ('\u{d8}', '\u{de}')]);
    let rest = G::Class(vec![
        ('\'', '\''),
        ('-', '.'),
        ('0', '9'),
        ('A', 'Z'),
        ('a', 'z'),
        ('\u{c0}', '\u{d6}'),
        ('\u{d8}', '\u{f6}'),
        ('\u{f8}', '\u{17f}'),
    ]);
    let word = G::Seq(vec![upper, G::Rep(Box::new(rest), 0, Some(23))]);
    if words <= 1 {
        return word;
    }
    let more = G::Seq(vec![G::Text(" ".into()), word.clone()]);
    G::Seq(vec![
        word,
        G::Rep(Box::new(more), 0, Some(words as u32 - 1)),
    ])
}

/// Spans of at most this many words are checked one by one at a site whose strings have a
/// form (a date, a `pattern`, a length), up to [`MAX_CHECKED_SPANS`] of them.
const MAX_CHECKED_SPAN_WORDS: usize = 8;
/// See [`MAX_CHECKED_SPAN_WORDS`].
const MAX_CHECKED_SPANS: usize = 256;

/// Found optional fields of one record read in any order under pruning, up to this many
/// (`2^n` rules); more keep the notation's order.
const MAX_ANY_ORDER: usize = 5;

/// Per field of a record, its candidates when pruning at its site.
/// What a field may take where it could share a value ([`Builder::shareable`]).
struct FieldValues {
    /// The field's site path.
    site: String,
    /// Its candidates.
    found: Vec<Value>,
    /// The request's numbers it takes, beside those.
    numbers: Vec<Value>,
}

type Shareable = Option<FieldValues>;

/// The values fields of one record share ([`Builder::shared_values`]).
struct SharedValues {
    /// What each field takes.
    takes: Vec<Shareable>,
    /// The shared values; bit `k` stands for `values[k]`.
    values: Vec<Value>,
    /// Each field's bits: the shared values it takes by their one mention.
    bits: Vec<u32>,
}

/// Values found once that several fields of one record could take, each written at most
/// once in the record under pruning, up to this many (more: no such limit).
const MAX_SHARED: usize = 3;

/// Found values a pruned inline list takes each at most once, up to this many (`2^n`
/// rules); beyond, the list follows the request's order ([`MAX_ORDERED_ITEMS`]).
const MAX_DISTINCT_ITEMS: usize = 5;
/// Found values up to which a list of them is written in the request's order, each once
/// (beyond, the usual list).
const MAX_ORDERED_ITEMS: usize = 24;

/// Unrolled copies of a mandatory item; beyond this a grammar demands no more (it
/// over-approximates, as shapes do, and the validator has the last word).
const MAX_UNROLL: usize = 32;

/// `first rest*` with at least `min` items in all and at most `max` (`first` is the first
/// item, `rest` each later one with its separator). A bound above `MAX_UNROLL` is left to
/// the validator. With `min == 0` the caller makes the whole optional.
fn at_least(first: G, rest: G, min: usize, max: Option<usize>) -> G {
    let need = min.clamp(1, MAX_UNROLL);
    let mut xs = vec![first];
    xs.extend(std::iter::repeat_n(rest.clone(), need - 1));
    match max.filter(|&m| m <= MAX_UNROLL && m >= need) {
        Some(m) => xs.extend(optional_run(rest, m - need)),
        None => xs.push(G::Star(Box::new(rest))),
    }
    seq(xs)
}

/// Up to `n` more items: `(rest (rest …)?)?`.
fn optional_run(rest: G, n: usize) -> Option<G> {
    let mut g: Option<G> = None;
    for _ in 0..n {
        let inner = match g.take() {
            Some(x) => seq(vec![rest.clone(), x]),
            None => rest.clone(),
        };
        g = Some(G::Opt(Box::new(inner)));
    }
    g
}

/// Exactly `n ≥ 1` items (`first`, then `rest` with its separator).
fn exactly(first: G, rest: G, n: usize) -> G {
    let mut xs = vec![first];
    xs.extend(std::iter::repeat_n(rest, n.clamp(1, MAX_UNROLL) - 1));
    seq(xs)
}

/// At least `min` lines and at most `max`, and more than `min` only if `more`.
fn lines_between(line: G, min: usize, more: bool, max: Option<usize>) -> G {
    match (min, more) {
        (_, true) => lines_at_least(line, min, max),
        (0, false) => lit(""),
        (n, false) => exactly(line.clone(), line, n),
    }
}

/// `line*` with at least `min` lines and at most `max`.
fn lines_at_least(line: G, min: usize, max: Option<usize>) -> G {
    if min > 0 {
        return at_least(line.clone(), line, min, max);
    }
    match max.filter(|&m| m <= MAX_UNROLL) {
        Some(0) => lit(""),
        Some(m) => optional_run(line, m).unwrap_or_else(|| lit("")),
        None => G::Star(Box::new(line)),
    }
}

fn tag_label(tags: &[(String, String)]) -> String {
    tags.first().map(|(v, _)| v.clone()).unwrap_or_default()
}

/// Build the grammar of a notation (the published one: undeclared properties wherever the
/// schema admits them).
pub(crate) fn build(shapes: &Shapes, notation: &Notation) -> Grammar {
    build_with(shapes, notation, None, Resume::Start, true)
}

/// Build the grammar a model writes under: [`build`]'s, with undeclared properties only
/// where the schema allows them explicitly unless `undeclared`.
pub(crate) fn build_generation(shapes: &Shapes, notation: &Notation, undeclared: bool) -> Grammar {
    build_with(shapes, notation, None, Resume::Start, undeclared)
}

/// The inputs of a pruned build: the restriction, the codec's lookups of the notation, and
/// every prefix of every site path ([`crate::sites::path_prefixes`], computed once per spec).
type PruneInputs<'a> = (&'a Restriction, &'a Tables, &'a HashSet<String>);

/// Build the grammar of a notation pruned by `restriction` (see [`super::prune`]), for the
/// whole document or for its rest after `resume`; a generation grammar (see
/// [`build_generation`]).
pub(crate) fn build_pruned(
    shapes: &Shapes,
    notation: &Notation,
    tables: &Tables,
    prefixes: &HashSet<String>,
    restriction: &Restriction,
    resume: Resume,
    undeclared: bool,
) -> Grammar {
    build_with(
        shapes,
        notation,
        Some((restriction, tables, prefixes)),
        resume,
        undeclared,
    )
}

fn build_with(
    shapes: &Shapes,
    notation: &Notation,
    prune: Option<PruneInputs<'_>>,
    resume: Resume,
    undeclared: bool,
) -> Grammar {
    let prune = prune.map(|(restriction, tables, prefixes)| Pruner {
        restriction,
        tables,
        prefixes,
        status: HashMap::new(),
        stack: Vec::new(),
    });
    let mut b = Builder {
        shapes,
        notation,
        rules: Vec::new(),
        done: HashMap::new(),
        names: RuleNames::new(),
        nonempty: HashMap::new(),
        never_empty: HashSet::new(),
        prune,
        path: String::new(),
        pin: None,
        undeclared,
        later_line: false,
        line_forms: None,
        required_value: false,
        span_word_rules: Vec::new(),
    };
    let doc = b.document(resume);
    let mut rules = vec![Rule {
        name: "document".into(),
        body: doc,
        comment: shapes.doc(shapes.root).map(str::to_string),
    }];
    rules.extend(b.rules);
    Grammar { rules }
}
