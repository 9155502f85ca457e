//! Grammar pruning: the grammar of a notation cut down to the values found in a request
//! (the Grammar Pruning paper's `G_x = Grammar(I_x)`), and the grammar of the rest of a
//! document from a line boundary (its iterative form).
//!
//! A [`Restriction`] names, per site ([`crate::sites`]), the values a request offers there.
//! The builder then keeps, at each site, only those of its own values (an `enum` filtered,
//! a free string or number bound by a catalog written as an alternation of literals); an
//! optional field or array item whose sites are all bound and have no candidate is left
//! out; a union variant none of whose sites has a candidate is left out. Where nothing
//! would remain (a required field, or no variant), the full set stays. Only alternatives
//! are ever removed, so every pruned sentence is a sentence of the full grammar:
//! **L(G_x) ⊆ L(G)**, and it expands and validates with the unpruned spec.

use crate::moments::MomentForm;
use serde_json::Value;
use std::collections::{BTreeMap, BTreeSet};

/// The values a request offers per site: the paper's `I_x`.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Restriction {
    /// Site path (as [`crate::sites::Site::path`]) -> the values found for it (a value found
    /// twice is listed twice).
    pub candidates: BTreeMap<String, Vec<Value>>,
    /// Free-string and number sites whose values are known (a catalog is bound to them): with
    /// no candidate they count as "nothing found", like an `enum`. Other free sites are left
    /// alone.
    pub bound: BTreeSet<String>,
    /// The values a bound free site may take at all (its catalog, when it is short, see
    /// `dss_extract::SpecIndex`): where nothing was found for the site and it must still be
    /// written (a field its record requires), these are offered in place of the schema's
    /// whole range, so that an order's count is one of the venue's counts, not any integer
    /// (a small model, offered `[1-9][0-9]*`, wrote `pizza 1000000…` until it ran out).
    /// Never candidates: they neither keep an optional part nor ask for a line.
    pub known: BTreeMap<String, Vec<Value>>,
    /// Sites left unpruned although their values are known: values a request does not name
    /// but the writer infers (a field's role or data type). See `SpecIndex::learn_inferred`.
    pub free: BTreeSet<String>,
    /// Free strings a model composes rather than copies ([`crate::sites::Site::composed`]:
    /// a command line), also in [`Restriction::free`]: offered whole, and always quoted,
    /// so that a value of several words is never ended by a space after its first.
    pub composed: BTreeSet<String>,
    /// The readings of one ambiguous mention: the (site path, value) pairs one span of the
    /// request offers (`four` as a rating and as a party size). The mention is used once:
    /// writing one reading consumes the others ([`Consume::Class`]).
    ///
    /// A reading may also name a *record* rather than a value: `(record path, null)`, as
    /// `("/*/BookRestaurant", null)` for the word `book` of "book a brasserie", which also
    /// reads as the value `book` of another call's `object_type`. Writing any value inside
    /// that record uses the mention (the word named the call; it is no value left to write),
    /// see [`Restriction::record_reading`].
    pub readings: Vec<Vec<(String, Value)>>,
    /// Modifiers tied to the value they modify, as (modifier, head) (site path, value)
    /// pairs: the `large` of "and one large lemonade" goes in the record that writes
    /// `lemonade`, not in another drink's. A line that writes the head holds on until
    /// it has written the modifier ([`crate::CompiledSpec::line_leaves`]); a line that does
    /// not write it is never held for it.
    pub ties: Vec<((String, Value), (String, Value))>,
    /// Hold lists open: a list of found values does not end while a value found that only
    /// it could take is unwritten ([`Restriction::list_holds`]). The runtime sets it with
    /// line holding; without it a small model ended `toppings [(lettuce) (tomato)]` early
    /// and wrote the skipped `pickle` as a second main dish of its own.
    pub hold_lists: bool,
    /// Values named in one clause of the request (no comma, `and` or `then` between) at
    /// two fields of one record, as pairs of (site path, value) readings, both ways: the
    /// line that writes one of them is held until it has written the other
    /// ([`crate::CompiledSpec::line_leaves`]). "a flight out of reno into fresno": the line
    /// that writes `reno` writes `fresno` too, where a small model ended the call
    /// after one city and wrote the other as a call of its own.
    pub together: Vec<((String, Value), (String, Value))>,
    /// Two values named in one clause of the request (no comma, `and`, `then` or
    /// sentence's end between) at the same site, as pairs of (site path, value) readings,
    /// both ways: alternatives, one of which is meant ("switch my order from pizza to a
    /// burger", "the status of the interface"), not two calls. A line that writes one of
    /// them uses the other up ([`Restriction::consumed`]), so it asks for no line of its
    /// own.
    pub alternatives: Vec<((String, Value), (String, Value))>,
    /// The request's words, for the free-string sites in [`Restriction::span_sites`]: a
    /// value there may be any span of them (a run of whole words, as the request spells
    /// it), besides the candidates found. Each word is written once
    /// ([`Restriction::consumed`]).
    pub spans: Spans,
    /// Free-string sites whose values may be copied from the request ([`Spans`]): no
    /// catalog says it is complete. With candidates found they are offered beside the
    /// spans; an optional field there is kept while the request has words left.
    pub span_sites: BTreeSet<String>,
    /// The numbers the request gives (digits or words: `12`, `2.5`, `a dozen`), each
    /// written once, offered at the number sites in [`Restriction::number_sites`] (within
    /// each site's own type and bounds). Where none fits, an optional number field is left
    /// out and a required one keeps its whole (bounded) range.
    pub numbers: Vec<Value>,
    /// Number sites that take the request's [`numbers`](Restriction::numbers): those no
    /// catalog binds.
    pub number_sites: BTreeSet<String>,
    /// The dates and clock times the request gives, in ISO 8601 (`2023-04-25`,
    /// `2023-11-01T20:00:00`, `14:00:00`; see [`Moment`](crate::prune::Moment)): offered at
    /// free string sites whose format is `date` and at those whose examples show a form of
    /// them ([`SpanPolicy::moment`]), each written once.
    pub dates: Vec<Value>,
    /// How each span site narrows the spans it takes ([`SpanPolicy`]); a site not listed
    /// takes any span.
    pub span_policy: BTreeMap<String, SpanPolicy>,
    /// The sites the lines written so far wrote, each with the values written there
    /// ([`Restriction::consumed`] adds them, unless consumption is off).
    pub written: BTreeMap<String, Vec<Value>>,
    /// The cities the request names that a gazetteer knows, with their country (and
    /// state): a required field whose examples read `City, Region` takes them completed
    /// that way (`"Boston, MA"`, `"Lyon, France"`) where the request names no region
    /// ([`SpanPolicy::completed_tail`]).
    pub places: Vec<Place>,
}

/// A city the request names ([`Restriction::places`]).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Place {
    /// The city as the request writes it (`Boston`).
    pub name: String,
    /// Its country's English name (`United States`, `France`).
    pub country: String,
    /// Its state, for a city of the United States: the postal code and the name (`MA`,
    /// `Massachusetts`).
    pub state: Option<(String, String)>,
}

impl Place {
    /// The place as a `City, Region` field writes it: a US city with its state (the code
    /// where the field's examples write codes, `Boston, MA`), any other with its country
    /// (`Lyon, France`).
    pub fn completed(&self, codes: bool) -> String {
        let region = match &self.state {
            Some((code, _)) if codes => code,
            Some((_, name)) => name,
            None => &self.country,
        };
        format!("{}, {}", self.name, region)
    }
}

/// How a span site ([`Restriction::span_sites`]) narrows the request's spans, from what
/// its schema says about the field ([`crate::prune::Site::span_policy`]).
///
/// - Where the field's examples all have a **form** (a comma between parts, as in `City,
///   ST`; a URL; an e-mail address; `owner/repo`; `HH:MM`), the spans of one of those
///   forms (no conjunction inside, at most one word longer than the longest example) are
///   offered when the request has any: "weather in Riga, Latvia" gives
///   `"Riga, Latvia"` where the examples read `'San Francisco, CA'`, never `Riga` alone.
///   With none of that form, a required field takes any span and an optional one is left
///   out.
/// - A field named for a form (`url`, `email`) asks for that form the same way.
/// - An **optional** field takes only spans that begin and end on a word the request
///   marks as a value's ([`SpanWord::marked`]: `Forest Green`, `Bank of America`; no
///   conjunction inside), or a
///   single word next to a word of the field's name (`satin finish` for `finish`): a
///   small model fills every optional field it is offered with words of the request, and
///   a field left out is what an optional field is when the request does not name its
///   value.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct SpanPolicy {
    /// The field may be left out.
    pub optional: bool,
    /// The forms of the field's examples, where every example has one (empty: no form
    /// asked for).
    pub forms: Vec<ValueForm>,
    /// The most words an example of those forms has (0: no bound): a span of a form has
    /// at most one word more (`Mariposa, CA`, not `Yosemite National Park at Mariposa,
    /// CA`, where the examples read `'San Francisco, CA'`).
    pub form_words: usize,
    /// The words of the field's name, lowercased (`modification_request`: `modification`,
    /// `request`), for spans named next to them.
    pub name_words: Vec<String>,
    /// The field's name has the part `id` (`user_id`, `botId`): an `ID` before a code
    /// labels it for this field where no other word of the name does (`the user with ID
    /// U123`).
    pub id_named: bool,
    /// Where every example is `Head, Tail` in capitalized words (`'San Francisco, CA'`,
    /// `'Paris, France'`): the most words such a tail has. A span of that form is offered
    /// only capitalized the same way ("in Paris, then Rome" is no place),
    /// and where the request has none, a required field takes a span completed with a
    /// tail of the model's own ([`SpanPolicy::completed_tail`]).
    pub tail_words: Option<usize>,
    /// An example's tail is a code of capitals (`'San Francisco, CA'` beside `'City,
    /// Country'`): a US city is completed with its state's code rather than its name
    /// ([`Place::completed`]).
    pub tail_codes: bool,
    /// The field asks for a date, a clock time or both, in the form its examples show
    /// ([`MomentForm::agreed`]: `'2023-04-01'`, `'YYYY-MM-DD'`, `'dd/mm/yyyy HH:MM'`,
    /// `'18:45'`). It takes the request's moments ([`Restriction::dates`]) written that
    /// way ("April 25th 2023" is `2023-04-25` or `25/04/2023`), and no other span while
    /// there are any; with none, an optional field is left out.
    pub moment: Option<MomentForm>,
}

/// The punctuation that structures a value: a comma between parts (`Paris, France`), a
/// URL's `://`, an `@` between words, a `/` between words (`owner/repo`), a `:` between
/// words or digits (`14:00`). Dashes, dots and apostrophes are no form: names and numbers
/// have them anyway.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct ValueForm(u8);

impl ValueForm {
    const COMMA: u8 = 1;
    const URL: u8 = 2;
    const AT: u8 = 4;
    const SLASH: u8 = 8;
    const COLON: u8 = 16;

    /// The form of `text`.
    pub fn of(text: &str) -> ValueForm {
        let cs: Vec<char> = text.chars().collect();
        let mut bits = 0;
        let alnum = |i: Option<&char>| i.is_some_and(|c| c.is_alphanumeric());
        for (i, &c) in cs.iter().enumerate() {
            let before = i.checked_sub(1).and_then(|j| cs.get(j));
            match c {
                ',' => {
                    let next = cs[i + 1..].iter().find(|c| **c != ' ');
                    if (alnum(before) || before == Some(&')')) && alnum(next) {
                        bits |= Self::COMMA;
                    }
                }
                ':' if cs.get(i + 1) == Some(&'/') && cs.get(i + 2) == Some(&'/') => {
                    bits |= Self::URL
                }
                ':' if alnum(before) && alnum(cs.get(i + 1)) => bits |= Self::COLON,
                '@' if alnum(before) && alnum(cs.get(i + 1)) => bits |= Self::AT,
                '/' if alnum(before) && alnum(cs.get(i + 1)) => bits |= Self::SLASH,
                _ => {}
            }
        }
        if bits & Self::URL != 0 {
            // A URL's path and port are part of being a URL.
            bits &= !(Self::SLASH | Self::COLON);
        }
        ValueForm(bits)
    }

    /// Whether the value has no form (plain words).
    pub fn is_plain(self) -> bool {
        self.0 == 0
    }
}

impl SpanPolicy {
    /// Whether this policy narrows the spans at all (a required field with a name may, to
    /// a code the request labels with it: see [`SpanPolicy::offered`]).
    pub fn narrows(&self) -> bool {
        self.optional
            || !self.forms.is_empty()
            || self.moment.is_some()
            || !self.name_words.is_empty()
    }

    /// Whether `word` (lowercased) is a word of the field's name, or its plural.
    fn names(&self, word: &str) -> bool {
        let t = word
            .strip_suffix('s')
            .filter(|s| s.len() >= 3)
            .unwrap_or(word);
        self.name_words
            .iter()
            .any(|n| n == t || n.strip_suffix('s') == Some(t))
    }

