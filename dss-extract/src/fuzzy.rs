//! A character-trigram index over normalised surface forms: candidates for typo matching
//! (confirmed by edit distance) and the nearest values of a word.

use rustc_hash::FxHashMap;

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

/// The index: posting lists of surface ids per (trigram, surface length in characters), so
/// that a typo query reads only the lists of the lengths it may reach.
#[derive(Debug, Default)]
pub(crate) struct TrigramIndex {
    postings: FxHashMap<(Gram, u32), Vec<u32>>,
    /// The longest indexed surface, in characters.
    max_len: u32,
    /// Distinct trigram count per indexed id (0 when not indexed).
    grams: Vec<u32>,
}

impl TrigramIndex {
    /// Indexes surface `id` with text `s`.
    pub(crate) fn add(&mut self, id: u32, s: &str, buf: &mut Vec<Gram>) {
        trigrams(s, buf);
        let i = id as usize;
        if self.grams.len() <= i {
            self.grams.resize(i + 1, 0);
        }
        self.grams[i] = buf.len() as u32;
        let len = s.chars().count() as u32;
        self.max_len = self.max_len.max(len);
        for g in buf.iter() {
            self.postings.entry((*g, len)).or_default().push(id);
        }
    }

    /// The indexed ids that may be within `k` edits (optimal string alignment: substitution,
    /// insertion, deletion, transposition) of `q`, and a few others, in `out`.
    ///
    /// An edit removes at most 4 of `q`'s distinct trigrams (a transposition; the others
    /// remove 3 or 2), so a string within `k` edits shares at least `T - 4k` of `q`'s `T`
    /// trigrams: the ids of the `4k + 1` shortest posting lists are collected and those that
    /// reach the count with the other lists (binary search) are kept. When `T - 4k` is under
    /// `min_shared` (a short query), nothing is returned: the filter would pass every string.
    pub(crate) fn candidates(
        &self,
        q: &str,
        k: usize,
        min_shared: usize,
        buf: &mut Vec<Gram>,
        out: &mut Vec<u32>,
    ) {
        trigrams(q, buf);
        out.clear();
        let need = buf.len().saturating_sub(4 * k);
        if need == 0 || need < min_shared {
            return;
        }
        let qlen = q.chars().count();
        let mut ids = Vec::new();
        for len in qlen.saturating_sub(k)..=qlen + k {
            self.candidates_of_length(buf, len as u32, need, &mut ids, out);
        }
    }

    /// [`Self::candidates`] among the surfaces of `len` characters, appended to `out`.
    fn candidates_of_length(
        &self,
        buf: &[Gram],
        len: u32,
        need: usize,
        ids: &mut Vec<u32>,
        out: &mut Vec<u32>,
    ) {
        let mut lists: Vec<&[u32]> = buf
            .iter()
            .map(|g| self.postings.get(&(*g, len)).map_or(&[][..], Vec::as_slice))
            .collect();
        lists.sort_by_key(|l| l.len());
        let scan = lists.len() - need + 1;
        // An id is in at least `need` lists: fewer non-empty lists, no candidate.
        if lists.iter().filter(|l| !l.is_empty()).count() < need {
            return;
        }
        ids.clear();
        for l in &lists[..scan] {
            ids.extend_from_slice(l);
        }
        ids.sort_unstable();
        let rest = &lists[scan..];
        let mut i = 0;
        while i < ids.len() {
            let id = ids[i];
            let mut j = i;
            while j < ids.len() && ids[j] == id {
                j += 1;
            }
            let mut count = j - i;
            for (r, l) in rest.iter().enumerate() {
                if count >= need || count + (rest.len() - r) < need {
                    break;
                }
                if l.binary_search(&id).is_ok() {
                    count += 1;
                }
            }
            if count >= need {
                out.push(id);
            }
            i = j;
        }
    }

    /// The `k` ids most similar to `q` (Dice coefficient of trigram sets), best first, with
    /// their similarity; ties keep the lower id. Posting lists longer than `max_list` (very
    /// common trigrams) are skipped.
    pub(crate) fn nearest(
        &self,
        q: &str,
        k: usize,
        max_list: usize,
        buf: &mut Vec<Gram>,
    ) -> Vec<(u32, f64)> {
        trigrams(q, buf);
        let mut counts = vec![0u16; self.grams.len()];
        let mut touched: Vec<u32> = Vec::new();
        for (g, len) in buf
            .iter()
            .flat_map(|g| (1..=self.max_len).map(move |len| (g, len)))
        {
            if let Some(l) = self.postings.get(&(*g, len)) {
                if l.len() <= max_list {
                    for &id in l {
                        let c = &mut counts[id as usize];
                        if *c == 0 {
                            touched.push(id);
                        }
                        *c = c.saturating_add(1);
                    }
                }
            }
        }
        let nq = buf.len() as f64;
        let mut scored: Vec<(u32, f64)> = touched
            .into_iter()
            .map(|id| {
                let np = f64::from(self.grams[id as usize]);
                (id, 2.0 * f64::from(counts[id as usize]) / (nq + np))
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
            ix.candidates(q, k, 1, &mut buf, &mut out);
            assert!(out.contains(&want), "{q}: {out:?}");
        }
        let near = ix.nearest("bostn", 2, usize::MAX, &mut buf);
        assert_eq!(near[0].0, 2);
        assert!(near.len() <= 2);
    }
}
