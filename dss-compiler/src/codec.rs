//! Stage 4 — the exact mapper: JSON -> shorthand ([`encode`]) and shorthand -> JSON
//! ([`decode`]), both driven by the notation. The decoder reads left to right with one token
//! of lookahead — the notation stage guarantees that is enough — and reports errors as
//! `line:column`, what was expected and what was found.

use crate::checks::LocalChecks;
use crate::error::ExpandError;
use crate::notation::{
    is_section, is_word, is_word_char, is_word_start, render_word, FieldLayout, FieldMode, First,
    Notation, ObjLayout, RecordIndex, RecordLayout, RootLayout, SlotMode,
};
use crate::schema::escape_token;
use crate::shape::{same_number, ExprId, Kind, Parts, Shapes};
use serde_json::{Map, Number, Value};
use smallvec::SmallVec;
use std::collections::BTreeMap;

/// A value that does not fit the notation (only possible for instances the schema rejects).
#[derive(Debug)]
pub struct EncodeError {
    pub pointer: String,
    pub message: String,
}

type EResult<T> = Result<T, EncodeError>;

fn eerr<T>(pointer: &Ptr<'_>, message: impl Into<String>) -> EResult<T> {
    Err(EncodeError {
        pointer: pointer.render(),
        message: message.into(),
    })
}

/// Where the encoder is in the instance; rendered as a JSON pointer only on error, so the
/// hot path allocates nothing for it.
#[derive(Clone, Copy)]
pub enum Ptr<'p> {
    Root,
    Key(&'p Ptr<'p>, &'p str),
    Index(&'p Ptr<'p>, usize),
}

impl Ptr<'_> {
    pub fn render(&self) -> String {
        match self {
            Ptr::Root => String::new(),
            Ptr::Key(parent, k) => format!("{}/{}", parent.render(), escape_token(k)),
            Ptr::Index(parent, i) => format!("{}/{i}", parent.render()),
        }
    }
}

/// JSON values are equal, numbers compared by value.
pub fn json_eq(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => same_number(x, y),
        (Value::Array(x), Value::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(p, q)| json_eq(p, q))
        }
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len()
                && x.iter()
                    .all(|(k, v)| y.get(k).is_some_and(|w| json_eq(v, w)))
        }
        _ => a == b,
    }
}

/// Writes shorthand.
pub struct Encoder<'a> {
    shapes: &'a Shapes,
    notation: &'a Notation,
    /// Checked at every value that has local assertions, when given.
    checks: Option<&'a LocalChecks>,
}

static NO_ABBREV: BTreeMap<String, String> = BTreeMap::new();

impl<'a> Encoder<'a> {
    pub fn new(shapes: &'a Shapes, notation: &'a Notation) -> Self {
        Encoder {
            shapes,
            notation,
            checks: None,
        }
    }

    /// Also check each value's local assertions (bounds, `pattern`, `format`…): with
    /// [`Shapes::encoding_validates`], a successful encode is then a complete validation.
    pub fn with_checks(mut self, checks: &'a LocalChecks) -> Self {
        self.checks = Some(checks);
        self
    }

    /// The local assertions of `expr` on `v`, called wherever a value is given its
    /// expression (so once per value, whichever way it is then written or elided).
    fn check(&self, v: &Value, expr: ExprId, ptr: &Ptr<'_>) -> EResult<()> {
        match self.checks {
            Some(c) if self.shapes.kind(expr).has(Kind::CHECKED) => {
                if c.admits(self.shapes, expr, v) {
                    Ok(())
                } else {
                    eerr(
                        ptr,
                        "the value breaks a bound, length, pattern or format of the schema",
                    )
                }
            }
            _ => Ok(()),
        }
    }

    pub fn document(&self, v: &Value) -> EResult<String> {
        let mut out = String::with_capacity(256);
        let root = self.shapes.root;
        self.check(v, root, &Ptr::Root)?;
        match self.notation.root {
            RootLayout::Block => self.block(v, root, &mut out)?,
            // A one-line document has no final newline: it would cost a token (a bare
            // `true` would be 2 tokens against JSON's 1). The decoder and the grammars
            // accept it with or without one.
            RootLayout::Line => self.line_item(v, root, &Ptr::Root, &mut out)?,
            RootLayout::Lines => {
                let Value::Array(items) = v else {
                    return eerr(&Ptr::Root, "expected an array");
                };
                let Some(item) = self.shapes.parts(root).array.as_ref().and_then(|a| a.items)
                else {
                    return eerr(&Ptr::Root, "expected no items");
                };
                for (i, x) in items.iter().enumerate() {
                    let ptr = Ptr::Index(&Ptr::Root, i);
                    self.check(x, item, &ptr)?;
                    self.line_item(x, item, &ptr, &mut out)?;
                    out.push('\n');
                }
            }
            RootLayout::Value => self.value(v, root, &NO_ABBREV, &Ptr::Root, &mut out)?,
        }
        Ok(out)
    }