    /// Whether word `i` of `spans` is a code (letters and digits: `ORD-77`, `PX9K2`; or
    /// digits alone: `7890`) that the request labels with a word of the field's name,
    /// right before it or with only [`LABEL_GAPS`] between (`order ORD-77`, `parcel
    /// number is PX9K2`, `serial number Q3CC-8`, `account ID 7890` for `account_id`; `ID` labels it too where the
    /// field's name has `id`: `the user with the ID 7890`). Digits after `of` are an
    /// amount (`a payment of 250`), not a code; a function word of the name (`to` of
    /// `where_to`) labels nothing.
    pub(crate) fn labels(&self, spans: &Spans, i: usize) -> bool {
        let w = &spans.words[i].text;
        let digits = w.chars().any(|c| c.is_ascii_digit());
        let letters = w.chars().any(char::is_alphabetic);
        if !digits || (!letters && !w.chars().all(|c| c.is_ascii_digit())) {
            return false;
        }
        let id_named = self.id_named;
        let mut saw_id = false;
        for j in (0..i).rev() {
            let t = spans.words[j].text.to_lowercase();
            let named = self.names(&t)
                && !FUNCTION_WORDS.contains(&t.as_str())
                && !END_WORDS.contains(&t.as_str());
            if named {
                return true;
            }
            if !LABEL_GAPS.contains(&t.as_str()) {
                return saw_id && id_named;
            }
            if t == "of" && !letters {
                return false;
            }
            saw_id |= t == "id";
        }
        saw_id && id_named
    }

    /// The places the request names with this field's kind after them: a field named for
    /// an administrative division (`district_name`, `sub_district`, `county`, `province`)
    /// takes the capitalized words right before that word, without it (`Chatuchak
    /// District` gives `Chatuchak`; `Sai Kong Subdistrict` gives `Sai Kong` for
    /// `sub_district_name`, and nothing for `district_name`). The division's word is the
    /// field's label, as `ID` is a code's. A comma ends the name (`Bangkok, Chatuchak
    /// District` names `Chatuchak`).
    pub(crate) fn designated(&self, spans: &Spans) -> Vec<String> {
        let kind: String = self
            .name_words
            .iter()
            .filter(|w| !matches!(w.as_str(), "name" | "id" | "code"))
            .map(String::as_str)
            .collect();
        if !DIVISIONS.contains(&kind.as_str()) {
            return Vec::new();
        }
        // A word of a place's name: capitalized, no function word, no comma after it.
        let name_word = |k: usize| {
            let v = &spans.words[k];
            v.text.chars().next().is_some_and(char::is_uppercase)
                && !FUNCTION_WORDS.contains(&v.text.to_lowercase().as_str())
                && v.gap.as_deref().is_some_and(|g| !g.contains(','))
        };
        let mut out: Vec<String> = Vec::new();
        for (i, w) in spans.words.iter().enumerate() {
            if w.text.to_lowercase() != kind || i == 0 {
                continue;
            }
            let mut start = i;
            while start > 0 && name_word(start - 1) {
                start -= 1;
            }
            if start == i {
                continue;
            }
            let mut text = String::new();
            for k in start..i {
                text.push_str(&spans.words[k].text);
                if k + 1 < i {
                    text.push_str(spans.words[k].gap.as_deref().unwrap_or(" "));
                }
            }
            if !out.contains(&text) {
                out.push(text);
            }
        }
        out
    }

    /// The spans of `spans` (of at most `max_words` words, as text) this policy offers;
    /// `None` where it offers any span (a required field none of whose forms the
    /// request has).
    ///
    /// `later`: the site is in a line after the first, where plain words are no evidence
    /// of a value (see the line rule in the grammar of the rest): a required field there
    /// takes the marked spans too, where the request has any left.
    pub fn offered(&self, spans: &Spans, max_words: usize, later: bool) -> Option<Vec<String>> {
        if !self.narrows() && !later {
            return None;
        }
        if self.moment.is_some() && self.optional {
            // The request's moments are offered beside these ([`SpanPolicy::moment`]).
            return Some(Vec::new());
        }
        let designated = self.designated(spans);
        if !designated.is_empty() {
            return Some(designated);
        }
        let all = spans.spans(max_words);
        if !self.forms.is_empty() {
            let fits: Vec<String> = all
                .iter()
                .filter(|(r, t)| {
                    self.forms.contains(&ValueForm::of(t))
                        && (self.form_words == 0 || r.len() <= self.form_words + 1)
                        && (self.tail_words.is_none() || capitalized_form(t))
                        && !spans.words[r.clone()]
                            .iter()
                            .any(|w| CLAUSE_WORDS.contains(&w.text.to_lowercase().as_str()))
                })
                .map(|(_, t)| t.clone())
                .collect();
            if !fits.is_empty() {
                return Some(fits);
            }
            if self.optional {
                return Some(Vec::new());
            }
        }
        // Words that spell the schema's own names (`ID` beside `order_id`, `to-do` for
        // `todo`) label a value or a call: a marked span neither starts nor ends on one.
        let marked = |r: &std::ops::Range<usize>| {
            let ws = &spans.words[r.clone()];
            ws.first().is_some_and(|w| w.marked && !w.names_schema)
                && ws.last().is_some_and(|w| w.marked && !w.names_schema)
                && !ws
                    .iter()
                    .any(|w| CLAUSE_WORDS.contains(&w.text.to_lowercase().as_str()))
        };
        if !self.optional && !later {
            // A code the request labels with the field's name is the field's value.
            let labelled: Vec<String> = all
                .iter()
                .filter(|(r, _)| r.len() == 1 && self.labels(spans, r.start))
                .map(|(_, t)| t.clone())
                .collect();
            if !labelled.is_empty() {
                return Some(labelled);
            }
            // A field named a name (`partner_name`, `fabricName`) holds one: the spans the
            // request marks as values (names, quotations, codes), where it has any.
            if self.name_words.iter().any(|w| w == "name") {
                let names: Vec<String> = all
                    .iter()
                    .filter(|(r, _)| marked(r))
                    .map(|(_, t)| t.clone())
                    .collect();
                if !names.is_empty() {
                    return Some(names);
                }
            }
            return None;
        }
        let named = |i: usize| {
            spans
                .words
                .get(i)
                .is_some_and(|w| self.names(&w.text.to_lowercase()))
        };
        let offered: Vec<String> = all
            .into_iter()
            .filter(|(r, _)| {
                let ws = &spans.words[r.clone()];
                let marked = marked(r);
                let word = || {
                    !FUNCTION_WORDS.contains(&ws[0].text.to_lowercase().as_str())
                        && ((r.start > 0 && named(r.start - 1)) || named(r.end))
                };
                marked || (r.len() == 1 && word())
            })
            .map(|(_, t)| t)
            .collect();
        if offered.is_empty() && !self.optional {
            return None;
        }
        Some(offered)
    }

    /// Where a required field's examples are all `Head, Tail` (a city and its state or
    /// country) and the request has no span of that form: the most words of the tail
    /// the model adds to a span of the request (`"Boston, MA"` for "weather in Boston").
    /// The schema asks for the form; the request gives the head; the tail is the model's
    /// to write, shaped as the examples' tails (capitalized words).
    pub fn completed_tail(&self, spans: &Spans, max_words: usize) -> Option<usize> {
        let words = self.tail_words?;
        if self.optional {
            return None;
        }
        match self.offered(spans, max_words, false) {
            None => Some(words),
            Some(_) => None,
        }
    }
}

/// Whether `text` is `Head, Tail` as a place is written: it starts with a capital letter
/// or a digit (`221 Elm Street, Springfield`)
/// and the words after its last comma are capitalized (or digits), as in `Paris, France`
/// and `Austin, TX 78701`, not `Paris, then Rome` or `in Paris, France`.
fn capitalized_form(text: &str) -> bool {
    let Some((_, tail)) = text.rsplit_once(',') else {
        return false;
    };
    let mut words = tail.split_whitespace().peekable();
    text.starts_with(|c: char| c.is_uppercase() || c.is_ascii_digit())
        && words.peek().is_some()
        && words.all(|w| {
            w.chars()
                .next()
                .is_some_and(|c| c.is_uppercase() || c.is_ascii_digit())
        })
}

/// The words of a request, as span sites take them (see [`Restriction::spans`]).
///
/// A span is a run of whole words with the text between them as the request has it
/// (`Boston, MA`). It never crosses a bracket, a quotation mark or the end of a sentence,
/// and never splits a name: capitalized words in a row inside a sentence (`Golden State
/// Warriors`) and the words of a quoted phrase are taken whole or not at all, so a value
/// of several words cannot be written half in one field and half in the next.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Spans {
    /// The words in request order.
    pub words: Vec<SpanWord>,
}

/// One word of [`Spans`].
#[derive(Debug, Clone, PartialEq)]
pub struct SpanWord {
    /// The word as the request spells it (leading and trailing punctuation left out).
    pub text: String,
    /// The text between this word and the next, when a span may run on into the next
    /// word (`None`: a span ends here).
    pub gap: Option<String>,
    /// Whether this word and the next belong to one name: a span that takes this word
    /// takes the next one too.
    pub joined: bool,
    /// Whether a span may start at this word although the word before is joined to it
    /// (a name that begins a sentence: `San Francisco` after a question takes `San` as
    /// its first word, or its first word is the sentence's verb: `Find LeBron James`).
    pub may_start: bool,
    /// Whether the request marks the word as a value's: quoted, a name (capitalized
    /// inside a sentence, or all capitals), or letters mixed with digits or joined by
    /// symbols (`v2`, `my-bot-id`, `owner/repo`), or a name given after a naming word
    /// ([`SpanWord::given_name`]). Such a word left unwritten asks for
    /// another line where spans are all a line could take.
    pub marked: bool,
    /// Whether the word, unquoted, is a word of the schema's names (a tool's or a
    /// field's: `Uber` for `uber.ride`, `to-do` for `todo`, `URL` for `url`): it names a
    /// call or a field, so left unwritten it asks for no other line
    /// ([`Spans::name_schema_words`]).
    pub names_schema: bool,
    /// Whether a line written so far took this word.
    pub used: bool,
    /// Where the word is in the request (byte offsets).
    pub at: std::ops::Range<usize>,
    /// Whether the word lies inside quotation marks.
    pub quoted: bool,
    /// The request's text between this word and the next (empty after the last).
    pub between: String,
    /// Whether the word is part of a name the request gives after a naming word (`called`,
    /// `named`, `titled`): marked as a value's although not capitalized.
    pub given_name: bool,
}

impl SpanWord {
    /// A capitalized pronoun or request word (`I'd`, `Can`): no value, although marked.
    fn is_prose(&self) -> bool {
        let t = self.text.to_lowercase();
        let head = t.split(['\'', '\u{2019}']).next().unwrap_or_default();
        FUNCTION_WORDS.contains(&head) || GENERIC_WORDS.contains(&head)
    }

    /// Digits, with a decimal point or thousands commas (`4`, `2.5`, `1,200`).
    fn is_number(&self) -> bool {
        self.text.chars().any(|c| c.is_ascii_digit())
            && self
                .text
                .chars()
                .all(|c| c.is_ascii_digit() || c == '.' || c == ',')
    }
}

/// How far (in words) a value left may stand from the word that names its call
/// ([`Spans::named_near`]).
const NAMED_NEAR: usize = 6;

