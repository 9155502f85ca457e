//! Arbitrary bytes as shorthand text, expanded under each fixed spec, and read as a partly
//! written document (`CompiledSpec::progress`). Never a panic, an abort or a hang.
#![no_main]

use dss_fuzz::fixed;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    for f in fixed() {
        let _ = f.spec.expand(text);
        let _ = f.spec.progress(text, &f.sites);
    }
});
