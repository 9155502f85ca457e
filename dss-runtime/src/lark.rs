//! GBNF → Lark (llguidance's dialect), so the llguidance engine constrains generation by
//! exactly the GBNF that dss emits.
//!
//! Why convert GBNF rather than print Lark from the compiler's grammar IR: GBNF is the
//! portable artifact (`shorthand.gbnf`), a grammar pruned per request will be GBNF too, and
//! any hand-written GBNF works as well. The conversion is structural; only the lexer split is
//! a choice: a rule that references no other rule and uses a character class (`string`,
//! `number`, `integer`) becomes one regex lexeme (`T_STRING: /…/`), everything else stays a
//! grammar rule whose literals are lexemes. dss's notation separates elements by a literal
//! space or newline, so llguidance's greedy lexemes never swallow what follows them.

use std::collections::{BTreeSet, HashMap};
use std::fmt::Write as _;

/// A GBNF text llguidance's converter cannot read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("GBNF line {line}: {message}")]
pub struct LarkError {
    /// The GBNF line (1-based).
    pub line: usize,
    /// What cannot be converted.
    pub message: String,
}

/// A GBNF expression.
#[derive(Debug, Clone, PartialEq)]
enum Ex {
    Lit(String),
    /// A character class: (negated, ranges of chars, inclusive).
    Class(bool, Vec<(char, char)>),
    Any,
    Ref(String),
    Seq(Vec<Ex>),
    Alt(Vec<Ex>),
    Rep(Box<Ex>, u32, Option<u32>),
}

struct Parser<'a> {
    src: &'a [u8],
    text: &'a str,
    pos: usize,
}

