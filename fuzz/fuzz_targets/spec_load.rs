//! Arbitrary bytes as a `spec.json`. If it loads: every grammar, the notation YAML and the
//! sites are built; the sample instances are compressed and the sample shorthands expanded
//! and read as partial documents. Never a panic, an abort or a hang, and whatever the
//! loaded spec's compress writes, its expand reads back to the same JSON.
#![no_main]

use dss_compiler::CompiledSpec;
use dss_fuzz::{check, instances, json_eq, short, shorthands};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let Ok(spec) = CompiledSpec::from_json(text) else {
        return;
    };
    let _ = spec.artifacts();
    let _ = spec.notation_yaml();
    let sites = spec.sites();
    for x in instances() {
        let Ok(s) = spec.compress(x) else {
            continue;
        };
        match spec.expand(&s) {
            Ok(v) => assert!(
                json_eq(&v, x),
                "spec_load: expand(compress(x)) != x under the loaded spec\n{}",
                short(&s)
            ),
            Err(_) if !check("reload") => {}
            Err(e) => panic!(
                "spec_load: the loaded spec's expand rejects its compress's output: {e}\n{}",
                short(&s)
            ),
        }
    }
    for s in shorthands() {
        let _ = spec.expand(s);
        let _ = spec.progress(s, &sites);
    }
});
