//! Entity extraction for grammar pruning.
//!
//! Grammar pruning (Grammar Pruning paper, §3) cuts a schema's grammar down to the values a
//! request names. This crate finds them: an [`EntityIndex`] is built once per spec and
//! catalogs from [`Entry`]s — a *site* (an opaque class id, such as an instance path
//! `/fields/*/fieldName` or a slot name), a *value* (a JSON string or number) and its surface
//! forms (the value's own text and its aliases) — and [`EntityIndex::extract`] returns the
//! [`Mention`]s of one request: where (`span`, a byte range of the request), which site and
//! value, and how it was found ([`Tier`]).
//!
//! Request and patterns are normalised alike (Unicode compatibility forms, case, diacritics,
//! `_`/`-`/camelCase as word breaks, punctuation), and matching is on whole words:
//! - exact and alias forms, and their simple English plurals/singulars ([`Tier::Stem`]), with
//!   one Aho-Corasick automaton: leftmost-longest within a site, overlapping across sites, so
//!   an ambiguous word keeps every reading (recall first: the model resolves it). Two
//!   exceptions: a reading strictly inside a longer exact or alias reading of another site is
//!   dropped (`six` in `six pm`, `york` in `new york`), and so is a stem reading inside an exact
//!   or alias one (`songs` found as "songs" is not also "song");
//! - typos ([`Tier::Fuzzy`]) on words and word n-grams no exact form covers, for values of 4+
//!   characters: trigram candidates confirmed by optimal-string-alignment distance ≤ 1 (4–7
//!   characters, not on the first letter) or ≤ 2 (8+);
//! - numbers as digits and words ([`Tier::Number`], site [`NUMBER_SITE`], and every value whose
//!   surface is that number) and dates ([`Tier::Date`], site [`DATE_SITE`]; see
//!   [`EntityIndex::extract`] for the forms);
//! - [`EntityIndex::nearest`]: for content words that matched nothing, the nearest values by
//!   trigram similarity, a few per word, when the caller asks.
//!
//! A value mentioned twice is reported twice. [`ExtractMode::Paper`] reproduces the paper's
//! own matcher (lowercased, word-boundary matching of the values, longest first, per site) so
//! that figures can be set beside its Table 2.
//!
//! ```
//! use dss_extract::{EntityIndex, Entry, Tier};
//! use serde_json::json;
//!
//! let index = EntityIndex::build([
//!     Entry::new("/fields/*/fieldName", json!("Order Date")),
//!     Entry::new("/fields/*/fieldName", json!("Sales")),
//!     Entry::new("/fields/*/aggregate", json!("sum")).with_aliases(["total"]),
//!     Entry::new("/fields/*/aggregate", json!("mean")).with_aliases(["average"]),
//! ])?;
//! let found = index.extract("total sale per orderDate, averge sales");
//! let pairs: Vec<(&str, &str, Tier)> = found
//!     .mentions
//!     .iter()
//!     .filter(|m| !m.site.starts_with('#'))
//!     .map(|m| (m.text.as_str(), m.value.as_str().unwrap_or(""), m.tier))
//!     .collect();
//! assert_eq!(
//!     pairs,
//!     [
//!         ("total", "sum", Tier::Alias),
//!         ("sale", "Sales", Tier::Stem),
//!         ("orderDate", "Order Date", Tier::Exact),
//!         ("averge", "mean", Tier::Fuzzy),
//!         ("sales", "Sales", Tier::Exact),
//!     ]
//! );
//! # Ok::<(), dss_extract::ExtractError>(())
//! ```
#![warn(missing_docs)]

mod cues;
mod dates;
mod files;
mod fuzzy;
mod normalize;
mod numbers;
pub mod perturb;
mod places;
pub mod spec;

use std::collections::{HashMap, HashSet};
use std::ops::Range;
use std::path::PathBuf;
use std::sync::Arc;

use aho_corasick::{AhoCorasick, MatchKind};
use serde::{Deserialize, Serialize};
use serde_json::Value;

pub use files::{catalog_entries, read_alias_tsv, read_alias_yaml, read_catalog};
pub use spec::{Analysis, Catalogs, PruneTier, SpecIndex, SpecIndexError};

use fuzzy::TrigramIndex;
use normalize::{normalize_pattern, stem_pattern, stemmed, Normalized};

/// The site of [`Tier::Number`] mentions that stand for the number itself (any number site).
pub const NUMBER_SITE: &str = "#number";
/// The site of [`Tier::Date`] mentions.
pub const DATE_SITE: &str = "#date";
/// The site of clock times, [`Tier::Date`] mentions whose value is `HH:MM:SS`.
pub const TIME_SITE: &str = "#time";

/// Errors of this crate: reading alias and catalog files, building an index.
#[derive(Debug, Clone, thiserror::Error)]
#[non_exhaustive]
pub enum ExtractError {
    /// A file could not be read.
    #[error("{}: {source}", path.display())]
    Io {
        /// The file.
        path: PathBuf,
        /// The I/O error.
        source: Arc<std::io::Error>,
    },
    /// A file is not UTF-8.
    #[error("{}:{line}: not UTF-8 text", path.display())]
    NotUtf8 {
        /// The file.
        path: PathBuf,
        /// The line of the first invalid byte (1-based).
        line: usize,
    },
    /// A line of a file is not in the expected form.
    #[error("{}:{line}: {message}", path.display())]
    File {
        /// The file.
        path: PathBuf,
        /// The line (1-based; 0 when unknown).
        line: usize,
        /// What was expected and found.
        message: String,
    },
    /// An entry's value is not a string, a number or a boolean.
    #[error(
        "entry {index} (site `{site}`): the value {value} is not a string, a number or a boolean"
    )]
    InvalidValue {
        /// The entry's position in the input.
        index: usize,
        /// Its site.
        site: String,
        /// The value.
        value: Value,
    },
}

