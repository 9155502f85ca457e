//! What the fuzz targets share: the fixed compiled specs the mapper targets run against, the
//! sample instances and shorthands, and JSON equality by value.
//!
//! The specs are compiled once per process from the repository's files (`include_str!`), so a
//! target needs no data directory at run time.

pub use dss_compiler::codec::json_eq;
use dss_compiler::prune::Site;
use dss_compiler::{compile, CompileOptions, CompiledSpec};
use serde_json::Value;
use std::sync::OnceLock;

/// A compiled spec the mapper targets (`compress`, `expand`, `roundtrip`) run every input against.
pub struct Fixed {
    /// Where its schema comes from.
    pub name: &'static str,
    /// The compiled spec.
    pub spec: CompiledSpec,
    /// Its sites (for `CompiledSpec::progress`).
    pub sites: Vec<Site>,
    /// Its pest grammar, loaded into pest's interpreter (start rule `document`).
    pub pest: pest_vm::Vm,
}

impl Fixed {
    /// Whether the spec's emitted pest grammar accepts `text` as a whole document.
    pub fn pest_accepts(&self, text: &str) -> bool {
        self.pest.parse("document", text).is_ok()
    }

    /// Whether the pest grammar accepts `text` as `expand` reads it: `expand` also takes a
    /// document whose final newline is left out (README "The notation"), and Windows line
    /// endings (`\r\n` read as `\n`; the grammars' language has `\n` only).
    pub fn pest_accepts_read(&self, text: &str) -> bool {
        let text = text.replace("\r\n", "\n");
        self.pest_accepts(&text)
            || (!text.ends_with('\n') && self.pest_accepts(&format!("{text}\n")))
    }
}

/// The schemas of the fixed specs: the viz schema, and small MaskBench fixtures chosen for
/// what they exercise (array bounds and enums; formats; `anyOf` of closed objects with
/// `const`; numeric bounds under `anyOf`). A MaskBench file holds its schema under `"schema"`.
const SOURCES: &[(&str, &str)] = &[
    (
        "specs/viz.schema.json",
        include_str!("../../specs/viz.schema.json"),
    ),
    (
        "maskbench/Github_easy---o65465",
        include_str!("../../tests/fixtures/maskbench/data/Github_easy---o65465.json"),
    ),
    (
        "maskbench/Github_medium---o10079",
        include_str!("../../tests/fixtures/maskbench/data/Github_medium---o10079.json"),
    ),
    (
        "maskbench/MCPspec---ClientNotification",
        include_str!("../../tests/fixtures/maskbench/data/MCPspec---ClientNotification.json"),
    ),
    (
        "maskbench/Github_easy---o44234",
        include_str!("../../tests/fixtures/maskbench/data/Github_easy---o44234.json"),
    ),
];

/// The viz examples (`examples/viz/*.json`), as sample instances for `spec_load`.
const VIZ_EXAMPLES: &[&str] = &[
    include_str!("../../examples/viz/appendix-a.json"),
    include_str!("../../examples/viz/viz-average-discount-heatmap.json"),
    include_str!("../../examples/viz/viz-monthly-sales-trend-line.json"),
    include_str!("../../examples/viz/viz-sales-profit-treemap.json"),
    include_str!("../../examples/viz/viz-top-cities-customers-table.json"),
];

fn schema_of(text: &str) -> (Value, Vec<Value>) {
    let doc: Value = serde_json::from_str(text).expect("a fixed schema file is JSON");
    match doc.get("schema") {
        Some(schema) => {
            let tests = doc["tests"]
                .as_array()
                .map(|ts| {
                    ts.iter()
                        .filter(|t| t["valid"] == Value::Bool(true))
                        .map(|t| t["data"].clone())
                        .collect()
                })
                .unwrap_or_default();
            (schema.clone(), tests)
        }
        None => (doc, Vec::new()),
    }
}

/// The fixed specs, compiled on first use.
pub fn fixed() -> &'static [Fixed] {
    static FIXED: OnceLock<Vec<Fixed>> = OnceLock::new();
    FIXED.get_or_init(|| {
        SOURCES
            .iter()
            .map(|&(name, text)| {
                let (schema, _) = schema_of(text);
                let spec = compile(&schema, &CompileOptions::default())
                    .unwrap_or_else(|e| panic!("{name} compiles: {e}"));
                let (_, rules) = pest_meta::parse_and_optimize(&spec.grammar_pest())
                    .unwrap_or_else(|e| panic!("{name}: the pest grammar loads: {e:?}"));
                Fixed {
                    name,
                    sites: spec.sites(),
                    spec,
                    pest: pest_vm::Vm::new(rules),
                }
            })
            .collect()
    })
}

/// Sample instances: the viz examples and the valid instances of the MaskBench fixtures.
pub fn instances() -> &'static [Value] {
    static INSTANCES: OnceLock<Vec<Value>> = OnceLock::new();
    INSTANCES.get_or_init(|| {
        let mut out: Vec<Value> = VIZ_EXAMPLES
            .iter()
            .map(|t| serde_json::from_str(t).expect("a viz example is JSON"))
            .collect();
        for &(_, text) in SOURCES {
            out.extend(schema_of(text).1);
        }
        out
    })
}

/// Sample shorthands: each sample instance compressed under each fixed spec that takes it.
pub fn shorthands() -> &'static [String] {
    static TEXTS: OnceLock<Vec<String>> = OnceLock::new();
    TEXTS.get_or_init(|| {
        let mut out = Vec::new();
        for f in fixed() {
            for x in instances() {
                if let Ok(s) = f.spec.compress(x) {
                    out.push(s);
                }
            }
        }
        out
    })
}

/// At most 300 characters of `s`, for panic messages.
pub fn short(s: &str) -> String {
    const MAX: usize = 300;
    if s.chars().count() <= MAX {
        s.to_string()
    } else {
        let head: String = s.chars().take(MAX).collect();
        format!("{head}… ({} bytes)", s.len())
    }
}

/// Whether the check `name` is on: every check is, unless named in `DSS_FUZZ_SKIP`
/// (comma-separated), which lets a long run look past a known failure: `validate` (roundtrip:
/// the schema accepts what expand accepts), `pest` (compress, roundtrip: the pest grammar
/// accepts the text), `reload` (spec_load: the loaded spec's expand reads its compress's output).
pub fn check(name: &str) -> bool {
    static SKIP: OnceLock<Vec<String>> = OnceLock::new();
    !SKIP
        .get_or_init(|| {
            std::env::var("DSS_FUZZ_SKIP")
                .unwrap_or_default()
                .split(',')
                .map(|s| s.trim().to_string())
                .filter(|s| !s.is_empty())
                .collect()
        })
        .iter()
        .any(|s| s == name)
}
