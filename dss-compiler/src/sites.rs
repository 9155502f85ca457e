//! Sites: the places in an instance where a value is chosen, found from the notation.
//!
//! A site is named by an *instance path*: a JSON pointer whose array items are written `*`
//! (`/fields/*/aggregate`, `/filters/*/values/*`). It says what is chosen there: one of a
//! list of values (an `enum`, or the tag that says which variant of a union is written), a
//! free string (which a catalog may bind at run time: a dataset's columns), or a number.
//! Grammar pruning restricts sites to the values found in a request.

use crate::grammar::{SpanPolicy, ValueForm};
use crate::notation::{FieldMode, Notation, ObjLayout, RecordLayout};
use crate::shape::{ExprId, Lexical, Shapes};
use serde::Serialize;
use serde_json::Value;
use std::collections::BTreeMap;

/// What is chosen at a site.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum SiteKind {
    /// One of these values (`enum`/`const` strings and numbers, schema order).
    Choice {
        /// The values, as in the JSON.
        values: Vec<Value>,
    },
    /// Which variant of a union is written: the value of its tag property.
    Tag {
        /// The tag values, as in the JSON.
        values: Vec<String>,
    },
    /// A free string; `lexical` is the form the grammar demands (non-empty, a date).
    Text {
        /// `None`: any string.
        #[serde(skip_serializing_if = "Option::is_none")]
        lexical: Option<Lexical>,
    },
    /// A free number.
    Number {
        /// Integers only.
        integer: bool,
    },
}

/// A place where an instance chooses a value.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Site {
    /// The instance path, `*` standing for any array item (or any undeclared property).
    pub path: String,
    /// What is chosen there.
    #[serde(flatten)]
    pub kind: SiteKind,
    /// Whether every instance that reaches the enclosing object has a value here.
    pub required: bool,
    /// Whether the object the site is a field of always has it (a required field of its
    /// own record, however optional the record: a topping's `name`).
    #[serde(skip)]
    pub required_in_record: bool,
    /// Example values the schema gives for the field: the quoted phrases of its
    /// description (`such as 'San Francisco, CA'`).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub examples: Vec<String>,
    /// Whether the site is an optional field of its record, or an item of a list that is
    /// one (a required list's items are no optional field: the list must be filled).
    #[serde(skip)]
    pub optional_field: bool,
    /// Whether the field is a free string written in a formal language a request does
    /// not spell word for word: a command line or a query statement, by its name
    /// (`command`, `cmd`, `shell`, `sql`) or its description (`command line`, `shell
    /// command`, `SQL query`). "how much room is left on my disk" is `df -h`: the value is
    /// the model's to compose, not a span of the request.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub composed: bool,
    /// Values the field's description names, each with its phrase: a list of two or more
    /// codes (`1 for cleaning service, 2 for ironing service`; `0 is mute and 100 is the
    /// maximum volume`; `'CA' for California`), on a number site, an `enum` (only values
    /// of the enum) or a free string (codes other than numbers). A request that says the
    /// phrase names the value.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub codes: Vec<(Value, String)>,
}

impl Site {
    /// How this site, a free string, takes the request's spans (see [`SpanPolicy`]).
    pub fn span_policy(&self) -> SpanPolicy {
        let forms: Vec<ValueForm> = self.examples.iter().map(|e| ValueForm::of(e)).collect();
        let mut shaped = Vec::new();
        let mut form_words = 0;
        if !forms.is_empty() && forms.iter().all(|f| !f.is_plain()) {
            for f in forms {
                if !shaped.contains(&f) {
                    shaped.push(f);
                }
            }
            form_words = self
                .examples
                .iter()
                .map(|e| without_brackets(e).split_whitespace().count())
                .max()
                .unwrap_or(0);
        }
        let name = self
            .path
            .rsplit('/')
            .find(|s| *s != "*")
            .unwrap_or_default();
        let name_words = name_words(name);
        let id_named = name_parts(name).iter().any(|w| w == "id");
        if shaped.is_empty() {
            // A field named for a form asks for it: `url`, `email`.
            let named = |w: &[&str]| name_words.iter().any(|n| w.contains(&n.as_str()));
            if named(&["url", "uri", "link", "endpoint", "website"]) {
                shaped.push(ValueForm::of("https://example.com"));
            } else if named(&["email", "mail"]) {
                shaped.push(ValueForm::of("name@example.com"));
            }
        }
        // `Head, Tail` examples in capitalized words: how many words a tail has.
        let comma = ValueForm::of("a, b");
        // A note in brackets is no part of the tail (`'City, State (abbr)'`).
        let tails: Vec<String> = self
            .examples
            .iter()
            .filter_map(|e| e.rsplit_once(',').map(|(_, t)| without_brackets(t)))
            .collect();
        let tail_words = (shaped == [comma]
            && tails.len() == self.examples.len()
            && self
                .examples
                .iter()
                .all(|e| e.starts_with(|c: char| c.is_uppercase() || c.is_ascii_digit()))
            && tails.iter().all(|t| {
                let mut ws = t.split_whitespace().peekable();
                ws.peek().is_some() && ws.all(|w| w.chars().next().is_some_and(char::is_uppercase))
            }))
        .then(|| tails.iter().map(|t| t.split_whitespace().count()).max())
        .flatten();
        let tail_codes = tail_words.is_some()
            && tails
                .iter()
                .any(|t| (2..=3).contains(&t.len()) && t.bytes().all(|b| b.is_ascii_uppercase()));
        let moment = crate::moments::MomentForm::agreed(&self.examples);
        SpanPolicy {
            optional: self.optional_field,
            forms: shaped,
            form_words,
            name_words,
            id_named,
            tail_words,
            tail_codes,
            moment,
        }
    }
}