/// A value that may be chosen at a site, with the phrases that name it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Entry {
    /// The site: an opaque class id (an instance path, a slot name, …).
    pub site: String,
    /// The value: a string or a number (a boolean is accepted too).
    pub value: Value,
    /// Phrases naming the value besides its own text.
    #[serde(default)]
    pub aliases: Vec<String>,
    /// The value is named by its aliases only, never by its own text: a code a
    /// description explains (`2` for an ironing service), whose digits in a request
    /// (`2 shirts`) name no service.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub aliases_only: bool,
}

impl Entry {
    /// An entry without aliases.
    pub fn new(site: &str, value: Value) -> Self {
        Entry {
            site: site.to_owned(),
            value,
            aliases: Vec::new(),
            aliases_only: false,
        }
    }

    /// The entry named by its aliases only ([`Entry::aliases_only`]).
    #[must_use]
    pub fn named_by_aliases_only(mut self) -> Self {
        self.aliases_only = true;
        self
    }

    /// The entry with `aliases` added.
    #[must_use]
    pub fn with_aliases<S: Into<String>>(mut self, aliases: impl IntoIterator<Item = S>) -> Self {
        self.aliases.extend(aliases.into_iter().map(Into::into));
        self
    }
}

/// How a mention was found.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Tier {
    /// The value's own text.
    Exact,
    /// One of its aliases.
    Alias,
    /// A plural or singular of its text or an alias.
    Stem,
    /// Its text or an alias with a typo.
    Fuzzy,
    /// A number (digits or words).
    Number,
    /// A date.
    Date,
    /// One of the values nearest to a word that matched nothing ([`EntityIndex::nearest`]).
    Nearest,
    /// Words of a union tag's name (`distance` for `atis_distance`): shown in the prompt,
    /// never pruning ([`Analysis::cues`]).
    Cue,
}

/// One value named in a request.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Mention {
    /// Byte range in the request.
    pub span: Range<usize>,
    /// The request's text at `span`.
    pub text: String,
    /// The site (or [`NUMBER_SITE`], [`DATE_SITE`]).
    pub site: String,
    /// The value.
    pub value: Value,
    /// How it was found.
    pub tier: Tier,
    /// Confidence in 0..=1: 1 for exact, alias, number and date; 0.9 for stems; `1 - d/len`
    /// for a typo at edit distance `d`; the trigram similarity for nearest values.
    pub score: f64,
}

/// The mentions of one request, by span start.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Extraction {
    /// The mentions.
    pub mentions: Vec<Mention>,
}

/// Which matcher [`EntityIndex::extract_with`] runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ExtractMode {
    /// All tiers: exact, alias, stem, fuzzy, number, date.
    #[default]
    Full,
    /// The paper's matcher: for each site, its values (their own text, no aliases) longest
    /// first, each found as a lowercased substring of the lowercased request between regex
    /// word boundaries (`\b`), every occurrence counted; the text a value matched is taken
    /// from the later (shorter) values of the same site. All mentions are [`Tier::Exact`].
    Paper,
}

#[derive(Debug, Clone)]
struct ValueRec {
    site: u32,
    value: Value,
}

#[derive(Debug, Clone, Copy)]
struct Target {
    value: u32,
    alias: bool,
}

/// The entities of a spec and its catalogs, indexed for extraction.
#[derive(Debug)]
pub struct EntityIndex {
    sites: Vec<String>,
    values: Vec<ValueRec>,
    /// Normalised surface forms, their character counts and what they name.
    surfaces: Vec<Box<str>>,
    surface_chars: Vec<u32>,
    surface_targets: Vec<Vec<Target>>,
    /// Aho-Corasick over the stemmed surfaces (`" w1 w2 "`), pattern -> surfaces.
    automaton: Option<AhoCorasick>,
    pattern_surfaces: Vec<Vec<u32>>,
    /// Trigrams of the surfaces of 3 to 7 characters (typos: 1 edit) …
    trigrams: TrigramIndex,
    /// … and of 8+ characters (typos: 2 edits).
    trigrams_long: TrigramIndex,
    /// The function words that start, and that end, a surface of several words.
    edge_stopwords: (HashSet<String>, HashSet<String>),
    /// Longest surface (in words) in the trigram index, capped.
    max_fuzzy_words: usize,
    /// Number key -> values whose surface is that number.
    numeric: HashMap<String, Vec<u32>>,
    /// Paper mode: per site, (value, lowercased text) longest first.
    paper: Vec<Vec<(u32, String)>>,
}

fn value_text(v: &Value) -> Option<String> {
    match v {
        Value::String(s) => Some(s.clone()),
        Value::Number(n) => Some(n.to_string()),
        Value::Bool(b) => Some(b.to_string()),
        _ => None,
    }
}

/// English function words and common request verbs (`find`, `play`, `list`): no typo or
/// nearest-value query is made of them alone.
const STOPWORDS: &[&str] = &[
    "a", "about", "add", "all", "also", "am", "an", "and", "any", "are", "as", "at", "be", "been",
    "book", "but", "by", "can", "check", "could", "d", "did", "do", "does", "each", "else", "find",
    "for", "from", "get", "give", "go", "had", "has", "have", "he", "her", "here", "him", "his",
    "how", "i", "if", "in", "into", "is", "it", "its", "just", "let", "like", "list", "ll", "m",
    "make", "me", "more", "most", "my", "need", "no", "not", "now", "of", "on", "one", "only",
    "or", "other", "our", "out", "over", "per", "play", "please", "put", "rate", "s", "search",
    "set", "she", "show", "so", "some", "t", "tell", "than", "that", "the", "their", "them",
    "then", "there", "these", "they", "this", "those", "to", "turn", "up", "us", "ve", "want",
    "was", "we", "were", "what", "when", "where", "which", "while", "who", "whom", "why", "will",
    "with", "would", "you", "your",
];

fn is_stopword(w: &str) -> bool {
    STOPWORDS.binary_search(&w).is_ok()
}

