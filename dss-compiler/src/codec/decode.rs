//! The decoder: shorthand -> JSON, left to right with one token of lookahead; the cursor,
//! errors, tokens and values (objects are in `decode_object.rs`).

use super::index::RecordIndex;
use super::number;
use super::out::{Out, TextOut, ValueOut};
use super::regular;
use super::tables::Tables;
use super::NO_ABBREV;
use crate::error::ExpandError;
use crate::grammar::terminal::Terminal;
use crate::grammar::terminal::{
    is_word, is_word_char, is_word_start, json_len, json_space, number_len, quoted_len, word_len,
};
use crate::notation::{render_word, First, Notation, RootLayout};
use crate::shape::{
    same_number, ArrPart, ExprId, IntRange, Kind, Lexical, NumPart, Parts, Shapes, StrPart,
};
use serde_json::{Number, Value};
use std::borrow::Cow;
use std::collections::BTreeMap;

/// Reads shorthand, into a `Value` or straight into JSON text (see [`Out`]).
pub(crate) struct Decoder<'a, O: Out = ValueOut> {
    pub(super) src: &'a str,
    pub(super) pos: usize,
    /// Nesting of `(` and `[`, bounded so hostile input cannot overflow the stack.
    pub(super) depth: usize,
    pub(super) shapes: &'a Shapes,
    pub(super) notation: &'a Notation,
    /// The lookups of `shapes` and `notation` (built from them).
    pub(super) tables: &'a Tables,
    /// Reading a document's complete lines so far: the input may end before required
    /// lines or items (see [`Decoder::prefix`]).
    pub(super) partial: bool,
    /// A record's optional fields may come in any order (each once): what a grammar pruned
    /// for a request lets a model write (see `CompiledSpec::expand_any_order`).
    pub(super) any_order: bool,
    /// What the values read are written to.
    pub(super) out: O,
}

pub(super) type DResult<T> = Result<T, ExpandError>;

/// The next token, borrowed from the input (no allocation on the hot path).
#[derive(PartialEq)]
pub(super) enum Tok<'s> {
    Word(&'s str),
    Class(First),
}

impl Tok<'_> {
    /// The fields of a record (by its index) this token selects, in order.
    pub(super) fn selected<'i>(&self, ix: &'i RecordIndex) -> &'i [u32] {
        match self {
            Tok::Word(w) => ix.selected_by(Some(w), None),
            Tok::Class(c) => ix.selected_by(None, Some(c)),
        }
    }
}

/// The Unicode name of a character that shows as nothing or as a plain space (a tab, a
/// carriage return, a no-break or zero-width space, a byte order mark, another control or
/// format character), so an error names it instead of quoting an invisible glyph.
pub(crate) fn invisible_name(c: char) -> Option<&'static str> {
    Some(match c {
        '\t' => "CHARACTER TABULATION (a tab)",
        '\r' => "CARRIAGE RETURN",
        '\u{0B}' => "LINE TABULATION",
        '\u{0C}' => "FORM FEED",
        '\u{85}' => "NEXT LINE",
        '\u{A0}' => "NO-BREAK SPACE",
        '\u{AD}' => "SOFT HYPHEN",
        '\u{34F}' => "COMBINING GRAPHEME JOINER",
        '\u{61C}' => "ARABIC LETTER MARK",
        '\u{1680}' => "OGHAM SPACE MARK",
        '\u{180E}' => "MONGOLIAN VOWEL SEPARATOR",
        '\u{2000}' => "EN QUAD",
        '\u{2001}' => "EM QUAD",
        '\u{2002}' => "EN SPACE",
        '\u{2003}' => "EM SPACE",
        '\u{2004}' => "THREE-PER-EM SPACE",
        '\u{2005}' => "FOUR-PER-EM SPACE",
        '\u{2006}' => "SIX-PER-EM SPACE",
        '\u{2007}' => "FIGURE SPACE",
        '\u{2008}' => "PUNCTUATION SPACE",
        '\u{2009}' => "THIN SPACE",
        '\u{200A}' => "HAIR SPACE",
        '\u{200B}' => "ZERO WIDTH SPACE",
        '\u{200C}' => "ZERO WIDTH NON-JOINER",
        '\u{200D}' => "ZERO WIDTH JOINER",
        '\u{200E}' => "LEFT-TO-RIGHT MARK",
        '\u{200F}' => "RIGHT-TO-LEFT MARK",
        '\u{2028}' => "LINE SEPARATOR",
        '\u{2029}' => "PARAGRAPH SEPARATOR",
        '\u{202F}' => "NARROW NO-BREAK SPACE",
        '\u{205F}' => "MEDIUM MATHEMATICAL SPACE",
        '\u{2060}' => "WORD JOINER",
        '\u{3000}' => "IDEOGRAPHIC SPACE",
        '\u{FEFF}' => "ZERO WIDTH NO-BREAK SPACE (a byte order mark)",
        '\u{202A}'..='\u{202E}' | '\u{2066}'..='\u{2069}' => "bidirectional formatting character",
        '\u{2061}'..='\u{2064}' | '\u{206A}'..='\u{206F}' | '\u{FFF9}'..='\u{FFFB}' => {
            "invisible format character"
        }
        c if c.is_control() && c != '\n' => "control character",
        _ => return None,
    })
}

