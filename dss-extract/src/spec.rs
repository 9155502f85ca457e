//! A compiled spec's entities: its sites' values, the catalogs bound to its free sites and
//! their aliases, indexed once ([`SpecIndex`]); per request, the mentions found and the
//! [`Restriction`] they give (the Grammar Pruning paper's `I_x`), with the tiers used when
//! extraction misses.

use std::collections::{BTreeMap, BTreeSet};
use std::ops::Range;
use std::path::{Path, PathBuf};

use dss_compiler::codec::json_eq;
use dss_compiler::prune::{path_matches, Lexical, Restriction, Site, SiteKind};
use dss_compiler::CompiledSpec;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::cues::TagCues;
use crate::normalize::{stem_into, Normalized, BREAKS};
use crate::places::PlaceKind;
use crate::{read_alias_tsv, read_alias_yaml, read_catalog, EntityIndex, Entry, ExtractError};
use crate::{ExtractMode, Extraction, Mention, Tier};

/// The values bound to free sites, and aliases, for one spec.
#[derive(Debug, Clone, Default)]
pub struct Catalogs {
    /// Site path -> its values.
    pub values: BTreeMap<String, Vec<Value>>,
    /// Phrases naming values (their `site` is a site path, or `*` for every site that has
    /// the value).
    pub aliases: Vec<Entry>,
    /// Values that imply another site's value: (site path, value) -> (site path, value).
    /// A filter value `Furniture` at `/filters/*/values/*` implies the column `Category` at
    /// `/filters/*/fieldName`: finding the one offers the other.
    pub implies: Vec<((String, Value), (String, Value))>,
    /// (site path pattern, value text) pairs left out of the index (leave-one-out
    /// evaluation: the values only the evaluated request uses), wherever they come from
    /// (the schema's enums, catalogs, aliases).
    pub withheld: Vec<(String, String)>,
    /// Site path patterns whose catalogs are complete: a free string there takes only the
    /// catalog's values, never a span of the request ([`Restriction::spans`]).
    pub closed: Vec<String>,
}

/// A spec directory's `catalogs.yaml`: site path -> a file (relative to the directory) or
/// the list of values; `{values: …, closed: true}` (or `closed: true` beside `by`/`groups`)
/// marks a catalog complete ([`Catalogs::closed`]).
#[derive(Debug, Deserialize)]
#[serde(untagged)]
enum CatalogSource {
    File(String),
    Values(Vec<Value>),
    /// Values grouped by a value of another site (`by`): `{by: PATH, groups: {KEY: FILE or
    /// [values]}}`.
    Grouped {
        by: String,
        groups: BTreeMap<String, ListSource>,
        #[serde(default)]
        closed: bool,
    },
    /// A catalog that says whether it is complete: `{values: FILE or [values], closed:
    /// true}`.
    Marked {
        values: ListSource,
        #[serde(default)]
        closed: bool,
    },
}

/// A list of values: a file or the list itself.
#[derive(Debug, Deserialize)]
#[serde(untagged)]
enum ListSource {
    File(String),
    Values(Vec<Value>),
}

impl Catalogs {
    /// Adds a catalog `PATH=FILE` (the form of `--catalog`).
    ///
    /// # Errors
    /// A malformed argument, or the file cannot be read ([`ExtractError`] names it).
    pub fn add_arg(&mut self, arg: &str) -> Result<(), ExtractError> {
        self.add(arg, false)
    }

    /// Adds a complete catalog `PATH=FILE` (the form of `--closed-catalog`): the site
    /// takes only these values, never a span of the request.
    ///
    /// # Errors
    /// A malformed argument, or the file cannot be read ([`ExtractError`] names it).
    pub fn add_closed_arg(&mut self, arg: &str) -> Result<(), ExtractError> {
        self.add(arg, true)
    }

    fn add(&mut self, arg: &str, closed: bool) -> Result<(), ExtractError> {
        let Some((path, file)) = arg.split_once('=') else {
            return Err(ExtractError::File {
                path: PathBuf::from(arg),
                line: 0,
                message: "a catalog is given as PATH=FILE (e.g. /fields/*/fieldName=columns.txt)"
                    .into(),
            });
        };
        let values = read_catalog(file)?;
        self.values
            .entry(path.to_string())
            .or_default()
            .extend(values);
        if closed {
            self.closed.push(path.to_string());
        }
        Ok(())
    }

    /// Adds an alias file: FoodOrdering's `phrase<TAB>LABEL(value)` (`.txt`, `.tsv`), else the
    /// YAML form `site: {value: [phrase, …]}`.
    ///
    /// # Errors
    /// The file cannot be read or is malformed (the error names its line).
    pub fn add_aliases(&mut self, file: &Path) -> Result<(), ExtractError> {
        let entries = match file.extension().and_then(|e| e.to_str()) {
            Some("txt" | "tsv") => read_alias_tsv(file)?,
            _ => read_alias_yaml(file)?,
        };
        self.aliases.extend(entries);
        Ok(())
    }

    /// Reads what a spec directory carries: `catalogs.yaml` and `aliases.yaml`, when present.
    ///
    /// # Errors
    /// A file that exists but cannot be read or is malformed.
    pub fn from_dir(dir: &Path) -> Result<Self, ExtractError> {
        let mut c = Catalogs::default();
        let file = dir.join("catalogs.yaml");
        if file.is_file() {
            let text = std::fs::read_to_string(&file).map_err(|source| ExtractError::Io {
                path: file.clone(),
                source: source.into(),
            })?;
            let doc: BTreeMap<String, CatalogSource> =
                serde_norway::from_str(&text).map_err(|e| ExtractError::File {
                    path: file.clone(),
                    line: e.location().map_or(0, |l| l.line()),
                    message: format!("expected `site path: FILE` or `site path: [values]`: {e}"),
                })?;
            let list = |l: ListSource| match l {
                ListSource::File(f) => read_catalog(dir.join(f)),
                ListSource::Values(v) => Ok(v),
            };
            for (site, source) in doc {
                let values = match source {
                    CatalogSource::File(f) => read_catalog(dir.join(f))?,
                    CatalogSource::Values(v) => v,
                    CatalogSource::Grouped { by, groups, closed } => {
                        if closed {
                            c.closed.push(site.clone());
                        }
                        let mut all = Vec::new();
                        for (key, l) in groups {
                            for v in list(l)? {
                                c.implies.push((
                                    (site.clone(), v.clone()),
                                    (by.clone(), Value::String(key.clone())),
                                ));
                                all.push(v);
                            }
                        }
                        all
                    }
                    CatalogSource::Marked { values, closed } => {
                        if closed {
                            c.closed.push(site.clone());
                        }
                        list(values)?
                    }
                };
                c.values.entry(site).or_default().extend(values);
            }
        }
        let aliases = dir.join("aliases.yaml");
        if aliases.is_file() {
            c.add_aliases(&aliases)?;
        }
        Ok(c)
    }
}

/// A catalog or alias names a path that is not a site of the spec.
#[derive(Debug, Clone, thiserror::Error)]
#[non_exhaustive]
pub enum SpecIndexError {
    /// A catalog for a path that is no free site.
    #[error("catalog path `{path}` is not a free-string or number site of this spec; its sites are:\n{sites}")]
    UnknownSite {
        /// The path given.
        path: String,
        /// The spec's sites, one a line with their kind.
        sites: String,
    },
    /// Building the index failed.
    #[error(transparent)]
    Extract(#[from] ExtractError),
}

/// How a request's restriction was obtained (the weakest tier used).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum PruneTier {
    /// Exact, alias and stem matches only.
    Exact,
    /// Typos were read.
    Fuzzy,
    /// A required site found nothing; the values nearest to the unmatched words were offered.
    Nearest,
}

/// One request's analysis.
#[derive(Debug, Clone, Serialize)]
pub struct Analysis {
    /// The mentions found (numbers and dates included).
    pub mentions: Vec<Mention>,
    /// Candidates per site (`I_x`), with the sites bound by catalogs.
    #[serde(skip)]
    pub restriction: Restriction,
    /// The weakest tier the restriction needed.
    pub tier: PruneTier,
    /// Words naming a union's tags (`cities` for `atis_city`), outside the values found:
    /// shown in the prompt's items, never in the restriction.
    pub cues: Vec<Mention>,
    /// Modifiers given to the value they modify (see `attach_modifiers`): the modifier's
    /// span and its head's. The prompt's items list a modifier with its head.
    #[serde(skip)]
    pub anchors: Vec<(Range<usize>, Range<usize>)>,
    /// Mentions (indices into [`mentions`](Self::mentions)) ruled out by a learned context
    /// word: a reading of a span at a field whose learned word
    /// ([`SpecIndex::learn_contexts`]) does not precede it, where another reading's does
    /// ("from nashville" is a `departure_city`, not also a `destination_city`). They are
    /// neither listed in the prompt's items nor candidates of the restriction; they stay
    /// mentions (what extraction found).
    #[serde(skip)]
    pub unfit: Vec<usize>,
}

impl Analysis {
    /// `request` as a prompt gives it: followed by a line of the items found
    /// (`Items found: Sales (fieldName), …`, see [`items`](Self::items)), if any.
    pub fn prompt(&self, request: &str) -> String {
        let items = self.items();
        if items.is_empty() {
            request.to_string()
        } else {
            format!("{request}\nItems found: {}", items.join(", "))
        }
    }

    /// The candidates as `value (site)` items for the prompt ("Items found: …"), in request
    /// order, each value once per site; a cue as `words (tag)`. A modifier given to the
    /// value it modifies ([`anchors`](Self::anchors)) comes right after that value (a
    /// number right before it), as a record writes them: `1 (number), zero_sugar_lemonade
    /// (drink_type), large (size)` for "one lemonade, zero sugar, large".
    pub fn items(&self) -> Vec<String> {
        let mut seen = BTreeSet::new();
        let mut out = Vec::new();
        let mut all: Vec<&Mention> = self
            .mentions
            .iter()
            .enumerate()
            .filter(|(i, _)| !self.unfit.contains(i))
            .map(|(_, m)| m)
            .chain(&self.cues)
            .collect();
        all.sort_by_key(
            |m| match self.anchors.iter().find(|(span, _)| *span == m.span) {
                Some((_, head)) => (head.start, usize::from(!m.value.is_number())),
                None => (m.span.start, 0),
            },
        );
        for m in all {
            if m.site.starts_with('#') {
                continue;
            }
            if m.tier == Tier::Cue {
                if let Value::String(tag) = &m.value {
                    if seen.insert((m.text.clone(), tag.clone())) {
                        out.push(format!("{} ({tag})", m.text));
                    }
                }
                continue;
            }
            let v = match &m.value {
                Value::String(s) => s.clone(),
                v => v.to_string(),
            };
            let field = m.site.rsplit('/').next().unwrap_or(&m.site).to_string();
            if seen.insert((v.clone(), field.clone())) {
                out.push(format!("{v} ({field})"));
            }
        }
        out
    }
}

