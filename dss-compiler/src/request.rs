//! Stage 7 — per request: the sites a request can fill, the grammar pruned to what it
//! offers, and where a partly written document stands (for iterative pruning).
//!
//! A request's path: its values are found (dss-extract) and collected per site into a
//! [`Restriction`]; [`CompiledSpec::pruned_grammar`] builds `G_x` from the grammar IR (never
//! by editing grammar text); while the model writes, each complete line's values leave the
//! restriction ([`CompiledSpec::progress`] reads the lines so far) and the grammar of the
//! rest is built from [`Resume`].

use crate::codec::Decoder;
use crate::error::ExpandError;
use crate::grammar::prune::same_value;
use crate::grammar::{self, block_fields, Consume, Grammar, Restriction, Resume};
use crate::notation::{ObjLayout, RootLayout};
use crate::sites::{self, path_matches, FormSite, Site};
use crate::spec::CompiledSpec;
use serde_json::Value;

/// What a grammar for generation offers beyond what the schema declares.
///
/// By default a model writes a property the schema does not declare only where the schema
/// allows it explicitly (`additionalProperties` other than `false`, or
/// `patternProperties`), as OpenAI's strict mode and XGrammar do: tool definitions rarely
/// say `additionalProperties: false`, and a small model offered undeclared keys wanders
/// there. The mapper and the published grammars ([`CompiledSpec::grammar_gbnf`]…) still
/// read and write every property the schema admits; a generation grammar's language is a
/// subset of theirs.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct GrammarOptions {
    /// Offer undeclared properties wherever the schema admits them (also where it leaves
    /// `additionalProperties` out), as the published grammars do.
    pub allow_undeclared: bool,
}

/// What the complete lines of a partly written document say.
#[derive(Debug, Clone, PartialEq)]
pub struct Progress {
    /// The JSON of the lines so far (required parts not written yet are absent).
    pub value: Value,
    /// Where the rest of the document starts (`None`: it cannot be resumed, e.g. after an
    /// undeclared property's line; keep the grammar as it is).
    pub resume: Option<Resume>,
    /// The (site path, value) pairs written so far, in document order.
    pub used: Vec<(String, Value)>,
}

impl CompiledSpec {
    /// The places where an instance chooses a value: enum values, consts and free strings
    /// or numbers, each named by its path (see [`Site`]).
    pub fn sites(&self) -> Vec<Site> {
        self.cached_sites().to_vec()
    }

    /// Where a union of object forms chooses its form by the keyword written first (a
    /// call's name): see [`FormSite`].
    pub fn form_sites(&self) -> Vec<FormSite> {
        sites::walk(self.shapes(), self.notation()).1
    }

    /// The grammar pruned to `restriction`, for the whole document or its rest after
    /// `resume`. Its language is a subset of the full grammar's.
    ///
    /// ```
    /// use dss_compiler::prune::{Restriction, Resume};
    /// use dss_compiler::{compile, CompileOptions};
    /// let schema = serde_json::json!({
    ///     "type": "object",
    ///     "properties": {"unit": {"enum": ["celsius", "fahrenheit", "kelvin"]}},
    ///     "required": ["unit"]
    /// });
    /// let spec = compile(&schema, &CompileOptions::default())?;
    /// assert_eq!(spec.sites()[0].path, "/unit");
    /// // The request named only "kelvin".
    /// let mut r = Restriction::default();
    /// r.candidates.insert("/unit".into(), vec![serde_json::json!("kelvin")]);
    /// let gbnf = spec.pruned_grammar(&r, Resume::Start).to_gbnf();
    /// assert!(gbnf.contains("kelvin"), "{gbnf}");
    /// assert!(!gbnf.contains("celsius") && !gbnf.contains("fahrenheit"), "{gbnf}");
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn pruned_grammar(&self, restriction: &Restriction, resume: Resume) -> Grammar {
        self.pruned_grammar_with(restriction, resume, GrammarOptions::default())
    }

    /// [`pruned_grammar`](Self::pruned_grammar) with undeclared properties as `opts` say
    /// (by default only where the schema allows them explicitly, see [`GrammarOptions`]).
    pub fn pruned_grammar_with(
        &self,
        restriction: &Restriction,
        resume: Resume,
        opts: GrammarOptions,
    ) -> Grammar {
        grammar::build_pruned(
            self.shapes(),
            self.notation(),
            self.tables(),
            self.site_prefixes
                .get_or_init(|| sites::path_prefixes(self.cached_sites())),
            restriction,
            resume,
            opts.allow_undeclared,
        )
    }