    fn record_of(&self, expr: ExprId, ptr: &Ptr<'_>) -> EResult<&'a RecordLayout> {
        match self.notation.object(expr) {
            Some(ObjLayout::Record(r)) => Ok(r),
            _ => eerr(ptr, "expected an object form"),
        }
    }

    fn block(&self, v: &Value, expr: ExprId, out: &mut String) -> EResult<()> {
        let Value::Object(map) = v else {
            return eerr(&Ptr::Root, "expected an object");
        };
        let r = self.record_of(expr, &Ptr::Root)?;
        let ix = r.lookup(self.shapes);
        let (present, extra) = self.split_properties(map, r, None, &Ptr::Root)?;
        // Plain `kw value` lines first, then sections (`kw:` and their item lines), so an
        // item line is never mistaken for a plain line.
        let sections = |&&(i, _): &&(usize, &Value)| ix.slots[i].section;
        let plain = present.iter().filter(|p| !sections(p));
        for &(i, x) in plain.chain(present.iter().filter(sections)) {
            let f = &ix.slots[i];
            let ptr = Ptr::Key(&Ptr::Root, ix.name(i));
            self.check(x, f.source, &ptr)?;
            if f.mode == SlotMode::Const {
                check_const(ix, i, x, &ptr)?;
                continue;
            }
            out.push_str(ix.keyword(f));
            if f.section {
                out.push(':');
                out.push('\n');
                let item = self.shapes.items_of(f.expr);
                let Value::Array(items) = x else {
                    return eerr(&ptr, "expected an array");
                };
                for (i, it) in items.iter().enumerate() {
                    let iptr = Ptr::Index(&ptr, i);
                    self.check(it, item, &iptr)?;
                    self.line_item(it, item, &iptr, out)?;
                    out.push('\n');
                }
            } else {
                out.push(' ');
                if self.notation.opens_on_line(self.shapes, f.expr) {
                    self.open_value(x, f.expr, &ptr, out)?;
                } else {
                    let abbrev = ix.abbrev(r, i).unwrap_or(&NO_ABBREV);
                    self.value(x, f.expr, abbrev, &ptr, out)?;
                }
                out.push('\n');
            }
        }
        if let Some(e) = r.extras {
            for (k, x) in extra {
                let ptr = Ptr::Key(&Ptr::Root, k);
                self.check(x, r.extras_source.unwrap_or(e), &ptr)?;
                write_json_string(k, out);
                out.push_str(": ");
                self.value(x, e, &NO_ABBREV, &ptr, out)?;
                out.push('\n');
            }
        }
        Ok(())
    }

    /// The declared properties present (in field order) and the undeclared ones (sorted by
    /// key, the canonical order); checks required fields and closed objects. Visits the
    /// properties present (few), not every declared field (a hundred in merged records).
    #[allow(clippy::type_complexity)]
    fn split_properties<'m>(
        &self,
        map: &'m Map<String, Value>,
        r: &RecordLayout,
        tag_key: Option<&str>,
        ptr: &Ptr<'_>,
    ) -> EResult<(
        SmallVec<[(usize, &'m Value); 16]>,
        Vec<(&'m String, &'m Value)>,
    )> {
        let ix = r.lookup(self.shapes);
        let mut present: SmallVec<[(usize, &Value); 16]> = SmallVec::new();
        let mut extra: Vec<(&String, &Value)> = Vec::new();
        for (k, v) in map {
            match ix.position(k) {
                Some(i) => present.push((i, v)),
                None if Some(k.as_str()) == tag_key => {}
                None => extra.push((k, v)),
            }
        }
        // Keys are unique, so all required fields are present when as many are found.
        let found = present
            .iter()
            .filter(|&&(i, _)| ix.slots[i].required)
            .count();
        if found < ix.required {
            if let Some(i) = (0..ix.slots.len())
                .find(|&i| ix.slots[i].required && !present.iter().any(|&(j, _)| j == i))
            {
                return eerr(ptr, format!("missing required property `{}`", ix.name(i)));
            }
        }
        present.sort_unstable_by_key(|&(i, _)| i);
        if !extra.is_empty() {
            if r.extras.is_none() {
                return eerr(ptr, format!("property `{}` is not allowed", extra[0].0));
            }
            extra.sort_by(|a, b| a.0.cmp(b.0));
        }
        Ok((present, extra))
    }

    /// An object without parentheses; the empty object as `()`.
    fn open_value(&self, v: &Value, expr: ExprId, ptr: &Ptr<'_>, out: &mut String) -> EResult<()> {
        let Value::Object(map) = v else {
            return eerr(ptr, format!("a {} is not allowed here", type_name(v)));
        };
        let start = out.len();
        self.body(map, expr, ptr, out)?;
        if out.len() == start {
            out.push_str("()");
        }
        Ok(())
    }

    /// An array item or root on its own line: objects without parentheses.
    fn line_item(&self, v: &Value, expr: ExprId, ptr: &Ptr<'_>, out: &mut String) -> EResult<()> {
        if self.shapes.kind(expr).object_only() {
            let Value::Object(map) = v else {
                return eerr(ptr, "expected an object");
            };
            self.body(map, expr, ptr, out)
        } else {
            self.value(v, expr, &NO_ABBREV, ptr, out)
        }
    }

    fn body(
        &self,
        map: &Map<String, Value>,
        expr: ExprId,
        ptr: &Ptr<'_>,
        out: &mut String,
    ) -> EResult<()> {
        let mut slots = 0usize;
        match self.notation.object(expr) {
            Some(ObjLayout::Record(r)) => self.record(map, r, None, ptr, &mut slots, out),
            Some(ObjLayout::Tagged { key, variants }) => {
                let Some(Value::String(tag)) = map.get(key) else {
                    return eerr(ptr, format!("expected a string property `{key}` (the tag)"));
                };
                for var in variants {
                    if let Some((_, written)) = var.tags.iter().find(|(v, _)| v == tag) {
                        out.push_str(written);
                        slots = 1;
                        return self.record(map, &var.record, Some(key), ptr, &mut slots, out);
                    }
                }
                eerr(
                    &Ptr::Key(ptr, key),
                    format!("`{tag}` is not a known `{key}`"),
                )
            }
            None => eerr(ptr, "objects are not allowed here"),
        }
    }

    fn record(
        &self,
        map: &Map<String, Value>,
        r: &RecordLayout,
        tag_key: Option<&str>,
        ptr: &Ptr<'_>,
        slots: &mut usize,
        out: &mut String,
    ) -> EResult<()> {
        let ix = r.lookup(self.shapes);
        let (present, extra) = self.split_properties(map, r, tag_key, ptr)?;
        for (i, x) in present {
            let f = &ix.slots[i];
            let fptr = Ptr::Key(ptr, ix.name(i));
            self.check(x, f.source, &fptr)?;
            let abbrev = ix.abbrev(r, i).unwrap_or(&NO_ABBREV);
            match f.mode {
                SlotMode::Const => check_const(ix, i, x, &fptr)?,
                SlotMode::Positional | SlotMode::Keyless => {
                    sep(slots, out);
                    // A keyless field is recognised by its first token, and a line item's
                    // leading slot must not read as a keyword: a free string stays quoted.
                    match x {
                        Value::String(s) if f.quoted && f.free_string => write_json_string(s, out),
                        _ => self.value(x, f.expr, abbrev, &fptr, out)?,
                    }
                }
                SlotMode::Keyed => {
                    sep(slots, out);
                    out.push_str(ix.keyword(f));
                    let single = if f.single {
                        ix.single[i].as_ref()
                    } else {
                        None
                    };
                    match single {
                        Some(c) if json_eq(c, x) => {}
                        Some(c) => return eerr(&fptr, format!("expected {c}")),
                        None if f.open => {
                            out.push(' ');
                            self.open_value(x, f.expr, &fptr, out)?;
                        }
                        None => {
                            out.push(' ');
                            self.value(x, f.expr, abbrev, &fptr, out)?;
                        }
                    }
                }
            }
        }
        if let Some(e) = r.extras {
            let bare = ix.bare_keys;
            for (n, (k, x)) in extra.into_iter().enumerate() {
                let quoted = !(bare && is_word(k));
                // `"a":1,"b":2` as in JSON, where `":`, `":"` and `","` are single tokens;
                // a bare key (pure maps) follows a space and is followed by one.
                if n > 0 && quoted {
                    out.push(',');
                    *slots += 1;
                } else {
                    sep(slots, out);
                }
                if quoted {
                    write_json_string(k, out);
                    out.push(':');
                } else {
                    out.push_str(k);
                    out.push(' ');
                }
                let kptr = Ptr::Key(ptr, k);
                self.check(x, r.extras_source.unwrap_or(e), &kptr)?;
                self.value(x, e, &NO_ABBREV, &kptr, out)?;
            }
        }
        Ok(())
    }

    /// An inline value.
    pub fn value(
        &self,
        v: &Value,
        expr: ExprId,
        abbrev: &BTreeMap<String, String>,
        ptr: &Ptr<'_>,
        out: &mut String,
    ) -> EResult<()> {
        // Scalars are checked against the kind table; `Parts` (colder, bigger) is read only
        // for enums, arrays and objects.
        let k = self.shapes.kind(expr);
        if k.has(Kind::ANY) {
            out.push_str(&serde_json::to_string(v).unwrap_or_default());
            return Ok(());
        }
        match v {
            Value::Null if k.has(Kind::NULL) => out.push_str("null"),
            Value::Bool(true) if k.has(Kind::TRUE) => out.push_str("true"),
            Value::Bool(false) if k.has(Kind::FALSE) => out.push_str("false"),
            Value::Number(n) if k.has(Kind::NUMBER_VALUES) => {
                let values = self
                    .shapes
                    .parts(expr)
                    .number
                    .as_ref()
                    .and_then(|np| np.values.as_ref());
                match values.and_then(|vs| vs.iter().find(|m| same_number(m, n))) {
                    Some(m) => write_number(m, out),
                    None => return eerr(ptr, format!("{n} is not one of the allowed numbers")),
                }
            }
            Value::Number(n) if k.has(Kind::NUMBER) => {
                if k.has(Kind::INTEGER) && n.as_f64().is_some_and(|f| f.fract() != 0.0) {
                    return eerr(ptr, format!("{n} is not an integer"));
                }
                write_number(n, out);
            }
            Value::String(s) if k.has(Kind::STRING_VALUES) => {
                let values = self
                    .shapes
                    .parts(expr)
                    .string
                    .as_ref()
                    .and_then(|sp| sp.values.as_ref());
                if !values.is_some_and(|vs| vs.contains(s)) {
                    return eerr(ptr, format!("`{s}` is not one of the allowed values"));
                }
                write_word(abbrev.get(s).unwrap_or(s), out);
            }
            Value::String(s) if k.has(Kind::STRING) => write_word(s, out),
            Value::Array(items) if k.has(Kind::ARRAY) => {
                let Some(a) = self.shapes.parts(expr).array.as_ref() else {
                    return eerr(ptr, "arrays are not allowed here");
                };
                out.push('[');
                for (i, x) in items.iter().enumerate() {
                    if i > 0 {
                        out.push(' ');
                    }
                    let Some(e) = a.item_at(i) else {
                        return eerr(ptr, format!("at most {} items are allowed", a.prefix.len()));
                    };
                    let iptr = Ptr::Index(ptr, i);
                    self.check(x, e, &iptr)?;
                    self.value(x, e, &NO_ABBREV, &iptr, out)?;
                }
                out.push(']');
            }
            Value::Object(map) if k.has(Kind::OBJECT) => {
                out.push('(');
                self.body(map, expr, ptr, out)?;
                out.push(')');
            }
            _ => return eerr(ptr, format!("a {} is not allowed here", type_name(v))),
        }
        Ok(())
    }
}

/// A const field's value must be its single value.
fn check_const(ix: &RecordIndex, i: usize, x: &Value, ptr: &Ptr<'_>) -> EResult<()> {
    match &ix.single[i] {
        Some(c) if json_eq(c, x) => Ok(()),
        Some(c) => eerr(ptr, format!("expected {c}")),
        None => eerr(ptr, "expected the field's single value"),
    }
}

/// A string as a token: bare if a word, else quoted.
fn write_word(s: &str, out: &mut String) {
    if is_word(s) {
        out.push_str(s);
    } else {
        write_json_string(s, out);
    }
}

fn write_number(n: &Number, out: &mut String) {
    use std::fmt::Write;
    let _ = write!(out, "{n}");
}

/// A JSON string literal, appended without an intermediate allocation.
fn write_json_string(s: &str, out: &mut String) {
    if s.bytes().all(|b| b >= 0x20 && b != b'"' && b != b'\\') {
        out.push('"');
        out.push_str(s);
        out.push('"');
    } else {
        out.push_str(&serde_json::to_string(s).unwrap_or_default());
    }
}

fn sep(slots: &mut usize, out: &mut String) {
    if *slots > 0 {
        out.push(' ');
    }
    *slots += 1;
}

fn type_name(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

/// Reads shorthand.
pub struct Decoder<'a> {
    src: &'a str,
    pos: usize,
    /// Nesting of `(` and `[`, bounded so hostile input cannot overflow the stack.
    depth: usize,
    shapes: &'a Shapes,
    notation: &'a Notation,
}

type DResult<T> = Result<T, ExpandError>;

/// The next token, borrowed from the input (no allocation on the hot path).
#[derive(PartialEq)]
enum Tok<'s> {
    Word(&'s str),
    Class(First),
}

impl Tok<'_> {
    fn selects(&self, first: &std::collections::BTreeSet<First>) -> bool {
        match self {
            Tok::Word(w) => first.iter().any(|f| matches!(f, First::Word(x) if x == w)),
            Tok::Class(c) => first.contains(c),
        }
    }
}

/// Deepest nesting of objects and arrays the decoder reads (serde_json's limit too).
pub const MAX_DEPTH: usize = 128;

impl<'a> Decoder<'a> {
    pub fn new(src: &'a str, shapes: &'a Shapes, notation: &'a Notation) -> Self {
        Decoder {
            src,
            pos: 0,
            depth: 0,
            shapes,
            notation,
        }
    }