/// Whether the words `a..b` are a modal verb before its subject (`can i`, `will you`): a
/// question's verb, not the value `can` (a container) or `will`. The words of a value are
/// read as the value everywhere else.
fn modal_verb(n: &Normalized, a: usize, b: usize) -> bool {
    const MODALS: [&str; 9] = [
        "can", "could", "may", "might", "must", "shall", "should", "will", "would",
    ];
    const SUBJECTS: [&str; 7] = ["he", "i", "she", "they", "u", "we", "you"];
    b == a + 1
        && b < n.tokens.len()
        && MODALS.contains(&n.words(a, b))
        && SUBJECTS.contains(&n.words(b, b + 1))
}

/// The typo budget of a surface of `chars` characters.
fn max_edits(chars: usize) -> usize {
    match chars {
        0..=3 => 0,
        4..=7 => 1,
        _ => 2,
    }
}

/// The optimal string alignment distance of `a` and `b` (`strsim::osa_distance`) when it is
/// at most `k`, else `k + 1`. Typo matching asks only whether a value is within 1 or 2
/// edits, and most candidates are not: rows stop as soon as every cell of one exceeds `k`
/// (a transposition reaches back two rows, but never below the row between, so the stop
/// is exact). ASCII strings under 64 bytes are compared without allocating; others by
/// strsim.
fn osa_within(a: &str, b: &str, k: usize) -> usize {
    const N: usize = 64;
    let (x, y) = (a.as_bytes(), b.as_bytes());
    if !(x.is_ascii() && y.is_ascii()) || x.len() >= N || y.len() >= N {
        return strsim::osa_distance(a, b).min(k + 1);
    }
    if x.len().abs_diff(y.len()) > k {
        return k + 1;
    }
    let m = y.len();
    let mut rows = [[0usize; N]; 3];
    for (j, cell) in rows[0].iter_mut().enumerate().take(m + 1) {
        *cell = j;
    }
    // Row i is rows[i % 3]: row i - 1 is rows[(i + 2) % 3], row i - 2 rows[(i + 1) % 3].
    for i in 1..=x.len() {
        let (cur, prev, prev2) = (i % 3, (i + 2) % 3, (i + 1) % 3);
        rows[cur][0] = i;
        let mut row_min = i;
        for j in 1..=m {
            let cost = usize::from(x[i - 1] != y[j - 1]);
            let mut v = (rows[prev][j] + 1)
                .min(rows[cur][j - 1] + 1)
                .min(rows[prev][j - 1] + cost);
            if i > 1 && j > 1 && x[i - 1] == y[j - 2] && x[i - 2] == y[j - 1] {
                v = v.min(rows[prev2][j - 2] + 1);
            }
            rows[cur][j] = v;
            row_min = row_min.min(v);
        }
        if row_min > k {
            return k + 1;
        }
    }
    rows[x.len() % 3][m].min(k + 1)
}

/// Whether the edits between a window and a value of as many words fall as typos do, word
/// by word: at most one in a word of up to 7 characters, two in a longer one. Two edits in
/// one short word make another word (`olives pie` is not `olive oil`: `pie` is no typo of
/// `oil`). Windows and values of different word counts (a space lost or added) are left to
/// the whole-window budget.
fn typos_by_word(query: &str, surface: &str) -> bool {
    let (q, s): (Vec<&str>, Vec<&str>) = (query.split(' ').collect(), surface.split(' ').collect());
    q.len() != s.len()
        || q.iter().zip(&s).all(|(a, b)| {
            let budget = max_edits(b.chars().count()).max(1);
            osa_within(a, b, budget) <= budget
        })
}

/// A candidate mention, in token coordinates.
#[derive(Debug, Clone, Copy)]
struct Cand {
    site: u32,
    value: u32,
    a: usize,
    b: usize,
    tier: Tier,
    score: f64,
}

/// Keeps, per site, the leftmost-longest spans (all values of a kept span), one candidate per
/// (site, value, span) with the best tier.
fn leftmost_longest(mut cands: Vec<Cand>) -> Vec<Cand> {
    cands.sort_by(|x, y| {
        (x.site, x.a, std::cmp::Reverse(x.b), x.value, x.tier).cmp(&(
            y.site,
            y.a,
            std::cmp::Reverse(y.b),
            y.value,
            y.tier,
        ))
    });
    let mut out: Vec<Cand> = Vec::with_capacity(cands.len());
    let mut site = u32::MAX;
    let (mut sel, mut end) = ((usize::MAX, usize::MAX), 0);
    for c in cands {
        if c.site != site {
            site = c.site;
            sel = (usize::MAX, usize::MAX);
            end = 0;
        }
        if (c.a, c.b) == sel {
            if out
                .last()
                .is_some_and(|l| l.site == c.site && l.value == c.value && (l.a, l.b) == (c.a, c.b))
            {
                continue; // same value, worse tier
            }
            out.push(c);
        } else if c.a >= end {
            sel = (c.a, c.b);
            end = c.b;
            out.push(c);
        }
    }
    out
}

