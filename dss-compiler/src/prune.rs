//! Grammars pruned to one request, line by line: the grammar a request's document starts
//! under, and after each complete line the values it used consumed and the grammar of the
//! rest. Every backend runs this one loop: in-process decoding (dss-runtime), a server
//! continued line by line (dss-serve) and the reachability check of `dss eval`.
//!
//! - [`Pruning`] is what a request brings: the values found in it per site
//!   ([`Restriction`], with its [`Spans`] and dates as [`Moment`]s) and what a written line
//!   consumes ([`Consume`]).
//! - [`Pruner`] runs the loop over one document of a spec; [`Continuation`] is where the
//!   document goes on after its complete lines, [`Progress`] what those lines say and
//!   [`Resume`] where the grammar of the rest starts.
//! - [`Site`] is a place where an instance chooses a value ([`SiteKind`], [`FormSite`],
//!   matched by [`path_matches`]); [`SpanPolicy`], [`SpanWord`], [`ValueForm`],
//!   [`MomentForm`], [`Lexical`] and [`RegularCheck`] say what a site takes.
//! - [`GrammarOptions`] says what a grammar for generation offers beyond the schema.

pub use crate::grammar::prune::{
    Consume, Place, Restriction, Resume, SpanPolicy, SpanWord, Spans, ValueForm,
};
pub use crate::moments::{Moment, MomentForm};
pub use crate::request::{GrammarOptions, Progress};
pub use crate::shape::{Lexical, RegularCheck};
pub use crate::sites::{path_matches, FormSite, Site, SiteKind};

use crate::error::ExpandError;
use crate::grammar::prune::same_value as same;
use crate::grammar::Grammar;
use crate::spec::CompiledSpec;
use serde_json::Value;

/// Grammar pruning for one request: the values found in it per site, and what leaves them
/// once a line is written.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Pruning {
    /// The values found per site (the first grammar is pruned to them).
    pub restriction: Restriction,
    /// What leaves the candidates once a line is written.
    pub consume: Consume,
}

impl Pruning {
    /// The per-line pruning of one document written for this request under `spec`, with
    /// grammars that offer undeclared properties as `opts` say.
    pub fn pruner<'a>(&'a self, spec: &'a CompiledSpec, opts: GrammarOptions) -> Pruner<'a> {
        Pruner::new(spec, &self.restriction, self.consume, opts)
    }
}

/// The per-line pruning of one document: the grammar it starts under
/// ([`Pruner::start_grammar`]), and after its complete lines the restriction left and the
/// grammar of the rest ([`Pruner::after_lines`]), with the values the lines used consumed
/// as [`Consume`] says ([`Restriction::consumed`]).
///
/// It is a view (cheap to make, `Copy`): a caller that holds the spec mutably elsewhere
/// makes one for each step.
///
/// ```
/// use dss_compiler::prune::{Consume, GrammarOptions, Pruner, Restriction};
/// use dss_compiler::{compile, CompileOptions};
/// let schema = serde_json::json!({"type": "array", "items": {"enum": ["tea", "coffee", "milk"]}});
/// let spec = compile(&schema, &CompileOptions::default())?;
/// let mut found = Restriction::default();
/// found.candidates.insert("/*".into(), vec!["tea".into(), "milk".into()]);
/// let pruner = Pruner::new(&spec, &found, Consume::Class, GrammarOptions::default());
/// let first = pruner.start_grammar().to_gbnf();
/// assert!(first.contains("tea") && first.contains("milk") && !first.contains("coffee"));
/// // After a line that wrote `tea`, only `milk` is left.
/// let rest = pruner.after_lines("tea\n")?.expect("a list goes on after a line");
/// let gbnf = rest.grammar.to_gbnf();
/// assert!(gbnf.contains("milk") && !gbnf.contains("tea"), "{gbnf}");
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug, Clone, Copy)]
pub struct Pruner<'a> {
    spec: &'a CompiledSpec,
    initial: &'a Restriction,
    consume: Consume,
    opts: GrammarOptions,
}

