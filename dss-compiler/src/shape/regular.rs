//! Regular constraints: what a JSON Schema says of a string (`pattern`, `format`,
//! `minLength`/`maxLength`) or of an integer's text (`minimum`/`maximum`) as regular
//! expressions, and their deterministic automaton, from which the grammars write one rule
//! per state (`grammar/regular.rs`) and against which the decoder checks the value.
//!
//! Every constraint is a regular expression in the `regex` crate's syntax with search
//! semantics (a pattern matches anywhere unless anchored, as ECMA `RegExp.test`);
//! [`ecma`] rewrites an ECMA `pattern` into it (`\d`, `\w`, `\s` and `.` with their ECMA
//! meanings). The automaton ([`Dfa`]) is over characters (Unicode scalar values); it is
//! built from `regex-syntax`'s HIR by a Thompson NFA and the subset construction, for
//! several constraints at once (their intersection), and is deterministic, so the rules
//! printed from it read the same under PEG (pest) and CFG (GBNF, Lark).
//!
//! Outside the subset (look-around, back-references, `\b` and anchors inside the
//! pattern, repetition counts above [`MAX_REPEAT`], classes of more than [`MAX_RANGES`]
//! ranges, automata above [`MAX_STATES`] states) a constraint is left to the validator:
//! [`Unsupported`] says why.

use regex_syntax::hir::{Class, Hir, HirKind, Look};
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::sync::{Arc, Mutex, OnceLock};

/// Largest repetition count (`{m,n}`) translated into a grammar.
pub(crate) const MAX_REPEAT: u32 = 256;
/// Most ranges of one character class (`\p{L}` has hundreds) translated into a grammar.
pub(crate) const MAX_RANGES: usize = 128;
/// Most states of the automaton of one string's constraints (one grammar rule each).
pub(crate) const MAX_STATES: usize = 400;
/// Largest `maxLength` (and `minLength`) in an automaton with other constraints.
pub(crate) const MAX_LENGTH: u64 = 64;
/// Largest `maxLength` (and `minLength`) of a string with no other regular constraint,
/// written as a bounded repetition of a JSON string character (`char{0,255}`).
pub(crate) const MAX_LENGTH_ALONE: u64 = 1000;
/// Most NFA states built while translating (bounded repetitions are copied).
const MAX_NFA: usize = 20_000;

/// A regular constraint of a value's text: where it came from and its regular expression.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub struct RegularCheck {
    /// The keyword (`pattern`, `format`, `length`, `range`).
    pub keyword: String,
    /// What the schema says, for messages and the readable grammar (the pattern, the
    /// format's name, `1..64`).
    pub source: String,
    /// The regular expression (the `regex` crate's syntax, search semantics).
    pub regex: String,
}

/// Why a constraint is not in the grammar (it is left to the validator).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Unsupported(pub String);

/// A deterministic automaton over characters: state 0 is the start; every state can reach
/// an accepting one.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Dfa {
    pub states: Vec<DState>,
}

/// One state of a [`Dfa`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct DState {
    /// The text may end here.
    pub accept: bool,
    /// Disjoint character ranges and the state each leads to, in character order.
    pub next: Vec<(Vec<(char, char)>, usize)>,
}

// ---------------------------------------------------------------------------------------
// Sources: ECMA patterns, formats, lengths, integer ranges.

/// An ECMA-262 `pattern` in the `regex` crate's syntax: `\d`, `\w`, `\s` (and their
/// negations) and `.` with their ECMA meanings, `[` literal inside a class, `\/` as `/`,
/// `\0` as NUL. Anything else is left as written (and rejected by [`check`] where the
/// syntaxes differ in a way that matters: look-around, back-references).
pub(crate) fn ecma(pattern: &str) -> String {
    const S: &str = r"\t\n\x0B\x0C\r \x{A0}\x{1680}\x{2000}-\x{200A}\x{2028}\x{2029}\x{202F}\x{205F}\x{3000}\x{FEFF}";
    let mut out = String::with_capacity(pattern.len() + 8);
    let mut in_class = false;
    let mut chars = pattern.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\\' => {
                let Some(e) = chars.next() else {
                    out.push('\\');
                    break;
                };
                let text = match (e, in_class) {
                    ('d', false) => "[0-9]".to_string(),
                    ('d', true) => "0-9".to_string(),
                    ('D', _) => "[^0-9]".to_string(),
                    ('w', false) => "[0-9A-Za-z_]".to_string(),
                    ('w', true) => "0-9A-Za-z_".to_string(),
                    ('W', _) => "[^0-9A-Za-z_]".to_string(),
                    ('s', false) => format!("[{S}]"),
                    ('s', true) => S.to_string(),
                    ('S', _) => format!("[^{S}]"),
                    ('b', true) => r"\x08".to_string(),
                    ('/', _) => "/".to_string(),
                    ('0', _) if !chars.peek().is_some_and(char::is_ascii_digit) => {
                        r"\x00".to_string()
                    }
                    (e, _) => format!("\\{e}"),
                };
                out.push_str(&text);
            }
            '.' if !in_class => out.push_str(r"[^\n\r\x{2028}\x{2029}]"),
            '[' if !in_class => {
                in_class = true;
                out.push('[');
                if chars.peek() == Some(&'^') {
                    chars.next();
                    out.push('^');
                }
                // ECMA `[]` matches nothing, `[^]` everything; a leading `]` is not literal.
                if chars.peek() == Some(&']') {
                    chars.next();
                    in_class = false;
                    out.pop();
                    let negated = out.ends_with('[');
                    if negated {
                        out.pop();
                        out.push_str(r"[\x{0}-\x{10FFFF}]");
                    } else {
                        out.pop();
                        out.push_str(r"[^\x{0}-\x{10FFFF}]");
                    }
                }
            }
            '[' => out.push_str(r"\["),
            ']' if in_class => {
                in_class = false;
                out.push(']');
            }
            '&' | '~' if in_class => {
                out.push('\\');
                out.push(c);
            }
            c => out.push(c),
        }
    }
    out
}