    fn rest(&self) -> &'a str {
        &self.src[self.pos..]
    }
    fn peek(&self) -> Option<char> {
        self.rest().chars().next()
    }
    fn at_end(&self) -> bool {
        self.pos >= self.src.len()
    }

    fn error<T>(&self, expected: impl Into<String>) -> DResult<T> {
        self.error_at(self.pos, expected)
    }

    fn error_at<T>(&self, pos: usize, expected: impl Into<String>) -> DResult<T> {
        let before = &self.src[..pos];
        let line = before.matches('\n').count() + 1;
        let column = before.rsplit('\n').next().map_or(0, |l| l.chars().count()) + 1;
        Err(ExpandError {
            line,
            column,
            expected: expected.into(),
            found: self.describe_at(pos),
        })
    }

    fn describe_at(&self, pos: usize) -> String {
        let rest = &self.src[pos..];
        match rest.chars().next() {
            None => "end of input".into(),
            Some('\n') => "end of line".into(),
            Some(' ') => "a space".into(),
            Some(c) if is_word_char(c) => {
                let w: String = rest
                    .chars()
                    .take_while(|&c| is_word_char(c))
                    .take(40)
                    .collect();
                format!("`{w}`")
            }
            Some(_) => {
                let t: String = rest.chars().take_while(|&c| c != '\n').take(20).collect();
                format!("`{t}`")
            }
        }
    }

