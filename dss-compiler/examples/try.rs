use dss_compiler::{compile, CompileOptions};
fn main() {
    let args: Vec<String> = std::env::args().collect();
    let schema: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&args[1]).unwrap()).unwrap();
    let spec = compile(&schema, &CompileOptions::default()).unwrap();
    if args.len() > 3 && args[3] == "g" { println!("{}", spec.grammar_bnf()); println!("{}", spec.notation_yaml()); println!("{}", spec.grammar_gbnf()); }
    for f in &args[2..3] {
        let v: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(f).unwrap()).unwrap();
        let s = spec.compress(&v).unwrap();
        print!("{s}");
        let back = spec.expand(&s).unwrap();
        assert_eq!(back, v);
        println!("roundtrip ok");
    }
}