/// The regular expression of a `format` ([`None`]: not one dss writes in a grammar).
/// Regular approximations that admit only valid values, stricter than the RFCs where a
/// regular expression would be large: `time` and `date-time` without leap seconds,
/// `email` with a dot-atom local part (no quoted strings, no IP literals), `hostname`
/// labels without two hyphens in a row, of at most 32 letters and digits (63 characters
/// with hyphens; the total length is not bounded), `uri` with a
/// scheme and RFC 3986's syntax without IP literals (a host after `//` may be empty
/// only before a path: `file:///x`, not `http://`), `uri-reference` as `uri` or a
/// relative reference, `ipv6` without an embedded IPv4 part, `duration` as RFC 3339's
/// appendix A (components in order).
pub(crate) fn format_regex(format: &str) -> Option<String> {
    let date = r"(?:[0-9]{4}-(?:(?:0[1-9]|1[0-2])-(?:0[1-9]|1[0-9]|2[0-8])|(?:0[13-9]|1[0-2])-(?:29|30)|(?:0[13578]|1[02])-31)|(?:[0-9]{2}(?:0[48]|[2468][048]|[13579][26])|(?:[02468][048]|[13579][26])00)-02-29)";
    let time = r"(?:[01][0-9]|2[0-3]):[0-5][0-9]:[0-5][0-9](?:\.[0-9]+)?(?:[Zz]|[+-](?:[01][0-9]|2[0-3]):[0-5][0-9])";
    // No two hyphens in a row (`ab--c` is reserved for IDNA), at most 63 characters.
    let label = r"[A-Za-z0-9](?:[A-Za-z0-9]|-[A-Za-z0-9]){0,31}";
    let host = format!(r"{label}(?:\.{label})*");
    let h = "[0-9A-Fa-f]{1,4}";
    let octet = r"(?:25[0-5]|2[0-4][0-9]|1[0-9][0-9]|[1-9]?[0-9])";
    let body = match format {
        "date" => date.to_string(),
        "time" => time.to_string(),
        "date-time" => format!("{date}[Tt]{time}"),
        "email" => {
            let atom = r"[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]+";
            format!(r"{atom}(?:\.{atom})*@{host}")
        }
        "hostname" => host,
        "uri" | "uri-reference" => {
            // RFC 3986 without IP literals; an empty host after `//` only before a path
            // (`file:///tmp`).
            let pct = "%[0-9A-Fa-f]{2}";
            let pchar = format!("(?:[A-Za-z0-9._~!$&'()*+,;=:@-]|{pct})");
            let nocolon = format!("(?:[A-Za-z0-9._~!$&'()*+,;=@-]|{pct})");
            let query = format!("(?:[A-Za-z0-9._~!$&'()*+,;=:@/?-]|{pct})*");
            let host = format!("(?:[A-Za-z0-9._~!$&'()*+,;=-]|{pct})+");
            let user = format!("(?:[A-Za-z0-9._~!$&'()*+,;=:-]|{pct})*");
            let authority = format!(
                "//(?:{user}@)?{host}(?::[0-9]*)?(?:/{pchar}*)*|//(?:/{pchar}*)+|/(?:{pchar}+(?:/{pchar}*)*)?"
            );
            let tail = format!(r"(?:\?{query})?(?:#{query})?");
            let uri =
                format!("[A-Za-z][A-Za-z0-9+.-]*:(?:{authority}|{pchar}+(?:/{pchar}*)*|){tail}");
            if format == "uri" {
                uri
            } else {
                // Or a relative reference: its first segment has no `:`.
                format!("{uri}|(?:{authority}|{nocolon}+(?:/{pchar}*)*|){tail}")
            }
        }
        "duration" => {
            // RFC 3339 appendix A: components in order, none skipped between two.
            let time = r"T(?:[0-9]+H(?:[0-9]+M(?:[0-9]+S)?)?|[0-9]+M(?:[0-9]+S)?|[0-9]+S)";
            let date = r"(?:[0-9]+Y(?:[0-9]+M(?:[0-9]+D)?)?|[0-9]+M(?:[0-9]+D)?|[0-9]+D)";
            format!("P(?:{date}(?:{time})?|{time}|[0-9]+W)")
        }
        "uuid" => "[0-9A-Fa-f]{8}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{12}"
            .to_string(),
        "ipv4" => format!(r"{octet}(?:\.{octet}){{3}}"),
        "ipv6" => [
            format!("(?:{h}:){{7}}{h}"),
            format!("(?:{h}:){{1,7}}:"),
            format!("(?:{h}:){{1,6}}:{h}"),
            format!("(?:{h}:){{1,5}}(?::{h}){{1,2}}"),
            format!("(?:{h}:){{1,4}}(?::{h}){{1,3}}"),
            format!("(?:{h}:){{1,3}}(?::{h}){{1,4}}"),
            format!("(?:{h}:){{1,2}}(?::{h}){{1,5}}"),
            format!("{h}:(?::{h}){{1,6}}"),
            format!(":(?:(?::{h}){{1,7}}|:)"),
        ]
        .join("|"),
        _ => return None,
    };
    Some(format!("^(?:{body})$"))
}

