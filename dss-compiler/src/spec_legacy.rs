//! Versions 1 and 2 of `spec.json`, which saved the schema's shapes and the designed
//! notation beside the schema, converted to the current version as they are read
//! ([`convert`]). The shapes are not read: they are built again from the schema. The
//! notation settings, which those versions did not save, are found: the automatic styles
//! first, then the edits the saved notation reads back as; the first that designs exactly
//! the saved notation again is the converted file's. A saved notation no settings design
//! (edited by hand, or written by a dss that designed differently) is refused.

use crate::error::SpecError;
use crate::grammar::terminal::bare_len;
use crate::notation::{
    self, FieldMode, First, Notation, NotationConfig, NotationStyle, ObjLayout, RecordLayout,
    RootLayout,
};
use crate::shape::{ExprId, Shapes};
use crate::spec::{Built, SpecFile, SPEC_VERSION};
use serde::Deserialize;
use serde_json::Value;
use std::collections::BTreeSet;

/// What a version-1 or version-2 file holds that is read: its schema and the notation it
/// saved (as JSON, compared with the notation designed again).
#[derive(Deserialize)]
struct Saved {
    schema: Value,
    notation: Value,
}

/// The version-[`SpecFile::VERSION`] form of a version-`found` (1 or 2) file, and what it
/// builds.
pub(crate) fn convert(found: u32, text: &str) -> Result<(SpecFile, Built), SpecError> {
    let unconvertible = |reason: String| SpecError::Unconvertible {
        found,
        expected: SPEC_VERSION,
        reason,
    };
    let Saved {
        mut schema,
        notation: saved,
    } = serde_json::from_str(text)
        .map_err(|e| SpecError::Format(format!("not a dss spec.json: {e}")))?;
    let (shapes, warnings) = Built::shapes_of(&mut schema)
        .map_err(|e| unconvertible(format!("its schema does not compile: {e}")))?;
    let designs = |config: &NotationConfig| {
        notation::design(&shapes, Some(config))
            .ok()
            .filter(|n| serde_json::to_value(n).ok().as_ref() == Some(&saved))
    };
    let styles = [
        NotationStyle::Compact,
        NotationStyle::Explicit,
        NotationStyle::Named,
    ];
    let automatic = styles.into_iter().flat_map(|style| {
        [false, true].map(|name_calls| NotationConfig {
            name_calls,
            ..NotationConfig::with_style(style)
        })
    });
    let found_settings = automatic
        .chain(read_back(&shapes, &saved))
        .find_map(|config| designs(&config).map(|n| (config, n)));
    match found_settings {
        Some((config, notation)) => Ok((
            SpecFile {
                dss_spec: SPEC_VERSION,
                schema,
                notation: config,
            },
            Built {
                shapes,
                notation,
                warnings,
            },
        )),
        None => Err(unconvertible(
            "its saved notation is not the one its schema designs under the automatic styles or the edits it reads back as".into(),
        )),
    }
}

/// The edits a saved notation reads back as (`dss init`'s YAML of it), with and without
/// calls named; none if it does not read as a notation of `shapes` (a file edited by hand
/// may name expressions that do not exist).
fn read_back(shapes: &Shapes, saved: &Value) -> Vec<NotationConfig> {
    let Ok(n) = Notation::deserialize(saved) else {
        return Vec::new();
    };
    if check_notation(shapes, &n).is_err() {
        return Vec::new();
    }
    let edits = notation::to_config(&n, shapes);
    let named = NotationConfig {
        name_calls: true,
        ..edits.clone()
    };
    vec![edits, named]
}