impl Parser<'_> {
    fn line(&self) -> usize {
        self.text[..self.pos.min(self.text.len())]
            .bytes()
            .filter(|&b| b == b'\n')
            .count()
            + 1
    }

    fn err(&self, message: impl Into<String>) -> LarkError {
        LarkError {
            line: self.line(),
            message: message.into(),
        }
    }

    fn peek(&self) -> Option<u8> {
        self.src.get(self.pos).copied()
    }

    /// Skips spaces and comments; newlines too when `newlines`.
    fn space(&mut self, newlines: bool) {
        while let Some(b) = self.peek() {
            match b {
                b' ' | b'\t' | b'\r' => self.pos += 1,
                b'\n' if newlines => self.pos += 1,
                b'#' => {
                    while self.peek().is_some_and(|b| b != b'\n') {
                        self.pos += 1;
                    }
                }
                _ => break,
            }
        }
    }

    fn name(&mut self) -> Option<String> {
        let start = self.pos;
        while self
            .peek()
            .is_some_and(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
        {
            self.pos += 1;
        }
        (self.pos > start).then(|| self.text[start..self.pos].to_string())
    }

    /// The next char of the source (UTF-8 aware).
    fn next_char(&mut self) -> Result<char, LarkError> {
        let c = self.text[self.pos..]
            .chars()
            .next()
            .ok_or_else(|| self.err("unexpected end of grammar"))?;
        self.pos += c.len_utf8();
        Ok(c)
    }

    fn hex(&mut self, digits: usize) -> Result<char, LarkError> {
        let end = self.pos + digits;
        let hex = self
            .text
            .get(self.pos..end)
            .ok_or_else(|| self.err("truncated escape"))?;
        let v = u32::from_str_radix(hex, 16).map_err(|_| self.err("bad hex escape"))?;
        self.pos = end;
        char::from_u32(v).ok_or_else(|| self.err("escape is not a Unicode scalar"))
    }

    /// One char of a literal or class, with GBNF escapes.
    fn char_escaped(&mut self) -> Result<char, LarkError> {
        let c = self.next_char()?;
        if c != '\\' {
            return Ok(c);
        }
        let e = self.next_char()?;
        Ok(match e {
            'n' => '\n',
            'r' => '\r',
            't' => '\t',
            '0' => '\0',
            'x' => self.hex(2)?,
            'u' => self.hex(4)?,
            'U' => self.hex(8)?,
            other => other,
        })
    }

    fn rule(&mut self) -> Result<Option<(String, Ex)>, LarkError> {
        self.space(true);
        if self.peek().is_none() {
            return Ok(None);
        }
        let name = self
            .name()
            .ok_or_else(|| self.err("expected a rule name"))?;
        self.space(false);
        if !self.text[self.pos..].starts_with("::=") {
            return Err(self.err(format!("expected ::= after `{name}`")));
        }
        self.pos += 3;
        let body = self.alternatives(false)?;
        Ok(Some((name, body)))
    }

    fn alternatives(&mut self, nested: bool) -> Result<Ex, LarkError> {
        let mut alts = vec![self.sequence(nested)?];
        while self.peek() == Some(b'|') {
            self.pos += 1;
            self.space(true);
            alts.push(self.sequence(nested)?);
        }
        Ok(if alts.len() == 1 {
            alts.remove(0)
        } else {
            Ex::Alt(alts)
        })
    }

    fn sequence(&mut self, nested: bool) -> Result<Ex, LarkError> {
        let mut items = Vec::new();
        loop {
            self.space(nested);
            let Some(b) = self.peek() else { break };
            let atom = match b {
                b'"' => {
                    self.pos += 1;
                    let mut s = String::new();
                    loop {
                        match self.peek() {
                            None => return Err(self.err("unterminated literal")),
                            Some(b'"') => {
                                self.pos += 1;
                                break;
                            }
                            Some(_) => s.push(self.char_escaped()?),
                        }
                    }
                    Ex::Lit(s)
                }
                b'[' => {
                    self.pos += 1;
                    let negated = self.peek() == Some(b'^');
                    if negated {
                        self.pos += 1;
                    }
                    let mut ranges = Vec::new();
                    loop {
                        match self.peek() {
                            None => return Err(self.err("unterminated character class")),
                            Some(b']') => {
                                self.pos += 1;
                                break;
                            }
                            Some(_) => {
                                let lo = self.char_escaped()?;
                                let hi = if self.peek() == Some(b'-')
                                    && self.src.get(self.pos + 1) != Some(&b']')
                                {
                                    self.pos += 1;
                                    self.char_escaped()?
                                } else {
                                    lo
                                };
                                if hi < lo {
                                    return Err(self.err("reversed range in character class"));
                                }
                                ranges.push((lo, hi));
                            }
                        }
                    }
                    Ex::Class(negated, ranges)
                }
                b'.' => {
                    self.pos += 1;
                    Ex::Any
                }
                b'(' => {
                    self.pos += 1;
                    self.space(true);
                    let inner = self.alternatives(true)?;
                    self.space(true);
                    if self.peek() != Some(b')') {
                        return Err(self.err("expected )"));
                    }
                    self.pos += 1;
                    inner
                }
                b if b.is_ascii_alphanumeric() || b == b'-' || b == b'_' => {
                    let n = self.name().ok_or_else(|| self.err("expected a name"))?;
                    // `name ::=` starts the next rule: this sequence is over.
                    let save = self.pos;
                    self.space(false);
                    if self.text[self.pos..].starts_with("::=") {
                        self.pos = save - n.len();
                        break;
                    }
                    self.pos = save;
                    Ex::Ref(n)
                }
                _ => break,
            };
            items.push(self.postfix(atom)?);
        }
        Ok(if items.len() == 1 {
            items.remove(0)
        } else {
            Ex::Seq(items)
        })
    }

    fn number(&mut self) -> Option<u32> {
        let start = self.pos;
        while self.peek().is_some_and(|b| b.is_ascii_digit()) {
            self.pos += 1;
        }
        self.text[start..self.pos].parse().ok()
    }

    fn postfix(&mut self, mut atom: Ex) -> Result<Ex, LarkError> {
        loop {
            atom = match self.peek() {
                Some(b'*') => Ex::Rep(Box::new(atom), 0, None),
                Some(b'+') => Ex::Rep(Box::new(atom), 1, None),
                Some(b'?') => Ex::Rep(Box::new(atom), 0, Some(1)),
                Some(b'{') => {
                    self.pos += 1;
                    self.space(false);
                    let min = self.number().ok_or_else(|| self.err("expected a count"))?;
                    self.space(false);
                    let max = if self.peek() == Some(b',') {
                        self.pos += 1;
                        self.space(false);
                        self.number()
                    } else {
                        Some(min)
                    };
                    self.space(false);
                    if self.peek() != Some(b'}') {
                        return Err(self.err("expected }"));
                    }
                    if max.is_some_and(|m| m < min) {
                        return Err(self.err("repetition maximum below minimum"));
                    }
                    Ex::Rep(Box::new(atom), min, max)
                }
                _ => return Ok(atom),
            };
            self.pos += 1;
        }
    }
}

