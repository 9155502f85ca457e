//! A character-trigram index over normalised surface forms: candidates for typo matching
//! (confirmed by edit distance) and the nearest values of a word.

use std::collections::HashMap;

/// Trigram key: three characters packed into 63 bits.
type Gram = u64;

/// The distinct trigrams of `s` padded with two spaces on each side (so a word of `L`
/// characters has `L + 2` trigrams, and every character is in three of them).
pub(crate) fn trigrams(s: &str, out: &mut Vec<Gram>) {
    out.clear();
    let chars: Vec<char> = [' ', ' ']
        .into_iter()
        .chain(s.chars())
        .chain([' ', ' '])
        .collect();
    for w in chars.windows(3) {
        out.push((u64::from(w[0]) << 42) | (u64::from(w[1]) << 21) | u64::from(w[2]));
    }
    out.sort_unstable();
    out.dedup();
}

/// The index: posting lists of surface ids per trigram.
#[derive(Debug, Default)]
pub(crate) struct TrigramIndex {
    postings: HashMap<Gram, Vec<u32>>,
    /// Distinct trigram count per indexed id (0 when not indexed).
    grams: Vec<u32>,
}

impl TrigramIndex {
    /// Indexes surface `id` with text `s`.
    pub fn add(&mut self, id: u32, s: &str, buf: &mut Vec<Gram>) {
        trigrams(s, buf);
        let i = id as usize;
        if self.grams.len() <= i {
            self.grams.resize(i + 1, 0);
        }
        self.grams[i] = buf.len() as u32;
        for g in buf.iter() {
            self.postings.entry(*g).or_default().push(id);
        }
    }

    /// Calls `f` on every indexed id that may be within `k` edits (optimal string alignment:
    /// substitution, insertion, deletion, transposition) of `q`, and others.
    ///
    /// An edit removes at most 4 of `q`'s trigrams (a transposition; the others remove 3), so a
    /// string within `k` edits shares at least one of any `4k + 1` distinct trigrams of `q`:
    /// only the `4k + 1` shortest posting lists are read.
    pub fn candidates(&self, q: &str, k: usize, buf: &mut Vec<Gram>, out: &mut Vec<u32>) {
        trigrams(q, buf);
        let mut lists: Vec<&[u32]> = buf
            .iter()
            .map(|g| self.postings.get(g).map_or(&[][..], Vec::as_slice))
            .collect();
        lists.sort_by_key(|l| l.len());
        let take = if lists.len() > 4 * k {
            4 * k + 1
        } else {
            lists.len()
        };
        out.clear();
        for l in &lists[..take] {
            out.extend_from_slice(l);
        }
        out.sort_unstable();
        out.dedup();
    }

    /// The `k` ids most similar to `q` (Dice coefficient of trigram sets), best first, with
    /// their similarity; ties keep the lower id. Posting lists longer than `max_list` (very
    /// common trigrams) are skipped.
    pub fn nearest(
        &self,
        q: &str,
        k: usize,
        max_list: usize,
        buf: &mut Vec<Gram>,
    ) -> Vec<(u32, f64)> {
        trigrams(q, buf);
        let mut counts: HashMap<u32, u32> = HashMap::new();
        for g in buf.iter() {
            if let Some(l) = self.postings.get(g) {
                if l.len() <= max_list {
                    for &id in l {
                        *counts.entry(id).or_insert(0) += 1;
                    }
                }
            }
        }
        let nq = buf.len() as f64;
        let mut scored: Vec<(u32, f64)> = counts
            .into_iter()
            .map(|(id, c)| {
                let np = f64::from(self.grams.get(id as usize).copied().unwrap_or(0));
                (id, 2.0 * f64::from(c) / (nq + np))
            })
            .collect();
        scored.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
        scored.truncate(k);
        scored
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn candidates_include_every_close_string() {
        let words = [
            "seattle",
            "settle",
            "boston",
            "los angeles",
            "tampa",
            "atlanta",
        ];
        let mut ix = TrigramIndex::default();
        let mut buf = Vec::new();
        for (i, w) in words.iter().enumerate() {
            ix.add(i as u32, w, &mut buf);
        }
        let mut out = Vec::new();
        for (q, k, want) in [
            ("seatle", 1, 0u32),
            ("saettle", 1, 0),
            ("los angles", 2, 3),
            ("tamap", 1, 4),
        ] {
            ix.candidates(q, k, &mut buf, &mut out);
            assert!(out.contains(&want), "{q}: {out:?}");
        }
        let near = ix.nearest("bostn", 2, usize::MAX, &mut buf);
        assert_eq!(near[0].0, 2);
        assert!(near.len() <= 2);
    }
}
