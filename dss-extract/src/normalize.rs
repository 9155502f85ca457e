//! Text normalisation shared by requests and patterns, with a map back to the original bytes.
//!
//! A text becomes a sequence of words: Unicode NFKD with combining marks dropped (so `é` is
//! `e`, `ﬁ` is `fi`, full-width digits are ASCII), lower case, `_`, `-`, punctuation and
//! white space as word breaks, camelCase and `HTTPServer` split into words, apostrophes
//! removed inside words (`don't` is `dont`). Letters and digits stay together (`j32`, `4pm`).

use unicode_normalization::char::{decompose_compatible, is_combining_mark};

/// One word of a normalised text.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Token {
    /// Byte range in the normalised text.
    pub start: usize,
    /// End of the byte range in the normalised text.
    pub end: usize,
    /// Byte range in the original text.
    pub orig_start: usize,
    /// End of the byte range in the original text.
    pub orig_end: usize,
}

/// A normalised text: `text` is `" w1 w2 … wn "` (one space before, between and after the
/// words), so a whole-word pattern `" a b "` found in it is on word boundaries.
#[derive(Debug, Clone)]
pub(crate) struct Normalized {
    pub text: String,
    pub tokens: Vec<Token>,
}

fn is_apostrophe(c: char) -> bool {
    matches!(c, '\'' | '\u{2019}' | '\u{2018}' | '\u{02BC}' | '`')
}

/// Words that end a phrase or clause: a modifier never reaches across them.
pub(crate) const BREAKS: &[&str] = &["and", "then", "also", "plus"];

impl Normalized {
    /// How many tokens end at or before byte `pos` of the original text: the index of
    /// the token a span starting at `pos` begins with.
    pub(crate) fn words_before(&self, pos: usize) -> usize {
        self.tokens.iter().take_while(|t| t.orig_end <= pos).count()
    }

    /// The clause of each token of `input` (this text's original): a new clause starts at
    /// punctuation (`,` `;` `.` `!` `?`) and at a [`BREAKS`] word.
    pub(crate) fn clauses(&self, input: &str) -> Vec<usize> {
        let mut c = 0;
        (0..self.tokens.len())
            .map(|i| {
                let punct = i > 0
                    && input
                        .get(self.tokens[i - 1].orig_end..self.tokens[i].orig_start)
                        .is_some_and(|t| t.contains([',', ';', '.', '!', '?']));
                let t = &self.tokens[i];
                if punct || BREAKS.contains(&&self.text[t.start..t.end]) {
                    c += 1;
                }
                c
            })
            .collect()
    }

    /// Normalises `input`.
    pub(crate) fn new(input: &str) -> Self {
        let chars: Vec<(usize, char)> = input.char_indices().collect();
        let mut text = String::with_capacity(input.len() + 2);
        text.push(' ');
        let mut tokens = Vec::new();
        // The token being built: (start in text, orig start, orig end).
        let mut cur: Option<(usize, usize, usize)> = None;
        let close = |cur: &mut Option<(usize, usize, usize)>,
                     text: &mut String,
                     tokens: &mut Vec<Token>| {
            if let Some((start, orig_start, orig_end)) = cur.take() {
                tokens.push(Token {
                    start,
                    end: text.len(),
                    orig_start,
                    orig_end,
                });
                text.push(' ');
            }
        };
        for (k, &(i, c)) in chars.iter().enumerate() {
            let end = i + c.len_utf8();
            // camelCase: a break before an upper-case letter that follows a lower-case one,
            // or that starts a lower-case run after upper-case letters (`HTTPServer`).
            if c.is_uppercase() && cur.is_some() && k > 0 {
                let prev = chars[k - 1].1;
                let next_lower = chars.get(k + 1).is_some_and(|&(_, n)| n.is_lowercase());
                if prev.is_lowercase() || (prev.is_uppercase() && next_lower) {
                    close(&mut cur, &mut text, &mut tokens);
                }
            }
            if is_apostrophe(c) {
                // Inside a word an apostrophe joins (`don't` -> `dont`); elsewhere it breaks.
                let next_word = chars.get(k + 1).is_some_and(|&(_, n)| n.is_alphanumeric());
                if cur.is_some() && next_word {
                    continue;
                }
                close(&mut cur, &mut text, &mut tokens);
                continue;
            }
            let mut any = false;
            decompose_compatible(c, |d| {
                if is_combining_mark(d) {
                    return;
                }
                for l in d.to_lowercase() {
                    if l.is_alphanumeric() {
                        match &mut cur {
                            Some((_, _, oe)) => *oe = end,
                            None => cur = Some((text.len(), i, end)),
                        }
                        text.push(l);
                        any = true;
                    } else {
                        close(&mut cur, &mut text, &mut tokens);
                    }
                }
            });
            if !any && !is_combining_mark(c) {
                close(&mut cur, &mut text, &mut tokens);
            }
        }
        close(&mut cur, &mut text, &mut tokens);
        if tokens.is_empty() {
            text.push(' ');
        }
        Normalized { text, tokens }
    }