impl EntityIndex {
    /// Builds the index. Entries with the same site and value are merged (their aliases
    /// joined); surfaces that normalise to nothing (punctuation only) are skipped.
    ///
    /// # Errors
    /// [`ExtractError::InvalidValue`] when a value is null, an array or an object.
    pub fn build(entries: impl IntoIterator<Item = Entry>) -> Result<Self, ExtractError> {
        let mut sites: Vec<String> = Vec::new();
        let mut site_ids: HashMap<String, u32> = HashMap::new();
        let mut values: Vec<ValueRec> = Vec::new();
        let mut value_ids: HashMap<(u32, String), u32> = HashMap::new();
        let mut surfaces: Vec<Box<str>> = Vec::new();
        let mut surface_ids: HashMap<String, u32> = HashMap::new();
        let mut surface_targets: Vec<Vec<Target>> = Vec::new();
        let mut numeric: HashMap<String, Vec<u32>> = HashMap::new();
        let mut paper: Vec<Vec<(u32, String)>> = Vec::new();

        for (index, e) in entries.into_iter().enumerate() {
            let Some(text) = value_text(&e.value) else {
                return Err(ExtractError::InvalidValue {
                    index,
                    site: e.site,
                    value: e.value,
                });
            };
            let site = match site_ids.get(&e.site) {
                Some(&s) => s,
                None => {
                    let s = sites.len() as u32;
                    site_ids.insert(e.site.clone(), s);
                    sites.push(e.site.clone());
                    paper.push(Vec::new());
                    s
                }
            };
            let key = (site, e.value.to_string());
            let value = match value_ids.get(&key) {
                Some(&v) => v,
                None => {
                    let v = values.len() as u32;
                    value_ids.insert(key, v);
                    values.push(ValueRec {
                        site,
                        value: e.value.clone(),
                    });
                    if !e.aliases_only {
                        paper[site as usize].push((v, text.to_lowercase()));
                        if let Some(n) = e.value.as_f64() {
                            numeric.entry(numbers::number_key(n)).or_default().push(v);
                        }
                    }
                    v
                }
            };
            let own = (!e.aliases_only).then_some((text.as_str(), false));
            let forms = own
                .into_iter()
                .chain(e.aliases.iter().map(|a| (a.as_str(), true)));
            for (raw, alias) in forms {
                if let Some(n) = numbers::parse_number_text(raw) {
                    let list = numeric.entry(numbers::number_key(n)).or_default();
                    if !list.contains(&value) {
                        list.push(value);
                    }
                }
                let norm = normalize_pattern(raw);
                if norm.is_empty() {
                    continue;
                }
                let sid = match surface_ids.get(&norm) {
                    Some(&s) => s,
                    None => {
                        let s = surfaces.len() as u32;
                        surfaces.push(norm.clone().into_boxed_str());
                        surface_ids.insert(norm, s);
                        surface_targets.push(Vec::new());
                        s
                    }
                };
                let targets = &mut surface_targets[sid as usize];
                match targets.iter_mut().find(|t| t.value == value) {
                    Some(t) => t.alias &= alias,
                    None => targets.push(Target { value, alias }),
                }
            }
        }
        // Paper mode: longest first, stable (Python's `sorted(key=-len)`).
        for list in &mut paper {
            list.sort_by_key(|(_, t)| std::cmp::Reverse(t.chars().count()));
        }

        let mut pattern_ids: HashMap<String, u32> = HashMap::new();
        let mut patterns: Vec<String> = Vec::new();
        let mut pattern_surfaces: Vec<Vec<u32>> = Vec::new();
        let mut trigrams = TrigramIndex::default();
        let mut trigrams_long = TrigramIndex::default();
        let mut edge_stopwords = (HashSet::new(), HashSet::new());
        let mut surface_chars = Vec::with_capacity(surfaces.len());
        let mut max_fuzzy_words = 1;
        let mut buf = Vec::new();
        for (sid, s) in surfaces.iter().enumerate() {
            let sid = sid as u32;
            let p = format!(" {} ", stem_pattern(s));
            match pattern_ids.get(&p) {
                Some(&pid) => pattern_surfaces[pid as usize].push(sid),
                None => {
                    pattern_ids.insert(p.clone(), patterns.len() as u32);
                    patterns.push(p);
                    pattern_surfaces.push(vec![sid]);
                }
            }
            let chars = s.chars().count();
            surface_chars.push(chars as u32);
            if chars >= 8 {
                trigrams_long.add(sid, s, &mut buf);
            } else if chars >= 3 {
                trigrams.add(sid, s, &mut buf);
            }
            if let (Some(first), Some(last)) = (s.split(' ').next(), s.split(' ').next_back()) {
                if s.contains(' ') && is_stopword(first) {
                    edge_stopwords.0.insert(first.to_owned());
                }
                if s.contains(' ') && is_stopword(last) {
                    edge_stopwords.1.insert(last.to_owned());
                }
            }
            if chars >= 4 {
                max_fuzzy_words = max_fuzzy_words.max(s.split(' ').count().min(6));
            }
        }
        let automaton = if patterns.is_empty() {
            None
        } else {
            // Patterns are plain strings: the builder cannot fail on them short of exhausting
            // its state ids, in which case exact matching is off rather than a panic.
            AhoCorasick::builder()
                .match_kind(MatchKind::Standard)
                .build(&patterns)
                .ok()
        };
        Ok(EntityIndex {
            sites,
            values,
            surfaces,
            surface_chars,
            surface_targets,
            automaton,
            pattern_surfaces,
            trigrams,
            trigrams_long,
            edge_stopwords,
            max_fuzzy_words,
            numeric,
            paper,
        })
    }

    /// The number of distinct (site, value) pairs.
    pub fn len(&self) -> usize {
        self.values.len()
    }

    /// Whether the index holds no value.
    pub fn is_empty(&self) -> bool {
        self.values.is_empty()
    }

    /// The sites, in the order they were first seen.
    pub fn sites(&self) -> &[String] {
        &self.sites
    }

    /// The mentions of `request` ([`ExtractMode::Full`]).
    ///
    /// Numbers: digits (`25`, `1,000`, `3.5`, `3rd`) and English words (`two`, `twenty five`,
    /// `one hundred and five`, `a dozen`, `fifth`); each gives a mention at [`NUMBER_SITE`]
    /// (a JSON number) and one for every value whose own text or alias is that number
    /// (`"four"`, `4`), unless the same value is already found there.
    ///
    /// Dates, at [`DATE_SITE`] with a string value: `2024-03-01` and `2024/3/1` ->
    /// `"2024-03-01"`; `2024-03` and `march 2024` -> `"2024-03"`; `march 3`, `3rd of march`
    /// -> `"--03-03"`, with a year -> `"2024-03-03"`; relative periods as signed ISO 8601
    /// durations: `last 2 years` -> `"-P2Y"`, `next week` -> `"+P1W"`, `past three quarters`
    /// -> `"-P9M"`, `2 days ago` -> `"-P2D"`, `this month` -> `"P0M"`, `today` / `yesterday` /
    /// `tomorrow` -> `"P0D"` / `"-P1D"` / `"+P1D"`; the date given as today, `today is Monday
    /// April 25th 2023` -> `"today=2023-04-25/1"`; a weekday named as the next one, `next
    /// Thursday` -> `"weekday=4"`. A month name alone is not a date.
    ///
    /// Clock times, at [`TIME_SITE`]: `14:00`, `4:30 pm`, `8pm`, `3 in the afternoon`, `noon`
    /// -> `"14:00:00"`, … (the numbers in them are numbers too).
    pub fn extract(&self, request: &str) -> Extraction {
        self.extract_with(request, ExtractMode::Full)
    }

