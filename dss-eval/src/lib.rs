//! Evaluation suites for dss: the suite format, importers and the scorer (the model-free
//! part of `dss eval`).
//!
//! # The suite format
//!
//! A suite is a folder:
//!
//! | file | required | content |
//! |---|---|---|
//! | `suite.yaml` | yes | `name`, `source`, `license`, `notes` (a list of lines), `scoring`: `unordered` (instance path patterns of arrays compared as multisets by `em`; `""` is the root) and `paper` (`call-set`, `sorted-orders`, `bfcl-ast` or `em`: the rule of `em_paper`) |
//! | `schema.json` | yes, unless every case carries `tools` | the JSON Schema every gold validates against |
//! | `catalogs.yaml` | no | instance path pattern -> list of values (JSON scalars) |
//! | `aliases.yaml` | no | instance path pattern -> {value: [phrases naming it]} |
//! | `cases.jsonl` | yes | one `{"id": "...", "request": "...", "gold": <JSON>}` per line, optionally `tools` and `acceptable` (below), plus any other fields (kept) |
//! | `examples.jsonl` | no | worked examples in the same format; none may share an id or a request with a case, and `dss eval` refuses one near a case ([`similar`]) |
//!
//! Path patterns are JSON Pointers in which `*` stands for any array index:
//! `/*/atis_airfare/departure_city`, `/*/main_dish/toppings/*/name`. Aliases are keyed by the
//! value as text (numbers in decimal). [`Suite::load`] reports errors with the file and line.
//!
//! **A case with its own schema.** A case may carry its own tool set, `"tools": [{"name",
//! "description", "parameters"}, …]` (an OpenAI-style function list, JSON Schema types): its
//! gold and outputs are then lists of calls of those tools, `[{"<tool>": {<arguments>}}]`,
//! compiled as `dss compile` compiles tool definitions, instead of against `schema.json`
//! ([`Suite::schema_of`]). A suite whose every case carries tools needs no `schema.json`,
//! and has no shared catalogs; `dss eval` compiles each distinct tool set once
//! ([`SpecCache`]). `"acceptable"` holds what the suite's scoring reads beside the gold (BFCL's
//! ground truth for `paper: bfcl-ast`).
//!
//! # Importers
//! - [`import_apimix`]: APIMixATIS / APIMixSNIPS (see [`apimix`] for the JSON shape).
//! - [`import_food_ordering`]: any venue in Amazon's FoodOrdering layout (see [`food`]).
//! - [`import_bfcl`]: Berkeley Function Calling Leaderboard questions and answers, one case
//!   with its own tools per question (see [`bfcl`]).
//!
//! Each writes the suite folder and returns an [`ImportSummary`]; before writing it checks
//! with dss that the schema compiles and that every gold validates, compresses and expands
//! back equal.
//!
//! # Scoring
//! [`score::em`], [`score::em_paper`] ([`score::em_paper_case`] for a rule that reads a
//! case's acceptable answers, as [`bfcl_ast`] does), NER counts ([`score::NerCounts`]) and the
//! [`report::Report`] of a run (JSON, table, CSV).

pub mod apimix;
pub mod bfcl;
pub mod bfcl_ast;
pub mod error;
pub mod food;
pub mod pycall;
pub mod report;
pub mod score;
pub mod sexpr;
pub mod similar;
pub mod suite;

pub use apimix::{import_apimix, import_apimix_with, Slots};
pub use bfcl::import_bfcl;
pub use error::{EvalError, Result};
pub use food::import_food_ordering;

pub use report::{ConditionResult, NerReport, Report, RunInfo};
pub use suite::{Case, PaperRule, Scoring, Suite, SuiteMeta};

use std::path::Path;

/// What an importer did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ImportSummary {
    /// Number of cases written.
    pub cases: usize,
    /// Source records that were repaired, one line each (file, record, what was done).
    pub repairs: Vec<String>,
    /// The notes written to `suite.yaml`.
    pub notes: Vec<String>,
}

/// Puts the worked examples of `file` (JSON Lines of `{"id", "request", "gold"}`) into
/// the suite at `suite_dir` as its `examples.jsonl`, after checking that each validates,
/// round-trips through dss, and is none of the evaluated cases nor near one
/// ([`similar::check`]; `allow_similar` skips that check). Returns how many.
pub fn attach_examples(suite_dir: &Path, file: &Path, allow_similar: bool) -> Result<usize> {
    let mut suite = Suite::load(suite_dir)?;
    let examples = suite::read_cases(file)?;
    suite::check_examples(&suite.cases, &examples, file)?;
    if !allow_similar {
        similar::check(&suite.cases, &examples, file)?;
    }
    suite.examples = examples;
    check_with_dss(&suite, suite_dir)?;
    suite.write(suite_dir)?;
    Ok(suite.examples.len())
}