/// `text` without its bracketed notes (`State (abbr)`: `State`), trimmed.
fn without_brackets(text: &str) -> String {
    let mut out = String::new();
    let mut depth = 0usize;
    for c in text.chars() {
        match c {
            '(' | '[' => depth += 1,
            ')' | ']' => depth = depth.saturating_sub(1),
            _ if depth == 0 => out.push(c),
            _ => {}
        }
    }
    out.trim().to_string()
}

/// The words of a field's name, lowercased: split at `_`, `-`, `.` and lower-to-upper
/// case changes (`modification_request`, `maxResults`), words under three letters left out.
pub(crate) fn name_words(name: &str) -> Vec<String> {
    let mut words = name_parts(name);
    words.retain(|w| w.chars().count() >= 3);
    words
}

/// Every part of a field's name, lowercased, split as [`name_words`] splits it (`botId`:
/// `bot`, `id`).
pub(crate) fn name_parts(name: &str) -> Vec<String> {
    let mut words = Vec::new();
    let mut cur = String::new();
    let mut prev_lower = false;
    for c in name.chars() {
        if !c.is_alphanumeric() || (c.is_uppercase() && prev_lower) {
            if !cur.is_empty() {
                words.push(std::mem::take(&mut cur));
            }
            cur.clear();
        }
        if c.is_alphanumeric() {
            cur.extend(c.to_lowercase());
        }
        prev_lower = c.is_lowercase();
    }
    if !cur.is_empty() {
        words.push(cur);
    }
    words
}

/// Whether a free string field named `name`, described by `doc`, holds a command line or
/// a query statement (see [`Site::composed`]).
fn composed(name: &str, doc: Option<&str>) -> bool {
    const NAMES: [&str; 4] = ["command", "cmd", "shell", "sql"];
    const PHRASES: [&str; 6] = [
        "command line",
        "command-line",
        "shell command",
        "system command",
        "sql query",
        "sql statement",
    ];
    name_words(name).iter().any(|w| NAMES.contains(&w.as_str()))
        || doc.is_some_and(|d| {
            let d = d.to_lowercase();
            PHRASES.iter().any(|p| d.contains(p))
        })
}

/// The codes of a description (see [`described_codes`]) that are values of a site of
/// `kind`: numbers of a number site (whole ones for an integer site), values of an enum,
/// codes other than numbers of a free string.
fn site_codes(kind: &SiteKind, doc: &str) -> Vec<(Value, String)> {
    let codes = described_codes(doc);
    let mut out = Vec::new();
    for (code, phrase) in codes {
        let number = code.parse::<serde_json::Number>().ok();
        let value = match kind {
            SiteKind::Number { integer } => match number {
                Some(n) if !*integer || n.is_i64() || n.is_u64() => Value::Number(n),
                _ => continue,
            },
            SiteKind::Choice { values } => {
                let hit = values.iter().find(|v| match v {
                    Value::String(s) => *s == code,
                    Value::Number(x) => {
                        number.as_ref().and_then(serde_json::Number::as_f64) == x.as_f64()
                    }
                    _ => false,
                });
                match hit {
                    Some(v) => v.clone(),
                    None => continue,
                }
            }
            // A free string's codes (`'CA' for California`) are written as the
            // description spells them, beside the spans of the request.
            SiteKind::Text {
                lexical: None | Some(Lexical::NonEmpty),
            } if number.is_none() => Value::String(code),
            SiteKind::Tag { .. } | SiteKind::Text { .. } => return Vec::new(),
        };
        out.push((value, phrase));
    }
    // A list of codes, not one number mentioned in passing.
    let distinct = out
        .iter()
        .map(|(v, _)| v.to_string())
        .collect::<std::collections::BTreeSet<_>>();
    if distinct.len() < 2 {
        return Vec::new();
    }
    out
}

/// The words that link a code to its phrase in a description: `1 for cleaning`,
/// `2 represents ironing`, `0 is mute`, `5 = warning`. (Two-word links are read as their
/// first word followed by one of [`CODE_LINK_SECOND`].)
const CODE_LINKS: &[&str] = &[
    "for",
    "represents",
    "represent",
    "means",
    "is",
    "=",
    "indicates",
    "denotes",
    "stands",
    "corresponds",
    "maps",
    "refers",
    "-",
    "–",
    ":",
];
/// The second word of a two-word link (`stands for`, `corresponds to`).
const CODE_LINK_SECOND: &[&str] = &["for", "to"];
/// The most words a code's phrase has.
const CODE_PHRASE_WORDS: usize = 5;