/// Deepest nesting of objects and arrays the decoder reads: what serde_json reads (its
/// recursion limit of 128 stops at the 128th level), so whatever expand writes, compress
/// reads back.
pub(crate) const MAX_DEPTH: usize = 127;

impl<'a> Decoder<'a, ValueOut> {
    /// A decoder of `src`, written in `notation` for `shapes`; `tables` are theirs.
    pub(crate) fn new(
        src: &'a str,
        shapes: &'a Shapes,
        notation: &'a Notation,
        tables: &'a Tables,
    ) -> Self {
        Decoder::with_out(src, shapes, notation, tables, ValueOut)
    }

    /// Whether `text` is exactly one value of `expr` that reads back as `expected` (`quoted`
    /// as in [`FieldLayout::quoted`](crate::notation::FieldLayout::quoted)).
    pub(crate) fn reads_as(
        text: &'a str,
        shapes: &'a Shapes,
        notation: &'a Notation,
        tables: &'a Tables,
        expr: ExprId,
        quoted: bool,
        expected: &Value,
    ) -> bool {
        let mut d = Decoder::new(text, shapes, notation, tables);
        matches!(d.value_as(expr, &NO_ABBREV, quoted), Ok(v) if d.at_end() && super::json_eq(&v, expected))
    }
}

impl<'a> Decoder<'a, TextOut> {
    /// A decoder of `src` that writes compact JSON text as it reads (see [`TextOut`]).
    pub(crate) fn text(
        src: &'a str,
        shapes: &'a Shapes,
        notation: &'a Notation,
        tables: &'a Tables,
    ) -> Self {
        Decoder::with_out(src, shapes, notation, tables, TextOut::default())
    }

    /// The document as compact JSON text: what `serde_json::to_string` writes of the
    /// value [`Decoder::document`] reads with a `Value` output.
    pub(crate) fn document_text(mut self) -> DResult<String> {
        self.document()?;
        Ok(self.out.text)
    }
}

impl<'a, O: Out> Decoder<'a, O> {
    fn with_out(
        src: &'a str,
        shapes: &'a Shapes,
        notation: &'a Notation,
        tables: &'a Tables,
        out: O,
    ) -> Self {
        Decoder {
            src,
            pos: 0,
            depth: 0,
            shapes,
            notation,
            tables,
            partial: false,
            any_order: false,
            out,
        }
    }

    /// This decoder reading the complete lines a document starts with (what a model has
    /// written so far): the input may end where the document could not, before a required
    /// line or the items an array needs. Everything present is read as strictly as in a
    /// document; a record's optional fields may come in any order.
    pub(crate) fn prefix(self) -> Self {
        Decoder {
            partial: true,
            ..self.any_order()
        }
    }

    /// This decoder reading a record's optional fields in any order (each once).
    pub(crate) fn any_order(self) -> Self {
        Decoder {
            any_order: true,
            ..self
        }
    }

