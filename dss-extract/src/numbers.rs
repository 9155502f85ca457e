//! Numbers in a request: digits (`25`, `1,000`, `3.5`, `3rd`) and English number words
//! (`two`, `twenty five`, `one hundred and five`, `a dozen`, `fifth`).

use crate::normalize::Normalized;

/// A number found in a request.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct NumberSpan {
    /// First token of the number.
    pub tok_a: usize,
    /// One past its last token.
    pub tok_b: usize,
    /// Its value.
    pub value: f64,
    /// Whether it is written as an ordinal (`3rd`, `fifth`).
    pub ordinal: bool,
}

fn unit(w: &str) -> Option<(f64, bool)> {
    const CARD: [&str; 20] = [
        "zero",
        "one",
        "two",
        "three",
        "four",
        "five",
        "six",
        "seven",
        "eight",
        "nine",
        "ten",
        "eleven",
        "twelve",
        "thirteen",
        "fourteen",
        "fifteen",
        "sixteen",
        "seventeen",
        "eighteen",
        "nineteen",
    ];
    const ORD: [&str; 20] = [
        "zeroth",
        "first",
        "second",
        "third",
        "fourth",
        "fifth",
        "sixth",
        "seventh",
        "eighth",
        "ninth",
        "tenth",
        "eleventh",
        "twelfth",
        "thirteenth",
        "fourteenth",
        "fifteenth",
        "sixteenth",
        "seventeenth",
        "eighteenth",
        "nineteenth",
    ];
    if let Some(i) = CARD.iter().position(|c| *c == w) {
        return Some((i as f64, false));
    }
    ORD.iter().position(|c| *c == w).map(|i| (i as f64, true))
}

fn tens(w: &str) -> Option<(f64, bool)> {
    const TENS: [&str; 8] = [
        "twenty", "thirty", "forty", "fifty", "sixty", "seventy", "eighty", "ninety",
    ];
    const TENS_ORD: [&str; 8] = [
        "twentieth",
        "thirtieth",
        "fortieth",
        "fiftieth",
        "sixtieth",
        "seventieth",
        "eightieth",
        "ninetieth",
    ];
    if let Some(i) = TENS.iter().position(|c| *c == w) {
        return Some(((i as f64 + 2.0) * 10.0, false));
    }
    TENS_ORD
        .iter()
        .position(|c| *c == w)
        .map(|i| ((i as f64 + 2.0) * 10.0, true))
}

fn multiplier(w: &str) -> Option<f64> {
    match w {
        "dozen" => Some(12.0),
        "hundred" => Some(100.0),
        "thousand" => Some(1_000.0),
        "million" => Some(1_000_000.0),
        "billion" => Some(1_000_000_000.0),
        _ => None,
    }
}

/// Parses number words at the start of `words`: (value, words used, ordinal). `glued(j)`
/// says whether word `j` follows word `j - 1` with only white space between them (a comma
/// ends a number).
pub(crate) fn parse_words(
    words: &[&str],
    glued: impl Fn(usize) -> bool,
) -> Option<(f64, usize, bool)> {
    let mut total = 0.0;
    let mut current = 0.0;
    let mut used = 0;
    let mut any = false;
    let mut ordinal = false;
    let mut j = 0;
    // `a dozen`, `a hundred`.
    if words.first() == Some(&"a") && words.get(1).and_then(|w| multiplier(w)).is_some() {
        current = 1.0;
        any = true;
        j = 1;
    }
    let mut last_small = false; // the previous word was a unit or tens word
    while j < words.len() && !ordinal {
        if j > 0 && !glued(j) {
            break;
        }
        let w = words[j];
        if let Some((v, ord)) = unit(w) {
            if last_small && (current % 100.0) % 10.0 != 0.0 {
                break; // `five six` is two numbers
            }
            if last_small && v >= 10.0 {
                break;
            }
            current += v;
            ordinal = ord;
            last_small = true;
        } else if let Some((v, ord)) = tens(w) {
            if last_small {
                break;
            }
            current += v;
            ordinal = ord;
            last_small = true;
        } else if let Some(m) = multiplier(w) {
            if !any {
                break;
            }
            if m == 12.0 {
                current = current.max(1.0) * m;
                j += 1;
                used = j;
                break;
            }
            if m >= 1000.0 {
                total += current.max(1.0) * m;
                current = 0.0;
            } else {
                current = current.max(1.0) * m;
            }
            last_small = false;
        } else if w == "and"
            && any
            && words
                .get(j + 1)
                .is_some_and(|n| unit(n).is_some() || tens(n).is_some())
        {
            j += 1;
            continue;
        } else {
            break;
        }
        any = true;
        j += 1;
        used = j;
    }
    if !any || used == 0 {
        return None;
    }
    Some((total + current, used, ordinal))
}

