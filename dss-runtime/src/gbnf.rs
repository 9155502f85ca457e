//! Checking GBNF grammars with llama.cpp's own grammar engine.
//!
//! Why not a separate GBNF parser: the grammar that constrains generation is whatever
//! llama.cpp makes of it, so the only trustworthy check is llama.cpp itself. A model is
//! still needed, because llama.cpp's grammar works on the model's tokens; only its
//! vocabulary is loaded (`vocab_only`), which is quick even for large models.
//!
//! Matching text works the way generation does: the text is tokenised by the model, and
//! each token must survive the grammar sampler's `apply` before it is `accept`ed. The
//! order matters beyond correctness: llama.cpp aborts the process (`GGML_ABORT`) when an
//! end-of-generation token is accepted while the grammar is unfinished, and throws on
//! any other disallowed token, so nothing is accepted that `apply` did not allow.

use std::path::{Path, PathBuf};

use llama_cpp_2::model::LlamaModel;
use llama_cpp_2::sampling::LlamaSampler;
use llama_cpp_2::token::data::LlamaTokenData;
use llama_cpp_2::token::data_array::LlamaTokenDataArray;
use llama_cpp_2::token::LlamaToken;
use llama_cpp_2::GrammarError;

use crate::backend::{self, BackendError};

/// Errors from checking a grammar or matching text against it.
#[derive(Debug, Clone, thiserror::Error)]
#[non_exhaustive]
pub enum GbnfError {
    /// The model could not be loaded.
    #[error(transparent)]
    Backend(#[from] BackendError),
    /// The grammar is empty: llama.cpp would silently constrain nothing.
    #[error("the grammar is empty")]
    Empty,
    /// A NUL byte cannot pass through llama.cpp's C API.
    #[error("the grammar or root name contains a NUL byte")]
    NulByte,
    /// The grammar does not define the root rule.
    #[error("the grammar has no rule `{root}`")]
    MissingRoot {
        /// The root rule's name.
        root: String,
    },
    /// llama.cpp's parser or validator rejected the grammar; `reason` is its message.
    #[error("llama.cpp rejected the grammar: {reason}")]
    Rejected {
        /// llama.cpp's message.
        reason: String,
    },
    /// The model's tokenizer does not reproduce the text byte for byte (for example it
    /// adds a leading space), so the grammar would see other text than was given.
    #[error(
        "the model's tokenizer does not round-trip the text (it would be checked as {seen:?})"
    )]
    Tokenization {
        /// The text as the tokenizer gives it back.
        seen: String,
    },
    /// The model has no end-of-generation token, so completeness cannot be asked.
    #[error("model {} has no end-of-generation token", .0.display())]
    NoEogToken(PathBuf),
    /// llama.cpp threw while accepting a token that its own `apply` had allowed.
    #[error("llama.cpp's grammar engine failed on token {token} at byte {offset}")]
    Engine {
        /// The token being accepted.
        token: i32,
        /// Its byte offset in the text.
        offset: usize,
    },
}

/// How a text relates to a grammar.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    /// A complete sentence: the grammar allows ending here.
    Sentence,
    /// Every token was allowed but the grammar cannot end here yet.
    Prefix,
    /// The token starting at this byte offset is not allowed.
    RejectedAt(usize),
}

/// A model's vocabulary, for checking grammars and texts with llama.cpp.
#[derive(Debug)]
pub struct GbnfChecker {
    model: LlamaModel,
    path: PathBuf,
    /// One end-of-generation token: llama.cpp allows all of them or none.
    eog: LlamaToken,
}

impl GbnfChecker {
    /// Loads the vocabulary of the GGUF model at `model_path`.
    pub fn new(model_path: impl AsRef<Path>) -> Result<Self, GbnfError> {
        let path = model_path.as_ref().to_owned();
        let model = backend::load_model(&path, true)?;
        let vocab = model.vocab();
        let eos = vocab.eos();
        let eog = if eos.0 >= 0 && vocab.is_eog(eos) {
            Some(eos)
        } else {
            vocab.tokens().find(|&t| vocab.is_eog(t))
        };
        let eog = eog.ok_or_else(|| GbnfError::NoEogToken(path.clone()))?;
        Ok(Self { model, path, eog })
    }

    /// The model file this checker was loaded from.
    pub fn model_path(&self) -> &Path {
        &self.path
    }

    /// The loaded (vocabulary-only) model.
    pub fn model(&self) -> &LlamaModel {
        &self.model
    }

    /// Whether llama.cpp parses `gbnf` and accepts it with `root` as the start rule.
    pub fn check(&self, gbnf: &str, root: &str) -> Result<(), GbnfError> {
        self.sampler(gbnf, root).map(drop)
    }

    /// Whether `text` is a complete sentence of `gbnf` (start rule `root`).
    pub fn accepts(&self, gbnf: &str, text: &str) -> Result<bool, GbnfError> {
        Ok(self.verdict(gbnf, "root", text)? == Verdict::Sentence)
    }