impl Spans {
    /// The words of `request` (see [`Spans`]).
    pub fn of(request: &str) -> Spans {
        // A request escaped once too often writes its line breaks as `\n`: read them as
        // line breaks (same length, so every offset stays the request's).
        let escaped = escaped_line_breaks(request);
        let request = escaped.as_deref().unwrap_or(request);
        // (start, end) byte offsets of each word, whether its raw token opened or closed a
        // quotation, and where the word ends with the sentence's closing punctuation kept
        // (`name?` in `'What is your name?'`).
        let mut raw: Vec<(usize, usize, bool, bool, usize)> = Vec::new();
        for (start, end) in pieces(request) {
            let token = &request[start..end];
            let inner = token.trim_matches(|c: char| !keeps_edge(c));
            if inner.is_empty() {
                continue;
            }
            let lead = token.len() - token.trim_start_matches(|c: char| !keeps_edge(c)).len();
            let s = start + lead;
            // The apostrophe of a contraction cut from its word (`'m traveling`, `'s`) opens
            // no quotation.
            let contraction = token[..lead].ends_with(['\'', '\u{2019}'])
                && matches!(inner, "m" | "s" | "re" | "ve" | "ll" | "d" | "t")
                && !token[lead + inner.len()..].contains(is_quote);
            let opens = token[..lead].contains(is_quote) && !contraction;
            let tail = &token[lead + inner.len()..];
            let closes = tail.contains(is_quote);
            let punct: usize = tail
                .chars()
                .take_while(|c| matches!(c, '?' | '!' | '.' | ':'))
                .map(char::len_utf8)
                .sum();
            raw.push((s, s + inner.len(), opens, closes, s + inner.len() + punct));
        }
        let mut words = Vec::with_capacity(raw.len());
        let mut quoted = false;
        let mut prev_opens = true;
        for (i, &(s, e, opens, closes, with_punct)) in raw.iter().enumerate() {
            if opens {
                quoted = true;
            }
            // A quotation is the request's value as written: the question or exclamation
            // it ends with is part of it.
            let e = if quoted && closes { with_punct } else { e };
            let text = request[s..e].to_string();
            let next = raw.get(i + 1);
            let gap = next.map(|&(ns, _, _, _, _)| &request[e..ns]);
            let next_word = next.map(|&(ns, ne, _, _, _)| &request[ns..ne]);
            // A clause begins after a comma: `Tel Aviv, and could you…` ends at `Aviv`.
            let clause = |g: &str| {
                g.contains([',', ';'])
                    && next_word.is_some_and(|w| CLAUSE_WORDS.contains(&w.to_lowercase().as_str()))
            };
            // An initial or a title abbreviated before a name goes on into it (`Ursula K. Le
            // Guin`, `Dr. Ruth Ames`): its period ends no sentence.
            let abbreviation = gap.is_some_and(|g| g.trim() == ".")
                && request
                    .get(..e + 1)
                    .is_some_and(ends_with_name_abbreviation)
                && next_word.is_some_and(|w| w.chars().next().is_some_and(char::is_uppercase));
            let crosses = gap.is_none_or(|g| {
                g.contains(['(', ')', '[', ']', '{', '}', '?', '!', '\n'])
                    || g.contains(ENDS_UNSPACED)
                    || g.contains(is_quote)
                    || (g.contains(". ") && !abbreviation)
                    || clause(g)
            });
            let sentence_start = i == 0 || words_end_sentence(&request[..s]);
            let inside_quote = quoted && !closes;
            let capitalized = |t: &str| {
                let mut cs = t.chars();
                cs.next().is_some_and(char::is_uppercase) && t.chars().any(char::is_lowercase)
            };
            // `I` and its contractions (`I'm`, `I've`) are capitalized and mark nothing,
            // nor make a name of the word before them ("Tomorrow I'm …").
            let first_person = |t: &str| {
                FIRST_PERSON.contains(&t.to_lowercase().replace('\u{2019}', "'").as_str())
            };
            let pronoun = first_person(&text);
            let name = gap.is_some_and(|g| g.trim().is_empty() || abbreviation)
                && (capitalized(&text) || abbreviation)
                && !pronoun
                && next_word.is_some_and(|w| {
                    // An initial goes on a name (`Mary A. Oliver`).
                    let initial = w.chars().count() == 1 && w.chars().all(char::is_uppercase);
                    (capitalized(w) || initial) && !first_person(w)
                });
            // A value never ends on a function word (`in`, `the`, `and`): such a word joins
            // the next one.
            let function_word = END_WORDS.contains(&text.to_lowercase().as_str());
            let joined = !crosses && (inside_quote || name || function_word);
            // After a word joined only as a function word, or as the first word of a
            // sentence that a name follows, a span may start here too.
            // A quotation starts where it opens, whatever its first word.
            let may_start =
                opens || (prev_opens && !START_NEVER.contains(&text.to_lowercase().as_str()));
            prev_opens = !joined || (!inside_quote && (function_word || (name && sentence_start)));
            let letters = text.chars().filter(|c| c.is_alphabetic()).count();
            // The words a request gives as a name (`a timer called focus`, `a list named
            // weekend chores`): those after a naming word, up to a function word or
            // punctuation.
            let lower = text.to_lowercase();
            let given_name = !END_WORDS.contains(&lower.as_str())
                && !FUNCTION_WORDS.contains(&lower.as_str())
                && !LIST_WORDS.contains(&lower.as_str())
                && !CLAUSE_WORDS.contains(&lower.as_str())
                && i > 0
                && request[raw[i - 1].1..s].trim().is_empty()
                && (NAMING_WORDS
                    .contains(&request[raw[i - 1].0..raw[i - 1].1].to_lowercase().as_str())
                    || words.last().is_some_and(|w: &SpanWord| w.given_name));
            let marked = given_name
                || quoted
                || (!pronoun
                    && ((capitalized(&text) && (!sentence_start || name))
                        || (letters >= 2 && !text.chars().any(char::is_lowercase))
                        || (letters >= 1
                            && (text.chars().any(|c| c.is_ascii_digit())
                                || text.contains(['-', '_', '/', '.', '@'])))));
            let in_quotes = quoted;
            if closes {
                quoted = false;
            }
            words.push(SpanWord {
                text,
                gap: (!crosses).then(|| gap.unwrap_or_default().to_string()),
                joined,
                marked,
                may_start,
                names_schema: false,
                used: false,
                at: s..e,
                quoted: in_quotes,
                between: gap.unwrap_or_default().to_string(),
                given_name,
            });
        }
        Spans { words }
    }

    /// Whether no word is left to take.
    pub fn is_empty(&self) -> bool {
        self.words.iter().all(|w| w.used)
    }

    /// Whether a word the request marks as a value's ([`SpanWord::marked`]) is left, one
    /// that names no tool or field of the schema ([`SpanWord::names_schema`]).
    pub fn marked_left(&self) -> bool {
        self.words
            .iter()
            .any(|w| w.marked && !w.used && !w.names_schema)
    }

    /// Whether a word the request marks as a value's is left where it reads as the value
    /// of another line: quoted, or listed with a word a line took (`Boston and Denver`,
    /// `Boston, Denver`, `in Boston. Also in Denver`, `3 to Elm Road and 2 to Oak Lane`:
    /// only function words, numbers, words of the schema's names and a joining word or a
    /// bare comma between them, and besides a joining word one other word, `buy milk and
    /// call Ada`). A capitalized
    /// word elsewhere in the request's prose (a name in a preamble, a word after a quoted
    /// value) is a word of the request, not a call of its own.
    pub fn listed_left(&self) -> bool {
        self.words.iter().enumerate().any(|(i, w)| {
            w.marked
                && !w.used
                && !w.names_schema
                && (w.quoted
                    || self.listed_with_used(i, false, false)
                    || self.listed_with_used(i, true, false))
        })
    }

    /// Whether a word the request marks as a value's is left joined to a word a line took
    /// by a joining word (`Lisbon and Tallinn`, `in Lisbon and in Tallinn`): a list of
    /// the same kind. A bare comma may join a place's parts (`Marshall, MN`), and a
    /// quotation may be a value the line left out; neither counts here.
    pub fn joined_left(&self) -> bool {
        self.words.iter().enumerate().any(|(i, w)| {
            w.marked
                && !w.used
                && !w.names_schema
                && !w.is_prose()
                && (self.listed_with_used(i, false, true) || self.listed_with_used(i, true, true))
        })
    }

    /// Whether a number of the request is left where it repeats the pattern of a number a
    /// line used: labelled by the same word after it (`3 kg over 120 km, and 7 kg over 40
    /// km`: `kg`) or before it (`width 4 … width 6`), or listed with it (`radius 5, 10
    /// and 15`: only numbers and a joining word between them). The request then gives a second
    /// set of the same arguments: another call. A number labelled otherwise (the `4` of
    /// `apt 4` beside a used house number) asks for none.
    pub fn numbers_listed_left(&self) -> bool {
        let number = SpanWord::is_number;
        let label = |i: usize, after: bool| -> Option<String> {
            let mut k = i;
            for _ in 0..2 {
                k = if after { k + 1 } else { k.checked_sub(1)? };
                let t = self.words.get(k)?.text.to_lowercase();
                if FUNCTION_WORDS.contains(&t.as_str()) || END_WORDS.contains(&t.as_str()) {
                    continue;
                }
                let word = t.chars().all(char::is_alphabetic)
                    && !LIST_WORDS.contains(&t.as_str())
                    && !CLAUSE_WORDS.contains(&t.as_str());
                return word.then_some(t);
            }
            None
        };
        let used: Vec<usize> = (0..self.words.len())
            .filter(|&i| self.words[i].used && number(&self.words[i]))
            .collect();
        // Word `j` and the nearest used number before or after it, with only numbers left
        // and joining words between, one of them at least (`5, 10 and 15`; a date's year
        // after a comma is none).
        let listed = |j: usize| {
            [false, true].into_iter().any(|forward| {
                let mut k = j;
                let mut joined = false;
                loop {
                    let next = if forward { k + 1 } else { k.wrapping_sub(1) };
                    let Some(w) = self.words.get(next) else {
                        return false;
                    };
                    if !w.used && LIST_WORDS.contains(&w.text.to_lowercase().as_str()) {
                        joined = true;
                    } else if w.used || !number(w) {
                        return w.used && number(w) && joined;
                    }
                    k = next;
                }
            })
        };
        // The words after a number, each a function word as written or a content word as
        // `*`, up to three, within the clause (`12 meters to feet`: `* to *`).
        let shape = |i: usize| -> Option<Vec<String>> {
            let mut out = Vec::new();
            let mut k = i;
            while out.len() < 3 {
                if self.words[k].gap.is_none() {
                    break;
                }
                k += 1;
                let Some(w) = self.words.get(k) else { break };
                let t = w.text.to_lowercase();
                if number(w)
                    || LIST_WORDS.contains(&t.as_str())
                    || CLAUSE_WORDS.contains(&t.as_str())
                {
                    break;
                }
                let function =
                    FUNCTION_WORDS.contains(&t.as_str()) || END_WORDS.contains(&t.as_str());
                out.push(if function { t } else { "*".to_string() });
            }
            let has_function = out.iter().any(|t| t != "*");
            let has_content = out.iter().any(|t| t == "*");
            (has_function && has_content).then_some(out)
        };
        // A joining word between words `a` and `b`.
        let joined_between = |a: usize, b: usize| {
            (a.min(b) + 1..a.max(b))
                .any(|k| LIST_WORDS.contains(&self.words[k].text.to_lowercase().as_str()))
        };
        // A number left after a joining word whose words after it read as a used number's
        // do (`convert 12 meters to feet, and 3 miles to kilometers`): the same arguments
        // again, another call.
        let shaped = |j: usize| {
            shape(j).is_some_and(|sj| {
                used.iter()
                    .any(|&i| joined_between(i, j) && shape(i).as_ref() == Some(&sj))
            })
        };
        self.words.iter().enumerate().any(|(j, w)| {
            !w.used
                && number(w)
                && (listed(j)
                    || shaped(j)
                    || [false, true].into_iter().any(|after| {
                        label(j, after).is_some_and(|l| {
                            used.iter().any(|&i| label(i, after).as_ref() == Some(&l))
                        })
                    }))
        })
    }

    /// Whether a word of the request names something by one of `names` (stems, as
    /// [`content_words`] gives them) and has a value left near it in its clause, before or
    /// after, with no value a line took in between (`the factorial of 6`, `7 factorial`,
    /// `shipping a 4 kg box`): an unused number where `numbers`, an unused word the request
    /// marks as a value's where `marked` (not a capitalized pronoun, not a word of the
    /// schema's names, and with a capital or a digit: a word of a script without case is
    /// no name). A comma, a sentence's end or a joining word (`and`) ends the clause; a
    /// colon does not (`my BMI: I weigh 72 kg`).
    pub(crate) fn named_near(&self, names: &BTreeSet<String>, numbers: bool, marked: bool) -> bool {
        let value = |w: &SpanWord| {
            !w.used
                && ((numbers && w.is_number())
                    || (marked
                        && w.marked
                        && !w.names_schema
                        && !w.is_prose()
                        && (w.quoted
                            || w.text
                                .chars()
                                .any(|c| c.is_uppercase() || c.is_ascii_digit()))))
        };
        // A value a line took: it belongs to that line's part of the request.
        let taken = |w: &SpanWord| w.used && (w.marked || w.is_number());
        // Whether the step from word `k` to the next crosses out of the clause.
        let ends = |k: usize| {
            self.words[k].between.contains([',', ';', '.', '?', '!'])
                || self
                    .words
                    .get(k + 1)
                    .is_some_and(|w| LIST_WORDS.contains(&w.text.to_lowercase().as_str()))
        };
        let names: BTreeSet<String> = names.iter().map(|w| stem_key(w)).collect();
        // A word of the request's prose names; a part of a value (`api` of a URL) does not.
        let names_here = |w: &SpanWord| {
            !w.quoted
                && w.text.chars().all(|c| c.is_alphabetic() || c == '-')
                && content_words(&w.text)
                    .iter()
                    .any(|s| names.contains(&stem_key(s)))
        };
        let n = self.words.len();
        (0..n).filter(|&i| names_here(&self.words[i])).any(|i| {
            let forward = (i + 1..n.min(i + 1 + NAMED_NEAR))
                .take_while(|&j| !ends(j - 1))
                .map(|j| &self.words[j])
                .take_while(|w| !taken(w))
                .any(value);
            let backward = (i.saturating_sub(NAMED_NEAR)..i)
                .rev()
                .take_while(|&j| !ends(j))
                .map(|j| &self.words[j])
                .take_while(|w| !taken(w))
                .any(value);
            forward || backward
        })
    }