/// The regular expression of a length between `min` and `max` characters (`None`: no
/// upper bound), where both are at most `cap`.
pub(crate) fn length_regex(min: u64, max: Option<u64>, cap: u64) -> Option<String> {
    if min > cap || max.is_some_and(|m| m > cap || m < min) {
        return None;
    }
    Some(match max {
        Some(max) => format!("^(?s:.){{{min},{max}}}$"),
        None => format!("^(?s:.){{{min},}}$"),
    })
}

/// The regular expression of the text of an integer in `[min, max]` (`None`: unbounded),
/// written as the encoder writes integers (`-12`, also `12.0`); `None` where the grammar
/// cannot say it (no lower bound, or a negative lower bound without an upper one) or the
/// range is empty.
pub(crate) fn range_regex(min: Option<i64>, max: Option<i64>) -> Option<String> {
    let min = min?;
    if max.is_none() && min < 0 {
        return None;
    }
    if max.is_some_and(|m| m < min) {
        return None;
    }
    let mut alts: Vec<String> = Vec::new();
    if min < 0 {
        // Negative part: -[max(1, -max) .. -min].
        let hi = min.unsigned_abs();
        let lo = match max {
            Some(m) if m < 0 => m.unsigned_abs(),
            _ => 1,
        };
        alts.extend(
            positive_range(lo, Some(hi))
                .into_iter()
                .map(|a| format!("-{a}")),
        );
    }
    if max.is_none_or(|m| m >= 0) {
        let lo = min.max(0) as u64;
        let hi = max.map(|m| m as u64);
        if lo == 0 {
            alts.push("0".into());
            if hi != Some(0) {
                alts.extend(positive_range(1, hi));
            }
        } else {
            alts.extend(positive_range(lo, hi));
        }
    }
    Some(format!(r"^(?:{})(?:\.0+)?$", alts.join("|")))
}

/// Alternatives matching exactly the decimal numerals of `[lo, hi]` (`lo >= 1`, no
/// leading zeros; `hi` `None`: unbounded): the classic split of a range into ranges of
/// the form `prefix [a-b] [0-9]{k}`.
fn positive_range(lo: u64, hi: Option<u64>) -> Vec<String> {
    let Some(hi) = hi else {
        // [lo, 10^d - 1], then every numeral of more digits.
        let d = lo.to_string().len() as u32;
        let mut alts = match 10u64.checked_pow(d) {
            Some(p) => positive_range(lo, Some(p - 1)),
            None => positive_range(lo, Some(u64::MAX)),
        };
        alts.push(format!("[1-9][0-9]{{{d},}}"));
        return alts;
    };
    let mut stops = BTreeSet::new();
    stops.insert(hi);
    let digits = |n: u64| n.to_string();
    let mut nines = 1usize;
    loop {
        let s = digits(lo);
        let keep = s.len().saturating_sub(nines);
        let stop: Option<u64> = format!("{}{}", &s[..keep], "9".repeat(nines)).parse().ok();
        match stop {
            Some(stop) if lo <= stop && stop <= hi => {
                stops.insert(stop);
                nines += 1;
            }
            _ => break,
        }
    }
    let mut zeros = 1u32;
    while let Some(p) = 10u64.checked_pow(zeros) {
        let Some(next) = hi.checked_add(1) else {
            break;
        };
        let stop = (next - next % p).checked_sub(1);
        match stop {
            Some(stop) if lo < stop && stop <= hi => {
                stops.insert(stop);
                zeros += 1;
            }
            _ => break,
        }
    }
    let mut alts = Vec::new();
    let mut start = lo;
    for stop in stops {
        if stop < start {
            continue;
        }
        alts.push(range_pattern(start, stop));
        start = stop.saturating_add(1);
    }
    alts
}

/// The pattern of `[a, b]` where `a` and `b` have as many digits and differ first at one
/// position, after which `a` has only `0`s and `b` only `9`s.
fn range_pattern(a: u64, b: u64) -> String {
    let (a, b) = (a.to_string(), b.to_string());
    let mut out = String::new();
    let mut any = 0;
    for (x, y) in a.chars().zip(b.chars()) {
        if x == y {
            out.push(x);
        } else if x != '0' || y != '9' {
            out.push_str(&format!("[{x}-{y}]"));
        } else {
            any += 1;
        }
    }
    if any > 0 {
        out.push_str(&format!("[0-9]{{{any}}}"));
    }
    out
}

// ---------------------------------------------------------------------------------------
// Regex -> NFA -> DFA.

