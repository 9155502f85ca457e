//! The emitted pest grammar works with `pest_derive`, as a user would use it: the bundled
//! viz grammar (`grammars/viz/shorthand.pest`, kept fresh by the `grammars` test) derives a
//! parser at compile time, which parses what the mapper writes and rejects what it cannot.

// `#[derive(Parser)]` generates an undocumented public `Rule` enum.
#![allow(missing_docs)]

use pest::Parser;
use pest_derive::Parser;

#[derive(Parser)]
#[grammar = "../../grammars/viz/shorthand.pest"]
struct VizShorthand;

#[test]
fn derived_parser_reads_compressed_examples() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let schema =
        serde_json::from_str(&std::fs::read_to_string(root.join("specs/viz.schema.json")).unwrap())
            .unwrap();
    let spec = dss_compiler::compile(&schema, &Default::default()).unwrap();
    let mut n = 0;
    for entry in std::fs::read_dir(root.join("examples/viz")).unwrap() {
        let path = entry.unwrap().path();
        let x = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
        let s = spec.compress(&x).unwrap();
        let pairs = VizShorthand::parse(Rule::document, &s)
            .unwrap_or_else(|e| panic!("{}: {e}\n{s}", path.display()));
        assert_eq!(
            pairs.as_str(),
            s,
            "{}: the whole document is consumed",
            path.display()
        );
        n += 1;
    }
    assert!(n >= 10);
    assert!(VizShorthand::parse(Rule::document, "fields:\n\"Sales\" summ\n").is_err());
    assert!(
        VizShorthand::parse(Rule::document, "filters:\n").is_err(),
        "fields: is required"
    );
}
