// Temporary dev harness (not committed).
use dss_compiler::{compile, CompileOptions};
use serde_json::Value;
fn main() {
    let dir = std::env::args().nth(1).unwrap();
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    files.sort();
    let (mut ok_s, mut fail_s, mut ok_i, mut fail_i, mut inv_ok, mut inv_bad) = (0, 0, 0, 0, 0, 0);
    let mut shown = 0;
    let t0 = std::time::Instant::now();
    for f in files {
        if f.is_dir() {
            continue;
        }
        let whole: Value = serde_json::from_str(&std::fs::read_to_string(&f).unwrap()).unwrap();
        let groups: Vec<Value> = match whole {
            Value::Array(a) => a,
            v => vec![v],
        };
        for mut v in groups {
            if let Ok(d) = std::env::var("DRAFT") {
                if let Some(o) = v["schema"].as_object_mut() {
                    if !o.contains_key("$schema") {
                        o.insert("$schema".into(), Value::String(d));
                    }
                }
            }
            let schema = &v["schema"];
            let r = std::panic::catch_unwind(|| compile(schema, &CompileOptions::default()));
            let spec = match r {
                Ok(Ok(s)) => {
                    ok_s += 1;
                    s
                }
                Ok(Err(e)) => {
                    fail_s += 1;
                    if shown < 30 {
                        shown += 1;
                        println!("COMPILE {} {}: {e}", f.display(), v["description"]);
                    }
                    continue;
                }
                Err(_) => {
                    fail_s += 1;
                    println!("PANIC compile {}", f.display());
                    continue;
                }
            };
            for t in v["tests"].as_array().unwrap() {
                let data = &t["data"];
                let valid = t["valid"].as_bool().unwrap();
                let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                    let s = spec.compress(data).map_err(|e| format!("compress: {e}"))?;
                    let back = spec.expand(&s).map_err(|e| format!("expand: {e}\n{s}"))?;
                    if !dss_compiler::codec::json_eq(&back, data) {
                        return Err(format!("mismatch\n{s}\n{back}\n{data}"));
                    }
                    let s2 = spec
                        .compress(&back)
                        .map_err(|e| format!("recompress: {e}"))?;
                    if s2 != s {
                        return Err(format!("not canonical\n{s}\n{s2}"));
                    }
                    Ok(s)
                }));
                match (valid, r) {
                    (true, Ok(Ok(_))) => ok_i += 1,
                    (true, Ok(Err(e))) => {
                        fail_i += 1;
                        if shown < 30 {
                            shown += 1;
                            println!(
                                "FAIL {} {} / {}: {}",
                                f.display(),
                                v["description"],
                                t["description"],
                                &e[..e.len().min(600)]
                            );
                        }
                    }
                    (false, Ok(Err(_))) => inv_ok += 1,
                    (false, Ok(Ok(_s))) => {
                        inv_bad += 1;
                    }
                    (_, Err(_)) => {
                        fail_i += 1;
                        println!("PANIC {}", f.display());
                    }
                }
            }
        }
    }
    println!("schemas {ok_s} ok {fail_s} fail; valid {ok_i} ok {fail_i} fail; invalid rejected {inv_ok} accepted {inv_bad}; {:?}", t0.elapsed());
}
