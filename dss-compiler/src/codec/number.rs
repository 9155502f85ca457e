//! Numbers as their text: which numbers JSON (serde_json, without arbitrary precision)
//! carries exactly, which lexemes each number terminal of the grammars admits, and how the
//! encoder writes a number so that its field's terminal reads it.
//!
//! A number is compared as the decimal its lexeme writes (`1.50e1` and `15` are the same
//! value), never through `f64`: `100000000000000000001` and `1e20` are different numbers
//! even though they are the same double.

use crate::error::CompressError;
use crate::grammar::terminal::Terminal;
use serde_json::Number;

/// A JSON number lexeme as a decimal: `(-1)^neg × digits × 10^exp`, `digits` without
/// leading or trailing zeros (empty for zero, whose sign is ignored).
#[derive(Debug, PartialEq, Eq)]
struct Decimal {
    neg: bool,
    digits: String,
    exp: i128,
}

/// The decimal a JSON number lexeme writes; `None` if `s` is not one.
fn decimal(s: &str) -> Option<Decimal> {
    let (neg, s) = match s.strip_prefix('-') {
        Some(r) => (true, r),
        None => (false, s),
    };
    let (mantissa, exp) = match s.find(['e', 'E']) {
        Some(i) => {
            let e = &s[i + 1..];
            let e = e.strip_prefix('+').unwrap_or(e);
            if e.is_empty()
                || !e
                    .trim_start_matches('-')
                    .bytes()
                    .all(|b| b.is_ascii_digit())
            {
                return None;
            }
            // A huge exponent saturates: such a number is no double anyway.
            let exp = e.parse::<i128>().unwrap_or(if e.starts_with('-') {
                -(1 << 64)
            } else {
                1 << 64
            });
            (&s[..i], exp)
        }
        None => (s, 0),
    };
    let (int, frac) = mantissa.split_once('.').unwrap_or((mantissa, ""));
    if int.is_empty() || !(int.bytes().chain(frac.bytes())).all(|b| b.is_ascii_digit()) {
        return None;
    }
    let all = format!("{int}{frac}");
    let lead = all.len() - all.trim_start_matches('0').len();
    let digits = all[lead..].trim_end_matches('0');
    if digits.is_empty() {
        return Some(Decimal {
            neg: false,
            digits: String::new(),
            exp: 0,
        });
    }
    let trailing = all.len() - lead - digits.len();
    Some(Decimal {
        neg,
        digits: digits.to_string(),
        exp: exp - frac.len() as i128 + trailing as i128,
    })
}

/// Two JSON number lexemes write the same decimal value (`1.0` and `1`, `-0` and `0`).
pub(crate) fn same_value(a: &str, b: &str) -> bool {
    match (decimal(a), decimal(b)) {
        (Some(x), Some(y)) => x == y,
        _ => false,
    }
}

/// An integer of at most 18 digits with no leading zero (`-?[1-9][0-9]{0,17}`, or `0`):
/// the number serde_json reads it as, without going through its parser. Anything else
/// (`-0`, which serde_json reads as a float, fractions, exponents, longer integers) is
/// `None`.
pub(crate) fn small_integer(lexeme: &str) -> Option<Number> {
    let (negative, digits) = match lexeme.strip_prefix('-') {
        Some(d) => (true, d),
        None => (false, lexeme),
    };
    let b = digits.as_bytes();
    if b.is_empty() || b.len() > 18 || !b.iter().all(u8::is_ascii_digit) {
        return None;
    }
    if b[0] == b'0' && (b.len() > 1 || negative) {
        return None;
    }
    let v = b.iter().fold(0u64, |v, &d| v * 10 + u64::from(d - b'0'));
    if negative {
        // 18 digits fit in an i64.
        Some(Number::from(-i64::try_from(v).ok()?))
    } else {
        Some(Number::from(v))
    }
}