    /// The mentions of `request` with the given matcher.
    pub fn extract_with(&self, request: &str, mode: ExtractMode) -> Extraction {
        match mode {
            ExtractMode::Full => self.extract_full(request),
            ExtractMode::Paper => self.extract_paper(request),
        }
    }

    fn mention(&self, request: &str, n: &Normalized, c: &Cand) -> Mention {
        let span = n.tokens[c.a].orig_start..n.tokens[c.b - 1].orig_end;
        let v = &self.values[c.value as usize];
        Mention {
            text: request[span.clone()].to_owned(),
            span,
            site: self.sites[v.site as usize].clone(),
            value: v.value.clone(),
            tier: c.tier,
            score: c.score,
        }
    }

    fn extract_full(&self, request: &str) -> Extraction {
        let n = Normalized::new(request);
        let ntok = n.tokens.len();
        let mut mentions = Vec::new();
        let mut covered = vec![false; ntok];

        // Exact, alias and stem forms.
        let mut cands = Vec::new();
        let (stext, ranges) = stemmed(&n);
        if let Some(ac) = &self.automaton {
            if let Ok(iter) = ac.try_find_overlapping_iter(stext.as_str()) {
                for m in iter {
                    let (ws, we) = (m.start() + 1, m.end() - 1);
                    let (Ok(a), Ok(b)) = (
                        ranges.binary_search_by_key(&ws, |r| r.0),
                        ranges.binary_search_by_key(&we, |r| r.1),
                    ) else {
                        continue;
                    };
                    let words = n.words(a, b + 1);
                    for &sid in &self.pattern_surfaces[m.pattern().as_usize()] {
                        let same = &*self.surfaces[sid as usize] == words;
                        for t in &self.surface_targets[sid as usize] {
                            let (tier, score) = match (same, t.alias) {
                                (true, false) => (Tier::Exact, 1.0),
                                (true, true) => (Tier::Alias, 1.0),
                                (false, _) => (Tier::Stem, 0.9),
                            };
                            let site = self.values[t.value as usize].site;
                            cands.push(Cand {
                                site,
                                value: t.value,
                                a,
                                b: b + 1,
                                tier,
                                score,
                            });
                        }
                    }
                }
            }
        }
        // Tiers: a stem reading inside the span of an exact or alias reading (of any site) is
        // dropped (`songs` found as the value "songs" is not also the value "song"), and so is
        // any reading strictly inside a longer exact or alias one (`six` in `six pm`).
        let exact = leftmost_longest(cands);
        let strong: Vec<(usize, usize)> = exact
            .iter()
            .filter(|c| c.tier != Tier::Stem)
            .map(|c| (c.a, c.b))
            .collect();
        let inside_strong = |a: usize, b: usize| strong.iter().any(|&(sa, sb)| sa <= a && b <= sb);
        let strictly_inside = |a: usize, b: usize| {
            strong
                .iter()
                .any(|&(sa, sb)| sa <= a && b <= sb && sb - sa > b - a)
        };
        let exact: Vec<Cand> = exact
            .into_iter()
            .filter(|c| {
                (c.tier != Tier::Stem || !inside_strong(c.a, c.b))
                    && !strictly_inside(c.a, c.b)
                    && !modal_verb(&n, c.a, c.b)
            })
            .collect();
        for c in &exact {
            covered[c.a..c.b].iter_mut().for_each(|x| *x = true);
        }

        // Numbers and dates.
        let nums = numbers::find_numbers(request, &n);
        let dates = dates::find_dates(request, &n, &nums);
        let mut extra = Vec::new();
        // A mention of tokens `a..b` at a number, date or time site; its tokens are covered.
        let mut whole = |a: usize, b: usize, site: &str, value: Value, tier: Tier| {
            covered[a..b].iter_mut().for_each(|x| *x = true);
            let span = n.tokens[a].orig_start..n.tokens[b - 1].orig_end;
            mentions.push(Mention {
                text: request[span.clone()].to_owned(),
                span,
                site: site.to_owned(),
                value,
                tier,
                score: 1.0,
            });
        };
        for d in &dates {
            whole(
                d.tok_a,
                d.tok_b,
                DATE_SITE,
                Value::String(d.value.clone()),
                Tier::Date,
            );
        }
        // Clock times, beside the numbers they are written with (`at 5 pm` is 17:00 where
        // a field takes a time, and 5 where a field takes a number).
        for t in dates::find_times(request, &n, &nums) {
            if dates.iter().any(|d| d.tok_a < t.tok_b && t.tok_a < d.tok_b) {
                continue;
            }
            whole(
                t.tok_a,
                t.tok_b,
                TIME_SITE,
                Value::String(t.value),
                Tier::Date,
            );
        }
        for s in &nums {
            if dates.iter().any(|d| d.tok_a < s.tok_b && s.tok_a < d.tok_b) {
                continue;
            }
            whole(
                s.tok_a,
                s.tok_b,
                NUMBER_SITE,
                numbers::number_value(s.value),
                Tier::Number,
            );
            if let Some(list) = self.numeric.get(&numbers::number_key(s.value)) {
                for &v in list {
                    // Only where no exact or alias reading holds the number: `5` found as the
                    // value "5" is not also the value "five".
                    let site = self.values[v as usize].site;
                    let dup = inside_strong(s.tok_a, s.tok_b)
                        || exact
                            .iter()
                            .any(|c| c.site == site && c.a < s.tok_b && s.tok_a < c.b);
                    if !dup {
                        extra.push(Cand {
                            site,
                            value: v,
                            a: s.tok_a,
                            b: s.tok_b,
                            tier: Tier::Number,
                            score: 1.0,
                        });
                    }
                }
            }
        }

        // Typos: word n-grams with at least one uncovered content word.
        let open: Vec<bool> = (0..ntok)
            .map(|t| !covered[t] && !is_stopword(n.words(t, t + 1)))
            .collect();
        let mut fuzzy = Vec::new();
        let (mut buf, mut ids, mut more) = (Vec::new(), Vec::new(), Vec::new());
        for a in 0..ntok {
            for b in a + 1..=(a + self.max_fuzzy_words).min(ntok) {
                if !open[a..b].iter().any(|&o| o) {
                    continue;
                }
                // A window of several words starts (ends) with a function word only if a value
                // does (`the beatles`, `in the neighbourhood`).
                if b - a > 1 {
                    let (first, last) = (n.words(a, a + 1), n.words(b - 1, b));
                    if (is_stopword(first) && !self.edge_stopwords.0.contains(first))
                        || (is_stopword(last) && !self.edge_stopwords.1.contains(last))
                    {
                        continue;
                    }
                }
                let q = n.words(a, b);
                // The window as written and with its words' plurals stemmed (`odeszas`).
                let qs = &stext[ranges[a].0..ranges[b - 1].1];
                let qlen = q.chars().count();
                if qlen < 4 {
                    continue;
                }
                ids.clear();
                let queries: &[&str] = if q == qs { &[q] } else { &[q, qs] };
                for &query in queries {
                    // Candidates must share at least 2 trigrams with the query: a query of 7
                    // characters reaches a surface of 8+ with one edit only.
                    let len = query.chars().count();
                    if len <= 8 {
                        self.trigrams.candidates(query, 1, 2, &mut buf, &mut more);
                        ids.extend_from_slice(&more);
                    }
                    if len >= 7 {
                        let k = if len >= 8 { 2 } else { 1 };
                        self.trigrams_long
                            .candidates(query, k, 2, &mut buf, &mut more);
                        ids.extend_from_slice(&more);
                    }
                }
                ids.sort_unstable();
                ids.dedup();
                let query_info: Vec<(&str, usize, Option<char>)> = queries
                    .iter()
                    .map(|q| (*q, q.chars().count(), q.chars().next()))
                    .collect();
                for &sid in &ids {
                    let plen = self.surface_chars[sid as usize] as usize;
                    let k = max_edits(plen);
                    let surface = &self.surfaces[sid as usize];
                    let first = surface.chars().next();
                    let d = query_info
                        .iter()
                        .filter(|(_, len, c)| {
                            // A single typo in a short value is not on its first letter (`find`
                            // is not `wind`).
                            len.abs_diff(plen) <= k && (k > 1 || *c == first)
                        })
                        .map(|(query, _, _)| (osa_within(query, surface, k), *query))
                        // Word by word only where it decides (a match within budget).
                        .filter(|&(d, query)| d == 0 || d > k || typos_by_word(query, surface))
                        .map(|(d, _)| d)
                        .min();
                    let Some(d) = d else { continue };
                    if d == 0 || d > k {
                        continue;
                    }
                    let score = 1.0 - d as f64 / plen as f64;
                    for t in &self.surface_targets[sid as usize] {
                        let site = self.values[t.value as usize].site;
                        fuzzy.push(Cand {
                            site,
                            value: t.value,
                            a,
                            b,
                            tier: Tier::Fuzzy,
                            score,
                        });
                    }
                }
            }
        }
        let fuzzy = leftmost_longest(fuzzy);

        mentions.extend(
            exact
                .iter()
                .chain(&extra)
                .chain(&fuzzy)
                .map(|c| self.mention(request, &n, c)),
        );
        mentions.sort_by(|x, y| {
            (x.span.start, x.span.end, x.tier, &x.site).cmp(&(
                y.span.start,
                y.span.end,
                y.tier,
                &y.site,
            ))
        });
        Extraction { mentions }
    }

