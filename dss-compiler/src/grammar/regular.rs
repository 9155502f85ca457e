//! Regular forms as grammar rules: the automaton of a string's constraints (`pattern`,
//! `format`, lengths) or of an integer range (`shape/regular.rs`), one rule per state.
//! A string's characters are spelled as JSON spells them and the encoder writes them
//! (serde_json's escapes: `\"`, `\\`, `\b` `\f` `\n` `\r` `\t`, `\u00xx` for the other
//! control characters, every other character as itself), so every sentence is valid JSON
//! string content. The automaton is deterministic and the spellings of distinct
//! characters are prefix-free, so pest (PEG) reads the rules as GBNF and Lark do.

use super::{Rule, Terminal, G};
use crate::shape::regular::Dfa;
use crate::shape::{Lexical, NumPart, StrPart};

/// Control characters JSON writes with a short escape.
const SHORT: [(char, &str); 5] = [
    ('\u{08}', "\\b"),
    ('\u{0C}', "\\f"),
    ('\n', "\\n"),
    ('\r', "\\r"),
    ('\t', "\\t"),
];

/// The rules of `dfa`, named `{base}_{i}` by `name`; `quoted`: a JSON string (the start
/// opens the quote, an accepting state may close it), else a bare lexeme (an integer).
/// Returns the expression of a value and the rules to add.
pub(super) fn rules(
    dfa: &Dfa,
    quoted: bool,
    mut name: impl FnMut(usize) -> String,
) -> (G, Vec<Rule>) {
    // States with no way on are written in place (the end of the value).
    let names: Vec<Option<String>> = dfa
        .states
        .iter()
        .enumerate()
        .map(|(i, s)| (!s.next.is_empty()).then(|| name(i)))
        .collect();
    let end = |quoted: bool| {
        if quoted {
            G::Text("\"".into())
        } else {
            G::Text(String::new())
        }
    };
    let goto = |t: usize| match &names[t] {
        Some(n) => G::Rule(n.clone()),
        None => end(quoted),
    };
    let mut rules = Vec::new();
    for (i, s) in dfa.states.iter().enumerate() {
        let Some(n) = &names[i] else { continue };
        let mut alts: Vec<G> = s
            .next
            .iter()
            .map(|(ranges, t)| seq2(spell(ranges, quoted), goto(*t)))
            .collect();
        let body = match (s.accept, quoted) {
            (true, true) => {
                alts.push(G::Text("\"".into()));
                G::Alt(alts)
            }
            (true, false) => G::Opt(Box::new(one(alts))),
            (false, _) => one(alts),
        };
        rules.push(Rule {
            name: n.clone(),
            body,
            comment: None,
        });
    }
    let start = goto(0);
    let value = if quoted {
        seq2(G::Text("\"".into()), start)
    } else {
        start
    };
    (value, rules)
}

/// A JSON string of `min` to `max` characters (`None`: unbounded): a bounded repetition
/// of one character's spellings.
pub(super) fn length(min: u32, max: Option<u32>) -> G {
    if max == Some(0) {
        return G::Text("\"\"".into());
    }
    G::Seq(vec![
        G::Text("\"".into()),
        G::Rep(Box::new(spell(&[('\0', char::MAX)], true)), min, max),
        G::Text("\"".into()),
    ])
}

fn one(mut alts: Vec<G>) -> G {
    if alts.len() == 1 {
        alts.remove(0)
    } else {
        G::Alt(alts)
    }
}

fn seq2(a: G, b: G) -> G {
    match (a, b) {
        (a, G::Text(s)) if s.is_empty() => a,
        (G::Text(s), b) if s.is_empty() => b,
        (G::Text(x), G::Text(y)) => G::Text(x + &y),
        (a, b) => G::Seq(vec![a, b]),
    }
}

