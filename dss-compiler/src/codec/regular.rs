//! The codec's check of regular forms (`pattern`, `format`, lengths, integer ranges; see
//! `shape/regular.rs`): the decoder reads a string as any JSON string and then checks
//! that it is spelled as the grammar spells it (serde_json's escapes, which the encoder
//! writes) and that its value matches every constraint, with the `regex` crate's compiled
//! form of the expressions the grammar's automaton was built from; so it reads exactly
//! the grammar's language. The encoder checks the same before writing.

use crate::shape::RegularCheck;
use regex::Regex;
use rustc_hash::FxHashMap as HashMap;
use std::sync::{Arc, RwLock};

/// Compiled regular expressions, by their text, built on first use.
#[derive(Debug, Default)]
pub(crate) struct Regexes {
    cache: RwLock<HashMap<String, Option<Arc<Regex>>>>,
}

impl Regexes {
    /// The compiled `regex` (`None`: it does not compile, which the shapes never let
    /// through).
    fn get(&self, regex: &str) -> Option<Arc<Regex>> {
        if let Ok(cache) = self.cache.read() {
            if let Some(r) = cache.get(regex) {
                return r.clone();
            }
        }
        let compiled = Regex::new(regex).ok().map(Arc::new);
        if let Ok(mut cache) = self.cache.write() {
            cache.insert(regex.to_string(), compiled.clone());
        }
        compiled
    }

    /// Whether `text` matches `regex`.
    pub(crate) fn is_match(&self, regex: &str, text: &str) -> bool {
        self.get(regex).is_some_and(|r| r.is_match(text))
    }

    /// The first constraint `value` does not match, if any.
    pub(crate) fn first_mismatch<'c>(
        &self,
        checks: &'c [RegularCheck],
        value: &str,
    ) -> Option<&'c RegularCheck> {
        checks.iter().find(|c| match c.length_bounds() {
            // Counted: the regex of a long repetition is large.
            Some((lo, hi)) => {
                let n = value.chars().count() as u64;
                n < lo || hi.is_some_and(|h| n > h)
            }
            None => !self.is_match(&c.regex, value),
        })
    }
}

/// What a constraint asks, for messages.
pub(crate) fn describe(c: &RegularCheck) -> String {
    match c.keyword.as_str() {
        "pattern" => format!("a string matching the pattern `{}`", c.source),
        "format" => format!("a `{}` string (in the grammar's form)", c.source),
        "length" => format!("a string of {} characters", c.source),
        _ => format!("a string matching `{}`", c.regex),
    }
}

/// Whether the string literal `raw` (quotes included) spells `value` as the grammar's
/// rules do: serde_json's escapes (`\"`, `\\`, `\b` `\f` `\n` `\r` `\t`, `\u00xx` for
/// other control characters), every other character as itself.
pub(crate) fn canonical(raw: &str, value: &str) -> bool {
    let mut s = String::with_capacity(raw.len());
    super::json::write_json_string(value, &mut s);
    s == raw
}