/// The codes a description lists with a phrase each: a code (a number, or a quoted
/// word of at most 12 characters) followed by a linking word ([`CODE_LINKS`]) and a
/// phrase of at most [`CODE_PHRASE_WORDS`] words, which ends at a comma, a semicolon, a
/// bracket, a sentence end, `and`, `or` or `etc`. Leading articles are dropped.
/// `For example, '1' for cleaning service, '2' for ironing service` gives (`1`,
/// `cleaning service`) and (`2`, `ironing service`). Where every phrase ends in the same
/// word (`service`), each phrase without it is listed too (`cleaning`): a word every
/// code shares tells none apart.
pub(crate) fn described_codes(doc: &str) -> Vec<(String, String)> {
    let words: Vec<&str> = doc.split_whitespace().collect();
    let quote = |c: char| matches!(c, '\'' | '"' | '`' | '‘' | '’' | '“' | '”');
    let mut out: Vec<(String, String)> = Vec::new();
    // After `1 corresponds to Bangkok`, a bare `to` links the next code (`2 to Chiang Mai`).
    let mut to_links = false;
    let mut i = 0;
    while i < words.len() {
        let raw = words[i];
        // `1:`/`1=` carry their link.
        let (token, attached) = match raw.strip_suffix(':').or_else(|| raw.strip_suffix('=')) {
            Some(t) if !t.is_empty() => (t, true),
            _ => (raw.trim_start_matches('('), false),
        };
        let quoted =
            token.starts_with(quote) && token.ends_with(quote) && token.chars().count() > 2;
        let code = token.trim_matches(quote);
        let is_number = code.parse::<f64>().is_ok_and(f64::is_finite)
            && code
                .chars()
                .all(|c| c.is_ascii_digit() || matches!(c, '.' | '-'));
        let is_word = quoted
            && code.chars().count() <= 12
            && code
                .chars()
                .all(|c| c.is_alphanumeric() || matches!(c, '_' | '-' | '.'));
        if !(is_number || is_word) {
            i += 1;
            continue;
        }
        let mut j = i + 1;
        if !attached {
            let Some(link) = words.get(j).map(|w| w.to_lowercase()) else {
                break;
            };
            let linked = CODE_LINKS.contains(&link.as_str()) || (to_links && link == "to");
            if !linked {
                i += 1;
                continue;
            }
            j += 1;
            if matches!(link.as_str(), "stands" | "corresponds" | "maps" | "refers") {
                match words.get(j).map(|w| w.to_lowercase()) {
                    Some(w) if CODE_LINK_SECOND.contains(&w.as_str()) => {
                        to_links |= w == "to";
                        j += 1;
                    }
                    _ => {
                        i += 1;
                        continue;
                    }
                }
            }
        }
        let mut phrase: Vec<String> = Vec::new();
        while let Some(w) = words.get(j) {
            let lower = w.to_lowercase();
            if matches!(lower.as_str(), "and" | "or" | "etc" | "etc." | "etc.,")
                || w.starts_with('(')
            {
                break;
            }
            let ends = w.ends_with([',', ';', '.', ')', ':']);
            let word = w
                .trim_end_matches([',', ';', '.', ')', ':'])
                .trim_matches(quote)
                .to_string();
            let article = phrase.is_empty() && matches!(lower.as_str(), "a" | "an" | "the");
            if !word.is_empty() && !article {
                phrase.push(word);
            }
            j += 1;
            if ends || phrase.len() > CODE_PHRASE_WORDS {
                break;
            }
        }
        if !phrase.is_empty() && phrase.len() <= CODE_PHRASE_WORDS {
            out.push((code.to_string(), phrase.join(" ")));
        }
        i = j.max(i + 1);
    }
    let lasts: std::collections::BTreeSet<String> = out
        .iter()
        .filter_map(|(_, p)| p.rsplit_once(' ').map(|(_, l)| l.to_lowercase()))
        .collect();
    if out.len() >= 2 && lasts.len() == 1 && out.iter().all(|(_, p)| p.contains(' ')) {
        let shorter: Vec<(String, String)> = out
            .iter()
            .filter_map(|(c, p)| p.rsplit_once(' ').map(|(h, _)| (c.clone(), h.to_string())))
            .collect();
        out.extend(shorter);
    }
    out
}

/// Whether a description's quoted phrase is a word for no value (`'null'`, `'None'`,
/// `'N/A'`): what to write where there is none, not an example of a value.
fn names_no_value(phrase: &str) -> bool {
    matches!(
        phrase.trim().to_lowercase().as_str(),
        "null" | "none" | "nil" | "n/a" | "undefined"
    )
}