/// Whether a saved notation can be read back against `shapes`: every expression it names
/// exists, the root layout fits the root, keywords, tags and abbreviations are tokens,
/// non-empty and distinct, and the first tokens of a record's optional fields are disjoint.
fn check_notation(shapes: &Shapes, n: &Notation) -> Result<(), String> {
    let count = shapes.exprs.len();
    let expr = |e: ExprId, what: &str| -> Result<(), String> {
        if (e as usize) < count {
            Ok(())
        } else {
            Err(format!(
                "{what} names expression {e}, but there are {count}"
            ))
        }
    };
    if n.canon.len() != count {
        return Err(format!(
            "{} canonical expressions for {count} expressions",
            n.canon.len()
        ));
    }
    for &c in &n.canon {
        expr(c, "a canonical expression")?;
    }
    // A token the decoder reads as one: a bare word, or a JSON string.
    let token = |t: &str| {
        (!t.is_empty() && bare_len(t) == t.len())
            || (t.len() > 2 && t.starts_with('"') && serde_json::from_str::<String>(t).is_ok())
    };
    let record = |r: &RecordLayout| -> Result<(), String> {
        let at = format!("object `{}`", r.name);
        let mut names = BTreeSet::new();
        let mut keywords = BTreeSet::new();
        let mut firsts = BTreeSet::new();
        for f in &r.fields {
            expr(f.expr, &format!("{at} field `{}`", f.name))?;
            expr(f.source, &format!("{at} field `{}`", f.name))?;
            if !names.insert(&f.name) {
                return Err(format!("{at} has field `{}` twice", f.name));
            }
            // Keywords are written before keyed fields only: those must differ.
            let keyed = f.mode == FieldMode::Keyed || (f.named && f.mode == FieldMode::Positional);
            if !token(&f.keyword) || (keyed && !keywords.insert(&f.keyword)) {
                return Err(format!(
                    "{at} field `{}` has keyword {:?}: not a token, or another field's",
                    f.name, f.keyword
                ));
            }
            let mut written = BTreeSet::new();
            for (value, abbrev) in &f.abbrev {
                if !token(abbrev) || !written.insert(abbrev) {
                    return Err(format!(
                        "{at} field `{}` writes `{value}` as {abbrev:?}: not a token, or another value's",
                        f.name
                    ));
                }
            }
            // A keyed field is recognised by its keyword, and by nothing else.
            if f.mode == FieldMode::Keyed
                && f.first != BTreeSet::from([First::Word(f.keyword.clone())])
            {
                return Err(format!(
                    "{at} field `{}` is keyed by {:?}, but is recognised by other tokens",
                    f.name, f.keyword
                ));
            }
            if matches!(f.mode, FieldMode::Keyed | FieldMode::Keyless)
                && (f.first.is_empty() || f.first.iter().any(|t| !firsts.insert(t)))
            {
                return Err(format!(
                    "{at} field `{}` is optional, but its first tokens are none or another field's",
                    f.name
                ));
            }
        }
        for e in r.extras.iter().chain(&r.extras_source) {
            expr(*e, &format!("{at} undeclared properties"))?;
        }
        Ok(())
    };
    for (&e, layout) in &n.objects {
        expr(e, "an object layout")?;
        match layout {
            ObjLayout::Record(r) => record(r)?,
            ObjLayout::Tagged { key, variants } => {
                let mut tags = BTreeSet::new();
                if variants.is_empty() {
                    return Err(format!("the union tagged by `{key}` has no variants"));
                }
                for v in variants {
                    record(&v.record)?;
                    for (value, written) in &v.tags {
                        if !token(written) || !tags.insert(written) {
                            return Err(format!(
                                "tag `{value}` of `{key}` is written {written:?}: not a token, or another variant's"
                            ));
                        }
                    }
                }
            }
        }
    }
    let root = shapes.root;
    let fits = match n.root {
        RootLayout::Block | RootLayout::Line => n.object(root).is_some(),
        RootLayout::Lines => shapes.parts(root).array.is_some(),
        RootLayout::Value => true,
    };
    if fits {
        Ok(())
    } else {
        Err(format!(
            "the root layout {:?} does not fit the root",
            n.root
        ))
    }
}

#[cfg(test)]
mod tests {
    use crate::error::SpecError;
    use crate::spec::{compile, CompileOptions, CompiledSpec, SPEC_VERSION};
    use crate::tools::ToolCalls;
    use crate::{NotationConfig, NotationStyle};
    use serde_json::{json, Value};

    fn read(path: &str) -> String {
        let path = format!("{}/{path}", env!("CARGO_MANIFEST_DIR"));
        std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"))
    }

    /// The bundled viz schema.
    fn viz() -> Value {
        serde_json::from_str(&read("../specs/viz.schema.json")).unwrap()
    }

    /// `spec` saved as a version-`version` (1 or 2) file: the schema, the shapes and the
    /// designed notation (version 1 lists no local assertions in the shapes).
    fn saved_as(spec: &CompiledSpec, version: u32) -> Value {
        let mut shapes = serde_json::to_value(spec.shapes()).unwrap();
        if version == 1 {
            let m = shapes.as_object_mut().unwrap();
            m.remove("local_assertions");
            m.remove("asserted");
        }
        json!({"dss_spec": version, "schema": spec.schema(), "shapes": shapes,
               "notation": serde_json::to_value(spec.notation()).unwrap()})
    }