/// The spellings of the characters in `ranges`: in a JSON string, raw characters as a
/// class and the others as their escapes.
fn spell(ranges: &[(char, char)], quoted: bool) -> G {
    if !quoted {
        return class(ranges.to_vec());
    }
    let has = |c: char| ranges.iter().any(|&(a, b)| a <= c && c <= b);
    let mut raw: Vec<(char, char)> = Vec::new();
    for &(a, b) in ranges {
        // Split around `"` (0x22), `\` (0x5C) and the control characters.
        let mut lo = a.max(' ');
        for cut in ['"', '\\'] {
            if lo <= cut && cut <= b {
                if lo < cut {
                    raw.push((lo, prev(cut)));
                }
                lo = next(cut);
            }
        }
        if lo <= b && b >= ' ' {
            raw.push((lo, b));
        }
    }
    let mut alts = Vec::new();
    if !raw.is_empty() {
        alts.push(class(raw));
    }
    if has('"') {
        alts.push(G::Text("\\\"".into()));
    }
    if has('\\') {
        alts.push(G::Text("\\\\".into()));
    }
    for (c, e) in SHORT {
        if has(c) {
            alts.push(G::Text(e.into()));
        }
    }
    let long: Vec<u32> = (0u32..0x20)
        .filter(|&c| char::from_u32(c).is_some_and(|c| has(c) && !SHORT.iter().any(|s| s.0 == c)))
        .collect();
    if long.len() == 27 {
        // Every one: `\u00` then `0[0-7bef]` or `1[0-9a-f]`.
        alts.push(G::Seq(vec![
            G::Text("\\u00".into()),
            G::Alt(vec![
                G::Seq(vec![
                    G::Text("0".into()),
                    G::Class(vec![('0', '7'), ('b', 'b'), ('e', 'f')]),
                ]),
                G::Seq(vec![
                    G::Text("1".into()),
                    G::Class(vec![('0', '9'), ('a', 'f')]),
                ]),
            ]),
        ]));
    } else {
        alts.extend(long.into_iter().map(|c| G::Text(format!("\\u{c:04x}"))));
    }
    one(alts)
}

/// A class, or the literal of its one printable character.
fn class(ranges: Vec<(char, char)>) -> G {
    match ranges[..] {
        [(a, b)] if a == b && !a.is_control() => G::Text(a.to_string()),
        _ => G::Class(ranges),
    }
}

fn prev(c: char) -> char {
    char::from_u32(c as u32 - 1).unwrap_or(c)
}
fn next(c: char) -> char {
    char::from_u32(c as u32 + 1).unwrap_or(c)
}

/// How the readable grammar writes a string's regular form (`None`: by its terminal;
/// dates keep theirs): `<"email">`, `<"string" matching ^[0-2][0-9]$>`,
/// `<"string" of 1..40 characters>`.
pub(super) fn readable_string(s: &StrPart) -> Option<String> {
    let checks = s.lexical.as_ref().and_then(Lexical::regular)?;
    if Terminal::of_string(s, true) != Terminal::String {
        return None;
    }
    let head = checks
        .iter()
        .find(|c| c.keyword == "format")
        .map_or("string", |c| c.source.as_str());
    let mut out = format!("<\"{head}\"");
    for c in checks {
        match c.keyword.as_str() {
            "pattern" => out.push_str(&format!(" matching {}", c.source)),
            "length" => out.push_str(&format!(" of {} characters", c.source)),
            _ => {}
        }
    }
    out.push('>');
    Some(out)
}

/// How the readable grammar writes an integer range (`None`: by its terminal).
pub(super) fn readable_number(n: &NumPart) -> Option<String> {
    let r = n.range?;
    Some(match r.max {
        Some(max) => format!("<integer {}..{max}>", r.min),
        None => format!("<integer >= {}>", r.min),
    })
}

