//! README's generation example: load a model and a compiled spec once, generate many times
//! (`cargo run -p dss-runtime --example readme_generate`; the model must be fetched first:
//! `dss model fetch qwen2.5-coder-0.5b`). The lines between the `README` markers are
//! README.md's Rust block word for word (`tests/readme.rs` checks it); `cargo test` builds
//! it, so the block always compiles.

fn main() -> Result<(), Box<dyn std::error::Error>> {
    // README begin
    use dss_compiler::prune::{Restriction, Resume};
    use dss_compiler::CompiledSpec;
    use dss_runtime::{EngineKind, Generator, GeneratorOptions, GrammarSource, LocalModel};

    let spec = CompiledSpec::from_json(&std::fs::read_to_string("grammars/viz/spec.json")?)?;
    let model = LocalModel::load(&dss_runtime::models::resolve("qwen2.5-coder-0.5b")?)?;
    let opts = GeneratorOptions {
        examples: dss_runtime::generate::load_examples("grammars/viz/examples.jsonl".as_ref())?,
        ..Default::default()
    };
    // A per-request grammar: the spec's grammar pruned to the values a request names
    // (`dss extract` finds them; here by hand).
    let mut restriction = Restriction::default();
    restriction
        .candidates
        .insert("/fields/*/aggregation".into(), vec!["sum".into()]);
    let pruned = spec.pruned_grammar(&restriction, Resume::Start); // the grammar IR

    let mut generator = Generator::new(&model, spec, opts)?;
    generator.warm()?; // evaluate the shared prompt prefix now (optional)
    let out = generator.generate("profit by region")?; // out.value (JSON), out.text, out.stats
    println!("{}", out.value);
    let pruned = model.grammar(EngineKind::Llguidance, &GrammarSource::Ir(pruned))?;
    let out = generator.generate_with("total sales by region", &pruned)?;
    println!("{}", out.value);
    // README end
    Ok(())
}