    fn extract_paper(&self, request: &str) -> Extraction {
        // Lowercase char by char, keeping each lowercased byte's original char range.
        let mut lc = String::with_capacity(request.len());
        let mut orig: Vec<(usize, usize)> = Vec::with_capacity(request.len());
        for (i, c) in request.char_indices() {
            for l in c.to_lowercase() {
                let before = lc.len();
                lc.push(l);
                orig.extend(std::iter::repeat_n(
                    (i, i + c.len_utf8()),
                    lc.len() - before,
                ));
            }
        }
        let is_word = |c: char| c.is_alphanumeric() || c == '_';
        let mut mentions = Vec::new();
        for (site, list) in self.paper.iter().enumerate() {
            let mut consumed = vec![false; lc.len()];
            let mut found: Vec<(usize, usize, u32)> = Vec::new();
            for (value, needle) in list {
                if needle.is_empty() {
                    continue;
                }
                let first_word = needle.chars().next().is_some_and(is_word);
                let last_word = needle.chars().next_back().is_some_and(is_word);
                let mut pos = 0;
                let mut hits = Vec::new();
                while let Some(i) = lc[pos..].find(needle.as_str()) {
                    let s = pos + i;
                    let e = s + needle.len();
                    let prev_word = s > 0
                        && !consumed[s - 1]
                        && lc[..s].chars().next_back().is_some_and(is_word);
                    let next_word =
                        e < lc.len() && !consumed[e] && lc[e..].chars().next().is_some_and(is_word);
                    let free = !consumed[s..e].iter().any(|&x| x);
                    if free && prev_word != first_word && next_word != last_word {
                        hits.push((s, e));
                        pos = e;
                    } else {
                        pos = s + lc[s..].chars().next().map_or(1, char::len_utf8);
                    }
                }
                for &(s, e) in &hits {
                    consumed[s..e].iter_mut().for_each(|x| *x = true);
                    found.push((s, e, *value));
                }
            }
            for (s, e, value) in found {
                let span = orig[s].0..orig[e - 1].1;
                mentions.push(Mention {
                    text: request[span.clone()].to_owned(),
                    span,
                    site: self.sites[site].clone(),
                    value: self.values[value as usize].value.clone(),
                    tier: Tier::Exact,
                    score: 1.0,
                });
            }
        }
        mentions.sort_by(|x, y| {
            (x.span.start, x.span.end, &x.site).cmp(&(y.span.start, y.span.end, &y.site))
        });
        Extraction { mentions }
    }

