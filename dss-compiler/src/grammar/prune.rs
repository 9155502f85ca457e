//! Grammar pruning: the grammar of a notation cut down to the values found in a request
//! (the Grammar Pruning paper's `G_x = Grammar(I_x)`), and the grammar of the rest of a
//! document from a line boundary (its iterative form).
//!
//! A [`Restriction`] names, per site ([`crate::sites`]), the values a request offers there.
//! The builder then keeps, at each site, only those of its own values (an `enum` filtered,
//! a free string or number bound by a catalog written as an alternation of literals); an
//! optional field or array item whose sites are all bound and have no candidate is left
//! out; a union variant none of whose sites has a candidate is left out. Where nothing
//! would remain (a required field, or no variant), the full set stays. Only alternatives
//! are ever removed, so every pruned sentence is a sentence of the full grammar:
//! **L(G_x) ⊆ L(G)**, and it expands and validates with the unpruned spec.

use serde_json::Value;
use std::collections::{BTreeMap, BTreeSet};

/// The values a request offers per site: the paper's `I_x`.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Restriction {
    /// Site path (as [`crate::sites::Site::path`]) -> the values found for it (a value found
    /// twice is listed twice).
    pub candidates: BTreeMap<String, Vec<Value>>,
    /// Free-string and number sites whose values are known (a catalog is bound to them): with
    /// no candidate they count as "nothing found", like an `enum`. Other free sites are left
    /// alone.
    pub bound: BTreeSet<String>,
    /// The values a bound free site may take at all (its catalog, when it is short, see
    /// `dss_extract::SpecIndex`): where nothing was found for the site and it must still be
    /// written (a field its record requires), these are offered in place of the schema's
    /// whole range, so that an order's count is one of the venue's counts, not any integer
    /// (a small model, offered `[1-9][0-9]*`, wrote `pizza 1000000…` until it ran out).
    /// Never candidates: they neither keep an optional part nor ask for a line.
    pub known: BTreeMap<String, Vec<Value>>,
    /// Sites left unpruned although their values are known: values a request does not name
    /// but the writer infers (a field's role or data type). See `SpecIndex::learn_inferred`.
    pub free: BTreeSet<String>,
    /// The readings of one ambiguous mention: the (site path, value) pairs one span of the
    /// request offers (`four` as a rating and as a party size). The mention is used once:
    /// writing one reading consumes the others ([`Consume::Class`]).
    ///
    /// A reading may also name a *record* rather than a value: `(record path, null)`, as
    /// `("/*/BookRestaurant", null)` for the word `book` of "book a brasserie", which also
    /// reads as the value `book` of another call's `object_type`. Writing any value inside
    /// that record uses the mention (the word named the call; it is no value left to write),
    /// see [`Restriction::record_reading`].
    pub readings: Vec<Vec<(String, Value)>>,
    /// Modifiers tied to the value they modify, as (modifier, head) (site path, value)
    /// pairs: the `large` of "and one large lemonade" goes in the record that writes
    /// `lemonade`, not in another drink's. A line that writes the head holds on until
    /// it has written the modifier ([`crate::CompiledSpec::line_leaves`]); a line that does
    /// not write it is never held for it.
    pub ties: Vec<((String, Value), (String, Value))>,
    /// Hold lists open: a list of found values does not end while a value found that only
    /// it could take is unwritten ([`Restriction::list_holds`]). The runtime sets it with
    /// line holding; without it a small model ended `toppings [(lettuce) (tomato)]` early
    /// and wrote the skipped `pickle` as a second main dish of its own.
    pub hold_lists: bool,
    /// Values named in one clause of the request (no comma, `and` or `then` between) at
    /// two fields of one record, as pairs of (site path, value) readings, both ways: the
    /// line that writes one of them is held until it has written the other
    /// ([`crate::CompiledSpec::line_leaves`]). "a flight out of reno into fresno": the line
    /// that writes `reno` writes `fresno` too, where a small model ended the call
    /// after one city and wrote the other as a call of its own.
    pub together: Vec<((String, Value), (String, Value))>,
}

impl Restriction {
    /// The candidates at `path` (none: empty).
    pub fn at(&self, path: &str) -> &[Value] {
        self.candidates.get(path).map_or(&[], Vec::as_slice)
    }