    /// Whether word `i` is listed with the nearest used word before it (`forward`: after
    /// it); see [`Spans::listed_left`]. `joined`: by a joining word only, to a used word
    /// the request marks as a value's too (a value of the same kind, not a flag's word).
    fn listed_with_used(&self, i: usize, forward: bool, joined: bool) -> bool {
        let mut between: Vec<&SpanWord> = Vec::new();
        let mut k = i;
        let used = loop {
            let next = if forward { k + 1 } else { k.wrapping_sub(1) };
            let Some(w) = self.words.get(next) else {
                return false;
            };
            if w.used {
                if joined && !w.marked {
                    return false;
                }
                break next;
            }
            between.push(w);
            k = next;
        };
        let filler = |w: &SpanWord| {
            let t = w.text.to_lowercase();
            w.names_schema
                || LIST_WORDS.contains(&t.as_str())
                || FUNCTION_WORDS.contains(&t.as_str())
                || END_WORDS.contains(&t.as_str())
                || t.chars().all(|c| c.is_ascii_digit() || c == '.')
        };
        // One other word may stand between where a joining word does (`buy milk and call
        // Ada`: a second item of the same kind); none where only joined words count. Words
        // the request marks as values are other items of the same list (`Lyon, Le Mans
        // and Metz`), none of them used yet.
        let others = between.iter().filter(|w| !filler(w) && !w.marked).count();
        if others > 1 || (joined && others > 0) {
            return false;
        }
        let joins = between
            .iter()
            .any(|w| LIST_WORDS.contains(&w.text.to_lowercase().as_str()));
        if !joins && !between.iter().all(|w| filler(w)) {
            return false;
        }
        // Only a comma (or `;`, `&`, `/`) between the two words: a list.
        let gap = self.words[used.min(i)]
            .between
            .trim_matches(|c: char| is_quote(c) || c.is_whitespace());
        let bare = between.is_empty()
            && !gap.is_empty()
            && gap.chars().all(|c| matches!(c, ',' | ';' | '&' | '/'));
        joins || (bare && !joined)
    }

    /// Marks the words that are words of the schema's names ([`SpanWord::names_schema`]):
    /// `names` holds them lowercased, each name whole without its separators (`todo`,
    /// `uberride`) and each of its words (`uber`, `ride`). A word compares lowercased,
    /// without `-`, `_` and `.`; a quoted word is the request's value, never a name.
    pub fn name_schema_words(&mut self, request: &str, names: &BTreeSet<String>) {
        for w in &mut self.words {
            let quoted = request[..w.at.start]
                .chars()
                .next_back()
                .is_some_and(is_quote)
                || request[w.at.end..].chars().next().is_some_and(is_quote);
            let key: String = w
                .text
                .chars()
                .filter(|c| !matches!(c, '-' | '_' | '.'))
                .flat_map(char::to_lowercase)
                .collect();
            w.names_schema = !quoted && names.contains(&key);
        }
    }

    /// Whether a span may start at word `i` (unused, and not inside a name begun before).
    pub fn starts_at(&self, i: usize) -> bool {
        let Some(w) = self.words.get(i) else {
            return false;
        };
        let opens_quotation =
            w.marked && w.may_start && (i == 0 || self.words[i - 1].gap.is_none());
        !w.used
            && (w.may_start || i == 0 || self.words[i - 1].used)
            && (opens_quotation || !START_NEVER.contains(&w.text.to_lowercase().as_str()))
            && self.ends_from(i)
    }

    /// Whether a span from word `i` can end somewhere (a name is not cut by a used word).
    fn ends_from(&self, mut i: usize) -> bool {
        while let Some(w) = self.words.get(i) {
            if w.used {
                return false;
            }
            if !w.joined {
                return true;
            }
            if w.gap.is_none() {
                return false;
            }
            i += 1;
        }
        false
    }

    /// Whether a span may continue from word `i` into word `i + 1`.
    pub fn continues(&self, i: usize) -> bool {
        self.words[i].gap.is_some()
            && self.words.get(i + 1).is_some_and(|n| !n.used)
            && self.ends_from(i + 1)
    }

    /// The spans themselves, in request order, of at most `max_words` words each, as text.
    pub fn texts(&self, max_words: usize) -> Vec<String> {
        self.spans(max_words).into_iter().map(|(_, t)| t).collect()
    }

    /// The spans in request order, of at most `max_words` words each: the words each
    /// takes (indices into [`Spans::words`]) and its text.
    pub fn spans(&self, max_words: usize) -> Vec<(std::ops::Range<usize>, String)> {
        (0..self.words.len())
            .flat_map(|i| {
                self.spans_from(i, max_words)
                    .into_iter()
                    .map(move |(j, t)| (i..j + 1, t))
            })
            .collect()
    }

    /// The spans that start on word `i`, each as (its last word, its text).
    fn spans_from(&self, i: usize, max_words: usize) -> Vec<(usize, String)> {
        let mut out = Vec::new();
        if !self.starts_at(i) {
            return out;
        }
        let mut text = String::new();
        let mut j = i;
        // A name or quotation runs on past `max_words` (it is taken whole or not at all).
        while j < self.words.len() && (j - i < max_words || (j > i && self.words[j - 1].joined)) {
            let w = &self.words[j];
            text.push_str(&w.text);
            // A value never ends on a function word, not even where the span cannot go
            // on (`file the` before a quotation); a quoted one is the request's own.
            let ends_on_function_word =
                !w.marked && END_WORDS.contains(&w.text.to_lowercase().as_str());
            if !w.joined && !ends_on_function_word {
                out.push((j, text.clone()));
            }
            if !self.continues(j) {
                break;
            }
            text.push_str(w.gap.as_deref().unwrap_or(" "));
            j += 1;
        }
        out
    }

    /// How many times `value` is spelt by a run of the request's words (used or not), as
    /// the request writes them.
    pub fn occurrences(&self, value: &str) -> usize {
        let mut all = self.clone();
        for w in &mut all.words {
            w.used = false;
        }
        let mut n = 0;
        while all.consume(value) {
            n += 1;
        }
        n
    }

    /// Marks the words within the request's bytes `span` as used: they name something
    /// else (a value found at a site, a call), so no span takes them.
    pub fn claim(&mut self, span: std::ops::Range<usize>) {
        for w in &mut self.words {
            if w.at.start < span.end && span.start < w.at.end {
                w.used = true;
            }
        }
    }

    /// Marks the words of the first unused span that spells `value` as used; whether one
    /// did.
    pub fn consume(&mut self, value: &str) -> bool {
        let n = self.words.len();
        for i in 0..n {
            let mut rest = value;
            let mut j = i;
            while j < n && !self.words[j].used {
                let w = &self.words[j].text;
                let Some(after) = strip_prefix_ci(rest, w) else {
                    break;
                };
                if after.is_empty() {
                    for k in i..=j {
                        self.words[k].used = true;
                    }
                    return true;
                }
                let Some(gap) = self.words[j].gap.as_deref() else {
                    break;
                };
                match strip_prefix_ci(after, gap) {
                    Some(r) => rest = r,
                    None => break,
                }
                j += 1;
            }
        }
        false
    }
}

/// Administrative divisions whose word, after a place's name, labels it rather than being
/// part of it (`Chatuchak District`, `Cook County`, `Chonburi Province`). Street words
/// (`Street`, `Avenue`) are part of a street's name and are not here.
const DIVISIONS: &[&str] = &[
    "district",
    "subdistrict",
    "county",
    "province",
    "prefecture",
    "municipality",
    "borough",
    "parish",
    "canton",
    "region",
];

/// Words a value never ends on (English function words): a span through them goes on to
/// the next word.
const END_WORDS: &[&str] = &[
    "a", "an", "and", "are", "as", "at", "but", "by", "for", "from", "if", "in", "is", "of", "on",
    "or", "please", "so", "that", "the", "then", "to", "was", "which", "with",
];
/// Words a value never starts with.
const START_NEVER: &[&str] = &["and", "but", "or", "please", "so", "then"];
/// The pronoun `I` and its contractions: written capitalized anywhere in a sentence, they
/// mark no value.
const FIRST_PERSON: &[&str] = &["i", "i'm", "i've", "i'd", "i'll"];
/// Words that are never a value by themselves (articles, pronouns, determiners): a single
/// word next to a field's name is offered to an optional field only if it is none of these.
const FUNCTION_WORDS: &[&str] = &[
    "a", "an", "the", "this", "that", "these", "those", "my", "your", "his", "her", "its", "our",
    "their", "me", "you", "him", "them", "us", "it", "i", "we", "they", "there", "here", "some",
    "any", "as", "of", "for", "with", "to", "in", "on", "at", "by", "is", "are", "be",
];
/// Words that join the items of a list (`Boston and Denver`, `Boston. Also Denver`).
const LIST_WORDS: &[&str] = &[
    "and", "or", "also", "plus", "then", "&", "vs", "versus", "both",
];
/// Words between a label and the code it labels (`order number is ORD-77`, `parcel no.
/// PX9K2`).
const LABEL_GAPS: &[&str] = &[
    "is", "was", "of", "no", "no.", "number", "called", "named", "id",
];
/// Words after which a request gives a name (`a timer called focus`).
const NAMING_WORDS: &[&str] = &[
    "called", "named", "titled", "labeled", "labelled", "entitled",
];

/// Words that begin a clause after a comma: a span does not run on into them.
const CLAUSE_WORDS: &[&str] = &[
    "and", "because", "but", "or", "so", "then", "which", "while", "who",
];

/// Words of requests and tool descriptions that say nothing of which tool is meant: a
/// request's manners (`can you please`) and the boilerplate tool descriptions share
/// (`retrieve the details of the specified …`).
const GENERIC_WORDS: &[&str] = &[
    "can",
    "could",
    "would",
    "will",
    "please",
    "get",
    "set",
    "do",
    "does",
    "what",
    "how",
    "use",
    "using",
    "used",
    "all",
    "if",
    "not",
    "no",
    "given",
    "specified",
    "specific",
    "based",
    "provided",
    "return",
    "returns",
    "retrieve",
    "retrieves",
    "information",
    "details",
    "from",
    "into",
];

/// Verbs that say what a call does to whatever it is about, not what it is about: many
/// tools share them (`find` of `FindMovies` and of `FindRestaurants`). A request's `find`
/// does not name one tool apart from the others ([`is_action`]).
const ACTION_WORDS: &[&str] = &[
    "find",
    "search",
    "look",
    "lookup",
    "show",
    "list",
    "check",
    "create",
    "add",
    "make",
    "update",
    "edit",
    "delete",
    "remove",
    "query",
    "fetch",
    "send",
    "play",
    "book",
    "buy",
    "start",
    "stop",
    "open",
    "run",
    "calculate",
    "compute",
    "generate",
    "view",
    "display",
    "reserve",
    "schedule",
    "change",
    "modify",
    "cancel",
    "help",
];

/// A stem ([`content_words`]) as two stems of one word compare: a final `y` read as `i`
/// (`movies` gives `movy`, `movie` gives `movi`).
pub(crate) fn stem_key(stem: &str) -> String {
    stem.strip_suffix('y')
        .map_or_else(|| stem.to_string(), |s| format!("{s}i"))
}

/// Whether `word` (a stem, as [`content_words`] gives it) is one of the [`ACTION_WORDS`].
pub(crate) fn is_action(word: &str) -> bool {
    ACTION_WORDS.iter().any(|w| stem(w) == word)
}

/// The words of `text` that can say what it is about, each reduced to a common stem
/// (`searching`, `searches` → `search`): alphabetic runs split at camel case
/// (`getWeather`: `get`, `weather`) and at any other character (`list_files`), lowercased,
/// less function words, list and clause words and [`GENERIC_WORDS`].
pub(crate) fn content_words(text: &str) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    let mut word = String::new();
    let mut flush = |word: &mut String| {
        let w = word.to_lowercase();
        word.clear();
        if w.chars().count() < 2
            || FUNCTION_WORDS.contains(&w.as_str())
            || LIST_WORDS.contains(&w.as_str())
            || CLAUSE_WORDS.contains(&w.as_str())
            || GENERIC_WORDS.contains(&w.as_str())
        {
            return;
        }
        out.insert(stem(&w));
    };
    let mut prev_lower = false;
    for c in text.chars() {
        if c.is_alphabetic() {
            if c.is_uppercase() && prev_lower {
                flush(&mut word);
            }
            word.push(c);
            prev_lower = c.is_lowercase();
        } else {
            flush(&mut word);
            prev_lower = false;
        }
    }
    flush(&mut word);
    out
}

/// `word` (lowercase) less a plural or verb ending and a final `e`, where four letters
/// stay: `searching`, `searches`, `search` → `search`; `invoices`, `invoiced`, `invoice`
/// → `invoic`; `categories` → `category`.
fn stem(word: &str) -> String {
    let len = word.chars().count();
    let mut w = if let Some(s) = word.strip_suffix("ies").filter(|_| len >= 6) {
        format!("{s}y")
    } else if let Some(s) = ["ing", "ed", "es"]
        .iter()
        .find_map(|suffix| word.strip_suffix(suffix).filter(|s| s.chars().count() >= 4))
    {
        s.to_string()
    } else if let Some(s) = word
        .strip_suffix('s')
        .filter(|s| !s.ends_with('s') && s.chars().count() >= 4)
    {
        s.to_string()
    } else {
        word.to_string()
    };
    if w.ends_with('e') && w.chars().count() > 4 {
        w.pop();
    }
    w
}

/// How much a request names each of several forms (tools): twice the request's words its
/// name has plus those only its description has ([`content_words`]). `forms`: each
/// form's name and description.
pub(crate) fn form_evidence(
    request: &BTreeSet<String>,
    forms: &[(&str, Option<&str>)],
) -> Vec<usize> {
    forms
        .iter()
        .map(|(name, doc)| {
            let named = content_words(name);
            let described = doc.map(content_words).unwrap_or_default();
            2 * named.intersection(request).count()
                + described
                    .difference(&named)
                    .filter(|w| request.contains(*w))
                    .count()
        })
        .collect()
}

