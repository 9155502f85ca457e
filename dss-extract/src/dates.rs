//! Dates in a request.
//!
//! Recognised (the value is a string):
//! - ISO dates `2024-03-01`, `2024/03/01` -> `"2024-03-01"`; year and month `2024-03` -> `"2024-03"`;
//! - numeric dates with the year last, `20/3/2024`, `05.18.2023` -> `"2024-03-20"`,
//!   `"2023-05-18"`: day and month in the order the request's dates show, both readings of
//!   `04/07/2023` where nothing shows it;
//! - a month name (or its 3-letter abbreviation, `sept`) with a day, with or without a year:
//!   `march 3`, `march 3rd, 2024`, `3 march`, `the 3rd of march` -> `"--03-03"` (ISO 8601 without
//!   a year) or `"2024-03-03"`; a month name with a year, `march 2024` -> `"2024-03"`;
//! - relative periods as signed ISO 8601 durations: `last 2 years`, `past three months`,
//!   `previous week` -> `"-P2Y"`, `"-P3M"`, `"-P1W"`; `next 10 days`, `coming quarter` ->
//!   `"+P10D"`, `"+P3M"` (a quarter is 3 months); `2 weeks ago` -> `"-P2W"`; `this year`,
//!   `current month` -> `"P0Y"`, `"P0M"`; `today`, `yesterday`, `tomorrow` -> `"P0D"`, `"-P1D"`,
//!   `"+P1D"`.
//!
//! - the date a request says is today, `today is Monday April 25th 2023` ->
//!   `"today=2023-04-25/1"` (`/1`: the weekday it names, 1 = Monday … 7 = Sunday; left out
//!   where it names none), so that days named relative to it can be resolved;
//! - a weekday named as the next one, `next Thursday`, `on the upcoming Saturday`,
//!   `this coming Friday`, `on Monday` -> `"weekday=4"`, `"weekday=6"`, …
//!
//! A month name alone (`may`, `march`) is not a date: it is too often another word.
//!
//! Clock times ([`find_times`], the value `HH:MM:SS`): `14:00`, `4:30 PM`, `8pm`, `1:45 p.m.`,
//! `3 in the afternoon`, `7 o'clock`, `noon`, `midnight`.

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