/// A character class as GBNF writes it (`[...]`, or `[^...]` when shorter): every
/// character but ASCII letters and digits escaped (`\xHH`, `\uHHHH`, `\UHHHHHHHH`), so
/// llama.cpp and the Lark conversion read it alike. A hex digit right after an escape is
/// escaped too: XGrammar reads `\x` with every hex digit that follows (`[\x2E0-\x3B]` is
/// a range from U+02E0 there), llama.cpp with exactly two.
pub(super) fn gbnf_class(ranges: &[(char, char)]) -> String {
    let (negated, ranges) = smaller_form(ranges);
    let mut out = String::from(if negated { "[^" } else { "[" });
    let mut after_escape = false;
    for (a, b) in ranges {
        after_escape = push_gbnf_char(&mut out, a, after_escape);
        if b != a {
            out.push('-');
            after_escape = push_gbnf_char(&mut out, b, false);
        }
    }
    out.push(']');
    out
}

/// Writes `c` as a class member (`after_escape`: what comes before it is an escape); says
/// whether it was written as an escape.
fn push_gbnf_char(out: &mut String, c: char, after_escape: bool) -> bool {
    let plain = c.is_ascii_alphanumeric() && !(after_escape && c.is_ascii_hexdigit());
    match c as u32 {
        _ if plain => out.push(c),
        n if n < 0x80 => out.push_str(&format!("\\x{n:02X}")),
        n if n <= 0xFFFF => out.push_str(&format!("\\u{n:04X}")),
        n => out.push_str(&format!("\\U{n:08X}")),
    }
    !plain
}

/// A character class as pest writes it: alternatives of ranges, or "none of these, then
/// any character" when shorter.
pub(super) fn pest_class(ranges: &[(char, char)]) -> String {
    let (negated, rs) = smaller_form(ranges);
    let alts: Vec<String> = rs
        .iter()
        .map(|&(a, b)| {
            if a == b {
                format!("\"\\u{{{:X}}}\"", a as u32)
            } else {
                format!("{}..{}", pest_char(a), pest_char(b))
            }
        })
        .collect();
    match (negated, alts.len()) {
        (true, 0) => "ANY".into(),
        (true, _) => format!("(!({}) ~ ANY)", alts.join(" | ")),
        (false, 1) => alts[0].clone(),
        (false, _) => format!("({})", alts.join(" | ")),
    }
}

fn pest_char(c: char) -> String {
    if c.is_ascii_alphanumeric() {
        format!("'{c}'")
    } else {
        format!("'\\u{{{:X}}}'", c as u32)
    }
}

