//! The differential target. Arbitrary bytes as shorthand text under each fixed spec; whatever
//! `expand` accepts, the schema accepts (the spec's validator), the emitted pest grammar
//! accepts (given the final newline `expand` lets a document leave out), and `compress` gives back: `expand(compress(v)) == v`, and compressing again
//! gives the same shorthand.
#![no_main]

use dss_fuzz::{check, fixed, json_eq, short};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    for f in fixed() {
        let Ok(v) = f.spec.expand(text) else {
            continue;
        };
        if let Err(e) = f.spec.validate(&v) {
            if !check("validate") {
                continue;
            }
            panic!(
                "roundtrip [{}]: expand accepted text whose JSON the schema rejects: {e}\ntext: {}\njson: {}",
                f.name,
                short(text),
                short(&v.to_string())
            );
        }
        let s = f.spec.compress(&v).unwrap_or_else(|e| {
            panic!(
                "roundtrip [{}]: compress rejects expand's output: {e}\ntext: {}",
                f.name,
                short(text)
            )
        });
        let back = f.spec.expand(&s).unwrap_or_else(|e| {
            panic!(
                "roundtrip [{}]: expand rejects compress's output: {e}",
                f.name
            )
        });
        assert!(
            json_eq(&back, &v),
            "roundtrip [{}]: expand(compress(v)) != v\ntext: {}",
            f.name,
            short(text)
        );
        let again = f.spec.compress(&back).unwrap_or_else(|e| {
            panic!(
                "roundtrip [{}]: compress rejects its own round trip: {e}",
                f.name
            )
        });
        assert_eq!(
            again, s,
            "roundtrip [{}]: compress not a fixed point",
            f.name
        );
        assert!(
            !check("pest") || f.pest_accepts_read(text),
            "roundtrip [{}]: expand accepted text the pest grammar rejects\ntext: {}",
            f.name,
            short(text)
        );
    }
});
