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
                Box::new(move |text| Ok(bpe.encode_ordinary(text).len()))
            }
            "cl100k" | "cl100k_base" => {
                let bpe = tiktoken_rs::cl100k_base().map_err(|e| anyhow!("cl100k: {e}"))?;
                Box::new(move |text| Ok(bpe.encode_ordinary(text).len()))
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

/// The model's own tokenizer: only its vocabulary is loaded (quick even for large models).
#[cfg(feature = "runtime")]
fn gguf(path: &str) -> Result<Box<CountFn>> {
    if path.is_empty() {
        bail!("--tokenizer gguf:PATH needs the path of a GGUF model file");
    }
    let model = dss_runtime::load_model(std::path::Path::new(path), true)
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