/// A bound site's catalog of at most this many values is offered whole where the site must
/// be written and nothing was found for it ([`Restriction::known`]); a longer one leaves
/// the schema's range there (a grammar of 100,000 alternatives would cost every rebuild).
pub const KNOWN_MAX: usize = 256;

/// The entities of a spec and its catalogs, built once; [`SpecIndex::analyze`] per request.
#[derive(Debug)]
pub struct SpecIndex {
    index: EntityIndex,
    sites: Vec<Site>,
    /// (site, value) found -> (site, value) offered too (site paths resolved).
    implies: Vec<((String, Value), (String, Value))>,
    /// Free sites a catalog binds.
    bound: BTreeSet<String>,
    /// A bound site's catalog when it has at most [`KNOWN_MAX`] values
    /// ([`Restriction::known`]).
    known: BTreeMap<String, Vec<Value>>,
    /// Sites left unpruned: the worked examples fill them with values their requests do not
    /// name ([`SpecIndex::learn_inferred`]).
    inferred: BTreeSet<String>,
    /// The words of the union tags' names.
    cues: TagCues,
    /// Field name -> the words seen just before its values in worked examples' requests
    /// ([`SpecIndex::learn_contexts`]).
    contexts: BTreeMap<String, BTreeSet<String>>,
    /// Whether a clause of a request names one record ([`SpecIndex::learn_clause_records`]).
    clause_records: bool,
    /// Free-string sites whose values may be spans of the request: no catalog there says
    /// it is complete ([`Restriction::span_sites`]).
    span_sites: BTreeSet<String>,
    /// Free strings named for a kind of place (`departure_city`, `state`, `country`) bound
    /// by an open catalog: the places of that kind the request names are found there
    /// ([`crate::places::named_places`]), listed or not.
    place_sites: Vec<(String, PlaceKind)>,
    /// Required free strings written in a formal language ([`Site::composed`]: a command
    /// line): left unpruned, the model's to compose, where no catalog says it is complete.
    composed: BTreeSet<String>,
    /// How each span site narrows the spans it takes (see [`dss_compiler::prune::SpanPolicy`]).
    span_policy: BTreeMap<String, dss_compiler::prune::SpanPolicy>,
    /// Free number sites no catalog binds: they take the request's numbers
    /// ([`Restriction::number_sites`]).
    number_sites: BTreeSet<String>,
    /// Whether some span site takes calendar dates (a `format: date` string, or one whose
    /// examples show a date, [`dss_compiler::prune::SpanPolicy::moment`]): a date's words are then
    /// that date's, no span of their own.
    date_sites: bool,
    /// The words of the schema's names (tools and fields), lowercased: each name whole
    /// without its separators and each of its words
    /// ([`dss_compiler::prune::Spans::name_schema_words`]).
    schema_names: BTreeSet<String>,
    /// Whether some span site takes clock times (its examples show one): a time's words
    /// (and its numbers) are then that time's.
    time_sites: bool,
    /// Free-text sites whose catalogs list clock times (`six pm`), and those whose
    /// catalogs list dates (`march 3rd 2024`): they take the request's times and dates
    /// as written ([`SpecIndex::moments_as_written`]).
    moment_valued: (BTreeSet<String>, BTreeSet<String>),
}

impl SpecIndex {
    /// Indexes the values of `spec`'s sites (enums and union tags), the catalogs bound to
    /// its free sites, and the aliases.
    ///
    /// # Errors
    /// A catalog path that is no free site of the spec (the error lists the sites), or an
    /// index that cannot be built.
    pub fn build(spec: &CompiledSpec, catalogs: &Catalogs) -> Result<Self, SpecIndexError> {
        let sites = spec.sites();
        let mut entries: Vec<Entry> = Vec::new();
        let mut bound = BTreeSet::new();
        let mut known: BTreeMap<String, Vec<Value>> = BTreeMap::new();
        for site in &sites {
            match &site.kind {
                SiteKind::Choice { values } => {
                    let languages = language_names(values);
                    entries.extend(values.iter().zip(languages).map(|(v, language)| {
                        let e = Entry::new(&site.path, v.clone());
                        let leaf = v.as_str().and_then(leaf_name);
                        let word = v.as_str().and_then(abbreviated_word);
                        e.with_aliases(
                            leaf.into_iter()
                                .chain(language)
                                .chain(word.map(String::from)),
                        )
                    }));
                }
                SiteKind::Tag { values } => {
                    entries.extend(
                        values
                            .iter()
                            .map(|v| Entry::new(&site.path, Value::String(v.clone()))),
                    );
                }
                SiteKind::Text { .. } | SiteKind::Number { .. } => {}
            }
        }
        for (path, values) in &catalogs.values {
            let matching: Vec<&Site> = sites
                .iter()
                .filter(|s| {
                    path_matches(path, &s.path)
                        && matches!(s.kind, SiteKind::Text { .. } | SiteKind::Number { .. })
                })
                .collect();
            if matching.is_empty() {
                return Err(SpecIndexError::UnknownSite {
                    path: path.clone(),
                    sites: describe(&sites),
                });
            }
            for s in matching {
                bound.insert(s.path.clone());
                // A number site's catalog may list its values as text (`"1"`): they are the
                // numbers, so that they compare and consume as the written values do.
                let is_number = matches!(s.kind, SiteKind::Number { .. });
                let values: Vec<Value> = values
                    .iter()
                    .map(|v| match v {
                        Value::String(t) if is_number => {
                            serde_json::from_str::<serde_json::Number>(t.trim())
                                .map(Value::Number)
                                .unwrap_or_else(|_| v.clone())
                        }
                        _ => v.clone(),
                    })
                    .collect();
                if values.len() <= KNOWN_MAX {
                    let k = known.entry(s.path.clone()).or_default();
                    for v in &values {
                        if !k.contains(v) {
                            k.push(v.clone());
                        }
                    }
                }
                entries.extend(values.into_iter().map(|v| Entry::new(&s.path, v)));
            }
        }
        // Aliases of a number site's values name the numbers (see above).
        let aliases: Vec<Entry> = catalogs
            .aliases
            .iter()
            .map(|a| {
                let number_site = sites.iter().any(|s| {
                    matches!(s.kind, SiteKind::Number { .. }) && path_matches(&a.site, &s.path)
                });
                // Likewise a choice's non-text value named as text (`'true': [no, without]`).
                if let Value::String(t) = &a.value {
                    let named = sites.iter().find_map(|s| match &s.kind {
                        SiteKind::Choice { values } if path_matches(&a.site, &s.path) => values
                            .iter()
                            .find(|v| !v.is_string() && v.to_string() == *t)
                            .cloned(),
                        _ => None,
                    });
                    if let Some(v) = named {
                        let mut a = a.clone();
                        a.value = v;
                        return a;
                    }
                }
                match &a.value {
                    Value::String(t) if number_site => {
                        match serde_json::from_str::<serde_json::Number>(t.trim()) {
                            Ok(n) => {
                                let mut a = a.clone();
                                a.value = Value::Number(n);
                                a
                            }
                            Err(_) => a.clone(),
                        }
                    }
                    _ => a.clone(),
                }
            })
            .collect();
        attach_aliases(&mut entries, &aliases);
        // The codes a field's description names (`1 for cleaning service`, `'CA' for
        // California`): the phrase names the value. A code of a free number or string site
        // is named by its phrase only.
        for site in &sites {
            let mut by_value: Vec<(Value, Vec<String>)> = Vec::new();
            for (v, phrase) in &site.codes {
                match by_value.iter_mut().find(|(w, _)| w == v) {
                    Some((_, ps)) => ps.push(phrase.clone()),
                    None => by_value.push((v.clone(), vec![phrase.clone()])),
                }
            }
            for (v, phrases) in by_value {
                let e = Entry::new(&site.path, v).with_aliases(phrases);
                match site.kind {
                    SiteKind::Number { .. } | SiteKind::Text { .. }
                        if !bound.contains(&site.path) =>
                    {
                        entries.push(e.named_by_aliases_only());
                    }
                    _ => attach_aliases(&mut entries, &[e]),
                }
            }
        }
        if !catalogs.withheld.is_empty() {
            let withheld = |site: &str, v: &Value| {
                let text = match v {
                    Value::String(s) => s.clone(),
                    v => v.to_string(),
                };
                catalogs
                    .withheld
                    .iter()
                    .any(|(p, w)| *w == text && path_matches(p, site))
            };
            for (site, values) in &mut known {
                values.retain(|v| !withheld(site, v));
            }
            entries.retain(|e| !withheld(&e.site, &e.value));
        }
        let moment_valued = moment_valued_sites(&sites, &entries);
        let resolve = |p: &str| -> Vec<String> {
            sites
                .iter()
                .filter(|s| path_matches(p, &s.path))
                .map(|s| s.path.clone())
                .collect()
        };
        let mut implies = Vec::new();
        for ((from, v), (to, w)) in &catalogs.implies {
            for f in resolve(from) {
                for t in resolve(to) {
                    implies.push(((f.clone(), v.clone()), (t, w.clone())));
                }
            }
        }
        let cues = TagCues::build(&sites, &spec.form_sites());
        let closed = |path: &str| catalogs.closed.iter().any(|p| path_matches(p, path));
        let schema_names = sites
            .iter()
            .flat_map(|s| s.path.split('/'))
            .filter(|seg| !seg.is_empty() && *seg != "*")
            .flat_map(name_keys)
            .collect();
        let span_sites: BTreeSet<String> = sites
            .iter()
            .filter(|s| matches!(s.kind, SiteKind::Text { .. }) && !closed(&s.path))
            .map(|s| s.path.clone())
            .collect();
        let composed = sites
            .iter()
            .filter(|s| s.composed && s.required_in_record && span_sites.contains(&s.path))
            .map(|s| s.path.clone())
            .collect();
        // Free strings named for a kind of place whose catalog is open: a place of that kind
        // the request names is a value there, listed or not. A catalog that lists values of
        // another kind says the name means something else (`state`: `on`, `off`).
        let place_sites: Vec<(String, PlaceKind)> = sites
            .iter()
            .filter(|s| {
                matches!(s.kind, SiteKind::Text { .. })
                    && bound.contains(&s.path)
                    && !closed(&s.path)
            })
            .filter_map(|s| {
                let name = s.path.rsplit('/').find(|seg| *seg != "*")?;
                let kind = PlaceKind::named(&name_keys(name))?;
                let listed: Vec<&str> = entries
                    .iter()
                    .filter(|e| e.site == s.path)
                    .filter_map(|e| e.value.as_str())
                    .collect();
                let places = listed
                    .iter()
                    .filter(|v| crate::places::is_place(kind, v))
                    .count();
                let agrees = kind == PlaceKind::City || 2 * places >= listed.len();
                agrees.then(|| (s.path.clone(), kind))
            })
            .collect();
        let span_policy: BTreeMap<String, dss_compiler::prune::SpanPolicy> = sites
            .iter()
            .filter(|s| span_sites.contains(&s.path))
            .map(|s| (s.path.clone(), s.span_policy()))
            .filter(|(_, p)| p.narrows())
            .collect();
        let number_sites = sites
            .iter()
            .filter(|s| matches!(s.kind, SiteKind::Number { .. }) && !bound.contains(&s.path))
            .map(|s| s.path.clone())
            .collect();
        let form_has = |f: fn(&dss_compiler::prune::MomentForm) -> bool| {
            span_policy
                .values()
                .any(|p| p.moment.as_ref().is_some_and(f))
        };
        let time_sites = form_has(dss_compiler::prune::MomentForm::has_time);
        let date_sites = form_has(dss_compiler::prune::MomentForm::has_date)
            || sites.iter().any(|s| {
                span_sites.contains(&s.path)
                    && matches!(
                        s.kind,
                        SiteKind::Text {
                            lexical: Some(Lexical::Date)
                        }
                    )
            });
        Ok(SpecIndex {
            place_sites,
            schema_names,
            date_sites,
            time_sites,
            span_sites,
            composed,
            span_policy,
            number_sites,
            index: EntityIndex::build(entries)?,
            sites,
            implies,
            bound,
            known,
            inferred: BTreeSet::new(),
            cues,
            contexts: BTreeMap::new(),
            clause_records: false,
            moment_valued,
        })
    }

