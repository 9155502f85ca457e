//! The tokenizers `dss tokens` counts with: `o200k` and `cl100k` (tiktoken-rs, embedded,
//! offline), `gguf:PATH` (a model's own tokenizer through llama.cpp; feature `runtime`) and
//! `hf:PATH` (a Hugging Face `tokenizer.json`; feature `hf-tokenizers`).

use anyhow::{anyhow, bail, Result};

type CountFn = dyn Fn(&str) -> Result<usize> + Send + Sync;

/// A named token counter, shared by the worker threads.
pub(super) struct Tokenizer {
    /// As given on the command line (`o200k`, `gguf:model.gguf`, …).
    pub name: String,
    count: Box<CountFn>,
}

impl Tokenizer {
    /// Parse one `--tokenizer` value and load the tokenizer.
    pub(super) fn load(spec: &str) -> Result<Self> {
        let count: Box<CountFn> = match spec {
            "o200k" | "o200k_base" => {
                let bpe = tiktoken_rs::o200k_base().map_err(|e| anyhow!("o200k: {e}"))?;
                Box::new(move |text| {
                    check_pieces(text)?;
                    Ok(bpe.encode_ordinary(text).len())
                })
            }
            "cl100k" | "cl100k_base" => {
                let bpe = tiktoken_rs::cl100k_base().map_err(|e| anyhow!("cl100k: {e}"))?;
                Box::new(move |text| {
                    check_pieces(text)?;
                    Ok(bpe.encode_ordinary(text).len())
                })
            }
            _ => {
                if let Some(path) = spec.strip_prefix("gguf:") {
                    gguf(path)?
                } else if let Some(path) = spec.strip_prefix("hf:") {
                    hf(path)?
                } else {
                    bail!(
                        "unknown tokenizer `{spec}`: expected o200k, cl100k, gguf:MODEL.gguf \
                         or hf:tokenizer.json"
                    )
                }
            }
        };
        Ok(Self {
            name: spec.to_string(),
            count,
        })
    }

    /// How many tokens `text` is (no BOS/EOS added; special-token syntax counts as text).
    pub(super) fn count(&self, text: &str) -> Result<usize> {
        (self.count)(text)
    }
}

/// The longest piece tiktoken may be given to merge, in bytes. tiktoken splits a text into
/// pieces (words, runs of punctuation or of whitespace) and merges each piece's bytes
/// with a heap: time grows as n·log n and memory as ~50 bytes per byte of the piece, so one
/// 10 MB word takes half a minute and a 100 MB one gigabytes. Texts that could hold a
/// longer piece are an error for their document; the run goes on.
pub(super) const MAX_PIECE: usize = 1 << 20;

/// An error if `text` may hold a tiktoken piece longer than [`MAX_PIECE`].
fn check_pieces(text: &str) -> Result<()> {
    let (len, at) = longest_piece_bound(text);
    if len > MAX_PIECE {
        bail!(
            "a run of {len} bytes without a word break (from byte {at}): tiktoken's time and \
             memory grow with a run's length, so runs over {} MiB are not counted",
            MAX_PIECE >> 20
        );
    }
    Ok(())
}

/// An upper bound on the length in bytes of the longest piece the o200k and cl100k
/// pre-tokenizers cut `text` into, and where it starts. Their pieces never hold a digit
/// beside anything but digits (numbers are pieces of 1–3 digits); any other piece is at
/// most one leading character, a run of letters, marks or punctuation, and a run of
/// whitespace (o200k: newlines and `/`) after it. So the bound is the longest such
/// run pair, plus 4 bytes for the leading character.
fn longest_piece_bound(text: &str) -> (usize, usize) {
    #[derive(PartialEq, Clone, Copy)]
    enum Class {
        Digit,
        Space,
        Other,
    }
    let class = |c: char| {
        if c.is_numeric() {
            Class::Digit
        } else if c.is_whitespace() || c == '/' {
            Class::Space
        } else {
            Class::Other
        }
    };
    // The current pair: where it starts, the length of its run of `Other`, then of `Space`.
    let (mut start, mut other, mut space) = (0usize, 0usize, 0usize);
    let mut best = (0usize, 0usize);
    for (i, c) in text.char_indices() {
        let n = c.len_utf8();
        match class(c) {
            Class::Digit => (start, other, space) = (i + n, 0, 0),
            Class::Space => space += n,
            Class::Other if space > 0 => (start, other, space) = (i, n, 0),
            Class::Other => other += n,
        }
        if other + space > best.0 {
            best = (other + space, start);
        }
    }
    (if best.0 == 0 { 0 } else { best.0 + 4 }, best.1)
}