/// Whether `n`, read from `lexeme`, is the number the lexeme writes: false when reading it
/// rounded it (`100000000000000000001`, `1e-400`, `0.30000000000000000001`).
pub(crate) fn is_exact(lexeme: &str, n: &Number) -> bool {
    // At most 15 significant digits and no exponent: a double holds the value exactly
    // enough that it reads back as the same decimal (what most lexemes are).
    let digits = lexeme.bytes().filter(u8::is_ascii_digit).count();
    if digits <= 15
        && lexeme
            .bytes()
            .all(|b| b.is_ascii_digit() || b == b'-' || b == b'.')
    {
        return true;
    }
    same_value(lexeme, &n.to_string())
}

/// The first number of a compact JSON text that JSON cannot carry exactly: its byte range
/// in `text`, the JSON pointer to it (when `text` is valid JSON) and what it would become.
pub(crate) fn first_inexact(text: &str) -> Option<Inexact> {
    let bytes = text.as_bytes();
    // The path to the current value: keys and indexes.
    let mut path: Vec<Step<'_>> = Vec::new();
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'"' => {
                let end = string_end(bytes, i);
                // A key when followed by `:`.
                let mut j = end;
                while j < bytes.len() && bytes[j].is_ascii_whitespace() {
                    j += 1;
                }
                if bytes.get(j) == Some(&b':') {
                    if let Some(Step::Key(k)) = path.last_mut() {
                        *k = &text[i..end];
                    }
                    i = j + 1;
                    continue;
                }
                i = end;
            }
            b'{' => {
                path.push(Step::Key("\"\""));
                i += 1;
            }
            b'[' => {
                path.push(Step::Index(0));
                i += 1;
            }
            b'}' | b']' => {
                path.pop();
                i += 1;
            }
            b',' => {
                if let Some(Step::Index(n)) = path.last_mut() {
                    *n += 1;
                }
                i += 1;
            }
            b'-' | b'0'..=b'9' => {
                let len = text[i..]
                    .find(|c: char| {
                        !(c.is_ascii_digit() || matches!(c, '-' | '+' | '.' | 'e' | 'E'))
                    })
                    .unwrap_or(text.len() - i);
                let lexeme = &text[i..i + len];
                let became = match serde_json::from_str::<Number>(lexeme) {
                    Ok(n) if is_exact(lexeme, &n) => None,
                    Ok(n) => Some(n.to_string()),
                    // Out of range (`1e400`): serde_json refuses it.
                    Err(_) => Some("an error (out of range)".to_string()),
                };
                if let Some(became) = became {
                    return Some(Inexact {
                        start: i,
                        lexeme: lexeme.to_string(),
                        pointer: pointer(&path),
                        became,
                    });
                }
                i += len;
            }
            _ => i += 1,
        }
    }
    None
}

/// A number JSON cannot carry exactly (see [`first_inexact`]).
#[derive(Debug)]
pub(crate) struct Inexact {
    /// Byte offset of the number in the text.
    pub start: usize,
    /// The number as written.
    pub lexeme: String,
    /// JSON pointer to it.
    pub pointer: String,
    /// What reading it gives.
    pub became: String,
}

enum Step<'t> {
    /// The key as written (a JSON string literal), read only for a pointer.
    Key(&'t str),
    Index(usize),
}