/// A regular expression over characters, after anchors are resolved.
#[derive(Debug, Clone)]
enum Re {
    Class(Vec<(char, char)>),
    Seq(Vec<Re>),
    Alt(Vec<Re>),
    Rep(Box<Re>, u32, Option<u32>),
    /// `^`: only before the first character.
    Start,
    /// `$`: only after the last character.
    End,
}

fn any_char() -> Re {
    Re::Class(vec![('\0', char::MAX)])
}

/// `regex`'s HIR, with search semantics (an unanchored side matches anything).
fn parse(regex: &str) -> Result<Re, Unsupported> {
    let hir = regex_syntax::ParserBuilder::new()
        .build()
        .parse(regex)
        .map_err(|e| Unsupported(short_error(&e)))?;
    top(&hir)
}

/// A parse error's kind, without the pattern echoed over several lines.
fn short_error(e: &regex_syntax::Error) -> String {
    match e {
        regex_syntax::Error::Parse(p) => p.kind().to_string(),
        regex_syntax::Error::Translate(t) => t.kind().to_string(),
        _ => e.to_string(),
    }
}

fn top(h: &Hir) -> Result<Re, Unsupported> {
    match h.kind() {
        HirKind::Alternation(xs) => Ok(Re::Alt(xs.iter().map(top).collect::<Result<_, _>>()?)),
        HirKind::Capture(c) => top(&c.sub),
        HirKind::Look(Look::Start) => Ok(Re::Seq(vec![Re::Rep(Box::new(any_char()), 0, None)])),
        HirKind::Look(Look::End) => Ok(Re::Seq(vec![Re::Rep(Box::new(any_char()), 0, None)])),
        kind => {
            let items: &[Hir] = match kind {
                HirKind::Concat(xs) => xs,
                _ => std::slice::from_ref(h),
            };
            let mut items = items;
            let mut start = false;
            while let Some(first) = items.first() {
                if matches!(first.kind(), HirKind::Look(Look::Start)) {
                    start = true;
                    items = &items[1..];
                } else {
                    break;
                }
            }
            let mut end = false;
            while let Some(last) = items.last() {
                if matches!(last.kind(), HirKind::Look(Look::End)) {
                    end = true;
                    items = &items[..items.len() - 1];
                } else {
                    break;
                }
            }
            let mut seq = Vec::new();
            if !start {
                seq.push(Re::Rep(Box::new(any_char()), 0, None));
            }
            for x in items {
                seq.push(conv(x)?);
            }
            if !end {
                seq.push(Re::Rep(Box::new(any_char()), 0, None));
            }
            Ok(Re::Seq(seq))
        }
    }
}

fn conv(h: &Hir) -> Result<Re, Unsupported> {
    Ok(match h.kind() {
        HirKind::Empty => Re::Seq(Vec::new()),
        HirKind::Literal(l) => {
            let s = std::str::from_utf8(&l.0)
                .map_err(|_| Unsupported("a literal that is not UTF-8".into()))?;
            Re::Seq(s.chars().map(|c| Re::Class(vec![(c, c)])).collect())
        }
        HirKind::Class(Class::Unicode(c)) => {
            if c.ranges().len() > MAX_RANGES {
                return Err(Unsupported(format!(
                    "a character class of more than {MAX_RANGES} ranges"
                )));
            }
            Re::Class(c.ranges().iter().map(|r| (r.start(), r.end())).collect())
        }
        HirKind::Class(Class::Bytes(_)) => {
            return Err(Unsupported("a byte class".into()));
        }
        HirKind::Look(Look::Start) => Re::Start,
        HirKind::Look(Look::End) => Re::End,
        HirKind::Look(l) => {
            return Err(Unsupported(format!(
                "the assertion {l:?} (a word boundary or a multi-line anchor)"
            )))
        }
        HirKind::Repetition(r) => {
            if r.min > MAX_REPEAT || r.max.is_some_and(|m| m > MAX_REPEAT) {
                return Err(Unsupported(format!(
                    "a repetition count above {MAX_REPEAT}"
                )));
            }
            Re::Rep(Box::new(conv(&r.sub)?), r.min, r.max)
        }
        HirKind::Capture(c) => conv(&c.sub)?,
        HirKind::Concat(xs) => Re::Seq(xs.iter().map(conv).collect::<Result<_, _>>()?),
        HirKind::Alternation(xs) => Re::Alt(xs.iter().map(conv).collect::<Result<_, _>>()?),
    })
}

/// A Thompson NFA: epsilon edges and character-range edges.
#[derive(Default)]
struct Nfa {
    eps: Vec<Vec<usize>>,
    edges: Vec<Vec<(char, char, usize)>>,
    /// Epsilon edges taken only before the first character (`^`).
    start_eps: Vec<(usize, usize)>,
    /// Epsilon edges taken only after the last character (`$`).
    end_eps: Vec<(usize, usize)>,
}

impl Nfa {
    fn state(&mut self) -> Result<usize, Unsupported> {
        if self.eps.len() >= MAX_NFA {
            return Err(Unsupported("an automaton too large for a grammar".into()));
        }
        self.eps.push(Vec::new());
        self.edges.push(Vec::new());
        Ok(self.eps.len() - 1)
    }

