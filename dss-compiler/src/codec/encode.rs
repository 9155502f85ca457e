//! The encoder: JSON -> shorthand, checking as it goes what the notation cannot write.

use super::index::{RecordIndex, SlotMode};
use super::json::{type_name, write_json_string, write_number, write_word};
use super::node::{same_as, JsonNode, View};
use super::number;
use super::regular;
use super::tables::{Rec, Tables};
use super::NO_ABBREV;
use crate::checks::LocalChecks;
use crate::grammar::terminal::is_word;
use crate::grammar::terminal::Terminal;
use crate::notation::{Notation, ObjLayout, RecordLayout, RootLayout};
use crate::schema::escape_token;
use crate::shape::{same_number, ExprId, Kind, Shapes};
use serde_json::Value;
use smallvec::SmallVec;
use std::collections::BTreeMap;
use std::marker::PhantomData;

/// A value that does not fit the notation (only possible for instances the schema rejects).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{pointer}: the notation cannot write this value: {message}")]
#[non_exhaustive]
pub struct EncodeError {
    /// Where the value is in the instance (a JSON pointer).
    pub pointer: String,
    /// Why it does not fit.
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
pub(crate) enum Ptr<'p> {
    Root,
    Key(&'p Ptr<'p>, &'p str),
    Index(&'p Ptr<'p>, usize),
}

impl Ptr<'_> {
    pub(crate) fn render(&self) -> String {
        match self {
            Ptr::Root => String::new(),
            Ptr::Key(parent, k) => format!("{}/{}", parent.render(), escape_token(k)),
            Ptr::Index(parent, i) => format!("{}/{i}", parent.render()),
        }
    }
}

/// Writes shorthand of the JSON values `N` (a `serde_json::Value`, or a document read
/// from text).
pub(crate) struct Encoder<'a, N: JsonNode = Value> {
    shapes: &'a Shapes,
    notation: &'a Notation,
    /// The lookups of `shapes` and `notation` (built from them).
    tables: &'a Tables,
    /// Checked at every value that has local assertions, when given.
    checks: Option<&'a LocalChecks<N::Family>>,
    node: PhantomData<fn(&N)>,
}

impl<'a, N: JsonNode> Encoder<'a, N> {
    /// An encoder of `shapes` written in `notation`; `tables` are theirs.
    pub(crate) fn new(shapes: &'a Shapes, notation: &'a Notation, tables: &'a Tables) -> Self {
        Encoder {
            shapes,
            notation,
            tables,
            checks: None,
            node: PhantomData,
        }
    }

    /// Also check each value's local assertions (bounds, `pattern`, `format`…): with
    /// [`Shapes::encoding_validates`], a successful encode is then a complete validation.
    pub(crate) fn with_checks(mut self, checks: &'a LocalChecks<N::Family>) -> Self {
        self.checks = Some(checks);
        self
    }

    /// The local assertions of `expr` on `v`, called wherever a value is given its
    /// expression (so once per value, whichever way it is then written or elided).
    /// A free string of `expr`: where it has a regular form (`pattern`, `format`,
    /// lengths), the value must match it, or the decoder would not read it back.
    fn string_form(&self, s: &str, expr: ExprId, ptr: &Ptr<'_>) -> EResult<()> {
        let form = self.shapes.parts(expr).string.as_ref();
        let Some(checks) = form.and_then(|f| f.lexical.as_ref()?.regular()) else {
            return Ok(());
        };
        match self.tables.regexes.first_mismatch(checks, s) {
            None => Ok(()),
            Some(c) => eerr(
                ptr,
                format!(
                    "`{s}` is not {} (the grammar writes only such strings here)",
                    regular::describe(c)
                ),
            ),
        }
    }

    /// An integer of `expr` written at `at` in `out`, in a range the grammar says digit
    /// by digit: its text must be one of the range's.
    fn number_range(
        &self,
        n: &serde_json::Number,
        expr: ExprId,
        at: usize,
        ptr: &Ptr<'_>,
        out: &mut String,
    ) -> EResult<()> {
        let range = self
            .shapes
            .parts(expr)
            .number
            .as_ref()
            .and_then(|np| np.range);
        let Some(r) = range else {
            return Ok(());
        };
        match r.regex() {
            Some(x) if self.tables.regexes.is_match(&x, &out[at..]) => Ok(()),
            _ => {
                out.truncate(at);
                eerr(ptr, format!("{n} is not {}", super::decode::range_text(&r)))
            }
        }
    }