    /// The notation, the grammars and the schema of two specs are the same.
    fn assert_same(a: &CompiledSpec, b: &CompiledSpec, what: &str) {
        let json = |s: &CompiledSpec| serde_json::to_string(s.notation()).unwrap();
        assert_eq!(json(a), json(b), "{what}");
        assert_eq!(a.schema(), b.schema(), "{what}");
        assert_eq!(
            a.artifacts().unwrap()[1..],
            b.artifacts().unwrap()[1..],
            "{what}"
        );
    }

    /// A version-2 file as `dss compile` wrote it (the bundled viz spec) loads as the
    /// viz schema compiles, and saves as the current version.
    #[test]
    fn a_version_2_file_loads_as_its_schema_compiles() {
        let text = read("tests/data/viz-v2.spec.json");
        assert!(text.starts_with("{\"dss_spec\":2,"));
        let loaded = CompiledSpec::from_json(&text).unwrap();
        let compiled = compile(&viz(), &CompileOptions::default()).unwrap();
        assert_same(&loaded, &compiled, "viz");
        assert_eq!(loaded.to_json().unwrap(), compiled.to_json().unwrap());
        assert_eq!(loaded.file().dss_spec, SPEC_VERSION);
        assert!(text.len() > 2 * loaded.to_json().unwrap().len());
    }

    /// Files of versions 1 and 2 convert under each automatic style, under edits and for
    /// tool definitions; a version-1 file (no local assertions) gets them, as a compile
    /// does.
    #[test]
    fn older_files_convert_under_their_settings() {
        let auto = compile(&viz(), &CompileOptions::default()).unwrap();
        let mut edited: NotationConfig =
            serde_norway::from_str(&auto.notation_yaml().unwrap()).unwrap();
        for f in &mut edited.objects.get_mut("#/$defs/Field").unwrap().fields {
            if f.name == "aggregation" {
                f.mode = "keyed".into();
                f.keyword = Some("agg".into());
            }
        }
        let tools = json!([{"type": "function", "function": {"name": "get_weather",
            "parameters": {"type": "object", "required": ["city"],
                "properties": {"city": {"type": "string"}, "unit": {"enum": ["c", "f"]}}}}}]);
        let mut cases = vec![];
        for cfg in [
            None,
            Some(NotationConfig::with_style(NotationStyle::Explicit)),
            Some(NotationConfig::with_style(NotationStyle::Named)),
            Some(edited),
        ] {
            let opts = CompileOptions {
                notation: cfg.clone(),
                ..Default::default()
            };
            cases.push((format!("viz {cfg:?}"), compile(&viz(), &opts).unwrap()));
        }
        for calls in [ToolCalls::List, ToolCalls::One] {
            for style in [None, Some(NotationStyle::Compact)] {
                let opts = CompileOptions {
                    notation: style.map(NotationConfig::with_style),
                    calls,
                    ..Default::default()
                };
                cases.push((
                    format!("tools {calls:?} {style:?}"),
                    compile(&tools, &opts).unwrap(),
                ));
            }
        }
        for (what, spec) in cases {
            for version in [1, 2] {
                let old = saved_as(&spec, version).to_string();
                let loaded = CompiledSpec::from_json(&old)
                    .unwrap_or_else(|e| panic!("{what} v{version}: {e}"));
                assert_same(&loaded, &spec, &what);
                assert_eq!(loaded.encoder_validates(), spec.encoder_validates());
            }
        }
        let bounded =
            json!({"type": "object", "properties": {"s": {"type": "string", "maxLength": 2}}});
        let spec = compile(&bounded, &CompileOptions::default()).unwrap();
        let v1 = CompiledSpec::from_json(&saved_as(&spec, 1).to_string()).unwrap();
        assert!(v1.encoder_validates());
        assert_eq!(
            v1.compress(&json!({"s": "abc"})).unwrap_err().keyword(),
            Some("maxLength")
        );
    }

    fn set(v: &mut Value, pointer: &str, x: Value) {
        *v.pointer_mut(pointer)
            .expect("the pointer is in the saved viz spec") = x;
    }