    /// Learns from worked examples (request, output JSON) which sites hold values the writer
    /// infers rather than reads from the request: a site whose values in the examples' outputs
    /// are more often not found in their requests than found is left unpruned (a field's role
    /// or data type, which no request names). Returns those sites.
    pub fn learn_inferred<'a>(
        &mut self,
        spec: &CompiledSpec,
        examples: impl IntoIterator<Item = (&'a str, &'a Value)>,
    ) -> &BTreeSet<String> {
        let mut named: BTreeMap<String, (usize, usize)> = BTreeMap::new();
        for (_, analysis, used) in self.read_examples(spec, examples) {
            for (site, v) in used {
                let e = named.entry(site.clone()).or_default();
                if analysis.restriction.at(&site).contains(&v) {
                    e.0 += 1;
                } else {
                    e.1 += 1;
                }
            }
        }
        self.inferred = named
            .into_iter()
            .filter(|(site, (yes, no))| no > yes && !self.bound.contains(site))
            .map(|(site, _)| site)
            .collect();
        &self.inferred
    }

    /// Learns from worked examples (request, output JSON) the word just before each value
    /// their requests name, per field (`from` before `departure_city`, `to` before
    /// `destination_city`). Where a value found could go to several fields, it is a
    /// candidate (and an item of the prompt) only at the fields whose word precedes it in
    /// the request, where there are such ([`Analysis::unfit`]). Returns how many (field,
    /// word) pairs were learned.
    ///
    /// Also learns whether a clause of a request names one record
    /// ([`SpecIndex::learn_clause_records`]).
    pub fn learn_contexts<'a>(
        &mut self,
        spec: &CompiledSpec,
        examples: impl IntoIterator<Item = (&'a str, &'a Value)>,
    ) -> usize {
        let examples: Vec<(&str, &Value)> = examples.into_iter().collect();
        self.learn_clause_records(examples.iter().copied());
        let mut contexts: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
        for (request, analysis, used) in self.read_examples(spec, examples) {
            let words = Normalized::new(request);
            for (site, v) in &used {
                for m in analysis
                    .mentions
                    .iter()
                    .filter(|m| m.site == *site && m.value == *v)
                {
                    if let Some(w) = word_before(&words, m.span.start) {
                        contexts.entry(field_of(site)).or_default().insert(w);
                    }
                }
            }
        }
        self.contexts = contexts;
        self.contexts.values().map(BTreeSet::len).sum()
    }

    /// Learns from worked examples (request, output JSON) whether each clause of a request
    /// (no punctuation or `BREAKS` word between its words) names the values of one record:
    /// yes when some example's clause names two values written in one record (object) of
    /// its output and none names values written in two records apart (neither inside the
    /// other). A flight-booking domain says "flights from memphis to milwaukee in april, and
    /// what drinks are served on TK12": a clause per call. A food order says "a burger with
    /// fries": two records in one clause. Where it holds, a value's readings in records that
    /// take no other value of its clause are no candidates ([`Analysis::unfit`]). Returns
    /// what was learned.
    pub fn learn_clause_records<'a>(
        &mut self,
        examples: impl IntoIterator<Item = (&'a str, &'a Value)>,
    ) -> bool {
        let (mut one, mut apart) = (false, false);
        for (request, output) in examples {
            let mut records = Vec::new();
            record_leaves(output, String::new(), &mut records);
            let analysis = self.index.extract_with(request, ExtractMode::Full);
            let words = Normalized::new(request);
            let clause = words.clauses(request);
            // Per clause, the record of each span whose value lies in exactly one record.
            let mut placed: BTreeMap<usize, BTreeMap<(usize, usize), String>> = BTreeMap::new();
            for m in &analysis.mentions {
                let holders: Vec<&String> = records
                    .iter()
                    .filter(|(_, leaves)| leaves.iter().any(|l| json_eq(l, &m.value)))
                    .map(|(at, _)| at)
                    .collect();
                let [at] = holders[..] else { continue };
                let first = words.words_before(m.span.start);
                let Some(&c) = clause.get(first) else {
                    continue;
                };
                placed
                    .entry(c)
                    .or_default()
                    .insert((m.span.start, m.span.end), at.clone());
            }
            for spans in placed.values() {
                let ats: Vec<&String> = spans.values().collect();
                for (i, a) in ats.iter().enumerate() {
                    for b in &ats[i + 1..] {
                        if a == b {
                            one = true;
                        } else if !a.starts_with(b.as_str()) && !b.starts_with(a.as_str()) {
                            apart = true;
                        }
                    }
                }
            }
        }
        self.clause_records = one && !apart;
        self.clause_records
    }

    /// Whether a learned context word of `m`'s field comes right before it in `words` (the
    /// normalised request).
    fn fits_context(&self, words: &Normalized, m: &Mention) -> bool {
        word_before(words, m.span.start).is_some_and(|w| {
            self.contexts
                .get(&field_of(&m.site))
                .is_some_and(|c| c.contains(&w))
        })
    }

    /// The (span, site) of each reading whose field's learned context word does not precede
    /// it where another reading of the same span's does ([`Analysis::unfit`]).
    fn unfit_readings(
        &self,
        mentions: &[Mention],
        request: &str,
    ) -> BTreeSet<(usize, usize, String)> {
        let mut out = BTreeSet::new();
        if self.contexts.is_empty() {
            return out;
        }
        let words = Normalized::new(request);
        let fits = |m: &Mention| self.fits_context(&words, m);
        for m in mentions {
            let fitting_sibling = mentions
                .iter()
                .any(|o| o.span == m.span && o.site != m.site && fits(o));
            if fitting_sibling && !fits(m) {
                out.insert((m.span.start, m.span.end, m.site.clone()));
            }
        }
        out
    }

    /// Each worked example that compresses and reads back: its request, the analysis of
    /// the request, and the (site, value) pairs its output writes.
    fn read_examples<'a>(
        &self,
        spec: &CompiledSpec,
        examples: impl IntoIterator<Item = (&'a str, &'a Value)>,
    ) -> Vec<(&'a str, Analysis, Used)> {
        let mut out = Vec::new();
        for (request, output) in examples {
            let Ok(text) = spec.compress(output) else {
                continue;
            };
            let Ok(progress) = spec.progress(&format!("{}\n", text.trim_end()), &self.sites) else {
                continue;
            };
            out.push((
                request,
                self.analyze(request, ExtractMode::Full, 0),
                progress.used,
            ));
        }
        out
    }

    /// The spec's sites.
    pub fn sites(&self) -> &[Site] {
        &self.sites
    }

    /// Adds the places `request` names ([`crate::places::named_places`]) that no catalog
    /// found as values of every site named for their kind ([`SpecIndex::place_sites`]),
    /// written as the request writes them.
    fn find_places(&self, request: &str, mentions: &mut Vec<Mention>) {
        if self.place_sites.is_empty() {
            return;
        }
        let spans = dss_compiler::prune::Spans::of(request);
        let kinds: BTreeSet<PlaceKind> = self.place_sites.iter().map(|(_, k)| *k).collect();
        let mut found: Vec<(std::ops::Range<usize>, PlaceKind)> = kinds
            .into_iter()
            .flat_map(|k| {
                crate::places::named_places(&spans, k)
                    .into_iter()
                    .map(move |at| (at, k))
            })
            .collect();
        // A place inside a longer one is part of its name (`mexico` in `new mexico`).
        let spans_found: Vec<std::ops::Range<usize>> =
            found.iter().map(|(at, _)| at.clone()).collect();
        found.retain(|(at, _)| {
            !spans_found
                .iter()
                .any(|o| o != at && o.start <= at.start && at.end <= o.end)
        });
        found.sort_by_key(|(at, k)| (at.start, at.end, *k));
        // What the catalogs found, apart from the places added here (`georgia` is a state
        // and a country).
        let listed = mentions.len();
        for (at, kind) in found {
            let mentions_found = &mentions[..listed];
            // A value found over part of it (`virginia city`, `south carolina`) is what the
            // words name.
            let overlaps = |m: &Mention| m.span.start < at.end && at.start < m.span.end;
            if mentions_found.iter().any(|m| overlaps(m) && m.span != at) {
                continue;
            }
            // A place a catalog lists keeps the fields its catalogs give it: closed or not,
            // they say which of a call's cities it is (`departure_city`, not
            // `destination_city`).
            if mentions_found.iter().any(|m| m.span == at) {
                continue;
            }
            let text = request[at.clone()].to_string();
            for (site, _) in self.place_sites.iter().filter(|(_, k)| *k == kind) {
                mentions.push(Mention {
                    span: at.clone(),
                    text: text.clone(),
                    site: site.clone(),
                    value: Value::String(text.clone()),
                    tier: Tier::Exact,
                    score: 1.0,
                });
            }
        }
        mentions.sort_by_key(|m| (m.span.start, m.span.end));
    }

    /// The entity index (for the paper's matcher, or extraction alone).
    pub fn entities(&self) -> &EntityIndex {
        &self.index
    }

    /// Extraction for `request`, and the restriction it gives. When a required bound site
    /// found nothing, the values nearest to the words that matched nothing are offered there
    /// (at most `nearest` per word; never the whole list).
    pub fn analyze(&self, request: &str, mode: ExtractMode, nearest: usize) -> Analysis {
        let mut extraction = self.index.extract_with(request, mode);
        if mode == ExtractMode::Full {
            self.find_places(request, &mut extraction.mentions);
            self.spell_numbers_as_written(&mut extraction.mentions);
            self.moments_as_written(&mut extraction.mentions);
        }
        let anchors = if mode == ExtractMode::Full {
            let required = |site: &str| {
                self.sites
                    .iter()
                    .any(|s| s.path == site && s.required_in_record)
            };
            attach_modifiers(&mut extraction.mentions, request, &required)
        } else {
            Vec::new()
        };
        let mut tier = if extraction.mentions.iter().any(|m| m.tier == Tier::Fuzzy) {
            PruneTier::Fuzzy
        } else {
            PruneTier::Exact
        };
        // Readings a learned context word rules out ([`Analysis::unfit`]) are no candidates,
        // nor those a value's clause partner rules out.
        let mut unfit_readings = self.unfit_readings(&extraction.mentions, request);
        if mode == ExtractMode::Full && self.clause_records {
            let fitting: Vec<Mention> = extraction
                .mentions
                .iter()
                .filter(|m| !unfit_readings.contains(&(m.span.start, m.span.end, m.site.clone())))
                .cloned()
                .collect();
            let taken: Vec<_> = extraction
                .mentions
                .iter()
                .map(|m| (m.span.clone(), field_of(&m.site)))
                .collect();
            let cued = self.cues.records_cued(request, &taken, true);
            // Heads: the fields every instance of their record writes that name what it is
            // (a dish's type; not its count); and the records that require some field.
            let heads: BTreeSet<&str> = self
                .sites
                .iter()
                .filter(|s| s.required_in_record && !is_count(s))
                .map(|s| s.path.as_str())
                .collect();
            let headed: BTreeSet<String> = self
                .sites
                .iter()
                .filter(|s| s.required_in_record)
                .map(|s| record_of(&s.path))
                .collect();
            unfit_readings.extend(unpartnered(&fitting, &cued, (&heads, &headed), request));
        }
        let fitting = Extraction {
            mentions: extraction
                .mentions
                .iter()
                .filter(|m| !unfit_readings.contains(&(m.span.start, m.span.end, m.site.clone())))
                .cloned()
                .collect(),
        };
        let mut restriction = restriction_of(&fitting, &self.bound);
        restriction.known = self.known.clone();
        if mode == ExtractMode::Full {
            self.add_record_readings(&mut restriction, &fitting.mentions, request);
            add_neighbour_readings(&mut restriction, &fitting.mentions, request);
            restriction.ties = ties(&fitting.mentions, &anchors);
            restriction.together = together(&fitting.mentions, request);
            restriction.alternatives = alternatives(&fitting.mentions, request);
        }
        restriction.free = self.inferred.union(&self.composed).cloned().collect();
        restriction.composed = self.composed.clone();
        let mut flags = Vec::new();
        if mode == ExtractMode::Full {
            self.open_values(&mut restriction, request, &fitting.mentions);
            flags = self.named_flags(request);
            for m in &flags {
                let at = restriction.candidates.entry(m.site.clone()).or_default();
                if !at.contains(&m.value) {
                    at.push(m.value.clone());
                }
            }
        }
        for ((from, v), (to, w)) in &self.implies {
            if restriction.at(from).contains(v) && !restriction.at(to).contains(w) {
                restriction
                    .candidates
                    .entry(to.clone())
                    .or_default()
                    .push(w.clone());
            }
        }
        let missing: Vec<&Site> = self
            .sites
            .iter()
            .filter(|s| {
                s.required
                    && self.is_bound(s)
                    && !self.inferred.contains(&s.path)
                    && restriction.at(&s.path).is_empty()
            })
            .collect();
        let mut mentions = extraction.mentions.clone();
        if !flags.is_empty() {
            mentions.extend(flags);
            mentions.sort_by_key(|m| (m.span.start, m.span.end));
        }
        let mut unfit = Vec::new();
        if !self.contexts.is_empty() || !unfit_readings.is_empty() {
            // Readings of one span: those whose field's learned word precedes it first.
            let words = Normalized::new(request);
            let fits = |m: &Mention| self.fits_context(&words, m);
            mentions.sort_by_cached_key(|m| (m.span.start, m.span.end, !fits(m)));
            // The prompt lists only the fitting readings of such a span.
            for (i, m) in mentions.iter().enumerate() {
                if unfit_readings.contains(&(m.span.start, m.span.end, m.site.clone())) {
                    unfit.push(i);
                }
            }
        }
        if !missing.is_empty() && nearest > 0 {
            let near: Vec<Mention> = self
                .index
                .nearest(request, &extraction, nearest)
                .into_iter()
                .filter(|m| missing.iter().any(|s| s.path == m.site))
                .collect();
            if !near.is_empty() {
                tier = PruneTier::Nearest;
                for m in &near {
                    restriction
                        .candidates
                        .entry(m.site.clone())
                        .or_default()
                        .push(m.value.clone());
                }
                mentions.extend(near);
            }
        }
        // Cues (full extraction only: the paper's matcher has none).
        let cues = match mode {
            ExtractMode::Full => {
                let taken: Vec<_> = mentions
                    .iter()
                    .map(|m| (m.span.clone(), field_of(&m.site)))
                    .collect();
                self.cues.find(request, &taken)
            }
            ExtractMode::Paper => Vec::new(),
        };
        // A word that names a call is no value either.
        for c in &cues {
            restriction.spans.claim(c.span.clone());
        }
        Analysis {
            mentions,
            restriction,
            tier,
            cues,
            anchors,
            unfit,
        }
    }

    /// A one-word value that is also read as a cue for a call (`book` in "book a brasserie
    /// in oslo", a value of `object_type` and a word of `BookRestaurant`; see
    /// [`TagCues::find`]: in "rate my current book" `RateBook` wins the word) reads as that
    /// call too: its mention gets a record reading for each such call none of whose own
    /// sites is among the mention's readings, so once the call is written the word is used,
    /// and is not left over to open a call of its own (`SearchCreativeWork object_type
    /// book`). See [`Restriction::readings`].
    fn add_record_readings(&self, r: &mut Restriction, mentions: &[Mention], request: &str) {
        let named = self.cues.records_named(request);
        if named.is_empty() {
            return;
        }
        let words = Normalized::new(request);
        let groups = mention_groups(mentions);
        let all: Vec<Vec<(String, Value)>> = groups.iter().map(|g| pairs_of(g)).collect();
        for (k, group) in groups.iter().enumerate() {
            let Some(first) = group.first() else { continue };
            let one_word = words
                .tokens
                .iter()
                .filter(|t| first.span.start <= t.orig_start && t.orig_end <= first.span.end)
                .count()
                == 1;
            if !one_word || group.iter().any(|m| m.span != first.span) {
                continue;
            }
            let records: Vec<&String> = named
                .iter()
                .filter(|(span, _)| span.start <= first.span.start && first.span.end <= span.end)
                .map(|(_, rec)| rec)
                .filter(|rec| {
                    !group.iter().any(|m| {
                        m.site.len() > rec.len()
                            && m.site.starts_with(rec.as_str())
                            && m.site.as_bytes()[rec.len()] == b'/'
                    })
                })
                .collect();
            add_record_readings_to(r, &all, k, records);
        }
    }

    /// What the open sites of a request take from its own words: spans at free strings no
    /// complete catalog binds, its numbers at free numbers, its dates and clock times
    /// ([`SpecIndex::moments`]) at date and time strings (see [`Restriction::spans`]).
    fn open_values(&self, r: &mut Restriction, request: &str, mentions: &[Mention]) {
        r.spans = dss_compiler::prune::Spans::of(request);
        r.spans.name_schema_words(request, &self.schema_names);
        r.span_sites = self.span_sites.clone();
        r.span_policy = self.span_policy.clone();
        r.number_sites = self.number_sites.clone();
        // A word that names a value found at a site is that value's, not a span of its own;
        // so are the words of a date or time where a field takes one (`April 25th 2023` is
        // `2023-04-25` there, and `April` no value of its own).
        for m in mentions {
            if !m.site.starts_with('#') && m.tier != Tier::Nearest {
                r.spans.claim(m.span.clone());
            }
        }
        let (moments, claimed) = self.moments(request, mentions);
        for span in &claimed {
            r.spans.claim(span.clone());
        }
        let mut seen = Vec::new();
        for m in mentions {
            // One number per span of the request (`a dozen` is 12 once); none of a time's.
            if seen.contains(&(m.span.start, m.span.end, m.site.as_str()))
                || claimed
                    .iter()
                    .any(|c| c.start <= m.span.start && m.span.end <= c.end)
            {
                continue;
            }
            if m.site == crate::NUMBER_SITE && m.value.is_number() {
                r.numbers.push(m.value.clone());
                seen.push((m.span.start, m.span.end, m.site.as_str()));
            }
        }
        r.dates.extend(moments.into_iter().map(Value::String));
        if r.span_policy.values().any(|p| p.tail_words.is_some()) {
            r.places = crate::places::places(&r.spans);
        }
    }

    /// The dates and clock times a request gives, in ISO 8601 ([`dss_compiler::prune::Moment`]),
    /// and the spans of the request that are theirs (no span of their own).
    ///
    /// - A whole date is one; a day without a year (`April 3rd`) takes the year of the
    ///   request's whole dates where they all have one ("from April 3rd to April 5th 2023").
    /// - Where the request says which date is today (`today is Monday April 25th 2023`),
    ///   `tomorrow`, `yesterday` and the next weekday it names (`next Thursday`) are dates
    ///   counted from it (from the weekday it names, where it names one); today's date is
    ///   then no value of its own.
    /// - Where a field takes clock times, a time written next to a date ("on the 12th of
    ///   March 2023 at 3 in the afternoon", "at 8pm on 2024-05-01") makes one moment with
    ///   it (`2023-03-12T15:00:00`), and a time alone is one (`15:00:00`).
    ///
    /// A date's words are claimed where some field takes dates, a time's where some
    /// field takes times.
    fn moments(
        &self,
        request: &str,
        mentions: &[Mention],
    ) -> (Vec<String>, Vec<std::ops::Range<usize>>) {
        type Date = (u32, u32, u32);
        let mut anchor: Option<(Date, Option<u32>)> = None;
        for m in mentions.iter().filter(|m| m.site == crate::DATE_SITE) {
            if let Some(rest) = m.value.as_str().and_then(|v| v.strip_prefix("today=")) {
                let (d, wd) = match rest.split_once('/') {
                    Some((d, w)) => (d, w.parse().ok()),
                    None => (rest, None),
                };
                if let Some(date) = dss_compiler::prune::Moment::parse(d).and_then(|m| m.date) {
                    anchor = Some((date, wd));
                }
            }
        }
        let whole: Vec<Date> = mentions
            .iter()
            .filter(|m| m.site == crate::DATE_SITE)
            .filter_map(|m| m.value.as_str())
            .filter_map(|v| {
                dss_compiler::prune::Moment::parse(
                    v.trim_start_matches("today=").split('/').next()?,
                )
            })
            .filter_map(|m| m.date)
            .collect();
        let year = whole
            .first()
            .map(|d| d.0)
            .filter(|y| whole.iter().all(|d| d.0 == *y));
        // (span, date, time)
        type Found = (std::ops::Range<usize>, Option<Date>, Option<Date>);
        let mut found: Vec<Found> = Vec::new();
        let mut claimed = Vec::new();
        // Where today's date is given: where it is in `found`, and its span.
        let mut today_at: Option<(usize, std::ops::Range<usize>)> = None;
        let mut counted = false;
        for m in mentions {
            let Some(v) = m.value.as_str() else { continue };
            if m.site == crate::TIME_SITE {
                if self.time_sites {
                    let t = dss_compiler::prune::Moment::parse(v).and_then(|m| m.time);
                    found.push((m.span.clone(), None, t));
                }
                continue;
            }
            if m.site != crate::DATE_SITE {
                continue;
            }
            let date = if let Some(d) = dss_compiler::prune::Moment::parse(v).and_then(|m| m.date) {
                Some(d)
            } else if let (Some(md), Some(y)) = (v.strip_prefix("--"), year) {
                dss_compiler::prune::Moment::parse(&format!("{y:04}-{md}")).and_then(|m| m.date)
            } else if v.starts_with("today=") {
                today_at = Some((found.len(), m.span.clone()));
                continue;
            } else if let Some((today, stated)) = anchor {
                let offset = match v {
                    "P0D" => Some(0),
                    "+P1D" => Some(1),
                    "-P1D" => Some(-1),
                    _ => v
                        .strip_prefix("weekday=")
                        .and_then(|w| w.parse::<i64>().ok())
                        .map(|w| {
                            let now = stated.map_or_else(|| weekday_of(today), i64::from);
                            (w - now).rem_euclid(7).max(1)
                        }),
                };
                counted |= offset.is_some();
                offset.map(|o| add_days(today, o))
            } else {
                None
            };
            if date.is_some() {
                found.push((m.span.clone(), date, None));
            }
        }
        // Today's date is a value of its own only where no day is counted from it ("today
        // is May 7th 2024: what is on?"); else its words are claimed.
        if let (Some((at, span)), Some((today, _))) = (today_at, anchor) {
            if counted {
                if self.date_sites {
                    claimed.push(span);
                }
            } else {
                found.insert(at.min(found.len()), (span, Some(today), None));
            }
        }
        found.sort_by_key(|f| f.0.start);
        // A date and a time next to each other are one moment.
        let near = |a: &std::ops::Range<usize>, b: &std::ops::Range<usize>| {
            let gap = request.get(a.end..b.start).unwrap_or("x");
            let words: Vec<&str> = gap
                .split(|c: char| c.is_whitespace() || c == ',')
                .filter(|w| !w.is_empty())
                .collect();
            words.len() <= 2
                && words.iter().all(|w| {
                    matches!(
                        w.to_lowercase().as_str(),
                        "at" | "on" | "by" | "around" | "about" | "the"
                    )
                })
        };
        // A time after a date and time, joined to it as the end of a range (`16:00 -
        // 18:00`, `from 9:00 to 11:30`), is on that date.
        let range_end = |a: &std::ops::Range<usize>, b: &std::ops::Range<usize>| {
            let gap = request.get(a.end..b.start).unwrap_or("x");
            let words: Vec<&str> = gap
                .split(|c: char| c.is_whitespace() || matches!(c, '-' | '–' | '—'))
                .filter(|w| !w.is_empty())
                .collect();
            (gap.contains(['-', '–', '—']) && words.is_empty())
                || matches!(
                    words.iter().map(|w| w.to_lowercase()).collect::<Vec<_>>().as_slice(),
                    [w] if matches!(w.as_str(), "to" | "until" | "till" | "through")
                )
        };
        let mut moments = Vec::new();
        let mut i = 0;
        // The date of the moment before, with its span, where it had a time too.
        let mut dated: Option<(std::ops::Range<usize>, Vec<Date>)> = None;
        while i < found.len() {
            let (span, date, time) = found[i].clone();
            // The readings of one numeric date (`04/07/2023`) share its span.
            let mut k = i + 1;
            let mut dates: Vec<Option<Date>> = vec![date];
            while let Some(f) = found
                .get(k)
                .filter(|f| f.0 == span && f.2.is_none() && date.is_some())
            {
                dates.push(f.1);
                k += 1;
            }
            let next = found.get(k);
            let pair = next.filter(|n| {
                near(&span, &n.0)
                    && ((date.is_some() && n.1.is_none()) || (time.is_some() && n.2.is_none()))
            });
            let mut ms: Vec<dss_compiler::prune::Moment> = match pair {
                Some(n) => {
                    k += 1;
                    claimed.push(n.0.clone());
                    dates
                        .iter()
                        .map(|d| dss_compiler::prune::Moment {
                            date: d.or(n.1),
                            time: time.or(n.2),
                        })
                        .collect()
                }
                None => dates
                    .iter()
                    .map(|d| dss_compiler::prune::Moment { date: *d, time })
                    .collect(),
            };
            if let (None, Some(_), Some((before, ds))) = (date, time, &dated) {
                if pair.is_none() && range_end(before, &span) {
                    ms = ds
                        .iter()
                        .map(|d| dss_compiler::prune::Moment {
                            date: Some(*d),
                            time,
                        })
                        .collect();
                }
            }
            let end = pair.map_or(span.end, |n| n.0.end.max(span.end));
            dated = ms
                .iter()
                .all(|m| m.date.is_some() && m.time.is_some())
                .then(|| (span.start..end, ms.iter().filter_map(|m| m.date).collect()));
            let has_date = ms.iter().any(|m| m.date.is_some());
            if (has_date && self.date_sites) || (!has_date && self.time_sites) {
                claimed.push(span);
            }
            moments.extend(ms.iter().map(|m| m.iso()));
            i = k;
        }
        (moments, claimed)
    }

    /// A number the request spells one way and a free-text site's catalog another (`5`
    /// and `five`, `3` and `three`) is written as the request spells it: a free string is
    /// the user's text, and a catalog lists the spellings it has seen, not all there are.
    /// Choices keep the schema's spelling; so do spellings that differ only in case.
    fn spell_numbers_as_written(&self, mentions: &mut Vec<Mention>) {
        let mut changed = false;
        for m in mentions.iter_mut() {
            if m.tier != Tier::Number || m.site.starts_with('#') {
                continue;
            }
            let Value::String(v) = &m.value else { continue };
            let text = m.text.trim();
            if text.is_empty() || v.trim().eq_ignore_ascii_case(text) {
                continue;
            }
            let free_text = self.sites.iter().any(|s| {
                s.path == m.site
                    && matches!(
                        s.kind,
                        SiteKind::Text {
                            lexical: None | Some(Lexical::NonEmpty)
                        }
                    )
            });
            if free_text {
                m.value = Value::String(text.to_owned());
                changed = true;
            }
        }
        if changed {
            // Two catalog spellings of one number are now one reading.
            let mut seen = BTreeSet::new();
            mentions.retain(|m| {
                seen.insert((
                    m.span.start,
                    m.span.end,
                    m.site.clone(),
                    m.value.to_string(),
                ))
            });
        }
    }

    /// The yes/no flags the request names: a boolean field whose name's words (leaving out
    /// the words every flag name uses: `include`, `is`, `has`, `enable`, `allow`, ...) all
    /// stand in the request, in any inflection (`include_archived` in "my notes, archived
    /// ones included", `pets_allowed` in "a flat where my pet is allowed"). The flag is set, or
    /// cleared where a negation comes before its words in the same clause ("no balcony",
    /// "I can do without a balcony"). A flag nobody names keeps its default: left out.
    fn named_flags(&self, request: &str) -> Vec<Mention> {
        let words = raw_words(request);
        let stems: Vec<String> = words.iter().map(|w| flag_stem(&w.text)).collect();
        let mut out = Vec::new();
        for site in &self.sites {
            let SiteKind::Choice { values } = &site.kind else {
                continue;
            };
            if !values.contains(&Value::Bool(true))
                || values.iter().any(|v| !v.is_boolean())
                || self.inferred.contains(&site.path)
            {
                continue;
            }
            let field = field_of(&site.path);
            // The name's words (a name of one word is its only key).
            let keys = name_keys(&field);
            let skip = usize::from(keys.len() > 1);
            let content: Vec<String> = keys
                .into_iter()
                .skip(skip)
                .filter(|k| k.chars().count() >= 3 && !FLAG_WORDS.contains(&k.as_str()))
                .map(|k| flag_stem(&k))
                .collect();
            if content.is_empty() {
                continue;
            }
            let at: Option<Vec<usize>> = content
                .iter()
                .map(|c| stems.iter().position(|s| s == c))
                .collect();
            let Some(at) = at else { continue };
            let (Some(&first), Some(&last)) = (at.iter().min(), at.iter().max()) else {
                continue;
            };
            let negated = (first.saturating_sub(NEGATION_REACH)..first)
                .rev()
                .take_while(|&k| !words[k].ends_clause)
                .any(|k| is_negation(&words[k].text));
            let value = Value::Bool(!negated);
            if !values.contains(&value) {
                continue;
            }
            let span = words[first].at.start..words[last].at.end;
            out.push(Mention {
                text: request[span.clone()].to_owned(),
                span,
                site: site.path.clone(),
                value,
                tier: Tier::Exact,
                score: 1.0,
            });
        }
        out
    }

    /// The request's clock times and dates, as the request writes them (`at 10 pm`,
    /// `on june 3rd`), at the free-text sites whose catalogs list such values: a catalog
    /// of times lists the times it has seen, and a time it lacks is still a time. A
    /// number inside the time's words read as a value of that site (`10` as `ten`) gives
    /// way to the whole time, at every site.
    ///
    /// Only times and dates written out are: a date with a month or a number (`march
    /// 13th`), a time with a number (`one am`, `10:30`). Words that name a day or a time
    /// by themselves (`today`, `monday`, `noon`) are values a catalog lists as they are,
    /// and a reading of them at every such site asked for calls the request did not make.
    fn moments_as_written(&self, mentions: &mut Vec<Mention>) {
        let (times, dates) = &self.moment_valued;
        if times.is_empty() && dates.is_empty() {
            return;
        }
        let mut added: Vec<Mention> = Vec::new();
        for m in mentions.iter() {
            let sites = match m.site.as_str() {
                crate::TIME_SITE => times,
                crate::DATE_SITE => dates,
                _ => continue,
            };
            if m.value.as_str().is_some_and(|v| v.starts_with("today=")) || !absolute(m) {
                continue;
            }
            for site in sites {
                let covered = mentions.iter().any(|o| {
                    o.site == *site
                        && o.tier != Tier::Number
                        && o.span.start < m.span.end
                        && m.span.start < o.span.end
                });
                if !covered {
                    added.push(Mention {
                        span: m.span.clone(),
                        text: m.text.clone(),
                        site: site.clone(),
                        value: Value::String(m.text.trim().to_owned()),
                        tier: Tier::Date,
                        score: 1.0,
                    });
                }
            }
        }
        if added.is_empty() {
            return;
        }
        // A number read inside a time's words (`10` of `10 pm` as `ten`) is that time's.
        mentions.retain(|o| {
            !(o.tier == Tier::Number
                && !o.site.starts_with('#')
                && added
                    .iter()
                    .any(|a| a.span.start <= o.span.start && o.span.end <= a.span.end))
        });
        mentions.extend(added);
        mentions.sort_by_key(|m| (m.span.start, m.span.end));
    }

    fn is_bound(&self, s: &Site) -> bool {
        matches!(s.kind, SiteKind::Choice { .. } | SiteKind::Tag { .. })
            || self.bound.contains(&s.path)
    }
}

