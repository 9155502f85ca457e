//! Scoring: `em`, `em_paper` and NER counts.
//!
//! **`em`** (exact match): objects are compared key by key (key order never matters);
//! arrays whose pattern is listed in `suite.yaml`'s `scoring.unordered` are compared as
//! multisets (equal after sorting their canonical elements); every other array keeps its
//! order. The importers list the root (calls or orders) and every list whose order carries
//! no meaning (toppings, `either` alternatives). Numbers compare by value (`1` = `1.0`).
//!
//! **`em_paper`**: the rule of the Grammar Pruning paper, [`PaperRule`]: APIMix compares the
//! *set* of calls; FoodOrdering sorts the orders (a multiset) and keeps every inner list's
//! order (topping order counts), as the authors' scorer does on their Burger outputs.
//! A BFCL suite's rule is BFCL's AST checker (`bfcl-ast`, [`crate::bfcl_ast`]), which reads
//! each case's acceptable answers: [`em_paper_case`].
//!
//! **NER**: micro counts of (slot, value) pairs, where a slot is a catalog path pattern and
//! the pairs of the gold are its leaves at catalog paths ([`gold_pairs`]), compared as
//! multisets.

use crate::suite::{pattern_matches, pattern_of, Case, PaperRule, PathSeg, Scoring};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use std::collections::BTreeMap;

/// Exact match under the suite's `unordered` rule (see the module docs).
pub fn em(output: &Value, gold: &Value, scoring: &Scoring) -> bool {
    let mut path = Vec::new();
    canonical(output, &mut path, &|p| {
        scoring.unordered.iter().any(|u| pattern_matches(u, p))
    }) == canonical(gold, &mut Vec::new(), &|p| {
        scoring.unordered.iter().any(|u| pattern_matches(u, p))
    })
}

/// Exact match under the paper's rule of the suite ([`PaperRule`]).
pub fn em_paper(output: &Value, gold: &Value, scoring: &Scoring) -> bool {
    match scoring.paper {
        // Without the case's acceptable answers, the first one alone: see [`em_paper_case`].
        PaperRule::Em | PaperRule::BfclAst => em(output, gold, scoring),
        PaperRule::SortedOrders => {
            let root_only = |p: &[PathSeg]| p.is_empty();
            canonical(output, &mut Vec::new(), &root_only)
                == canonical(gold, &mut Vec::new(), &root_only)
        }
        PaperRule::CallSet => {
            let set = |v: &Value| -> Option<Vec<String>> {
                let items = v.as_array()?;
                let mut s: Vec<String> = items
                    .iter()
                    .map(|c| canonical(c, &mut Vec::new(), &|_| false).to_string())
                    .collect();
                s.sort();
                s.dedup();
                Some(s)
            };
            match (set(output), set(gold)) {
                (Some(a), Some(b)) => a == b,
                _ => output == gold,
            }
        }
    }
}

/// Exact match under the paper's rule of the suite for one case: as [`em_paper`] on the
/// case's gold, except under [`PaperRule::BfclAst`], where BFCL's AST checker decides from
/// the case's `acceptable` answers and its own `tools` ([`crate::bfcl_ast::check`]; a case
/// without them matches nothing).
pub fn em_paper_case(output: &Value, case: &Case, scoring: &Scoring) -> bool {
    match (scoring.paper, &case.tools, &case.acceptable) {
        (PaperRule::BfclAst, Some(tools), Some(acceptable)) => {
            crate::bfcl_ast::check(output, tools, acceptable).is_ok()
        }
        (PaperRule::BfclAst, _, _) => false,
        _ => em_paper(output, &case.gold, scoring),
    }
}

/// A canonical form: object keys sorted, numbers normalized, arrays at `unordered` paths
/// sorted by their elements' canonical text.
fn canonical(v: &Value, path: &mut Vec<PathSeg>, unordered: &dyn Fn(&[PathSeg]) -> bool) -> Value {
    match v {
        Value::Object(m) => {
            let mut keys: Vec<&String> = m.keys().collect();
            keys.sort();
            let mut out = Map::new();
            for k in keys {
                path.push(PathSeg::Key(k.clone()));
                out.insert(k.clone(), canonical(&m[k], path, unordered));
                path.pop();
            }
            Value::Object(out)
        }
        Value::Array(items) => {
            let mut out: Vec<Value> = items
                .iter()
                .enumerate()
                .map(|(i, x)| {
                    path.push(PathSeg::Index(i));
                    let c = canonical(x, path, unordered);
                    path.pop();
                    c
                })
                .collect();
            if unordered(path) {
                out.sort_by_cached_key(|x| x.to_string());
            }
            Value::Array(out)
        }
        Value::Number(n) => match n.as_f64() {
            Some(f) if f.fract() == 0.0 && f.abs() < 9.0e15 => Value::from(f as i64),
            _ => v.clone(),
        },
        _ => v.clone(),
    }
}

/// The (slot, value) pairs of an instance: each scalar leaf whose path matches a catalog
/// pattern, as (pattern, value text). Strings are taken as they are, other scalars as JSON.
pub fn gold_pairs<'a>(
    instance: &Value,
    catalog_patterns: impl IntoIterator<Item = &'a String>,
) -> Vec<(String, String)> {
    let patterns: Vec<&String> = catalog_patterns.into_iter().collect();
    let mut out = Vec::new();
    walk(instance, &mut Vec::new(), &mut |path, leaf| {
        if patterns.iter().any(|p| pattern_matches(p, path)) {
            let text = match leaf {
                Value::String(s) => s.clone(),
                other => other.to_string(),
            };
            out.push((pattern_of(path), text));
        }
    });
    out
}