/// Where a document goes on after its complete lines ([`Pruner::after_lines`]).
pub struct Continuation {
    /// The restriction left: the initial one less what the lines used.
    pub restriction: Restriction,
    /// Where the rest of the document starts.
    pub resume: Resume,
    /// The grammar of the rest, pruned to [`restriction`](Continuation::restriction).
    pub grammar: Grammar,
}

impl<'a> Pruner<'a> {
    /// The pruning of a document of `spec` whose request offers `initial`, consuming as
    /// `consume` says, with grammars that offer undeclared properties as `opts` say.
    pub fn new(
        spec: &'a CompiledSpec,
        initial: &'a Restriction,
        consume: Consume,
        opts: GrammarOptions,
    ) -> Pruner<'a> {
        Pruner {
            spec,
            initial,
            consume,
            opts,
        }
    }

    /// The restriction the document starts under.
    pub fn initial(&self) -> &'a Restriction {
        self.initial
    }

    /// What leaves the candidates once a line is written.
    pub fn consume(&self) -> Consume {
        self.consume
    }

    /// What the grammars offer beyond the schema's declarations.
    pub fn options(&self) -> GrammarOptions {
        self.opts
    }

    /// The grammar of the whole document, pruned to the initial restriction.
    pub fn start_grammar(&self) -> Grammar {
        self.spec
            .pruned_grammar_with(self.initial, Resume::Start, self.opts)
    }

    /// The complete lines of `text` (see [`CompiledSpec::progress`]).
    ///
    /// # Errors
    /// Lines the spec's prefix decoder cannot read.
    pub fn progress(&self, text: &str) -> Result<Progress, ExpandError> {
        self.spec.progress(text, self.spec.cached_sites())
    }

    /// The restriction left once the lines read in `progress` are written: the initial
    /// one with what they used consumed.
    pub fn left(&self, progress: &Progress) -> Restriction {
        self.initial.consumed(&progress.used, self.consume)
    }

    /// Where the document goes on after the lines read in `progress`: `None` when they
    /// cannot be resumed after (see [`Progress::resume`]).
    pub fn after(&self, progress: &Progress) -> Option<Continuation> {
        let resume = progress.resume?;
        let restriction = self.left(progress);
        let grammar = self
            .spec
            .pruned_grammar_with(&restriction, resume, self.opts);
        Some(Continuation {
            restriction,
            resume,
            grammar,
        })
    }

    /// Where the document goes on after the complete lines of `text` (up to its last
    /// newline): the restriction left and the grammar of the rest. `None` when those lines
    /// cannot be resumed after (the grammar in use is kept).
    ///
    /// # Errors
    /// Lines the spec's prefix decoder cannot read.
    pub fn after_lines(&self, text: &str) -> Result<Option<Continuation>, ExpandError> {
        Ok(self.after(&self.progress(text)?))
    }

    /// `text` (ending with a newline) with the optional fields of its last line that
    /// repeat what another field of that line took from the request left out: each piece
    /// of the request is used once inside a line, as across lines (where
    /// [`Restriction::consumed`] uses it up).
    ///
    /// - A value written twice where the request gives it once (`city Lyon venue Lyon`):
    ///   a small model copied a call's first argument into every optional parameter it
    ///   was offered.
    /// - A value copied from words an earlier field of the line already took (`300` beside
    ///   `"Atlas 300"`, `"Atlas"` beside `"Atlas 300"`): those words named the earlier
    ///   value, not this one.
    ///
    /// An optional list loses the items so repeated, and goes where none is left. `None`
    /// where the line repeats nothing, its fields are all required, consumption is off,
    /// or the line does not read as one item of a list document on its own.
    pub fn deduplicated_line(&self, text: &str) -> Option<String> {
        if self.consume == Consume::Off {
            return None;
        }
        let body = text.strip_suffix('\n')?;
        let start = body.rfind('\n').map_or(0, |i| i + 1);
        let line = &body[start..];
        let mut doc = self.spec.expand_any_order(line).ok()?;
        let item = match doc.as_array_mut() {
            Some(items) if items.len() == 1 => &mut items[0],
            _ => return None,
        };
        let sites = self.spec.cached_sites();
        let optional = |path: &str| {
            sites
                .iter()
                .any(|s| s.path == path && !s.required_in_record)
        };
        // A list whose items may all go: an optional field's.
        let optional_list = |list: &str| {
            let items = format!("{list}/*");
            sites.iter().any(|s| s.path == items && s.optional_field)
        };
        // Every scalar of the line with its site path, in writing order.
        let mut scalars: Vec<Scalar> = Vec::new();
        collect_scalars(item, &mut Vec::new(), "/*", &mut scalars);
        let mut used: Vec<(String, Value)> = Vec::new();
        let mut drop: Vec<Vec<Key>> = Vec::new();
        for (i, sc) in scalars.iter().enumerate() {
            let droppable = match &sc.list {
                // A list item: where its list may go, or keeps another item.
                Some(list) => optional_list(list) || sc.siblings > 1,
                None => optional(&sc.site),
            };
            if droppable {
                let written = scalars[..i]
                    .iter()
                    .filter(|x| x.keys != sc.keys && same(&x.value, &sc.value))
                    .count()
                    + 1;
                let repeated = written > self.occurrences(&sc.value).max(1);
                let taken = self.initial.offers_from_request(&sc.site, &sc.value) == Some(true)
                    && self
                        .initial
                        .consumed(&used, self.consume)
                        .offers_from_request(&sc.site, &sc.value)
                        == Some(false);
                if repeated || taken {
                    drop.push(sc.keys.clone());
                    continue;
                }
            }
            used.push((sc.site.clone(), sc.value.clone()));
        }
        if drop.is_empty() {
            return None;
        }
        // Later keys first, so that list indexes stay true while items go.
        for keys in drop.iter().rev() {
            remove_at(item, keys, optional_list);
        }
        let fixed = self.spec.compress(&doc).ok()?;
        Some(format!(
            "{}{}\n",
            &text[..start],
            fixed.trim_end_matches('\n')
        ))
    }

    /// How many times the request gives `v`: as a number, or spelt as a span of its words.
    fn occurrences(&self, v: &Value) -> usize {
        match v {
            Value::Number(_) => self.initial.numbers.iter().filter(|n| same(n, v)).count(),
            Value::String(s) => self.initial.spans.occurrences(s),
            _ => 0,
        }
    }

    /// The found values the last line of `text` (ending with a newline) leaves behind
    /// although only that line could take them (see [`CompiledSpec::line_leaves`]).
    pub fn line_leaves(&self, text: &str) -> Vec<(String, Value)> {
        self.spec
            .line_leaves(text, self.initial, self.consume, self.spec.cached_sites())
    }
}