fn refs(e: &Ex, out: &mut BTreeSet<String>) {
    match e {
        Ex::Ref(n) => {
            out.insert(n.clone());
        }
        Ex::Seq(xs) | Ex::Alt(xs) => xs.iter().for_each(|x| refs(x, out)),
        Ex::Rep(x, _, _) => refs(x, out),
        Ex::Lit(_) | Ex::Class(..) | Ex::Any => {}
    }
}

fn has_class(e: &Ex) -> bool {
    match e {
        Ex::Class(..) | Ex::Any => true,
        Ex::Seq(xs) | Ex::Alt(xs) => xs.iter().any(has_class),
        Ex::Rep(x, _, _) => has_class(x),
        Ex::Lit(_) | Ex::Ref(_) => false,
    }
}

/// Converts a GBNF grammar with start rule `root` to llguidance's Lark.
pub fn gbnf_to_lark(gbnf: &str, root: &str) -> Result<String, LarkError> {
    let mut p = Parser {
        src: gbnf.as_bytes(),
        text: gbnf,
        pos: 0,
    };
    let mut rules: Vec<(String, Ex)> = Vec::new();
    while let Some((name, body)) = p.rule()? {
        if rules.iter().any(|(n, _)| *n == name) {
            return Err(p.err(format!("rule `{name}` is defined twice")));
        }
        rules.push((name, body));
    }
    let defined: HashMap<&str, &Ex> = rules.iter().map(|(n, b)| (n.as_str(), b)).collect();
    if !defined.contains_key(root) {
        return Err(LarkError {
            line: 0,
            message: format!("no rule `{root}`"),
        });
    }
    for (name, body) in &rules {
        let mut used = BTreeSet::new();
        refs(body, &mut used);
        if let Some(missing) = used.iter().find(|u| !defined.contains_key(u.as_str())) {
            return Err(LarkError {
                line: 0,
                message: format!("rule `{name}` uses undefined rule `{missing}`"),
            });
        }
    }
    // Lark names: rules lower-case, lexemes upper-case, all unique.
    let mut names: HashMap<String, String> = HashMap::new();
    let mut taken = BTreeSet::new();
    for (name, body) in &rules {
        let mut used = BTreeSet::new();
        refs(body, &mut used);
        let terminal = used.is_empty() && has_class(body) && name != root;
        let base: String = name
            .chars()
            .map(|c| {
                if c.is_ascii_alphanumeric() {
                    c.to_ascii_lowercase()
                } else {
                    '_'
                }
            })
            .collect();
        let base = if terminal {
            format!("T_{}", base.to_ascii_uppercase())
        } else {
            format!("r_{base}")
        };
        let mut candidate = base.clone();
        let mut n = 1;
        while !taken.insert(candidate.clone()) {
            n += 1;
            candidate = format!("{base}_{n}");
        }
        names.insert(name.clone(), candidate);
    }
    let mut out = String::from("// Converted by dss from GBNF.\n");
    let _ = writeln!(out, "start: {}", names[root]);
    for (name, body) in &rules {
        let lark_name = &names[name];
        if lark_name.starts_with("T_") {
            let _ = writeln!(out, "{lark_name}: /{}/", regex(body, 0));
        } else {
            let _ = writeln!(out, "{lark_name}: {}", lark_expr(body, &names, 0));
        }
    }
    Ok(out)
}

/// A Lark string literal. Every control char (and DEL, which llguidance's string lexer
/// rejects raw) is escaped.
fn lark_lit(s: &str) -> String {
    dss_compiler::quote_lit(s, |c| {
        ((c as u32) < 0x20 || c == '\u{7f}').then(|| format!("\\u{:04x}", c as u32))
    })
}

fn rep_suffix(min: u32, max: Option<u32>) -> String {
    match (min, max) {
        (0, None) => "*".into(),
        (1, None) => "+".into(),
        (0, Some(1)) => "?".into(),
        (m, None) => format!("{{{m},}}"),
        (m, Some(n)) if m == n => format!("{{{m}}}"),
        (m, Some(n)) => format!("{{{m},{n}}}"),
    }
}

