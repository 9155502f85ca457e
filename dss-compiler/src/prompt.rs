//! The text a model is prompted with: the instruction and the system message around the
//! readable grammar. One source for every backend: dss-runtime renders it with the
//! model's chat template in process, dss-serve sends it as chat messages to a server
//! that applies its own template. The worked examples both put in the prompt are read
//! here too ([`load_examples`]).

use std::path::{Path, PathBuf};

/// The instruction at the top of the system message (schema-independent).
pub const INSTRUCTION: &str = "You translate a request into the shorthand notation defined \
by the grammar below. Reply with the shorthand only: no JSON, no explanation, no code fence. \
Include only what the request asks for.";

/// The instruction when the output is compact JSON (benchmark comparison).
pub const JSON_INSTRUCTION: &str = "You translate a request into one compact JSON document \
that validates against the JSON Schema below. Reply with the JSON only: no explanation, no \
code fence. Include only what the request asks for.";

/// A worked example for the prompt: a request and the JSON it should give.
#[derive(Debug, Clone, PartialEq)]
pub struct Example {
    /// The user's request.
    pub request: String,
    /// The JSON it should give.
    pub output: serde_json::Value,
}

/// Reads examples from JSON Lines, one `{"request": "...", "output": {...}}` per line (the
/// format `dss generate --examples` reads); blank lines are skipped.
///
/// # Errors
/// The first line that is not such an object, as `line N: …`.
pub fn read_examples(text: &str) -> Result<Vec<Example>, String> {
    let mut out = Vec::new();
    for (i, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let v: serde_json::Value =
            serde_json::from_str(line).map_err(|e| format!("line {}: {e}", i + 1))?;
        match (v.get("request").and_then(|r| r.as_str()), v.get("output")) {
            (Some(r), Some(o)) => out.push(Example {
                request: r.to_string(),
                output: o.clone(),
            }),
            _ => {
                return Err(format!(
                    "line {}: expected {{\"request\": string, \"output\": value}}",
                    i + 1
                ))
            }
        }
    }
    Ok(out)
}

/// An examples file that could not be read ([`load_examples`]).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("examples {}: {message}", path.display())]
#[non_exhaustive]
pub struct ExamplesError {
    /// The examples file.
    pub path: PathBuf,
    /// What is wrong with it: the file cannot be read, or its first bad line
    /// ([`read_examples`]).
    pub message: String,
}

/// Reads examples from a JSON Lines file, one `{"request": "...", "output": {...}}` per
/// line (see [`read_examples`]). Every backend reads `--examples` through it.
///
/// # Errors
/// The file cannot be read, or a line is not such an object.
pub fn load_examples(path: &Path) -> Result<Vec<Example>, ExamplesError> {
    let err = |message: String| ExamplesError {
        path: path.to_owned(),
        message,
    };
    let text = std::fs::read_to_string(path).map_err(|e| err(e.to_string()))?;
    read_examples(&text).map_err(err)
}

/// The system message: instruction, then the grammar (or schema) as reference.
pub fn system_message(instruction: &str, grammar: &str) -> String {
    format!("{instruction}\n\n{}", grammar.trim_end())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn examples_are_read_from_a_file_and_a_bad_line_is_named_with_the_file() {
        let dir = tempfile_dir();
        let p = dir.join("examples.jsonl");
        std::fs::write(&p, "{\"request\": \"r\", \"output\": {\"a\": 1}}\n\n").expect("writes");
        assert_eq!(
            load_examples(&p),
            Ok(vec![Example {
                request: "r".into(),
                output: serde_json::json!({"a": 1})
            }])
        );
        std::fs::write(&p, "{\"request\": \"r\"}\n").expect("writes");
        let e = load_examples(&p).expect_err("a line without output");
        assert_eq!(e.path, p);
        assert_eq!(
            e.to_string(),
            format!(
                "examples {}: line 1: expected {{\"request\": string, \"output\": value}}",
                p.display()
            )
        );
        let missing = dir.join("missing.jsonl");
        let e = load_examples(&missing).expect_err("no such file");
        assert!(e
            .to_string()
            .starts_with(&format!("examples {}: ", missing.display())));
        let _ = std::fs::remove_dir_all(&dir);
    }

    fn tempfile_dir() -> PathBuf {
        let dir =
            std::env::temp_dir().join(format!("dss-compiler-examples-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("creates");
        dir
    }

    #[test]
    fn the_grammar_follows_the_instruction_after_a_blank_line() {
        assert_eq!(
            system_message("Do it.", "doc ::= x\n\n"),
            "Do it.\n\ndoc ::= x"
        );
    }
}