    fn eat(&mut self, c: char) -> bool {
        if self.peek() == Some(c) {
            self.pos += c.len_utf8();
            true
        } else {
            false
        }
    }

    fn expect(&mut self, c: char, what: &str) -> DResult<()> {
        if self.eat(c) {
            Ok(())
        } else {
            self.error(what)
        }
    }

    /// Accept the final newline, or its absence at the very end.
    fn end_line(&mut self) -> DResult<()> {
        if self.eat('\n') || self.at_end() {
            Ok(())
        } else {
            self.error("end of line")
        }
    }

    pub fn document(&mut self) -> DResult<Value> {
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
                let mut items = Vec::new();
                while !self.at_end() {
                    items.push(self.line_item(item)?);
                    self.end_line()?;
                }
                self.check_min_items(root, items.len(), "line")?;
                Value::Array(items)
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
    fn check_min_items(&self, expr: ExprId, n: usize, noun: &str) -> DResult<()> {
        let min = self.shapes.min_items(expr);
        if n < min {
            return self.error(format!(
                "another {noun} (the array needs at least {min} {noun}s, found {n})"
            ));
        }
        Ok(())
    }

    /// At a line start: the statement head `kw:` or `"key":`, if there is one.
    fn statement_head(&self) -> Option<(String, usize)> {
        let rest = self.rest();
        if rest.starts_with('"') {
            let len = quoted_len(rest)?;
            let key: String = serde_json::from_str(&rest[..len]).ok()?;
            // `"key": value` at the root; a line item may start `"key":value` (no space).
            rest[len..]
                .starts_with(": ")
                .then_some((format!("\"{key}"), len + 1))
        } else {
            let len = rest.find(|c: char| !is_word_char(c)).unwrap_or(rest.len());
            (len > 0 && rest[len..].starts_with(':')).then(|| (rest[..len].to_string(), len + 1))
        }
    }

    fn block(&mut self, expr: ExprId) -> DResult<Value> {
        let r = match self.notation.object(expr) {
            Some(ObjLayout::Record(r)) => r,
            _ => return self.error("an object"),
        };
        let mut map = Map::new();
        // Plain lines (`kw value`), then sections (`kw:`), as the encoder writes them.
        let plain = r.fields.iter().filter(|f| !is_section(self.shapes, f.expr));
        for f in plain.chain(r.fields.iter().filter(|f| is_section(self.shapes, f.expr))) {
            if let FieldMode::Const(c) = &f.mode {
                map.insert(f.name.clone(), c.clone());
                continue;
            }
            let section = is_section(self.shapes, f.expr);
            let head = if section {
                self.statement_head().filter(|(kw, _)| *kw == f.keyword)
            } else {
                let rest = self.rest();
                (rest.starts_with(f.keyword.as_str()) && rest[f.keyword.len()..].starts_with(' '))
                    .then(|| (f.keyword.clone(), f.keyword.len()))
            };
            match head {
                Some((_, len)) => self.pos += len,
                None if f.mode == FieldMode::Positional => {
                    return self.error(if section {
                        format!("`{}:`", f.keyword)
                    } else {
                        format!("`{} …`", f.keyword)
                    })
                }
                None => continue,
            }
            let v = if section {
                self.expect('\n', "end of line after a section header")?;
                let item = self.shapes.items_of(f.expr);
                let mut items = Vec::new();
                while !self.at_end() && self.statement_head().is_none() {
                    items.push(self.line_item(item)?);
                    self.end_line()?;
                }
                self.check_min_items(f.expr, items.len(), "line")?;
                Value::Array(items)
            } else {
                self.expect(' ', "a space after the keyword")?;
                let v = if self.notation.opens_on_line(self.shapes, f.expr)
                    && self.peek() != Some('(')
                {
                    self.open_body(f.expr)?
                } else {
                    self.value(f.expr, &f.abbrev)?
                };
                self.end_line()?;
                v
            };
            map.insert(f.name.clone(), v);
        }
        while !self.at_end() {
            let start = self.pos;
            match (self.statement_head(), r.extras) {
                (Some((kw, len)), Some(e)) if kw.starts_with('"') => {
                    let key = kw[1..].to_string();
                    if r.fields.iter().any(|f| f.name == key) || map.contains_key(&key) {
                        return self.error_at(
                            start,
                            format!("a new property (`{key}` is declared or repeated)"),
                        );
                    }
                    self.pos += len;
                    self.expect(' ', "a space after `:`")?;
                    let v = self.value(e, &NO_ABBREV)?;
                    self.end_line()?;
                    map.insert(key, v);
                }
                _ => {
                    let next: Vec<String> = r
                        .fields
                        .iter()
                        .filter(|f| !map.contains_key(&f.name))
                        .filter(|f| is_section(self.shapes, f.expr))
                        .map(|f| format!("`{}:`", f.keyword))
                        .collect();
                    return self.error(if next.is_empty() {
                        "end of input".to_string()
                    } else {
                        format!("one of {}", next.join(", "))
                    });
                }
            }
        }
        Ok(Value::Object(map))
    }

    fn line_item(&mut self, expr: ExprId) -> DResult<Value> {
        if self.shapes.parts(expr).object_only() {
            self.body(expr, false)
        } else {
            self.value(expr, &NO_ABBREV)
        }
    }

    /// An object written without parentheses: it ends before the first token that none
    /// of its fields can take.
    fn open_body(&mut self, expr: ExprId) -> DResult<Value> {
        if self.depth >= MAX_DEPTH {
            return self.error(format!("at most {MAX_DEPTH} levels of nesting"));
        }
        self.depth += 1;
        let v = self.body(expr, true);
        self.depth -= 1;
        v
    }

    /// `open`: the object has no closing parenthesis (see [`Decoder::open_body`]).
    fn body(&mut self, expr: ExprId, open: bool) -> DResult<Value> {
        let mut map = Map::new();
        let mut slots = 0usize;
        match self.notation.object(expr) {
            Some(ObjLayout::Record(r)) => {
                self.record(r, &mut map, &mut slots, open)?;
            }
            Some(ObjLayout::Tagged { key, variants }) => {
                let start = self.pos;
                let written = self.token_text();
                let Some((var, value)) = written.and_then(|w| {
                    variants
                        .iter()
                        .find_map(|v| v.tags.iter().find(|(_, t)| t == w).map(|(val, _)| (v, val)))
                }) else {
                    let all: Vec<String> = variants
                        .iter()
                        .flat_map(|v| v.tags.iter().map(|(_, t)| t.clone()))
                        .collect();
                    return self
                        .error_at(start, format!("a `{key}` tag: one of {}", all.join(" ")));
                };
                self.pos += written.map_or(0, str::len);
                map.insert(key.clone(), Value::String(value.clone()));
                slots = 1;
                self.record(&var.record, &mut map, &mut slots, open)?;
            }
            None => return self.error("no object here"),
        }
        Ok(Value::Object(map))
    }

    /// The raw text of the next word or quoted string.
    fn token_text(&self) -> Option<&'a str> {
        let rest = self.rest();
        if rest.starts_with('"') {
            quoted_len(rest).map(|n| &rest[..n])
        } else {
            let n = rest.find(|c: char| !is_word_char(c)).unwrap_or(rest.len());
            (n > 0).then(|| &rest[..n])
        }
    }

