//! Dates in a request.
//!
//! Recognised (the value is a string):
//! - ISO dates `2024-03-01`, `2024/03/01` -> `"2024-03-01"`; year and month `2024-03` -> `"2024-03"`;
//! - a month name (or its 3-letter abbreviation, `sept`) with a day, with or without a year:
//!   `march 3`, `march 3rd, 2024`, `3 march`, `the 3rd of march` -> `"--03-03"` (ISO 8601 without
//!   a year) or `"2024-03-03"`; a month name with a year, `march 2024` -> `"2024-03"`;
//! - relative periods as signed ISO 8601 durations: `last 2 years`, `past three months`,
//!   `previous week` -> `"-P2Y"`, `"-P3M"`, `"-P1W"`; `next 10 days`, `coming quarter` ->
//!   `"+P10D"`, `"+P3M"` (a quarter is 3 months); `2 weeks ago` -> `"-P2W"`; `this year`,
//!   `current month` -> `"P0Y"`, `"P0M"`; `today`, `yesterday`, `tomorrow` -> `"P0D"`, `"-P1D"`,
//!   `"+P1D"`.
//!
//! A month name alone (`may`, `march`) is not a date: it is too often another word.

use crate::normalize::{stem, Normalized};
use crate::numbers::NumberSpan;

/// A date found in a request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct DateSpan {
    /// First token.
    pub tok_a: usize,
    /// One past the last token.
    pub tok_b: usize,
    /// The date, as described in the module documentation.
    pub value: String,
}

fn month(w: &str) -> Option<u32> {
    const MONTHS: [&str; 12] = [
        "january",
        "february",
        "march",
        "april",
        "may",
        "june",
        "july",
        "august",
        "september",
        "october",
        "november",
        "december",
    ];
    if let Some(i) = MONTHS.iter().position(|m| *m == w) {
        return Some(i as u32 + 1);
    }
    if w == "sept" {
        return Some(9);
    }
    if w.len() == 3 && w != "may" {
        return MONTHS
            .iter()
            .position(|m| m.starts_with(w))
            .map(|i| i as u32 + 1);
    }
    None
}

fn day_of(numbers: &[NumberSpan], tok: usize) -> Option<(u32, usize)> {
    let s = numbers.iter().find(|s| s.tok_a == tok)?;
    (s.value.fract() == 0.0 && (1.0..=31.0).contains(&s.value)).then_some((s.value as u32, s.tok_b))
}

fn year_of(words: &[&str], tok: usize) -> Option<u32> {
    let w = words.get(tok)?;
    if w.len() == 4 && w.bytes().all(|b| b.is_ascii_digit()) {
        let y: u32 = w.parse().ok()?;
        return (1000..3000).contains(&y).then_some(y);
    }
    None
}

fn unit(w: &str) -> Option<(char, u32)> {
    match stem(w) {
        "day" => Some(('D', 1)),
        "week" => Some(('W', 1)),
        "month" => Some(('M', 1)),
        "quarter" => Some(('M', 3)),
        "year" => Some(('Y', 1)),
        _ => None,
    }
}

fn iso_dates(orig: &str, n: &Normalized, out: &mut Vec<DateSpan>) {
    let b = orig.as_bytes();
    let digits =
        |i: usize, k: usize| i + k <= b.len() && b[i..i + k].iter().all(u8::is_ascii_digit);
    let mut i = 0;
    while i + 7 <= b.len() {
        let boundary_before = i == 0 || !b[i - 1].is_ascii_alphanumeric();
        if !(boundary_before && digits(i, 4) && (b[i + 4] == b'-' || b[i + 4] == b'/')) {
            i += 1;
            continue;
        }
        let sep = b[i + 4];
        let year = &orig[i..i + 4];
        let mlen = if digits(i + 5, 2) {
            2
        } else if digits(i + 5, 1) {
            1
        } else {
            0
        };
        if mlen == 0 {
            i += 1;
            continue;
        }
        let m: u32 = orig[i + 5..i + 5 + mlen].parse().unwrap_or(0);
        let mut end = i + 5 + mlen;
        let mut day = None;
        if end < b.len() && b[end] == sep {
            let dlen = if digits(end + 1, 2) {
                2
            } else if digits(end + 1, 1) {
                1
            } else {
                0
            };
            if dlen > 0 {
                day = orig[end + 1..end + 1 + dlen].parse::<u32>().ok();
                end += 1 + dlen;
            }
        }
        let boundary_after = end == b.len() || !b[end].is_ascii_alphanumeric();
        let valid = (1..=12).contains(&m) && day.is_none_or(|d| (1..=31).contains(&d));
        if boundary_after && valid {
            let first = n.tokens.iter().position(|t| t.orig_end > i);
            let last = n.tokens.iter().rposition(|t| t.orig_start < end);
            if let (Some(a), Some(z)) = (first, last) {
                let value = match day {
                    Some(d) => format!("{year}-{m:02}-{d:02}"),
                    None => format!("{year}-{m:02}"),
                };
                out.push(DateSpan {
                    tok_a: a,
                    tok_b: z + 1,
                    value,
                });
            }
            i = end;
        } else {
            i += 1;
        }
    }
}

