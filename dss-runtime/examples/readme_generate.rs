//! README's generation example: load a model and a compiled spec once, generate many times
//! (`cargo run -p dss-runtime --example readme_generate`; the model must be fetched first:
//! `dss model fetch qwen2.5-coder-0.5b`). The lines between the `README` markers are
//! README.md's Rust block word for word (`tests/readme.rs` checks it); `cargo test` builds
//! it, so the block always compiles.

fn main() -> Result<(), Box<dyn std::error::Error>> {
    // README begin
    use dss_compiler::prune::{Consume, Pruning};
    use dss_compiler::CompiledSpec;
    use dss_extract::{Catalogs, ExtractMode, SpecIndex};
    use dss_runtime::{Generator, GeneratorOptions, LocalModel};

    let spec = CompiledSpec::from_json(&std::fs::read_to_string("grammars/viz-sales/spec.json")?)?;
    let model = LocalModel::load(&dss_runtime::models::resolve("qwen2.5-coder-0.5b")?)?;
    let opts = GeneratorOptions {
        examples: dss_runtime::generate::load_examples(
            "grammars/viz-sales/examples.jsonl".as_ref(),
        )?,
        ..Default::default()
    };
    // What finds the values a request names: the schema's enums, the values and phrases of the
    // spec folder's catalogs.yaml and aliases.yaml, the request's spans, numbers and dates.
    let catalogs = Catalogs::from_dir("grammars/viz-sales".as_ref())?;
    let index = SpecIndex::build(&spec, &catalogs)?;
    let mut generator = Generator::new(&model, spec, opts)?;
    generator.warm()?; // evaluate the shared prompt prefix now (optional)

    // The grammar pruned to what the request names, each value used once, rebuilt after
    // each line (`generator.generate(request)` writes under the whole grammar).
    let request = "average quantity per region and category";
    let found = index.analyze(request, ExtractMode::Full, 3);
    let pruning = Pruning {
        restriction: found.restriction.clone(),
        consume: Consume::Class,
    };
    let out = generator.generate_pruned(&found.prompt(request), &pruning)?;
    println!("{}", out.value); // out.value (JSON), out.text (shorthand), out.stats
                               // README end
    Ok(())
}