    fn classify(&self) -> Option<Tok<'a>> {
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

    fn record(
        &mut self,
        r: &RecordLayout,
        map: &mut Map<String, Value>,
        slots: &mut usize,
        open: bool,
    ) -> DResult<()> {
        let mut i = 0;
        // Positional and const fields.
        while i < r.fields.len() {
            let f = &r.fields[i];
            match &f.mode {
                FieldMode::Const(c) => {
                    map.insert(f.name.clone(), c.clone());
                }
                FieldMode::Positional => {
                    if *slots > 0 {
                        self.expect(' ', &format!("a space, then `{}`", f.name))?;
                    }
                    *slots += 1;
                    let v = self.value_as(f.expr, &f.abbrev, f.quoted)?;
                    map.insert(f.name.clone(), v);
                }
                _ => break,
            }
            i += 1;
        }
        // Optional fields in order, then undeclared properties.
        let mut extras_started = false;
        loop {
            let sep_pos = self.pos;
            // `,` joins undeclared properties with quoted keys: `"a":1,"b":2`.
            let comma = extras_started && self.peek() == Some(',');
            if comma {
                self.pos += 1;
            } else if *slots > 0 {
                if self.peek() != Some(' ') {
                    break;
                }
                self.pos += 1;
            } else if matches!(self.peek(), None | Some(')') | Some('\n')) {
                break;
            }
            let token = self.classify();
            let found = if extras_started {
                None
            } else {
                token
                    .as_ref()
                    .and_then(|t| (i..r.fields.len()).find(|&j| t.selects(&r.fields[j].first)))
            };
            if let Some(j) = found {
                // Const fields between i and j take their value without being written.
                for f in &r.fields[i..j] {
                    if let FieldMode::Const(c) = &f.mode {
                        map.insert(f.name.clone(), c.clone());
                    }
                }
                let f = &r.fields[j];
                let v = self.optional_field(f)?;
                map.insert(f.name.clone(), v);
                i = j + 1;
                *slots += 1;
                continue;
            }
            let bare_key = !comma && matches!(token, Some(Tok::Word(_))) && r.bare_keys();
            // After an undeclared property, the next quoted key comes after `,`.
            let quoted_key = token == Some(Tok::Class(First::Quoted)) && (comma || !extras_started);
            if comma && !quoted_key {
                return self.error("a \"quoted\" property name after `,`");
            }
            if quoted_key || bare_key {
                if let Some(e) = r.extras {
                    let start = self.pos;
                    let key = if bare_key {
                        let w = self.token_text().unwrap_or_default();
                        self.pos += w.len();
                        w.to_string()
                    } else {
                        self.quoted()?
                    };
                    if r.fields.iter().any(|f| f.name == key) || map.contains_key(&key) {
                        return self.error_at(
                            start,
                            format!("a new property (`{key}` is declared or repeated)"),
                        );
                    }
                    if bare_key {
                        self.expect(' ', "a space, then the value")?;
                    } else {
                        self.expect(':', "`:` right after the quoted key, then the value")?;
                    }
                    let v = self.value(e, &NO_ABBREV)?;
                    map.insert(key, v);
                    extras_started = true;
                    *slots += 1;
                    continue;
                }
            }
            if open && *slots > 0 {
                // What follows belongs to the enclosing object.
                self.pos = sep_pos;
                break;
            }
            // Nothing fits: say what could come here.
            let mut keywords: Vec<String> = Vec::new();
            let mut values: Vec<String> = Vec::new();
            if !extras_started {
                for f in &r.fields[i..] {
                    match f.mode {
                        FieldMode::Keyed => keywords.push(format!("`{}`", f.keyword)),
                        FieldMode::Keyless => values.push(format!("`{}`", f.name)),
                        _ => {}
                    }
                }
            }
            let mut expected: Vec<String> = Vec::new();
            if !keywords.is_empty() {
                expected.push(format!("a keyword ({})", keywords.join(", ")));
            }
            if !values.is_empty() {
                expected.push(format!("a value of {}", values.join(", ")));
            }
            if r.extras.is_some() {
                expected.push("a \"quoted\" property name".into());
            }
            if *slots > 0 {
                // After a separator something must follow.
                let what = if expected.is_empty() {
                    "nothing more (remove the space)".to_string()
                } else {
                    expected.join(" or ")
                };
                return self.error_at(sep_pos + 1, what);
            }
            expected.push("the end of the object".into());
            return self.error(expected.join(" or "));
        }
        for f in &r.fields[i..] {
            if let FieldMode::Const(c) = &f.mode {
                map.insert(f.name.clone(), c.clone());
            }
        }
        Ok(())
    }

