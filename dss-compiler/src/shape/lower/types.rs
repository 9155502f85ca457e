//! The `type` keyword, and what a grammar can say of the numbers and strings it admits:
//! lower bounds (`minimum`/`exclusiveMinimum`), integer ranges, and lexical forms
//! (`pattern`, `format`, `minLength`/`maxLength`; see `shape/regular.rs`).

use crate::shape::model::{IntRange, Lexical, Lower, NumPart, Parts};
use crate::shape::regular::{self, RegularCheck};
use serde_json::{Map, Value};

/// Restricts `parts` (every type) to the types `type` names, and gives its numbers and
/// strings the bounds and lexical forms a grammar can say.
pub(super) fn lower_type(m: &Map<String, Value>, formats_assert: bool, parts: &mut Parts) {
    if let Some(t) = m.get("type") {
        let names: Vec<&str> = match t {
            Value::String(s) => vec![s.as_str()],
            Value::Array(xs) => xs.iter().filter_map(Value::as_str).collect(),
            _ => vec!["null", "boolean", "number", "string", "array", "object"],
        };
        let has = |n: &str| names.contains(&n);
        parts.null = has("null");
        parts.bool_false = has("boolean");
        parts.bool_true = has("boolean");
        parts.number = (has("number") || has("integer")).then(|| NumPart {
            integer: !has("number"),
            values: None,
            lower: None,
            range: None,
        });
        if !has("string") {
            parts.string = None;
        }
        if !has("array") {
            parts.array = None;
        }
        if !has("object") {
            parts.object = None;
        }
    }
    if let Some(np) = &mut parts.number {
        np.lower = lower_bound(m, np.integer);
        if np.integer {
            np.range = int_range(m);
        }
    }
    if let Some(sp) = &mut parts.string {
        sp.lexical = lexical_form(m, formats_assert).0;
    }
}

/// An integer bound: a lower one (`lower`) rounded up, an upper one rounded down, one
/// past an exclusive bound; `None` beyond what the grammar's ranges carry or not a number.
fn int_bound(v: &Value, lower: bool, exclusive: bool) -> Option<i64> {
    const LIMIT: f64 = 1e15;
    let f = v.as_f64()?;
    if !f.is_finite() || f.abs() > LIMIT {
        return None;
    }
    let x = match (lower, exclusive) {
        (true, false) => f.ceil(),
        (false, false) => f.floor(),
        (true, true) => f.floor() + 1.0,
        (false, true) => f.ceil() - 1.0,
    };
    Some(x as i64)
}

/// The integer range `minimum`/`maximum` (and their exclusive forms, draft-04's booleans
/// too) give, where a grammar can say it: both bounds, or a lower bound >= 0.
fn int_range(m: &Map<String, Value>) -> Option<IntRange> {
    let (min, max) = int_bounds(m)?;
    let min = min?;
    // `>= 0` and `>= 1` alone are the `natural` and `positive` terminals.
    if max.is_none() && min <= 1 {
        return None;
    }
    let r = IntRange { min, max };
    r.regex().map(|_| r)
}

/// Whether the grammar says a node's number bounds exactly (`integer`: it admits only
/// integers): an integer range, `>= 0` or `>= 1` for integers, `minimum: 0` for numbers.
pub(crate) fn bounds_in_grammar(m: &Map<String, Value>, integer: bool) -> bool {
    if !integer {
        let only_min = ["maximum", "exclusiveMaximum", "exclusiveMinimum"]
            .iter()
            .all(|k| matches!(m.get(*k), None | Some(Value::Bool(false))));
        return only_min && m.get("minimum").and_then(Value::as_f64) == Some(0.0);
    }
    match int_bounds(m) {
        Some((Some(min), None)) if min <= 1 => {
            lower_bound(m, true)
                == match min {
                    0 => Some(Lower::NonNegative),
                    1 => Some(Lower::Positive),
                    _ => None,
                }
                && min >= 0
        }
        Some((Some(_), _)) => int_range(m).is_some(),
        _ => false,
    }
}

/// The integer bounds of a node: lower and upper (`None` inside: absent); `None` where a
/// bound is beyond what the grammar's ranges carry.
fn int_bounds(m: &Map<String, Value>) -> Option<(Option<i64>, Option<i64>)> {
    let bound = |key: &str, ex_key: &str, lower: bool| -> Option<Option<i64>> {
        let plain = m.get(key);
        let ex = m.get(ex_key);
        let mut best: Option<i64> = None;
        let mut pick = |b: i64| {
            best = Some(match best {
                Some(x) if lower => x.max(b),
                Some(x) => x.min(b),
                None => b,
            })
        };
        match ex {
            Some(Value::Bool(true)) => {
                if let Some(p) = plain {
                    pick(int_bound(p, lower, true)?);
                }
            }
            Some(Value::Bool(false)) | None => {
                if let Some(p) = plain {
                    pick(int_bound(p, lower, false)?);
                }
            }
            Some(e) => {
                pick(int_bound(e, lower, true)?);
                if let Some(p) = plain {
                    pick(int_bound(p, lower, false)?);
                }
            }
        }
        Some(best)
    };
    let min = bound("minimum", "exclusiveMinimum", true)?;
    let max = bound("maximum", "exclusiveMaximum", false)?;
    Some((min, max))
}

/// The string assertions of a node no grammar says (see [`lexical_form`]).
pub(crate) fn string_gaps(m: &Map<String, Value>, formats_assert: bool) -> Vec<Gap> {
    lexical_form(m, formats_assert).1
}