/// Characters a word keeps at its edges (others are punctuation around it).
fn keeps_edge(c: char) -> bool {
    c.is_alphanumeric() || joins_previous(c) || matches!(c, '%' | '$' | '#' | '@' | '&' | '+')
}

/// Quotation marks, and `*` (Markdown's `**bold**` sets a passage apart as quotes do).
fn is_quote(c: char) -> bool {
    matches!(
        c,
        '"' | '\'' | '\u{201c}' | '\u{201d}' | '\u{2018}' | '\u{2019}' | '\u{300c}'
            ..='\u{300f}' // 「 」 『 』
            | '`' | '*'
    )
}

/// `request` with each escaped line break `\n` (a backslash and `n`) read as a line break
/// and a space, where it stands between lines: followed by another backslash, a capital,
/// a digit, Markdown (`*`, `-`, `#`), a space or the end. Followed by a lowercase letter
/// it is text (`C:\new`). `None` where there is none.
fn escaped_line_breaks(request: &str) -> Option<String> {
    let mut out: Option<String> = None;
    for (i, _) in request.match_indices("\\n") {
        let between_lines = request[i + 2..].chars().next().is_none_or(|c| {
            c == '\\'
                || c.is_uppercase()
                || c.is_ascii_digit()
                || c.is_whitespace()
                || matches!(c, '*' | '-' | '#')
        });
        if between_lines {
            // Two bytes for two bytes: offsets stay the request's.
            out.get_or_insert_with(|| request.to_string())
                .replace_range(i..i + 2, "\n ");
        }
    }
    out
}

/// Whether the text before a word ends a sentence.
fn words_end_sentence(before: &str) -> bool {
    let t = before.trim_end();
    t.is_empty()
        || (t.ends_with(['.', '?', '!', ':', '\n', '\u{3002}', '\u{ff1f}', '\u{ff01}'])
            && !ends_with_name_abbreviation(t))
}

/// Titles written before a name and abbreviated with a period (`Dr. Ruth Ames`).
const NAME_TITLES: &[&str] = &["mr", "mrs", "ms", "dr", "prof", "st", "mt", "ft"];

/// Whether `text` ends with an abbreviation that a name goes on after: an initial (`Ursula
/// K.`, `J. R. Tolkien`) or a title (`Dr.`); its period ends no sentence.
fn ends_with_name_abbreviation(text: &str) -> bool {
    let Some(t) = text.strip_suffix('.') else {
        return false;
    };
    let word = t
        .rsplit(|c: char| !c.is_alphabetic())
        .next()
        .unwrap_or_default();
    let before = &t[..t.len() - word.len()];
    let starts_word = before.is_empty() || before.ends_with(char::is_whitespace);
    let initial = word.chars().count() == 1 && word.chars().all(char::is_uppercase);
    starts_word && (initial || NAME_TITLES.contains(&word.to_lowercase().as_str()))
}

/// The punctuation of scripts written without spaces (Chinese, Japanese) that ends a
/// span: sentence and clause marks, the enumeration comma, brackets.
const ENDS_UNSPACED: &[char] = &[
    '\u{3001}', // 、
    '\u{3002}', // 。
    '\u{300a}', '\u{300b}', // 《 》
    '\u{3010}', '\u{3011}', // 【 】
    '\u{ff01}', // ！
    '\u{ff08}', '\u{ff09}', // （ ）
    '\u{ff0c}', // ，
    '\u{ff1a}', // ：
    '\u{ff1b}', // ；
    '\u{ff1f}', // ？
];

/// Whether `c` is a letter of a script written without spaces between words (Chinese
/// characters, kana, Thai, Lao): each is a word of its own to [`Spans`], so a span can be
/// any run of them, as a run of words is elsewhere.
fn unspaced(c: char) -> bool {
    matches!(c,
        '\u{3040}'..='\u{30ff}'     // hiragana, katakana
        | '\u{31f0}'..='\u{31ff}'   // katakana extensions
        | '\u{3400}'..='\u{4dbf}'   // CJK extension A
        | '\u{4e00}'..='\u{9fff}'   // CJK unified ideographs
        | '\u{f900}'..='\u{faff}'   // CJK compatibility ideographs
        | '\u{20000}'..='\u{2ffff}' // CJK extensions B and on
        | '\u{0e01}'..='\u{0e30}' | '\u{0e32}' | '\u{0e33}' | '\u{0e3f}'..='\u{0e46}' | '\u{0e4f}'..='\u{0e5b}' // Thai
        | '\u{0e81}'..='\u{0eb0}' | '\u{0eb2}' | '\u{0eb3}' | '\u{0ebd}'..='\u{0ec6}' | '\u{0ed0}'..='\u{0edf}' // Lao
    )
}

/// Whether `c` is a mark that belongs to the letter before it (Thai and Lao vowel and
/// tone marks), so that no word ends before it.
fn joins_previous(c: char) -> bool {
    matches!(c,
        '\u{0e31}' | '\u{0e34}'..='\u{0e3a}' | '\u{0e47}'..='\u{0e4e}'
        | '\u{0eb1}' | '\u{0eb4}'..='\u{0ebc}' | '\u{0ec8}'..='\u{0ecd}'
    ) || matches!(c, '\u{0300}'..='\u{036f}')
}

/// Opening brackets and quotation marks of scripts written without spaces.
fn opens_unspaced(c: char) -> bool {
    matches!(
        c,
        '\u{300c}' | '\u{300e}' | '\u{300a}' | '\u{3010}' | '\u{ff08}' | '(' | '[' | '{'
    )
}

/// The request's words as byte ranges, before their punctuation is trimmed: the runs
/// between white space, and inside a run each letter of a script written without spaces
/// ([`unspaced`]) on its own. Punctuation beside such a letter goes with the word it
/// belongs to: an opening quotation mark or bracket with the word after it, any other
/// with the word before it.
fn pieces(request: &str) -> Vec<(usize, usize)> {
    let mut out = Vec::new();
    let mut at = 0;
    for token in request.split_inclusive(char::is_whitespace) {
        let start = at;
        at += token.len();
        let token = token.trim_end();
        if token.is_empty() {
            continue;
        }
        if !token.chars().any(unspaced) {
            out.push((start, start + token.len()));
            continue;
        }
        // Split the token into letters of the unspaced scripts (with their marks), runs of
        // other letters and digits, and runs of punctuation; then give each punctuation run
        // to a neighbour.
        #[derive(PartialEq, Clone, Copy)]
        enum Kind {
            Unspaced,
            Other,
            Punct,
        }
        let mut parts: Vec<(usize, usize, Kind)> = Vec::new();
        for (i, c) in token.char_indices() {
            let kind = if unspaced(c) {
                Kind::Unspaced
            } else if keeps_edge(c) && !joins_previous(c) {
                Kind::Other
            } else if joins_previous(c) {
                // A mark stays with whatever came before it.
                parts.last().map_or(Kind::Punct, |p| p.2)
            } else {
                Kind::Punct
            };
            let e = i + c.len_utf8();
            match parts.last_mut() {
                Some(last) if last.2 == kind && (kind != Kind::Unspaced || joins_previous(c)) => {
                    last.1 = e
                }
                _ => parts.push((i, e, kind)),
            }
        }
        // Quotation marks inside the token open and close in turn.
        let mut open_quote = false;
        let mut words: Vec<(usize, usize)> = Vec::new();
        let mut pending: Option<usize> = None;
        let n = parts.len();
        for (k, &(s, e, kind)) in parts.iter().enumerate() {
            if kind != Kind::Punct {
                words.push((pending.take().unwrap_or(s), e));
                continue;
            }
            let text = &token[s..e];
            let quotes = text.chars().filter(|&c| is_quote(c)).count();
            let opening =
                text.chars().last().is_some_and(opens_unspaced) || (quotes % 2 == 1 && !open_quote);
            if quotes % 2 == 1 {
                open_quote = !open_quote;
            }
            if (opening || words.is_empty()) && k + 1 < n {
                pending = Some(pending.unwrap_or(s));
            } else if let Some(last) = words.last_mut() {
                last.1 = e;
            } else {
                words.push((pending.take().unwrap_or(s), e));
            }
        }
        if let Some(s) = pending {
            words.push((s, token.len()));
        }
        out.extend(words.into_iter().map(|(s, e)| (start + s, start + e)));
    }
    out
}

/// `s` without the prefix `p` (compared ignoring ASCII case).
fn strip_prefix_ci<'s>(s: &'s str, p: &str) -> Option<&'s str> {
    (s.len() >= p.len() && s.is_char_boundary(p.len()) && s[..p.len()].eq_ignore_ascii_case(p))
        .then(|| &s[p.len()..])
}

impl Restriction {
    /// The candidates at `path` (none: empty).
    pub fn at(&self, path: &str) -> &[Value] {
        self.candidates.get(path).map_or(&[], Vec::as_slice)
    }

    /// Whether the open site `site` still offers `v` as the request gives it: a string as
    /// a span of words no written value used, a number as one of the numbers left. `None`
    /// where `v` is no value copied from the request at that site (a choice, a catalog
    /// value at a closed site, a number at a site that takes none).
    pub fn offers_from_request(&self, site: &str, v: &Value) -> Option<bool> {
        match v {
            Value::String(s) if self.span_sites.contains(site) => {
                Some(self.spans.clone().consume(s))
            }
            Value::Number(_) if self.number_sites.contains(site) => {
                Some(self.numbers.iter().any(|n| same_value(n, v)))
            }
            _ => None,
        }
    }

    /// Whether no candidate is left anywhere.
    pub fn is_exhausted(&self) -> bool {
        self.candidates.values().all(Vec::is_empty)
    }

    /// Total number of candidate values (with repeats).
    pub fn len(&self) -> usize {
        self.candidates.values().map(Vec::len).sum()
    }

    /// Whether there is no candidate at all.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// A record reading (see [`Restriction::readings`]): the mention names the record at
    /// `record` (a call), so writing inside that record uses it.
    pub fn record_reading(record: &str) -> (String, Value) {
        (record.to_string(), Value::Null)
    }

    /// The values found at `site`, a site of the items of the list at `list`
    /// (`/*/main_dish/toppings/*/name` in `/*/main_dish/toppings`), that the list takes
    /// before it ends when [`Restriction::hold_lists`] is set: those whose every reading
    /// lies in the list's items and that modify no other value ([`Restriction::ties`]).
    /// None when the list's record is repeated (an array item) and another such record is
    /// still asked for: a field of it with two values found that no other record could
    /// take (`one cheeseburger with onions and one vegan burger with mayo`), since the
    /// values may then be the other record's.
    pub fn list_holds(&self, site: &str, list: &str) -> Vec<Value> {
        if !self.hold_lists {
            return Vec::new();
        }
        let record = parent(list);
        if record.split('/').any(|seg| seg == "*") {
            let outside = |v: &Value| {
                self.candidates
                    .iter()
                    .any(|(s, xs)| !below(s, record) && xs.iter().any(|x| same_value(x, v)))
            };
            let another = self.candidates.iter().any(|(s, xs)| {
                below(s, record)
                    && !s[record.len() + 1..].contains('/')
                    && !self.free.contains(s)
                    && xs.iter().filter(|x| !outside(x)).count() >= 2
            });
            if another {
                return Vec::new();
            }
        }
        self.at(site)
            .iter()
            .filter(|v| {
                let reads_outside = self.readings.iter().any(|g| {
                    g.iter().any(|(s, x)| s == site && same_value(x, v))
                        && g.iter().any(|(s, _)| !below(s, list))
                });
                let modifies = self
                    .ties
                    .iter()
                    .any(|((s, x), _)| s == site && same_value(x, v));
                !reads_outside && !modifies
            })
            .cloned()
            .collect()
    }

    /// The same restriction without its record readings (see [`Restriction::readings`]): a
    /// line being written uses no mention by naming its own record.
    pub fn without_record_readings(&self) -> Restriction {
        let mut r = self.clone();
        for g in &mut r.readings {
            g.retain(|(_, v)| !v.is_null());
        }
        r.readings.retain(|g| g.len() > 1);
        r
    }