    /// Adds `re` from state `from`; returns its end state.
    fn add(&mut self, re: &Re, from: usize) -> Result<usize, Unsupported> {
        match re {
            Re::Start | Re::End => {
                let to = self.state()?;
                if matches!(re, Re::Start) {
                    self.start_eps.push((from, to));
                } else {
                    self.end_eps.push((from, to));
                }
                Ok(to)
            }
            Re::Class(ranges) => {
                let to = self.state()?;
                for &(a, b) in ranges {
                    self.edges[from].push((a, b, to));
                }
                Ok(to)
            }
            Re::Seq(xs) => {
                let mut at = from;
                for x in xs {
                    at = self.add(x, at)?;
                }
                Ok(at)
            }
            Re::Alt(xs) => {
                let to = self.state()?;
                for x in xs {
                    let s = self.state()?;
                    self.eps[from].push(s);
                    let e = self.add(x, s)?;
                    self.eps[e].push(to);
                }
                Ok(to)
            }
            Re::Rep(x, min, max) => {
                let mut at = from;
                for _ in 0..*min {
                    at = self.add(x, at)?;
                }
                match max {
                    None => {
                        let loop_start = self.state()?;
                        self.eps[at].push(loop_start);
                        let e = self.add(x, loop_start)?;
                        self.eps[e].push(loop_start);
                        Ok(loop_start)
                    }
                    Some(max) => {
                        let to = self.state()?;
                        self.eps[at].push(to);
                        for _ in *min..*max {
                            at = self.add(x, at)?;
                            self.eps[at].push(to);
                        }
                        Ok(to)
                    }
                }
            }
        }
    }

    fn closure(&self, set: &mut BTreeSet<usize>) {
        self.closure_with(set, &[]);
    }

    /// The closure over epsilon edges and the `extra` anchor edges (`^` at the start,
    /// `$` at the end).
    fn closure_with(&self, set: &mut BTreeSet<usize>, extra: &[(usize, usize)]) {
        let mut todo: Vec<usize> = set.iter().copied().collect();
        while let Some(s) = todo.pop() {
            let anchored = extra.iter().filter(|e| e.0 == s).map(|e| e.1);
            for t in self.eps[s].iter().copied().chain(anchored) {
                if set.insert(t) {
                    todo.push(t);
                }
            }
        }
    }
}

/// Checks that `regex` is in the translated subset; `Ok` with nothing to say.
pub(crate) fn check(regex: &str) -> Result<(), Unsupported> {
    dfa(&[regex]).map(|_| ())
}

/// Automata built, by their regular expressions: a schema repeats its patterns and
/// formats, and the shapes, the grammar and the report each ask for them.
type Cache = HashMap<Vec<String>, Result<Arc<Dfa>, Unsupported>>;
static CACHE: OnceLock<Mutex<Cache>> = OnceLock::new();
/// Most automata kept (beyond, the cache starts over).
const CACHE_SIZE: usize = 512;

/// The automaton of the texts matching every one of `regexes` (built once per process).
pub(crate) fn dfa(regexes: &[&str]) -> Result<Arc<Dfa>, Unsupported> {
    let key: Vec<String> = regexes.iter().map(|r| r.to_string()).collect();
    let cache = CACHE.get_or_init(Default::default);
    if let Some(hit) = cache.lock().ok().and_then(|c| c.get(&key).cloned()) {
        return hit;
    }
    let built = build_dfa(regexes).map(Arc::new);
    if let Ok(mut c) = cache.lock() {
        if c.len() >= CACHE_SIZE {
            c.clear();
        }
        c.insert(key, built.clone());
    }
    built
}

fn build_dfa(regexes: &[&str]) -> Result<Dfa, Unsupported> {
    let mut nfas = Vec::new();
    for r in regexes {
        let re = parse(r)?;
        let mut nfa = Nfa::default();
        let start = nfa.state()?;
        let accept = nfa.add(&re, start)?;
        nfas.push((nfa, start, accept));
    }
    type Key = Vec<BTreeSet<usize>>;
    let mut start: Key = Vec::new();
    for (nfa, s, _) in &nfas {
        let mut set = BTreeSet::from([*s]);
        nfa.closure_with(&mut set, &nfa.start_eps);
        start.push(set);
    }
    let mut ids: HashMap<Key, usize> = HashMap::new();
    let mut keys: Vec<Key> = vec![start.clone()];
    ids.insert(start, 0);
    let mut states: Vec<DState> = Vec::new();
    let mut i = 0;
    while i < keys.len() {
        let key = keys[i].clone();
        let accept = key.iter().zip(&nfas).all(|(set, (nfa, _, acc))| {
            if nfa.end_eps.is_empty() {
                return set.contains(acc);
            }
            let mut at_end = set.clone();
            nfa.closure_with(&mut at_end, &nfa.end_eps);
            at_end.contains(acc)
        });
        // The boundaries of every range leaving this state, in every automaton.
        let mut points: BTreeSet<u32> = BTreeSet::new();
        for (set, (nfa, _, _)) in key.iter().zip(&nfas) {
            for &s in set {
                for &(a, b, _) in &nfa.edges[s] {
                    points.insert(a as u32);
                    points.insert(b as u32 + 1);
                }
            }
        }
        let points: Vec<u32> = points.into_iter().collect();
        let mut by_target: BTreeMap<usize, Vec<(char, char)>> = BTreeMap::new();
        for w in points.windows(2) {
            let (lo, hi) = (w[0], w[1] - 1);
            let (Some(a), Some(b)) = (char_at_or_after(lo, hi), char_at_or_before(hi, lo)) else {
                continue;
            };
            let mut next: Key = Vec::with_capacity(key.len());
            for (set, (nfa, _, _)) in key.iter().zip(&nfas) {
                let mut n = BTreeSet::new();
                for &s in set {
                    for &(x, y, t) in &nfa.edges[s] {
                        if x <= a && b <= y {
                            n.insert(t);
                        }
                    }
                }
                nfa.closure(&mut n);
                next.push(n);
            }
            if next.iter().any(BTreeSet::is_empty) {
                continue;
            }
            let id = match ids.get(&next) {
                Some(&id) => id,
                None => {
                    if keys.len() >= MAX_STATES * 4 {
                        return Err(Unsupported(format!(
                            "an automaton of more than {MAX_STATES} states"
                        )));
                    }
                    keys.push(next.clone());
                    ids.insert(next, keys.len() - 1);
                    keys.len() - 1
                }
            };
            let ranges = by_target.entry(id).or_default();
            match ranges.last_mut() {
                Some(last) if last.1 as u32 + 1 == a as u32 => last.1 = b,
                _ => ranges.push((a, b)),
            }
        }
        let mut next: Vec<(Vec<(char, char)>, usize)> =
            by_target.into_iter().map(|(t, r)| (r, t)).collect();
        next.sort_by_key(|(r, _)| r.first().map(|x| x.0));
        states.push(DState { accept, next });
        i += 1;
    }
    prune_dead(states)
}