    /// An older file whose saved notation was edited is refused (its notation is not one
    /// its schema designs), never loaded as a notation whose compress writes text its own
    /// expand rejects; its shapes are not read (built again from the schema).
    #[test]
    fn an_edited_older_file_is_refused() {
        let spec = compile(&viz(), &CompileOptions::default()).unwrap();
        let good = saved_as(&spec, 2);
        type Tamper = fn(&mut Value);
        let refused: [(&str, Tamper); 12] = [
            ("a keyword renamed", |v| {
                set(
                    v,
                    "/notation/objects/2/Record/fields/1/keyword",
                    json!("fltrs"),
                )
            }),
            ("an expression out of range", |v| {
                set(v, "/notation/objects/2/Record/fields/1/expr", json!(99999))
            }),
            ("a canon entry out of range", |v| {
                set(v, "/notation/canon/3", json!(99999))
            }),
            ("an empty keyword", |v| {
                set(v, "/notation/objects/2/Record/fields/1/keyword", json!(""))
            }),
            ("a duplicate keyword", |v| {
                set(
                    v,
                    "/notation/objects/2/Record/fields/2/keyword",
                    json!("filters"),
                )
            }),
            ("a first-token set emptied", |v| {
                set(v, "/notation/objects/2/Record/fields/1/first", json!([]))
            }),
            ("a schema changed under its notation", |v| {
                v["schema"]["properties"]["chart"] = json!({"type": "integer"})
            }),
            ("a first token removed", |v| {
                let f = v
                    .pointer_mut("/notation/objects/7/Record/fields/1/first")
                    .unwrap();
                f.as_array_mut()
                    .unwrap()
                    .retain(|w| *w != json!({"Word": "sum"}));
            }),
            ("a keyword quoted", |v| {
                set(
                    v,
                    "/notation/objects/9/Record/fields/3/keyword",
                    json!("\"limit\""),
                );
                set(
                    v,
                    "/notation/objects/9/Record/fields/3/first",
                    json!([{"Word": "\"limit\""}]),
                );
            }),
            ("another expression", |v| {
                set(v, "/notation/objects/7/Record/fields/1/expr", json!(12))
            }),
            ("a keyed object written open", |v| {
                let f = v
                    .pointer_mut("/notation/objects/2/Record/fields/2")
                    .unwrap();
                f.as_object_mut()
                    .unwrap()
                    .insert("open".into(), json!(true));
            }),
            ("a canonical expression changed", |v| {
                set(v, "/notation/canon/13", json!(52))
            }),
        ];
        for (what, tamper) in refused {
            let mut v = good.clone();
            tamper(&mut v);
            assert_ne!(v, good, "{what}: nothing was changed");
            let e = CompiledSpec::from_json(&v.to_string()).unwrap_err();
            assert!(
                matches!(
                    e,
                    SpecError::Unconvertible {
                        found: 2,
                        expected: SPEC_VERSION,
                        ..
                    }
                ),
                "{what}: {e}"
            );
            assert!(
                e.to_string().contains("recompile with `dss compile`"),
                "{what}: {e}"
            );
        }
        let ignored: [(&str, Tamper); 3] = [
            ("the root out of range", |v| {
                v["shapes"]["root"] = json!(99999)
            }),
            ("a parts entry removed", |v| {
                v["shapes"]["parts"].as_array_mut().and_then(Vec::pop);
            }),
            ("no shapes at all", |v| {
                v.as_object_mut().unwrap().remove("shapes");
            }),
        ];
        for (what, tamper) in ignored {
            let mut v = good.clone();
            tamper(&mut v);
            let loaded =
                CompiledSpec::from_json(&v.to_string()).unwrap_or_else(|e| panic!("{what}: {e}"));
            assert_same(&loaded, &spec, what);
        }
    }

    /// Every mutated `spec.json` the fuzzer found is refused at load (never a panic), or
    /// (where only its shapes were mutated, which are not read) loads as its schema
    /// compiles.
    #[test]
    fn fuzz_findings_are_refused_or_rebuilt() {
        let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/../fuzz/findings/spec_load");
        let mut seen = 0;
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            let text = std::fs::read_to_string(&path).unwrap();
            match CompiledSpec::from_json(&text) {
                Err(e) => assert!(
                    e.to_string().contains("recompile with `dss compile`"),
                    "{}: {e}",
                    path.display()
                ),
                Ok(loaded) => {
                    let compiled = compile(loaded.schema(), &CompileOptions::default()).unwrap();
                    assert_same(&loaded, &compiled, &path.display().to_string());
                }
            }
            seen += 1;
        }
        assert_eq!(seen, 7);
    }
}