    /// What is left once the (site path, value) pairs written so far are used up: one
    /// occurrence each, of the pair and of the other readings of its mention
    /// ([`Consume::Class`]), or of the value at every site ([`Consume::Value`]). With
    /// [`Consume::Class`], the first value written inside a record that a mention's record
    /// reading names uses that mention too.
    pub fn consumed(&self, used: &[(String, Value)], how: Consume) -> Restriction {
        let mut r = self.clone();
        if how != Consume::Off {
            for (s, v) in used {
                r.written.entry(s.clone()).or_default().push(v.clone());
            }
        }
        let take = |cands: &mut BTreeMap<String, Vec<Value>>, site: &str, v: &Value| {
            if let Some(list) = cands.get_mut(site) {
                if let Some(i) = list.iter().position(|c| same_value(c, v)) {
                    list.remove(i);
                }
            }
        };
        if how != Consume::Off {
            // A value written uses up the values named beside it in its clause at the same
            // site: they were alternatives to it, not values of other lines.
            for (site, v) in used {
                for ((s1, v1), (s2, v2)) in &self.alternatives {
                    // An alternative the line wrote too was a value of its own (a list's).
                    let written_too = used.iter().any(|(s, x)| s == s2 && same_value(x, v2));
                    if s1 == site && same_value(v1, v) && s2 == site && !written_too {
                        take(&mut r.candidates, s2, v2);
                    }
                }
            }
        }
        for (site, v) in used {
            match how {
                Consume::Class => {
                    // A mention with this reading alone (`a` before `burger`, where an `a`
                    // before `large` is still a number of any order) is the one written:
                    // the ambiguous mentions keep all their readings.
                    let occurrences = r.at(site).iter().filter(|c| same_value(c, v)).count();
                    let in_groups = r
                        .readings
                        .iter()
                        .filter(|g| g.iter().any(|(s, x)| s == site && same_value(x, v)))
                        .count();
                    take(&mut r.candidates, site, v);
                    // Of the mentions that could be it, the one with the fewest other
                    // readings: the `a` of "a lemonade, large" (the drink's, by its
                    // head) rather than the `a` of "a side order" (any order's), which
                    // then stays for the side.
                    let group = r
                        .readings
                        .iter()
                        .enumerate()
                        .filter(|(_, g)| g.iter().any(|(s, x)| s == site && same_value(x, v)))
                        .min_by_key(|(_, g)| g.len())
                        .map(|(i, _)| i)
                        .filter(|_| occurrences <= in_groups);
                    if let Some(g) = group {
                        let group = r.readings.remove(g);
                        let mut skipped = false;
                        for (s, x) in &group {
                            // The reading written was taken above (once).
                            if !skipped && s == site && same_value(x, v) {
                                skipped = true;
                                continue;
                            }
                            take(&mut r.candidates, s, x);
                        }
                    }
                    // A mention that named the record this value is written in.
                    let named = r.readings.iter().position(|g| {
                        g.iter().any(|(s, x)| {
                            x.is_null()
                                && site.len() > s.len()
                                && site.starts_with(s.as_str())
                                && site.as_bytes()[s.len()] == b'/'
                        })
                    });
                    if let Some(g) = named {
                        for (s, x) in r.readings.remove(g) {
                            if !x.is_null() {
                                take(&mut r.candidates, &s, &x);
                            }
                        }
                    }
                }
                Consume::Value => {
                    let sites: Vec<String> = r.candidates.keys().cloned().collect();
                    for s in sites {
                        take(&mut r.candidates, &s, v);
                    }
                }
                Consume::Off => {}
            }
            if how != Consume::Off {
                r.consume_open(site, v);
            }
        }
        if how != Consume::Off {
            r.share_choices(self, used);
        }
        r
    }

    /// A choice the request says once beside a list of names (`the weather in Lisbon and in
    /// Oslo, in celsius`) holds for the call of each name: once a line wrote it next to a
    /// span of the request, it is offered again at its site where no other value of the
    /// site is left. Written again it asks for no line of its own (the same value at a
    /// written site, [`Restriction::found_asks_for_a_line`]); a site with another value
    /// left (`Lisbon in celsius and Oslo in fahrenheit`) takes that one.
    fn share_choices(&mut self, before: &Restriction, used: &[(String, Value)]) {
        for (site, v) in used {
            let found = before
                .candidates
                .get(site)
                .is_some_and(|vs| vs.iter().any(|c| same_value(c, v)));
            let none_left = self.candidates.get(site).is_none_or(|vs| vs.is_empty());
            let beside_span = used.iter().any(|(s2, x)| {
                s2 != site
                    && parent(s2) == parent(site)
                    && x.is_string()
                    && before.span_sites.contains(s2)
                    && !before.bound.contains(s2)
            });
            if found && none_left && beside_span {
                self.candidates.insert(site.clone(), vec![v.clone()]);
            }
        }
    }

    /// Whether a value found and still unwritten asks for another line of a `lines`
    /// document after the lines written ([`Restriction::written`]): its site was written
    /// already with another value (a second city: a second call; the city written named
    /// again is no second one), or no line wrote anything in its part of
    /// a line item (the first segment below `/*`: another tool, another kind of order).
    /// A value whose site an earlier line of the same tool left empty belonged in that
    /// line: it is no evidence of a new one (a small model wrote a device's settings one
    /// per call, each a call of its own).
    pub fn found_asks_for_a_line(&self) -> bool {
        if self.written.is_empty() {
            return true;
        }
        let part = |s: &str| -> String { s.split('/').take(3).collect::<Vec<_>>().join("/") };
        self.candidates
            .iter()
            .filter(|(_, vs)| !vs.is_empty())
            .any(|(s, vs)| match self.written.get(s) {
                // Another value where one was written; the same value named again (a
                // status the request says twice) is one value, not a second.
                Some(ws) => vs.iter().any(|v| !ws.iter().any(|w| same_value(w, v))),
                None => {
                    let p = part(s);
                    !self.written.keys().any(|w| part(w) == p)
                }
            })
    }

    /// A value the model completed (`Boston, MA` from "in Boston",
    /// [`SpanPolicy::completed_tail`]): the span before its last comma is used.
    fn consume_completed(&mut self, s: &str) -> bool {
        s.rsplit_once(',')
            .is_some_and(|(head, _)| !head.is_empty() && self.spans.consume(head.trim_end()))
    }

    /// Uses up what a value written at an open site took from the request: its words
    /// ([`Restriction::spans`]), its number or its date.
    fn consume_open(&mut self, site: &str, v: &Value) {
        match v {
            Value::String(s) if self.span_sites.contains(site) => {
                let form = self.span_policy.get(site).and_then(|p| p.moment.as_ref());
                if crate::moments::consume_moment(&mut self.dates, form, s) {
                    // A date or time written uses up its moment (or the part written).
                } else if self.spans.consume(s) || self.consume_completed(s) {
                    // A number written inside a span (`2020 Main Street`) is used with it.
                    let spans = &self.spans;
                    self.numbers.retain(|n| {
                        let t = n.to_string();
                        let words = spans.words.iter().filter(|w| w.text == t);
                        words.clone().next().is_none() || words.clone().any(|w| !w.used)
                    });
                }
            }
            Value::String(s) => {
                // A choice or catalog value written (`express` for "Express") uses the
                // words that spell it: they are no value left for another line.
                self.spans.consume(s);
            }
            Value::Number(_) if self.number_sites.contains(site) => {
                if let Some(i) = self.numbers.iter().position(|n| same_value(n, v)) {
                    self.numbers.remove(i);
                    // Its digits are no span left to write.
                    self.spans.consume(&v.to_string());
                }
            }
            _ => {}
        }
    }
}

/// What leaves the candidates once a line is written (`--consume`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Consume {
    /// The (site, value) pair written.
    #[default]
    Class,
    /// The value, at every site.
    Value,
    /// Nothing: the grammar stays as first pruned.
    Off,
}

impl Consume {
    /// By name: `class`, `value`, `off`.
    pub fn from_name(name: &str) -> Option<Consume> {
        match name {
            "class" => Some(Consume::Class),
            "value" => Some(Consume::Value),
            "off" => Some(Consume::Off),
            _ => None,
        }
    }
}

/// Where the rest of a document starts: the lines written so far.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Resume {
    /// The whole document.
    #[default]
    Start,
    /// A block document after its line for field `field` (in the order the block writes
    /// its fields); a section with `items` lines so far.
    Block {
        /// Index into the block's written fields (plain lines first, then sections).
        field: usize,
        /// Lines of that section written so far (0 for a plain line).
        items: usize,
    },
    /// A root array written one item per line, after `items` lines.
    Lines {
        /// Lines written so far.
        items: usize,
    },
}

/// What the sites below a place say (see the module docs).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct Status {
    /// A site whose values are known (an enum, a tag, a bound free site).
    pub bound: bool,
    /// A bound site with a candidate.
    pub candidate: bool,
    /// A site with a candidate found among its own values (not the request's numbers).
    pub found: bool,
    /// A free site (or an unlisted, recursive part): anything may be meant.
    pub free: bool,
    /// A free site whose values nothing lists (not one whose values are known but left
    /// unpruned, [`Restriction::free`]): a request may mean a value of it unseen.
    pub open: bool,
}

impl Status {
    pub(crate) fn or(self, o: Status) -> Status {
        Status {
            bound: self.bound || o.bound,
            candidate: self.candidate || o.candidate,
            found: self.found || o.found,
            free: self.free || o.free,
            open: self.open || o.open,
        }
    }
    /// An optional part with nothing for it: left out.
    pub(crate) fn droppable(self) -> bool {
        self.bound && !self.candidate && !self.free
    }
    /// A union variant is kept when a site of it has a candidate, or it has no known site.
    pub(crate) fn keeps_variant(self) -> bool {
        self.candidate || !self.bound
    }
    /// Another line of a section is asked for: a site of its items has a candidate, or a
    /// value nothing lists (or no site is known). Sites left unpruned whose values are
    /// known (a field's role or data type) ask for none: the model went on writing fields
    /// nobody named after the found ones.
    pub(crate) fn asks_for_more(self) -> bool {
        self.candidate || self.open || !self.bound
    }
}

/// The path a site's value lies in: its record's (`/*/get_weather` of
/// `/*/get_weather/unit`).
fn parent(site: &str) -> &str {
    site.rsplit_once('/').map_or("", |(p, _)| p)
}

/// Whether the site path `site` lies below the path `path` (`/*/a/b` below `/*/a`).
pub(crate) fn below(site: &str, path: &str) -> bool {
    site.len() > path.len() && site.starts_with(path) && site.as_bytes()[path.len()] == b'/'
}