/// The model's own tokenizer: only its vocabulary is loaded (quick even for large models).
#[cfg(feature = "runtime")]
fn gguf(path: &str) -> Result<Box<CountFn>> {
    if path.is_empty() {
        bail!("--tokenizer gguf:PATH needs the path of a GGUF model file");
    }
    let model = dss_runtime::backend::load_model(std::path::Path::new(path), true)
        .map_err(|e| anyhow!("gguf:{path}: {e}"))?;
    // No BOS (add_special = false), and `<|…|>` in a document stays plain text
    // (parse_special = false): the same choices as dss-runtime's grammar checks.
    Ok(Box::new(move |text| {
        Ok(model.vocab().tokenize(text.as_bytes(), false, false).len())
    }))
}

#[cfg(not(feature = "runtime"))]
fn gguf(path: &str) -> Result<Box<CountFn>> {
    bail!(
        "--tokenizer gguf:{path} needs llama.cpp, which this dss was built without: \
         rebuild with the `runtime` feature (the default; e.g. `cargo build --release`)"
    )
}

#[cfg(feature = "hf-tokenizers")]
fn hf(path: &str) -> Result<Box<CountFn>> {
    if path.is_empty() {
        bail!("--tokenizer hf:PATH needs the path of a tokenizer.json file");
    }
    let tokenizer =
        tokenizers::Tokenizer::from_file(path).map_err(|e| anyhow!("hf:{path}: {e}"))?;
    let name = path.to_string();
    Ok(Box::new(move |text| {
        tokenizer
            .encode(text, false)
            .map(|encoding| encoding.len())
            .map_err(|e| anyhow!("hf:{name}: cannot tokenize: {e}"))
    }))
}

#[cfg(not(feature = "hf-tokenizers"))]
fn hf(path: &str) -> Result<Box<CountFn>> {
    bail!(
        "--tokenizer hf:{path} needs the Hugging Face tokenizers library, which this dss was \
         built without: rebuild with `--features hf-tokenizers`"
    )
}

/// Load every `--tokenizer` (default: o200k); a name given twice is an error.
pub(super) fn load_all(specs: &[String]) -> Result<Vec<Tokenizer>> {
    let mut out: Vec<Tokenizer> = Vec::new();
    for spec in specs {
        if out.iter().any(|t| t.name == *spec) {
            bail!("--tokenizer {spec} is given twice");
        }
        out.push(Tokenizer::load(spec)?);
    }
    if out.is_empty() {
        out.push(Tokenizer::load("o200k")?);
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tiktoken_counts_and_unknown_names() {
        let t = Tokenizer::load("o200k").expect("o200k");
        assert_eq!(t.count("").expect("count"), 0);
        assert!(t.count("hello world").expect("count") >= 1);
        // Special-token syntax is text, not one special token.
        assert!(t.count("<|endoftext|>").expect("count") > 1);
        let e = Tokenizer::load("gpt9").err().expect("unknown");
        assert!(e.to_string().contains("unknown tokenizer"), "{e}");
        assert!(load_all(&["o200k".into(), "o200k".into()]).is_err());
    }

    #[test]
    fn long_pieces_are_an_error_not_a_stall() {
        assert_eq!(longest_piece_bound(""), (0, 0));
        assert_eq!(longest_piece_bound("ab 12 cdef"), (4 + 4, 6));
        assert_eq!(longest_piece_bound("ab\n\n/x").0, 5 + 4);
        let t = Tokenizer::load("o200k").expect("o200k");
        let run = "a".repeat(MAX_PIECE + 1);
        let e = t.count(&format!("\"{run}\"")).expect_err("too long");
        assert!(e.to_string().contains("without a word break"), "{e}");
        // Long texts of ordinary words, digits or short runs are counted.
        let words = "word ".repeat(MAX_PIECE / 4);
        assert!(t.count(&words).expect("count") > 1000);
        let digits = "1234567".repeat(MAX_PIECE / 4);
        assert!(longest_piece_bound(&digits).0 < 10);
    }

    /// A word-level tokenizer.json: one token per whitespace-separated word.
    #[cfg(feature = "hf-tokenizers")]
    #[test]
    fn hf_tokenizer_json() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("tokenizer.json");
        let json = r#"{"version": "1.0", "truncation": null, "padding": null,
            "added_tokens": [], "normalizer": null, "pre_tokenizer": {"type": "Whitespace"},
            "post_processor": null, "decoder": null,
            "model": {"type": "WordLevel", "vocab": {"[UNK]": 0, "a": 1},
                      "unk_token": "[UNK]"}}"#;
        std::fs::write(&path, json).expect("write");
        let t = Tokenizer::load(&format!("hf:{}", path.display())).expect("load");
        assert_eq!(t.count("a b c").expect("count"), 3);
        assert!(Tokenizer::load("hf:/nonexistent/tokenizer.json").is_err());
    }
}