    /// For each content word of `request` that no mention of `extraction` covers (not a
    /// function word, 3+ characters), the `k` values nearest to it by trigram similarity
    /// ([`Tier::Nearest`], score = Dice coefficient of the trigram sets; at most `k` per word,
    /// never the whole list). Very common trigrams (in more than 50,000 surfaces) are not
    /// read. A value named by several surfaces appears once per word, with its best score.
    pub fn nearest(&self, request: &str, extraction: &Extraction, k: usize) -> Vec<Mention> {
        let n = Normalized::new(request);
        let mut out = Vec::new();
        let mut buf = Vec::new();
        for t in &n.tokens {
            let w = &n.text[t.start..t.end];
            if w.chars().count() < 3 || is_stopword(w) || w.bytes().all(|b| b.is_ascii_digit()) {
                continue;
            }
            if extraction
                .mentions
                .iter()
                .any(|m| m.span.start < t.orig_end && t.orig_start < m.span.end)
            {
                continue;
            }
            let mut seen: Vec<u32> = Vec::new();
            // Ask for more surfaces than k: several may name one value.
            let want = k.saturating_mul(4).max(k);
            let mut near = self.trigrams.nearest(w, want, 50_000, &mut buf);
            near.extend(self.trigrams_long.nearest(w, want, 50_000, &mut buf));
            near.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
            for (sid, score) in near {
                for tg in &self.surface_targets[sid as usize] {
                    if seen.len() >= k || seen.contains(&tg.value) {
                        continue;
                    }
                    seen.push(tg.value);
                    let v = &self.values[tg.value as usize];
                    out.push(Mention {
                        span: t.orig_start..t.orig_end,
                        text: request[t.orig_start..t.orig_end].to_owned(),
                        site: self.sites[v.site as usize].clone(),
                        value: v.value.clone(),
                        tier: Tier::Nearest,
                        score,
                    });
                }
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn index(entries: &[(&str, Value, &[&str])]) -> EntityIndex {
        EntityIndex::build(
            entries
                .iter()
                .map(|(s, v, a)| Entry::new(s, v.clone()).with_aliases(a.iter().copied())),
        )
        .expect("index builds")
    }

    fn found(ix: &EntityIndex, req: &str) -> Vec<(String, String, Value, Tier)> {
        ix.extract(req)
            .mentions
            .into_iter()
            .map(|m| (m.text, m.site, m.value, m.tier))
            .collect()
    }

    #[test]
    fn stopwords_are_sorted() {
        assert!(STOPWORDS.windows(2).all(|w| w[0] < w[1]));
    }

    #[test]
    fn leftmost_longest_within_a_site_overlapping_across() {
        let ix = index(&[
            ("city", json!("new york"), &[]),
            ("city", json!("york"), &[]),
            ("state", json!("new york"), &[]),
            ("airline", json!("american"), &[]),
            ("airline", json!("american airlines"), &[]),
        ]);
        let f = found(&ix, "New York to York on American Airlines, new-york");
        let texts: Vec<(&str, &str)> = f
            .iter()
            .map(|(t, s, _, _)| (t.as_str(), s.as_str()))
            .collect();
        assert_eq!(
            texts,
            [
                ("New York", "city"),
                ("New York", "state"),
                ("York", "city"),
                ("American Airlines", "airline"),
                ("new-york", "city"),
                ("new-york", "state"),
            ]
        );
    }

    #[test]
    fn word_boundaries_aliases_and_ambiguity() {
        let ix = index(&[
            ("DRINK", json!("coca_cola"), &["coke"]),
            ("BEAN", json!("black_beans"), &["beans"]),
            ("BEAN", json!("pinto_beans"), &["beans"]),
            ("x", json!("art"), &[]),
        ]);
        let f = found(&ix, "a coke, party beans and Coca-Cola");
        assert_eq!(f.len(), 4, "{f:?}");
        assert_eq!(f[0].3, Tier::Alias);
        assert_eq!(
            (f[1].2.clone(), f[2].2.clone()),
            (json!("black_beans"), json!("pinto_beans"))
        );
        assert_eq!((f[3].0.as_str(), f[3].3), ("Coca-Cola", Tier::Exact));
    }

    #[test]
    fn stems_twice_and_typos() {
        let ix = index(&[
            ("f", json!("burger"), &[]),
            ("f", json!("french fries"), &[]),
            ("c", json!("seattle"), &[]),
        ]);
        let f = found(&ix, "two burgers, a burger and a french fry to seatle");
        let tiers: Vec<(&str, Tier)> = f
            .iter()
            .filter(|m| m.1 != NUMBER_SITE)
            .map(|m| (m.0.as_str(), m.3))
            .collect();
        assert_eq!(
            tiers,
            [
                ("burgers", Tier::Stem),
                ("burger", Tier::Exact),
                ("french fry", Tier::Stem),
                ("seatle", Tier::Fuzzy)
            ]
        );
        // Short values get no typo matching.
        let ix = index(&[("c", json!("la"), &[]), ("c", json!("rome"), &[])]);
        assert!(found(&ix, "lax and rom").is_empty());
        assert_eq!(found(&ix, "rime").len(), 1);
    }

    #[test]
    fn a_modal_verb_before_its_subject_is_no_value() {
        let ix = index(&[
            ("container", json!("can"), &["cans"]),
            ("d", json!("coke"), &[]),
        ]);
        let f = found(&ix, "can i get a coke in a can? could you make it two cans");
        let got: Vec<(&str, &Value)> = f
            .iter()
            .filter(|m| m.1 != NUMBER_SITE)
            .map(|m| (m.0.as_str(), &m.2))
            .collect();
        assert_eq!(
            got,
            [
                ("coke", &json!("coke")),
                ("can", &json!("can")),
                ("cans", &json!("can"))
            ]
        );
    }

    #[test]
    fn bounded_edit_distance_is_strsims_up_to_its_bound() {
        // Every pair of strings over a small alphabet up to 5 letters long, and a few
        // longer and non-ASCII ones, against strsim.
        let mut words: Vec<String> = vec![String::new()];
        for len in 1..=4 {
            let mut next = Vec::new();
            for w in words.iter().filter(|w| w.len() == len - 1) {
                for c in ['a', 'b', 'c'] {
                    next.push(format!("{w}{c}"));
                }
            }
            words.extend(next);
        }
        words.extend(
            [
                "seattle",
                "seatle",
                "las vegas",
                "las veas",
                "café",
                "cafe",
                "ab ba",
                "ba ab",
            ]
            .map(String::from),
        );
        words.push("x".repeat(70));
        words.push(format!("{}y", "x".repeat(69)));
        for a in &words {
            for b in &words {
                let d = strsim::osa_distance(a, b);
                for k in 0..=3 {
                    assert_eq!(osa_within(a, b, k), d.min(k + 1), "{a:?} {b:?} k={k}");
                }
            }
        }
    }

    #[test]
    fn typos_fall_word_by_word() {
        let ix = index(&[
            ("t", json!("olives"), &[]),
            ("t", json!("olive oil"), &[]),
            ("d", json!("iced tea"), &[]),
        ]);
        // Two edits in one short word make another word: `pie` is no typo of `oil`.
        let f = found(&ix, "a mushrooms and olives pie");
        let values: Vec<&Value> = f.iter().map(|m| &m.2).collect();
        assert_eq!(values, [&json!("olives")], "{f:?}");
        // One edit per word is a typo, in a short word too.
        for (request, value) in [("olivr oil", "olive oil"), ("an iced tee", "iced tea")] {
            let f = found(&ix, request);
            assert!(
                f.iter().any(|m| m.2 == json!(value) && m.3 == Tier::Fuzzy),
                "{request}: {f:?}"
            );
        }
    }

    #[test]
    fn numbers_match_numeric_values() {
        let ix = index(&[
            ("size", json!("four"), &[]),
            ("n", json!(12), &[]),
            ("n", json!("9"), &[]),
        ]);
        let f = found(&ix, "a party of 4, a dozen, nine");
        let got: Vec<(&str, &str, Tier)> = f
            .iter()
            .map(|m| (m.0.as_str(), m.1.as_str(), m.3))
            .collect();
        assert_eq!(
            got,
            [
                ("4", NUMBER_SITE, Tier::Number),
                ("4", "size", Tier::Number),
                ("a dozen", NUMBER_SITE, Tier::Number),
                ("a dozen", "n", Tier::Number),
                ("nine", NUMBER_SITE, Tier::Number),
                ("nine", "n", Tier::Number),
            ]
        );
        // Found exactly: no second, number-tier reading.
        let f = found(&ix, "four");
        assert_eq!(f.iter().filter(|m| m.1 == "size").count(), 1);
    }

    #[test]
    fn dates_are_mentions() {
        let ix = index(&[]);
        let f = found(&ix, "sales over the last 2 years since 2024-03-01");
        assert_eq!(f.len(), 2, "{f:?}");
        assert_eq!(
            (f[0].0.as_str(), f[0].2.clone()),
            ("last 2 years", json!("-P2Y"))
        );
        assert_eq!(
            (f[1].1.as_str(), f[1].2.clone()),
            (DATE_SITE, json!("2024-03-01"))
        );
    }

    #[test]
    fn paper_mode_is_the_papers_matcher() {
        let ix = index(&[
            ("airline", json!("american airlines"), &["aa"]),
            ("airline", json!("american"), &[]),
            ("code", json!("BA"), &[]),
            ("city", json!("st. louis"), &[]),
        ]);
        let f: Vec<(String, Value)> = ix
            .extract_with(
                "American Airlines to St. Louis on ba, american",
                ExtractMode::Paper,
            )
            .mentions
            .into_iter()
            .map(|m| (m.text, m.value))
            .collect();
        assert_eq!(
            f,
            [
                ("American Airlines".to_owned(), json!("american airlines")),
                ("St. Louis".to_owned(), json!("st. louis")),
                ("ba".to_owned(), json!("BA")),
                ("american".to_owned(), json!("american")),
            ]
        );
        // No stems, aliases or typos.
        assert!(ix
            .extract_with("aa americans", ExtractMode::Paper)
            .mentions
            .is_empty());
    }

    #[test]
    fn nearest_values_for_unmatched_words() {
        let ix = index(&[
            ("col", json!("Order Date"), &[]),
            ("col", json!("Ship Date"), &[]),
            ("col", json!("Profit"), &[]),
            ("col", json!("Quantity"), &[]),
            ("col", json!("Discount"), &[]),
        ]);
        let req = "show revenue by ordered";
        let ex = ix.extract(req);
        let near = ix.nearest(req, &ex, 3);
        assert!(near.len() <= 6);
        assert!(near.iter().all(|m| m.tier == Tier::Nearest));
        let ordered: Vec<&Value> = near
            .iter()
            .filter(|m| m.text == "ordered")
            .map(|m| &m.value)
            .collect();
        assert_eq!(ordered.first(), Some(&&json!("Order Date")));
        assert!(ix.nearest("", &Extraction::default(), 3).is_empty());
    }

    #[test]
    fn odd_input() {
        let ix = index(&[("a", json!("x y"), &[]), ("a", json!("!!!"), &[])]);
        assert!(ix.extract("").mentions.is_empty());
        assert!(ix.extract("   ,,, ").mentions.is_empty());
        let big = "word ".repeat(20_000) + "x y";
        assert_eq!(ix.extract(&big).mentions.len(), 1);
        let err = EntityIndex::build([Entry::new("s", json!([1]))]).expect_err("array value");
        assert!(err.to_string().contains("entry 0 (site `s`)"), "{err}");
        assert!(index(&[]).is_empty());
        assert_eq!(ix.len(), 2);
        assert_eq!(ix.sites(), ["a"]);
    }
}