/// Precedence: 0 alternatives, 1 sequence, 2 atom.
fn lark_expr(e: &Ex, names: &HashMap<String, String>, prec: u8) -> String {
    let group = |s: String, at: u8| if prec > at { format!("({s})") } else { s };
    match e {
        Ex::Lit(s) if s.is_empty() => "\"\"".into(),
        Ex::Lit(s) => lark_lit(s),
        Ex::Class(..) | Ex::Any => format!("/{}/", regex(e, 0)),
        Ex::Ref(n) => names.get(n).cloned().unwrap_or_else(|| n.clone()),
        Ex::Seq(xs) if xs.is_empty() => "\"\"".into(),
        Ex::Seq(xs) => group(
            xs.iter()
                .map(|x| lark_expr(x, names, 2))
                .collect::<Vec<_>>()
                .join(" "),
            1,
        ),
        Ex::Alt(xs) => group(
            xs.iter()
                .map(|x| lark_expr(x, names, 1))
                .collect::<Vec<_>>()
                .join(" | "),
            0,
        ),
        Ex::Rep(x, min, max) => format!("{}{}", lark_expr(x, names, 2), rep_suffix(*min, *max)),
    }
}

/// A regex char, escaped so nothing in it is special (also not `/`).
fn rx_char(c: char) -> String {
    if c.is_ascii_alphanumeric() || c == ' ' || c == '_' {
        c.to_string()
    } else {
        format!("\\x{{{:X}}}", c as u32)
    }
}

fn regex(e: &Ex, prec: u8) -> String {
    let group = |s: String, at: u8| if prec > at { format!("(?:{s})") } else { s };
    match e {
        Ex::Lit(s) => group(s.chars().map(rx_char).collect(), 1),
        Ex::Class(negated, ranges) => {
            let mut out = String::from(if *negated { "[^" } else { "[" });
            for &(lo, hi) in ranges {
                out.push_str(&rx_char(lo));
                if hi != lo {
                    out.push('-');
                    out.push_str(&rx_char(hi));
                }
            }
            out.push(']');
            out
        }
        Ex::Any => "(?s:.)".into(),
        // Terminal rules reference no rules (checked by the caller).
        Ex::Ref(_) => "[^\\x{0}-\\x{10FFFF}]".into(),
        Ex::Seq(xs) => group(xs.iter().map(|x| regex(x, 2)).collect(), 1),
        Ex::Alt(xs) => group(
            xs.iter().map(|x| regex(x, 1)).collect::<Vec<_>>().join("|"),
            0,
        ),
        Ex::Rep(x, min, max) => format!("{}{}", regex(x, 3), rep_suffix(*min, *max)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn converts_rules_literals_and_terminals() {
        let gbnf = r#"# comment
root ::= "fields:\n" (item "\n")* tail?
item ::= string (" " agg)?
agg ::= "sum" | "avg"
tail ::= "chart: " ( "bar"
   | "line" ) "\n"
string ::= "\"" ( [^"\\\x00-\x1F] | "\\" ( ["\\/bfnrt] | "u" [0-9a-fA-F]{4} ) )* "\""
"#;
        let lark = gbnf_to_lark(gbnf, "root").expect("converts");
        assert!(lark.contains("start: r_root\n"), "{lark}");
        assert!(
            lark.contains("r_root: \"fields:\\n\" (r_item \"\\n\")* r_tail?"),
            "{lark}"
        );
        assert!(lark.contains("r_agg: \"sum\" | \"avg\""), "{lark}");
        assert!(lark.contains("T_STRING: /"), "{lark}");
        assert!(lark.contains("{4}"), "{lark}");
        assert!(lark.contains("r_item: T_STRING (\" \" r_agg)?"), "{lark}");
    }

    #[test]
    fn reports_bad_gbnf_with_line() {
        let e = gbnf_to_lark("root ::= \"a\"\nx ::= (\"b\"", "root").expect_err("bad");
        assert_eq!(e.line, 2, "{e}");
        let e = gbnf_to_lark("root ::= item", "root").expect_err("undefined");
        assert!(e.message.contains("item"), "{e}");
        let e = gbnf_to_lark("start ::= \"a\"", "root").expect_err("no root");
        assert!(e.message.contains("root"), "{e}");
        assert!(gbnf_to_lark("root ::= [b-a]", "root").is_err());
        assert!(gbnf_to_lark("root ::= \"a", "root").is_err());
    }

    #[test]
    fn escapes_for_lark() {
        assert_eq!(
            lark_lit("a\"b\\\n\u{1}\u{7f}"),
            "\"a\\\"b\\\\\\n\\u0001\\u007f\""
        );
        assert_eq!(rx_char('/'), "\\x{2F}");
        assert_eq!(
            regex(&Ex::Class(true, vec![('"', '"'), ('\0', '\u{1f}')]), 0),
            "[^\\x{22}\\x{0}-\\x{1F}]"
        );
    }
}
