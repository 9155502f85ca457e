//! The prompt: the model's own chat template around an instruction, the readable grammar,
//! a few worked examples, and the request, which comes last.
//!
//! Everything before the request is the same for every request of a spec: that **shared
//! prefix** is evaluated once and its KV cache reused ([`crate::generate`]). The template is
//! rendered once with a placeholder where the request goes and split there, so a request
//! never passes through the template, and it is tokenized with special-token parsing off:
//! a request containing `<|im_start|>` stays plain text and cannot leave its slot.
//!
//! No thinking tag is inserted, forced or masked: the legacy llama.cpp template engine
//! renders the plain chat format (see the tool-calling findings: a template that injects
//! `<think>` and a grammar that masks it distort what the model says).

use llama_cpp_2::model::{LlamaChatMessage, LlamaChatTemplate, LlamaModel};
use llama_cpp_2::token::LlamaToken;

pub(crate) use dss_compiler::prompt::{system_message, INSTRUCTION, JSON_INSTRUCTION};

/// A worked example for the prompt: a request and the answer as the model should write it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Shot {
    /// The user's request.
    pub request: String,
    /// The answer as the model should write it.
    pub answer: String,
}

/// The prompt split around the request slot.
#[derive(Debug, Clone)]
pub struct PromptTemplate {
    /// Everything before the request (system message, examples, the user header).
    pub prefix: String,
    /// Everything after it (end of the user turn, the assistant header).
    pub suffix: String,
}

const SLOT: &str = "\u{2063}DSS-REQUEST-SLOT\u{2063}";

/// Errors from rendering the chat template.
#[derive(Debug, Clone, thiserror::Error)]
#[non_exhaustive]
pub enum PromptError {
    /// The model's chat template failed to render (its message).
    #[error("the chat template failed: {0}")]
    Template(String),
}

impl PromptTemplate {
    /// Renders `model`'s chat template (ChatML if the model has none) around `system`,
    /// the example turns and the request slot.
    pub fn render(model: &LlamaModel, system: &str, shots: &[Shot]) -> Result<Self, PromptError> {
        let template = model
            .chat_template(None)
            .or_else(|_| LlamaChatTemplate::new("chatml"))
            .map_err(|e| PromptError::Template(e.to_string()))?;
        let msg = |role: &str, content: &str| {
            LlamaChatMessage::new(role.to_string(), content.to_string())
                .map_err(|e| PromptError::Template(e.to_string()))
        };
        let mut chat = vec![msg("system", system)?];
        for s in shots {
            chat.push(msg("user", &s.request)?);
            chat.push(msg("assistant", &s.answer)?);
        }
        chat.push(msg("user", SLOT)?);
        let text = model
            .apply_chat_template(&template, &chat, true)
            .map_err(|e| PromptError::Template(e.to_string()))?;
        let at = text
            .find(SLOT)
            .ok_or_else(|| PromptError::Template("the template dropped the user message".into()))?;
        Ok(Self {
            prefix: text[..at].to_string(),
            suffix: text[at + SLOT.len()..].to_string(),
        })
    }
}

/// Tokenizes a whole prompt: the template parts with special tokens parsed (they are the
/// template's), the request with special-token parsing off and no BOS.
pub fn tokenize(model: &LlamaModel, template: &PromptTemplate, request: &str) -> Vec<LlamaToken> {
    let vocab = model.vocab();
    let mut tokens = tokenize_prefix(model, &template.prefix);
    tokens.extend(vocab.tokenize(request.as_bytes(), false, false));
    tokens.extend(vocab.tokenize(template.suffix.as_bytes(), false, true));
    tokens
}

/// The shared prefix's tokens (BOS added if the model wants one).
pub fn tokenize_prefix(model: &LlamaModel, prefix: &str) -> Vec<LlamaToken> {
    let vocab = model.vocab();
    let add_bos = vocab.should_add_bos() && !prefix.is_empty();
    let mut tokens = vocab.tokenize(prefix.as_bytes(), false, true);
    let bos = vocab.bos();
    if add_bos && bos.0 >= 0 && tokens.first() != Some(&bos) {
        tokens.insert(0, bos);
    }
    tokens
}