/// An importer's last step: checks every gold with dss, writes the suite to `out`, and
/// says what was imported.
fn finish_import(suite: &Suite, out: &Path, repairs: Vec<String>) -> Result<ImportSummary> {
    check_with_dss(suite, out)?;
    suite.write(out)?;
    Ok(ImportSummary {
        cases: suite.cases.len(),
        repairs,
        notes: suite.meta.notes.clone(),
    })
}

/// Compiles the suite's schema with dss (or each case's own `tools`, each distinct tool set
/// once) and checks every gold and worked example: it validates, compresses, and expands
/// back equal. `out` names the suite in errors.
pub fn check_with_dss(suite: &Suite, out: &Path) -> Result<()> {
    let mut specs = SpecCache::default();
    for (file, cases) in [
        ("cases.jsonl", &suite.cases),
        ("examples.jsonl", &suite.examples),
    ] {
        for c in cases {
            let err = |m: String| EvalError::Dss {
                path: out.join(file),
                message: format!("case `{}`: {m}", c.id),
            };
            let Some(schema) = suite.schema_of(c) else {
                return Err(err(
                    "no schema: the suite has no schema.json and the case no `tools`".into(),
                ));
            };
            let spec = specs.get(schema, None).map_err(|e| match &c.tools {
                Some(_) => err(format!("its tools do not compile: {e}")),
                None => EvalError::Dss {
                    path: out.join("schema.json"),
                    message: format!("the schema does not compile: {e}"),
                },
            })?;
            let text = spec
                .compress(&c.gold)
                .map_err(|e| err(format!("the gold does not compress: {e}")))?;
            let back = spec
                .expand(&text)
                .map_err(|e| err(format!("the shorthand {text:?} does not expand: {e}")))?;
            if back != c.gold {
                return Err(err(format!(
                    "the shorthand {text:?} expands to {back}, not the gold"
                )));
            }
        }
    }
    Ok(())
}

/// Compiled specs by the content of their schema (a suite's `schema.json`, or a case's own
/// `tools`), so that identical tool sets compile once.
#[derive(Default)]
pub struct SpecCache {
    specs: std::collections::HashMap<String, std::sync::Arc<dss_compiler::CompiledSpec>>,
}

impl SpecCache {
    /// The spec of `schema` (a JSON Schema or tool definitions) compiled with `notation`,
    /// compiled on the first request for this content and notation.
    pub fn get(
        &mut self,
        schema: &serde_json::Value,
        notation: Option<&dss_compiler::NotationConfig>,
    ) -> std::result::Result<
        std::sync::Arc<dss_compiler::CompiledSpec>,
        dss_compiler::error::CompileError,
    > {
        let key = format!(
            "{}\u{0}{}",
            schema,
            notation
                .and_then(|n| serde_norway::to_string(n).ok())
                .unwrap_or_default()
        );
        if let Some(spec) = self.specs.get(&key) {
            return Ok(spec.clone());
        }
        let spec = std::sync::Arc::new(dss_compiler::compile(
            schema,
            &dss_compiler::CompileOptions {
                notation: notation.cloned(),
                ..Default::default()
            },
        )?);
        self.specs.insert(key, spec.clone());
        Ok(spec)
    }

    /// How many distinct specs were compiled.
    pub fn len(&self) -> usize {
        self.specs.len()
    }

    /// Whether nothing was compiled yet.
    pub fn is_empty(&self) -> bool {
        self.specs.is_empty()
    }
}

/// The license named by the folder's `LICENSE` file (its first non-empty line), or `unknown`.
pub(crate) fn read_license(dir: &Path) -> String {
    std::fs::read_to_string(dir.join("LICENSE"))
        .ok()
        .and_then(|t| {
            t.lines()
                .map(str::trim)
                .find(|l| !l.is_empty())
                .map(str::to_string)
        })
        .unwrap_or_else(|| "unknown".into())
}

#[cfg(test)]
pub(crate) mod testdata {
    use super::*;
    use std::path::PathBuf;