/// The quoted phrases of a description (`'San Francisco, CA'`, `"owner/repo"`): a quote
/// mark that opens after a non-letter and closes before one, at most 80 characters
/// apart, on one line. An apostrophe inside a word (`user's`) opens nothing.
fn quoted_phrases(doc: &str) -> Vec<String> {
    let cs: Vec<char> = doc.chars().collect();
    let mut out = Vec::new();
    let mut i = 0;
    while i < cs.len() {
        let q = cs[i];
        let opens = matches!(q, '\'' | '"' | '`' | '‘' | '“')
            && (i == 0 || !cs[i - 1].is_alphanumeric())
            && cs.get(i + 1).is_some_and(|c| !c.is_whitespace());
        if !opens {
            i += 1;
            continue;
        }
        let close = match q {
            '‘' => '’',
            '“' => '”',
            q => q,
        };
        let end = (i + 1..cs.len().min(i + 82)).find(|&j| {
            cs[j] == '\n' || (cs[j] == close && !cs.get(j + 1).is_some_and(|c| c.is_alphanumeric()))
        });
        match end {
            Some(j) if cs[j] == close && j > i + 1 => {
                let phrase: String = cs[i + 1..j].iter().collect();
                let phrase = phrase.trim().to_string();
                if !phrase.is_empty() && !out.contains(&phrase) {
                    out.push(phrase);
                }
                i = j + 1;
            }
            _ => i += 1,
        }
    }
    out
}

/// Deeper than this, a recursive schema's sites are not listed (their paths would repeat).
const MAX_DEPTH: usize = 24;
/// At most this many sites are listed (Vega-Lite has thousands of optional paths).
const MAX_SITES: usize = 20_000;
/// At most this many (expression, path) pairs are walked: a graph of definitions that
/// branches at every level has exponentially many paths within [`MAX_DEPTH`], even where
/// none of them is a site (the largest corpus schemas take under 40,000).
const MAX_VISITS: usize = 200_000;

/// Where a union of object forms merged into one record chooses its form: the keywords
/// that open its forms (a call's or an intent's name, `atis_city`, `GetWeather`), each
/// written first on its line. A discriminator property's values are a [`SiteKind::Tag`]
/// site instead.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct FormSite {
    /// The record's instance path (`*` for any array item).
    pub path: String,
    /// The field names that select the forms, in form order.
    pub names: Vec<String>,
}

impl FormSite {
    /// The instance path of the record written under the form `name` (`/*` and
    /// `BookRestaurant` give `/*/BookRestaurant`, the parent of its fields' sites).
    pub fn record(&self, name: &str) -> String {
        Self::record_of(&self.path, name)
    }

    /// [`FormSite::record`] of the form site at `path`.
    pub fn record_of(path: &str, name: &str) -> String {
        format!("{path}/{}", escape_segment(name))
    }
}

/// The sites of a notation, in document order, one per path (a path reached through
/// several variants of a union merges their values).
pub(crate) fn sites(shapes: &Shapes, notation: &Notation) -> Vec<Site> {
    walk(shapes, notation).0
}

/// The sites (see [`sites`]) and the form sites, in document order.
pub(crate) fn walk(shapes: &Shapes, notation: &Notation) -> (Vec<Site>, Vec<FormSite>) {
    let mut w = Walker {
        shapes,
        notation,
        order: Vec::new(),
        by_path: BTreeMap::new(),
        stack: Vec::new(),
        visits: 0,
        forms: Vec::new(),
    };
    w.walk(shapes.root, String::new(), (true, true));
    let mut by_path = w.by_path;
    let sites = w
        .order
        .into_iter()
        .filter_map(|p| by_path.remove(&p))
        .collect();
    (sites, w.forms)
}

/// Every prefix of every site path (`""` included): where a pruned grammar builds its rules
/// per path.
pub(crate) fn path_prefixes(sites: &[Site]) -> std::collections::HashSet<String> {
    let mut prefixes = std::collections::HashSet::new();
    for site in sites {
        let mut p = site.path.as_str();
        prefixes.insert(p.to_string());
        while let Some((head, _)) = p.rsplit_once('/') {
            prefixes.insert(head.to_string());
            p = head;
        }
    }
    prefixes
}

/// Escapes one instance-path segment as in a JSON pointer.
pub(crate) fn escape_segment(s: &str) -> String {
    s.replace('~', "~0").replace('/', "~1")
}

struct Walker<'a> {
    shapes: &'a Shapes,
    notation: &'a Notation,
    order: Vec<String>,
    by_path: BTreeMap<String, Site>,
    /// Canonical expressions on the current path (a recursive schema stops at a repeat).
    stack: Vec<ExprId>,
    /// Calls of [`Walker::walk`] so far (see [`MAX_VISITS`]).
    visits: usize,
    /// Records of merged forms met (one per path).
    forms: Vec<FormSite>,
}