/// Whether a date or time mention is written out: with a digit, a month's name, or (a
/// time) more than one word (`one am`).
fn absolute(m: &Mention) -> bool {
    let words: Vec<String> = m
        .text
        .split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .map(str::to_lowercase)
        .collect();
    m.text.chars().any(|c| c.is_ascii_digit())
        || (m.site == crate::DATE_SITE && words.iter().any(|w| crate::dates::month(w).is_some()))
        || (m.site == crate::TIME_SITE && words.len() > 1)
}

/// The free-text sites whose catalog entries (`entries`, the values a catalog binds) hold
/// at least two clock times, and those that hold at least two dates, each value read whole
/// (`six pm`, `10:30`; `march 3rd 2024`).
fn moment_valued_sites(sites: &[Site], entries: &[Entry]) -> (BTreeSet<String>, BTreeSet<String>) {
    let text_sites: BTreeSet<&str> = sites
        .iter()
        .filter(|s| matches!(s.kind, SiteKind::Text { .. }))
        .map(|s| s.path.as_str())
        .collect();
    let mut counts: BTreeMap<&str, (usize, usize)> = BTreeMap::new();
    for e in entries {
        let Value::String(text) = &e.value else {
            continue;
        };
        if !text_sites.contains(e.site.as_str()) {
            continue;
        }
        let n = Normalized::new(text);
        let all = n.tokens.len();
        if all == 0 {
            continue;
        }
        let nums = crate::numbers::find_numbers(text, &n);
        let time = crate::dates::find_times(text, &n, &nums)
            .iter()
            .any(|t| t.tok_a == 0 && t.tok_b == all);
        let date = crate::dates::find_dates(text, &n, &nums)
            .iter()
            .any(|d| d.tok_a == 0 && d.tok_b == all);
        let c = counts.entry(e.site.as_str()).or_default();
        c.0 += usize::from(time);
        c.1 += usize::from(date);
    }
    let with = |pick: fn(&(usize, usize)) -> usize| {
        counts
            .iter()
            .filter(|(_, c)| pick(c) >= 2)
            .map(|(s, _)| s.to_string())
            .collect()
    };
    (with(|c| c.0), with(|c| c.1))
}

