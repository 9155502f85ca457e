//! Arbitrary bytes as a JSON instance, compressed under each fixed spec. Where compress
//! accepts it: expand gives the instance back (by value), compressing that gives the same
//! shorthand, and the spec's pest grammar accepts the shorthand.
#![no_main]

use dss_fuzz::{check, fixed, json_eq, short};
use libfuzzer_sys::fuzz_target;
use serde_json::Value;

fuzz_target!(|data: &[u8]| {
    let Ok(x) = serde_json::from_slice::<Value>(data) else {
        return;
    };
    for f in fixed() {
        let Ok(s) = f.spec.compress(&x) else {
            continue;
        };
        let back = f.spec.expand(&s).unwrap_or_else(|e| {
            panic!(
                "compress [{}]: expand rejects compress's output: {e}\n{}",
                f.name,
                short(&s)
            )
        });
        assert!(
            json_eq(&back, &x),
            "compress [{}]: expand(compress(x)) != x\n{}",
            f.name,
            short(&s)
        );
        let again = f
            .spec
            .compress(&back)
            .unwrap_or_else(|e| panic!("compress [{}]: expand's output rejected: {e}", f.name));
        assert_eq!(again, s, "compress [{}]: not a fixed point", f.name);
        assert!(
            !check("pest") || f.pest_accepts(&s),
            "compress [{}]: the pest grammar rejects compress's output\n{}",
            f.name,
            short(&s)
        );
    }
});