/// The ranges, or their complement (`true`) when it has fewer ranges; surrogates are no
/// characters, so they count on either side.
pub(super) fn smaller_form(ranges: &[(char, char)]) -> (bool, Vec<(char, char)>) {
    let mut comp: Vec<(u32, u32)> = Vec::new();
    let mut at = 0u32;
    let mut sorted = ranges.to_vec();
    sorted.sort();
    for &(a, b) in &sorted {
        if (a as u32) > at {
            comp.push((at, a as u32 - 1));
        }
        at = at.max(b as u32 + 1);
    }
    if at <= 0x10FFFF {
        comp.push((at, 0x10FFFF));
    }
    // Drop the surrogate block from the complement.
    let mut cleaned: Vec<(char, char)> = Vec::new();
    for (a, b) in comp {
        for (x, y) in [(a, b.min(0xD7FF)), (a.max(0xE000), b)] {
            if x <= y {
                if let (Some(x), Some(y)) = (char::from_u32(x), char::from_u32(y)) {
                    if !cleaned.contains(&(x, y)) {
                        cleaned.push((x, y));
                    }
                }
            }
        }
    }
    if cleaned.len() < sorted.len() {
        (true, cleaned)
    } else {
        (false, sorted)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::shape::regular::{dfa, ecma};

    #[test]
    fn classes_print_in_both_syntaxes() {
        assert_eq!(gbnf_class(&[('0', '9'), (':', ':')]), "[0-9\\x3A]");
        assert_eq!(pest_class(&[('a', 'c')]), "'a'..'c'");
        // Every character but `"`: the complement is shorter.
        let all_but_quote = [('\0', '!'), ('#', char::MAX)];
        assert_eq!(gbnf_class(&all_but_quote), "[^\\x22]");
        assert_eq!(pest_class(&all_but_quote), "(!(\"\\u{22}\") ~ ANY)");
        // A hex digit after an escape is escaped (XGrammar reads `\x2E0` as one escape);
        // a letter that is no hex digit (`g`), or a digit after a plain one, is not.
        assert_eq!(
            gbnf_class(&[('.', '.'), ('0', ';'), ('?', 'Z'), ('_', '_'), ('a', 'z')]),
            "[\\x2E\\x30-\\x3B\\x3F-Z\\x5F\\x61-z]"
        );
        assert_eq!(gbnf_class(&[('!', '!'), ('g', 'h')]), "[\\x21g-h]");
        assert_eq!(gbnf_class(&[('0', '0'), ('5', '5')]), "[05]");
    }

    #[test]
    fn rules_of_a_time_pattern() {
        let d = dfa(&[&ecma("^[0-2][0-9]:[0-5][0-9]$")]).unwrap();
        let (value, rules) = rules(&d, true, |i| format!("t_{i}"));
        assert_eq!(
            value,
            G::Seq(vec![G::Text("\"".into()), G::Rule("t_0".into())])
        );
        assert_eq!(rules.len(), 5);
        // The last digit closes the string.
        assert_eq!(
            rules[4].body,
            G::Seq(vec![G::Class(vec![('0', '9')]), G::Text("\"".into())])
        );
    }

    #[test]
    fn the_readable_grammar_names_regular_forms() {
        let schema = serde_json::json!({"type": "object", "properties": {
            "start_time": {"type": "string", "pattern": "^[0-2][0-9]:[0-5][0-9]$"},
            "organizer": {"type": "string", "format": "email"},
            "title": {"type": "string", "maxLength": 40},
            "day": {"type": "string", "format": "date"},
            "priority": {"type": "integer", "minimum": 1, "maximum": 10}
        }, "required": ["start_time", "organizer", "title", "day", "priority"]});
        let bnf = crate::compile(&schema, &Default::default())
            .unwrap()
            .grammar_bnf();
        for part in [
            "<start_time:\"string\" matching ^[0-2][0-9]:[0-5][0-9]$>",
            "<organizer:\"email\">",
            "<title:\"string\" of 0..40 characters>",
            "<day:date>",
            "<priority:integer 1..10>",
        ] {
            assert!(bnf.contains(part), "{part}\n{bnf}");
        }
    }

    #[test]
    fn lengths_alone_are_bounded_repetitions() {
        let schema = serde_json::json!({"type": "object", "properties": {
            "none": {"type": "string", "maxLength": 0},
            "three": {"type": "string", "minLength": 3, "maxLength": 3},
            "many": {"type": "string", "minLength": 2}
        }, "required": ["none", "three", "many"]});
        let spec = crate::compile(&schema, &Default::default()).unwrap();
        let x = serde_json::json!({"none": "", "three": "a\nb", "many": "xy"});
        let s = spec.compress(&x).unwrap();
        assert_eq!(spec.expand(&s).unwrap(), x);
        let (_, rules) = pest_meta::parse_and_optimize(&spec.grammar_pest()).unwrap();
        let vm = pest_vm::Vm::new(rules);
        assert!(vm.parse("document", &s).is_ok(), "{s}");
        let long = s.replace("\"xy\"", "\"x\"");
        assert!(vm.parse("document", &long).is_err() && spec.expand(&long).is_err());
        let gbnf = spec.grammar_gbnf();
        assert!(gbnf.contains("{3}") && gbnf.contains("{2,}"), "{gbnf}");
    }

    #[test]
    fn json_escapes_of_special_characters() {
        let g = spell(&[('\0', char::MAX)], true);
        let G::Alt(alts) = g else { panic!("{g:?}") };
        assert!(alts.contains(&G::Text("\\\"".into())));
        assert!(alts.contains(&G::Text("\\\\".into())));
        assert!(alts.contains(&G::Text("\\n".into())));
        assert_eq!(alts.len(), 9);
        assert_eq!(
            spell(&[('\u{1}', '\u{1}')], true),
            G::Text("\\u0001".into())
        );
    }
}