    /// The whole grammar a model writes under when nothing is pruned: the published
    /// grammar ([`CompiledSpec::grammar_gbnf`]) with undeclared properties as `opts` say
    /// (see [`GrammarOptions`]). Its language is a subset of the published grammar's.
    ///
    /// ```
    /// use dss_compiler::prune::GrammarOptions;
    /// use dss_compiler::{compile, CompileOptions};
    /// // A tool's parameters, without `additionalProperties`.
    /// let schema = serde_json::json!({
    ///     "type": "object",
    ///     "properties": {"city": {"type": "string"}},
    ///     "required": ["city"]
    /// });
    /// let spec = compile(&schema, &CompileOptions::default())?;
    /// let gbnf = spec.generation_grammar(GrammarOptions::default()).to_gbnf();
    /// assert!(!gbnf.contains("more"), "{gbnf}");
    /// // The published grammar (and the mapper) still take undeclared properties.
    /// assert!(spec.grammar_gbnf().contains("more"));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn generation_grammar(&self, opts: GrammarOptions) -> Grammar {
        grammar::build_generation(self.shapes(), self.notation(), opts.allow_undeclared)
    }

    /// Reads the complete lines a model has written so far (`text` up to its last newline
    /// is read; what follows is ignored).
    pub fn progress(&self, text: &str, sites: &[Site]) -> Result<Progress, ExpandError> {
        let lines = match text.rfind('\n') {
            Some(i) => &text[..=i],
            None => "",
        };
        let value = Decoder::new(lines, self.shapes(), self.notation(), self.tables())
            .prefix()
            .document()?;
        let resume = if lines.is_empty() {
            Some(Resume::Start)
        } else {
            self.resume_of(&value)
        };
        let mut used = Vec::new();
        collect_used(&value, &mut String::new(), sites, &mut used);
        Ok(Progress {
            value,
            resume,
            used,
        })
    }

    /// The found values the last line of `text` (ending with a newline) leaves behind
    /// although only that line could take them: values still among the candidates (after
    /// every complete line consumed its own, see [`Restriction::consumed`]) whose every
    /// site lies in the record that line wrote, at a field that line did not write.
    ///
    /// A line of a call that ends there splits one call in two (`Book city denver` then
    /// `Book time monday`): the runtime uses this to keep the line going while the
    /// grammar lets it. Empty when the line wrote no site, or when the text cannot be read.
    pub fn line_leaves(
        &self,
        text: &str,
        initial: &Restriction,
        consume: Consume,
        sites: &[Site],
    ) -> Vec<(String, Value)> {
        let body = text.strip_suffix('\n').unwrap_or(text);
        let before = match body.rfind('\n') {
            Some(i) => &body[..=i],
            None => "",
        };
        let (Ok(p0), Ok(p1)) = (self.progress(before, sites), self.progress(text, sites)) else {
            return Vec::new();
        };
        if p1.used.len() < p0.used.len() || p1.used[..p0.used.len()] != p0.used[..] {
            return Vec::new();
        }
        let line = &p1.used[p0.used.len()..];
        // The record the line wrote: the common parent of its sites.
        let Some(scope) = line
            .iter()
            .map(|(site, _)| parent(site))
            .reduce(common_prefix)
        else {
            return Vec::new();
        };
        let inside = |site: &str| {
            site.len() > scope.len()
                && site.starts_with(scope)
                && site.as_bytes()[scope.len()] == b'/'
        };
        // The line's own record names no mention away while it is being written.
        let rest = initial
            .without_record_readings()
            .consumed(&p1.used, consume);
        // A record elsewhere takes the value only if it will be written: when a value still
        // found for another of its fields says so, one this line's kind of record could not
        // take (`a large fry` pending, not the `1` of `a` that any order takes). Else the
        // value would only open a record of its own (`side 1 size large` after `drink 1
        // drink_type coke`).
        let here = |w: &Value| {
            initial
                .candidates
                .iter()
                .any(|(s, xs)| inside(s) && xs.iter().any(|x| same_value(x, w)))
        };
        let pending = |site: &str| {
            let rec = parent(site);
            rest.candidates.iter().any(|(s, ws)| {
                s != site
                    && s.starts_with(rec)
                    && s.as_bytes().get(rec.len()) == Some(&b'/')
                    && !rest.free.contains(s)
                    && ws.iter().any(|w| !here(w))
            })
        };
        let elsewhere = |v: &Value| {
            rest.candidates
                .iter()
                .any(|(s, vs)| !inside(s) && vs.iter().any(|x| same_value(x, v)) && pending(s))
                || rest.readings.iter().any(|g| {
                    g.iter().any(|(_, x)| same_value(x, v))
                        && g.iter().any(|(s, _)| !inside(s) && pending(s))
                })
        };
        // A modifier tied to the value it modifies ([`Restriction::ties`]) is held by the
        // line that wrote that value, and by no other.
        let tied = |site: &str, v: &Value| {
            let heads: Vec<&(String, Value)> = initial
                .ties
                .iter()
                .filter(|((s, x), _)| s == site && same_value(x, v))
                .map(|(_, head)| head)
                .collect();
            (!heads.is_empty()).then(|| {
                heads
                    .iter()
                    .any(|(hs, hv)| line.iter().any(|(s, w)| s == hs && same_value(w, hv)))
            })
        };
        // A value named in the same clause as one this line wrote, at another field of its
        // record ([`Restriction::together`]).
        let together = |site: &str, v: &Value| {
            initial.together.iter().any(|((s, x), (hs, hv))| {
                s == site
                    && same_value(x, v)
                    && line.iter().any(|(ls, lw)| ls == hs && same_value(lw, hv))
            })
        };
        let mut out = Vec::new();
        for (site, values) in &rest.candidates {
            if !inside(site) || rest.free.contains(site) || line.iter().any(|(s, _)| s == site) {
                continue;
            }
            for v in values {
                if tied(site, v).unwrap_or_else(|| together(site, v) || !elsewhere(v)) {
                    out.push((site.clone(), v.clone()));
                }
            }
        }
        out
    }

    fn resume_of(&self, value: &Value) -> Option<Resume> {
        match self.notation().root {
            RootLayout::Lines => Some(Resume::Lines {
                items: value.as_array()?.len(),
            }),
            RootLayout::Block => {
                let map = value.as_object()?;
                let Some(ObjLayout::Record(r)) = self.notation().object(self.shapes().root) else {
                    return None;
                };
                let fields = block_fields(self.shapes(), r);
                if map.keys().any(|k| r.fields.iter().all(|f| &f.name != k)) {
                    return None;
                }
                let last = fields.iter().rposition(|f| map.contains_key(&f.name));
                Some(match last {
                    None => Resume::Start,
                    Some(i) => Resume::Block {
                        field: i,
                        items: map
                            .get(&fields[i].name)
                            .and_then(Value::as_array)
                            .map_or(0, Vec::len),
                    },
                })
            }
            RootLayout::Line | RootLayout::Value => None,
        }
    }
}

