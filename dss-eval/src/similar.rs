//! Near-duplicate requests: a worked example must not be (nearly) an evaluated case.
//!
//! **Normalized token similarity.** A request's tokens are its maximal runs of
//! alphanumeric characters (Unicode), lower-cased: `"I'd like 2 Lattes!"` is
//! `[i, d, like, 2, lattes]`. The similarity of two requests with token multisets `A` and
//! `B` is `|A ∩ B| / max(|A|, |B|)`, where `A ∩ B` is the multiset intersection (a token
//! counts as often as it occurs in both). It is 1 for requests with the same tokens in
//! any order and 0 when they share none; two requests without any token are identical
//! (1). A worked example whose similarity to some case is at least [`THRESHOLD`] is
//! refused by [`check`] (by `dss eval` unless `--allow-similar`, and by
//! [`crate::attach_examples`]).

use crate::error::{EvalError, Result};
use crate::suite::Case;
use std::collections::HashMap;
use std::path::Path;

/// The similarity from which a worked example counts as near an evaluated case.
pub const THRESHOLD: f64 = 0.8;

/// The normalized tokens of a request: runs of alphanumeric characters, lower-cased.
pub fn tokens(text: &str) -> Vec<String> {
    text.split(|c: char| !c.is_alphanumeric())
        .filter(|t| !t.is_empty())
        .map(str::to_lowercase)
        .collect()
}

/// `|A ∩ B| / max(|A|, |B|)` over the token multisets of `a` and `b` (see the module
/// docs); in `[0, 1]`.
pub fn similarity(a: &str, b: &str) -> f64 {
    let (ta, tb) = (tokens(a), tokens(b));
    let longest = ta.len().max(tb.len());
    if longest == 0 {
        return 1.0;
    }
    let mut counts: HashMap<&str, usize> = HashMap::new();
    for t in &ta {
        *counts.entry(t).or_default() += 1;
    }
    let mut shared = 0usize;
    for t in &tb {
        if let Some(n) = counts.get_mut(t.as_str()) {
            if *n > 0 {
                *n -= 1;
                shared += 1;
            }
        }
    }
    shared as f64 / longest as f64
}

/// A worked example near an evaluated case.
#[derive(Debug, Clone, PartialEq)]
pub struct SimilarPair {
    /// The example's id.
    pub example_id: String,
    /// The example's request.
    pub example_request: String,
    /// The case's id.
    pub case_id: String,
    /// The case's request.
    pub case_request: String,
    /// Their [`similarity`].
    pub similarity: f64,
}

impl std::fmt::Display for SimilarPair {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "worked example `{}` ({:?}) is {:.2} similar to the evaluated case `{}` ({:?})",
            self.example_id, self.example_request, self.similarity, self.case_id, self.case_request
        )
    }
}

/// Every (example, case) pair whose similarity is at least `threshold`, in example order,
/// each example's cases most similar first.
pub fn similar_pairs(cases: &[Case], examples: &[Case], threshold: f64) -> Vec<SimilarPair> {
    let mut out = Vec::new();
    for ex in examples {
        let mut near: Vec<SimilarPair> = cases
            .iter()
            .filter_map(|c| {
                let s = similarity(&ex.request, &c.request);
                (s >= threshold).then(|| SimilarPair {
                    example_id: ex.id.clone(),
                    example_request: ex.request.clone(),
                    case_id: c.id.clone(),
                    case_request: c.request.clone(),
                    similarity: s,
                })
            })
            .collect();
        near.sort_by(|a, b| b.similarity.total_cmp(&a.similarity));
        out.extend(near);
    }
    out
}

/// Refuses worked examples near an evaluated case (similarity ≥ [`THRESHOLD`]): the
/// error names `file` (where the examples are), the first such example and its nearest
/// case, with both requests.
pub fn check(cases: &[Case], examples: &[Case], file: &Path) -> Result<()> {
    match similar_pairs(cases, examples, THRESHOLD).into_iter().next() {
        None => Ok(()),
        Some(pair) => Err(EvalError::SimilarExample {
            path: file.to_path_buf(),
            pair: Box::new(pair),
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn case(id: &str, request: &str) -> Case {
        Case {
            tools: None,
            acceptable: None,
            id: id.into(),
            request: request.into(),
            gold: json!([]),
            extra: Default::default(),
        }
    }

    #[test]
    fn tokens_are_lowercased_alphanumeric_runs() {
        assert_eq!(
            tokens("I'd like 2 Lattes, please!"),
            ["i", "d", "like", "2", "lattes", "please"]
        );
        assert!(tokens(" ,.; ").is_empty());
    }

    #[test]
    fn similarity_is_multiset_overlap_over_the_longer() {
        // The same tokens in another order and case: identical.
        assert_eq!(similarity("Large latte, please", "please large LATTE"), 1.0);
        // 4 of 5 tokens shared: at the threshold.
        assert_eq!(
            similarity("i want a large kettle", "i want a small kettle"),
            0.8
        );
        // A repeated token counts once per occurrence in both.
        assert_eq!(similarity("two two two", "two"), 1.0 / 3.0);
        // The longer request is the denominator: a short request inside a long one is far.
        assert_eq!(
            similarity("a tea", "a tea and two scones with jam"),
            2.0 / 7.0
        );
        assert_eq!(similarity("abc", "xyz"), 0.0);
        assert_eq!(similarity("", "?!"), 1.0);
        assert_eq!(similarity("", "tea"), 0.0);
    }

    #[test]
    fn near_examples_are_refused_with_both_ids_and_requests() {
        let cases = [
            case("c1", "book a table for two at a steakhouse in denver"),
            case("c2", "what is the weather in oslo"),
        ];
        let far = [case("e1", "play some jazz from the seventies")];
        assert!(check(&cases, &far, Path::new("ex.jsonl")).is_ok());
        let near = [
            case("e1", "play some jazz from the seventies"),
            case("e2", "What is the weather in Bergen?"),
        ];
        let pairs = similar_pairs(&cases, &near, THRESHOLD);
        assert_eq!(pairs.len(), 1);
        assert_eq!(
            (pairs[0].example_id.as_str(), pairs[0].case_id.as_str()),
            ("e2", "c2")
        );
        assert!((pairs[0].similarity - 5.0 / 6.0).abs() < 1e-12);
        let e = check(&cases, &near, Path::new("ex.jsonl"))
            .unwrap_err()
            .to_string();
        for part in [
            "ex.jsonl",
            "`e2`",
            "`c2`",
            "\"What is the weather in Bergen?\"",
            "\"what is the weather in oslo\"",
            "0.83",
        ] {
            assert!(e.contains(part), "{part}: {e}");
        }
    }
}