    /// How `text` relates to `gbnf` with start rule `root`: sentence, proper prefix, or
    /// rejected at a byte offset (the start of the first disallowed token).
    pub fn verdict(&self, gbnf: &str, root: &str, text: &str) -> Result<Verdict, GbnfError> {
        let mut sampler = self.sampler(gbnf, root)?;
        let vocab = self.model.vocab();
        // No BOS, and special-token syntax in the text stays plain text.
        let tokens = vocab.tokenize(text.as_bytes(), false, false);
        let pieces: Vec<Vec<u8>> = tokens
            .iter()
            .map(|&t| vocab.token_to_piece(t, false, None))
            .collect();
        let seen = pieces.concat();
        if seen != text.as_bytes() {
            return Err(GbnfError::Tokenization {
                seen: String::from_utf8_lossy(&seen).into_owned(),
            });
        }
        let mut offset = 0;
        for (&token, piece) in tokens.iter().zip(&pieces) {
            if !allows(&mut sampler, token) {
                return Ok(Verdict::RejectedAt(offset));
            }
            // `try_accept`, not `accept`: with llama-cpp-2's default `common` feature,
            // `accept` swallows llama.cpp's exception.
            sampler.try_accept(token).map_err(|_| GbnfError::Engine {
                token: token.0,
                offset,
            })?;
            offset += piece.len();
        }
        Ok(if allows(&mut sampler, self.eog) {
            Verdict::Sentence
        } else {
            Verdict::Prefix
        })
    }

    /// A fresh grammar sampler; its construction is llama.cpp's parse and validation.
    pub fn sampler(&self, gbnf: &str, root: &str) -> Result<LlamaSampler, GbnfError> {
        Self::sampler_with(&self.model, gbnf, root)
    }

    /// [`check`](Self::check) with any loaded model (e.g. the one generating).
    pub fn check_with(model: &LlamaModel, gbnf: &str, root: &str) -> Result<(), GbnfError> {
        Self::sampler_with(model, gbnf, root).map(drop)
    }

    /// [`sampler`](Self::sampler) with any loaded model (e.g. the one generating).
    pub fn sampler_with(
        model: &LlamaModel,
        gbnf: &str,
        root: &str,
    ) -> Result<LlamaSampler, GbnfError> {
        if gbnf.trim().is_empty() {
            return Err(GbnfError::Empty);
        }
        if gbnf.contains('\0') || root.contains('\0') {
            return Err(GbnfError::NulByte);
        }
        let ((result, logs), stderr) = backend::capture_stderr(|| {
            backend::capture_llama_logs(|| LlamaSampler::grammar(model, gbnf, root))
        });
        match result {
            Ok(sampler) => Ok(sampler),
            // llama-cpp-2 only checks that `root` occurs somewhere in the text.
            Err(GrammarError::RootNotFound) => Err(GbnfError::MissingRoot {
                root: root.to_owned(),
            }),
            Err(GrammarError::GrammarNullBytes) => Err(GbnfError::NulByte),
            Err(e) => {
                let reason = parse_error_reason(&stderr)
                    .or_else(|| backend::error_reason(&logs))
                    .unwrap_or_else(|| e.to_string());
                if reason.contains(&format!("does not contain a '{root}' symbol")) {
                    return Err(GbnfError::MissingRoot {
                        root: root.to_owned(),
                    });
                }
                Err(GbnfError::Rejected { reason })
            }
        }
    }
}

/// Whether the grammar, in its current state, allows `token` next.
fn allows(sampler: &mut LlamaSampler, token: LlamaToken) -> bool {
    let mut candidates =
        LlamaTokenDataArray::new(vec![LlamaTokenData::new(token, 0.0, 0.0)], false);
    sampler.apply(&mut candidates);
    candidates
        .data
        .first()
        .is_some_and(|d| d.logit() != f32::NEG_INFINITY)
}