/// A step of a key path into a line's item: an object's field or a list's item.
#[derive(Debug, Clone, PartialEq)]
enum Key {
    Field(String),
    Item(usize),
}

/// A string or number leaf of a line's item.
struct Scalar {
    /// Where it is in the item.
    keys: Vec<Key>,
    /// Its site path (`*` for list items).
    site: String,
    /// The site path of the list it is an item of, if it is one.
    list: Option<String>,
    /// How many items that list has (0 outside a list).
    siblings: usize,
    value: Value,
}

/// The string and number leaves of `v` (an item of a list document, at site path `site`),
/// in document order.
fn collect_scalars(v: &Value, keys: &mut Vec<Key>, site: &str, out: &mut Vec<Scalar>) {
    match v {
        Value::Object(map) => {
            for (k, x) in map {
                keys.push(Key::Field(k.clone()));
                let at = format!("{site}/{}", crate::sites::escape_segment(k));
                collect_scalars(x, keys, &at, out);
                keys.pop();
            }
        }
        Value::Array(items) => {
            let at = format!("{site}/*");
            for (i, x) in items.iter().enumerate() {
                if matches!(x, Value::String(_) | Value::Number(_)) {
                    keys.push(Key::Item(i));
                    out.push(Scalar {
                        keys: keys.clone(),
                        site: at.clone(),
                        list: Some(site.to_string()),
                        siblings: items.len(),
                        value: x.clone(),
                    });
                    keys.pop();
                }
            }
        }
        Value::String(_) | Value::Number(_) => out.push(Scalar {
            keys: keys.clone(),
            site: site.to_string(),
            list: None,
            siblings: 0,
            value: v.clone(),
        }),
        _ => {}
    }
}