/// The dates of a request (see the module documentation), given its numbers.
pub(crate) fn find_dates(orig: &str, n: &Normalized, numbers: &[NumberSpan]) -> Vec<DateSpan> {
    let mut out = Vec::new();
    iso_dates(orig, n, &mut out);
    let words: Vec<&str> = n.tokens.iter().map(|t| &n.text[t.start..t.end]).collect();
    let taken = |out: &Vec<DateSpan>, t: usize| out.iter().any(|d| d.tok_a <= t && t < d.tok_b);
    let mut j = 0;
    while j < words.len() {
        if taken(&out, j) {
            j += 1;
            continue;
        }
        if let Some((end, value)) = date_at(&words, numbers, j) {
            out.push(DateSpan {
                tok_a: j,
                tok_b: end,
                value,
            });
            j = end;
            continue;
        }
        j += 1;
    }
    out.sort_by_key(|d| (d.tok_a, d.tok_b));
    out
}

/// The date or period that starts at word `j`, if one does: the word it ends before and its
/// value.
fn date_at(words: &[&str], numbers: &[NumberSpan], j: usize) -> Option<(usize, String)> {
    let w = words[j];
    // month day [year] | month year
    if let Some(m) = month(w) {
        if let Some((d, after)) = day_of(numbers, j + 1) {
            return Some(month_day(words, m, d, after));
        }
        if let Some(y) = year_of(words, j + 1) {
            return Some((j + 2, format!("{y:04}-{m:02}")));
        }
    }
    // day [of] month [year]
    if let Some((d, after)) = day_of(numbers, j) {
        let of = usize::from(words.get(after) == Some(&"of"));
        if let Some(m) = words.get(after + of).and_then(|w| month(w)) {
            return Some(month_day(words, m, d, after + of + 1));
        }
    }
    let fixed = match w {
        "today" => Some("P0D"),
        "yesterday" => Some("-P1D"),
        "tomorrow" => Some("+P1D"),
        _ => None,
    };
    if let Some(v) = fixed {
        return Some((j + 1, v.to_owned()));
    }
    // last|past|previous|next|coming [N] unit, this|current unit
    let sign = match w {
        "last" | "past" | "previous" => Some("-"),
        "next" | "coming" => Some("+"),
        "this" | "current" => Some(""),
        _ => None,
    };
    if let Some(sign) = sign {
        let (count, at) = match numbers.iter().find(|s| s.tok_a == j + 1 && !s.ordinal) {
            Some(s) if sign.is_empty() => (0.0, s.tok_a), // `this 3 days`: not a period
            Some(s) => (s.value, s.tok_b),
            None => (if sign.is_empty() { 0.0 } else { 1.0 }, j + 1),
        };
        if let Some((u, mult)) = words.get(at).and_then(|w| unit(w)) {
            if count.fract() == 0.0 && (at == j + 1 || !sign.is_empty()) {
                let k = count as u64 * u64::from(mult);
                return Some((at + 1, format!("{sign}P{k}{u}")));
            }
        }
    }
    // N unit ago
    if let Some(s) = numbers.iter().find(|s| s.tok_a == j && !s.ordinal) {
        if let (Some((u, mult)), Some(&"ago")) = (
            words.get(s.tok_b).and_then(|w| unit(w)),
            words.get(s.tok_b + 1),
        ) {
            if s.value.fract() == 0.0 {
                let k = s.value as u64 * u64::from(mult);
                return Some((s.tok_b + 2, format!("-P{k}{u}")));
            }
        }
    }
    None
}

/// Month `m`, day `d`, and the year if one is the word at `at`: the word the date ends
/// before and its value (`2024-03-05`, or `--03-05` without a year).
fn month_day(words: &[&str], m: u32, d: u32, at: usize) -> (usize, String) {
    match year_of(words, at) {
        Some(y) => (at + 1, format!("{y:04}-{m:02}-{d:02}")),
        None => (at, format!("--{m:02}-{d:02}")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::numbers::find_numbers;

    fn dates(s: &str) -> Vec<String> {
        let n = Normalized::new(s);
        let nums = find_numbers(s, &n);
        find_dates(s, &n, &nums)
            .into_iter()
            .map(|d| d.value)
            .collect()
    }

    #[test]
    fn absolute() {
        assert_eq!(
            dates("since 2024-03-01 until 2024/3/9"),
            ["2024-03-01", "2024-03-09"]
        );
        assert_eq!(dates("in 2024-13-01"), Vec::<String>::new());
        assert_eq!(
            dates("march 3 and March 3rd, 2024"),
            ["--03-03", "2024-03-03"]
        );
        assert_eq!(
            dates("the 3rd of march and 5 sept 2021"),
            ["--03-03", "2021-09-05"]
        );
        assert_eq!(dates("sales in march 2024"), ["2024-03"]);
        assert_eq!(dates("i may go in march"), Vec::<String>::new());
    }

    #[test]
    fn relative() {
        assert_eq!(dates("over the last 2 years"), ["-P2Y"]);
        assert_eq!(dates("past three months, next week"), ["-P3M", "+P1W"]);
        assert_eq!(dates("this year vs last quarter"), ["P0Y", "-P3M"]);
        assert_eq!(
            dates("two weeks ago, yesterday and today"),
            ["-P2W", "-P1D", "P0D"]
        );
        assert_eq!(dates("the last one"), Vec::<String>::new());
    }
}
