//! Typed errors of every stage. Each says *where* (JSON pointer or line:column) and *what*.
//!
//! The error types are `#[non_exhaustive]`: later versions may add variants (or fields), so
//! match them with a `_` arm, or use the accessors ([`CompressError::pointer`]…).
use std::borrow::Cow;
use thiserror::Error;

/// Compiling a schema (or a notation edit) failed.
#[derive(Debug, Clone, Error)]
#[non_exhaustive]
pub enum CompileError {
    /// The schema is malformed at `pointer` (a JSON pointer into the schema).
    #[error("schema at {}: {message}", at(pointer))]
    Schema {
        /// Where in the schema (a JSON pointer).
        pointer: String,
        /// What is wrong there.
        message: String,
    },
    /// A `$ref` (or `$schema`) names a document that is not part of the schema; remote
    /// documents are never fetched.
    #[error("remote $ref `{reference}` at {} is not fetched; inline the referenced schema or use a local `#/...` reference", at(pointer))]
    RemoteRef {
        /// Where the reference is (a JSON pointer into the schema).
        pointer: String,
        /// The reference as written.
        reference: String,
    },
    /// A notation edit cannot be applied (unknown object, field or mode).
    #[error("notation: {0}")]
    Notation(String),
    /// A notation edit would make the shorthand ambiguous.
    #[error("notation is ambiguous: {0}")]
    Ambiguous(String),
}

/// A JSON pointer for messages: the empty pointer is the document root.
fn at(pointer: &str) -> &str {
    if pointer.is_empty() {
        "the document root"
    } else {
        pointer
    }
}

/// JSON -> shorthand failed.
#[derive(Debug, Clone, Error)]
#[non_exhaustive]
pub enum CompressError {
    /// The instance is not valid against the schema.
    #[error("{pointer}: {message} (keyword `{keyword}`)")]
    Invalid {
        /// JSON pointer into the instance ("" is the root).
        pointer: String,
        /// The violated JSON Schema keyword (e.g. `required`, `type`, `enum`).
        keyword: String,
        /// The validator's message.
        message: String,
    },
    /// The instance is valid, but the notation cannot write this value (a limit of the
    /// compiler, not of the instance).
    #[error("{pointer}: the notation cannot write this value: {message}")]
    Unencodable {
        /// JSON pointer into the instance ("" is the root).
        pointer: String,
        /// What the encoder could not write.
        message: String,
    },
    /// The schema cannot validate instances (e.g. it has a remote `$ref`), so nothing can
    /// be compressed.
    #[error("the schema cannot validate instances: {0}")]
    Schema(CompileError),
    /// A Rust value could not be serialized to JSON ([`crate::CompiledSpec::compress_value`]).
    #[error("the value cannot be serialized to JSON: {0}")]
    Serialize(String),
}

impl CompressError {
    /// JSON pointer into the instance where compressing failed ("" is the root, and the
    /// answer for errors that concern no part of the instance).
    pub fn pointer(&self) -> &str {
        match self {
            CompressError::Invalid { pointer, .. } | CompressError::Unencodable { pointer, .. } => {
                pointer
            }
            CompressError::Schema(_) | CompressError::Serialize(_) => "",
        }
    }

    /// The violated JSON Schema keyword, for an invalid instance.
    pub fn keyword(&self) -> Option<&str> {
        match self {
            CompressError::Invalid { keyword, .. } => Some(keyword),
            _ => None,
        }
    }

    /// What went wrong, without the pointer and keyword.
    pub fn message(&self) -> Cow<'_, str> {
        match self {
            CompressError::Invalid { message, .. } | CompressError::Unencodable { message, .. } => {
                Cow::Borrowed(message)
            }
            CompressError::Schema(e) => {
                Cow::Owned(format!("the schema cannot validate instances: {e}"))
            }
            CompressError::Serialize(m) => {
                Cow::Owned(format!("the value cannot be serialized to JSON: {m}"))
            }
        }
    }
}

/// Shorthand -> JSON failed.
#[derive(Debug, Clone, Error)]
#[non_exhaustive]
#[error("{line}:{column}: expected {expected}, found {found}")]
pub struct ExpandError {
    /// 1-based line.
    pub line: usize,
    /// 1-based column, in characters.
    pub column: usize,
    /// What the notation allows there.
    pub expected: String,
    /// What the text has there.
    pub found: String,
}

/// Shorthand -> a Rust value failed ([`crate::CompiledSpec::expand_into`]).
#[derive(Debug, Clone, Error)]
#[non_exhaustive]
pub enum ExpandIntoError {
    /// The text is not shorthand of this notation.
    #[error(transparent)]
    Expand(#[from] ExpandError),
    /// The text is shorthand, but its JSON does not deserialize into the Rust type (the
    /// type and the schema the spec was compiled from disagree).
    #[error("the expanded JSON does not fit the Rust type: {0}")]
    Deserialize(String),
}

/// Loading or saving a compiled spec failed.
#[derive(Debug, Clone, Error)]
#[non_exhaustive]
pub enum SpecError {
    /// The file is not a spec this version reads.
    #[error("spec file: {0}")]
    Format(String),
    /// Writing the spec (or its notation YAML) as text failed.
    #[error("cannot serialize the {what}: {message}")]
    Serialize {
        /// What was being written: `spec.json` or `notation YAML`.
        what: &'static str,
        /// The serializer's message.
        message: String,
    },
    /// Compiling (e.g. the edited notation) failed.
    #[error(transparent)]
    Compile(#[from] CompileError),
}