fn walk(v: &Value, path: &mut Vec<PathSeg>, f: &mut dyn FnMut(&[PathSeg], &Value)) {
    match v {
        Value::Object(m) => {
            for (k, x) in m {
                path.push(PathSeg::Key(k.clone()));
                walk(x, path, f);
                path.pop();
            }
        }
        Value::Array(items) => {
            for (i, x) in items.iter().enumerate() {
                path.push(PathSeg::Index(i));
                walk(x, path, f);
                path.pop();
            }
        }
        leaf => f(path, leaf),
    }
}

/// Micro NER counts, summed over items.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct NerCounts {
    /// Predicted pairs that are in the gold (multiset intersection).
    pub tp: u64,
    /// Predicted pairs not in the gold.
    pub fp: u64,
    /// Gold pairs not predicted.
    #[serde(rename = "fn")]
    pub fn_: u64,
}

impl NerCounts {
    /// Adds one item: predicted and gold pairs compared as multisets.
    pub fn add(&mut self, predicted: &[(String, String)], gold: &[(String, String)]) {
        let mut bag: BTreeMap<&(String, String), i64> = BTreeMap::new();
        for g in gold {
            *bag.entry(g).or_default() += 1;
        }
        let mut tp = 0u64;
        for p in predicted {
            if let Some(n) = bag.get_mut(p).filter(|n| **n > 0) {
                *n -= 1;
                tp += 1;
            }
        }
        self.tp += tp;
        self.fp += predicted.len() as u64 - tp;
        self.fn_ += gold.len() as u64 - tp;
    }

    /// tp / (tp + fp); 0 when nothing was predicted.
    pub fn precision(&self) -> f64 {
        ratio(self.tp, self.tp + self.fp)
    }

    /// tp / (tp + fn); 0 when the gold has no pairs.
    pub fn recall(&self) -> f64 {
        ratio(self.tp, self.tp + self.fn_)
    }

    /// The harmonic mean of precision and recall (0 when both are 0).
    pub fn f1(&self) -> f64 {
        let (p, r) = (self.precision(), self.recall());
        if p + r == 0.0 {
            0.0
        } else {
            2.0 * p * r / (p + r)
        }
    }
}

fn ratio(a: u64, b: u64) -> f64 {
    if b == 0 {
        0.0
    } else {
        a as f64 / b as f64
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn scoring(unordered: &[&str], paper: PaperRule) -> Scoring {
        Scoring {
            unordered: unordered.iter().map(|s| s.to_string()).collect(),
            paper,
        }
    }

    #[test]
    fn em_compares_listed_arrays_as_multisets() {
        let s = scoring(&["", "/*/main/toppings"], PaperRule::SortedOrders);
        let gold = json!([{"main": {"number": 1, "toppings": [{"name": "a"}, {"name": "b"}]}}, {"drink": {"number": 1}}]);
        let swapped = json!([{"drink": {"number": 1.0}}, {"main": {"toppings": [{"name": "b"}, {"name": "a"}], "number": 1}}]);
        assert!(em(&swapped, &gold, &s));
        // The paper's rule sorts the orders but keeps the topping order.
        assert!(!em_paper(&swapped, &gold, &s));
        let orders_swapped = json!([{"drink": {"number": 1}}, {"main": {"number": 1, "toppings": [{"name": "a"}, {"name": "b"}]}}]);
        assert!(em_paper(&orders_swapped, &gold, &s));
        // Multisets, not sets: a duplicated order is a mismatch.
        let dup = json!([{"drink": {"number": 1}}, {"drink": {"number": 1}}]);
        assert!(!em(&dup, &json!([{"drink": {"number": 1}}]), &s));
        // An unlisted array keeps its order.
        let s2 = scoring(&[""], PaperRule::Em);
        assert!(!em(&swapped, &gold, &s2));
        assert!(!em(
            &json!([{"main": {"number": 2}}]),
            &json!([{"main": {"number": 1}}]),
            &s
        ));
    }

    #[test]
    fn em_paper_call_set_collapses_duplicates() {
        let s = scoring(&[""], PaperRule::CallSet);
        let gold = json!([{"f": {"a": "x"}}, {"g": {}}]);
        assert!(em_paper(
            &json!([{"g": {}}, {"f": {"a": "x"}}, {"g": {}}]),
            &gold,
            &s
        ));
        assert!(!em(
            &json!([{"g": {}}, {"f": {"a": "x"}}, {"g": {}}]),
            &gold,
            &s
        ));
        assert!(!em_paper(&json!([{"f": {"a": "y"}}, {"g": {}}]), &gold, &s));
    }

    #[test]
    fn ner_counts_are_micro_multisets() {
        let cats: Vec<String> = vec!["/*/f/a".into(), "/*/f/n".into()];
        let gold = gold_pairs(
            &json!([{"f": {"a": "x", "n": 2, "free": "z"}}, {"f": {"a": "x"}}]),
            &cats,
        );
        assert_eq!(
            gold,
            vec![
                ("/*/f/a".into(), "x".into()),
                ("/*/f/n".into(), "2".into()),
                ("/*/f/a".into(), "x".into())
            ]
        );
        let mut c = NerCounts::default();
        c.add(
            &[("/*/f/a".into(), "x".into()), ("/*/f/a".into(), "y".into())],
            &gold,
        );
        assert_eq!(
            c,
            NerCounts {
                tp: 1,
                fp: 1,
                fn_: 2
            }
        );
        assert_eq!(c.precision(), 0.5);
        assert!((c.recall() - 1.0 / 3.0).abs() < 1e-12);
        assert!((c.f1() - 0.4).abs() < 1e-12);
        assert_eq!(NerCounts::default().f1(), 0.0);
    }
}
