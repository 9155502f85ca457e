//! dss-runtime: the local-model side of dss.
//!
//! - [`models`]: the registry of pinned GGUF models, fetched from PyPI wheels and cached.
//! - Generation: a local model writes shorthand under the compiled grammar; the result is
//!   expanded to schema-valid JSON. [`LocalModel`] (load once) + [`Generator`] (spec,
//!   prompt, KV prefix cache; call [`Generator::generate`] or
//!   [`Generator::generate_pruned`] many times).
//! - Constraint engines ([`EngineKind`]: llguidance, llama.cpp's GBNF sampler, none) and the
//!   [`engine::Grammar`] they run.
//! - The prompt ([`prompt::PromptTemplate`]): the model's chat template with a shared prefix and the
//!   request last.
//! - [`engine::lark`]: the Lark structure printed from dss's grammar IR (dss-compiler's printer,
//!   re-exported: the one that writes `shorthand.lark`), which the llguidance engine builds
//!   its grammar from, so llguidance runs the language the GBNF says.
//! - [`gbnf::GbnfChecker`]: checking GBNF grammars (and texts against them) with llama.cpp's own
//!   grammar engine, so what is checked is exactly what will constrain generation.
//! - [`backend::backend`]: the single process-wide llama.cpp backend every part must share.
//!
//! The root holds what generating takes (a model, a generator and its options, what it
//! returns and how it fails); the rest is in modules by task: [`engine`], [`prompt`],
//! [`gbnf`], [`backend`], [`generate`] (the prefix cache, the per-line rest, the defaults)
//! and [`models`] (the registry's namespace: `models::resolve`, `models::MODELS`).

pub mod backend;
mod calls;
pub mod engine;
pub mod gbnf;
pub mod generate;
mod llg;
pub mod models;
pub mod prompt;

pub use engine::{EngineKind, GrammarSource};
pub use generate::{
    GenerateError, Generation, Generator, GeneratorOptions, LocalModel, OutputFormat, Stats,
};