    pub(super) fn rest(&self) -> &'a str {
        &self.src[self.pos..]
    }
    pub(super) fn peek(&self) -> Option<char> {
        self.rest().chars().next()
    }
    pub(super) fn at_end(&self) -> bool {
        self.pos >= self.src.len()
    }

    pub(super) fn error<T>(&self, expected: impl Into<String>) -> DResult<T> {
        self.error_at(self.pos, expected)
    }

    pub(super) fn error_at<T>(&self, pos: usize, expected: impl Into<String>) -> DResult<T> {
        let before = &self.src[..pos];
        let line = before.matches('\n').count() + 1;
        let column = before.rsplit('\n').next().map_or(0, |l| l.chars().count()) + 1;
        Err(ExpandError::Syntax {
            line,
            column,
            expected: expected.into(),
            found: self.describe_at(pos),
        })
    }

    pub(super) fn describe_at(&self, pos: usize) -> String {
        let rest = &self.src[pos..];
        match rest.chars().next() {
            None => "end of input".into(),
            Some('\n') => "end of line".into(),
            Some(' ') => "a space".into(),
            Some(c) if invisible_name(c).is_some() => {
                format!(
                    "U+{:04X} {}",
                    c as u32,
                    invisible_name(c).unwrap_or_default()
                )
            }
            Some(c) if is_word_char(c) => {
                let w: String = rest
                    .chars()
                    .take_while(|&c| is_word_char(c))
                    .take(40)
                    .collect();
                // A word glued to an invisible character (`title` + NBSP) says which.
                match rest[w.len()..]
                    .chars()
                    .next()
                    .map(|c| (c, invisible_name(c)))
                {
                    Some((c, Some(name))) => {
                        format!("`{w}` followed by U+{:04X} {name}", c as u32)
                    }
                    _ => format!("`{w}`"),
                }
            }
            Some(_) => {
                // Invisible characters inside are shown by their code point.
                let t: String = rest
                    .chars()
                    .take_while(|&c| c != '\n')
                    .take(20)
                    .map(|c| match invisible_name(c) {
                        Some(_) => format!("<U+{:04X}>", c as u32),
                        None => c.to_string(),
                    })
                    .collect();
                format!("`{t}`")
            }
        }
    }

    pub(super) fn eat(&mut self, c: char) -> bool {
        if self.peek() == Some(c) {
            self.pos += c.len_utf8();
            true
        } else {
            false
        }
    }

    pub(super) fn expect(&mut self, c: char, what: &str) -> DResult<()> {
        if self.eat(c) {
            Ok(())
        } else {
            self.error(what)
        }
    }

    /// Accept the final newline, or its absence at the very end.
    pub(super) fn end_line(&mut self) -> DResult<()> {
        if self.eat('\n') || self.at_end() {
            Ok(())
        } else {
            self.error("end of line")
        }
    }

    pub(crate) fn document(&mut self) -> DResult<O::V> {
        let root = self.shapes.root;
        let v = match self.notation.root {
            RootLayout::Block => self.block(root)?,
            RootLayout::Line => {
                let v = self.line_item(root)?;
                self.end_line()?;
                v
            }
            RootLayout::Lines => {
                let item = self.shapes.items_of(root);
                let mut items = self.out.array();
                while !self.at_end() {
                    self.out.item(&mut items);
                    let v = self.line_item(item)?;
                    self.out.push(&mut items, v);
                    self.end_line()?;
                }
                self.check_min_items(root, self.out.items(&items), "line")?;
                self.out.end_array(items)
            }
            RootLayout::Value => {
                let v = self.value(root, &NO_ABBREV)?;
                self.end_line()?;
                v
            }
        };
        if !self.at_end() {
            return self.error("end of input");
        }
        Ok(v)
    }

    /// An array that ends here with `n` items (`noun`: `item` or `line`): an error when the
    /// schema wants more.
    pub(super) fn check_min_items(&self, expr: ExprId, n: usize, noun: &str) -> DResult<()> {
        let min = self.shapes.min_items(expr);
        if n < min && !(self.partial && self.at_end()) {
            return self.error(format!(
                "another {noun} (the array needs at least {min} {noun}s, found {n})"
            ));
        }
        Ok(())
    }

    /// At a line start: the statement head `kw:` or `"key":`, if there is one.
    pub(super) fn statement_head(&self) -> Option<(String, usize)> {
        let rest = self.rest();
        if rest.starts_with('"') {
            let len = quoted_len(rest)?;
            let key: String = serde_json::from_str(&rest[..len]).ok()?;
            // `"key": value` at the root; a line item may start `"key":value` (no space).
            rest[len..]
                .starts_with(": ")
                .then_some((format!("\"{key}"), len + 1))
        } else {
            let len = word_len(rest);
            (len > 0 && rest[len..].starts_with(':')).then(|| (rest[..len].to_string(), len + 1))
        }
    }

    /// Whether a line starts here with a statement head (see [`Self::statement_head`]).
    pub(super) fn at_statement_head(&self) -> bool {
        let rest = self.rest();
        if rest.starts_with('"') {
            return self.statement_head().is_some();
        }
        let len = word_len(rest);
        len > 0 && rest[len..].starts_with(':')
    }

    /// The raw text of the next word or quoted string.
    pub(super) fn token_text(&self) -> Option<&'a str> {
        let rest = self.rest();
        if rest.starts_with('"') {
            quoted_len(rest).map(|n| &rest[..n])
        } else {
            let n = word_len(rest);
            (n > 0).then(|| &rest[..n])
        }
    }

    pub(super) fn classify(&self) -> Option<Tok<'a>> {
        let c = self.peek()?;
        Some(match c {
            '(' => Tok::Class(First::LParen),
            '[' => Tok::Class(First::LBracket),
            '{' => Tok::Class(First::LBrace),
            '"' => Tok::Class(First::Quoted),
            '-' | '0'..='9' => Tok::Class(First::Number),
            c if is_word_char(c) => match self.token_text()? {
                "true" => Tok::Class(First::True),
                "false" => Tok::Class(First::False),
                "null" => Tok::Class(First::Null),
                w => Tok::Word(w),
            },
            _ => return None,
        })
    }

    pub(super) fn quoted(&mut self) -> DResult<String> {
        self.quoted_str().map(Cow::into_owned)
    }

    /// A quoted string, borrowed from the input where it has no escapes (most strings).
    pub(super) fn quoted_str(&mut self) -> DResult<Cow<'a, str>> {
        let rest = self.rest();
        let Some(n) = quoted_len(rest) else {
            return self.error("a closed string");
        };
        let inner = &rest[1..n - 1];
        if !inner.bytes().any(|b| b == b'\\' || b < 0x20) {
            self.pos += n;
            return Ok(Cow::Borrowed(inner));
        }
        match serde_json::from_str::<String>(&rest[..n]) {
            Ok(s) => {
                self.pos += n;
                Ok(Cow::Owned(s))
            }
            Err(e) => self.error(format!("a valid JSON string ({e})")),
        }
    }

    /// A number, exactly as written: one JSON would round (`100000000000000000001`,
    /// `1e-400`) is an error, never a changed value.
    pub(super) fn number(&mut self) -> DResult<Number> {
        let rest = self.rest();
        let n = number_len(rest);
        let lexeme = &rest[..n];
        if let Some(num) = number::small_integer(lexeme) {
            self.pos += n;
            return Ok(num);
        }
        match serde_json::from_str::<Number>(lexeme) {
            Ok(num) if n > 0 && number::is_exact(lexeme, &num) => {
                self.pos += n;
                Ok(num)
            }
            Ok(num) if n > 0 => self.error(format!(
                "a number JSON carries exactly ({lexeme} would become {num})"
            )),
            _ => self.error("a number"),
        }
    }

    /// An array or object `enum`/`const` lists, written as its compact JSON: one of
    /// `listed` exactly as spelled (none is a prefix of another: each is one JSON value).
    fn listed(&mut self, listed: &[String], p: &Parts) -> DResult<O::V> {
        let rest = self.rest();
        let Some(l) = listed.iter().find(|l| rest.starts_with(l.as_str())) else {
            return self.error(self.expected_of(p));
        };
        match serde_json::from_str::<Value>(l) {
            Ok(v) => {
                self.pos += l.len();
                Ok(self.out.owned_json(v))
            }
            Err(e) => self.error(format!("a listed value ({e})")),
        }
    }

    /// A compact JSON value (the fallback for unconstrained subtrees).
    pub(super) fn json(&mut self) -> DResult<O::V> {
        let rest = self.rest();
        let Some(n) = json_len(rest) else {
            return self.error("a JSON value");
        };
        // serde_json reads whitespace between tokens; the grammars' JSON has none.
        if let Some(at) = json_space(&rest[..n]) {
            return self.error_at(
                self.pos + at,
                "compact JSON, no whitespace between its tokens (`[]`, `[1,2]`, `{\"a\":1}`)",
            );
        }
        match serde_json::from_str::<Value>(&rest[..n]) {
            Ok(v) => {
                if let Some(bad) = number::first_inexact(&rest[..n]) {
                    return self.error_at(
                        self.pos + bad.start,
                        format!(
                            "a number JSON carries exactly ({} would become {})",
                            bad.lexeme, bad.became
                        ),
                    );
                }
                self.pos += n;
                Ok(self.out.owned_json(v))
            }
            Err(e) => self.error(format!("a JSON value ({e})")),
        }
    }

    pub(super) fn expected_of(&self, p: &Parts) -> String {
        let mut e = Vec::new();
        if p.null {
            e.push("null".to_string());
        }
        if p.bool_true || p.bool_false {
            e.push("true/false".into());
        }
        if let Some(n) = &p.number {
            e.push(if n.integer { "an integer" } else { "a number" }.into());
        }
        if let Some(s) = &p.string {
            match &s.values {
                None => e.push("a \"quoted string\"".into()),
                Some(vs) if vs.len() <= 12 => e.push(format!(
                    "one of {}",
                    vs.iter()
                        .map(|v| render_word(v))
                        .collect::<Vec<_>>()
                        .join(" ")
                )),
                Some(vs) => e.push(format!(
                    "one of {} values like {}",
                    vs.len(),
                    render_word(&vs[0])
                )),
            }
        }
        if p.array.is_some() {
            e.push("`[`".into());
        }
        if p.object.is_some() {
            e.push("`(`".into());
        }
        if let Some(ls) = &p.listed {
            e.push(match ls.as_slice() {
                [one] => one.clone(),
                ls if ls.len() <= 4 => format!("one of {}", ls.join(" ")),
                ls => format!("one of {} listed values like {}", ls.len(), ls[0]),
            });
        }
        if e.is_empty() {
            "nothing (no value is allowed here)".into()
        } else {
            e.join(" or ")
        }
    }

    pub(crate) fn value(
        &mut self,
        expr: ExprId,
        abbrev: &BTreeMap<String, String>,
    ) -> DResult<O::V> {
        self.value_as(expr, abbrev, false)
    }

    /// `quoted`: a free string must be JSON-quoted here (see `FieldLayout::quoted`).
    pub(super) fn value_as(
        &mut self,
        expr: ExprId,
        abbrev: &BTreeMap<String, String>,
        quoted: bool,
    ) -> DResult<O::V> {
        if matches!(self.peek(), Some('(' | '[')) {
            if self.depth >= MAX_DEPTH {
                return self.error(format!("at most {MAX_DEPTH} levels of nesting"));
            }
            self.depth += 1;
            let v = self.value_inner(expr, abbrev, quoted);
            self.depth -= 1;
            return v;
        }
        self.value_inner(expr, abbrev, quoted)
    }

    /// An array after its `[`.
    fn array(&mut self, expr: ExprId, a: &ArrPart) -> DResult<O::V> {
        self.pos += 1;
        let mut items = self.out.array();
        if self.peek() == Some(']') {
            self.check_min_items(expr, 0, "item")?;
            self.pos += 1;
            return Ok(self.out.end_array(items));
        }
        loop {
            let n = self.out.items(&items);
            let Some(e) = a.item_at(n) else {
                return self.error(format!("`]` (at most {} items)", a.prefix.len()));
            };
            self.out.item(&mut items);
            let v = self.value(e, &NO_ABBREV)?;
            self.out.push(&mut items, v);
            if self.peek() == Some(']') {
                self.check_min_items(expr, n + 1, "item")?;
                self.pos += 1;
                return Ok(self.out.end_array(items));
            }
            self.expect(' ', "a space or `]`")?;
        }
    }

    /// A number (starting at `start`): one of the allowed ones, or an integer if need be.
    fn number_value(&mut self, np: &NumPart, start: usize) -> DResult<O::V> {
        let n = self.number()?;
        match &np.values {
            Some(vs) => match vs.iter().find(|m| same_number(m, &n)) {
                Some(m) => Ok(self.out.number(m)),
                None => self.error_at(
                    start,
                    format!(
                        "one of {}",
                        vs.iter()
                            .map(|v| v.to_string())
                            .collect::<Vec<_>>()
                            .join(" ")
                    ),
                ),
            },
            None => {
                // The lexeme its terminal admits: a bound the grammar says (`limit 0`,
                // `-3 years`) is the decoder's too.
                let t = Terminal::of_number(np);
                let lexeme = &self.src[start..self.pos];
                if !number::fits(t, lexeme) {
                    return self.error_at(start, number::describe(t));
                }
                if let Some(r) = &np.range {
                    if !r
                        .regex()
                        .is_some_and(|x| self.tables.regexes.is_match(&x, lexeme))
                    {
                        return self.error_at(start, range_text(r));
                    }
                }
                Ok(self.out.number(&n))
            }
        }
    }

    /// A free string `value` just read from `start`: the lexical form its terminal or
    /// rules admit (non-empty, a date, a regular form: spelled as the grammar spells it
    /// and matching every constraint).
    fn check_lexical(&self, sp: &StrPart, start: usize, value: &str) -> DResult<()> {
        let raw = &self.src[start + 1..self.pos - 1];
        let (ok, what) = match &sp.lexical {
            None => return Ok(()),
            Some(Lexical::Regular(checks)) => {
                if let Some(c) = self.tables.regexes.first_mismatch(checks, value) {
                    return self.error_at(start, regular::describe(c));
                }
                if !regular::canonical(&self.src[start..self.pos], value) {
                    return self.error_at(
                        start,
                        "the string spelled with JSON's short escapes only (`\\n`, not `\\u000a`; `/`, not `\\/`)",
                    );
                }
                return Ok(());
            }
            Some(Lexical::NonEmpty) => (!raw.is_empty(), "a non-empty string"),
            Some(Lexical::Date) => (is_date(raw), "a date \"YYYY-MM-DD\""),
            Some(Lexical::DateTime) => (
                is_date_time(raw),
                "a date-time \"YYYY-MM-DDThh:mm:ss[.f](Z|+hh:mm)\"",
            ),
        };
        if ok {
            Ok(())
        } else {
            self.error_at(start, what)
        }
    }

    /// Dispatched on the expression's [`Kind`] (one small table): its `Parts` (colder,
    /// bigger) are read only where the value needs them (enum values, arrays, bounded
    /// numbers, lexical forms, listed values) or for an error's message.
    pub(super) fn value_inner(
        &mut self,
        expr: ExprId,
        abbrev: &BTreeMap<String, String>,
        quoted: bool,
    ) -> DResult<O::V> {
        let k = self.tables.kind(expr);
        if k.has(Kind::ANY) {
            return self.json();
        }
        let start = self.pos;
        let next = self.peek();
        if k.has(Kind::LISTED) && (next == Some('{') || (next == Some('[') && !k.has(Kind::ARRAY)))
        {
            let p = self.shapes.parts(expr);
            if let Some(ls) = &p.listed {
                return self.listed(ls, p);
            }
        }
        match next {
            Some('(') if k.has(Kind::OBJECT) => {
                self.pos += 1;
                let v = self.body(expr, false)?;
                self.expect(')', "`)`")?;
                Ok(v)
            }
            Some('[') if k.has(Kind::ARRAY) => {
                let p = self.shapes.parts(expr);
                match &p.array {
                    Some(a) => self.array(expr, a),
                    None => self.error(self.expected_of(p)),
                }
            }
            Some('"') if k.has(Kind::STRING) && !k.has(Kind::STRING_VALUES) => {
                let s = self.quoted_str()?;
                if k.has(Kind::STRING_LEXICAL) {
                    if let Some(sp) = &self.shapes.parts(expr).string {
                        self.check_lexical(sp, start, &s)?;
                    }
                }
                Ok(match s {
                    Cow::Borrowed(s) => self.out.plain_str(s),
                    Cow::Owned(s) => self.out.string(s),
                })
            }
            Some('"') if k.has(Kind::STRING) => {
                let p = self.shapes.parts(expr);
                let values = p.string.as_ref().and_then(|sp| sp.values.as_deref());
                let s = self.quoted_str()?;
                match values.and_then(|vs| lookup_enum(vs, abbrev, &s, false)) {
                    Some(v) => Ok(self.out.str(v)),
                    None => self.error_at(start, self.expected_of(p)),
                }
            }
            Some('-' | '0'..='9')
                if k.has(Kind::NUMBER)
                    && !k.has(Kind::NUMBER_VALUES)
                    && !k.has(Kind::NUMBER_LOWER)
                    && !k.has(Kind::NUMBER_RANGE) =>
            {
                // A free number without bounds: its terminal is the kind's alone.
                let n = self.number()?;
                let t = if k.has(Kind::INTEGER) {
                    Terminal::Integer
                } else {
                    Terminal::Number
                };
                if !number::fits(t, &self.src[start..self.pos]) {
                    return self.error_at(start, number::describe(t));
                }
                Ok(self.out.number(&n))
            }
            Some('-' | '0'..='9') if k.has(Kind::NUMBER) => {
                let p = self.shapes.parts(expr);
                match &p.number {
                    Some(np) => self.number_value(np, start),
                    None => self.error(self.expected_of(p)),
                }
            }
            Some(c) if is_word_char(c) && !c.is_ascii_digit() && c != '-' => {
                let w = self.token_text().unwrap_or_default();
                let v = match w {
                    "null" if k.has(Kind::NULL) => Some(Word::Null),
                    "true" if k.has(Kind::TRUE) => Some(Word::Bool(true)),
                    "false" if k.has(Kind::FALSE) => Some(Word::Bool(false)),
                    _ if k.has(Kind::STRING_VALUES) => self
                        .shapes
                        .parts(expr)
                        .string
                        .as_ref()
                        .and_then(|sp| sp.values.as_deref())
                        .and_then(|vs| lookup_enum(vs, abbrev, w, true))
                        .map(Word::Str),
                    // A free string written bare (dates are always quoted).
                    _ if k.has(Kind::STRING)
                        && !quoted
                        && w.starts_with(is_word_start)
                        && !k.has(Kind::STRING_FORM) =>
                    {
                        Some(Word::Str(w))
                    }
                    _ => None,
                };
                match v {
                    Some(v) => {
                        self.pos += w.len();
                        Ok(match v {
                            Word::Null => self.out.null(),
                            Word::Bool(b) => self.out.bool(b),
                            Word::Str(s) => self.out.str(s),
                        })
                    }
                    None => self.error(self.expected_of(self.shapes.parts(expr))),
                }
            }
            _ => self.error(self.expected_of(self.shapes.parts(expr))),
        }
    }
}

