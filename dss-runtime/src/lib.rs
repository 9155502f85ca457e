//! dss-runtime: the local-model side of dss.
//!
//! - [`models`]: the registry of pinned GGUF models, fetched from PyPI wheels and cached.
//! - Generation: a local model writes shorthand under the compiled grammar; the result is
//!   expanded to schema-valid JSON. [`LocalModel`] (load once) + [`Generator`] (spec,
//!   prompt, KV prefix cache; call [`Generator::generate`] or
//!   [`Generator::generate_pruned`] many times).
//! - Constraint engines ([`EngineKind`]: llguidance, llama.cpp's GBNF sampler, none) and the
//!   [`Grammar`] they run.
//! - The prompt ([`PromptTemplate`]): the model's chat template with a shared prefix and the
//!   request last.
//! - [`lark`]: the Lark structure printed from dss's grammar IR (dss-compiler's printer,
//!   re-exported: the one that writes `shorthand.lark`), which the llguidance engine builds
//!   its grammar from, so llguidance runs the language the GBNF says.
//! - [`GbnfChecker`]: checking GBNF grammars (and texts against them) with llama.cpp's own
//!   grammar engine, so what is checked is exactly what will constrain generation.
//! - [`backend()`]: the single process-wide llama.cpp backend every part must share.
//!
//! The stage modules are private: their public items are re-exported here by name. `models`
//! stays a module, the registry's namespace (`models::resolve`, `models::MODELS`).

mod backend;
mod engine;
mod gbnf;
mod generate;
mod llg;
pub mod models;
mod prompt;

pub use backend::{backend, load_model, BackendError};
pub use dss_compiler::grammar::lark;
pub use dss_compiler::prompt::ExamplesError;
pub use dss_compiler::prune::Pruning;
pub use engine::{parser_factory, Constraint, EngineError, EngineKind, Grammar, GrammarSource};
pub use gbnf::{GbnfChecker, GbnfError, Verdict};
pub use generate::{
    default_threads, load_examples, Example, GenerateError, Generation, Generator,
    GeneratorOptions, LocalModel, OutputFormat, PrefixCache, PrunedRest, Stats, DEFAULT_TIMEOUT,
};
pub use models::{FetchProgress, ModelError, ModelRegistry, ModelSpec, DEFAULT_MODEL};
pub use prompt::{tokenize, tokenize_prefix, PromptError, PromptTemplate, Shot};