/// Removes what key path `keys` of `v` leads to: an object's field, or a list's item (and
/// then the list itself where it is left empty and `optional` says its site path may go).
fn remove_at(v: &mut Value, keys: &[Key], optional: impl Fn(&str) -> bool + Copy) -> bool {
    let Some((last, head)) = keys.split_last() else {
        return false;
    };
    let mut cur = &mut *v;
    for k in head {
        let next = match k {
            Key::Field(f) => cur.get_mut(f.as_str()),
            Key::Item(i) => cur.get_mut(*i),
        };
        match next {
            Some(x) => cur = x,
            None => return false,
        }
    }
    match last {
        Key::Field(f) => cur
            .as_object_mut()
            .is_some_and(|m| m.remove(f.as_str()).is_some()),
        Key::Item(i) => {
            let Some(items) = cur.as_array_mut().filter(|a| *i < a.len()) else {
                return false;
            };
            items.remove(*i);
            if items.is_empty() {
                // The list's own field, if it is optional.
                let Some((Key::Field(_), _)) = head.split_last() else {
                    return true;
                };
                let site = site_of(head);
                if optional(&site) {
                    remove_at(v, head, optional);
                }
            }
            true
        }
    }
}

/// The site path of key path `keys` into a line's item.
fn site_of(keys: &[Key]) -> String {
    let mut site = String::from("/*");
    for k in keys {
        match k {
            Key::Field(f) => {
                site.push('/');
                site.push_str(&crate::sites::escape_segment(f));
            }
            Key::Item(_) => site.push_str("/*"),
        }
    }
    site
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{compile, CompileOptions};
    use serde_json::json;

    #[test]
    fn an_optional_field_repeating_a_value_of_its_line_is_left_out() {
        let tools = json!([{"type": "function", "function": {"name": "find_shows",
            "parameters": {"type": "object", "required": ["city"], "properties": {
                "city": {"type": "string"},
                "venue": {"type": "string"},
                "language": {"type": "string"},
                "seats": {"type": "integer"},
                "max_price": {"type": "integer"}}}}}]);
        let spec = compile(&tools, &CompileOptions::default()).expect("compiles");
        let restriction = Restriction {
            spans: crate::prune::Spans::of("two seats for shows in Lyon under 40"),
            numbers: vec![json!(2), json!(40)],
            ..Restriction::default()
        };
        let pruner = Pruner::new(
            &spec,
            &restriction,
            Consume::Class,
            GrammarOptions::default(),
        );
        let first = "find_shows city Lyon seats 2\n";
        // The optional fields that copy `Lyon` and `2` go; what the request gives is kept.
        let text =
            format!("{first}find_shows city Lyon venue Lyon language Lyon seats 2 max_price 2\n");
        assert_eq!(
            pruner.deduplicated_line(&text).as_deref(),
            Some(format!("{first}find_shows city Lyon seats 2\n").as_str())
        );
        // A line that repeats nothing, or a value the request gives twice, is kept.
        assert_eq!(pruner.deduplicated_line(first), None);
        let twice = Restriction {
            spans: crate::prune::Spans::of("Lyon shows at the Lyon opera"),
            ..Restriction::default()
        };
        let pruner = Pruner::new(&spec, &twice, Consume::Class, GrammarOptions::default());
        assert_eq!(
            pruner.deduplicated_line("find_shows city Lyon venue Lyon\n"),
            None
        );
        // Consumption off: nothing is used up, nothing is left out.
        let off = Pruner::new(&spec, &restriction, Consume::Off, GrammarOptions::default());
        assert_eq!(off.deduplicated_line(&text), None);
    }

    #[test]
    fn an_optional_field_copying_words_an_earlier_field_took_is_left_out() {
        let tools = json!([{"type": "function", "function": {"name": "lamp",
            "parameters": {"type": "object", "required": ["model"], "properties": {
                "model": {"type": "string"},
                "count": {"type": "integer"},
                "label": {"type": "string"},
                "tags": {"type": "array", "items": {"type": "string"}}}}}}]);
        let spec = compile(&tools, &CompileOptions::default()).expect("compiles");
        let restriction = Restriction {
            spans: crate::prune::Spans::of("order an Atlas 300 lamp for the porch"),
            span_sites: ["/*/lamp/model", "/*/lamp/label", "/*/lamp/tags/*"]
                .map(String::from)
                .into(),
            numbers: vec![json!(300)],
            number_sites: ["/*/lamp/count".to_string()].into(),
            ..Restriction::default()
        };
        let pruner = Pruner::new(
            &spec,
            &restriction,
            Consume::Class,
            GrammarOptions::default(),
        );
        let line = |v: Value| {
            let text = spec.compress(&json!([v])).expect("compresses");
            format!("{}\n", text.trim_end())
        };
        // The `300` and `Atlas` of the model's name are no count and no label.
        let written = line(json!({"lamp": {"model": "Atlas 300", "count": 300,
            "label": "Atlas", "tags": ["Atlas 300", "porch"]}}));
        let kept = line(json!({"lamp": {"model": "Atlas 300", "tags": ["porch"]}}));
        assert_eq!(
            pruner.deduplicated_line(&written).as_deref(),
            Some(kept.as_str())
        );
        // Words no other field took stay, and an optional list left empty goes.
        let free = line(json!({"lamp": {"model": "Atlas", "count": 300,
            "label": "porch", "tags": ["Atlas"]}}));
        let kept = line(json!({"lamp": {"model": "Atlas", "count": 300,
            "label": "porch"}}));
        assert_eq!(
            pruner.deduplicated_line(&free).as_deref(),
            Some(kept.as_str())
        );
        assert_eq!(pruner.deduplicated_line(&kept), None);
    }

    /// Coffee orders, one per line; the drink is a free string a venue's catalog binds.
    fn orders() -> CompiledSpec {
        compile(
            &json!({"type": "array", "minItems": 1, "items": {
                "type": "object", "additionalProperties": false, "required": ["order"],
                "properties": {"order": {
                    "type": "object", "additionalProperties": false, "required": ["drink"],
                    "properties": {
                        "drink": {"type": "string"},
                        "size": {"enum": ["small", "medium", "large"]}
                    }
                }}
            }}),
            &CompileOptions::default(),
        )
        .expect("compiles")
    }

    /// "a large flat white and a mocha", the drinks bound to the venue's catalog.
    fn found() -> Restriction {
        let mut r = Restriction::default();
        r.candidates.insert(
            "/*/order/drink".into(),
            vec![json!("flat white"), json!("mocha")],
        );
        r.candidates
            .insert("/*/order/size".into(), vec![json!("large")]);
        r.bound.insert("/*/order/drink".into());
        r
    }

    #[test]
    fn a_value_written_on_a_line_is_not_offered_after_it() {
        let spec = orders();
        let r = found();
        let pruner = Pruner::new(&spec, &r, Consume::Class, GrammarOptions::default());
        let first = pruner.start_grammar().to_gbnf();
        assert!(
            first.contains("flat white") && first.contains("mocha"),
            "{first}"
        );
        let line = spec
            .compress(&json!([{"order": {"drink": "flat white", "size": "large"}}]))
            .expect("compresses");
        let line = format!("{}\n", line.trim_end());
        let rest = pruner
            .after_lines(&line)
            .expect("reads")
            .expect("a list goes on");
        let gbnf = rest.grammar.to_gbnf();
        assert!(gbnf.contains("mocha"), "{gbnf}");
        assert!(!gbnf.contains("flat white"), "{gbnf}");
        assert!(!gbnf.contains("large"), "{gbnf}");
        assert_eq!(rest.resume, Resume::Lines { items: 1 });
        assert_eq!(rest.restriction.at("/*/order/drink"), &[json!("mocha")][..]);
    }

    #[test]
    fn a_line_of_free_values_alone_asks_for_no_other_line() {
        // One call whose argument takes any JSON: nothing in the request is evidence of a
        // second call, so after one the document ends.
        let spec = compile(
            &json!({"type": "array", "items": {"type": "object", "properties": {
                "echo": {"type": "object", "properties": {"payload": {}},
                         "required": ["payload"], "additionalProperties": false}
            }, "required": ["echo"], "additionalProperties": false}}),
            &CompileOptions::default(),
        )
        .expect("compiles");
        let r = Restriction::default();
        let pruner = Pruner::new(&spec, &r, Consume::Class, GrammarOptions::default());
        assert!(pruner.start_grammar().to_gbnf().contains("echo"));
        let line = spec
            .compress(&json!([{"echo": {"payload": "ping"}}]))
            .expect("compresses");
        let rest = pruner
            .after_lines(&format!("{}\n", line.trim_end()))
            .expect("reads")
            .expect("resumes after the line");
        let gbnf = rest.grammar.to_gbnf();
        assert!(gbnf.contains("root ::= \"\"\n"), "{gbnf}");
    }

    #[test]
    fn a_name_left_asks_for_another_line_only_where_listed_with_a_value_written() {
        let spec = compile(
            &json!({"type": "array", "items": {"type": "object", "properties": {
                "forecast": {"type": "object", "properties": {"city": {"type": "string"}},
                             "required": ["city"], "additionalProperties": false}
            }, "required": ["forecast"], "additionalProperties": false}}),
            &CompileOptions::default(),
        )
        .expect("compiles");
        let line = spec
            .compress(&json!([{"forecast": {"city": "Oslo"}}]))
            .expect("compresses");
        let line = format!("{}\n", line.trim_end());
        let after = |request: &str| {
            let r = Restriction {
                spans: crate::prune::Spans::of(request),
                span_sites: ["/*/forecast/city".to_string()].into(),
                ..Restriction::default()
            };
            let pruner = Pruner::new(&spec, &r, Consume::Class, GrammarOptions::default());
            pruner
                .after_lines(&line)
                .expect("reads")
                .expect("resumes after the line")
                .grammar
                .to_gbnf()
        };
        for listed in [
            "the forecast for Oslo and Bergen",
            "the forecast for Oslo, Bergen",
            "the forecast for Oslo. Also for Bergen",
        ] {
            let gbnf = after(listed);
            assert!(gbnf.contains("Bergen"), "{listed}: {gbnf}");
        }
        // A name in the request's prose is no second city.
        let gbnf = after("the forecast for Oslo, where my sister Ingrid lives");
        assert!(gbnf.contains("root ::= \"\"\n"), "{gbnf}");
    }

    #[test]
    fn a_flag_found_offers_its_value_alone() {
        let spec = compile(
            &json!({"type": "object", "properties": {"hidden": {"type": "boolean"}},
                    "additionalProperties": false}),
            &CompileOptions::default(),
        )
        .expect("compiles");
        for (found, offered, not) in [(true, "true", "false"), (false, "false", "true")] {
            let mut r = Restriction::default();
            r.candidates.insert("/hidden".into(), vec![json!(found)]);
            let pruner = Pruner::new(&spec, &r, Consume::Class, GrammarOptions::default());
            let gbnf = pruner.start_grammar().to_gbnf();
            assert!(gbnf.contains(&format!("\"{offered}\"")), "{gbnf}");
            assert!(!gbnf.contains(&format!("\"{not}\"")), "{gbnf}");
        }
    }

    #[test]
    fn each_step_is_what_consumed_and_pruned_grammar_with_give() {
        let spec = orders();
        let r = found();
        let opts = GrammarOptions::default();
        let doc = json!([
            {"order": {"drink": "flat white", "size": "large"}},
            {"order": {"drink": "mocha"}}
        ]);
        let text = spec.compress(&doc).expect("compresses");
        let text = format!("{}\n", text.trim_end());
        let sites = spec.sites();
        for consume in [Consume::Class, Consume::Value, Consume::Off] {
            let pruner = Pruner::new(&spec, &r, consume, opts);
            assert_eq!(
                pruner.start_grammar().to_gbnf(),
                spec.pruned_grammar_with(&r, Resume::Start, opts).to_gbnf()
            );
            for (end, _) in text.match_indices('\n') {
                let lines = &text[..=end];
                let progress = spec.progress(lines, &sites).expect("reads");
                let rest = pruner.after_lines(lines).expect("reads").expect("resumes");
                let left = r.consumed(&progress.used, consume);
                let resume = progress.resume.expect("resumes");
                assert_eq!(rest.restriction, left);
                assert_eq!(pruner.left(&progress), left);
                assert_eq!(rest.resume, resume);
                assert_eq!(
                    rest.grammar.to_gbnf(),
                    spec.pruned_grammar_with(&left, resume, opts).to_gbnf()
                );
                assert_eq!(
                    pruner.line_leaves(lines),
                    spec.line_leaves(lines, &r, consume, &sites)
                );
            }
        }
    }

    /// A block document (the viz spec, its bundled examples): at every line, the same
    /// restriction and grammar as `consumed` and `pruned_grammar_with` give.
    #[test]
    fn block_documents_step_as_consumed_and_pruned_grammar_with_give() {
        let (spec, docs) = crate::test_support::viz_spec_and_examples();
        let sites = spec.sites();
        let opts = GrammarOptions::default();
        let mut steps = 0;
        for doc in docs {
            let text = spec.compress(&doc).expect("compresses");
            let text = format!("{}\n", text.trim_end());
            // The request named the document's own values.
            let mut r = Restriction::default();
            for (site, v) in spec.progress(&text, &sites).expect("reads").used {
                r.candidates.entry(site).or_default().push(v);
            }
            let pruner = Pruner::new(&spec, &r, Consume::Class, opts);
            for (end, _) in text.match_indices('\n') {
                let lines = &text[..=end];
                let progress = spec.progress(lines, &sites).expect("reads");
                let Some(resume) = progress.resume else {
                    assert!(pruner.after_lines(lines).expect("reads").is_none());
                    continue;
                };
                let left = r.consumed(&progress.used, Consume::Class);
                let rest = pruner.after_lines(lines).expect("reads").expect("resumes");
                assert_eq!(rest.restriction, left);
                assert_eq!(rest.resume, resume);
                assert_eq!(
                    rest.grammar.to_gbnf(),
                    spec.pruned_grammar_with(&left, resume, opts).to_gbnf()
                );
                steps += 1;
            }
        }
        assert!(steps > 0);
    }

    #[test]
    fn lines_that_do_not_read_are_an_error_and_a_request_s_pruning_makes_the_same_pruner() {
        let spec = orders();
        let pruning = Pruning {
            restriction: found(),
            consume: Consume::Class,
        };
        let pruner = pruning.pruner(&spec, GrammarOptions::default());
        assert!(pruner.after_lines("(((\n").is_err());
        assert!(pruner.line_leaves("(((\n").is_empty());
        assert_eq!(pruner.initial(), &pruning.restriction);
        assert_eq!(pruner.consume(), Consume::Class);
        assert_eq!(pruner.options(), GrammarOptions::default());
        // Nothing written yet: the rest is the whole document.
        let rest = pruner.after_lines("").expect("reads").expect("resumes");
        assert_eq!(rest.resume, Resume::Start);
        assert_eq!(rest.grammar.to_gbnf(), pruner.start_grammar().to_gbnf());
    }
}
