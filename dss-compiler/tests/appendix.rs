//! The DSS paper's Appendix A spec, compressed with the notation dss derives from
//! `specs/viz.schema.json`, is at most as long as the paper's hand-designed Appendix B.

use dss_compiler::{compile, CompileOptions};
use serde_json::Value;
use std::path::Path;

/// Appendix B of the DSS paper, verbatim (the paper reports 66 tokens for it).
const APPENDIX_B: &str = "fields:
cd \"Order Date\" month x
cm \"Sales\" sum
filters:
cat \"ProductName\" values \"Product A\" \"Product B\"
rd \"Order Date\" 2 years
nr \"Sales\" sum start 1000 end 10000
sort:
\"Sales\" sum desc 5 \"Region\"
";

/// Appendix B is lossy: it leaves out Appendix A's Region filter and both `dataType`s, and
/// writes the field `Product Name` as `ProductName`. The same notation, completed and
/// corrected, carries what Appendix A carries.
const APPENDIX_B_COMPLETE: &str = "fields:
cd \"Order Date\" month x date
cm \"Sales\" sum number
filters:
cat \"Product Name\" values \"Product A\" \"Product B\"
cat \"Region\" values \"South\" \"West\"
rd \"Order Date\" 2 years
nr \"Sales\" sum start 1000 end 10000
sort:
\"Sales\" sum desc 5 \"Region\"
";

fn read(rel: &str) -> Value {
    let p = Path::new(env!("CARGO_MANIFEST_DIR")).join("..").join(rel);
    serde_json::from_str(
        &std::fs::read_to_string(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display())),
    )
    .unwrap_or_else(|e| panic!("{}: {e}", p.display()))
}

#[test]
fn appendix_a_is_as_short_as_appendix_b() {
    let spec = compile(&read("specs/viz.schema.json"), &CompileOptions::default())
        .expect("compile viz schema");
    let a = read("examples/viz/appendix-a.json");
    let ours = spec.compress(&a).expect("Appendix A is valid");
    assert_eq!(spec.expand(&ours).expect("expand"), a, "exact round trip");
    let pretty = serde_json::to_string_pretty(&a).expect("json");
    let compact = serde_json::to_string(&a).expect("json");
    println!("dss shorthand of Appendix A:\n{ours}");
    for (name, bpe) in [
        ("o200k", tiktoken_rs::o200k_base()),
        ("cl100k", tiktoken_rs::cl100k_base()),
    ] {
        let bpe = bpe.expect("tokenizer");
        let n = |s: &str| bpe.encode_with_special_tokens(s).len();
        println!(
            "{name}: pretty JSON {} tokens, compact JSON {}, paper's Appendix B {} (lossy), \
             Appendix B completed {}, dss {} (exact)",
            n(&pretty),
            n(&compact),
            n(APPENDIX_B),
            n(APPENDIX_B_COMPLETE),
            n(&ours)
        );
        assert!(
            n(&ours) <= n(APPENDIX_B_COMPLETE),
            "{name}: dss {} > completed Appendix B {}",
            n(&ours),
            n(APPENDIX_B_COMPLETE)
        );
        assert!(
            n(&ours) * 3 < n(&pretty),
            "{name}: at least 3x fewer tokens than pretty JSON"
        );
    }
}
