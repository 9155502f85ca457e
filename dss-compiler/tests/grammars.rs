//! `grammars/` holds the compiled outputs of the bundled `specs/`; they must match what
//! this compiler produces. Regenerate with:
//!     DSS_BLESS=1 cargo test -p dss-compiler --test grammars

use dss_compiler::{compile, CompileOptions, CompiledSpec, NotationConfig, NotationStyle};
use std::path::Path;

#[test]
fn bundled_grammars_are_fresh() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let bless = std::env::var_os("DSS_BLESS").is_some();
    let mut specs: Vec<_> = std::fs::read_dir(root.join("specs"))
        .expect("specs/")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.to_string_lossy().ends_with(".schema.json"))
        .collect();
    specs.sort();
    assert!(!specs.is_empty(), "no bundled specs");
    let mut stale = Vec::new();
    for schema_path in specs {
        let name = schema_path
            .file_name()
            .and_then(|n| n.to_str())
            .unwrap_or("")
            .trim_end_matches(".schema.json")
            .to_string();
        let schema =
            serde_json::from_str(&std::fs::read_to_string(&schema_path).expect("read schema"))
                .expect("schema JSON");
        let spec =
            compile(&schema, &CompileOptions::default()).unwrap_or_else(|e| panic!("{name}: {e}"));
        // Its spec.json loads back, also under the explicit style and under its own
        // notation YAML (`dss init`): the load's check designs each notation again.
        for notation in [
            None,
            Some(NotationConfig::with_style(NotationStyle::Explicit)),
            Some(NotationConfig::with_style(NotationStyle::Named)),
            Some(serde_norway::from_str(&spec.notation_yaml().expect("yaml")).expect("yaml")),
        ] {
            let again = compile(
                &schema,
                &CompileOptions {
                    notation,
                    ..Default::default()
                },
            )
            .unwrap_or_else(|e| panic!("{name}: {e}"));
            let text = again.to_json().expect("spec.json");
            let back = CompiledSpec::from_json(&text).unwrap_or_else(|e| panic!("{name}: {e}"));
            assert_eq!(back.to_json().expect("spec.json"), text, "{name}");
        }
        let dir = root.join("grammars").join(&name);
        if !bless {
            let saved = std::fs::read_to_string(dir.join("spec.json")).unwrap_or_default();
            if let Err(e) = CompiledSpec::from_json(&saved) {
                stale.push(format!("grammars/{name}/spec.json does not load: {e}"));
            }
        }
        for (file, fresh) in spec.artifacts().expect("artifacts") {
            let path = dir.join(file);
            if bless {
                std::fs::create_dir_all(&dir).expect("create grammars dir");
                std::fs::write(&path, &fresh).expect("write");
                println!("wrote {}", path.display());
            } else if std::fs::read_to_string(&path).ok().as_deref() != Some(fresh.as_str()) {
                stale.push(format!("grammars/{name}/{file}"));
            }
        }
    }
    assert!(
        stale.is_empty(),
        "stale or missing: {}\nregenerate with: DSS_BLESS=1 cargo test -p dss-compiler --test grammars",
        stale.join(", ")
    );
}

/// Every bundled `spec.json` follows the published schema of the format
/// (`docs/reference/spec.schema.json`), as does a spec of tool definitions under edits.
#[test]
fn spec_files_follow_their_schema() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let read = |path: &Path| -> serde_json::Value {
        let text =
            std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
    };
    let schema = read(&root.join("docs/reference/spec.schema.json"));
    let validator = jsonschema::validator_for(&schema).expect("the spec.json schema compiles");
    let mut files = Vec::new();
    for entry in std::fs::read_dir(root.join("grammars")).expect("grammars/") {
        let path = entry.expect("grammars/ entry").path().join("spec.json");
        if path.is_file() {
            files.push((path.display().to_string(), read(&path)));
        }
    }
    assert!(files.len() >= 2, "bundled spec.json files: {}", files.len());
    let tools = serde_json::json!([{"type": "function", "function": {"name": "get_weather",
        "parameters": {"type": "object", "required": ["city"],
            "properties": {"city": {"type": "string"}, "unit": {"enum": ["c", "f"]}}}}}]);
    let tool_spec = compile(&tools, &CompileOptions::default()).expect("tools compile");
    let yaml = tool_spec.notation_yaml().expect("yaml");
    let edited = compile(
        &tools,
        &CompileOptions {
            notation: Some(serde_norway::from_str(&yaml).expect("yaml")),
            ..Default::default()
        },
    )
    .expect("tools compile under their YAML");
    for (what, spec) in [("tools", &tool_spec), ("edited tools", &edited)] {
        let text = spec.to_json().expect("spec.json");
        files.push((what.into(), serde_json::from_str(&text).expect("JSON")));
    }
    for (what, file) in &files {
        let errors: Vec<String> = validator
            .iter_errors(file)
            .map(|e| format!("{}: {e}", e.instance_path()))
            .collect();
        assert!(errors.is_empty(), "{what}: {errors:?}");
    }
    // And a file the format does not describe is not valid.
    let mut bad = files[0].1.clone();
    bad["shapes"] = serde_json::json!({});
    assert!(!validator.is_valid(&bad));
}
