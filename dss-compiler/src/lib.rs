//! dss-compiler: JSON Schema -> domain-specific shorthand.
//!
//! [`compile`] turns a JSON Schema into a [`CompiledSpec`]: a compact notation designed for
//! the schema, an exact mapper between JSON and that notation ([`CompiledSpec::compress`],
//! [`CompiledSpec::expand`]) and its grammars (readable BNF, pest, GBNF, Lark). A spec is saved as
//! `spec.json` ([`CompiledSpec::to_json`], [`SpecFile`]) and loaded again with
//! [`CompiledSpec::from_json`]. Per request, [`CompiledSpec::pruned_grammar`] builds the
//! grammar restricted to the values a request names (a [`prune::Restriction`] over the
//! spec's [`prune::Site`]s), and [`CompiledSpec::progress`] reads a partly written document.
//! With the `schemars` feature, [`compile_type`] compiles a Rust type.
//!
//! ```
//! use dss_compiler::{compile, CompileOptions};
//! let schema = serde_json::json!({
//!     "type": "object",
//!     "properties": {"city": {"type": "string"}, "unit": {"enum": ["celsius", "fahrenheit"]}},
//!     "required": ["city"]
//! });
//! let spec = compile(&schema, &CompileOptions::default()).unwrap();
//! let x = serde_json::json!({"city": "Paris", "unit": "celsius"});
//! let s = spec.compress(&x).unwrap();
//! assert_eq!(s, "Paris celsius");
//! assert_eq!(spec.expand(&s).unwrap(), x);
//! ```
//!
//! # Where things are
//!
//! The crate root holds the compile, compress and expand front; the rest is grouped by task.
//!
//! | Task | Where |
//! |---|---|
//! | Compile a schema (or tool definitions, or a Rust type), compress and expand | [`compile`], [`compile_type`], [`CompileOptions`], [`CompiledSpec`] |
//! | Save and load a spec (`spec.json`) | [`SpecFile`], [`SpecFile::VERSION`] |
//! | Edit the notation (`dss init`'s YAML) | [`NotationConfig`], [`NotationStyle`] |
//! | The errors of the above | [`error`] |
//! | Prune a grammar to a request, line by line; the sites a request fills | [`prune`] |
//! | The grammar IR, its Lark form, what no grammar says | [`grammar`] |
//! | Tool definitions (OpenAI, Anthropic, MCP) read as a schema | [`tools`] |
//! | What a schema probably says by mistake | [`lint`] |
//! | Exact numbers, JSON equality, the encoder's error | [`codec`] |
//! | The prompt around the readable grammar, worked examples | [`prompt`] |
//!
//! # Pipeline
//!
//! One module per stage, each only calls the ones above it (the public modules above are
//! views of these):
//! 1. `schema`: read a JSON Schema document: drafts, `$ref`/`$id`/anchors, keywords;
//!    `lint`: malformed keyword values, misspelled keywords, data given as a schema;
//!    `tools`: tool definitions (OpenAI, Anthropic, MCP) read as the schema of their calls.
//! 2. `shape`: abstract every subschema into a type-partitioned *shape* (the set of JSON
//!    values it may describe, over-approximated where JSON Schema is richer than a notation).
//! 3. `notation`: design the shorthand for those shapes: field order, positional /
//!    keyless / keyed fields, keywords, tags, layout. Editable as YAML ([`NotationConfig`]).
//! 4. `codec`: the exact mapper: JSON -> shorthand (encoder) and back (decoder);
//!    `checks`: the local assertions (bounds, patterns, formats) the encoder checks.
//! 5. `grammar`: one grammar IR built from the notation ([`grammar::Grammar`]), printed as
//!    pest, GBNF and Lark ([`grammar::lark`], for llguidance-based engines); a readable BNF
//!    for prompts.
//! 6. `spec`: the compiled artifact (`spec.json`) tying it together, plus validation;
//!    `typed`: the same from Rust types (`compile_type::<T>()` through `schemars`,
//!    `compress_value` / `expand_into` through serde).
//! 7. `sites` and `request`: where an instance chooses a value, and the grammar pruned
//!    to a request; `prune`: the per-line loop every backend runs ([`prune::Pruner`]: the
//!    grammar a document starts under, and after each complete line the values it used
//!    consumed and the grammar of the rest).

#![warn(missing_docs)]

mod checks;
pub mod codec;
pub mod error;
mod gaps;
pub mod grammar;
pub mod lint;
mod moments;
mod notation;
pub mod prompt;
pub mod prune;
mod request;
mod schema;
mod shape;
mod sites;
mod spec;
mod spec_legacy;
mod stack;
pub mod tools;
mod typed;

pub use notation::{NotationConfig, NotationStyle};
pub use spec::{compile, compile_owned, CompileOptions, CompiledSpec, SpecFile};
#[cfg(feature = "schemars")]
pub use typed::compile_type;

#[cfg(test)]
mod test_support {
    use serde_json::Value;

    /// The bundled viz spec, compiled, and its bundled example documents.
    pub(crate) fn viz_spec_and_examples() -> (crate::CompiledSpec, Vec<Value>) {
        let read = |p: &std::path::Path| std::fs::read_to_string(p).expect("read");
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
        let schema: Value =
            serde_json::from_str(&read(&root.join("specs/viz.schema.json"))).expect("json");
        let spec = crate::compile(&schema, &crate::CompileOptions::default()).expect("compiles");
        let mut docs = Vec::new();
        for e in std::fs::read_dir(root.join("examples/viz")).expect("examples") {
            let path = e.expect("entry").path();
            if path.extension().is_some_and(|x| x == "json") {
                docs.push(serde_json::from_str(&read(&path)).expect("json"));
            }
        }
        (spec, docs)
    }
}
