//! Dates and clock times: the ones a request gives ([`Moment`], carried in ISO 8601 in
//! [`Restriction::dates`](crate::prune::Restriction::dates)) and the forms a field asks for them
//! in ([`MomentForm`], read from the description's examples: `'YYYY-MM-DD'`,
//! `'dd/mm/yyyy HH:MM'`, `'2023-04-15T13:45:00Z'`, `'18:45'`).
//!
//! A request says "the 12th of March 2023 at 3 in the afternoon"; extraction reads it as
//! the moment `2023-03-12T15:00:00`, and a field whose examples read `'dd/mm/yyyy HH:MM'`
//! is offered `"12/03/2023 15:00"`, one whose examples read `'YYYY-MM-DD'` the date
//! `"2023-03-12"` and one whose examples read `'18:45'` the time `"15:00"`.

/// A date, a clock time, or both, as a request gives them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Moment {
    /// Year, month (1–12) and day (1–31).
    pub date: Option<(u32, u32, u32)>,
    /// Hour (0–23), minute and second.
    pub time: Option<(u32, u32, u32)>,
}

impl Moment {
    /// Reads the ISO 8601 text of a moment: `YYYY-MM-DD`, `YYYY-MM-DDTHH:MM:SS` or
    /// `HH:MM:SS` (as [`Moment::iso`] writes them).
    pub fn parse(text: &str) -> Option<Moment> {
        let num = |s: &str, len: usize| -> Option<u32> {
            (s.len() == len && s.bytes().all(|b| b.is_ascii_digit()))
                .then(|| s.parse().ok())
                .flatten()
        };
        let date = |s: &str| -> Option<(u32, u32, u32)> {
            let mut it = s.split('-');
            let y = num(it.next()?, 4)?;
            let m = num(it.next()?, 2)?;
            let d = num(it.next()?, 2)?;
            (it.next().is_none() && (1..=12).contains(&m) && (1..=31).contains(&d))
                .then_some((y, m, d))
        };
        let time = |s: &str| -> Option<(u32, u32, u32)> {
            let mut it = s.split(':');
            let h = num(it.next()?, 2)?;
            let m = num(it.next()?, 2)?;
            let sec = num(it.next()?, 2)?;
            (it.next().is_none() && h < 24 && m < 60 && sec < 60).then_some((h, m, sec))
        };
        match text.split_once('T') {
            Some((d, t)) => Some(Moment {
                date: Some(date(d)?),
                time: Some(time(t)?),
            }),
            None if text.contains(':') => Some(Moment {
                date: None,
                time: Some(time(text)?),
            }),
            None => Some(Moment {
                date: Some(date(text)?),
                time: None,
            }),
        }
    }

    /// The ISO 8601 text (see [`Moment::parse`]); empty where the moment holds nothing.
    pub fn iso(&self) -> String {
        let date = self.date.map(|(y, m, d)| format!("{y:04}-{m:02}-{d:02}"));
        let time = self.time.map(|(h, m, s)| format!("{h:02}:{m:02}:{s:02}"));
        match (date, time) {
            (Some(d), Some(t)) => format!("{d}T{t}"),
            (Some(d), None) => d,
            (None, Some(t)) => t,
            (None, None) => String::new(),
        }
    }
}

/// One part of a [`MomentForm`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Part {
    Year,
    /// Month, day, hour, minute, second; `true`: two digits always (`03`), `false`: as
    /// few as the number needs (`3`).
    Month(bool),
    Day(bool),
    Hour(bool),
    Minute,
    Second,
    /// A separator written as it is (`-`, `/`, `.`, `:`, a space, `T`, `Z`).
    Lit(char),
}

/// The form a field writes a date, a time or both in, read from one of its examples.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MomentForm {
    parts: Vec<Part>,
}

impl MomentForm {
    /// The form `example` shows: a pattern (`YYYY-MM-DD`, `dd/mm/yyyy HH:MM`,
    /// `YYYY-MM-DDTHH:MM:SSZ`, `HH:mm`, any case; `MM` after an hour is minutes) or a
    /// sample (`2023-04-15T13:45:00Z`, `15/03/2024`, `18:45`). `None` where it is neither,
    /// or a sample whose day and month could be either way round (`03/04/2024`).
    pub fn of(example: &str) -> Option<MomentForm> {
        let t = example.trim();
        if t.bytes().any(|b| b.is_ascii_digit()) {
            Self::of_sample(t)
        } else {
            Self::of_pattern(t)
        }
    }