/// Words flag names share, which say nothing of what the flag is about (`include_archived`,
/// `has_balcony`, `pets_allowed`, `showHiddenFiles`).
const FLAG_WORDS: &[&str] = &[
    "include", "includes", "is", "has", "have", "enable", "enabled", "use", "show", "with",
    "allow", "allowed", "should", "get", "filter", "want", "needs", "need", "flag",
];

/// How many words before a flag's words a negation may stand.
const NEGATION_REACH: usize = 6;

/// Whether a word negates what follows it (`not`, `no`, `without`, `exclude`, `don't`,
/// `disable`).
fn is_negation(word: &str) -> bool {
    let w = word.to_lowercase().replace('\u{2019}', "'");
    w.ends_with("n't") || NEGATIONS.contains(&w.as_str())
}

/// Words that negate a flag named after them.
const NEGATIONS: &[&str] = &[
    "not",
    "no",
    "never",
    "without",
    "exclude",
    "excluding",
    "except",
    "nor",
    "dont",
    "cannot",
    "none",
    "disable",
    "disabled",
    "disabling",
    "deactivate",
    "skip",
    "omit",
];

/// A word of the request for [`SpecIndex::named_flags`].
struct RawWord {
    /// The word (letters, digits and apostrophes).
    text: String,
    /// Its byte range.
    at: Range<usize>,
    /// Whether punctuation or `but` ends a clause right after it.
    ends_clause: bool,
}