/// The first character in `lo..=hi` (skipping surrogates).
fn char_at_or_after(lo: u32, hi: u32) -> Option<char> {
    (lo..=hi).find_map(char::from_u32)
}
/// The last character in `lo..=hi` (skipping surrogates).
fn char_at_or_before(hi: u32, lo: u32) -> Option<char> {
    (lo..=hi).rev().find_map(char::from_u32)
}

/// Drops the states that cannot reach an accepting one, renumbers the rest in order of
/// first reach, and checks the size.
fn prune_dead(states: Vec<DState>) -> Result<Dfa, Unsupported> {
    let n = states.len();
    let mut live = vec![false; n];
    let mut changed = true;
    for (i, s) in states.iter().enumerate() {
        live[i] = s.accept;
    }
    while changed {
        changed = false;
        for i in 0..n {
            if !live[i] && states[i].next.iter().any(|(_, t)| live[*t]) {
                live[i] = true;
                changed = true;
            }
        }
    }
    if !live[0] {
        return Err(Unsupported("no string matches".into()));
    }
    let mut order = vec![usize::MAX; n];
    let mut queue = vec![0usize];
    order[0] = 0;
    let mut count = 1;
    let mut k = 0;
    while k < queue.len() {
        let s = queue[k];
        k += 1;
        for (_, t) in &states[s].next {
            if live[*t] && order[*t] == usize::MAX {
                order[*t] = count;
                count += 1;
                queue.push(*t);
            }
        }
    }
    if count > MAX_STATES {
        return Err(Unsupported(format!(
            "an automaton of more than {MAX_STATES} states"
        )));
    }
    let mut out = vec![
        DState {
            accept: false,
            next: Vec::new()
        };
        count
    ];
    for s in queue {
        out[order[s]] = DState {
            accept: states[s].accept,
            next: states[s]
                .next
                .iter()
                .filter(|(_, t)| live[*t])
                .map(|(r, t)| (r.clone(), order[*t]))
                .collect(),
        };
    }
    Ok(minimize(Dfa { states: out }))
}

/// A state's class and its moves (character range, class of the target).
type Signature = (usize, Vec<(char, char, usize)>);

/// The minimal automaton of the same language (Moore's partition refinement), states in
/// order of first reach from the start.
fn minimize(dfa: Dfa) -> Dfa {
    let n = dfa.states.len();
    let mut class: Vec<usize> = dfa.states.iter().map(|s| usize::from(s.accept)).collect();
    loop {
        // A state's signature: its class and where each character leads, by class.
        let mut sigs: HashMap<Signature, usize> = HashMap::new();
        let mut next_class = vec![0; n];
        for (i, s) in dfa.states.iter().enumerate() {
            let mut moves: Vec<(char, char, usize)> = s
                .next
                .iter()
                .flat_map(|(rs, t)| rs.iter().map(move |&(a, b)| (a, b, *t)))
                .map(|(a, b, t)| (a, b, class[t]))
                .collect();
            moves.sort();
            let mut merged: Vec<(char, char, usize)> = Vec::new();
            for m in moves {
                match merged.last_mut() {
                    Some(last) if last.2 == m.2 && last.1 as u32 + 1 == m.0 as u32 => last.1 = m.1,
                    _ => merged.push(m),
                }
            }
            let k = sigs.len();
            next_class[i] = *sigs.entry((class[i], merged)).or_insert(k);
        }
        let stable = sigs.len() == class.iter().collect::<BTreeSet<_>>().len();
        class = next_class;
        if stable {
            break;
        }
    }
    // Renumber the classes in order of first reach.
    let mut order: HashMap<usize, usize> = HashMap::new();
    let mut queue = vec![0usize];
    order.insert(class[0], 0);
    let mut k = 0;
    while k < queue.len() {
        let s = queue[k];
        k += 1;
        for (_, t) in &dfa.states[s].next {
            if !order.contains_key(&class[*t]) {
                order.insert(class[*t], order.len());
                queue.push(*t);
            }
        }
    }
    let mut states = vec![
        DState {
            accept: false,
            next: Vec::new()
        };
        order.len()
    ];
    for s in queue {
        let mut by_target: BTreeMap<usize, Vec<(char, char)>> = BTreeMap::new();
        for (rs, t) in &dfa.states[s].next {
            by_target
                .entry(order[&class[*t]])
                .or_default()
                .extend(rs.iter().copied());
        }
        let mut next: Vec<(Vec<(char, char)>, usize)> = by_target
            .into_iter()
            .map(|(t, mut rs)| {
                rs.sort();
                let mut merged: Vec<(char, char)> = Vec::new();
                for (a, b) in rs {
                    match merged.last_mut() {
                        Some(last) if last.1 as u32 + 1 == a as u32 => last.1 = b,
                        _ => merged.push((a, b)),
                    }
                }
                (merged, t)
            })
            .collect();
        next.sort_by_key(|(r, _)| r.first().map(|x| x.0));
        states[order[&class[s]]] = DState {
            accept: dfa.states[s].accept,
            next,
        };
    }
    Dfa { states }
}