    /// The ISO 8601 calendar date, `YYYY-MM-DD`.
    pub fn iso_date() -> MomentForm {
        MomentForm {
            parts: vec![
                Part::Year,
                Part::Lit('-'),
                Part::Month(true),
                Part::Lit('-'),
                Part::Day(true),
            ],
        }
    }

    fn of_pattern(t: &str) -> Option<MomentForm> {
        let cs: Vec<char> = t.chars().collect();
        let mut parts = Vec::new();
        let mut i = 0;
        while i < cs.len() {
            let c = cs[i];
            let run = cs[i..].iter().take_while(|x| **x == c).count();
            let after_hour = parts
                .iter()
                .rev()
                .find(|p| !matches!(p, Part::Lit(_)))
                .is_some_and(|p| matches!(p, Part::Hour(_) | Part::Minute));
            let part = match (c.to_ascii_lowercase(), run) {
                ('y', 4) => Part::Year,
                ('m', 2) if after_hour => Part::Minute,
                ('m', 1 | 2) if !after_hour => Part::Month(run == 2),
                ('d', 1 | 2) => Part::Day(run == 2),
                ('h', 1 | 2) => Part::Hour(run == 2),
                ('s', 2) => Part::Second,
                ('t', 1) if c == 'T' => Part::Lit('T'),
                ('z', 1) if c == 'Z' => Part::Lit('Z'),
                ('-' | '/' | '.' | ':' | ' ', 1) => Part::Lit(c),
                _ => return None,
            };
            parts.push(part);
            i += run;
        }
        Self::checked(parts)
    }

    fn of_sample(t: &str) -> Option<MomentForm> {
        // Digit groups and the separators between them.
        let mut groups: Vec<(String, Option<char>)> = Vec::new();
        let mut cur = String::new();
        for c in t.chars() {
            if c.is_ascii_digit() {
                cur.push(c);
            } else if matches!(c, '-' | '/' | '.' | ':' | ' ' | 'T' | 'Z') && !cur.is_empty() {
                groups.push((std::mem::take(&mut cur), Some(c)));
            } else {
                return None;
            }
        }
        if !cur.is_empty() {
            groups.push((cur, None));
        }
        let mut parts = Vec::new();
        let mut rest: &[(String, Option<char>)] = &groups;
        // The date: three groups joined by `-`, `/` or `.`.
        if rest.len() >= 3 && rest[0].1.is_some_and(|c| c != ':') && rest[0].1 == rest[1].1 {
            let (a, b, c) = (&rest[0].0, &rest[1].0, &rest[2].0);
            let n = |s: &String| s.parse::<u32>().ok();
            let (na, nb, nc) = (n(a)?, n(b)?, n(c)?);
            let sep = Part::Lit(rest[0].1?);
            let month = |s: &String| Part::Month(s.len() == 2);
            let day = |s: &String| Part::Day(s.len() == 2);
            let order = if a.len() == 4 && (1..=12).contains(&nb) && (1..=31).contains(&nc) {
                [Part::Year, sep, month(b), sep, day(c)]
            } else if c.len() == 4 && na > 12 && (13..=31).contains(&na) && (1..=12).contains(&nb) {
                [day(a), sep, month(b), sep, Part::Year]
            } else if c.len() == 4 && nb > 12 && (13..=31).contains(&nb) && (1..=12).contains(&na) {
                [month(a), sep, day(b), sep, Part::Year]
            } else {
                return None;
            };
            parts.extend(order);
            if let Some(s) = rest[2].1 {
                parts.push(Part::Lit(s));
            }
            rest = &rest[3..];
        }
        // The time: two or three groups joined by `:`.
        if !rest.is_empty() {
            if rest.len() < 2 || rest[0].1 != Some(':') {
                return None;
            }
            let h: u32 = rest[0].0.parse().ok()?;
            let m: u32 = rest[1].0.parse().ok()?;
            if h > 23 || m > 59 || rest[1].0.len() != 2 {
                return None;
            }
            parts.extend([
                Part::Hour(rest[0].0.len() == 2),
                Part::Lit(':'),
                Part::Minute,
            ]);
            let mut end = rest[1].1;
            if end == Some(':') {
                let s = rest.get(2)?;
                if s.0.len() != 2 || s.0.parse::<u32>().ok()? > 59 || rest.len() > 3 {
                    return None;
                }
                parts.extend([Part::Lit(':'), Part::Second]);
                end = s.1;
            } else if rest.len() > 2 {
                return None;
            }
            if let Some(z) = end {
                parts.push(Part::Lit(z));
            }
        }
        Self::checked(parts)
    }