    /// Whether no candidate is left anywhere.
    pub fn is_exhausted(&self) -> bool {
        self.candidates.values().all(Vec::is_empty)
    }

    /// Total number of candidate values (with repeats).
    pub fn len(&self) -> usize {
        self.candidates.values().map(Vec::len).sum()
    }

    /// Whether there is no candidate at all.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// A record reading (see [`Restriction::readings`]): the mention names the record at
    /// `record` (a call), so writing inside that record uses it.
    pub fn record_reading(record: &str) -> (String, Value) {
        (record.to_string(), Value::Null)
    }

    /// The values found at `site`, a site of the items of the list at `list`
    /// (`/*/main_dish/toppings/*/name` in `/*/main_dish/toppings`), that the list takes
    /// before it ends when [`Restriction::hold_lists`] is set: those whose every reading
    /// lies in the list's items and that modify no other value ([`Restriction::ties`]).
    /// None when the list's record is repeated (an array item) and another such record is
    /// still asked for: a field of it with two values found that no other record could
    /// take (`one cheeseburger with onions and one vegan burger with mayo`), since the
    /// values may then be the other record's.
    pub fn list_holds(&self, site: &str, list: &str) -> Vec<Value> {
        if !self.hold_lists {
            return Vec::new();
        }
        let record = list.rsplit_once('/').map_or("", |(r, _)| r);
        if record.split('/').any(|seg| seg == "*") {
            let outside = |v: &Value| {
                self.candidates
                    .iter()
                    .any(|(s, xs)| !below(s, record) && xs.iter().any(|x| same_value(x, v)))
            };
            let another = self.candidates.iter().any(|(s, xs)| {
                below(s, record)
                    && !s[record.len() + 1..].contains('/')
                    && !self.free.contains(s)
                    && xs.iter().filter(|x| !outside(x)).count() >= 2
            });
            if another {
                return Vec::new();
            }
        }
        self.at(site)
            .iter()
            .filter(|v| {
                let reads_outside = self.readings.iter().any(|g| {
                    g.iter().any(|(s, x)| s == site && same_value(x, v))
                        && g.iter().any(|(s, _)| !below(s, list))
                });
                let modifies = self
                    .ties
                    .iter()
                    .any(|((s, x), _)| s == site && same_value(x, v));
                !reads_outside && !modifies
            })
            .cloned()
            .collect()
    }

    /// The same restriction without its record readings (see [`Restriction::readings`]): a
    /// line being written uses no mention by naming its own record.
    pub fn without_record_readings(&self) -> Restriction {
        let mut r = self.clone();
        for g in &mut r.readings {
            g.retain(|(_, v)| !v.is_null());
        }
        r.readings.retain(|g| g.len() > 1);
        r
    }

    /// What is left once the (site path, value) pairs written so far are used up: one
    /// occurrence each, of the pair and of the other readings of its mention
    /// ([`Consume::Class`]), or of the value at every site ([`Consume::Value`]). With
    /// [`Consume::Class`], the first value written inside a record that a mention's record
    /// reading names uses that mention too.
    pub fn consumed(&self, used: &[(String, Value)], how: Consume) -> Restriction {
        let mut r = self.clone();
        let take = |cands: &mut BTreeMap<String, Vec<Value>>, site: &str, v: &Value| {
            if let Some(list) = cands.get_mut(site) {
                if let Some(i) = list.iter().position(|c| same_value(c, v)) {
                    list.remove(i);
                }
            }
        };
        for (site, v) in used {
            match how {
                Consume::Class => {
                    // A mention with this reading alone (`a` before `burger`, where an `a`
                    // before `large` is still a number of any order) is the one written:
                    // the ambiguous mentions keep all their readings.
                    let occurrences = r.at(site).iter().filter(|c| same_value(c, v)).count();
                    let in_groups = r
                        .readings
                        .iter()
                        .filter(|g| g.iter().any(|(s, x)| s == site && same_value(x, v)))
                        .count();
                    take(&mut r.candidates, site, v);
                    // Of the mentions that could be it, the one with the fewest other
                    // readings: the `a` of "a lemonade, large" (the drink's, by its
                    // head) rather than the `a` of "a side order" (any order's), which
                    // then stays for the side.
                    let group = r
                        .readings
                        .iter()
                        .enumerate()
                        .filter(|(_, g)| g.iter().any(|(s, x)| s == site && same_value(x, v)))
                        .min_by_key(|(_, g)| g.len())
                        .map(|(i, _)| i)
                        .filter(|_| occurrences <= in_groups);
                    if let Some(g) = group {
                        let group = r.readings.remove(g);
                        let mut skipped = false;
                        for (s, x) in &group {
                            // The reading written was taken above (once).
                            if !skipped && s == site && same_value(x, v) {
                                skipped = true;
                                continue;
                            }
                            take(&mut r.candidates, s, x);
                        }
                    }
                    // A mention that named the record this value is written in.
                    let named = r.readings.iter().position(|g| {
                        g.iter().any(|(s, x)| {
                            x.is_null()
                                && site.len() > s.len()
                                && site.starts_with(s.as_str())
                                && site.as_bytes()[s.len()] == b'/'
                        })
                    });
                    if let Some(g) = named {
                        for (s, x) in r.readings.remove(g) {
                            if !x.is_null() {
                                take(&mut r.candidates, &s, &x);
                            }
                        }
                    }
                }
                Consume::Value => {
                    let sites: Vec<String> = r.candidates.keys().cloned().collect();
                    for s in sites {
                        take(&mut r.candidates, &s, v);
                    }
                }
                Consume::Off => {}
            }
        }
        r
    }
}

