// Temporary dev harness (not committed).
use dss_compiler::{compile, CompileOptions};
use serde_json::Value;
fn main() {
    let schema: Value =
        serde_json::from_str(&std::fs::read_to_string(std::env::args().nth(1).unwrap()).unwrap())
            .unwrap();
    let t0 = std::time::Instant::now();
    let spec = compile(&schema, &CompileOptions::default()).unwrap();
    println!(
        "compile {:?} exprs {}",
        t0.elapsed(),
        spec.shapes().exprs.len()
    );
    let t0 = std::time::Instant::now();
    let g = spec.grammar_gbnf();
    println!("gbnf {} bytes {:?}", g.len(), t0.elapsed());
    let b = spec.grammar_bnf();
    println!("bnf {} bytes", b.len());
    std::fs::write("/tmp/vl.bnf", &b).unwrap();
    std::fs::write("/tmp/vl.gbnf", &g).unwrap();
    let dir = std::env::args().nth(2).unwrap();
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    files.sort();
    let (mut ok, mut fail, mut tj, mut ts) = (0, 0, 0usize, 0usize);
    for f in files {
        let v: Value = serde_json::from_str(&std::fs::read_to_string(&f).unwrap()).unwrap();
        let r = (|| {
            let s = spec.compress(&v).map_err(|e| format!("compress: {e}"))?;
            let back = spec.expand(&s).map_err(|e| format!("expand: {e}\n{s}"))?;
            if !dss_compiler::codec::json_eq(&back, &v) {
                return Err(format!("mismatch\n{s}"));
            }
            let s2 = spec
                .compress(&back)
                .map_err(|e| format!("recompress: {e}"))?;
            if s2 != s {
                return Err(format!("not canonical\n{s}\n{s2}"));
            }
            Ok(s)
        })();
        match r {
            Ok(s) => {
                ok += 1;
                tj += serde_json::to_string(&v).unwrap().len();
                ts += s.len();
                if ok == 3 {
                    println!("{}\n{s}", serde_json::to_string(&v).unwrap());
                }
            }
            Err(e) => {
                fail += 1;
                if fail < 8 {
                    println!("FAIL {}: {}", f.display(), &e[..e.len().min(700)]);
                }
            }
        }
    }
    println!("ok {ok} fail {fail} chars json {tj} dss {ts}");
}