/// Parses a whole surface form as a number (`"4"`, `"3.5"`, `"1,000"`, `"four"`, `"a dozen"`).
pub(crate) fn parse_number_text(raw: &str) -> Option<f64> {
    let t = raw.trim();
    if !t.is_empty()
        && t.bytes()
            .all(|b| b.is_ascii_digit() || b == b'.' || b == b',')
    {
        let cleaned: String = t.chars().filter(|&c| c != ',').collect();
        return cleaned.parse::<f64>().ok();
    }
    let n = Normalized::new(t);
    let words: Vec<&str> = n.tokens.iter().map(|k| &n.text[k.start..k.end]).collect();
    match parse_words(&words, |_| true) {
        Some((v, used, _)) if used == words.len() => Some(v),
        _ => None,
    }
}

/// The canonical text of a number, used as a key: `4`, `3.5`.
pub(crate) fn number_key(v: f64) -> String {
    if v.fract() == 0.0 && v.abs() < 1e15 {
        format!("{}", v as i64)
    } else {
        format!("{v}")
    }
}

/// A JSON number for `v`: an integer when it has no fraction.
pub(crate) fn number_value(v: f64) -> serde_json::Value {
    if v.fract() == 0.0 && v.abs() < 1e15 {
        serde_json::Value::from(v as i64)
    } else {
        serde_json::Number::from_f64(v).map_or(serde_json::Value::Null, serde_json::Value::Number)
    }
}

/// Tokens overlapping the original byte range `a..b`.
fn tokens_of(n: &Normalized, a: usize, b: usize) -> Option<(usize, usize)> {
    let first = n.tokens.iter().position(|t| t.orig_end > a)?;
    let last = n.tokens.iter().rposition(|t| t.orig_start < b)?;
    (first <= last).then_some((first, last + 1))
}

/// Whether the text before a digit run ends in a minus sign that is the number's own: `-`
/// or `−` right before the digits, after a space, an opening bracket or the start (`-12.5`,
/// `(-3)`), not inside a word or a range (`ab-12`, `3-5`).
fn negative_sign(before: &str) -> bool {
    let Some(rest) = before
        .strip_suffix('-')
        .or_else(|| before.strip_suffix('\u{2212}'))
    else {
        return false;
    };
    rest.chars().next_back().is_none_or(|c| {
        c.is_whitespace() || matches!(c, '(' | '[' | '{' | ',' | ':' | '=' | '"' | '\'')
    })
}

/// Whether a coordinate is south or west, written as degrees with a compass letter after
/// it (`119.54 W`, `33.9°S`, `70 degrees west`): such a coordinate is negative. The number
/// must read as degrees (a fraction, `°` or `degrees`), so `5 W` (watts) stays 5.
fn compass_negative(digits: &str, after: &str) -> bool {
    let rest = after.trim_start();
    let (degrees, rest) = if let Some(r) = rest.strip_prefix('\u{b0}') {
        (true, r.trim_start())
    } else if let Some(r) = rest
        .strip_prefix("degrees")
        .or_else(|| rest.strip_prefix("degree"))
    {
        (true, r.trim_start())
    } else {
        (false, rest)
    };
    if !degrees && !digits.contains('.') {
        return false;
    }
    let word: String = rest.chars().take_while(|c| c.is_alphabetic()).collect();
    matches!(word.as_str(), "S" | "W")
        || (degrees || word.len() > 1) && matches!(word.to_lowercase().as_str(), "south" | "west")
}

/// Whether word `j` is `one` standing for a thing named before, not the number: after a
/// determiner (`another one`, `the other one`, `this one`, `which one`), or before what
/// describes it (`one with radius 4`, `one that`, `one of width 9`, where `of` is followed
/// by no determiner: `one of the apples` is a count).
fn pronoun_one(words: &[&str], j: usize) -> bool {
    if words[j] != "one" {
        return false;
    }
    let before = j.checked_sub(1).map(|k| words[k]);
    let after = words.get(j + 1).copied();
    let determiner = |w: &str| {
        matches!(
            w,
            "the" | "these" | "those" | "my" | "your" | "our" | "their" | "his" | "her" | "its"
        )
    };
    matches!(
        before,
        Some("another" | "other" | "this" | "that" | "which" | "each" | "every" | "the" | "no")
    ) || matches!(after, Some("with" | "that" | "which" | "who" | "where"))
        || (after == Some("of") && words.get(j + 2).is_some_and(|w| !determiner(w)))
}

