//! The decoder's objects: block documents (one statement per line), bodies of records and
//! tagged unions, optional fields found by their first token, and undeclared properties.

use super::decode::{DResult, Tok};
use super::index::{RecordIndex, SlotMode};
use super::out::Out;
use super::tables::Rec;
use super::{Decoder, MAX_DEPTH, NO_ABBREV};
use crate::grammar::terminal::is_word;
use crate::notation::{is_section, FieldLayout, FieldMode, First, ObjLayout, RecordLayout};
use crate::shape::ExprId;
use smallvec::SmallVec;

impl<O: Out> Decoder<'_, O> {
    pub(super) fn block(&mut self, expr: ExprId) -> DResult<O::V> {
        let tables = self.tables;
        let Some(rec) = tables.object(expr).and_then(|o| o.plain()) else {
            return self.error("an object");
        };
        let (r, ix) = (rec.layout, tables.index(rec, self.shapes));
        let mut map = self.out.object();
        // The fields read, for the message when nothing fits after them.
        let mut given: SmallVec<[u32; 16]> = SmallVec::new();
        // Plain lines (`kw value`), then sections (`kw:`), as the encoder writes them.
        for &i in &ix.block_order {
            let f = &r.fields[i as usize];
            if let FieldMode::Const(c) = &f.mode {
                self.out.key(&mut map, &f.name);
                let v = self.out.json(c);
                self.out.insert(&mut map, v);
                continue;
            }
            let section = ix.slots[i as usize].section;
            let head = if section {
                self.statement_head().filter(|(kw, _)| *kw == f.keyword)
            } else {
                let rest = self.rest();
                (rest.starts_with(f.keyword.as_str()) && rest[f.keyword.len()..].starts_with(' '))
                    .then(|| (f.keyword.clone(), f.keyword.len()))
            };
            match head {
                Some((_, len)) => {
                    self.pos += len;
                    self.out.key(&mut map, &f.name);
                    given.push(i);
                }
                None if self.partial && self.at_end() => continue,
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
                let mut items = self.out.array();
                while !self.at_end() && !self.at_statement_head() {
                    self.out.item(&mut items);
                    let v = self.line_item(item)?;
                    self.out.push(&mut items, v);
                    self.end_line()?;
                }
                self.check_min_items(f.expr, self.out.items(&items), "line")?;
                self.out.end_array(items)
            } else {
                self.expect(' ', "a space after the keyword")?;
                let v = if self.tables.opens_on_line(f.expr) && self.peek() != Some('(') {
                    self.open_body(f.expr)?
                } else {
                    self.value(f.expr, &f.abbrev)?
                };
                self.end_line()?;
                v
            };
            self.out.insert(&mut map, v);
        }
        self.block_extras(r, &mut map, &given)?;
        Ok(self.out.end_object(map))
    }

    /// The lines after a block's fields: undeclared properties (`"key": value`), else the
    /// end of input (`given`: the fields read).
    fn block_extras(&mut self, r: &RecordLayout, map: &mut O::Obj, given: &[u32]) -> DResult<()> {
        while !self.at_end() {
            let start = self.pos;
            match (self.statement_head(), r.extras) {
                (Some((kw, len)), Some(e)) if kw.starts_with('"') => {
                    let key = kw[1..].to_string();
                    self.check_new_key(r, map, &key, start)?;
                    self.pos += len;
                    self.expect(' ', "a space after `:`")?;
                    self.out.own_key(map, key);
                    let v = self.value(e, &NO_ABBREV)?;
                    self.end_line()?;
                    self.out.insert(map, v);
                }
                _ => {
                    let next: Vec<String> = r
                        .fields
                        .iter()
                        .enumerate()
                        .filter(|(i, f)| {
                            !matches!(f.mode, FieldMode::Const(_)) && !given.contains(&(*i as u32))
                        })
                        .map(|(_, f)| f)
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
        Ok(())
    }

    pub(super) fn line_item(&mut self, expr: ExprId) -> DResult<O::V> {
        if self.tables.kind(expr).object_only() {
            self.body(expr, false)
        } else {
            self.value(expr, &NO_ABBREV)
        }
    }

    /// An object written without parentheses: it ends before the first token that none
    /// of its fields can take.
    pub(super) fn open_body(&mut self, expr: ExprId) -> DResult<O::V> {
        if self.depth >= MAX_DEPTH {
            return self.error(format!("at most {MAX_DEPTH} levels of nesting"));
        }
        self.depth += 1;
        let v = self.body(expr, true);
        self.depth -= 1;
        v
    }

    /// `open`: the object has no closing parenthesis (see [`Decoder::open_body`]).
    pub(super) fn body(&mut self, expr: ExprId, open: bool) -> DResult<O::V> {
        let mut slots = 0usize;
        let tables = self.tables;
        let Some(obj) = tables.object(expr) else {
            return self.error("no object here");
        };
        let mut map = self.out.object();
        match (obj.layout, obj.plain()) {
            (_, Some(rec)) => {
                self.record(rec, &mut map, &mut slots, open)?;
            }
            (ObjLayout::Tagged { key, variants }, None) => {
                let start = self.pos;
                let written = self.token_text();
                let Some((rec, value)) = written.and_then(|w| {
                    variants.iter().enumerate().find_map(|(i, v)| {
                        let (val, _) = v.tags.iter().find(|(_, t)| t == w)?;
                        Some((obj.record(i)?, val))
                    })
                }) else {
                    let all: Vec<String> = variants
                        .iter()
                        .flat_map(|v| v.tags.iter().map(|(_, t)| t.clone()))
                        .collect();
                    return self
                        .error_at(start, format!("a `{key}` tag: one of {}", all.join(" ")));
                };
                self.pos += written.map_or(0, str::len);
                self.out.own_key(&mut map, key.clone());
                let v = self.out.str(value);
                self.out.insert(&mut map, v);
                slots = 1;
                self.record(rec, &mut map, &mut slots, open)?;
            }
            (ObjLayout::Record(_), None) => return self.error("no object here"),
        }
        Ok(self.out.end_object(map))
    }

    pub(super) fn record(
        &mut self,
        rec: Rec<'_>,
        map: &mut O::Obj,
        slots: &mut usize,
        open: bool,
    ) -> DResult<()> {
        let r = rec.layout;
        let ix = self.tables.index(rec, self.shapes);
        let mut i = self.leading_fields(r, ix, map, slots)?;
        // Read in any order: the optional fields given so far.
        let mut given: SmallVec<[usize; 8]> = SmallVec::new();
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
            let selected = match (&token, extras_started) {
                (Some(t), false) => t.selected(ix),
                _ => &[],
            };
            let found = selected.iter().map(|&j| j as usize).find(|&j| j >= i);
            // Read in any order: an optional field before `i` not given yet.
            let earlier = match (found, self.any_order) {
                (None, true) => selected.iter().map(|&j| j as usize).find(|&j| {
                    j < i && matches!(ix.slots[j].mode, SlotMode::Keyed | SlotMode::Keyless)
                }),
                _ => None,
            };
            if let Some(j) = earlier {
                if given.contains(&j) {
                    return self.error(format!("`{}` once (it was given already)", ix.name(j)));
                }
                given.push(j);
                self.out.field_key(map, ix.name(j), ix.json_name(j));
                let v = self.optional_field(r, ix, j)?;
                self.out.insert(map, v);
                *slots += 1;
                continue;
            }
            if let Some(j) = found {
                // Const fields between i and j take their value without being written.
                self.insert_consts(ix, i..j, map);
                if self.any_order {
                    given.push(j);
                }
                self.out.field_key(map, ix.name(j), ix.json_name(j));
                let v = self.optional_field(r, ix, j)?;
                self.out.insert(map, v);
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
                    self.extra_property(r, e, bare_key, map)?;
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
            let rest = if extras_started {
                &[][..]
            } else {
                &r.fields[i..]
            };
            return self.nothing_fits(r, rest, *slots > 0, sep_pos);
        }
        self.insert_consts(ix, i..r.fields.len(), map);
        Ok(())
    }

    /// The positional and const fields a record starts with; returns how many there are.
    fn leading_fields(
        &mut self,
        r: &RecordLayout,
        ix: &RecordIndex,
        map: &mut O::Obj,
        slots: &mut usize,
    ) -> DResult<usize> {
        let mut i = 0;
        while i < ix.slots.len() {
            let f = &ix.slots[i];
            match f.mode {
                SlotMode::Const => {
                    if let Some(c) = &ix.single[i] {
                        self.out.field_key(map, ix.name(i), ix.json_name(i));
                        let v = self.out.json(c);
                        self.out.insert(map, v);
                    }
                }
                SlotMode::Positional => {
                    if *slots > 0 && !self.eat(' ') {
                        return self.error(format!("a space, then `{}`", ix.name(i)));
                    }
                    *slots += 1;
                    if f.named {
                        let keyword = ix.keyword(f);
                        let rest = self.rest();
                        if !(rest.starts_with(keyword) && rest[keyword.len()..].starts_with(' ')) {
                            return self.error(format!("`{keyword} …` (field `{}`)", ix.name(i)));
                        }
                        self.pos += keyword.len() + 1;
                    }
                    self.out.field_key(map, ix.name(i), ix.json_name(i));
                    let abbrev = ix.abbrev(r, i).unwrap_or(&NO_ABBREV);
                    let v = self.value_as(f.expr, abbrev, f.quoted)?;
                    self.out.insert(map, v);
                }
                _ => break,
            }
            i += 1;
        }
        Ok(i)
    }

    /// An undeclared property: `"key":value`, or `key value` (a bare key, in pure maps).
    fn extra_property(
        &mut self,
        r: &RecordLayout,
        e: ExprId,
        bare_key: bool,
        map: &mut O::Obj,
    ) -> DResult<()> {
        let start = self.pos;
        let key = if bare_key {
            let w = self.token_text().unwrap_or_default();
            // A bare key is a bare word, as the grammars say (`bare`): it starts with a
            // letter, `_` or `$`; anything else is quoted (`".um0":10`, as compress writes).
            if !is_word(w) {
                return self.error_at(
                    start,
                    "a property name: a bare word (starting with a letter, `_` or `$`) or a \"quoted\" name",
                );
            }
            self.pos += w.len();
            w.to_string()
        } else {
            self.quoted()?
        };
        self.check_new_key(r, map, &key, start)?;
        if bare_key {
            self.expect(' ', "a space, then the value")?;
        } else {
            self.expect(':', "`:` right after the quoted key, then the value")?;
        }
        self.out.own_key(map, key);
        let v = self.value(e, &NO_ABBREV)?;
        self.out.insert(map, v);
        Ok(())
    }

    /// The error where nothing fits in a record: what could come here (`rest`: the fields
    /// still possible; `after_sep`: a separator at `sep_pos` was read, so something must
    /// follow it).
    fn nothing_fits<T>(
        &self,
        r: &RecordLayout,
        rest: &[FieldLayout],
        after_sep: bool,
        sep_pos: usize,
    ) -> DResult<T> {
        let mut keywords: Vec<String> = Vec::new();
        let mut values: Vec<String> = Vec::new();
        for f in rest {
            match f.mode {
                FieldMode::Keyed => keywords.push(format!("`{}`", f.keyword)),
                FieldMode::Keyless => values.push(format!("`{}`", f.name)),
                _ => {}
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
        if after_sep {
            let what = if expected.is_empty() {
                "nothing more (remove the space)".to_string()
            } else {
                expected.join(" or ")
            };
            return self.error_at(sep_pos + 1, what);
        }
        expected.push("the end of the object".into());
        self.error(expected.join(" or "))
    }

    /// Field number `j` of record `r`, whose index is `ix`.
    pub(super) fn optional_field(
        &mut self,
        r: &RecordLayout,
        ix: &RecordIndex,
        j: usize,
    ) -> DResult<O::V> {
        let f = &ix.slots[j];
        let abbrev = ix.abbrev(r, j).unwrap_or(&NO_ABBREV);
        if f.mode == SlotMode::Keyless {
            return self.value(f.expr, abbrev);
        }
        self.pos += ix.keyword(f).len();
        if f.flag {
            if let Some(c) = &ix.single[j] {
                return Ok(self.out.json(c));
            }
        }
        if !self.eat(' ') {
            return self.error(format!("a space, then the value of `{}`", ix.name(j)));
        }
        if f.open && self.peek() != Some('(') {
            // An empty open object is written `()`, never as nothing.
            let start = self.pos;
            let v = self.open_body(f.expr)?;
            if self.pos == start {
                return self.error_at(
                    start,
                    format!("a field of `{}`, or `()` for an empty one", ix.name(j)),
                );
            }
            return Ok(v);
        }
        self.value(f.expr, abbrev)
    }
}

impl<O: Out> Decoder<'_, O> {
    /// An undeclared property's key (read at `start`) must be neither declared nor repeated.
    fn check_new_key(
        &self,
        r: &RecordLayout,
        map: &O::Obj,
        key: &str,
        start: usize,
    ) -> DResult<()> {
        if r.fields.iter().any(|f| f.name == key) || self.out.has_own_key(map, key) {
            return self.error_at(
                start,
                format!("a new property (`{key}` is declared or repeated)"),
            );
        }
        Ok(())
    }

    /// The const fields of a record (index `ix`) in `range` take their value without
    /// being written.
    fn insert_consts(&mut self, ix: &RecordIndex, range: std::ops::Range<usize>, map: &mut O::Obj) {
        for &c in &ix.consts {
            let c = c as usize;
            if !range.contains(&c) {
                continue;
            }
            if let Some(v) = &ix.single[c] {
                self.out.field_key(map, ix.name(c), ix.json_name(c));
                let v = self.out.json(v);
                self.out.insert(map, v);
            }
        }
    }
}