/// Whether a candidate equals a value of the schema (numbers by value: `1` is `1.0`).
pub(crate) fn same_value(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => x.as_f64() == y.as_f64(),
        _ => a == b,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_marked_word_joined_to_a_used_one_by_a_joining_word_is_joined_left() {
        let mut s = Spans::of("the weather in Lisbon and in Tallinn, in celsius");
        assert!(s.consume("Lisbon"));
        assert!(s.joined_left() && s.listed_left());
        // A bare comma lists (`listed_left`) but does not join: a place's parts.
        let mut s = Spans::of("the forecast for Marshall, MN on Friday");
        assert!(s.consume("Marshall"));
        assert!(s.listed_left() && !s.joined_left());
        // A pronoun is no value, and another word between breaks the list.
        let mut s = Spans::of("a table in Porto, and I'd like it at noon");
        assert!(s.consume("Porto"));
        assert!(!s.joined_left());
        let mut s = Spans::of("the plan 'Atlas', with its budget and Maria's notes");
        assert!(s.consume("Atlas"));
        assert!(!s.joined_left());
    }

    #[test]
    fn a_number_left_labelled_as_a_used_one_reads_as_another_line() {
        let mut s = Spans::of("a parcel of 3 kg over 120 km, and one of 7 kg over 40 km");
        assert!(!s.numbers_listed_left(), "nothing used yet");
        assert!(s.consume("3") && s.consume("120"));
        assert!(s.numbers_listed_left(), "`7 kg` as `3 kg`");
        assert!(s.consume("7") && s.consume("40"));
        assert!(!s.numbers_listed_left());
        // The label before the number counts too.
        let mut s = Spans::of("boards of width 4 and length 9, then width 6 and length 2");
        assert!(s.consume("4") && s.consume("9"));
        assert!(s.numbers_listed_left());
        // Listed with a used number.
        let mut s = Spans::of("circles of radius 5, 10 and 15");
        assert!(s.consume("5"));
        assert!(s.numbers_listed_left());
        // The words after it read as those after a used one, past a joining word.
        let mut s = Spans::of("convert 12 meters to feet, and 3 miles to kilometers");
        assert!(s.consume("12"));
        assert!(s.numbers_listed_left());
        let mut s = Spans::of("walk 5 km to the park and then rest 10 minutes");
        assert!(s.consume("5"));
        assert!(!s.numbers_listed_left());
        // A number labelled otherwise is part of the same call's values.
        let mut s = Spans::of("deliver to 221 Baker Street, apt 4");
        assert!(s.consume("221"));
        assert!(!s.numbers_listed_left());
    }

    #[test]
    fn a_value_left_asks_for_a_line_where_it_is_another_value_of_a_written_site() {
        let status = "/*/task.set/status".to_string();
        let city = "/*/weather/city".to_string();
        // "close the ticket, yes, close it": the status named twice.
        let r = Restriction {
            candidates: [(status.clone(), vec![json!("closed"), json!("closed")])].into(),
            ..Restriction::default()
        };
        assert!(r.found_asks_for_a_line(), "nothing written yet");
        let after = r.consumed(&[(status.clone(), json!("closed"))], Consume::Class);
        assert_eq!(after.at(&status), [json!("closed")]);
        assert!(
            !after.found_asks_for_a_line(),
            "the same value again is no second one"
        );
        // Two cities: the second asks for a second call.
        let r = Restriction {
            candidates: [(city.clone(), vec![json!("Oslo"), json!("Bergen")])].into(),
            ..Restriction::default()
        };
        let after = r.consumed(&[(city.clone(), json!("Oslo"))], Consume::Class);
        assert!(after.found_asks_for_a_line());
        assert_eq!(after.written.get(&city), Some(&vec![json!("Oslo")]));
        // Named in one clause ("move my trip from Oslo to Bergen"), they are
        // alternatives: the one written uses the other up.
        let pair = |a: &str, b: &str| ((city.clone(), json!(a)), (city.clone(), json!(b)));
        let r = Restriction {
            candidates: [(city.clone(), vec![json!("Oslo"), json!("Bergen")])].into(),
            alternatives: vec![pair("Oslo", "Bergen"), pair("Bergen", "Oslo")],
            ..Restriction::default()
        };
        let after = r.consumed(&[(city.clone(), json!("Bergen"))], Consume::Class);
        assert!(after.at(&city).is_empty(), "{:?}", after.at(&city));
        assert!(!after.found_asks_for_a_line());
        assert_eq!(
            r.consumed(&[(city.clone(), json!("Bergen"))], Consume::Off),
            r,
            "nothing is used up where consumption is off"
        );
    }

    #[test]
    fn a_word_names_a_call_where_a_value_of_its_own_is_left_near_it() {
        let names = |ws: &[&str]| ws.iter().flat_map(|w| content_words(w)).collect();
        let mut s = Spans::of("the weather in Oslo, and shipping a 4 kg box 300 km");
        assert!(s.consume("4") && s.consume("300"));
        // `weather` with `Oslo` after it; `shipping` has only used numbers near it.
        assert!(s.named_near(&names(&["weather"]), false, true));
        assert!(!s.named_near(&names(&["shipping"]), true, true));
        // A value before the word counts too; a number only where the call takes one.
        let s = Spans::of("what is 7 factorial");
        assert!(s.named_near(&names(&["factorial"]), true, false));
        assert!(!s.named_near(&names(&["factorial"]), false, true));
        // A value a line took stands between: the words belong to that line.
        let mut s = Spans::of("the forecast for Bergen on Sunday");
        assert!(s.consume("Bergen"));
        assert!(!s.named_near(&names(&["forecast"]), false, true));
        // A capitalized pronoun is no value, nor is a word too far away.
        let s = Spans::of("a timer please, I'm cooking pasta for my flatmates tonight at Ana's");
        assert!(!s.named_near(&names(&["timer"]), false, true));
        assert!(is_action("find") && is_action("creat") && !is_action("weather"));
    }

    #[test]
    fn a_request_names_the_forms_whose_names_and_descriptions_use_its_words() {
        let words = content_words("Could you find the parcelTracking records, searching by ID?");
        // Camel case and snake case split; endings dropped where four letters stay;
        // function words and a request's manners left out.
        for w in ["find", "parcel", "track", "record", "search", "id"] {
            assert!(words.contains(w), "{w} in {words:?}");
        }
        for w in ["could", "you", "the", "by"] {
            assert!(!words.contains(w), "{w} in {words:?}");
        }
        let request = content_words("search the archive for invoices sent in March");
        let forms = [
            ("archive_search", Some("Look up stored documents.")),
            ("send_invoice", Some("Email an invoice to a customer.")),
            ("resize_image", Some("Make a picture smaller.")),
        ];
        // `archive_search`: two words of its name (4); `send_invoice`: `invoice` (2) and
        // `sent` is no `send`; `resize_image`: none.
        assert_eq!(form_evidence(&request, &forms), vec![4, 2, 0]);
        // A word only the description has counts once.
        let request = content_words("find the stored documents");
        assert_eq!(form_evidence(&request, &forms), vec![2, 0, 0]);
    }

    #[test]
    fn a_value_s_form_is_the_punctuation_between_its_parts() {
        let form = ValueForm::of;
        assert!(form("Lisbon").is_plain() && form("extra spicy").is_plain());
        // Dashes, dots and apostrophes are no form.
        assert!(form("my-bot-id").is_plain() && form("St. Louis").is_plain());
        assert!(form("O'Brien").is_plain() && form("2.5").is_plain());
        assert_eq!(form("Austin, TX"), form("City, State (abbr)"));
        assert_eq!(form("Lyon, France"), form("Austin,TX"));
        assert_ne!(form("Austin, TX"), form("Austin"));
        // A trailing comma is no part.
        assert!(form("Austin,").is_plain());
        assert_eq!(form("octo/app"), form("owner/repo"));
        assert_eq!(form("ana@mail.org"), form("name@example.com"));
        assert_eq!(form("http://a.b/c:8"), form("https://example.com"));
        assert_ne!(form("https://example.com"), form("owner/repo"));
        assert_eq!(form("09:30"), form("HH:MM"));
    }

    fn words(request: &str) -> Spans {
        Spans::of(request)
    }

    #[test]
    fn a_field_whose_examples_have_a_form_takes_the_spans_of_that_form() {
        let policy = SpanPolicy {
            forms: vec![ValueForm::of("Austin, TX")],
            form_words: 2,
            ..SpanPolicy::default()
        };
        let s = words("book a table near the Alamo in San Antonio, TX for friday");
        let offered = policy.offered(&s, 8, false).expect("narrowed");
        assert!(
            offered.contains(&"San Antonio, TX".to_string()),
            "{offered:?}"
        );
        assert!(
            !offered.iter().any(|t| t == "San Antonio" || t == "Alamo"),
            "{offered:?}"
        );
        // At most one word more than the longest example.
        assert!(!offered.iter().any(|t| t.contains("Alamo")), "{offered:?}");
        // None of that form: a required field takes any span, an optional one none.
        let s = words("book a table in Austin for friday");
        assert_eq!(policy.offered(&s, 8, false), None);
        let optional = SpanPolicy {
            optional: true,
            ..policy.clone()
        };
        assert_eq!(optional.offered(&s, 8, false), Some(Vec::new()));
    }

    /// The policy of a required free string named `name`.
    fn named(name: &str) -> SpanPolicy {
        SpanPolicy {
            name_words: crate::sites::name_words(name),
            id_named: crate::sites::name_parts(name).iter().any(|w| w == "id"),
            ..SpanPolicy::default()
        }
    }

    #[test]
    fn a_division_s_word_labels_the_place_before_it_for_the_field_named_for_it() {
        let s = words(
            "find a cleaner in Kowloon, Sham Shui Po District, Shek Kip Mei Subdistrict, rated 4",
        );
        let some = |v: &[&str]| Some(v.iter().map(|t| t.to_string()).collect::<Vec<_>>());
        assert_eq!(
            named("district_name").offered(&s, 8, false),
            some(&["Sham Shui Po"])
        );
        assert_eq!(
            named("sub_district_name").offered(&s, 8, false),
            some(&["Shek Kip Mei"])
        );
        // Optional as well: the labelled place, not every marked span.
        let optional = SpanPolicy {
            optional: true,
            ..named("district")
        };
        assert_eq!(optional.offered(&s, 8, false), some(&["Sham Shui Po"]));
        assert_eq!(
            named("county").offered(&words("a plumber in Harris County today"), 8, false),
            some(&["Harris"])
        );
        // No division named, or a field not named for one: as before.
        let plain = words("find a cleaner in Kowloon");
        assert_eq!(named("district").offered(&plain, 8, false), None);
        assert_eq!(named("city").offered(&s, 8, false), None);
        // A street's word is part of its name.
        let street = words("deliver it to Nathan Road");
        assert_eq!(named("road").offered(&street, 8, false), None);
    }

    #[test]
    fn a_required_field_named_a_name_takes_the_marked_spans() {
        let s = words("write a short note to my brother, Tomas? I am Vera.");
        assert_eq!(
            named("sibling_name").offered(&s, 8, false),
            Some(vec!["Tomas".to_string(), "Vera".to_string()])
        );
        // Another field takes any span; with no marked span, so does a name.
        assert_eq!(named("note").offered(&s, 8, false), None);
        let plain = words("write a short note to my brother tomas");
        assert_eq!(named("sibling_name").offered(&plain, 8, false), None);
    }

    #[test]
    fn a_required_field_takes_the_code_the_request_labels_with_its_name() {
        let order = named("order");
        let parcel = named("parcel_number");
        let s = words("where is order ORD-77 for Ada? The parcel number is PX9K2.");
        assert_eq!(
            order.offered(&s, 8, false),
            Some(vec!["ORD-77".to_string()])
        );
        assert_eq!(
            parcel.offered(&s, 8, false),
            Some(vec!["PX9K2".to_string()])
        );
        // An `ID` between the label and the code is part of the label.
        let s = words("cancel the order ID B77X please");
        assert_eq!(order.offered(&s, 8, false), Some(vec!["B77X".to_string()]));
        // No label, or no code after it: any span, as for every required field.
        assert_eq!(order.offered(&words("where is ORD-77 now"), 8, false), None);
        assert_eq!(order.offered(&words("my order for Ada"), 8, false), None);
        // Digits alone are a code too; after `of` they are an amount.
        let account = named("account_id");
        let s = words("close account 55012 today");
        assert_eq!(
            account.offered(&s, 8, false),
            Some(vec!["55012".to_string()])
        );
        let s = words("look up the member with the ID 7781");
        assert_eq!(
            account.offered(&s, 8, false),
            Some(vec!["7781".to_string()])
        );
        // `ID` labels a code for a field whose name's `id` is its only short part too
        // (`user_id`: `user`, `id`), after a name that is no word of the field's.
        let user = named("user_id");
        let s = words("list the open tickets of Mara with ID T5521?");
        assert_eq!(user.offered(&s, 8, false), Some(vec!["T5521".to_string()]));
        assert_eq!(named("ticket_owner").offered(&s, 8, false), None);
        assert_eq!(
            order.offered(&words("an order of 300 for Ada"), 8, false),
            None
        );
        // `number` between the label and the code is part of the label, and a field
        // named `number` is still labelled by it.
        let device = named("deviceSerial");
        let s = words("alerts of the device with serial number ZK42-77QP today");
        assert_eq!(
            device.offered(&s, 8, false),
            Some(vec!["ZK42-77QP".to_string()])
        );
        let phone = named("phone_number");
        assert_eq!(
            phone.offered(&words("text number 5550142 now"), 8, false),
            Some(vec!["5550142".to_string()])
        );
        // A function word of the name labels nothing.
        let where_to = named("where_to");
        assert_eq!(
            where_to.offered(&words("a trip to 2 towns"), 8, false),
            None
        );
    }

    #[test]
    fn an_optional_field_takes_marked_spans_and_words_next_to_its_name() {
        let policy = SpanPolicy {
            optional: true,
            name_words: vec!["finish".into()],
            ..SpanPolicy::default()
        };
        let s = words("paint the shed in Forest Green with a matte finish by the weekend");
        let offered = policy.offered(&s, 8, false).expect("narrowed");
        assert!(offered.contains(&"Forest Green".to_string()), "{offered:?}");
        assert!(offered.contains(&"matte".to_string()), "{offered:?}");
        for plain in ["shed", "weekend", "paint the shed", "a", "matte finish"] {
            assert!(!offered.iter().any(|t| t == plain), "{plain}: {offered:?}");
        }
        // A function word next to the name is no value.
        let s = words("use their finish");
        assert_eq!(policy.offered(&s, 8, false), Some(Vec::new()));
        // A required field takes any span, except in a later line, where it takes the
        // marked ones while there are any.
        let required = SpanPolicy::default();
        let s = words("paint the shed in Forest Green");
        assert_eq!(required.offered(&s, 8, false), None);
        assert_eq!(
            required.offered(&s, 8, true),
            Some(vec!["Forest Green".to_string()])
        );
        assert_eq!(required.offered(&words("paint the shed"), 8, true), None);
        // A word that spells one of the schema's names labels a value; it is none itself.
        let request = "look up the order with ID 4411 for ACME";
        let mut s = words(request);
        s.name_schema_words(request, &["id".to_string()].into_iter().collect());
        assert_eq!(policy.offered(&s, 8, false), Some(vec!["ACME".to_string()]));
    }

    #[test]
    fn spans_are_whole_words_and_never_split_a_name() {
        let s =
            Spans::of("Ask Mary Ann Smith (the editor) about the \"Spring Sale\" in Boston, MA.");
        let words: Vec<&str> = s.words.iter().map(|w| w.text.as_str()).collect();
        assert_eq!(
            words,
            [
                "Ask", "Mary", "Ann", "Smith", "the", "editor", "about", "the", "Spring", "Sale",
                "in", "Boston", "MA"
            ]
        );
        let texts = s.texts(4);
        // A name is taken whole, a quoted phrase too; a span keeps the request's text.
        assert!(texts.contains(&"Mary Ann Smith".to_string()));
        assert!(texts.contains(&"Spring Sale".to_string()));
        assert!(texts.contains(&"Boston, MA".to_string()));
        // The sentence's first word joins the name after it; the name is a span of its own.
        assert!(
            texts.contains(&"Ask Mary Ann Smith".to_string()),
            "{texts:?}"
        );
        assert!(!texts.contains(&"Ask".to_string()), "{texts:?}");
        for cut in ["Mary", "Ann", "Ann Smith", "Mary Ann", "Spring", "Sale"] {
            assert!(!texts.contains(&cut.to_string()), "{cut}");
        }
        // Brackets end a span.
        assert!(!texts.iter().any(|t| t.contains("Smith the")));
        assert!(!texts.iter().any(|t| t.contains("editor about")));
    }

    #[test]
    fn a_span_of_a_script_without_spaces_is_any_run_of_its_letters() {
        // Chinese: each character a word, numbers whole, spans end at the script's
        // punctuation and at quotation marks, and a quotation is its own span.
        let s = Spans::of("帮我订3份'宫保鸡丁'，送到北京。谢谢");
        let words: Vec<&str> = s.words.iter().map(|w| w.text.as_str()).collect();
        assert_eq!(
            words,
            [
                "帮", "我", "订", "3", "份", "宫", "保", "鸡", "丁", "送", "到", "北", "京", "谢",
                "谢"
            ]
        );
        assert!(s.words[5].quoted && s.words[8].quoted && !s.words[9].quoted);
        let texts = s.texts(8);
        for want in ["宫保鸡丁", "北京", "送到北京", "3", "订3份"] {
            assert!(texts.iter().any(|t| t == want), "{want}: {texts:?}");
        }
        for never in ["份宫", "丁送", "京谢", "宫保鸡丁'"] {
            assert!(
                !texts.iter().any(|t| t.contains(never)),
                "{never}: {texts:?}"
            );
        }
        // Corner brackets quote as quotation marks do; a Latin word stays whole.
        let s = Spans::of("「東京タワー」の近くのhotelを探して");
        let texts = s.texts(8);
        assert!(texts.iter().any(|t| t == "東京タワー"), "{texts:?}");
        assert!(texts.iter().any(|t| t == "hotel"), "{texts:?}");
        assert!(
            !texts
                .iter()
                .any(|t| t.contains("ー」") || t.contains("タワーの")),
            "{texts:?}"
        );
        // Thai: a vowel or tone mark stays with its letter.
        let s = Spans::of("ร้านอาหาร");
        assert!(
            s.words.iter().all(|w| !w.text.starts_with(joins_previous)),
            "{s:?}"
        );
        assert_eq!(
            s.words.iter().map(|w| w.text.as_str()).collect::<String>(),
            "ร้านอาหาร"
        );
        // Text with spaces reads as before.
        let words: Vec<String> = Spans::of("a room in Porto, please")
            .words
            .into_iter()
            .map(|w| w.text)
            .collect();
        assert_eq!(words, ["a", "room", "in", "Porto", "please"]);
    }

    #[test]
    fn a_span_takes_a_name_that_begins_a_sentence_and_ends_before_a_clause() {
        let texts = Spans::of("Is it raining there? Santa Clara").texts(6);
        assert!(texts.contains(&"Santa Clara".to_string()), "{texts:?}");
        assert!(!texts.contains(&"Santa".to_string()), "{texts:?}");
        let texts = Spans::of("Show Ada Lovelace papers").texts(6);
        assert!(texts.contains(&"Ada Lovelace".to_string()), "{texts:?}");
        assert!(!texts.contains(&"Ada".to_string()), "{texts:?}");
        let texts = Spans::of("book a room in Porto Alegre, and send the bill to me").texts(8);
        assert!(texts.contains(&"Porto Alegre".to_string()), "{texts:?}");
        assert!(texts.contains(&"send the bill".to_string()), "{texts:?}");
        let texts_before_a_quote =
            Spans::of("Please file the 'quarterly plan' under work").texts(8);
        assert!(
            texts_before_a_quote.contains(&"quarterly plan".to_string()),
            "{texts_before_a_quote:?}"
        );
        assert!(
            !texts_before_a_quote
                .iter()
                .any(|t| t == "file the" || t == "the"),
            "{texts_before_a_quote:?}"
        );
        for t in texts.iter().chain(&texts_before_a_quote) {
            let last = t.rsplit(' ').next().unwrap_or_default();
            assert!(!END_WORDS.contains(&last), "{t:?} ends on a function word");
            assert!(
                !t.contains("Alegre, and"),
                "{t:?} runs into the next clause"
            );
            assert!(!t.starts_with("and "), "{t:?}");
        }
    }

    #[test]
    fn an_initial_or_a_title_before_a_name_ends_no_sentence() {
        let texts = Spans::of("find poems by Mary A. Oliver and Wendell Berry").texts(6);
        assert!(texts.contains(&"Mary A. Oliver".to_string()), "{texts:?}");
        assert!(
            !texts.iter().any(|t| t == "Mary A" || t == "Mary"),
            "{texts:?}"
        );
        let texts = Spans::of("book a visit with Dr. Lena Fox tomorrow").texts(6);
        assert!(texts.contains(&"Dr. Lena Fox".to_string()), "{texts:?}");
        // A sentence still ends after a word of its own.
        let texts = Spans::of("Email Bob. Then call Ana Diaz").texts(6);
        assert!(!texts.iter().any(|t| t.contains("Bob. Then")), "{texts:?}");
    }

    #[test]
    fn a_contraction_cut_from_its_word_opens_no_quotation() {
        let spans = Spans::of("'m flying to Quito on Monday");
        assert!(!spans.words.iter().any(|w| w.quoted), "{spans:?}");
        assert!(Spans::of("label it 'fragile'").words[2].quoted);
    }

    #[test]
    fn words_after_a_naming_word_are_a_name_given() {
        let spans = Spans::of("set a timer called tea break for 4 minutes");
        let texts = spans.texts(6);
        assert!(texts.contains(&"tea break".to_string()), "{texts:?}");
        let marked: Vec<&str> = spans
            .words
            .iter()
            .filter(|w| w.marked)
            .map(|w| w.text.as_str())
            .collect();
        assert_eq!(marked, ["tea", "break"]);
        // A function word ends the name.
        let spans = Spans::of("a list named the chores");
        assert!(!spans.words.iter().any(|w| w.marked), "{spans:?}");
    }

    #[test]
    fn a_consumed_span_leaves_the_words_around_it() {
        let mut s = Spans::of("copy the file notes.txt to the backup folder");
        assert!(s.consume("notes.txt"));
        assert!(s.consume("backup folder"));
        assert!(!s.consume("backup"), "each word once");
        let texts = s.texts(8);
        assert!(texts.contains(&"copy the file".to_string()));
        assert!(
            !texts.contains(&"to the".to_string()),
            "no value ends on `the`"
        );
        assert!(!texts
            .iter()
            .any(|t| t.contains("notes") || t.contains("folder")));
    }

    #[test]
    fn quoted_named_and_coded_words_are_marked_as_values() {
        let marked = |s: &Spans| -> Vec<String> {
            s.words
                .iter()
                .filter(|w| w.marked)
                .map(|w| w.text.clone())
                .collect()
        };
        let s =
            Spans::of("Please send the 'Q3 plan' to Ada Lovelace in NYC about ticket ab-12 today");
        assert_eq!(
            marked(&s),
            ["Q3", "plan", "Ada", "Lovelace", "NYC", "ab-12"]
        );
        let mut s = s;
        for v in ["Q3 plan", "Ada Lovelace", "NYC", "ab-12"] {
            assert!(s.marked_left());
            assert!(s.consume(v), "{v}");
        }
        assert!(!s.marked_left(), "only plain words are left");
        // The pronoun `I` is written capitalized; it names nothing.
        let s = Spans::of("Tomorrow I'm in Oslo, so I think I\u{2019}ll need I'd say a cab");
        assert_eq!(marked(&s), ["Oslo"]);
    }

    #[test]
    fn a_name_left_reads_as_another_value_where_quoted_or_listed() {
        let left = |request: &str, written: &str| {
            let mut s = Spans::of(request);
            assert!(s.consume(written), "{written}");
            s.listed_left()
        };
        assert!(left("ship crates to Denver and Austin", "Denver"));
        assert!(left("ship crates to Denver, Austin", "Denver"));
        assert!(left("ship crates to Austin and then to Denver", "Denver"));
        assert!(left("ship crates to Denver. Also to Austin", "Denver"));
        assert!(left("label it 'fragile' then maybe 'urgent'", "fragile"));
        assert!(left("ship 3 crates to Denver and 2 to Austin", "Denver"));
        assert!(left("note down buy milk and call Rosa", "buy milk"));
        assert!(left(
            "ship crates to Denver, Salt Lake City and Austin",
            "Denver"
        ));
        assert!(!left("ship crates to Denver for my cousin Rosa", "Denver"));
        assert!(!left(
            "ship crates to Denver and then wait for my cousin Rosa",
            "Denver"
        ));
        assert!(!left("label it 'fragile'. Thanks, Rosa", "fragile"));
        assert!(!left(
            "ship crates to Denver, the city where Rosa works",
            "Denver"
        ));
    }

    #[test]
    fn a_quotation_keeps_the_question_or_exclamation_it_ends_with() {
        let s = Spans::of("translate 'Where is the station?' and 'Stop!', please. Thanks?");
        let texts = s.texts(8);
        assert!(
            texts.iter().any(|t| t == "Where is the station?"),
            "{texts:?}"
        );
        assert!(texts.iter().any(|t| t == "Stop!"), "{texts:?}");
        // Outside quotes, punctuation ends a value and is no part of it.
        assert!(texts.iter().any(|t| t == "Thanks"), "{texts:?}");
        assert!(!texts.iter().any(|t| t == "Thanks?"), "{texts:?}");
        let mut s = s;
        assert!(s.consume("Where is the station?"));
    }

    #[test]
    fn a_quotation_is_offered_whole_however_long() {
        let long = "Please type the name of the folder you want to back up tonight:";
        let texts = Spans::of(&format!("show the prompt '{long}' to the user")).texts(8);
        assert!(texts.iter().any(|t| t == long), "{texts:?}");
        // Markdown's bold sets a passage apart as quotes do.
        let texts = Spans::of("Reply with **The meeting moved to Friday.** only").texts(8);
        assert!(
            texts.iter().any(|t| t == "The meeting moved to Friday."),
            "{texts:?}"
        );
        assert!(!texts.iter().any(|t| t == "meeting"), "{texts:?}");
    }

    #[test]
    fn escaped_line_breaks_end_a_span_and_paths_keep_theirs() {
        let s = Spans::of("Here is the summary:\\n\\nSales rose in May");
        let words: Vec<&str> = s.words.iter().map(|w| w.text.as_str()).collect();
        assert_eq!(
            words,
            ["Here", "is", "the", "summary", "Sales", "rose", "in", "May"]
        );
        let texts = s.texts(8);
        assert!(texts.iter().any(|t| t == "Sales rose in May"), "{texts:?}");
        assert!(
            !texts
                .iter()
                .any(|t| t.contains("summary") && t.contains("Sales")),
            "{texts:?}"
        );
        let s = Spans::of("open C:\\notes\\plan.txt now");
        assert!(s.words.iter().any(|w| w.text == "C:\\notes\\plan.txt"));
    }

    #[test]
    fn writing_a_value_uses_its_span_number_or_date() {
        let r = Restriction {
            spans: Spans::of("rename the report weekly summary"),
            span_sites: ["/title".to_string()].into(),
            numbers: vec![json!(2), json!(2.5)],
            number_sites: ["/n".to_string()].into(),
            ..Restriction::default()
        };
        let used = [
            ("/title".to_string(), json!("weekly summary")),
            ("/n".to_string(), json!(2.5)),
            ("/other".to_string(), json!(2)),
        ];
        let after = r.consumed(&used, Consume::Class);
        assert_eq!(after.numbers, vec![json!(2)], "only a number site's number");
        let texts = after.spans.texts(8);
        assert!(texts.contains(&"rename the report".to_string()));
        assert!(!texts
            .iter()
            .any(|t| t.contains("weekly") || t.contains("summary")));
        // Consumption off: nothing is used.
        assert_eq!(r.consumed(&used, Consume::Off), r);
        assert_eq!(after.written.len(), 3, "the sites written are noted");
        // A choice written uses the words that spell it, whatever their case.
        let r = Restriction {
            spans: Spans::of("ship the parcel by Express to depot Core-7"),
            span_sites: ["/host".to_string()].into(),
            ..Restriction::default()
        };
        let after = r.consumed(&[("/kind".to_string(), json!("express"))], Consume::Class);
        assert!(after.spans.marked_left(), "Core-7 is left");
        let texts = after.spans.texts(8);
        assert!(!texts.iter().any(|t| t.contains("Express")), "{texts:?}");
        let after = after.consumed(&[("/host".to_string(), json!("Core-7"))], Consume::Class);
        assert!(!after.spans.marked_left());
    }

    #[test]
    fn a_number_written_inside_a_span_is_used_and_a_number_written_uses_its_word() {
        let r = Restriction {
            spans: Spans::of("meet at 221 Elm Street in 15 minutes or 20"),
            span_sites: ["/place".to_string()].into(),
            numbers: vec![json!(221), json!(15), json!(20)],
            number_sites: ["/wait".to_string()].into(),
            ..Restriction::default()
        };
        let used = [
            ("/place".to_string(), json!("221 Elm Street")),
            ("/wait".to_string(), json!(15)),
        ];
        let after = r.consumed(&used, Consume::Class);
        assert_eq!(after.numbers, vec![json!(20)]);
        let texts = after.spans.texts(8);
        assert!(!texts.iter().any(|t| t.contains("15")), "{texts:?}");
        assert!(texts.contains(&"20".to_string()), "{texts:?}");
    }
}
