//! dss-serve: dss's shorthand, per-request pruned grammars and exact expansion, brought to
//! an OpenAI-compatible inference server that already runs the model (llama.cpp's
//! `llama-server`, vLLM, SGLang) instead of a model loaded in process.
//!
//! - [`ServerKind`]: which server, and the request field it reads a grammar from.
//! - [`Client`]: blocking HTTP (ureq) with a per-request timeout and bounded retries with
//!   backoff on connection failures, 429 and 5xx; errors with the server's message.
//! - [`ServedGenerator`]: one request: the prompt as chat messages (the same instruction,
//!   readable grammar and worked examples as in process; the server applies its chat
//!   template), the pruned GBNF, and the answer expanded and validated. [`Mode::PerLine`]
//!   (llama-server) continues the templated prompt one line per round trip under the
//!   grammar of the rest, consuming the values each line used.
//! - [`run_ordered`]: N requests in flight on std threads, results in input order.
//!
//! No llama.cpp here: a build without dss-runtime drives a server.

mod client;
mod error;
mod generate;
mod kind;
mod pool;

pub use client::{Client, ServerConfig};
pub use dss_compiler::prompt::{load_examples, Example, ExamplesError};
pub use dss_compiler::prune::Pruning;
pub use error::ServeError;
pub use generate::{ServeOptions, Served, ServedGenerator, ServedStats};
pub use kind::{Mode, ServerKind};
pub use pool::{run_ordered, Input};