/// `YYYY-MM-DD`, as the grammars' `date` terminal writes it (between the quotes).
/// What an integer range asks, for messages.
pub(super) fn range_text(r: &IntRange) -> String {
    match r.max {
        Some(max) => format!("an integer from {} to {max}, in digits", r.min),
        None => format!("an integer >= {}, in digits", r.min),
    }
}

/// `YYYY-MM-DD` in digits, the grammars' `date` terminal.
pub(crate) fn is_date(s: &str) -> bool {
    is_date_bytes(s.as_bytes())
}

fn is_date_bytes(b: &[u8]) -> bool {
    b.len() == 10
        && digits(&b[..4])
        && b[4] == b'-'
        && digits(&b[5..7])
        && b[7] == b'-'
        && digits(&b[8..])
}

/// `YYYY-MM-DD(T|t| )hh:mm:ss(.f+)?(Z|z|(+|-)hh:mm)`, the grammars' `date_time` terminal.
fn is_date_time(s: &str) -> bool {
    let b = s.as_bytes();
    // Bytes, not `&s[..10]`: the text may hold any character there.
    if b.len() < 20 || !is_date_bytes(&b[..10]) || !matches!(b[10], b'T' | b't' | b' ') {
        return false;
    }
    let time = &b[11..];
    if !(digits(&time[..2])
        && time[2] == b':'
        && digits(&time[3..5])
        && time[5] == b':'
        && digits(&time[6..8]))
    {
        return false;
    }
    let mut rest = &time[8..];
    if let Some(f) = rest.strip_prefix(b".") {
        let n = f.iter().take_while(|c| c.is_ascii_digit()).count();
        if n == 0 {
            return false;
        }
        rest = &f[n..];
    }
    match rest {
        [b'Z' | b'z'] => true,
        [b'+' | b'-', h1, h2, b':', m1, m2] => digits(&[*h1, *h2, *m1, *m2]),
        _ => false,
    }
}

