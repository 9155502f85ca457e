//! The errors of the crate root's entry points: [`CompileError`] ([`compile`](crate::compile)),
//! [`CompressError`] ([`CompiledSpec::compress`](crate::CompiledSpec::compress)),
//! [`ExpandError`] ([`CompiledSpec::expand`](crate::CompiledSpec::expand)),
//! [`ExpandIntoError`] ([`CompiledSpec::expand_into`](crate::CompiledSpec::expand_into)) and
//! [`SpecError`] (reading and writing `spec.json`). Each says *where* (JSON pointer or
//! line:column) and *what*.
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
    /// A keyword's value is malformed (`"type": "integr"`, `"required": "x"`); compiled
    /// leniently ([`crate::CompileOptions::lenient`]), it is ignored with a warning instead.
    #[error(
        "schema at {}: malformed \"{keyword}\": expected {expected}, found {found}",
        at(pointer)
    )]
    Malformed {
        /// Where the value is (a JSON pointer into the input).
        pointer: String,
        /// The keyword.
        keyword: String,
        /// What its value must be.
        expected: String,
        /// What it is (shortened), with a suggestion where one is close.
        found: String,
    },
    /// The input looks like tool definitions, but they cannot be read.
    #[error(transparent)]
    Tools(#[from] crate::tools::ToolsError),
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
    /// The JSON text has a number that reading it as JSON would change (an integer beyond
    /// 64 bits, more digits than a double holds, an exponent out of range): dss refuses it
    /// rather than change it ([`crate::codec::check_numbers`]).
    #[error("{}: {}", shown_pointer(.pointer), inexact_message(.lexeme, .became))]
    Inexact {
        /// JSON pointer to the number ("" is the root).
        pointer: String,
        /// The number as written.
        lexeme: String,
        /// What reading it gives.
        became: String,
    },
    /// A Rust value could not be serialized to JSON ([`crate::CompiledSpec::compress_value`]).
    #[error("the value cannot be serialized to JSON: {0}")]
    Serialize(String),
    /// The text given to [`crate::CompiledSpec::compress_str`] is not JSON.
    #[error("invalid JSON at line {line} column {column}: {message}")]
    Json {
        /// The line of the error (from 1).
        line: usize,
        /// Its column (from 1).
        column: usize,
        /// What serde_json found wrong there.
        message: String,
    },
}

impl CompressError {
    /// The error as one line for a person: as [`Display`](std::fmt::Display) writes it,
    /// but an invalid instance's empty root pointer shown as `(root)`.
    pub fn describe(&self) -> String {
        match self {
            CompressError::Invalid {
                pointer,
                keyword,
                message,
            } => {
                let at = if pointer.is_empty() {
                    "(root)"
                } else {
                    pointer
                };
                format!("{at}: {message} (keyword `{keyword}`)")
            }
            _ => self.to_string(),
        }
    }

    /// JSON pointer into the instance where compressing failed ("" is the root, and the
    /// answer for errors that concern no part of the instance).
    pub fn pointer(&self) -> &str {
        match self {
            CompressError::Invalid { pointer, .. }
            | CompressError::Unencodable { pointer, .. }
            | CompressError::Inexact { pointer, .. } => pointer,
            CompressError::Schema(_) | CompressError::Serialize(_) | CompressError::Json { .. } => {
                ""
            }
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
            CompressError::Inexact { lexeme, became, .. } => {
                Cow::Owned(inexact_message(lexeme, became))
            }
            CompressError::Json { message, .. } => Cow::Owned(format!("invalid JSON: {message}")),
        }
    }

    /// The error of a text serde_json cannot read: where, and what it found.
    pub(crate) fn json(e: &serde_json::Error) -> CompressError {
        let full = e.to_string();
        let at = format!(" at line {} column {}", e.line(), e.column());
        CompressError::Json {
            line: e.line(),
            column: e.column(),
            message: full.strip_suffix(&at).unwrap_or(&full).to_string(),
        }
    }
}

/// A JSON pointer for messages: the root (`""`) is shown as `(root)`.
fn shown_pointer(pointer: &str) -> &str {
    if pointer.is_empty() {
        "(root)"
    } else {
        pointer
    }
}