    fn optional_field(&mut self, f: &FieldLayout) -> DResult<Value> {
        if f.mode == FieldMode::Keyless {
            return self.value(f.expr, &f.abbrev);
        }
        self.pos += f.keyword.len();
        if let Some(c) = self.shapes.parts(f.expr).single_value() {
            return Ok(c);
        }
        self.expect(' ', &format!("a space, then the value of `{}`", f.name))?;
        if f.open && self.peek() != Some('(') {
            return self.open_body(f.expr);
        }
        self.value(f.expr, &f.abbrev)
    }

    fn quoted(&mut self) -> DResult<String> {
        let rest = self.rest();
        let Some(n) = quoted_len(rest) else {
            return self.error("a closed string");
        };
        // Most strings have no escapes: take them as they are.
        let inner = &rest[1..n - 1];
        if !inner.bytes().any(|b| b == b'\\' || b < 0x20) {
            self.pos += n;
            return Ok(inner.to_string());
        }
        match serde_json::from_str::<String>(&rest[..n]) {
            Ok(s) => {
                self.pos += n;
                Ok(s)
            }
            Err(e) => self.error(format!("a valid JSON string ({e})")),
        }
    }

    fn number(&mut self) -> DResult<Number> {
        let rest = self.rest();
        let n = number_len(rest);
        match serde_json::from_str::<Number>(&rest[..n]) {
            Ok(num) if n > 0 => {
                self.pos += n;
                Ok(num)
            }
            _ => self.error("a number"),
        }
    }

