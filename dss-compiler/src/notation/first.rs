//! First-token sets: the classes of token a value may start with, which decide keyless
//! fields, open objects, and check that one token of lookahead decides every step.

use super::words::is_word;
use crate::shape::Parts;
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, BTreeSet};

/// First token classes, for deciding keyless fields and checking determinism.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub(crate) enum First {
    Null,
    True,
    False,
    Number,
    Quoted,
    Word(String),
    LParen,
    LBracket,
    LBrace,
}

/// First tokens of a value of these parts.
pub(crate) fn first_set(parts: &Parts, abbrev: &BTreeMap<String, String>) -> BTreeSet<First> {
    let mut f = BTreeSet::new();
    if parts.any {
        f.extend([
            First::Null,
            First::True,
            First::False,
            First::Number,
            First::Quoted,
            First::LBracket,
            First::LBrace,
        ]);
        return f;
    }
    if parts.null {
        f.insert(First::Null);
    }
    if parts.bool_true {
        f.insert(First::True);
    }
    if parts.bool_false {
        f.insert(First::False);
    }
    if parts.number.is_some() {
        f.insert(First::Number);
    }
    if let Some(s) = &parts.string {
        match &s.values {
            None => {
                f.insert(First::Quoted);
            }
            Some(vs) => {
                for v in vs {
                    let w = abbrev.get(v).map(String::as_str).unwrap_or(v);
                    f.insert(if is_word(w) {
                        First::Word(w.to_string())
                    } else {
                        First::Quoted
                    });
                }
            }
        }
    }
    if parts.array.is_some() {
        f.insert(First::LBracket);
    }
    if parts.object.is_some() {
        f.insert(First::LParen);
    }
    // Listed arrays and objects are written as their compact JSON.
    for l in parts.listed.iter().flatten() {
        f.insert(if l.starts_with('[') {
            First::LBracket
        } else {
            First::LBrace
        });
    }
    f
}
