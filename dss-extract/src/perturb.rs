//! Seeded perturbations of requests, for measuring extraction and evaluation under the
//! typos real users make (`dss eval --perturb typo:SEED`).

/// A deterministic xorshift generator (the same seed gives the same typos everywhere).
#[derive(Debug, Clone)]
pub struct Rng(u64);

impl Rng {
    /// A generator from `seed` (0 is replaced: xorshift needs a nonzero state).
    pub fn new(seed: u64) -> Rng {
        Rng(if seed == 0 {
            0x2545_F491_4F6C_DD1D
        } else {
            seed
        })
    }

    /// A number below `n` (`n > 0`).
    pub fn below(&mut self, n: usize) -> usize {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        (self.0 % n.max(1) as u64) as usize
    }

    fn letter(&mut self, not: char) -> char {
        loop {
            let c = char::from(b'a' + self.below(26) as u8);
            if c != not {
                return c;
            }
        }
    }
}

/// `input` with one typo (substitution, deletion, insertion or transposition, never on the
/// first letter) in the longest word of every whole-word occurrence of each of `values`
/// that has 5+ characters. Non-ASCII requests are left as they are.
pub fn typos(input: &str, values: &[&str], rng: &mut Rng) -> String {
    if !input.is_ascii() {
        return input.to_owned();
    }
    let lower = input.to_ascii_lowercase();
    let is_word = |b: u8| b.is_ascii_alphanumeric() || b == b'_';
    let bytes = lower.as_bytes();
    let mut spans: Vec<(usize, usize)> = Vec::new();
    for v in values {
        let v = v.to_lowercase();
        if v.chars().count() < 5 || v.is_empty() {
            continue;
        }
        let mut from = 0;
        while let Some(i) = lower[from..].find(&v) {
            let (s, e) = (from + i, from + i + v.len());
            if (s == 0 || !is_word(bytes[s - 1])) && (e == bytes.len() || !is_word(bytes[e])) {
                spans.push((s, e));
            }
            from = s + 1;
        }
    }
    spans.sort_by_key(|&(s, e)| (s, std::cmp::Reverse(e)));
    let mut kept: Vec<(usize, usize)> = Vec::new();
    for sp in spans {
        if kept.last().is_none_or(|l| sp.0 >= l.1) {
            kept.push(sp);
        }
    }
    let mut out: Vec<char> = input.chars().collect();
    for &(s, e) in kept.iter().rev() {
        // The longest word of the mention (ASCII: byte offsets are char offsets).
        let (mut best, mut ws) = ((s, s), s);
        for (i, &c) in bytes[s..e]
            .iter()
            .chain([&b' '])
            .enumerate()
            .map(|(k, c)| (s + k, c))
        {
            if !c.is_ascii_alphabetic() {
                if i - ws > best.1 - best.0 {
                    best = (ws, i);
                }
                ws = i + 1;
            }
        }
        let (a, b) = best;
        if b - a < 3 {
            continue;
        }
        let p = a + 1 + rng.below(b - a - 1); // a letter after the first
        match rng.below(4) {
            0 => out[p] = rng.letter(out[p]),
            1 => {
                out.remove(p);
            }
            2 => {
                let c = rng.letter(' ');
                out.insert(p, c);
            }
            _ => {
                if p + 1 < b && out[p] != out[p + 1] {
                    out.swap(p, p + 1);
                } else {
                    out[p] = rng.letter(out[p]);
                }
            }
        }
    }
    out.into_iter().collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_typo_per_long_mention_seeded() {
        let req = "play the beatles and add coldplay to chill";
        let values = ["the beatles", "coldplay", "chill"];
        let a = typos(req, &values, &mut Rng::new(7));
        let b = typos(req, &values, &mut Rng::new(7));
        assert_eq!(a, b, "same seed, same typos");
        assert_ne!(a, req);
        let words = |s: &str| s.split(' ').map(str::to_string).collect::<Vec<_>>();
        let changed: Vec<(String, String)> = words(req)
            .into_iter()
            .zip(words(&a))
            .filter(|(x, y)| x != y)
            .collect();
        // `beatles` and `coldplay` (the longest words of 5+ character values); `chill` is a
        // 5-letter value too; `the`, `and`, `add` never.
        assert!(!changed.is_empty() && changed.len() <= 3, "{changed:?}");
        for (x, y) in &changed {
            assert_eq!(x.chars().next(), y.chars().next(), "first letter kept");
            assert!(
                ["beatles", "coldplay", "chill"].contains(&x.as_str()),
                "{x}"
            );
        }
        assert_eq!(typos("café", &values, &mut Rng::new(1)), "café");
    }
}