/// The numbers of a request: digit runs (with `,` thousands, a `.` fraction and an ordinal
/// suffix) read from the original text, and number words read from the normalised words.
pub(crate) fn find_numbers(orig: &str, n: &Normalized) -> Vec<NumberSpan> {
    let mut out = Vec::new();
    let bytes = orig.as_bytes();
    let mut i = 0;
    let mut digit_tokens = vec![false; n.tokens.len()];
    while i < bytes.len() {
        if !bytes[i].is_ascii_digit()
            || (i > 0 && (bytes[i - 1].is_ascii_alphanumeric() || bytes[i - 1] >= 0x80))
        {
            i += 1;
            continue;
        }
        let start = i;
        while i < bytes.len() && bytes[i].is_ascii_digit() {
            i += 1;
        }
        // Thousands groups and one decimal fraction.
        while i + 3 < bytes.len()
            && bytes[i] == b','
            && bytes[i + 1..i + 4].iter().all(u8::is_ascii_digit)
            && bytes.get(i + 4).is_none_or(|b| !b.is_ascii_digit())
        {
            i += 4;
        }
        if i + 1 < bytes.len() && bytes[i] == b'.' && bytes[i + 1].is_ascii_digit() {
            i += 1;
            while i < bytes.len() && bytes[i].is_ascii_digit() {
                i += 1;
            }
        }
        let digits_end = i;
        let mut ordinal = false;
        let rest = &orig[i..];
        let lower: String = rest
            .chars()
            .take(3)
            .collect::<String>()
            .to_ascii_lowercase();
        for suf in ["st", "nd", "rd", "th"] {
            if lower.starts_with(suf)
                && lower[2..]
                    .chars()
                    .next()
                    .is_none_or(|c| !c.is_alphanumeric())
            {
                ordinal = true;
                i += 2;
                break;
            }
        }
        // A digit run glued to letters (`4pm`, `j32` is caught above) is no number.
        if !ordinal && orig[i..].chars().next().is_some_and(char::is_alphanumeric) {
            while i < bytes.len() && bytes[i].is_ascii_alphanumeric() {
                i += 1;
            }
            continue;
        }
        let text: String = orig[start..digits_end]
            .chars()
            .filter(|&c| c != ',')
            .collect();
        let sign = if negative_sign(&orig[..start])
            || (!ordinal && compass_negative(&orig[start..digits_end], &orig[i..]))
        {
            -1.0
        } else {
            1.0
        };
        if let (Ok(v), Some((a, b))) = (text.parse::<f64>(), tokens_of(n, start, i)) {
            let v = sign * v;
            for d in digit_tokens.iter_mut().take(b).skip(a) {
                *d = true;
            }
            out.push(NumberSpan {
                tok_a: a,
                tok_b: b,
                value: v,
                ordinal,
            });
        }
    }
    let words: Vec<&str> = n.tokens.iter().map(|t| &n.text[t.start..t.end]).collect();
    let mut j = 0;
    while j < words.len() {
        if digit_tokens[j] {
            j += 1;
            continue;
        }
        let glued = |k: usize| {
            let (prev, next) = (&n.tokens[j + k - 1], &n.tokens[j + k]);
            orig[prev.orig_end..next.orig_start]
                .chars()
                .all(char::is_whitespace)
                || orig[prev.orig_end..next.orig_start].trim() == "-"
        };
        if let Some((v, used, ordinal)) = parse_words(&words[j..], glued) {
            if used == 1 && pronoun_one(&words, j) {
                j += 1;
                continue;
            }
            out.push(NumberSpan {
                tok_a: j,
                tok_b: j + used,
                value: v,
                ordinal,
            });
            j += used;
        } else {
            j += 1;
        }
    }
    out.sort_by_key(|s| (s.tok_a, s.tok_b));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn values(s: &str) -> Vec<f64> {
        let n = Normalized::new(s);
        find_numbers(s, &n).iter().map(|x| x.value).collect()
    }

    #[test]
    fn digits_and_words() {
        assert_eq!(values("top 25 of 1,000 at 3.5%"), vec![25.0, 1000.0, 3.5]);
        assert_eq!(
            values("two or twenty five or twenty-five"),
            vec![2.0, 25.0, 25.0]
        );
        assert_eq!(
            values("a dozen eggs and one hundred and five"),
            vec![12.0, 105.0]
        );
        assert_eq!(values("two thousand three hundred"), vec![2300.0]);
        assert_eq!(values("the 3rd and fifth"), vec![3.0, 5.0]);
        assert_eq!(values("aircraft j32 at 4pm"), Vec::<f64>::new());
        assert_eq!(values("five six"), vec![5.0, 6.0]);
        // `one` standing for a thing named before is no number; a count of one is.
        assert_eq!(
            values("a box of width 4 and one of width 9, then another one"),
            vec![4.0, 9.0]
        );
        assert_eq!(values("one with 3 rooms or the other one"), vec![3.0]);
        assert_eq!(values("one of the apples and one pear"), vec![1.0, 1.0]);
        assert_eq!(values(""), Vec::<f64>::new());
    }

    #[test]
    fn signs_and_compass_points() {
        assert_eq!(
            values("at -122.273 and (-3) from ab-12 for pages 3-5"),
            vec![-122.273, -3.0, 12.0, 3.0, 5.0]
        );
        assert_eq!(
            values("at 37.8651 N, 119.5383 W or 33.9\u{b0}S and 70 degrees west"),
            vec![37.8651, -119.5383, -33.9, -70.0]
        );
        // Not degrees: `5 W` is five watts; `W` inside a word is no compass point.
        assert_eq!(values("a 5 W lamp at 2.5 Watts"), vec![5.0, 2.5]);
    }

    #[test]
    fn whole_surfaces() {
        assert_eq!(parse_number_text("four"), Some(4.0));
        assert_eq!(parse_number_text(" 9 "), Some(9.0));
        assert_eq!(parse_number_text("1,500"), Some(1500.0));
        assert_eq!(parse_number_text("four seasons"), None);
        assert_eq!(number_key(4.0), "4");
        assert_eq!(number_key(3.5), "3.5");
    }
}