    /// The normalised words `a..b` joined by single spaces.
    pub(crate) fn words(&self, a: usize, b: usize) -> &str {
        if a >= b {
            return "";
        }
        &self.text[self.tokens[a].start..self.tokens[b - 1].end]
    }

    /// The normalised words of the text, without the surrounding spaces.
    pub(crate) fn joined(&self) -> &str {
        if self.tokens.is_empty() {
            ""
        } else {
            self.words(0, self.tokens.len())
        }
    }
}

/// The normalised form of a pattern: its words joined by single spaces.
pub(crate) fn normalize_pattern(s: &str) -> String {
    Normalized::new(s).joined().to_owned()
}

/// A simple English singular of one normalised word: `cities` -> `city`, `boxes` -> `box`,
/// `fries` -> `fry`, `burgers` -> `burger`; words under 4 characters and words ending in
/// `ss`, `us`, `is` stay.
pub(crate) fn stem(word: &str) -> &str {
    let n = word.len();
    if n < 4 || !word.is_ascii() || !word.ends_with('s') {
        return word;
    }
    if word.ends_with("ss") || word.ends_with("us") || word.ends_with("is") {
        return word;
    }
    if word.ends_with("ies") && n > 4 {
        // Caller appends the `y`: handled by `stem_into`.
        return &word[..n - 3];
    }
    for suffix in ["sses", "shes", "ches", "xes", "zes", "oes"] {
        if word.ends_with(suffix) {
            return &word[..n - 2];
        }
    }
    &word[..n - 1]
}

/// Appends the stem of `word` to `out`.
pub(crate) fn stem_into(word: &str, out: &mut String) {
    let s = stem(word);
    out.push_str(s);
    if word.len() > 4 && word.ends_with("ies") && word.is_ascii() {
        out.push('y');
    }
}

/// The stemmed form of a normalised text: each word stemmed, `" w1 w2 "` padding, and each
/// word's byte range in it.
pub(crate) fn stemmed(n: &Normalized) -> (String, Vec<(usize, usize)>) {
    let mut out = String::with_capacity(n.text.len());
    out.push(' ');
    let mut ranges = Vec::with_capacity(n.tokens.len());
    for t in &n.tokens {
        let start = out.len();
        stem_into(&n.text[t.start..t.end], &mut out);
        ranges.push((start, out.len()));
        out.push(' ');
    }
    if n.tokens.is_empty() {
        out.push(' ');
    }
    (out, ranges)
}

/// The stemmed form of a normalised pattern (words joined by single spaces).
pub(crate) fn stem_pattern(norm: &str) -> String {
    let mut out = String::with_capacity(norm.len());
    for (i, w) in norm.split(' ').enumerate() {
        if i > 0 {
            out.push(' ');
        }
        stem_into(w, &mut out);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn words_and_offsets() {
        let s = "Sum of Sales per orderDate, in Zürich's ﬁne_store-HTTPServer!";
        let n = Normalized::new(s);
        assert_eq!(
            n.joined(),
            "sum of sales per order date in zurichs fine store http server"
        );
        let t = n.tokens[4];
        assert_eq!(&s[t.orig_start..t.orig_end], "order");
        let t = n.tokens[5];
        assert_eq!(&s[t.orig_start..t.orig_end], "Date");
        let t = n.tokens[7];
        assert_eq!(&s[t.orig_start..t.orig_end], "Zürich's");
        let t = n.tokens[8];
        assert_eq!(&s[t.orig_start..t.orig_end], "ﬁne");
        assert_eq!(n.text, format!(" {} ", n.joined()));
    }

    #[test]
    fn punctuation_and_digits() {
        assert_eq!(normalize_pattern("St. Louis"), "st louis");
        assert_eq!(normalize_pattern("4:19pm"), "4 19pm");
        assert_eq!(normalize_pattern("ＡＢＣ１２"), "abc12");
        assert_eq!(normalize_pattern("  "), "");
        assert_eq!(Normalized::new("").text, "  ");
        assert_eq!(normalize_pattern("'quoted' don't"), "quoted dont");
    }

    #[test]
    fn plural_stems() {
        let cases = [
            ("cities", "city"),
            ("fries", "fry"),
            ("boxes", "box"),
            ("sandwiches", "sandwich"),
            ("burgers", "burger"),
            ("glass", "glass"),
            ("bus", "bus"),
            ("analysis", "analysis"),
            ("tomatoes", "tomato"),
            ("gas", "gas"),
        ];
        for (w, s) in cases {
            let mut out = String::new();
            stem_into(w, &mut out);
            assert_eq!(out, s, "{w}");
        }
        assert_eq!(stem_pattern("french fries"), "french fry");
    }
}