    /// A form with a whole date (year, month, day) or a whole time (hour, minute) or
    /// both, each part once.
    fn checked(parts: Vec<Part>) -> Option<MomentForm> {
        let count = |f: fn(&Part) -> bool| parts.iter().filter(|p| f(p)).count();
        let years = count(|p| matches!(p, Part::Year));
        let months = count(|p| matches!(p, Part::Month(_)));
        let days = count(|p| matches!(p, Part::Day(_)));
        let hours = count(|p| matches!(p, Part::Hour(_)));
        let minutes = count(|p| matches!(p, Part::Minute));
        let seconds = count(|p| matches!(p, Part::Second));
        let date = (years, months, days) == (1, 1, 1);
        let no_date = (years, months, days) == (0, 0, 0);
        let time = (hours, minutes) == (1, 1) && seconds <= 1;
        let no_time = (hours, minutes, seconds) == (0, 0, 0);
        let whole = (date && (time || no_time)) || (no_date && time);
        // No two numbers without a separator between them (`YYYYMMDD` is left alone).
        let joined = parts
            .windows(2)
            .any(|w| !matches!(w[0], Part::Lit(_)) && !matches!(w[1], Part::Lit(_)));
        (whole && !joined).then_some(MomentForm { parts })
    }

    /// Whether the form writes a date.
    pub fn has_date(&self) -> bool {
        self.parts.contains(&Part::Year)
    }

    /// Whether the form writes a clock time.
    pub fn has_time(&self) -> bool {
        self.parts.iter().any(|p| matches!(p, Part::Hour(_)))
    }

    /// `moment` written in this form; `None` where the form needs a part the moment lacks
    /// (a time for `dd/mm/yyyy HH:MM` where the request gave a date alone). A part the
    /// form does not write is left out (`2023-03-12T15:00:00` as `dd/mm/yyyy` is
    /// `12/03/2023`).
    pub fn render(&self, moment: &Moment) -> Option<String> {
        let date = if self.has_date() { moment.date } else { None };
        let time = if self.has_time() { moment.time } else { None };
        if (self.has_date() && date.is_none()) || (self.has_time() && time.is_none()) {
            return None;
        }
        let (y, mo, d) = date.unwrap_or_default();
        let (h, mi, s) = time.unwrap_or_default();
        let num = |n: u32, two: bool| {
            if two {
                format!("{n:02}")
            } else {
                n.to_string()
            }
        };
        let mut out = String::new();
        for p in &self.parts {
            match *p {
                Part::Year => out.push_str(&format!("{y:04}")),
                Part::Month(two) => out.push_str(&num(mo, two)),
                Part::Day(two) => out.push_str(&num(d, two)),
                Part::Hour(two) => out.push_str(&num(h, two)),
                Part::Minute => out.push_str(&num(mi, true)),
                Part::Second => out.push_str(&num(s, true)),
                Part::Lit(c) => out.push(c),
            }
        }
        Some(out)
    }

    /// What is left of `moment` once a field of this form wrote it: its time after a
    /// date-only form, its date after a time-only one, nothing after a form of both.
    pub fn rest(&self, moment: &Moment) -> Option<Moment> {
        let rest = Moment {
            date: moment.date.filter(|_| !self.has_date()),
            time: moment.time.filter(|_| !self.has_time()),
        };
        (rest.date.is_some() || rest.time.is_some()).then_some(rest)
    }

    /// The form the examples of a field agree on: every example that shows a form shows
    /// this one, at least one does, and the others are samples whose day and month could
    /// be either way round. `None` otherwise.
    pub fn agreed(examples: &[String]) -> Option<MomentForm> {
        let mut agreed: Option<MomentForm> = None;
        for e in examples {
            match MomentForm::of(e) {
                Some(f) => match &agreed {
                    Some(a) if *a != f => return None,
                    Some(_) => {}
                    None => agreed = Some(f),
                },
                None => {
                    let ambiguous = e
                        .trim()
                        .chars()
                        .all(|c| c.is_ascii_digit() || "/.-".contains(c))
                        && e.chars().any(|c| c.is_ascii_digit());
                    if !ambiguous {
                        return None;
                    }
                }
            }
        }
        agreed
    }
}

