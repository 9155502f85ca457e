//! Errors of suite loading, importing and scoring. Every error names its file and where in it.

use std::path::PathBuf;
use std::sync::Arc;

/// An error of `dss-eval`. Each variant says which file and, where it applies, which line
/// (1-based) or record (0-based index in a JSON array) it is about.
#[derive(Debug, Clone, thiserror::Error)]
#[non_exhaustive]
pub enum EvalError {
    /// A file could not be read or written.
    #[error("{}: {source}", path.display())]
    Io {
        /// The file.
        path: PathBuf,
        /// The underlying error.
        source: Arc<std::io::Error>,
    },
    /// A file or one of its lines is not what the format expects.
    #[error("{}{}: {message}", path.display(), at.as_ref().map(|a| format!(":{a}")).unwrap_or_default())]
    Format {
        /// The file.
        path: PathBuf,
        /// Where in the file: `LINE`, `LINE:COLUMN` or `record N`.
        at: Option<String>,
        /// What was expected and what was found.
        message: String,
    },
    /// A worked example is near an evaluated case (see [`crate::similar`]).
    #[error("{}: {pair}: examples must not come from or near the cases (normalized token similarity >= {}; `--allow-similar` overrides)", path.display(), crate::similar::THRESHOLD)]
    SimilarExample {
        /// The examples' file.
        path: PathBuf,
        /// The example, the case, both requests and their similarity.
        pair: Box<crate::similar::SimilarPair>,
    },
    /// An imported schema does not compile, or a gold does not round-trip through dss.
    #[error("{}: {message}", path.display())]
    Dss {
        /// The suite file concerned.
        path: PathBuf,
        /// The compiler's message.
        message: String,
    },
}

impl EvalError {
    /// A format error at a place in a file.
    pub fn format(
        path: impl Into<PathBuf>,
        at: Option<String>,
        message: impl Into<String>,
    ) -> Self {
        EvalError::Format {
            path: path.into(),
            at,
            message: message.into(),
        }
    }

    /// An I/O error on a file.
    pub fn io(path: impl Into<PathBuf>, source: std::io::Error) -> Self {
        EvalError::Io {
            path: path.into(),
            source: Arc::new(source),
        }
    }
}

/// The result type of `dss-eval`.
pub type Result<T> = std::result::Result<T, EvalError>;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn errors_clone_and_display_the_same() {
        use std::error::Error as _;
        let dir = tempfile::tempdir().expect("temp dir");
        let path = dir.path().join("missing.jsonl");
        let e = EvalError::io(&path, std::fs::read(&path).expect_err("no such file"));
        let c = e.clone();
        assert_eq!(c.to_string(), e.to_string());
        assert!(
            c.to_string().starts_with(&path.display().to_string()),
            "{c}"
        );
        assert!(c.source().is_some());
        let e = EvalError::format("suite.jsonl", Some("3".into()), "expected an object");
        assert_eq!(e.clone().to_string(), "suite.jsonl:3: expected an object");
    }
}