impl Walker<'_> {
    fn add(&mut self, path: &str, kind: SiteKind, (required, own): (bool, bool)) {
        if let Some(site) = self.by_path.get_mut(path) {
            site.required &= required;
            site.required_in_record &= own;
            merge(&mut site.kind, kind);
            return;
        }
        if self.by_path.len() >= MAX_SITES {
            return;
        }
        self.order.push(path.to_string());
        self.by_path.insert(
            path.to_string(),
            Site {
                path: path.to_string(),
                kind,
                required,
                required_in_record: own,
                examples: Vec::new(),
                optional_field: false,
                composed: false,
                codes: Vec::new(),
            },
        );
    }

    /// Whether walking on at `path` is not done: past [`MAX_VISITS`], or when it would be
    /// useless: once [`MAX_SITES`] are listed, what a walk finds can only merge into a
    /// listed site, and none is at or below `path`.
    fn exhausted(&self, path: &str) -> bool {
        if self.visits >= MAX_VISITS {
            return true;
        }
        if self.by_path.len() < MAX_SITES || self.by_path.contains_key(path) {
            return false;
        }
        let below = format!("{path}/");
        !self
            .by_path
            .range(below.clone()..)
            .next()
            .is_some_and(|(k, _)| k.starts_with(&below))
    }

    /// `req`: whether the site is required from the root, and in its own record.
    fn walk(&mut self, expr: ExprId, path: String, req: (bool, bool)) {
        let required = req.0;
        let canon = self
            .notation
            .canon
            .get(expr as usize)
            .copied()
            .unwrap_or(expr);
        if self.stack.contains(&canon) || self.stack.len() >= MAX_DEPTH || self.exhausted(&path) {
            return;
        }
        self.visits += 1;
        let parts = self.shapes.parts(canon);
        if parts.any {
            return;
        }
        let mut choice: Vec<Value> = Vec::new();
        if let Some(s) = &parts.string {
            match &s.values {
                Some(vs) => choice.extend(vs.iter().cloned().map(Value::String)),
                None => self.add(
                    &path,
                    SiteKind::Text {
                        lexical: s.lexical.clone(),
                    },
                    req,
                ),
            }
        }
        if let Some(n) = &parts.number {
            match &n.values {
                Some(vs) => choice.extend(vs.iter().cloned().map(Value::Number)),
                None => self.add(&path, SiteKind::Number { integer: n.integer }, req),
            }
        }
        // A boolean (an optional flag such as `negation: true`) is a choice too: a request
        // names it or not ("no onions").
        if parts.bool_true {
            choice.push(Value::Bool(true));
        }
        if parts.bool_false {
            choice.push(Value::Bool(false));
        }
        if !choice.is_empty() {
            self.add(&path, SiteKind::Choice { values: choice }, req);
        }
        self.stack.push(canon);
        if let Some(a) = &parts.array {
            for (i, &e) in a.prefix.iter().enumerate() {
                self.walk(
                    e,
                    format!("{path}/{i}"),
                    (required && i < a.min_items as usize, false),
                );
            }
            if let Some(items) = a.items {
                self.walk(
                    items,
                    format!("{path}/*"),
                    (required && a.min_items > 0, false),
                );
            }
        }
        if parts.object.is_some() {
            match self.notation.object(canon).cloned() {
                Some(ObjLayout::Record(r)) => self.record(&r, &path, required),
                Some(ObjLayout::Tagged { key, variants }) => {
                    let values = variants
                        .iter()
                        .flat_map(|v| v.tags.iter().map(|(t, _)| t.clone()))
                        .collect();
                    self.add(
                        &format!("{path}/{}", escape_segment(&key)),
                        SiteKind::Tag { values },
                        (required, true),
                    );
                    for v in &variants {
                        self.record(&v.record, &path, required);
                    }
                }
                None => {}
            }
        }
        self.stack.pop();
    }

    fn record(&mut self, r: &RecordLayout, path: &str, required: bool) {
        if r.forms.len() > 1 && !self.forms.iter().any(|f| f.path == path) {
            let names = r
                .forms
                .iter()
                .filter_map(|f| f.fields.first().and_then(|&i| r.fields.get(i)))
                .map(|f| f.name.clone())
                .collect();
            self.forms.push(FormSite {
                path: path.to_string(),
                names,
            });
        }
        for f in &r.fields {
            let is_required = matches!(f.mode, FieldMode::Positional | FieldMode::Const(_));
            if matches!(f.mode, FieldMode::Const(_)) {
                continue;
            }
            let at = format!("{path}/{}", escape_segment(&f.name));
            self.walk(f.expr, at.clone(), (required && is_required, is_required));
            let items = format!("{at}/*");
            let doc = self.shapes.doc(f.source);
            // The codes the description explains: the field's, or a list's items'.
            let codes = |site: &mut Site| {
                if site.codes.is_empty() {
                    site.codes = doc.map(|d| site_codes(&site.kind, d)).unwrap_or_default();
                }
            };
            if let Some(site) = self.by_path.get_mut(&at) {
                site.optional_field = !is_required;
                if matches!(site.kind, SiteKind::Text { lexical: None }) {
                    site.composed = composed(&f.name, doc);
                }
                codes(site);
                if site.examples.is_empty() && matches!(site.kind, SiteKind::Text { .. }) {
                    site.examples = doc.map(quoted_phrases).unwrap_or_default();
                    // `'null' for immediate availability` says how to write no value;
                    // it shows no value's form.
                    site.examples.retain(|e| !names_no_value(e));
                }
            }
            if let Some(site) = self.by_path.get_mut(&items) {
                site.optional_field = !is_required;
                codes(site);
            }
        }
        if let Some(e) = r.extras {
            self.walk(e, format!("{path}/*"), (false, false));
        }
    }
}