/// The request's words split at anything but letters, digits and apostrophes (`in-unit`
/// is two words, `don't` one).
fn raw_words(request: &str) -> Vec<RawWord> {
    let mut out: Vec<RawWord> = Vec::new();
    let mut start = None;
    let is_word = |c: char| c.is_alphanumeric() || c == '\'' || c == '\u{2019}';
    for (i, c) in request
        .char_indices()
        .chain(std::iter::once((request.len(), ' ')))
    {
        match (start, is_word(c)) {
            (None, true) => start = Some(i),
            (Some(s), false) => {
                let text = request[s..i].trim_matches(['\'', '\u{2019}']).to_owned();
                if !text.is_empty() {
                    out.push(RawWord {
                        ends_clause: text.eq_ignore_ascii_case("but"),
                        text,
                        at: s..i,
                    });
                }
                start = None;
            }
            _ => {}
        }
        if matches!(c, ',' | '.' | ';' | ':' | '?' | '!') {
            if let Some(last) = out.last_mut() {
                last.ends_clause = true;
            }
        }
    }
    // `but` ends the clause before it: the flag after it is in a new one.
    for k in 1..out.len() {
        if out[k].text.eq_ignore_ascii_case("but") {
            out[k - 1].ends_clause = true;
        }
    }
    out
}

/// A word lowercased without an inflection (`-s`, `-es`, `-ies`, `-ing`, `-ed`), for comparing a
/// flag's name with the request's words (`sorted`, `sort`; `parking`, `park`).
fn flag_stem(word: &str) -> String {
    let w = word.to_lowercase();
    if let Some(stem) = w.strip_suffix("ies").filter(|s| s.chars().count() >= 3) {
        return format!("{stem}y");
    }
    for suffix in ["ing", "ed", "es", "s", "e"] {
        if let Some(stem) = w.strip_suffix(suffix) {
            if stem.chars().count() >= 3 {
                return stem.to_owned();
            }
        }
    }
    w
}

/// The keys a name (a path segment: `uber.ride`, `get_user_info`, `maxResults`) gives
/// [`SpecIndex::schema_names`]: the name lowercased without its separators, and each of
/// its words of two letters or more (split at non-alphanumerics and lower-to-upper case
/// changes).
fn name_keys(name: &str) -> Vec<String> {
    let mut keys = vec![name
        .chars()
        .filter(|c| c.is_alphanumeric())
        .flat_map(char::to_lowercase)
        .collect::<String>()];
    let mut cur = String::new();
    let mut prev_lower = false;
    for c in name.chars().chain(std::iter::once(' ')) {
        if !c.is_alphanumeric() || (c.is_uppercase() && prev_lower) {
            if cur.chars().count() >= 2 && !keys.contains(&cur) {
                keys.push(cur.clone());
            }
            cur.clear();
        }
        if c.is_alphanumeric() {
            cur.extend(c.to_lowercase());
        }
        prev_lower = c.is_lowercase();
    }
    keys
}

/// Days since 1970-01-01 of a proleptic Gregorian date (H. Hinnant's `days_from_civil`).
fn days_from_civil((y, m, d): (u32, u32, u32)) -> i64 {
    let y = i64::from(y) - i64::from(m <= 2);
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let m = i64::from(m);
    let doy = (153 * (if m > 2 { m - 3 } else { m + 9 }) + 2) / 5 + i64::from(d) - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

/// The date `days` after `date` (before, where negative).
fn add_days(date: (u32, u32, u32), days: i64) -> (u32, u32, u32) {
    let z = days_from_civil(date) + days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    (y as u32, m as u32, d as u32)
}

/// The weekday of a date, 1 = Monday … 7 = Sunday.
fn weekday_of(date: (u32, u32, u32)) -> i64 {
    // 1970-01-01 was a Thursday.
    (days_from_civil(date) + 3).rem_euclid(7) + 1
}

/// A mention's readings as (site, value) pairs.
fn pairs_of(group: &[&Mention]) -> Vec<(String, Value)> {
    group
        .iter()
        .map(|m| (m.site.clone(), m.value.clone()))
        .collect()
}

/// Gives the `k`-th mention (of `all`, every mention's readings in request order) a record
/// reading of each of `records` ([`Restriction::record_reading`]): in its group of
/// [`Restriction::readings`], found as the group whose value readings are its readings (the
/// `n`-th such group for the `n`-th mention with those readings), or made for it.
fn add_record_readings_to<'a>(
    r: &mut Restriction,
    all: &[Vec<(String, Value)>],
    k: usize,
    records: impl IntoIterator<Item = &'a String>,
) {
    let pairs = &all[k];
    let nth = all[..k].iter().filter(|p| *p == pairs).count();
    let at = r
        .readings
        .iter()
        .enumerate()
        .filter(|(_, g)| g.iter().filter(|(_, v)| !v.is_null()).eq(pairs.iter()))
        .nth(nth)
        .map(|(i, _)| i);
    let i = at.unwrap_or_else(|| {
        r.readings.push(pairs.clone());
        r.readings.len() - 1
    });
    let g = &mut r.readings[i];
    for rec in records {
        if !g.iter().any(|(s, v)| s == rec && v.is_null()) {
            g.push(Restriction::record_reading(rec));
        }
    }
}

/// The (site, value) pairs a document writes.
type Used = Vec<(String, Value)>;

/// The last segment of a site path (its field name).
fn field_of(site: &str) -> String {
    site.rsplit('/').next().unwrap_or(site).to_string()
}

/// The singular of the word of a normalised request that ends last at or before byte `at`
/// of the request.
fn word_before(words: &Normalized, at: usize) -> Option<String> {
    let t = words
        .tokens
        .iter()
        .take_while(|t| t.orig_end <= at)
        .last()?;
    let mut w = String::new();
    stem_into(&words.text[t.start..t.end], &mut w);
    Some(w)
}

/// Aliases join the entries of their value: at their site, or at every site for `*`.
fn attach_aliases(entries: &mut Vec<Entry>, aliases: &[Entry]) {
    for a in aliases {
        let mut attached = false;
        for e in entries.iter_mut() {
            if (a.site == "*" || path_matches(&a.site, &e.site)) && e.value == a.value {
                e.aliases.extend(a.aliases.iter().cloned());
                attached = true;
            }
        }
        if !attached && a.site != "*" && !a.site.is_empty() {
            entries.push(a.clone());
        }
    }
}

/// The candidates per site of an extraction (numbers and dates are not site values).
pub fn restriction_of(extraction: &Extraction, bound: &BTreeSet<String>) -> Restriction {
    let mut r = Restriction {
        bound: bound.clone(),
        ..Restriction::default()
    };
    for m in &extraction.mentions {
        if !m.site.starts_with('#') {
            r.candidates
                .entry(m.site.clone())
                .or_default()
                .push(m.value.clone());
        }
    }
    r.readings = mention_groups(&extraction.mentions)
        .into_iter()
        .filter(|g| g.len() > 1)
        .map(|g| {
            g.iter()
                .map(|m| (m.site.clone(), m.value.clone()))
                .collect()
        })
        .collect();
    r
}