fn inexact_message(lexeme: &str, became: &str) -> String {
    format!(
        "the number {lexeme} cannot be carried exactly (JSON reads it as {became}); dss never changes a number"
    )
}

/// Shorthand -> JSON failed.
#[derive(Debug, Clone, Error)]
#[non_exhaustive]
pub enum ExpandError {
    /// The text is not shorthand of this notation (nor of its grammars).
    #[error("{line}:{column}: expected {expected}, found {found}")]
    Syntax {
        /// 1-based line.
        line: usize,
        /// 1-based column, in characters.
        column: usize,
        /// What the notation allows there.
        expected: String,
        /// What the text has there.
        found: String,
    },
    /// The text is shorthand, but the JSON it stands for is not valid against the schema
    /// (an assertion no grammar can say: a `pattern`, a `maximum`, `uniqueItems`…).
    #[error("the expanded JSON at {pointer}: {message} (keyword `{keyword}`)")]
    Invalid {
        /// JSON pointer into the expanded instance ("" is the root).
        pointer: String,
        /// The violated JSON Schema keyword.
        keyword: String,
        /// The validator's message.
        message: String,
    },
    /// The schema cannot validate instances (e.g. it has a remote `$ref`); expand without
    /// validation ([`crate::CompiledSpec::expand_unvalidated`]) still reads the text.
    #[error("the schema cannot validate instances: {0}")]
    Schema(CompileError),
}

impl ExpandError {
    /// Where the text is not shorthand: (line, column), both 1-based; `None` for a value
    /// the schema rejects.
    pub fn location(&self) -> Option<(usize, usize)> {
        match self {
            ExpandError::Syntax { line, column, .. } => Some((*line, *column)),
            _ => None,
        }
    }

    /// JSON pointer into the expanded instance, for a value the schema rejects.
    pub fn pointer(&self) -> Option<&str> {
        match self {
            ExpandError::Invalid { pointer, .. } => Some(pointer),
            _ => None,
        }
    }

    /// What the notation allows where the text is not shorthand.
    pub fn expected(&self) -> Option<&str> {
        match self {
            ExpandError::Syntax { expected, .. } => Some(expected),
            _ => None,
        }
    }

    /// What the text has where it is not shorthand.
    pub fn found(&self) -> Option<&str> {
        match self {
            ExpandError::Syntax { found, .. } => Some(found),
            _ => None,
        }
    }

    /// The violated JSON Schema keyword, for a value the schema rejects.
    pub fn keyword(&self) -> Option<&str> {
        match self {
            ExpandError::Invalid { keyword, .. } => Some(keyword),
            _ => None,
        }
    }
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
    /// The file is not a `spec.json` (not JSON, no version, or not the layout of its
    /// version).
    #[error("spec file: {0}")]
    Format(String),
    /// The file is a `spec.json` of a version this dss does not read.
    #[error("spec file: version {found} is not supported (this dss reads version {expected}, and converts versions 1 and 2); recompile with `dss compile`")]
    Version {
        /// The version the file says it is (its `dss_spec`).
        found: u32,
        /// The version this dss writes ([`crate::SpecFile::VERSION`]).
        expected: u32,
    },
    /// A version-1 or version-2 file that cannot be converted: the notation it saved is
    /// not one its schema designs under any notation settings this dss finds for it (it
    /// was edited, or written by a dss that designed differently).
    #[error("spec file: version {found} cannot be converted to version {expected}: {reason}; recompile with `dss compile` (with `--notation` if it was compiled with edits)")]
    Unconvertible {
        /// The version the file says it is.
        found: u32,
        /// The version it would be converted to ([`crate::SpecFile::VERSION`]).
        expected: u32,
        /// Why not.
        reason: String,
    },
    /// The file's schema or notation settings do not compile (the file was edited).
    #[error("spec file: its schema and notation settings do not compile: {0}")]
    Build(Box<CompileError>),
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
    /// The grammar IR could not be printed as Lark (`shorthand.lark`): a bug of dss (a
    /// rule refers to one the grammar does not define).
    #[error("cannot write the Lark grammar: {0}")]
    Lark(#[from] crate::grammar::lark::LarkError),
}