    /// The data directory ([`dss_data::data_dir`]) when it holds the full corpora, which
    /// these tests' figures are of; `None` when it does not (the running test's skip is
    /// recorded by [`dss_data::skip`]), unless `CI=true` ([`dss_data::Policy`]), then it
    /// panics.
    pub(crate) fn data_dir() -> Option<PathBuf> {
        let dir = dss_data::data_dir();
        if dir.join("SOURCES.md").exists() || dir.join("APIMixSNIPS").exists() {
            return Some(dir);
        }
        if dss_data::under_ci() {
            panic!("data folder {} is missing (CI=true)", dir.display());
        }
        dss_data::skip(
            &dss_data::current_test(),
            &format!(
                "the full data is missing: no data folder {} (these tests check figures of \
                 the full corpora; set DSS_DATA_DIR to the data directory)",
                dir.display()
            ),
        );
        None
    }

    /// The worked examples shipped in `examples/eval/` attach to the suites they are for:
    /// each validates and round-trips, and none is near an evaluated case (the coffee
    /// examples are checked against the coffee requests written here, too).
    #[test]
    fn the_shipped_examples_are_valid_and_far_from_every_case() {
        let Some(data) = data_dir() else { return };
        let examples = Path::new(env!("CARGO_MANIFEST_DIR")).join("../examples/eval");
        for (file, source) in [
            ("apimix-atis", "APIMixATIS"),
            ("apimix-snips", "APIMixSNIPS"),
            ("food-burger", "FoodOrdering_amazon/data/burger"),
            ("food-coffee", "FoodOrdering_grammar_pruning/data/coffee"),
        ] {
            let out = tempfile::tempdir().unwrap();
            if file.starts_with("apimix") {
                import_apimix(&data.join(source), out.path()).unwrap();
            } else {
                import_food_ordering(&data.join(source), out.path()).unwrap();
            }
            let ex = examples.join(format!("{file}.examples.jsonl"));
            assert_eq!(
                attach_examples(out.path(), &ex, false).unwrap(),
                3,
                "{file}"
            );
            let suite = Suite::load(out.path()).unwrap();
            assert_golds_round_trip(&suite);
        }
        let cases = suite::read_cases(&examples.join("food-coffee.cases.jsonl")).unwrap();
        let ex = suite::read_cases(&examples.join("food-coffee.examples.jsonl")).unwrap();
        assert_eq!(
            similar::similar_pairs(&cases, &ex, similar::THRESHOLD),
            vec![]
        );
    }

    /// A worked example near a case is refused when attached, unless allowed.
    #[test]
    fn attaching_a_near_example_is_refused_unless_allowed() {
        let Some(data) = data_dir() else { return };
        let out = tempfile::tempdir().unwrap();
        import_food_ordering(&data.join("FoodOrdering_amazon/data/burger"), out.path()).unwrap();
        let suite = Suite::load(out.path()).unwrap();
        // The first case's request with one word more: near, but not the same request.
        let case = &suite.cases[0];
        let near = Case {
            tools: None,
            acceptable: None,
            id: "ex-1".into(),
            request: format!("{} please", case.request),
            gold: case.gold.clone(),
            extra: Default::default(),
        };
        let file = out.path().join("near.jsonl");
        std::fs::write(&file, serde_json::to_string(&near).unwrap() + "\n").unwrap();
        let e = attach_examples(out.path(), &file, false).unwrap_err();
        assert!(matches!(e, EvalError::SimilarExample { .. }), "{e}");
        let e = e.to_string();
        assert!(
            e.contains("`ex-1`") && e.contains(&format!("`{}`", case.id)),
            "{e}"
        );
        assert_eq!(attach_examples(out.path(), &file, true).unwrap(), 1);
    }

    /// Every gold validates against the suite's schema and compresses and expands back equal.
    pub(crate) fn assert_golds_round_trip(suite: &Suite) {
        let mut specs = SpecCache::default();
        for c in suite.cases.iter().chain(&suite.examples) {
            let spec = specs.get(suite.schema_of(c).unwrap(), None).unwrap();
            spec.validate(&c.gold)
                .unwrap_or_else(|e| panic!("{}: {e}", c.id));
            let text = spec
                .compress(&c.gold)
                .unwrap_or_else(|e| panic!("{}: {e}", c.id));
            assert_eq!(spec.expand(&text).unwrap(), c.gold, "{}: {text}", c.id);
        }
    }
}