fn pointer(path: &[Step<'_>]) -> String {
    let mut p = String::new();
    for s in path {
        p.push('/');
        match s {
            Step::Key(k) => {
                let k = serde_json::from_str::<String>(k).unwrap_or_default();
                p.push_str(&k.replace('~', "~0").replace('/', "~1"))
            }
            Step::Index(n) => p.push_str(&n.to_string()),
        }
    }
    p
}

/// The end (one past the closing quote) of the JSON string starting at `start`.
fn string_end(bytes: &[u8], start: usize) -> usize {
    let mut i = start + 1;
    while i < bytes.len() {
        match bytes[i] {
            b'\\' => i += 2,
            b'"' => return i + 1,
            _ => i += 1,
        }
    }
    bytes.len()
}

/// Whether `s` is a lexeme of number terminal `t` (its pest/GBNF definition in
/// `grammar/terminal.rs`), given that `s` is a JSON number.
pub(crate) fn fits(t: Terminal, s: &str) -> bool {
    let unsigned = s.strip_prefix('-').unwrap_or(s);
    let integer = || {
        let (mantissa, exp) = match unsigned.find(['e', 'E']) {
            Some(i) => (&unsigned[..i], Some(&unsigned[i + 1..])),
            None => (unsigned, None),
        };
        let frac_ok = mantissa
            .split_once('.')
            .is_none_or(|(_, f)| f.bytes().all(|b| b == b'0'));
        frac_ok && exp.is_none_or(|e| !e.starts_with('-'))
    };
    match t {
        Terminal::NonnegNumber => !s.starts_with('-'),
        Terminal::Integer => integer(),
        Terminal::Natural => !s.starts_with('-') && integer(),
        Terminal::Positive => !s.starts_with(['-', '0']) && integer(),
        _ => true,
    }
}

/// How the readable grammar names what terminal `t` admits, for errors.
pub(crate) fn describe(t: Terminal) -> &'static str {
    match t {
        Terminal::NonnegNumber => "a number >= 0",
        Terminal::Integer => "an integer (no fraction, no negative exponent)",
        Terminal::Natural => "an integer >= 0",
        Terminal::Positive => "an integer >= 1",
        _ => "a number",
    }
}

/// The text the encoder writes for `n` where terminal `t` reads it: its own text when
/// that fits, else the same value in a form that does (`1.5e1` as `15`, `-0` as `0`);
/// `None` when no text of `t` has this value.
pub(crate) fn write_as(t: Terminal, n: &Number) -> Option<String> {
    let s = n.to_string();
    if fits(t, &s) {
        return Some(s);
    }
    let d = decimal(&s)?;
    // Nonzero digits beyond the point: no integer terminal writes it.
    let text = if d.digits.is_empty() {
        "0".to_string()
    } else if d.exp >= 0 {
        if d.exp > 400 {
            return None;
        }
        let zeros = "0".repeat(usize::try_from(d.exp).ok()?);
        format!("{}{}{zeros}", if d.neg { "-" } else { "" }, d.digits)
    } else {
        // A fraction: only an integer terminal can refuse it, and no integer has its value.
        return None;
    };
    fits(t, &text).then_some(text)
}

/// Checks that every number of a JSON text is read exactly: serde_json (as dss uses it)
/// reads numbers as 64-bit integers or doubles, so `18446744073709551617` would become
/// `1.8446744073709552e19` and `1e-400` would become `0.0`. Call it on the text an
/// instance was parsed from before [`CompiledSpec::compress`](crate::CompiledSpec::compress):
/// dss refuses such a number (naming its JSON pointer) rather than change it. `text` should
/// be valid JSON.
///
/// ```
/// use dss_compiler::codec::check_numbers;
/// use dss_compiler::error::CompressError;
/// assert!(check_numbers(r#"{"n": 18446744073709551615, "x": 0.1}"#).is_ok());
/// let e = check_numbers(r#"{"n": [100000000000000000001]}"#).unwrap_err();
/// assert_eq!(e.pointer(), "/n/0");
/// assert!(matches!(e, CompressError::Inexact { .. }), "{e}");
/// ```
pub fn check_numbers(text: &str) -> Result<(), CompressError> {
    match first_inexact(text) {
        None => Ok(()),
        Some(bad) => Err(CompressError::Inexact {
            pointer: bad.pointer,
            lexeme: bad.lexeme,
            became: bad.became,
        }),
    }
}

#[cfg(test)]
mod tests {