    fn check(&self, v: &N, expr: ExprId, ptr: &Ptr<'_>) -> EResult<()> {
        match self.checks {
            Some(c) if self.tables.kind(expr).has(Kind::CHECKED) => {
                if c.admits(self.shapes, expr, v.node()) {
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

    pub(crate) fn document(&self, v: &N) -> EResult<String> {
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
                let View::Array(items) = v.view() else {
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

    /// The record layout of `expr` and its index.
    fn record_of(
        &self,
        expr: ExprId,
        ptr: &Ptr<'_>,
    ) -> EResult<(&'a RecordLayout, &'a RecordIndex)> {
        match self.tables.object(expr).and_then(|o| o.plain()) {
            Some(rec) => Ok((rec.layout, self.tables.index(rec, self.shapes))),
            None => eerr(ptr, "expected an object form"),
        }
    }

    fn block(&self, v: &N, expr: ExprId, out: &mut String) -> EResult<()> {
        let View::Object(map) = v.view() else {
            return eerr(&Ptr::Root, "expected an object");
        };
        let (r, ix) = self.record_of(expr, &Ptr::Root)?;
        let (present, extra) = self.split_properties(map, r, ix, None, &Ptr::Root)?;
        // Plain `kw value` lines first, then sections (`kw:` and their item lines), so an
        // item line is never mistaken for a plain line.
        let sections = |&&(i, _): &&(usize, &N)| ix.slots[i].section;
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
                let View::Array(items) = x.view() else {
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
                if self.tables.opens_on_line(f.expr) {
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
        map: &'m N::Object,
        r: &RecordLayout,
        ix: &RecordIndex,
        tag_key: Option<&str>,
        ptr: &Ptr<'_>,
    ) -> EResult<(SmallVec<[(usize, &'m N); 16]>, Vec<(&'m str, &'m N)>)> {
        let mut present: SmallVec<[(usize, &N); 16]> = SmallVec::new();
        let mut extra: Vec<(&str, &N)> = Vec::new();
        let mut hint = 0;
        for (k, v) in N::members(map) {
            match ix.position_after(k, hint) {
                Some(i) => {
                    hint = i + 1;
                    present.push((i, v))
                }
                None if Some(k) == tag_key => {}
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
    fn open_value(&self, v: &N, expr: ExprId, ptr: &Ptr<'_>, out: &mut String) -> EResult<()> {
        let View::Object(map) = v.view() else {
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
    fn line_item(&self, v: &N, expr: ExprId, ptr: &Ptr<'_>, out: &mut String) -> EResult<()> {
        if self.tables.kind(expr).object_only() {
            let View::Object(map) = v.view() else {
                return eerr(ptr, "expected an object");
            };
            self.body(map, expr, ptr, out)
        } else {
            self.value(v, expr, &NO_ABBREV, ptr, out)
        }
    }

    fn body(&self, map: &N::Object, expr: ExprId, ptr: &Ptr<'_>, out: &mut String) -> EResult<()> {
        let mut slots = 0usize;
        let Some(obj) = self.tables.object(expr) else {
            return eerr(ptr, "objects are not allowed here");
        };
        match (obj.layout, obj.plain()) {
            (_, Some(rec)) => self.record(map, rec, None, ptr, &mut slots, out),
            (ObjLayout::Tagged { key, .. }, None) => {
                let Some(View::String(tag)) = N::get(map, key).map(JsonNode::view) else {
                    return eerr(ptr, format!("expected a string property `{key}` (the tag)"));
                };
                let Some((rec, written)) = obj.variant(tag) else {
                    return eerr(
                        &Ptr::Key(ptr, key),
                        format!("`{tag}` is not a known `{key}`"),
                    );
                };
                out.push_str(written);
                slots = 1;
                self.record(map, rec, Some(key), ptr, &mut slots, out)
            }
            (ObjLayout::Record(_), None) => eerr(ptr, "objects are not allowed here"),
        }
    }

    fn record(
        &self,
        map: &N::Object,
        rec: Rec<'_>,
        tag_key: Option<&str>,
        ptr: &Ptr<'_>,
        slots: &mut usize,
        out: &mut String,
    ) -> EResult<()> {
        let (r, ix) = (rec.layout, self.tables.index(rec, self.shapes));
        let (present, extra) = self.split_properties(map, r, ix, tag_key, ptr)?;
        for (i, x) in present {
            let f = &ix.slots[i];
            let fptr = Ptr::Key(ptr, ix.name(i));
            self.check(x, f.source, &fptr)?;
            let abbrev = ix.abbrev(r, i).unwrap_or(&NO_ABBREV);
            match f.mode {
                SlotMode::Const => check_const(ix, i, x, &fptr)?,
                SlotMode::Positional | SlotMode::Keyless => {
                    sep(slots, out);
                    if f.named {
                        out.push_str(ix.keyword(f));
                        out.push(' ');
                    }
                    // A keyless field is recognised by its first token, and a line item's
                    // leading slot must not read as a keyword: a free string stays quoted.
                    match x.view() {
                        View::String(s) if f.quoted && f.free_string => {
                            self.string_form(s, f.expr, &fptr)?;
                            write_json_string(s, out)
                        }
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
                        Some(c) if same_as(c, x) => {}
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
    pub(crate) fn value(
        &self,
        v: &N,
        expr: ExprId,
        abbrev: &BTreeMap<String, String>,
        ptr: &Ptr<'_>,
        out: &mut String,
    ) -> EResult<()> {
        // Scalars are checked against the kind table; `Parts` (colder, bigger) is read only
        // for enums, arrays and objects.
        let k = self.tables.kind(expr);
        if k.has(Kind::ANY) {
            out.push_str(&serde_json::to_string(v).unwrap_or_default());
            return Ok(());
        }
        let view = v.view();
        match view {
            View::Null if k.has(Kind::NULL) => out.push_str("null"),
            View::Bool(true) if k.has(Kind::TRUE) => out.push_str("true"),
            View::Bool(false) if k.has(Kind::FALSE) => out.push_str("false"),
            View::Number(n) if k.has(Kind::NUMBER_VALUES) => {
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
            View::Number(n) if k.has(Kind::NUMBER) => {
                if k.has(Kind::INTEGER) && n.as_f64().is_some_and(|f| f.fract() != 0.0) {
                    return eerr(ptr, format!("{n} is not an integer"));
                }
                let at = out.len();
                write_number(n, out);
                if k.has(Kind::NUMBER_RANGE) {
                    return self.number_range(n, expr, at, ptr, out);
                }
                // Digits alone (not `0`) are a lexeme of every number terminal.
                if !out[at..].starts_with('0') && out[at..].bytes().all(|b| b.is_ascii_digit()) {
                    return Ok(());
                }
                out.truncate(at);
                let Some(np) = self.shapes.parts(expr).number.as_ref() else {
                    return eerr(ptr, "numbers are not allowed here");
                };
                // Its own text, or the same value in the form the field's terminal reads
                // (`-0` where the grammar says `>= 0` is written `0`).
                let t = Terminal::of_number(np);
                match number::write_as(t, n) {
                    Some(text) => out.push_str(&text),
                    None => {
                        return eerr(
                            ptr,
                            format!(
                                "{n} is not {} (the grammar's form here)",
                                number::describe(t)
                            ),
                        )
                    }
                }
            }
            View::String(s) if k.has(Kind::STRING_VALUES) => {
                let values = self
                    .shapes
                    .parts(expr)
                    .string
                    .as_ref()
                    .and_then(|sp| sp.values.as_ref());
                if !values.is_some_and(|vs| vs.iter().any(|x| x == s)) {
                    return eerr(ptr, format!("`{s}` is not one of the allowed values"));
                }
                write_word(abbrev.get(s).map_or(s, String::as_str), out);
            }
            View::String(s) if k.has(Kind::STRING_FORM) => {
                self.string_form(s, expr, ptr)?;
                write_json_string(s, out)
            }
            View::String(s) if k.has(Kind::STRING) => write_word(s, out),
            View::Array(_) | View::Object(_)
                if k.has(Kind::LISTED)
                    && !k.has(if matches!(view, View::Array(_)) {
                        Kind::ARRAY
                    } else {
                        Kind::OBJECT
                    }) =>
            {
                self.listed(v, expr, ptr, out)?
            }
            View::Array(items) if k.has(Kind::ARRAY) => {
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
            View::Object(map) if k.has(Kind::OBJECT) => {
                out.push('(');
                self.body(map, expr, ptr, out)?;
                out.push(')');
            }
            _ => return eerr(ptr, format!("a {} is not allowed here", type_name(v))),
        }
        Ok(())
    }
}

impl<N: JsonNode> Encoder<'_, N> {
    /// An array or object `enum`/`const` lists: the listed value's compact JSON, its one
    /// spelling (the input's own spelling when it is that, else the listed value equal to
    /// it as JSON Schema compares values).
    fn listed(&self, v: &N, expr: ExprId, ptr: &Ptr<'_>, out: &mut String) -> EResult<()> {
        let listed = self
            .shapes
            .parts(expr)
            .listed
            .as_deref()
            .unwrap_or_default();
        let own = serde_json::to_string(v).unwrap_or_default();
        let found = listed.iter().find(|l| **l == own).or_else(|| {
            listed
                .iter()
                .find(|l| serde_json::from_str::<Value>(l).is_ok_and(|x| same_as(&x, v)))
        });
        match found {
            Some(l) => {
                out.push_str(l);
                Ok(())
            }
            None => eerr(
                ptr,
                format!(
                    "{} is not one of the listed values",
                    if matches!(v.view(), View::Array(_)) {
                        "the array"
                    } else {
                        "the object"
                    }
                ),
            ),
        }
    }
}

/// A const field's value must be its single value.
fn check_const<N: JsonNode>(ix: &RecordIndex, i: usize, x: &N, ptr: &Ptr<'_>) -> EResult<()> {
    match &ix.single[i] {
        Some(c) if same_as(c, x) => Ok(()),
        Some(c) => eerr(ptr, format!("expected {c}")),
        None => eerr(ptr, "expected the field's single value"),
    }
}

fn sep(slots: &mut usize, out: &mut String) {
    if *slots > 0 {
        out.push(' ');
    }
    *slots += 1;
}
