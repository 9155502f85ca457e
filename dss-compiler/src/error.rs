//! Typed errors of every stage. Each says *where* (JSON pointer or line:column) and *what*.
use thiserror::Error;

/// Compiling a schema (or a notation edit) failed.
#[derive(Debug, Error)]
pub enum CompileError {
    #[error("schema at {pointer}: {message}")]
    Schema { pointer: String, message: String },
    #[error("remote $ref `{reference}` at {pointer} is not fetched; inline the referenced schema or use a local `#/...` reference")]
    RemoteRef { pointer: String, reference: String },
    #[error("notation: {0}")]
    Notation(String),
    #[error("notation is ambiguous: {0}")]
    Ambiguous(String),
}

/// JSON -> shorthand failed: the instance is not valid against the schema.
#[derive(Debug, Error)]
#[error("{pointer}: {message} (keyword `{keyword}`)")]
pub struct CompressError {
    /// JSON pointer into the instance ("" is the root).
    pub pointer: String,
    /// The violated JSON Schema keyword (e.g. `required`, `type`, `enum`).
    pub keyword: String,
    pub message: String,
}

/// Shorthand -> JSON failed.
#[derive(Debug, Error)]
#[error("{line}:{column}: expected {expected}, found {found}")]
pub struct ExpandError {
    /// 1-based line.
    pub line: usize,
    /// 1-based column, in characters.
    pub column: usize,
    pub expected: String,
    pub found: String,
}

/// Loading or saving a compiled spec failed.
#[derive(Debug, Error)]
pub enum SpecError {
    #[error("spec file: {0}")]
    Format(String),
    #[error(transparent)]
    Compile(#[from] CompileError),
}