fn digits(b: &[u8]) -> bool {
    b.iter().all(u8::is_ascii_digit)
}

/// What a bare word read as a value stands for.
enum Word<'s> {
    Null,
    Bool(bool),
    Str(&'s str),
}

/// Which enum value a written token stands for (bare words must be written bare, others
/// quoted, so each value has one spelling).
fn lookup_enum<'v>(
    values: &'v [String],
    abbrev: &BTreeMap<String, String>,
    written: &str,
    bare: bool,
) -> Option<&'v str> {
    values
        .iter()
        .find(|v| {
            let w = abbrev.get(*v).map(String::as_str).unwrap_or(v.as_str());
            w == written && is_word(w) == bare
        })
        .map(String::as_str)
}

#[cfg(test)]
mod tests {
    use crate::{compile, CompileOptions};
    use serde_json::json;

    #[test]
    fn an_empty_open_object_is_written_as_parentheses() {
        // Found by fuzzing: `kw ` with nothing after it was read as `{}`, which no grammar
        // writes (`kw ()`).
        let schema = json!({"type": "object", "properties": {
            "time": {"type": "object", "properties": {"since": {"type": "string"}},
                "additionalProperties": false}}, "additionalProperties": false});
        let spec = compile(&schema, &CompileOptions::default()).unwrap();
        let empty = spec.compress(&json!({"time": {}})).unwrap();
        assert_eq!(empty.trim_end(), "time ()");
        assert_eq!(spec.expand(&empty).unwrap(), json!({"time": {}}));
        let e = spec.expand("time \n").unwrap_err().to_string();
        assert!(e.contains("`()` for an empty one"), "{e}");
        assert!(spec.expand("time since x\n").is_ok());
    }

