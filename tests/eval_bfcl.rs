//! `dss eval import bfcl` on the BFCL fixture (tests/fixtures/bfcl: seven `live_simple`
//! questions), then hand-written outputs scored by the suite's own rule (`bfcl-ast`) and by
//! exact match, through the library as `dss eval` scores them.

use dss_eval::score::{em, em_paper_case};
use dss_eval::{PaperRule, Suite};
use serde_json::{json, Value};
use std::path::Path;
use std::process::Command;

const DSS: &str = env!("CARGO_BIN_EXE_dss");
const WORKSPACE: &str = env!("CARGO_MANIFEST_DIR");

fn import(out: &Path) -> String {
    let dir = Path::new(WORKSPACE).join("tests/fixtures/bfcl");
    let o = Command::new(DSS)
        .args(["eval", "import", "bfcl"])
        .arg(dir.join("BFCL_v4_live_simple.json"))
        .arg("--answers")
        .arg(dir.join("possible_answer_BFCL_v4_live_simple.json"))
        .arg("-o")
        .arg(out)
        .output()
        .expect("dss runs");
    let stdout = String::from_utf8_lossy(&o.stdout).to_string();
    assert!(
        o.status.success(),
        "{stdout}\n{}",
        String::from_utf8_lossy(&o.stderr)
    );
    stdout
}

#[test]
fn bfcl_import_then_score_hand_written_outputs() {
    let dir = tempfile::tempdir().expect("tempdir");
    let suite_dir = dir.path().join("bfcl-live-simple");
    let stdout = import(&suite_dir);
    assert!(stdout.starts_with("imported 7 cases"), "{stdout}");
    // One schema per case: no shared schema.json.
    assert!(!suite_dir.join("schema.json").exists());
    let suite = Suite::load(&suite_dir).expect("the suite loads");
    assert_eq!(suite.meta.name, "bfcl-live-simple");
    assert_eq!(suite.meta.scoring.paper, PaperRule::BfclAst);
    assert!(
        suite.meta.license.contains("Apache"),
        "{}",
        suite.meta.license
    );
    let case = |id: &str| {
        suite
            .cases
            .iter()
            .find(|c| c.id == id)
            .unwrap_or_else(|| panic!("case {id}"))
    };
    // BFCL's `float` is `number`, `dict` is `object`; the request is the user's message only.
    let sum = case("live_simple_68-32-0");
    assert_eq!(
        sum.tools.as_ref().expect("tools")[0]["parameters"]["properties"]["a"]["type"],
        "number"
    );
    assert_eq!(sum.gold, json!([{"sum": {"a": 5.0, "b": 3.0}}]));
    let thinq = case("live_simple_40-17-0");
    assert_eq!(
        thinq.tools.as_ref().expect("tools")[0]["parameters"]["properties"]["body"]["type"],
        "object"
    );
    // Optional members whose first acceptable value is "" are left out of the gold.
    assert_eq!(
        thinq.gold,
        json!([{"ThinQ_Connect": {"body": {"airConJobMode": "AIR_CLEAN", "windStrength": "HIGH", "monitoringEnabled": true, "airCleanOperationMode": "POWER_ON"}}}])
    );
    let pro = case("live_simple_183-108-0");
    assert_eq!(
        pro.request,
        "find profressional cleaning in Bangkok with rating 2.0 or higher"
    );
    assert_eq!(
        pro.extra["system"],
        "Please act like the current date is 2024/02/21"
    );

    // Every gold passes both rules.
    for c in &suite.cases {
        assert!(em(&c.gold, &c.gold, &suite.meta.scoring), "{}", c.id);
        assert!(em_paper_case(&c.gold, c, &suite.meta.scoring), "{}", c.id);
    }

    // Hand-written outputs: (id, output, passes bfcl-ast, exact match).
    let outputs: Vec<(&str, Value, bool, bool)> = vec![
        // Strings compare case-insensitively.
        (
            "live_simple_0-0-0",
            json!([{"get_user_info": {"user_id": 7890, "special": "Black"}}]),
            true,
            false,
        ),
        // ... and without spaces and `,./-_*^`.
        (
            "live_simple_2-2-0",
            json!([{"uber.ride": {"loc": "2020 Addison Street Berkeley CA USA", "type": "Comfort", "time": 600}}]),
            true,
            false,
        ),
        // A required parameter left out.
        (
            "live_simple_3-2-1",
            json!([{"uber.ride": {"loc": "221B Baker Street, Berkeley, CA, USA", "type": "plus"}}]),
            false,
            false,
        ),
        // A list keeps its order.
        (
            "live_simple_27-7-0",
            json!([{"uber.eat.order": {"restaurant": "Uber Pitada", "items": ["chicken wings", "burgers"], "quantities": [6, 5]}}]),
            false,
            false,
        ),
        // A dict's members standardized; optional members may be left out.
        (
            "live_simple_40-17-0",
            json!([{"ThinQ_Connect": {"body": {"airConJobMode": "air clean", "windStrength": "HIGH", "monitoringEnabled": true, "airCleanOperationMode": "POWER_ON", "targetTemperature": 22}}}]),
            true,
            false,
        ),
        // An int for a float.
        (
            "live_simple_68-32-0",
            json!([{"sum": {"a": 5, "b": 3}}]),
            true,
            true,
        ),
        // A value none of the acceptable ones.
        (
            "live_simple_183-108-0",
            json!([{"getDataForProfessional": {"avg_rating": 2.0, "province_id": 1, "service_id": 1, "districts_name": "Chiang Mai"}}]),
            false,
            false,
        ),
    ];
    assert_eq!(outputs.len(), suite.cases.len());
    let mut passed = 0;
    for (id, output, ast, exact) in &outputs {
        let c = case(id);
        assert_eq!(
            em_paper_case(output, c, &suite.meta.scoring),
            *ast,
            "bfcl-ast {id}"
        );
        assert_eq!(em(output, &c.gold, &suite.meta.scoring), *exact, "em {id}");
        passed += usize::from(*ast);
    }
    assert_eq!(passed, 4);
    // Two calls where the answer has one.
    let twice = json!([{"sum": {"a": 5, "b": 3}}, {"sum": {"a": 5, "b": 3}}]);
    assert!(!em_paper_case(&twice, sum, &suite.meta.scoring));
}