pub(crate) fn month(w: &str) -> Option<u32> {
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

/// Numeric dates with the year last, `12/03/2024`, `20.3.2024`, `05-18-2023`: day and
/// month in the order the request's other such dates show (a first part above 12 is a
/// day, a second part above 12 a day), and where none shows it and both parts could be
/// a month, both readings (two spans over the same words).
fn numeric_dates(orig: &str, n: &Normalized, out: &mut Vec<DateSpan>) {
    let b = orig.as_bytes();
    // (start, end, first part, second part, year)
    let mut found: Vec<(usize, usize, u32, u32, u32)> = Vec::new();
    let run = |i: usize, max: usize| {
        let k = b[i..]
            .iter()
            .take(max + 1)
            .take_while(|c| c.is_ascii_digit())
            .count();
        (1..=max).contains(&k).then_some(k)
    };
    let mut i = 0;
    while i < b.len() {
        let boundary_before = i == 0 || !(b[i - 1].is_ascii_alphanumeric() || b[i - 1] == b'/');
        let parsed = boundary_before
            .then(|| {
                let k1 = run(i, 2)?;
                let sep = *b.get(i + k1)?;
                if !matches!(sep, b'/' | b'.' | b'-') {
                    return None;
                }
                let j = i + k1 + 1;
                let k2 = run(j, 2)?;
                if b.get(j + k2) != Some(&sep) {
                    return None;
                }
                let y = j + k2 + 1;
                let k3 = run(y, 4).filter(|&k| k == 4)?;
                let end = y + k3;
                let after = b.get(end);
                let boundary_after = after.is_none_or(|c| {
                    let run_on = *c == sep && b.get(end + 1).is_some_and(u8::is_ascii_digit);
                    !(c.is_ascii_alphanumeric() || *c == b'/' || run_on)
                });
                boundary_after.then(|| {
                    let num = |a: usize, k: usize| orig[a..a + k].parse::<u32>().unwrap_or(0);
                    (i, end, num(i, k1), num(j, k2), num(y, k3))
                })
            })
            .flatten();
        match parsed {
            Some(f) => {
                i = f.1;
                found.push(f);
            }
            None => i += 1,
        }
    }
    let day_first = found.iter().any(|f| f.2 > 12 && f.3 <= 12);
    let month_first = found.iter().any(|f| f.3 > 12 && f.2 <= 12);
    for (start, end, p, q, y) in found {
        let valid = |d: u32, m: u32| (1..=31).contains(&d) && (1..=12).contains(&m);
        let mut readings = Vec::new();
        if valid(p, q) && !month_first {
            readings.push((p, q));
        }
        if valid(q, p) && !day_first && p != q {
            readings.push((q, p));
        }
        if valid(p, q) && p == q {
            readings.truncate(0);
            readings.push((p, q));
        }
        let first = n.tokens.iter().position(|t| t.orig_end > start);
        let last = n.tokens.iter().rposition(|t| t.orig_start < end);
        let (Some(a), Some(z)) = (first, last) else {
            continue;
        };
        for (d, m) in readings {
            out.push(DateSpan {
                tok_a: a,
                tok_b: z + 1,
                value: format!("{y:04}-{m:02}-{d:02}"),
            });
        }
    }
}

/// The weekday (1 = Monday … 7 = Sunday) a word names, in full or as its abbreviation.
fn weekday(w: &str) -> Option<u32> {
    const DAYS: [&str; 7] = [
        "monday",
        "tuesday",
        "wednesday",
        "thursday",
        "friday",
        "saturday",
        "sunday",
    ];
    if let Some(i) = DAYS.iter().position(|d| *d == w) {
        return Some(i as u32 + 1);
    }
    let abbr = [
        "mon", "tue", "tues", "wed", "thu", "thur", "thurs", "fri", "sat", "sun",
    ];
    if abbr.contains(&w) {
        return DAYS
            .iter()
            .position(|d| d.starts_with(w))
            .map(|i| i as u32 + 1);
    }
    None
}

/// Whether a calendar date's value is a whole date (`2024-03-01`).
fn full_date(v: &str) -> bool {
    v.len() == 10 && v.as_bytes()[4] == b'-' && !v.starts_with('-')
}

/// Marks the date the request says is today (`today is [Monday,] April 25th 2023`) and
/// reads the weekdays named as the next one (`next Thursday`).
fn today_and_weekdays(words: &[&str], out: &mut Vec<DateSpan>) {
    // today [s] [date] [is|was] [<weekday>] <full date>
    let mut anchors = Vec::new();
    for (i, d) in out.iter().enumerate() {
        if !full_date(&d.value) {
            continue;
        }
        let mut k = d.tok_a;
        let stated = k.checked_sub(1).and_then(|p| weekday(words[p]));
        if stated.is_some() {
            k -= 1;
        }
        let mut skipped = 0;
        let mut is = false;
        while k > 0 && skipped < 3 && matches!(words[k - 1], "is" | "s" | "date" | "being") {
            is |= words[k - 1] != "date";
            k -= 1;
            skipped += 1;
        }
        // `today is …` says which date is today; `for today April 25th` asks for that date.
        if is && k > 0 && matches!(words[k - 1], "today" | "todays") {
            let value = match stated {
                Some(w) => format!("today={}/{w}", d.value),
                None => format!("today={}", d.value),
            };
            anchors.push((i, k - 1, value));
        }
    }
    for (i, a, value) in anchors.into_iter().rev() {
        let b = out[i].tok_b;
        out[i] = DateSpan {
            tok_a: a,
            tok_b: b,
            value,
        };
        // `today` inside is no period of its own.
        out.retain(|d| !(d.tok_a >= a && d.tok_b <= b && d.value == "P0D"));
    }
    let taken = |out: &Vec<DateSpan>, t: usize| out.iter().any(|d| d.tok_a <= t && t < d.tok_b);
    for j in 0..words.len() {
        let Some(day) = weekday(words[j]) else {
            continue;
        };
        if taken(out, j) {
            continue;
        }
        let mut a = j;
        let mut named = false;
        while a > 0 && j - a < 3 {
            match words[a - 1] {
                "next" | "upcoming" | "coming" | "this" | "on" => named = true,
                "the" => {}
                _ => break,
            }
            a -= 1;
        }
        if named && !(a..j).any(|t| taken(out, t)) {
            out.push(DateSpan {
                tok_a: a,
                tok_b: j + 1,
                value: format!("weekday={day}"),
            });
        }
    }
}

/// The clock times of a request (see the module documentation), as `HH:MM:SS`.
pub(crate) fn find_times(orig: &str, n: &Normalized, numbers: &[NumberSpan]) -> Vec<DateSpan> {
    let words: Vec<&str> = n.tokens.iter().map(|t| &n.text[t.start..t.end]).collect();
    let gap = |j: usize| -> &str {
        match (n.tokens.get(j), n.tokens.get(j + 1)) {
            (Some(a), Some(b)) => orig.get(a.orig_end..b.orig_start).unwrap_or(""),
            _ => "",
        }
    };
    let digits = |w: &str, max: usize| {
        !w.is_empty() && w.len() <= max && w.bytes().all(|b| b.is_ascii_digit())
    };
    // `pm`, `p.m.` (`p` `m`), glued to the number before or not: (half, words used).
    let meridiem = |j: usize| -> Option<(bool, usize)> {
        match words.get(j).copied() {
            Some("am") => Some((false, 1)),
            Some("pm") => Some((true, 1)),
            Some(w @ ("a" | "p")) if words.get(j + 1) == Some(&"m") => Some((w == "p", 2)),
            _ => None,
        }
    };
    fn glued(w: &str) -> Option<(&str, bool)> {
        match w.strip_suffix("pm") {
            Some(x) => Some((x, true)),
            None => Some((w.strip_suffix("am")?, false)),
        }
    }
    let twelve = |h: u32, pm: bool| -> Option<u32> {
        (1..=12)
            .contains(&h)
            .then(|| if pm { h % 12 + 12 } else { h % 12 })
    };
    let mut out = Vec::new();
    let mut j = 0;
    while j < words.len() {
        let w = words[j];
        let found: Option<(usize, u32, u32, u32)> = (|| {
            match w {
                "noon" | "midday" => return Some((j + 1, 12, 0, 0)),
                "midnight" => return Some((j + 1, 0, 0, 0)),
                _ => {}
            }
            // H:MM[:SS] [am|pm], the minutes or seconds perhaps glued to `pm`.
            if digits(w, 2) && gap(j) == ":" {
                let h: u32 = w.parse().ok()?;
                let (mut end, mut half) = (j + 2, None);
                let mut minute_word = *words.get(j + 1)?;
                if let Some((num, pm)) = glued(minute_word) {
                    minute_word = num;
                    half = Some(pm);
                }
                if minute_word.len() != 2 || !digits(minute_word, 2) {
                    return None;
                }
                let m: u32 = minute_word.parse().ok()?;
                let mut s = 0;
                if half.is_none() && gap(j + 1) == ":" {
                    let sec = words
                        .get(j + 2)
                        .copied()
                        .filter(|x| x.len() == 2 && digits(x, 2));
                    if let Some(sec) = sec {
                        s = sec.parse().ok()?;
                        end = j + 3;
                    }
                }
                if half.is_none() {
                    if let Some((pm, used)) = meridiem(end) {
                        half = Some(pm);
                        end += used;
                    }
                }
                let h = match half {
                    Some(pm) => twelve(h, pm)?,
                    None => h,
                };
                return (h < 24 && m < 60 && s < 60).then_some((end, h, m, s));
            }
            // Hpm, H pm, H in the afternoon, H o'clock.
            if let Some((num, pm)) = glued(w) {
                if digits(num, 2) {
                    return Some((j + 1, twelve(num.parse().ok()?, pm)?, 0, 0));
                }
            }
            let number = numbers.iter().find(|s| s.tok_a == j && !s.ordinal)?;
            if number.value.fract() != 0.0 || !(1.0..=12.0).contains(&number.value) {
                return None;
            }
            let h = number.value as u32;
            let at = number.tok_b;
            if let Some((pm, used)) = meridiem(at) {
                return Some((at + used, twelve(h, pm)?, 0, 0));
            }
            let next = |k: usize| words.get(at + k).copied();
            match (next(0), next(1), next(2)) {
                (Some("in"), Some("the"), Some("morning")) => {
                    Some((at + 3, twelve(h, false)?, 0, 0))
                }
                (Some("in"), Some("the"), Some("afternoon" | "evening")) => {
                    Some((at + 3, twelve(h, true)?, 0, 0))
                }
                (Some("at"), Some("night"), _) => Some((at + 2, twelve(h, true)?, 0, 0)),
                (Some("oclock"), _, _) => Some((at + 1, h, 0, 0)),
                (Some("o"), Some("clock"), _) => Some((at + 2, h, 0, 0)),
                _ => None,
            }
        })();
        match found {
            Some((end, h, m, s)) => {
                out.push(DateSpan {
                    tok_a: j,
                    tok_b: end,
                    value: format!("{h:02}:{m:02}:{s:02}"),
                });
                j = end;
            }
            None => j += 1,
        }
    }
    out
}

/// The dates of a request (see the module documentation), given its numbers.
pub(crate) fn find_dates(orig: &str, n: &Normalized, numbers: &[NumberSpan]) -> Vec<DateSpan> {
    let mut out = Vec::new();
    iso_dates(orig, n, &mut out);
    numeric_dates(orig, n, &mut out);
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
    today_and_weekdays(&words, &mut out);
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
    fn numeric_dates_read_in_the_order_the_request_shows() {
        // A part above 12 says which part is the day.
        assert_eq!(dates("due 20/3/2024"), ["2024-03-20"]);
        assert_eq!(dates("due 05-18-2023"), ["2023-05-18"]);
        // The request's other dates settle an ambiguous one.
        assert_eq!(
            dates("from 05/12/2023 to 05/18/2023"),
            ["2023-05-12", "2023-05-18"]
        );
        assert_eq!(
            dates("from 19.03.2024 to 02.04.2024"),
            ["2024-03-19", "2024-04-02"]
        );
        // Nothing settles it: both readings.
        assert_eq!(dates("on 04/07/2023"), ["2023-07-04", "2023-04-07"]);
        assert_eq!(dates("on 09/09/2023"), ["2023-09-09"]);
        // No date: a fraction, a version, a part of a longer run.
        assert_eq!(
            dates("3/4 cup, version 1.2.3, 1/2/3/2024"),
            Vec::<String>::new()
        );
        assert_eq!(dates("on 31/31/2024"), Vec::<String>::new());
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

    #[test]
    fn the_date_given_as_today_and_weekdays_named_as_the_next() {
        assert_eq!(
            dates("book it for next friday, today is Tuesday, May 7th 2024"),
            ["weekday=5", "today=2024-05-07/2"]
        );
        assert_eq!(
            dates("on the upcoming sunday; today's date is 2024-05-07"),
            ["weekday=7", "today=2024-05-07"]
        );
        // A weekday that is not named as a day to come is no date.
        assert_eq!(dates("fridays are busy"), Vec::<String>::new());
        assert_eq!(dates("today and 2024-05-07"), ["P0D", "2024-05-07"]);
        assert_eq!(dates("for today May 7th 2024"), ["P0D", "2024-05-07"]);
    }

    fn times(s: &str) -> Vec<String> {
        let n = Normalized::new(s);
        let nums = find_numbers(s, &n);
        find_times(s, &n, &nums)
            .into_iter()
            .map(|d| d.value)
            .collect()
    }

    #[test]
    fn clock_times() {
        assert_eq!(times("from 09:15 to 17:40:30"), ["09:15:00", "17:40:30"]);
        assert_eq!(
            times("at 7:05 p.m. or 11am or 6 PM"),
            ["19:05:00", "11:00:00", "18:00:00"]
        );
        assert_eq!(times("12 am, 12:30pm"), ["00:00:00", "12:30:00"]);
        assert_eq!(
            times("at 2 in the afternoon, 9 in the morning, 10 at night, 8 o'clock"),
            ["14:00:00", "09:00:00", "22:00:00", "08:00:00"]
        );
        assert_eq!(times("lunch at noon"), ["12:00:00"]);
        // Numbers that are no clock time.
        assert_eq!(
            times("3 boxes, ratio 4:3, 13 pm, 25:00"),
            Vec::<String>::new()
        );
    }
}