/// The last part of a choice written as a path of names (`Europe/London`,
/// `America/New_York`, `sports/tennis`): it names the choice by itself ("London time",
/// "New York"), with `_` read as a space. `None` for a value that is no such path (a
/// part of fewer than three letters, a URL, digits).
fn leaf_name(v: &str) -> Option<String> {
    let (head, leaf) = v.rsplit_once('/')?;
    let name = |p: &str| {
        p.chars().filter(|c| c.is_alphabetic()).count() >= 3
            && p.chars()
                .all(|c| c.is_alphabetic() || matches!(c, '_' | '-' | ' '))
    };
    (!head.is_empty() && head.split('/').all(name) && name(leaf)).then(|| leaf.replace('_', " "))
}

/// The word a choice abbreviates, where it is one of the abbreviations that name choices
/// in code (`DESC`, `asc`, `max`, `avg`, `temp`): "in descending order" names `DESC`.
/// Only whole values, in any case; a value that is a word itself (`min` beside
/// `minutes`) is named by its own text anyway.
fn abbreviated_word(v: &str) -> Option<&'static str> {
    const WORDS: &[(&str, &str)] = &[
        ("asc", "ascending"),
        ("desc", "descending"),
        ("min", "minimum"),
        ("max", "maximum"),
        ("avg", "average"),
        ("med", "medium"),
        ("temp", "temperature"),
        ("info", "information"),
        ("config", "configuration"),
        ("auth", "authentication"),
        ("dev", "development"),
        ("prod", "production"),
        ("env", "environment"),
        ("img", "image"),
        ("msg", "message"),
        ("qty", "quantity"),
        ("pct", "percent"),
        ("approx", "approximate"),
        ("incl", "including"),
        ("excl", "excluding"),
    ];
    let lower = v.to_ascii_lowercase();
    WORDS.iter().find(|(a, _)| *a == lower).map(|(_, w)| *w)
}

/// The English name of each of `values` that is a language tag (`es`, `es-ES`, `zh_CN`:
/// an ISO 639-1 code, then a region), where two or more are: "in Spanish" names `es-ES`.
/// A single two-letter value is no list of languages.
fn language_names(values: &[Value]) -> Vec<Option<String>> {
    let name = |v: &Value| -> Option<String> {
        let s = v.as_str()?;
        let (lang, region) = match s.split_once(['-', '_']) {
            Some((l, r)) => (l, Some(r)),
            None => (s, None),
        };
        let tag = lang.len() == 2
            && lang.bytes().all(|b| b.is_ascii_lowercase())
            && region.is_none_or(|r| r.len() == 2 && r.bytes().all(|b| b.is_ascii_alphabetic()));
        if !tag {
            return None;
        }
        let full = isolang::Language::from_639_1(lang)?.to_name();
        let name = full.split([';', '(']).next().unwrap_or(full).trim();
        (!name.is_empty()).then(|| name.to_string())
    };
    let names: Vec<Option<String>> = values.iter().map(name).collect();
    if names.iter().flatten().count() < 2 {
        return vec![None; values.len()];
    }
    names
}

/// The mentions at sites (not numbers or dates alone) grouped by overlapping spans, in
/// request order: readings whose spans overlap are one mention (`four` as a rating and as a
/// party size; `suribachi` inside `shadow of suribachi`), and writing one reading uses it.
fn mention_groups(mentions: &[Mention]) -> Vec<Vec<&Mention>> {
    let mut at_sites: Vec<&Mention> = mentions
        .iter()
        .filter(|m| !m.site.starts_with('#'))
        .collect();
    at_sites.sort_by_key(|m| (m.span.start, m.span.end));
    let mut groups: Vec<Vec<&Mention>> = Vec::new();
    let mut end = 0;
    for m in at_sites {
        match groups.last_mut() {
            Some(g) if m.span.start < end => {
                g.push(m);
                end = end.max(m.span.end);
            }
            _ => {
                groups.push(vec![m]);
                end = m.span.end;
            }
        }
    }
    groups
}

/// Words that may stand between a modifier and the value it modifies (`large` *order of*
/// `fries`, `four` *for the* ...): articles, a few prepositions, `order(s)`, `please`.
const FILLER: &[&str] = &[
    "a", "an", "the", "of", "for", "with", "in", "on", "at", "to", "some", "order", "orders",
    "please",
];

/// One group of overlapping readings (one mention, see [`mention_groups`]) placed among the
/// request's words, for [`attach_modifiers`] and [`add_neighbour_readings`].
struct Spread {
    /// Its first word.
    first: usize,
    /// The word after its last.
    end: usize,
    /// The records its readings lie in.
    records: BTreeSet<String>,
    /// The spans of its readings.
    spans: Vec<Range<usize>>,
    /// Its readings as (site, value).
    pairs: Vec<(String, Value)>,
}

/// The record a site lies in: its path without the last segment.
fn record_of(site: &str) -> String {
    site.rfind('/')
        .map_or(String::new(), |i| site[..i].to_string())
}

/// The mentions' groups of overlapping readings, placed among `words` (the request's).
fn spreads(mentions: &[Mention], words: &Normalized) -> Vec<Spread> {
    let word_at = |pos: usize| words.words_before(pos);
    mention_groups(mentions)
        .iter()
        .map(|g| {
            let start = g.iter().map(|m| m.span.start).min().unwrap_or(0);
            let end = g.iter().map(|m| m.span.end).max().unwrap_or(0);
            Spread {
                first: word_at(start),
                end: word_at(end),
                records: g.iter().map(|m| record_of(&m.site)).collect(),
                spans: g.iter().map(|m| m.span.clone()).collect(),
                pairs: pairs_of(g),
            }
        })
        .collect()
}

/// A value that no record of the value right next to it could take is a word of that
/// record's phrase (`theme songs`: `theme` a genre to play, `songs` a creative work's type;
/// `the nearby film times`; `the last record by soko`): when that neighbour lies in
/// one record, the mention gets that record as a reading ([`Restriction::readings`]), so
/// writing the record uses it and it opens no record of its own (a small model wrote
/// `SearchCreativeWork object_type song` after `PlayMusic genre theme`). Only a word
/// directly next to it counts, with no punctuation between (`a cheeseburger with fries` is
/// two orders).
fn add_neighbour_readings(r: &mut Restriction, mentions: &[Mention], request: &str) {
    let words = Normalized::new(request);
    let spread = spreads(mentions, &words);
    let joined = |a: usize, b: usize| {
        // Words a-1 and a are next to each other with nothing but a space between.
        a > 0
            && b == a
            && request
                .get(words.tokens[a - 1].orig_end..words.tokens[a].orig_start)
                .is_some_and(|gap| gap.chars().all(char::is_whitespace))
    };
    let all: Vec<Vec<(String, Value)>> = spread.iter().map(|g| g.pairs.clone()).collect();
    for (
        k,
        Spread {
            first,
            end,
            records,
            ..
        },
    ) in spread.iter().enumerate()
    {
        let next_to: Vec<&BTreeSet<String>> = spread
            .iter()
            .filter(|n| joined(*first, n.end) || joined(n.first, *end))
            .map(|n| &n.records)
            .collect();
        // A neighbour its own records could take too: the value is in a phrase of its own
        // (`onion large fries`: `large` goes with the fries, not the onion).
        if next_to.iter().any(|recs| !recs.is_disjoint(records)) {
            continue;
        }
        // A record that holds the value's own records, or that they hold (the document's
        // root and its fields' items, for `sales vs profit` where `vs` names the chart),
        // is no other record's phrase: writing the chart would use the columns.
        let within = |inner: &str, outer: &str| {
            inner.starts_with(outer)
                && (inner.len() == outer.len() || inner.as_bytes().get(outer.len()) == Some(&b'/'))
        };
        let holds_own = |rec: &String| {
            records
                .iter()
                .any(|own| within(own, rec) || within(rec, own))
        };
        let named: BTreeSet<&String> = next_to
            .iter()
            .filter(|recs| recs.len() == 1)
            .filter_map(|recs| recs.iter().next())
            .filter(|rec| !holds_own(rec))
            .collect();
        if !named.is_empty() {
            add_record_readings_to(r, &all, k, named);
        }
    }
}

/// The (modifier, head) pairs of the anchors `attach_modifiers` found, as site values
/// ([`Restriction::ties`]).
fn ties(
    mentions: &[Mention],
    anchors: &[(Range<usize>, Range<usize>)],
) -> Vec<((String, Value), (String, Value))> {
    let pair = |m: &Mention| (m.site.clone(), m.value.clone());
    let at_sites = || mentions.iter().filter(|m| !m.site.starts_with('#'));
    let mut out = Vec::new();
    for (modifier, head) in anchors {
        for m in at_sites().filter(|m| m.span == *modifier) {
            for h in at_sites().filter(|h| head.start <= h.span.start && h.span.end <= head.end) {
                let tie = (pair(m), pair(h));
                if !out.contains(&tie) {
                    out.push(tie);
                }
            }
        }
    }
    out
}

/// The readings of values named in one clause (no punctuation or `BREAKS` word between)
/// that lie at two different fields of one record, both ways (see
/// [`Restriction::together`]).
fn together(mentions: &[Mention], request: &str) -> Vec<((String, Value), (String, Value))> {
    clause_pairs(
        mentions,
        request,
        |_, _| true,
        |(sa, _), (sb, _)| sa != sb && record_of(sa) == record_of(sb) && !record_of(sa).is_empty(),
    )
}

/// Text values named in one clause of the request at the same site, by different words,
/// as pairs both ways ([`Restriction::alternatives`]): "from pizza to a burger" names
/// one dish, where "a pizza, and a burger" names two.
fn alternatives(mentions: &[Mention], request: &str) -> Vec<((String, Value), (String, Value))> {
    clause_pairs(
        mentions,
        request,
        |ga, gb| {
            // A number between them starts another item's words (`a large lemonade a
            // small root beer`: two drinks, said without a comma).
            let from = ga.spans.iter().map(|r| r.end).max().unwrap_or(0);
            let to = gb.spans.iter().map(|r| r.start).min().unwrap_or(0);
            let (from, to) = (from.min(to), from.max(to));
            !mentions
                .iter()
                .any(|m| m.value.is_number() && from <= m.span.start && m.span.end <= to)
        },
        |(sa, va), (sb, vb)| sa == sb && va != vb && va.is_string() && vb.is_string(),
    )
}

/// The readings of mentions named in one clause of the request (no comma, `and` or
/// `then` between), as (site, value) pairs both ways: of two mention groups that `near`
/// admits, each pair of their readings that `pairs` admits.
fn clause_pairs(
    mentions: &[Mention],
    request: &str,
    near: impl Fn(&Spread, &Spread) -> bool,
    pairs: impl Fn(&(String, Value), &(String, Value)) -> bool,
) -> Vec<((String, Value), (String, Value))> {
    let words = Normalized::new(request);
    let clause = words.clauses(request);
    let groups = spreads(mentions, &words);
    let mut out = Vec::new();
    for (a, ga) in groups.iter().enumerate() {
        for gb in groups.iter().skip(a + 1) {
            let (Some(&ca), Some(&cb)) = (clause.get(ga.first), clause.get(gb.first)) else {
                continue;
            };
            if ca != cb || !near(ga, gb) {
                continue;
            }
            for x in &ga.pairs {
                for y in &gb.pairs {
                    if pairs(x, y) {
                        for pair in [(y.clone(), x.clone()), (x.clone(), y.clone())] {
                            if !out.contains(&pair) {
                                out.push(pair);
                            }
                        }
                    }
                }
            }
        }
    }
    out
}