/// The bundled parallel-calls suite loads; each gold is a valid list of calls of its own
/// tools that round-trips through the notation, and BFCL's AST rule accepts it against
/// the case's acceptable values.
#[test]
fn the_parallel_calls_suite_scores_its_golds_right() {
    let dir = Path::new(WORKSPACE).join("examples/eval/tools-parallel");
    let suite = Suite::load(&dir).expect("the suite loads");
    assert_eq!(suite.meta.scoring.paper, PaperRule::BfclAst);
    assert!(suite.cases.len() >= 16, "{}", suite.cases.len());
    assert!(
        suite
            .cases
            .iter()
            .filter(|c| c.gold.as_array().is_some_and(|a| a.len() > 1))
            .count()
            >= 10,
        "most cases ask for several calls"
    );
    for case in &suite.cases {
        let schema = suite
            .schema_of(case)
            .expect("the case's tools compile to a schema");
        let spec = dss_compiler::compile(schema, &Default::default()).expect("compiles");
        spec.validate(&case.gold)
            .unwrap_or_else(|e| panic!("{}: {e}", case.id));
        let text = spec
            .compress(&case.gold)
            .unwrap_or_else(|e| panic!("{}: {e}", case.id));
        assert_eq!(
            spec.expand(&text).expect("expands"),
            case.gold,
            "{}",
            case.id
        );
        assert!(
            em_paper_case(&case.gold, case, &suite.meta.scoring),
            "{}: its gold is not accepted",
            case.id
        );
        assert!(
            em(&case.gold, &case.gold, &suite.meta.scoring),
            "{}",
            case.id
        );
    }
}