/// The message of llama.cpp's `parse: error parsing grammar: MSG\n\n<grammar>`, which it
/// prints to stderr; the echoed grammar is dropped.
fn parse_error_reason(stderr: &str) -> Option<String> {
    const MARK: &str = "error parsing grammar: ";
    let start = stderr.find(MARK)? + MARK.len();
    let rest = &stderr[start..];
    let end = rest.find("\n\n").unwrap_or(rest.len());
    Some(rest[..end].trim().to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::OnceLock;

    const FIELDS: &str = r#"root ::= "fields:\n" item+
item ::= "\"" [a-zA-Z ]+ "\" " ("sum" | "avg") "\n"
"#;

    /// The SmolLM2 checker shared by the model tests, or `None` when
    /// `DSS_SKIP_MODEL_TESTS` is set (the skip is recorded by `dss_data::skip_model_test`;
    /// a failure under `CI=true`). A missing model fails: CI must have fetched it.
    fn checker(test: &str) -> Option<&'static GbnfChecker> {
        if dss_data::skip_model_test(test, "smollm2-135m") {
            return None;
        }
        static CHECKER: OnceLock<GbnfChecker> = OnceLock::new();
        Some(CHECKER.get_or_init(|| {
            let path = crate::models::resolve("smollm2-135m").unwrap_or_else(|e| {
                panic!(
                    "{e}\n(or: cargo run -p dss-runtime --example fetch_model -- smollm2-135m; \
                     set DSS_SKIP_MODEL_TESTS=1 to skip model tests)"
                )
            });
            GbnfChecker::new(path).unwrap_or_else(|e| panic!("loading smollm2-135m: {e}"))
        }))
    }

    #[test]
    fn llama_accepts_well_formed_grammar() {
        let Some(c) = checker("llama_accepts_well_formed_grammar") else {
            return;
        };
        c.check(FIELDS, "root").expect("valid grammar");
        c.check("start ::= \"a\" | \"b\"", "start")
            .expect("other root name");
    }

    #[test]
    fn llama_rejects_malformed_grammars() {
        let Some(c) = checker("llama_rejects_malformed_grammars") else {
            return;
        };
        let syntax = c.check("root ::= \"a\" (", "root").expect_err("syntax");
        assert!(matches!(syntax, GbnfError::Rejected { .. }), "{syntax}");
        assert!(syntax.to_string().contains("expecting"), "{syntax}");

        let undefined = c
            .check("root ::= item", "root")
            .expect_err("undefined rule");
        assert!(
            matches!(undefined, GbnfError::Rejected { .. }),
            "{undefined}"
        );
        assert!(undefined.to_string().contains("item"), "{undefined}");

        let left = c
            .check("root ::= root \"a\" | \"a\"", "root")
            .expect_err("left rec");
        assert!(left.to_string().contains("left recursion"), "{left}");

        let no_root = c.check("start ::= \"a\"", "root").expect_err("no root");
        assert!(
            matches!(no_root, GbnfError::MissingRoot { .. }),
            "{no_root}"
        );
        let no_root = c.check("rooted ::= \"a\"", "root").expect_err("no root");
        assert!(
            matches!(no_root, GbnfError::MissingRoot { .. }),
            "{no_root}"
        );

        assert!(matches!(c.check("  \n", "root"), Err(GbnfError::Empty)));
        assert!(matches!(
            c.check("root ::= \"\0\"", "root"),
            Err(GbnfError::NulByte)
        ));
    }

    #[test]
    fn llama_matches_sentences_only() {
        let Some(c) = checker("llama_matches_sentences_only") else {
            return;
        };
        let sentence = "fields:\n\"total price\" sum\n\"Age\" avg\n";
        assert!(c.accepts(FIELDS, sentence).expect("sentence"));
        assert_eq!(
            c.verdict(FIELDS, "root", sentence).expect("v"),
            Verdict::Sentence
        );

        let prefix = "fields:\n\"total price\" su";
        assert!(!c.accepts(FIELDS, prefix).expect("prefix"));
        assert_eq!(
            c.verdict(FIELDS, "root", prefix).expect("v"),
            Verdict::Prefix
        );
        // No item at all: `item+` needs one.
        assert_eq!(
            c.verdict(FIELDS, "root", "fields:\n").expect("v"),
            Verdict::Prefix
        );
        assert_eq!(c.verdict(FIELDS, "root", "").expect("v"), Verdict::Prefix);

        let wrong = "fields:\n\"total\" max\n";
        assert!(!c.accepts(FIELDS, wrong).expect("non-sentence"));
        match c.verdict(FIELDS, "root", wrong).expect("v") {
            // The first token that can't continue starts at or before "max".
            Verdict::RejectedAt(at) => assert!(at <= wrong.find("max").unwrap_or(0), "{at}"),
            v => panic!("expected a rejection, got {v:?}"),
        }
        // Trailing junk after a complete sentence.
        assert!(!c.accepts(FIELDS, "fields:\n\"a\" sum\nX").expect("junk"));
        // Special-token syntax is plain text, not an end-of-generation token.
        assert!(!c
            .accepts(FIELDS, "fields:\n\"a\" sum\n<|im_end|>")
            .expect("special"));
    }

    #[test]
    fn llama_handles_unicode_split_across_tokens() {
        let Some(c) = checker("llama_handles_unicode_split_across_tokens") else {
            return;
        };
        let g = r#"root ::= [^\x00-\x7F]+ "!""#;
        assert!(c.accepts(g, "日本語ü€!").expect("unicode"));
        assert!(!c.accepts(g, "日本語a!").expect("ascii inside"));
    }

    #[test]
    fn parse_error_reason_drops_echoed_grammar() {
        let out = "parse: error parsing grammar: expecting ::= at x\n\nroot ::= x\n";
        assert_eq!(
            parse_error_reason(out).as_deref(),
            Some("expecting ::= at x")
        );
        assert_eq!(parse_error_reason("other noise"), None);
    }
}