/// Uses up what writing `written` at a field of `form` (`None`: ISO 8601, a `format:
/// date` field) took of the request's `moments` (ISO 8601 texts, see [`Moment::parse`]):
/// the moment it renders is removed, or replaced by what the field did not write of it
/// (a date-time written as a date leaves its time). Whether one was used.
pub(crate) fn consume_moment(
    moments: &mut Vec<serde_json::Value>,
    form: Option<&MomentForm>,
    written: &str,
) -> bool {
    let iso = MomentForm::iso_date();
    for (i, v) in moments.iter().enumerate() {
        let Some(m) = v.as_str().and_then(Moment::parse) else {
            continue;
        };
        let hit = match form {
            Some(f) => f
                .render(&m)
                .is_some_and(|r| r == written)
                .then(|| f.rest(&m)),
            None if m.iso() == written => Some(None),
            None => iso
                .render(&m)
                .is_some_and(|r| r == written)
                .then(|| iso.rest(&m)),
        };
        if let Some(rest) = hit {
            match rest {
                Some(r) => moments[i] = serde_json::Value::String(r.iso()),
                None => {
                    moments.remove(i);
                }
            }
            return true;
        }
    }
    false
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn m(s: &str) -> Moment {
        Moment::parse(s).expect("moment")
    }

    #[test]
    fn patterns_and_samples_give_the_same_forms() {
        let pairs = [
            ("YYYY-MM-DD", "2023-04-01"),
            ("dd/mm/yyyy", "15/03/2024"),
            ("MM/DD/YYYY", "12/31/2024"),
            ("dd/mm/yyyy HH:MM", "25/12/2023 09:30"),
            ("YYYY-MM-DD HH:mm:ss", "2024-01-02 03:04:05"),
            ("YYYY-MM-DDTHH:MM:SS", "2023-11-01T20:00:00"),
            ("YYYY-MM-DDTHH:MM:SSZ", "2023-04-15T13:45:00Z"),
            ("HH:MM", "18:45"),
        ];
        for (pattern, sample) in pairs {
            let p = MomentForm::of(pattern).unwrap_or_else(|| panic!("{pattern}"));
            let s = MomentForm::of(sample).unwrap_or_else(|| panic!("{sample}"));
            assert_eq!(p, s, "{pattern} / {sample}");
        }
        for no in [
            "03/04/2024",
            "YYYYMMDD",
            "a date",
            "2023",
            "MM-DD",
            "12:3",
            "25:00",
        ] {
            assert_eq!(MomentForm::of(no), None, "{no}");
        }
    }

    #[test]
    fn a_moment_is_written_in_the_form_a_field_asks_for() {
        let dt = m("2023-03-12T15:00:00");
        let render = |f: &str| MomentForm::of(f).and_then(|f| f.render(&dt));
        assert_eq!(
            render("dd/mm/yyyy HH:MM").as_deref(),
            Some("12/03/2023 15:00")
        );
        assert_eq!(render("YYYY-MM-DD").as_deref(), Some("2023-03-12"));
        assert_eq!(render("18:45").as_deref(), Some("15:00"));
        assert_eq!(
            render("2023-04-15T13:45:00Z").as_deref(),
            Some("2023-03-12T15:00:00Z")
        );
        assert_eq!(render("M/D/YYYY").as_deref(), Some("3/12/2023"));
        // A date alone has no time to write.
        let form = MomentForm::of("dd/mm/yyyy HH:MM").expect("form");
        assert_eq!(form.render(&m("2023-03-12")), None);
        assert_eq!(MomentForm::iso_date().render(&m("09:30:00")), None);
    }

    #[test]
    fn a_moment_is_used_up_by_the_parts_written() {
        let mut moments = vec![json!("2024-03-16T14:00:00"), json!("2024-03-20")];
        let date = MomentForm::of("dd/mm/yyyy").expect("form");
        let time = MomentForm::of("18:45").expect("form");
        assert!(consume_moment(&mut moments, Some(&date), "16/03/2024"));
        assert_eq!(moments, [json!("14:00:00"), json!("2024-03-20")]);
        assert!(!consume_moment(&mut moments, Some(&time), "15:00"));
        assert!(consume_moment(&mut moments, Some(&time), "14:00"));
        assert!(consume_moment(&mut moments, None, "2024-03-20"));
        assert!(moments.is_empty());
    }

    #[test]
    fn examples_agree_on_one_form_or_ask_for_none() {
        let ex = |xs: &[&str]| xs.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        let f = MomentForm::agreed(&ex(&["dd/mm/yyyy", "15/03/2024", "01/02/2024"]));
        assert_eq!(f, MomentForm::of("dd/mm/yyyy"));
        assert_eq!(MomentForm::agreed(&ex(&["YYYY-MM-DD", "15/03/2024"])), None);
        assert_eq!(MomentForm::agreed(&ex(&["2023-04-01", "now"])), None);
        assert_eq!(MomentForm::agreed(&ex(&["01/02/2024"])), None);
        assert_eq!(MomentForm::agreed(&[]), None);
    }
}