/// A regular constraint a node asserts that no grammar says: the keyword and why.
pub(crate) type Gap = (&'static str, String);

/// The lexical form of a string node, and the string assertions it leaves to the
/// validator: `pattern`, every `format` of [`regular::format_regex`] (also where `format`
/// is only an annotation, so a model writes valid values), `minLength`/`maxLength` up to
/// [`regular::MAX_LENGTH`] with others ([`regular::MAX_LENGTH_ALONE`] alone), all at once (their automaton is the intersection); a
/// constraint that does not fit is left out, the others kept.
pub(crate) fn lexical_form(
    m: &Map<String, Value>,
    formats_assert: bool,
) -> (Option<Lexical>, Vec<Gap>) {
    let mut checks: Vec<RegularCheck> = Vec::new();
    let mut gaps: Vec<Gap> = Vec::new();
    if let Some(p) = m.get("pattern").and_then(Value::as_str) {
        let regex = regular::ecma(p);
        match regular::check(&regex) {
            Ok(()) => checks.push(RegularCheck {
                keyword: "pattern".into(),
                source: p.to_string(),
                regex,
            }),
            Err(e) => gaps.push(("pattern", e.0)),
        }
    }
    if let Some(f) = m.get("format").and_then(Value::as_str) {
        match regular::format_regex(f) {
            Some(regex) => checks.push(RegularCheck {
                keyword: "format".into(),
                source: f.to_string(),
                regex,
            }),
            None if formats_assert && ASSERTED_FORMATS.contains(&f) => {
                gaps.push(("format", format!("format `{f}` has no grammar rule")))
            }
            None => {}
        }
    }
    let min = m.get("minLength").and_then(Value::as_u64).unwrap_or(0);
    let max = m.get("maxLength").and_then(Value::as_u64);
    // Alone, a length is a bounded repetition; with other constraints, in their automaton.
    let cap = if checks.is_empty() {
        regular::MAX_LENGTH_ALONE
    } else {
        regular::MAX_LENGTH
    };
    let mut length = None;
    if max.is_some() || min > 1 || (min == 1 && !checks.is_empty()) {
        if min > cap {
            gaps.push((
                "minLength",
                format!("minLength above {cap} (only {cap} in the grammar)"),
            ));
        }
        let hi = match max {
            Some(x) if x > cap => {
                gaps.push(("maxLength", format!("maxLength above {cap}")));
                None
            }
            x => x,
        };
        let lo = min.min(cap);
        if hi.is_some() || lo > 1 || (lo == 1 && !checks.is_empty()) {
            match regular::length_regex(lo, hi, cap) {
                Some(regex) => {
                    let hi = hi.map(|h| h.to_string()).unwrap_or_default();
                    length = Some(RegularCheck {
                        keyword: "length".into(),
                        source: format!("{lo}..{hi}"),
                        regex,
                    });
                }
                None => gaps.push(("maxLength", "maxLength below minLength".into())),
            }
        }
    }
    let nonempty = min >= 1;
    if checks.is_empty() {
        return match length {
            Some(l) => (Some(Lexical::Regular(vec![l])), gaps),
            None => (nonempty.then_some(Lexical::NonEmpty), gaps),
        };
    }
    checks.extend(length);
    // All together, else drop the last constraints until their automaton fits.
    while !checks.is_empty() {
        let regexes: Vec<&str> = checks.iter().map(|c| c.regex.as_str()).collect();
        match regular::dfa(&regexes) {
            Ok(_) => break,
            Err(e) => {
                if let Some(c) = checks.pop() {
                    gaps.push((
                        keyword_of(&c.keyword),
                        format!("{} together with the other constraints", e.0),
                    ));
                }
            }
        }
    }
    if checks.is_empty() {
        return (nonempty.then_some(Lexical::NonEmpty), gaps);
    }
    (Some(Lexical::Regular(checks)), gaps)
}

/// The schema keyword of a constraint's kind.
fn keyword_of(kind: &str) -> &'static str {
    match kind {
        "pattern" => "pattern",
        "format" => "format",
        _ => "maxLength",
    }
}

/// The formats a validator checks where `format` asserts (others are ignored).
pub(crate) const ASSERTED_FORMATS: &[&str] = &[
    "date",
    "time",
    "date-time",
    "duration",
    "email",
    "idn-email",
    "hostname",
    "idn-hostname",
    "ipv4",
    "ipv6",
    "uri",
    "uri-reference",
    "iri",
    "iri-reference",
    "uuid",
    "uri-template",
    "json-pointer",
    "relative-json-pointer",
    "regex",
];

/// What `minimum`/`exclusiveMinimum` let a grammar say about a number.
fn lower_bound(m: &Map<String, Value>, integer: bool) -> Option<Lower> {
    let min = m.get("minimum").and_then(Value::as_f64);
    let exclusive = match m.get("exclusiveMinimum") {
        Some(Value::Bool(true)) => min, // draft-04
        Some(v) => v.as_f64(),
        None => None,
    };
    // Above 0 (an integer is then at least 1), or at least 0.
    let strict = exclusive.is_some_and(|e| e >= 0.0) || min.is_some_and(|x| x >= 1.0);
    let loose = min.is_some_and(|x| x >= 0.0) || strict;
    match (strict && integer, loose) {
        (true, _) => Some(Lower::Positive),
        (false, true) => Some(Lower::NonNegative),
        _ => None,
    }
}