/// Whether a site holds a count: a number (free, or a choice among numbers only).
fn is_count(site: &Site) -> bool {
    match &site.kind {
        SiteKind::Number { .. } => true,
        SiteKind::Choice { values } => !values.is_empty() && values.iter().all(Value::is_number),
        SiteKind::Tag { .. } | SiteKind::Text { .. } => false,
    }
}

/// Each object of `v` (its JSON pointer) with the scalars at its fields, directly or in
/// arrays of scalars.
fn record_leaves(v: &Value, at: String, out: &mut Vec<(String, Vec<Value>)>) {
    match v {
        Value::Object(map) => {
            let mut leaves = Vec::new();
            for (k, x) in map {
                let here = format!("{at}/{}", k.replace('~', "~0").replace('/', "~1"));
                match x {
                    Value::Array(xs) if xs.iter().all(|x| !x.is_object() && !x.is_array()) => {
                        leaves.extend(xs.iter().cloned());
                    }
                    Value::Object(_) | Value::Array(_) => record_leaves(x, here, out),
                    _ => leaves.push(x.clone()),
                }
            }
            out.push((at, leaves));
        }
        Value::Array(xs) => {
            for (i, x) in xs.iter().enumerate() {
                record_leaves(x, format!("{at}/{i}"), out);
            }
        }
        _ => {}
    }
}

/// The (span, site) of each reading that its clause partners rule out ([`Analysis::unfit`]):
/// a value named in one clause (no punctuation or `BREAKS` word between) with others — the
/// clause's other values, and the cues that tell a call ([`TagCues::tells`]) — keeps only
/// its readings in the records that take the most of them (at fields other than its own),
/// where some record takes one. "count the delta flights that use a j31" asks for one call
/// that takes both the airline and the aircraft; a small model wrote the airline in a call
/// that has no aircraft, and the aircraft as a call of its own. "on which **day** is there
/// a flight from san jose to portland": any flight-like call takes both cities,
/// `atis_day_name` takes the cue too.
fn unpartnered(
    mentions: &[Mention],
    cued: &[(Range<usize>, String)],
    (heads, headed): (&BTreeSet<&str>, &BTreeSet<String>),
    request: &str,
) -> BTreeSet<(usize, usize, String)> {
    let words = Normalized::new(request);
    let clause = words.clauses(request);
    let groups = spreads(mentions, &words);
    let word_at = |pos: usize| words.words_before(pos);
    // A call's name said in the clause, where it tells the call from the others
    // (`capacity`, `flight numbers`, `day`; not `flights`, nor `service` for
    // `ground_service` where `ground_fare` is as near), is a partner in its record.
    let cues: Vec<Spread> = cued
        .iter()
        .map(|(span, record)| Spread {
            first: word_at(span.start),
            end: word_at(span.end),
            records: BTreeSet::from([record.clone()]),
            spans: vec![span.clone()],
            // At no field of the record (an empty last segment), so a partner of every one.
            pairs: vec![(format!("{record}/"), Value::Null)],
        })
        .collect();
    let mut out = BTreeSet::new();
    for (a, g) in groups.iter().enumerate() {
        let Some(&c) = clause.get(g.first) else {
            continue;
        };
        // A modifier (a size, a count: a value at a field of records every instance of
        // which must write something, an order's items, other than a required field that
        // names what the record is) goes with the value it modifies (`attach_modifiers`),
        // not with whatever its clause names: "large onion rings with a large iced tea"
        // names two records in one clause.
        let modifier = g
            .pairs
            .iter()
            .all(|(s, _)| !heads.contains(s.as_str()) && headed.contains(&record_of(s)));
        if modifier {
            continue;
        }
        let partners: Vec<&Spread> = groups
            .iter()
            .enumerate()
            .filter(|&(b, _)| b != a)
            .map(|(_, o)| o)
            .chain(&cues)
            .filter(|o| clause.get(o.first) == Some(&c))
            .collect();
        // Per record of this value's readings, how many partners lie in it at another
        // field; the records with the most are kept.
        let mut taken: BTreeMap<String, usize> = BTreeMap::new();
        for (s, _) in &g.pairs {
            let r = record_of(s);
            if r.is_empty() {
                continue;
            }
            let n = partners
                .iter()
                .filter(|p| p.pairs.iter().any(|(ps, _)| ps != s && record_of(ps) == r))
                .count();
            let e = taken.entry(r).or_default();
            *e = (*e).max(n);
        }
        let most = taken.values().copied().max().unwrap_or(0);
        if most == 0 {
            continue;
        }
        let shared: BTreeSet<&String> = taken
            .iter()
            .filter(|&(_, &n)| n == most)
            .map(|(r, _)| r)
            .collect();
        for m in mentions {
            if g.spans.contains(&m.span) && !shared.contains(&record_of(&m.site)) {
                out.insert((m.span.start, m.span.end, m.site.clone()));
            }
        }
    }
    out
}

/// A modifier goes with the value next to it: a mention whose readings lie in several
/// records (`large` as a side's size and as a drink's) keeps only its readings in the record
/// of the value it modifies, when that value's readings all lie in one of those records.
/// That value is the first word after the modifier that is not a filler word (`large order
/// of fries`); when the modifier ends its phrase (nothing but fillers before a comma, `and`
/// or the end), the last such word before it (`one coke large please`). Where that word is no value
/// found (a noun extraction missed: `large sweet tea` where the catalog says `iced tea`), or
/// its value could go in several records, every reading stays (unless the word right before
/// the modifier is a value of one of its records: `my current book five`, where
/// `five` is a rating or a party size and `current` a rating's): guessing a farther value
/// gave the side's size to a drink. Without it a small model gave the drink of `large
/// fries plus a medium cola` the side's size.
fn attach_modifiers(
    mentions: &mut Vec<Mention>,
    request: &str,
    required: &dyn Fn(&str) -> bool,
) -> Vec<(Range<usize>, Range<usize>)> {
    let words = Normalized::new(request);
    let n = words.tokens.len();
    let word = |i: usize| &words.text[words.tokens[i].start..words.tokens[i].end];
    // Punctuation between two words ends a phrase too.
    let punct_before = |i: usize| {
        i > 0
            && request
                .get(words.tokens[i - 1].orig_end..words.tokens[i].orig_start)
                .is_some_and(|t| t.contains([',', ';', '.', '!', '?']))
    };
    let groups = spreads(mentions, &words);
    let group_at = |w: usize, first: bool| {
        groups
            .iter()
            .find(|g| if first { g.first == w } else { g.end == w + 1 })
    };
    let mut keep: Vec<(Vec<Range<usize>>, String)> = Vec::new();
    let mut anchors = Vec::new();
    for Spread {
        first,
        end,
        records,
        spans,
        pairs,
    } in &groups
    {
        // A modifier of a list's items (`extra onions`, `no mayo`): a value of an optional
        // field of the items goes with the item whose required field (`name`) it modifies.
        let item_modifier = records.len() == 1
            && records.iter().all(|r| r.ends_with("/*"))
            && pairs.iter().all(|(s, _)| !required(s));
        if records.len() < 2 && !item_modifier {
            continue;
        }
        // The head after the modifier: the first word that is no filler, in the phrase.
        // Other modifiers on the way are passed over (`three medium lemonades`: `medium`
        // could be a side's or a drink's, the lemonades decide).
        let mut head = None;
        let mut passed = None;
        let mut i = *end;
        while i < n && !punct_before(i) && !BREAKS.contains(&word(i)) {
            if !FILLER.contains(&word(i)) {
                match group_at(i, true) {
                    Some(g) if g.records.len() > 1 && g.end > i => {
                        passed = passed.or(Some(g));
                        i = g.end;
                        continue;
                    }
                    g => {
                        // A word that is no value after modifiers passed over: the first
                        // of those is what follows (it decides nothing, see below).
                        head = Some(g.or(passed));
                        break;
                    }
                }
            }
            i += 1;
        }
        if head.is_none() && passed.is_some() {
            head = Some(passed);
        }
        // The value after it could go in several records itself (`book five stars`: five
        // as a rating or as a party size): the value right before it, when that one lies in
        // one record (`the current book`).
        // Not for a number: a count goes with what follows it (`fries two medium
        // lemonades` is two lemonades).
        let counts = mentions
            .iter()
            .any(|m| spans.contains(&m.span) && m.value.is_number());
        let head = match head {
            Some(Some(after)) if after.records.len() > 1 && *first > 0 && !counts => {
                let before = (!punct_before(*first) && !BREAKS.contains(&word(*first - 1)))
                    .then(|| group_at(*first - 1, false))
                    .flatten()
                    .filter(|b| b.records.len() == 1);
                before.map_or(head, |b| Some(Some(b)))
            }
            _ => head,
        };
        let head = match head {
            Some(h) => h,
            // The phrase ends after the modifier: the head before it.
            None => {
                let mut found = None;
                let mut i = *first;
                while i > 0 && !punct_before(i) && !BREAKS.contains(&word(i - 1)) {
                    if !FILLER.contains(&word(i - 1)) {
                        found = group_at(i - 1, false);
                        break;
                    }
                    i -= 1;
                }
                found
            }
        };
        let Some(Spread {
            records: head_records,
            spans: head_spans,
            pairs: head_pairs,
            ..
        }) = head
        else {
            continue;
        };
        let other_field = || head_pairs.iter().any(|(h, _)| required(h));
        if let Some(rec) = head_records.iter().next() {
            if head_records.len() == 1 && records.contains(rec) && (!item_modifier || other_field())
            {
                keep.push((spans.clone(), rec.clone()));
                let start = head_spans.iter().map(|r| r.start).min().unwrap_or(0);
                let end = head_spans.iter().map(|r| r.end).max().unwrap_or(0);
                anchors.extend(spans.iter().map(|sp| (sp.clone(), start..end)));
            }
        }
    }
    mentions.retain(|m| {
        keep.iter()
            .find(|(spans, _)| spans.contains(&m.span))
            .is_none_or(|(_, rec)| record_of(&m.site) == *rec)
    });
    anchors.sort_by_key(|(sp, _)| (sp.start, sp.end));
    anchors.dedup();
    anchors
}

fn describe(sites: &[Site]) -> String {
    sites
        .iter()
        .map(|s| {
            let kind = match &s.kind {
                SiteKind::Choice { values } => format!("one of {} values", values.len()),
                SiteKind::Tag { values } => format!("union tag, {} variants", values.len()),
                SiteKind::Text { .. } => "free string".to_string(),
                SiteKind::Number { .. } => "number".to_string(),
            };
            format!("  {}  ({kind})", s.path)
        })
        .collect::<Vec<_>>()
        .join("\n")
}

#[cfg(test)]
#[path = "spec_tests.rs"]
mod tests;
