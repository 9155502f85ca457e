//! The printer pest and GBNF share: the IR's expressions, with what differs between the
//! two syntaxes given as a [`Syntax`].

use super::G;

/// What differs between the grammar syntaxes the IR is printed in.
pub(super) struct Syntax {
    pub lit: fn(&str) -> String,
    /// Literal text inside a lexeme ([`G::Text`]).
    pub text: fn(&str) -> String,
    /// A rule or terminal name.
    pub rule: fn(&str) -> String,
    pub seq_sep: &'static str,
    /// An alternative that matches nothing.
    pub never: &'static str,
    /// A character class.
    pub class: fn(&[(char, char)]) -> String,
    /// A repetition suffix (`{m,n}`).
    pub rep: fn(u32, Option<u32>) -> String,
}

/// An expression; `prec`: 0 in alternatives, 1 in a sequence, 2 an item of a sequence,
/// 3 under `?` or `*`.
pub(super) fn print_expr(g: &G, prec: u8, sx: &Syntax) -> String {
    let group = |s: String, at: u8| if prec > at { format!("({s})") } else { s };
    match g {
        G::Lit(s) => (sx.lit)(s),
        G::Text(s) => (sx.text)(s),
        G::Term(t) => (sx.rule)(t.name()),
        G::Rule(n) => (sx.rule)(n),
        G::Seq(xs) => group(
            xs.iter()
                .map(|x| print_expr(x, 2, sx))
                .collect::<Vec<_>>()
                .join(sx.seq_sep),
            1,
        ),
        G::Alt(xs) if xs.is_empty() => sx.never.to_string(),
        G::Alt(xs) => group(
            xs.iter()
                .map(|x| print_expr(x, 1, sx))
                .collect::<Vec<_>>()
                .join(" | "),
            0,
        ),
        G::Opt(x) => format!("{}?", print_expr(x, 3, sx)),
        G::Star(x) => format!("{}*", print_expr(x, 3, sx)),
        G::Class(ranges) => (sx.class)(ranges),
        G::Rep(x, min, max) => format!("{}{}", print_expr(x, 3, sx), (sx.rep)(*min, *max)),
    }
}

/// A double-quoted grammar literal with C-style escapes for `"`, `\\`, `\n`, `\r` and
/// `\t`; `other` escapes any further character it returns text for (each grammar syntax
/// writes the remaining control characters its own way).
pub fn quote_lit(s: &str, other: impl Fn(char) -> Option<String>) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c => match other(c) {
                Some(e) => out.push_str(&e),
                None => out.push(c),
            },
        }
    }
    out.push('"');
    out
}