    /// A compact JSON value (the fallback for unconstrained subtrees).
    fn json(&mut self) -> DResult<Value> {
        let rest = self.rest();
        let Some(n) = json_len(rest) else {
            return self.error("a JSON value");
        };
        match serde_json::from_str::<Value>(&rest[..n]) {
            Ok(v) => {
                self.pos += n;
                Ok(v)
            }
            Err(e) => self.error(format!("a JSON value ({e})")),
        }
    }

    fn expected_of(&self, p: &Parts) -> String {
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
        if e.is_empty() {
            "nothing (no value is allowed here)".into()
        } else {
            e.join(" or ")
        }
    }

    pub fn value(&mut self, expr: ExprId, abbrev: &BTreeMap<String, String>) -> DResult<Value> {
        self.value_as(expr, abbrev, false)
    }

    /// `quoted`: a free string must be JSON-quoted here (see `FieldLayout::quoted`).
    fn value_as(
        &mut self,
        expr: ExprId,
        abbrev: &BTreeMap<String, String>,
        quoted: bool,
    ) -> DResult<Value> {
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

    fn value_inner(
        &mut self,
        expr: ExprId,
        abbrev: &BTreeMap<String, String>,
        quoted: bool,
    ) -> DResult<Value> {
        let p = self.shapes.parts(expr);
        if p.any {
            return self.json();
        }
        let start = self.pos;
        match self.peek() {
            Some('(') if p.object.is_some() => {
                self.pos += 1;
                let v = self.body(expr, false)?;
                self.expect(')', "`)`")?;
                Ok(v)
            }
            Some('[') if p.array.is_some() => {
                let a = p.array.as_ref().expect("checked");
                self.pos += 1;
                let mut items = Vec::new();
                if self.peek() == Some(']') {
                    self.check_min_items(expr, 0, "item")?;
                    self.pos += 1;
                } else {
                    loop {
                        let Some(e) = a.item_at(items.len()) else {
                            return self.error(format!("`]` (at most {} items)", a.prefix.len()));
                        };
                        items.push(self.value(e, &NO_ABBREV)?);
                        if self.peek() == Some(']') {
                            self.check_min_items(expr, items.len(), "item")?;
                            self.pos += 1;
                            break;
                        }
                        self.expect(' ', "a space or `]`")?;
                    }
                }
                Ok(Value::Array(items))
            }
            Some('"') if p.string.is_some() => {
                let s = self.quoted()?;
                match &p.string.as_ref().expect("checked").values {
                    None => Ok(Value::String(s)),
                    Some(vs) => match lookup_enum(vs, abbrev, &s, false) {
                        Some(v) => Ok(Value::String(v)),
                        None => self.error_at(start, self.expected_of(p)),
                    },
                }
            }
            Some(c) if (c == '-' || c.is_ascii_digit()) && p.number.is_some() => {
                let n = self.number()?;
                let np = p.number.as_ref().expect("checked");
                match &np.values {
                    Some(vs) => match vs.iter().find(|m| same_number(m, &n)) {
                        Some(m) => Ok(Value::Number(m.clone())),
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
                        if np.integer && n.as_f64().is_some_and(|f| f.fract() != 0.0) {
                            return self.error_at(start, "an integer");
                        }
                        Ok(Value::Number(n))
                    }
                }
            }
            Some(c) if is_word_char(c) && !c.is_ascii_digit() && c != '-' => {
                let w = self.token_text().unwrap_or_default();
                let v = match w {
                    "null" if p.null => Some(Value::Null),
                    "true" if p.bool_true => Some(Value::Bool(true)),
                    "false" if p.bool_false => Some(Value::Bool(false)),
                    _ => match p.string.as_ref().map(|s| &s.values) {
                        Some(Some(vs)) => lookup_enum(vs, abbrev, w, true).map(Value::String),
                        // A free string written bare.
                        Some(None) if !quoted && w.starts_with(is_word_start) => {
                            Some(Value::String(w.to_string()))
                        }
                        _ => None,
                    },
                };
                match v {
                    Some(v) => {
                        self.pos += w.len();
                        Ok(v)
                    }
                    None => self.error(self.expected_of(p)),
                }
            }
            _ => self.error(self.expected_of(p)),
        }
    }
}

/// Which enum value a written token stands for (bare words must be written bare, others
/// quoted, so each value has one spelling).
fn lookup_enum(
    values: &[String],
    abbrev: &BTreeMap<String, String>,
    written: &str,
    bare: bool,
) -> Option<String> {
    values
        .iter()
        .find(|v| {
            let w = abbrev.get(*v).map(String::as_str).unwrap_or(v.as_str());
            w == written && is_word(w) == bare
        })
        .cloned()
}

/// Length in bytes of the JSON string literal at the start of `s` (which starts with `"`).
fn quoted_len(s: &str) -> Option<usize> {
    let bytes = s.as_bytes();
    let mut i = 1;
    while i < bytes.len() {
        match bytes[i] {
            b'\\' => i += 2,
            b'"' => return Some(i + 1),
            b'\n' => return None,
            _ => i += 1,
        }
    }
    None
}

/// Length of the compact JSON value at the start of `s` (strings and brackets balanced).
fn json_len(s: &str) -> Option<usize> {
    let bytes = s.as_bytes();
    match bytes.first()? {
        b'"' => quoted_len(s),
        b'{' | b'[' => {
            let mut depth = 0usize;
            let mut i = 0;
            while i < bytes.len() {
                match bytes[i] {
                    b'"' => i += quoted_len(&s[i..])? - 1,
                    b'{' | b'[' => depth += 1,
                    b'}' | b']' => {
                        depth -= 1;
                        if depth == 0 {
                            return Some(i + 1);
                        }
                    }
                    b'\n' => return None,
                    _ => {}
                }
                i += 1;
            }
            None
        }
        b'-' | b'0'..=b'9' => Some(number_len(s)),
        _ => {
            let n = s
                .find(|c: char| !c.is_ascii_alphabetic())
                .unwrap_or(s.len());
            (n > 0).then_some(n)
        }
    }
}

/// Length of the JSON number at the start of `s`.
fn number_len(s: &str) -> usize {
    s.find(|c: char| !(c.is_ascii_digit() || matches!(c, '-' | '+' | '.' | 'e' | 'E')))
        .unwrap_or(s.len())
}

#[cfg(test)]
mod tests {
    use crate::{compile, CompileOptions};
    use serde_json::json;

    #[test]
    fn deep_nesting_is_an_error_not_a_crash() {
        let schema = json!({"$defs": {"t": {"type": "array", "items": {"$ref": "#/$defs/t"}}}, "$ref": "#/$defs/t"});
        let spec = compile(&schema, &CompileOptions::default()).unwrap();
        let deep = format!("{}{}\n", "[".repeat(50_000), "]".repeat(50_000));
        let e = spec.expand(&deep).unwrap_err();
        assert!(e.expected.contains("levels of nesting"), "{e}");
        let ok = format!("{}{}\n", "[".repeat(100), "]".repeat(100));
        assert!(spec.expand(&ok).is_ok());
    }

    #[test]
    fn item_keys_are_not_root_statements() {
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
    fn duplicate_and_unknown_properties_are_errors() {
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