    #[test]
    fn json_values_are_compact() {
        // Found by fuzzing (MaskBench o44234): an undeclared property's JSON value with
        // whitespace inside (`":":[ ]`, `"":[\r]`) was read by serde_json, but the grammars'
        // JSON is compact: the decoder now refuses it, at the whitespace.
        let schema = json!({"type": "object", "properties": {"a": {"type": "integer"}}});
        let spec = compile(&schema, &CompileOptions::default()).unwrap();
        let x = json!({"a": 1, "b": [], "c": {"d e": " f ", "g": [1, null]}});
        let s = spec.compress(&x).unwrap();
        assert_eq!(s, "a 1 \"b\":[],\"c\":{\"d e\":\" f \",\"g\":[1,null]}");
        assert_eq!(spec.expand(&s).unwrap(), x);
        for (text, at, found) in [
            ("a 1 \"b\":[ ]\n", "1:10", "a space"),
            ("a 1 \"b\":[\r]\n", "1:10", "CARRIAGE RETURN"),
            ("a 1 \"b\":[1,\t2]\n", "1:12", "a tab"),
            ("a 1 \"b\":{\"c\": 1}\n", "1:14", "a space"),
            ("a 1 \"b\":[1 ]\n", "1:11", "a space"),
        ] {
            let e = spec.expand(text).unwrap_err().to_string();
            assert!(
                e.starts_with(&format!("{at}: expected compact JSON")),
                "{text:?}: {e}"
            );
            assert!(e.contains(found), "{text:?}: {e}");
        }
        // Whitespace inside a string is its text.
        assert_eq!(
            spec.expand(r#""b":[" \t"]"#).unwrap(),
            json!({"b": [" \t"]})
        );
    }

    #[test]
    fn a_bare_property_name_is_a_bare_word() {
        // Found by fuzzing (MaskBench o65465, a brief CI run): an undeclared
        // property written with a bare name starting with `.` (`.um0 10`) was read, but the
        // grammars' bare word starts with a letter, `_` or `$`; compress quotes such a name.
        let schema = json!({"type": "object", "required": ["p"], "properties": {
            "p": {"type": "object", "properties": {"n": {"type": "integer"}}}}});
        let spec = compile(&schema, &CompileOptions::default()).unwrap();
        let x = json!({"p": {"n": 1}, ".um0": 10, "ok": 2});
        let s = spec.compress(&x).unwrap();
        assert!(s.contains("\".um0\":10"), "{s}");
        assert_eq!(spec.expand(&s).unwrap(), x);
        let bare = s.replace("\".um0\":10", ".um0 10");
        let e = spec.expand(&bare).unwrap_err().to_string();
        assert!(e.contains("expected a property name"), "{bare}: {e}");
        for bad in ["-x 1", "9x 1", "x. 1"] {
            let text = s.replace("\".um0\":10", bad);
            assert!(spec.expand(&text).is_err(), "{text}");
        }
    }

    #[test]
    fn fuzz_findings_json_whitespace_are_refused() {
        let root = concat!(env!("CARGO_MANIFEST_DIR"), "/..");
        let read = |p: &str| std::fs::read_to_string(format!("{root}/{p}")).unwrap();
        let doc: serde_json::Value = serde_json::from_str(&read(
            "tests/fixtures/maskbench/data/Github_easy---o44234.json",
        ))
        .unwrap();
        let spec = compile(&doc["schema"], &CompileOptions::default()).unwrap();
        for (file, expected) in [
            (
                "o44234-space-in-empty-array.dss",
                "1:6: expected compact JSON",
            ),
            (
                "o44234-whitespace-in-json-value.dss",
                "1:5: expected compact JSON",
            ),
        ] {
            let text = read(&format!("fuzz/findings/roundtrip/{file}"));
            let e = spec.expand(&text).unwrap_err().to_string();
            assert!(e.starts_with(expected), "{file}: {e}");
            let compact: String = text.chars().filter(|c| !c.is_whitespace()).collect();
            assert!(spec.expand(&compact).is_ok(), "{file}: {compact:?}");
        }
    }

    #[test]
    fn dates_with_any_characters_are_errors_not_panics() {
        // Found by fuzzing: a multi-byte character across the date part of a date-time.
        assert!(!super::is_date_time("2024-01-0ϭT10:00:00Z"));
        assert!(!super::is_date("2024-01-ϭ1"));
        assert!(super::is_date_time("2024-01-31T10:00:00Z"));
        let schema = json!({"type": "object", "properties": {
            "at": {"type": "string", "format": "date-time"}}, "additionalProperties": false});
        let spec = compile(&schema, &CompileOptions::default()).unwrap();
        assert!(spec.expand("at \"2024-01-0ϭT10:00:00Z\"\n").is_err());
    }

    #[test]
    pub(super) fn deep_nesting_is_an_error_not_a_crash() {
        let schema = json!({"$defs": {"t": {"type": "array", "items": {"$ref": "#/$defs/t"}}}, "$ref": "#/$defs/t"});
        let spec = compile(&schema, &CompileOptions::default()).unwrap();
        let deep = format!("{}{}\n", "[".repeat(50_000), "]".repeat(50_000));
        let e = spec.expand(&deep).unwrap_err();
        assert!(e.to_string().contains("levels of nesting"), "{e}");
        let ok = format!("{}{}\n", "[".repeat(100), "]".repeat(100));
        assert!(spec.expand(&ok).is_ok());
    }

    #[test]
    pub(super) fn item_keys_are_not_root_statements() {
        // A section item may start with `"key":value`; a root property line is
        // `"key": value`.
        let schema = json!({"type": "object", "properties": {"rows": {"type": "array",
            "items": {"type": "object", "additionalProperties": {"type": "integer"}}}},
            "additionalProperties": {"type": "string"}});
        let spec = compile(&schema, &CompileOptions::default()).unwrap();
        let x = json!({"rows": [{"k": 1, "j 2": 2}, {}], "z": "w"});
        let s = spec.compress(&x).unwrap();
        assert_eq!(s, "rows:\n\"j 2\":2 k 1\n\n\"z\": w\n");
        assert_eq!(spec.expand(&s).unwrap(), x);
    }

    #[test]
    pub(super) fn duplicate_and_unknown_properties_are_errors() {
        let schema = json!({"type": "object", "properties": {"a": {"type": "integer"}, "c": {"type": "integer"}}});
        let spec = compile(&schema, &CompileOptions::default()).unwrap();
        assert_eq!(
            spec.compress(&json!({"a": 1, "b": 2})).unwrap(),
            "a 1 \"b\":2"
        );
        assert_eq!(
            spec.expand("a 1 \"b\":2\n").unwrap(),
            json!({"a": 1, "b": 2})
        );
        // Undeclared properties are joined as in JSON, where `","` is one token.
        let x = json!({"a": 1, "b": "x", "d": [2]});
        assert_eq!(spec.compress(&x).unwrap(), "a 1 \"b\":\"x\",\"d\":[2]");
        assert_eq!(spec.expand("a 1 \"b\":\"x\",\"d\":[2]").unwrap(), x);
        assert!(
            spec.expand("a 1 \"b\":\"x\" \"d\":[2]").is_err(),
            "`,` joins them"
        );
        assert!(spec.expand("a 1 \"b\":\"x\",d 3").is_err());
        assert!(spec.expand("a 1 \"b\":2,\"b\":3\n").is_err());
        assert!(spec.expand("a 1 \"a\":2\n").is_err());
        assert!(
            spec.expand("a 1 \"b\" 2\n").is_err(),
            "a quoted key takes `:`"
        );
        assert!(spec.expand("a 1.5\n").is_err());
        assert!(
            spec.expand("c 1 a 2\n").is_err(),
            "fields in canonical order only"
        );
    }
}