/// What leaves the candidates once a line is written (`--consume`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Consume {
    /// The (site, value) pair written.
    #[default]
    Class,
    /// The value, at every site.
    Value,
    /// Nothing: the grammar stays as first pruned.
    Off,
}

impl Consume {
    /// By name: `class`, `value`, `off`.
    pub fn from_name(name: &str) -> Option<Consume> {
        match name {
            "class" => Some(Consume::Class),
            "value" => Some(Consume::Value),
            "off" => Some(Consume::Off),
            _ => None,
        }
    }
}

/// Where the rest of a document starts: the lines written so far.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Resume {
    /// The whole document.
    #[default]
    Start,
    /// A block document after its line for field `field` (in the order the block writes
    /// its fields); a section with `items` lines so far.
    Block {
        /// Index into the block's written fields (plain lines first, then sections).
        field: usize,
        /// Lines of that section written so far (0 for a plain line).
        items: usize,
    },
    /// A root array written one item per line, after `items` lines.
    Lines {
        /// Lines written so far.
        items: usize,
    },
}

/// What the sites below a place say (see the module docs).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct Status {
    /// A site whose values are known (an enum, a tag, a bound free site).
    pub bound: bool,
    /// A bound site with a candidate.
    pub candidate: bool,
    /// A free site (or an unlisted, recursive part): anything may be meant.
    pub free: bool,
    /// A free site whose values nothing lists (not one whose values are known but left
    /// unpruned, [`Restriction::free`]): a request may mean a value of it unseen.
    pub open: bool,
}

impl Status {
    pub(crate) fn or(self, o: Status) -> Status {
        Status {
            bound: self.bound || o.bound,
            candidate: self.candidate || o.candidate,
            free: self.free || o.free,
            open: self.open || o.open,
        }
    }
    /// An optional part with nothing for it: left out.
    pub(crate) fn droppable(self) -> bool {
        self.bound && !self.candidate && !self.free
    }
    /// A union variant is kept when a site of it has a candidate, or it has no known site.
    pub(crate) fn keeps_variant(self) -> bool {
        self.candidate || !self.bound
    }
    /// Another line of a section is asked for: a site of its items has a candidate, or a
    /// value nothing lists (or no site is known). Sites left unpruned whose values are
    /// known (a field's role or data type) ask for none: the model went on writing fields
    /// nobody named after the found ones.
    pub(crate) fn asks_for_more(self) -> bool {
        self.candidate || self.open || !self.bound
    }
}

/// Whether the site path `site` lies below the path `path` (`/*/a/b` below `/*/a`).
pub(crate) fn below(site: &str, path: &str) -> bool {
    site.len() > path.len() && site.starts_with(path) && site.as_bytes()[path.len()] == b'/'
}

/// Whether a candidate equals a value of the schema (numbers by value: `1` is `1.0`).
pub(crate) fn same_value(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => x.as_f64() == y.as_f64(),
        _ => a == b,
    }
}
