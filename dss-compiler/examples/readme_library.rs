//! README's library example: compile a schema, compress JSON into shorthand, expand it
//! back (`cargo run -p dss-compiler --example readme_library`). The lines between the
//! `README` markers are README.md's Rust block word for word (`tests/readme.rs` checks it),
//! and `cargo test -p dss-compiler --example readme_library` runs it.

fn main() -> Result<(), Box<dyn std::error::Error>> {
    // README begin
    use dss_compiler::{compile, CompileOptions, CompiledSpec};
    use serde_json::json;

    let schema = json!({
        "type": "object",
        "properties": {
            "city": {"type": "string", "description": "City name"},
            "unit": {"enum": ["celsius", "fahrenheit"]},
            "days": {"type": "integer", "minimum": 1, "maximum": 7}
        },
        "required": ["city"]
    });
    let spec = compile(&schema, &CompileOptions::default())?;
    println!("{}", spec.grammar_bnf()); // the readable grammar, for a prompt
    let _gbnf = spec.grammar_gbnf(); // for llama.cpp (and spec.grammar_pest() for pest)

    let value = json!({"city": "Paris", "unit": "celsius", "days": 3});
    let text = spec.compress(&value)?; // JSON -> shorthand (the JSON is validated first)
    assert_eq!(text, "Paris celsius days 3");
    assert_eq!(spec.expand(&text)?, value); // shorthand -> the same JSON, validated

    // What `dss compile -o DIR` writes as DIR/spec.json, and loads back.
    let saved = CompiledSpec::from_json(&spec.to_json()?)?;
    // The grammar says 1..7: the `9` is an error at line 1, column 12.
    let err = saved.expand("Paris days 9").unwrap_err();
    assert_eq!(err.location(), Some((1, 12)));
    // README end
    Ok(())
}

#[cfg(test)]
mod tests {
    #[test]
    fn readme_library_example_runs() {
        super::main().unwrap();
    }
}