/// Two readings of one path (union variants): the values of both.
fn merge(into: &mut SiteKind, other: SiteKind) {
    match (into, other) {
        (SiteKind::Choice { values }, SiteKind::Choice { values: more }) => {
            for v in more {
                if !values.contains(&v) {
                    values.push(v);
                }
            }
        }
        (SiteKind::Tag { values }, SiteKind::Tag { values: more }) => {
            for v in more {
                if !values.contains(&v) {
                    values.push(v);
                }
            }
        }
        // A free reading wins over a closed one: the site admits any value.
        (
            into @ SiteKind::Choice { .. },
            other @ (SiteKind::Text { .. } | SiteKind::Number { .. }),
        ) => {
            *into = other;
        }
        _ => {}
    }
}

/// Whether an instance path matches a site path (`*` in either matches any segment).
pub fn path_matches(pattern: &str, path: &str) -> bool {
    let mut a = pattern.split('/');
    let mut b = path.split('/');
    loop {
        match (a.next(), b.next()) {
            (None, None) => return true,
            (Some(x), Some(y)) if x == y || x == "*" || y == "*" => {}
            _ => return false,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{compile, CompileOptions};
    use serde_json::json;

    fn codes(doc: &str) -> Vec<(String, String)> {
        described_codes(doc)
    }

    fn pairs(list: &[(&str, &str)]) -> Vec<(String, String)> {
        list.iter()
            .map(|(c, p)| (c.to_string(), p.to_string()))
            .collect()
    }

    #[test]
    fn a_description_s_list_of_codes_names_each_value_with_its_phrase() {
        assert_eq!(
            codes("Ticket priority: 1 for low, 2 for normal, 3 for urgent."),
            pairs(&[("1", "low"), ("2", "normal"), ("3", "urgent")])
        );
        // A word every phrase ends with tells no code apart: each phrase without it too.
        assert_eq!(
            codes(
                "For example, '1' represents a walking route and '2' represents a cycling route."
            ),
            pairs(&[
                ("1", "walking route"),
                ("2", "cycling route"),
                ("1", "walking"),
                ("2", "cycling")
            ])
        );
        assert_eq!(
            codes("Loudness from 0 to 10, where 0 is silent and 10 is the loudest."),
            pairs(&[("0", "silent"), ("10", "loudest")])
        );
        // `corresponds to` once, then a bare `to`.
        assert_eq!(
            codes("The region: '1' corresponds to Oslo, '2' to Bergen, and '3' to Tromsø."),
            pairs(&[("1", "Oslo"), ("2", "Bergen"), ("3", "Tromsø")])
        );
        assert_eq!(
            codes("Either 'A' for active accounts or 'I' for inactive accounts (e.g. -1 for none)"),
            pairs(&[
                ("A", "active accounts"),
                ("I", "inactive accounts"),
                ("-1", "none")
            ])
        );
        // Numbers that name nothing.
        assert!(codes("A rating from 1 to 5, 5 being best.").is_empty());
        assert!(codes("Up to 30 results per page.").is_empty());
    }

    #[test]
    fn a_site_takes_the_codes_of_its_own_kind_and_at_least_two() {
        let int = SiteKind::Number { integer: true };
        let listed = site_codes(&int, "The route: 1 for walking, 2 for cycling.");
        assert_eq!(
            listed,
            vec![
                (json!(1), "walking".to_string()),
                (json!(2), "cycling".to_string())
            ]
        );
        // One number mentioned in passing is no list of codes.
        assert!(site_codes(&int, "Rooms to book, for example 3 for a family.").is_empty());
        // An integer site takes whole codes only; an enum its own values only.
        assert!(site_codes(&int, "0.5 for half, 1.5 for more").is_empty());
        let choice = SiteKind::Choice {
            values: vec![json!("A"), json!("I")],
        };
        let got = site_codes(&choice, "'A' for active, 'I' for inactive, 'X' for removed");
        assert_eq!(
            got,
            vec![
                (json!("A"), "active".to_string()),
                (json!("I"), "inactive".to_string())
            ]
        );
        // A free string takes the codes it lists as spelled, beside the request's spans;
        // digits are a number's codes, not a string's.
        let text = SiteKind::Text { lexical: None };
        assert_eq!(
            site_codes(&text, "Two letters, as 'NO' for Norway or 'SE' for Sweden."),
            vec![
                (json!("NO"), "Norway".to_string()),
                (json!("SE"), "Sweden".to_string())
            ]
        );
        assert!(site_codes(&text, "1 for low, 2 for high").is_empty());
        // A field's description explains its codes, and a list's its items' codes.
        let spec = compile(
            &json!({"type": "object", "properties": {
                "mode": {"type": "integer", "description": "1 for walking, 2 for cycling"},
                "avoid": {"type": "array", "items": {"type": "integer"},
                    "description": "Roads to avoid: 1 for tolls, 2 for ferries"}}}),
            &CompileOptions::default(),
        )
        .expect("compiles");
        let codes_at = |path: &str| {
            spec.sites()
                .into_iter()
                .find(|s| s.path == path)
                .map(|s| s.codes)
                .unwrap_or_default()
        };
        assert_eq!(codes_at("/mode").len(), 2);
        assert_eq!(
            codes_at("/avoid/*"),
            vec![
                (json!(1), "tolls".to_string()),
                (json!(2), "ferries".to_string())
            ]
        );
    }

    #[test]
    fn a_description_s_quoted_phrases_are_the_field_s_examples() {
        assert_eq!(
            quoted_phrases(
                "The venue, in the format 'City, ST', such as \"Austin, TX\" or `Reno, NV`."
            ),
            ["City, ST", "Austin, TX", "Reno, NV"]
        );
        // Apostrophes inside words open nothing.
        assert_eq!(
            quoted_phrases("The user's name; it's 'Ada' or the owner's 'login'."),
            ["Ada", "login"]
        );
        assert!(quoted_phrases("An open quote ' never closed").is_empty());
        assert_eq!(
            name_words("modification_request"),
            ["modification", "request"]
        );
        assert_eq!(name_words("maxResults"), ["max", "results"]);
        assert_eq!(name_words("botId"), ["bot"]);
    }

    #[test]
    fn a_command_line_or_query_statement_field_is_composed() {
        let spec = compile(
            &json!({"type": "object", "required": ["command"],
            "properties": {
                "command": {"type": "string", "description": "What to run."},
                "shell_cmd": {"type": "string"},
                "statement": {"type": "string", "description": "The SQL query to run."},
                "args": {"type": "string", "description": "Passed on the command line."},
                "title": {"type": "string", "description": "The command's title."},
                "mode": {"enum": ["command", "insert"]}
            }}),
            &CompileOptions::default(),
        )
        .expect("compiles");
        let composed: Vec<String> = spec
            .sites()
            .into_iter()
            .filter(|s| s.composed)
            .map(|s| s.path)
            .collect();
        assert_eq!(composed, ["/command", "/shell_cmd", "/statement", "/args"]);
    }

    #[test]
    fn a_site_s_span_policy_comes_from_its_description_and_whether_it_may_be_left_out() {
        let spec = compile(
            &json!({"type": "object", "required": ["venue", "tags"],
                "properties": {
                    "venue": {"type": "string", "description": "Where, as 'City, ST (abbr)', e.g. 'Reno, NV'."},
                    "city": {"type": "string", "description": "A city such as 'Reno'."},
                    "homepage_url": {"type": "string"},
                    "tags": {"type": "array", "items": {"type": "string"}},
                    "notes": {"type": "array", "items": {"type": "string"}},
                    "since": {"type": "string", "description": "First day, in the format of 'YYYY-MM-DD'."},
                    "until": {"type": "string", "description": "Last day, such as '2024-02-29'."},
                    "at": {"type": "string", "description": "When, as 'YYYY-MM-DD HH:MM'."},
                    "from": {"type": "string", "description": "Start, as 'YYYY-MM-DD HH:MM', or 'null' for now."},
                    "leaves": {"type": "string", "description": "Departure, in 24-hour format, such as '18:45'."},
                    "day": {"type": "string", "description": "As 'dd/mm/yyyy', such as '15/03/2024' or '01/02/2024'."},
                    "code": {"type": "string", "description": "A code such as '2024-13-45'."}}}),
            &CompileOptions::default(),
        )
        .unwrap();
        let sites = spec.sites();
        let policy = |path: &str| {
            sites
                .iter()
                .find(|s| s.path == path)
                .unwrap_or_else(|| panic!("{path}"))
                .span_policy()
        };
        let venue = policy("/venue");
        assert!(!venue.optional && venue.forms == [ValueForm::of("Reno, NV")]);
        assert_eq!(venue.form_words, 2);
        // Its examples are capitalized `Head, Tail`: a tail of at most one word.
        assert_eq!(venue.tail_words, Some(1));
        assert!(venue.tail_codes);
        // A plain example asks for no form.
        let city = policy("/city");
        assert!(city.optional && city.forms.is_empty());
        // A field named for a form asks for it.
        assert_eq!(
            policy("/homepage_url").forms,
            [ValueForm::of("https://a.b")]
        );
        // A required list's items must be written; an optional list's may be left out.
        assert!(!policy("/tags/*").optional);
        assert!(policy("/notes/*").optional);
        // A date or time pattern, or samples of one, ask for dates or times in that form;
        // digits that are no date do not.
        let iso = crate::moments::MomentForm::of("YYYY-MM-DD");
        assert!(iso.is_some());
        assert_eq!(policy("/since").moment, iso);
        // A word for no value (`'null' for now`) is no example of the form.
        assert!(policy("/from").moment.is_some());
        assert_eq!(policy("/from").moment, policy("/at").moment);
        assert_eq!(policy("/until").moment, iso);
        let at = policy("/at").moment.expect("a date and a time");
        assert!(at.has_date() && at.has_time());
        let leaves = policy("/leaves").moment.expect("a time");
        assert!(leaves.has_time() && !leaves.has_date());
        assert_eq!(
            policy("/day").moment,
            crate::moments::MomentForm::of("dd/mm/yyyy")
        );
        assert!(policy("/code").moment.is_none() && venue.moment.is_none());
    }

    fn sites_of(schema: Value) -> Vec<Site> {
        let spec = compile(&schema, &CompileOptions::default()).expect("compiles");
        sites(spec.shapes(), spec.notation())
    }

    #[test]
    fn a_union_of_calls_named_by_their_key_is_a_form_site() {
        let call = |name: &str, slot: &str| {
            json!({"type": "object", "additionalProperties": false, "required": [name],
                "properties": {name: {"type": "object", "additionalProperties": false,
                    "properties": {slot: {"enum": ["x", "y"]}}}}})
        };
        let spec = compile(
            &json!({"type": "array", "items": {"oneOf": [
                call("GetWeather", "city"),
                call("PlayMusic", "artist"),
                call("BookRestaurant", "city")
            ]}}),
            &CompileOptions::default(),
        )
        .expect("compiles");
        assert_eq!(
            spec.form_sites(),
            [FormSite {
                path: "/*".into(),
                names: vec![
                    "GetWeather".into(),
                    "PlayMusic".into(),
                    "BookRestaurant".into()
                ]
            }]
        );
        // A record of one form (or none) chooses nothing.
        let one =
            compile(&call("GetWeather", "city"), &CompileOptions::default()).expect("compiles");
        assert!(one.form_sites().is_empty());
    }

    #[test]
    fn enums_free_strings_and_numbers_are_sites_with_their_paths() {
        let s = sites_of(json!({
            "type": "object",
            "properties": {
                "fields": {"type": "array", "items": {
                    "type": "object",
                    "properties": {
                        "fieldName": {"type": "string"},
                        "aggregate": {"enum": ["sum", "mean"]}
                    },
                    "required": ["fieldName"]
                }},
                "limit": {"type": "integer"}
            },
            "required": ["fields"]
        }));
        let paths: Vec<&str> = s.iter().map(|x| x.path.as_str()).collect();
        assert_eq!(
            paths,
            ["/fields/*/fieldName", "/fields/*/aggregate", "/limit"]
        );
        assert_eq!(s[0].kind, SiteKind::Text { lexical: None });
        assert_eq!(
            s[1].kind,
            SiteKind::Choice {
                values: vec![json!("sum"), json!("mean")]
            }
        );
        assert!(!s[1].required);
        assert_eq!(s[2].kind, SiteKind::Number { integer: true });
    }

    #[test]
    fn a_tagged_union_has_a_tag_site_and_its_variants_fields() {
        let call = |name: &str, slot: &str, values: Value| {
            json!({"type": "object", "properties": {
                "function": {"const": name},
                slot: {"enum": values}
            }, "required": ["function"], "additionalProperties": false})
        };
        let s = sites_of(json!({
            "type": "array",
            "items": {"oneOf": [
                call("book", "city", json!(["paris", "rome"])),
                call("weather", "city", json!(["oslo"]))
            ]}
        }));
        let tag = s
            .iter()
            .find(|x| x.path == "/*/function")
            .expect("tag site");
        assert_eq!(
            tag.kind,
            SiteKind::Tag {
                values: vec!["book".into(), "weather".into()]
            }
        );
        let city = s.iter().find(|x| x.path == "/*/city").expect("city site");
        assert_eq!(
            city.kind,
            SiteKind::Choice {
                values: vec![json!("paris"), json!("rome"), json!("oslo")]
            }
        );
    }

    #[test]
    fn recursive_schemas_stop_at_the_repeat() {
        let s = sites_of(json!({
            "$defs": {"node": {"type": "object", "properties": {
                "name": {"type": "string"},
                "children": {"type": "array", "items": {"$ref": "#/$defs/node"}}
            }}},
            "$ref": "#/$defs/node"
        }));
        let paths: Vec<&str> = s.iter().map(|x| x.path.as_str()).collect();
        assert_eq!(paths, ["/name"]);
    }

    #[test]
    fn star_matches_any_item() {
        assert!(path_matches("/fields/*/fieldName", "/fields/3/fieldName"));
        assert!(path_matches("/fields/*/fieldName", "/fields/*/fieldName"));
        assert!(!path_matches("/fields/*/fieldName", "/fields/3/aggregate"));
        assert!(!path_matches("/fields/*", "/fields/3/aggregate"));
    }
}