    /// The fast path reads integers exactly as serde_json does, and leaves the rest to it.
    #[test]
    fn small_integers_read_as_serde_json_reads_them() {
        for lexeme in [
            "0",
            "7",
            "-7",
            "10",
            "123456789012345678",
            "-123456789012345678",
        ] {
            let n = super::small_integer(lexeme).expect(lexeme);
            let serde: serde_json::Number = serde_json::from_str(lexeme).unwrap();
            assert_eq!(n, serde, "{lexeme}");
            assert_eq!(n.to_string(), serde.to_string(), "{lexeme}");
        }
        for lexeme in [
            "",
            "-",
            "-0",
            "00",
            "01",
            "1.0",
            "1e3",
            "1234567890123456789",
            "1a",
            "+1",
        ] {
            assert!(super::small_integer(lexeme).is_none(), "{lexeme}");
        }
    }
    use super::*;

    fn text_is_exact(text: &str) -> bool {
        first_inexact(text).is_none() && serde_json::from_str::<serde_json::Value>(text).is_ok()
    }

    #[test]
    fn decimals_compare_by_value() {
        assert!(same_value("1", "1.0"));
        assert!(same_value("15", "1.50e1"));
        assert!(same_value("-0", "0.0"));
        assert!(same_value("0.001", "1e-3"));
        assert!(same_value("1e20", "100000000000000000000"));
        assert!(!same_value("1e20", "100000000000000000001"));
        assert!(!same_value("1", "-1"));
        assert!(!same_value("1e-400", "0"));
        assert!(!same_value("x", "x"));
    }

    #[test]
    fn inexact_numbers_are_found_with_their_pointer() {
        let e = first_inexact("18446744073709551617").unwrap();
        assert_eq!(
            (e.pointer.as_str(), e.became.as_str()),
            ("", "1.8446744073709552e+19")
        );
        let e =
            first_inexact(r#"{"a": [1, 2.5, {"b~/": 100000000000000000001}], "c": 1}"#).unwrap();
        assert_eq!(e.pointer, "/a/2/b~0~1");
        assert_eq!(e.lexeme, "100000000000000000001");
        let e = first_inexact(r#"[{"x": "1e-400", "y": 1e-400}]"#).unwrap();
        assert_eq!((e.pointer.as_str(), e.became.as_str()), ("/0/y", "0.0"));
        assert!(first_inexact("[1e400]").is_some());
        for ok in [
            "1",
            "-0",
            "0.1",
            "1.50",
            "1e20",
            "18446744073709551615",
            "-9223372036854775808",
            "[\"100000000000000000001\"]",
            "{\"1e-400\": 3}",
        ] {
            assert!(text_is_exact(ok), "{ok}");
        }
    }

    #[test]
    fn terminals_admit_what_their_grammar_says() {
        use Terminal::*;
        for (t, yes, no) in [
            (Number, &["-1.5e-3", "0"][..], &[][..]),
            (NonnegNumber, &["0", "1.5", "2e-3"], &["-1", "-0.5"]),
            (
                Integer,
                &["-3", "1.0", "1e2", "1E+2"],
                &["1.5", "1e-2", "10e-1"],
            ),
            (Natural, &["0", "0.0", "7"], &["-3", "-0", "1.5"]),
            (Positive, &["1", "10", "1e2"], &["0", "0.0", "-1", "1.5"]),
        ] {
            for s in yes {
                assert!(fits(t, s), "{t:?} {s}");
            }
            for s in no {
                assert!(!fits(t, s), "{t:?} {s}");
            }
        }
    }

    #[test]
    fn the_encoder_writes_a_form_the_terminal_reads() {
        use Terminal::*;
        let n = |s: &str| serde_json::from_str::<serde_json::Number>(s).unwrap();
        assert_eq!(write_as(Integer, &n("15")).as_deref(), Some("15"));
        assert_eq!(write_as(Natural, &n("-0")).as_deref(), Some("0"));
        assert_eq!(write_as(Natural, &n("-0.0")).as_deref(), Some("0"));
        assert_eq!(write_as(NonnegNumber, &n("-0.0")).as_deref(), Some("0"));
        assert_eq!(
            write_as(Integer, &n("123450000000000000000")).as_deref(),
            Some("123450000000000000000")
        );
        assert_eq!(write_as(Positive, &n("0")), None);
        assert_eq!(write_as(Integer, &n("1.5")), None);
    }
}
