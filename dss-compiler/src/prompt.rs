//! The text a model is prompted with: the instruction and the system message around the
//! readable grammar. One source for every backend: dss-runtime renders it with the
//! model's chat template in process, dss-serve sends it as chat messages to a server
//! that applies its own template.

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

/// The system message: instruction, then the grammar (or schema) as reference.
pub fn system_message(instruction: &str, grammar: &str) -> String {
    format!("{instruction}\n\n{}", grammar.trim_end())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_grammar_follows_the_instruction_after_a_blank_line() {
        assert_eq!(
            system_message("Do it.", "doc ::= x\n\n"),
            "Do it.\n\ndoc ::= x"
        );
    }
}