/// The path of a site's parent (`/*/book/city` -> `/*/book`).
fn parent(site: &str) -> &str {
    site.rfind('/').map_or("", |i| &site[..i])
}

/// The longest common prefix of two paths, segment by segment.
fn common_prefix<'a>(a: &'a str, b: &str) -> &'a str {
    let mut end = 0;
    for (i, (x, y)) in a.bytes().zip(b.bytes()).enumerate() {
        if x != y {
            break;
        }
        if x == b'/' {
            end = i;
        }
        if i + 1 == a.len().min(b.len()) {
            let next_a = a.as_bytes().get(i + 1);
            let next_b = b.as_bytes().get(i + 1);
            if matches!(next_a, None | Some(b'/')) && matches!(next_b, None | Some(b'/')) {
                end = i + 1;
            }
        }
    }
    &a[..end]
}

/// The scalars of `value` at sites, as (site path, value).
fn collect_used(value: &Value, path: &mut String, sites: &[Site], out: &mut Vec<(String, Value)>) {
    let len = path.len();
    match value {
        Value::Array(items) => {
            for (i, v) in items.iter().enumerate() {
                path.push('/');
                path.push_str(&i.to_string());
                collect_used(v, path, sites, out);
                path.truncate(len);
            }
        }
        Value::Object(map) => {
            for (k, v) in map {
                path.push('/');
                path.push_str(&sites::escape_segment(k));
                collect_used(v, path, sites, out);
                path.truncate(len);
            }
        }
        scalar => {
            for s in sites.iter().filter(|s| path_matches(&s.path, path)) {
                out.push((s.path.clone(), scalar.clone()));
            }
        }
    }
}

#[cfg(test)]
#[path = "request_tests.rs"]
mod tests;