impl RegularCheck {
    /// The bounds of a `length` constraint (`min..max`, `min..`).
    pub(crate) fn length_bounds(&self) -> Option<(u64, Option<u64>)> {
        if self.keyword != "length" {
            return None;
        }
        let (lo, hi) = self.source.split_once("..")?;
        let hi = if hi.is_empty() {
            None
        } else {
            Some(hi.parse().ok()?)
        };
        Some((lo.parse().ok()?, hi))
    }
}

impl Dfa {
    /// Whether the automaton accepts `s` (the tests' oracle).
    #[cfg(test)]
    pub(crate) fn accepts(&self, s: &str) -> bool {
        let mut at = 0;
        for c in s.chars() {
            let next = self.states[at]
                .next
                .iter()
                .find(|(rs, _)| rs.iter().any(|&(a, b)| a <= c && c <= b));
            match next {
                Some((_, t)) => at = *t,
                None => return false,
            }
        }
        self.states[at].accept
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rx(r: &str) -> regex::Regex {
        regex::Regex::new(r).unwrap()
    }

    /// The automaton and the `regex` crate agree on every sample.
    fn agree(regex: &str, samples: &[&str]) {
        let d = dfa(&[regex]).unwrap();
        let r = rx(regex);
        for s in samples {
            assert_eq!(d.accepts(s), r.is_match(s), "{regex} on {s:?}");
        }
    }

    #[test]
    fn anchored_and_unanchored_patterns() {
        let samples = ["", "12:30", "2pm", "x12:30", "12:30x", "29:99", "02:5"];
        agree("^[0-2][0-9]:[0-5][0-9]$", &samples);
        agree("[0-2][0-9]:[0-5][0-9]", &samples);
        agree("^[0-2][0-9]", &samples);
        agree("[0-5][0-9]$", &samples);
        agree("^a|b$", &["a", "xa", "ab", "b", "bx", ""]);
        agree("^(ab|cd)*$", &["", "ab", "abcd", "abc", "cdab"]);
        agree("^x{2,4}$", &["x", "xx", "xxxx", "xxxxx"]);
        agree("^(?:a+b?){2}$", &["aa", "ab", "aab", "abab", "b", "aabb"]);
        // Anchors inside groups and alternatives.
        let more = [
            "", "a", "b", "ab", "ba", "a,", ",", "x,y", "aXb", "1.5", "1.5e-3", "2024",
        ];
        agree("^([^,]|$)", &more);
        agree("(^a$)|b", &more);
        agree("^(a$|b)", &more);
        // Nothing matches these: the validator alone says so.
        assert!(check("a^b").is_err() && check("a$b").is_err());
        agree(r"^(\d{4}$)|(^\d+\.\d+$)", &more);
        agree(r"^[0-9.]+(?:e-?[0-9]+)?$|^x$", &more);
    }

    #[test]
    fn ecma_classes() {
        let d = ecma(r"^\d+\.\w*$");
        assert_eq!(d, r"^[0-9]+\.[0-9A-Za-z_]*$");
        agree(&d, &["1.", "12.a_", "١.", "1x"]);
        let any = ecma("^.$");
        agree(&any, &["a", "\n", "\r", "é"]);
        assert!(dfa(&[&ecma(r"^[\d\s]$")]).unwrap().accepts("\u{a0}"));
        assert_eq!(ecma(r"a\/b[[x]"), r"a/b[\[x]");
    }

    #[test]
    fn unsupported_is_reported() {
        for p in [
            r"(?=a)b",
            r"(a)\1",
            r"\bword\b",
            r"a^b",
            "x{1000}",
            r"\p{L}",
        ] {
            assert!(check(&ecma(p)).is_err(), "{p}");
        }
        assert!(check("^[a-z]{1,100}$").is_ok());
    }

    #[test]
    fn intersection_of_constraints() {
        let len = length_regex(2, Some(3), MAX_LENGTH).unwrap();
        let d = dfa(&["^[a-z]+$", &len]).unwrap();
        for (s, ok) in [
            ("a", false),
            ("ab", true),
            ("abc", true),
            ("abcd", false),
            ("A1", false),
        ] {
            assert_eq!(d.accepts(s), ok, "{s}");
        }
        assert!(dfa(&["^a$", "^b$"]).is_err());
    }

    #[test]
    fn integer_ranges() {
        for (lo, hi) in [
            (Some(1), Some(10)),
            (Some(0), Some(0)),
            (Some(7), Some(1234)),
            (Some(-15), Some(23)),
            (Some(-300), Some(-20)),
            (Some(5), None),
            (Some(0), None),
            (Some(99), None),
            (Some(1000), Some(1000)),
            (Some(-353), Some(519)),
            (Some(0), Some(99)),
            (Some(5), Some(1999)),
            (Some(19), Some(19)),
            (Some(10), Some(999)),
        ] {
            let r = range_regex(lo, hi).unwrap();
            let d = dfa(&[&r]).unwrap();
            let re = rx(&r);
            for n in -1500i64..1500 {
                let inside = lo.is_none_or(|l| n >= l) && hi.is_none_or(|h| n <= h);
                let s = n.to_string();
                assert_eq!(re.is_match(&s), inside, "{r} on {s}");
                assert_eq!(d.accepts(&s), inside, "{r} (dfa) on {s}");
            }
            assert!(!re.is_match("007"));
        }
        assert_eq!(
            range_regex(Some(1), Some(10)).unwrap(),
            r"^(?:[1-9]|10)(?:\.0+)?$"
        );
        assert!(rx(&range_regex(Some(1), Some(10)).unwrap()).is_match("3.0"));
        assert!(range_regex(None, Some(10)).is_none());
        assert!(range_regex(Some(-1), None).is_none());
        assert!(range_regex(Some(3), Some(2)).is_none());
        assert!(range_regex(Some(0), Some(i64::MAX)).is_some());
    }

    #[test]
    fn formats_admit_valid_values_only() {
        let cases: &[(&str, &[&str], &[&str])] = &[
            (
                "date",
                &["2024-01-31", "2024-02-29", "2000-02-29"],
                &[
                    "2023-02-29",
                    "1900-02-29",
                    "2024-13-01",
                    "2024-04-31",
                    "24-01-01",
                ],
            ),
            (
                "time",
                &["12:30:00Z", "23:59:59.5+01:00"],
                &["24:00:00Z", "12:30", "2pm", "12:30:00"],
            ),
            (
                "date-time",
                &["2024-01-31T12:00:00Z", "2024-01-31t12:00:00.123-05:30"],
                &["2024-01-31 12:00", "2024-01-31"],
            ),
            (
                "email",
                &["a@b.co", "first.last+tag@example-mail.com"],
                &["a@", "@b.c", "a b@c.d", "a@-b.c", "a..b@c.d"],
            ),
            (
                "hostname",
                &["example.com", "a", "x-1.y"],
                &["-a.com", "a-.com", "a..b", ""],
            ),
            (
                "uri",
                &[
                    "https://example.com/a?b=c#d",
                    "urn:isbn:123",
                    "mailto:a@b.c",
                ],
                &["example.com", "http://a b", "1http://x"],
            ),
            (
                "uuid",
                &["123e4567-e89b-12d3-a456-426614174000"],
                &[
                    "123e4567e89b12d3a456426614174000",
                    "g23e4567-e89b-12d3-a456-426614174000",
                ],
            ),
            (
                "ipv4",
                &["127.0.0.1", "255.255.255.255"],
                &["256.0.0.1", "1.2.3", "01.2.3.4"],
            ),
            (
                "ipv6",
                &["::1", "::", "2001:db8::ff00:42:8329", "1:2:3:4:5:6:7:8"],
                &["1:2:3:4:5:6:7:8:9", "1::2::3", ":1", "12345::"],
            ),
        ];
        for (f, good, bad) in cases {
            let r = format_regex(f).unwrap();
            let d = dfa(&[&r]).unwrap_or_else(|e| panic!("{f}: {e:?}"));
            for s in *good {
                assert!(d.accepts(s) && rx(&r).is_match(s), "{f} rejects {s}");
            }
            for s in *bad {
                assert!(!d.accepts(s) && !rx(&r).is_match(s), "{f} accepts {s}");
            }
        }
        assert!(format_regex("color").is_none());
        let rel = format_regex("uri-reference").unwrap();
        for (x, ok) in [
            ("../a/b?c", true),
            ("#frag", true),
            ("", true),
            ("a:b", true),
            ("//h/p", true),
            ("a b", false),
            ("%zz", false),
        ] {
            assert_eq!(rx(&rel).is_match(x), ok, "{x}");
        }
        let dur = format_regex("duration").unwrap();
        for (x, ok) in [
            ("P1Y2M3DT4H5M6S", true),
            ("PT1M", true),
            ("P3W", true),
            ("P1D", true),
            ("P", false),
            ("P1Y2D", false),
            ("PT", false),
            ("1D", false),
        ] {
            assert_eq!(
                rx(&dur).is_match(x) && dfa(&[&dur]).unwrap().accepts(x),
                ok,
                "{x}"
            );
        }
    }
}
