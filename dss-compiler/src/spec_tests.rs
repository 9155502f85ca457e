use super::*;
use crate::codec::check_numbers;
use crate::notation::NotationStyle;
use serde_json::json;

fn viz() -> Value {
    json!({
        "type": "object",
        "properties": {
            "fields": {"type": "array", "items": {"$ref": "#/$defs/field"}},
            "chart": {"enum": ["bar", "line"]}
        },
        "required": ["fields"],
        "additionalProperties": false,
        "$defs": {"field": {
            "type": "object",
            "properties": {
                "name": {"type": "string", "description": "Field name."},
                "agg": {"enum": ["sum", "avg"]},
                "relative-date": {"type": "integer"},
                "kind": {"const": "field"}
            },
            "required": ["name", "kind"],
            "additionalProperties": false
        }}
    })
}

/// `schema` compiled under the notation `cfg`.
fn compile_with(schema: &Value, cfg: NotationConfig) -> Result<CompiledSpec, CompileError> {
    compile(
        schema,
        &CompileOptions {
            notation: Some(cfg),
            ..Default::default()
        },
    )
}

#[test]
fn paper_like_notation_round_trips() {
    let spec = compile(&viz(), &CompileOptions::default()).unwrap();
    let x = json!({"fields": [{"name": "Sales", "agg": "sum", "kind": "field"}, {"name": "Region", "kind": "field", "relative-date": 3}], "chart": "bar"});
    let s = spec.compress(&x).unwrap();
    // A line item's leading free string is quoted, so a keyword-like line (`limit 5`)
    // is never read as an item.
    assert_eq!(
        s,
        "chart bar\nfields:\n\"Sales\" sum\n\"Region\" relative-date 3\n"
    );
    assert_eq!(spec.expand(&s).unwrap(), x);
    let bare = "chart bar\nfields:\nSales sum\n";
    let e = spec.expand(bare).unwrap_err();
    assert_eq!(e.location(), Some((3, 1)), "{e}");
    let (_, rules) = pest_meta::parse_and_optimize(&spec.grammar_pest()).unwrap();
    assert!(pest_vm::Vm::new(rules).parse("document", bare).is_err());
    // The final newline may be left out.
    assert_eq!(spec.expand(s.trim_end()).unwrap(), x);
}

/// Compress of a JSON text gives what compress of the value read from it gives: the
/// same shorthand, or the same error (pointer, keyword, message), whether the encoder
/// validates or the validator does.
#[test]
fn compress_of_text_is_compress_of_its_value() {
    let validating = compile(&viz(), &CompileOptions::default()).unwrap();
    let mut bounded = viz();
    bounded["properties"]["chart"] = json!({"enum": ["bar", "line"], "not": {"const": "line"}});
    let validated = compile(&bounded, &CompileOptions::default()).unwrap();
    assert!(!validated.shapes().encoding_validates);
    for spec in [&validating, &validated] {
        for text in [
            r#"{"fields": [{"name": "Sales", "agg": "sum", "kind": "field"}], "chart": "bar"}"#,
            r#"{"chart": "bar", "fields": [{"kind": "field", "name": "a\"b"}]}"#,
            r#"{"fields": [{"name": 1, "kind": "field"}]}"#,
            r#"{"fields": [], "extra": 1}"#,
            r#"{"fields": [], "chart": "line"}"#,
            r#"{"fields": [], "chart": "bar", "chart": "pie"}"#,
            r#"[1, 2]"#,
        ] {
            let value: Value = serde_json::from_str(text).unwrap();
            let (a, b) = (spec.compress_str(text), spec.compress(&value));
            assert_eq!(format!("{a:?}"), format!("{b:?}"), "{text}");
        }
    }
    let e = validating.compress_str(r#"{"fields": ["#).unwrap_err();
    assert!(
        matches!(
            e,
            CompressError::Json {
                line: 1,
                column: 12,
                ..
            }
        ),
        "{e}"
    );
    assert_eq!(
        e.to_string(),
        "invalid JSON at line 1 column 12: EOF while parsing a list"
    );
}

#[test]
fn compress_names_pointer_and_keyword() {
    let spec = compile(&viz(), &CompileOptions::default()).unwrap();
    // The encoder alone validates this schema; its rejections still get the
    // validator's pointer and keyword.
    assert!(spec.shapes().encoding_validates);
    let e = spec
        .compress(&json!({"fields": [{"name": 1, "kind": "field"}]}))
        .unwrap_err();
    assert_eq!(e.pointer(), "/fields/0/name");
    assert_eq!(e.keyword(), Some("type"));
    let e = spec
        .compress(&json!({"fields": [], "extra": 1}))
        .unwrap_err();
    assert_eq!(e.keyword(), Some("additionalProperties"));
    // A bound the shapes do not capture: the validator runs first.
    let mut bounded = viz();
    bounded["$defs"]["field"]["properties"]["chart"] = json!({"allOf": [{"minimum": 1}]});
    bounded["$defs"]["field"]["properties"]["relative-date"]["maximum"] = json!(10);
    let spec = compile(&bounded, &CompileOptions::default()).unwrap();
    assert!(!spec.encoder_validates());
    let e = spec
        .compress(&json!({"fields": [{"name": "a", "kind": "field", "relative-date": 11}]}))
        .unwrap_err();
    assert_eq!(
        (e.pointer(), e.keyword()),
        ("/fields/0/relative-date", Some("maximum"))
    );
}

/// Local assertions (bounds, lengths, patterns, formats…) are checked by the encoder,
/// each at its own node, with the validator's semantics; its rejections still get the
/// validator's pointer and keyword.
#[test]
fn encoder_checks_local_assertions() {
    let schema = json!({
        "$schema": "http://json-schema.org/draft-07/schema#",
        "type": "object",
        "properties": {
            // Equal shapes (free strings) share a canonical expression in the
            // notation; each keeps its own assertions.
            "plain": {"type": "string"},
            "code": {"type": "string", "pattern": "^[A-Z]{3}$"},
            "mail": {"type": "string", "format": "email"},
            "qty": {"$ref": "#/definitions/qty"},
            "tags": {"type": "array", "items": {"type": "string", "maxLength": 3},
                     "uniqueItems": true},
            "meta": {"type": "object", "additionalProperties": {"type": "integer",
                     "multipleOf": 5}}
        },
        "definitions": {"qty": {"type": "integer", "minimum": 1, "maximum": 9}}
    });
    let spec = compile(&schema, &CompileOptions::default()).unwrap();
    assert!(spec.encoder_validates());
    let ok = json!({"plain": "anything", "code": "ABC", "mail": "a@b.org", "qty": 3,
                        "tags": ["x", "yz"], "meta": {"a": 10}});
    let s = spec.compress(&ok).unwrap();
    assert_eq!(spec.expand(&s).unwrap(), ok);
    for (change, pointer, keyword) in [
        (json!({"code": "abc"}), "/code", "pattern"),
        (json!({"mail": "not an address"}), "/mail", "format"),
        (json!({"qty": 10}), "/qty", "maximum"),
        (json!({"tags": ["x", "long"]}), "/tags/1", "maxLength"),
        (json!({"tags": ["x", "x"]}), "/tags", "uniqueItems"),
        (json!({"meta": {"a": 7}}), "/meta/a", "multipleOf"),
    ] {
        let mut bad = ok.clone();
        for (k, v) in change.as_object().unwrap() {
            bad[k] = v.clone();
        }
        assert!(
            matches!(spec.encode_validating(&bad), Some(Err(_))),
            "{bad}"
        );
        let e = spec.compress(&bad).unwrap_err();
        assert_eq!((e.pointer(), e.keyword()), (pointer, Some(keyword)));
    }
    // A spec file keeps the assertions.
    let loaded = CompiledSpec::from_json(&spec.to_json().unwrap()).unwrap();
    assert!(loaded.encoder_validates());
    assert!(loaded.compress(&json!({"qty": 0})).is_err());
}

/// A union of branches with disjoint JSON types (`X` or `null`) is exact: the value's
/// type selects the branch, and so which local assertions apply. Overlapping branches
/// leave the validation to the validator.
#[test]
fn disjoint_unions_are_checked_by_the_encoder() {
    let schema = json!({
        "type": "object",
        "properties": {
            "name": {"anyOf": [{"type": "string", "maxLength": 2}, {"type": "null"}]},
            "size": {"oneOf": [{"$ref": "#/$defs/box"}, {"type": "integer", "minimum": 3}]}
        },
        "$defs": {"box": {"type": "object", "properties": {
            "w": {"type": "number", "exclusiveMinimum": 0}
        }, "required": ["w"]}}
    });
    let spec = compile(&schema, &CompileOptions::default()).unwrap();
    assert!(spec.encoder_validates());
    for ok in [
        json!({"name": "ab", "size": 3}),
        json!({"name": null, "size": {"w": 1.5}}),
    ] {
        let s = spec.compress(&ok).unwrap();
        assert_eq!(spec.expand(&s).unwrap(), ok);
    }
    for (bad, pointer) in [
        (json!({"name": "abc"}), "/name"),
        (json!({"size": 2}), "/size"),
        (json!({"size": {"w": 0}}), "/size"),
        (json!({"size": "big"}), "/size"),
    ] {
        assert!(
            matches!(spec.encode_validating(&bad), Some(Err(_))),
            "{bad}"
        );
        assert_eq!(spec.compress(&bad).unwrap_err().pointer(), pointer, "{bad}");
    }
    let overlapping = json!({"anyOf": [{"type": "integer", "maximum": 1}, {"type": "number"}]});
    let spec = compile(&overlapping, &CompileOptions::default()).unwrap();
    assert!(!spec.encoder_validates());
    assert!(spec.compress(&json!(7.5)).is_ok());
}

/// Closed object branches that declare different property names (one function call
/// of several): the merged record checks each property against its own branch, and
/// the union's check which branch's names the object has.
#[test]
fn keyed_object_unions_are_checked_by_the_encoder() {
    let call = |name: &str, arg: Value| {
        json!({"type": "object", "properties": {name: {"type": "object",
                "properties": {"n": arg}, "required": ["n"], "additionalProperties": false}},
                "required": [name], "additionalProperties": false})
    };
    for key in ["anyOf", "oneOf"] {
        let schema = json!({key: [
            call("get", json!({"type": "integer", "maximum": 5})),
            call("put", json!({"type": "string"})),
            {"type": "object", "properties": {"x": {"type": "string"}},
             "additionalProperties": false}
        ]});
        let spec = compile(&schema, &CompileOptions::default()).unwrap();
        assert!(spec.encoder_validates(), "{key}");
        for ok in [
            json!({"get": {"n": 5}}),
            json!({"put": {"n": "a"}}),
            json!({"x": "y"}),
        ] {
            let s = spec.compress(&ok).unwrap();
            assert_eq!(spec.expand(&s).unwrap(), ok);
        }
        for bad in [
            json!({"get": {"n": 6}}),
            json!({"get": {"n": 1}, "put": {"n": "a"}}),
            json!({"get": {"n": 1}, "x": "y"}),
            json!({"put": {"n": 1}}),
        ] {
            assert!(
                matches!(spec.encode_validating(&bad), Some(Err(_))),
                "{key} {bad}"
            );
            assert!(spec.compress(&bad).is_err(), "{key} {bad}");
        }
        // `{}` is the third branch only (the others require their key).
        assert!(spec.compress(&json!({})).is_ok(), "{key}");
    }
    // A name declared by two branches, or an open branch: the validator decides.
    for schema in [
        json!({"anyOf": [call("get", json!({"type": "integer"})), call("get", json!({}))]}),
        json!({"anyOf": [call("get", json!({"type": "integer"})), {"type": "object"}]}),
    ] {
        let spec = compile(&schema, &CompileOptions::default()).unwrap();
        assert!(!spec.encoder_validates(), "{schema}");
    }
}

/// `patternProperties` is checked whole at its object: a declared property matching a
/// pattern must satisfy both schemas, an undeclared one the schemas of the patterns it
/// matches, or else `additionalProperties`.
#[test]
fn pattern_properties_are_checked_by_the_encoder() {
    // Draft-07: a draft-04 schema with integers is checked by the validator (its
    // integers have no fraction; see `draft_04_integers_have_no_fraction`).
    let schema = json!({
        "$schema": "http://json-schema.org/draft-07/schema#",
        "type": "object",
        "properties": {"x_id": {"type": "integer"}},
        "patternProperties": {"^x_": {"type": "integer", "minimum": 0}},
        "additionalProperties": {"type": "string"}
    });
    let spec = compile(&schema, &CompileOptions::default()).unwrap();
    assert!(spec.encoder_validates());
    let ok = json!({"x_id": 1, "x_n": 2, "name": "a"});
    let s = spec.compress(&ok).unwrap();
    assert_eq!(spec.expand(&s).unwrap(), ok);
    for (bad, keyword) in [
        (json!({"x_id": -1}), "minimum"),
        (json!({"x_n": "two"}), "type"),
        (json!({"name": 3}), "type"),
    ] {
        assert!(
            matches!(spec.encode_validating(&bad), Some(Err(_))),
            "{bad}"
        );
        assert_eq!(
            spec.compress(&bad).unwrap_err().keyword(),
            Some(keyword),
            "{bad}"
        );
    }
    // A pattern schema that refers elsewhere: the validator decides.
    let mut referring = schema.clone();
    referring["patternProperties"]["^x_"] = json!({"$ref": "#/definitions/n"});
    referring["definitions"] = json!({"n": {"type": "integer"}});
    let spec = compile(&referring, &CompileOptions::default()).unwrap();
    assert!(!spec.encoder_validates());
}

/// A malformed keyword value is an error; compiled leniently it is removed, so the
/// shapes, the local checks and the validator all do without it.
#[test]
fn malformed_values_are_errors_or_removed_when_lenient() {
    let schema = json!({"type": "object", "properties": {
        "n": {"type": "integer", "minimum": "three"},
        "s": {"type": "string", "maxLength": 2}
    }});
    match compile(&schema, &CompileOptions::default()) {
        Err(CompileError::Malformed { pointer, .. }) => {
            assert_eq!(pointer, "/properties/n/minimum")
        }
        other => panic!("{other:?}"),
    }
    let lenient = CompileOptions {
        lenient: true,
        ..Default::default()
    };
    let spec = compile(&schema, &lenient).unwrap();
    assert_eq!(spec.schema_warnings().len(), 1);
    assert!(spec.schema()["properties"]["n"].get("minimum").is_none());
    assert!(spec.encoder_validates());
    assert!(spec.compress(&json!({"n": -5})).is_ok());
    assert!(spec.warnings().is_empty());
}

/// A malformed local keyword the lint does not see (a draft-04 form in another draft) is
/// ignored by the full validator (as lenient validators do), so it decides.
#[test]
fn the_full_validator_decides_where_local_checks_cannot() {
    // A boolean `exclusiveMinimum` is draft-04's; under the default draft (2020-12) the
    // validator's meta-schema rejects it.
    let schema = json!({"type": "object", "properties": {
        "n": {"type": "integer", "minimum": 3, "exclusiveMinimum": true},
        "s": {"type": "string", "maxLength": 2}
    }});
    let spec = compile(&schema, &CompileOptions::default()).unwrap();
    assert!(spec.shapes().encoding_validates);
    assert!(!spec.encoder_validates());
    // The grammar reads the boolean as its author meant it (draft-04's exclusive
    // flag: above 3), a stricter reading than the validator's, which ignores it.
    assert!(spec.compress(&json!({"n": 4})).is_ok());
    assert_eq!(spec.warnings().len(), 1, "{:?}", spec.warnings());
    assert_eq!(
        spec.compress(&json!({"s": "abc"})).unwrap_err().keyword(),
        Some("maxLength")
    );
}

#[test]
fn expand_errors_say_where_and_what() {
    let spec = compile(&viz(), &CompileOptions::default()).unwrap();
    let e = spec.expand("fields:\n\"Sales\" mean\n").unwrap_err();
    assert_eq!(e.location(), Some((2, 9)));
    assert_eq!(e.found(), Some("`mean`"));
    let e = spec.expand("fields:\n\"Sales\" sum \n").unwrap_err();
    assert_eq!(e.location(), Some((2, 13)));
    let e = spec.expand("chart bar\n").unwrap_err();
    assert!(e.expected().is_some_and(|x| x.contains("fields:")), "{e}");
    let e = spec.expand("chart bar\nfields:\n\"Sales\n").unwrap_err();
    assert_eq!(e.location().map(|l| l.0), Some(3));
}

#[test]
fn notation_edits_are_honoured() {
    let auto = compile(&viz(), &CompileOptions::default()).unwrap();
    let mut cfg: NotationConfig = serde_norway::from_str(&auto.notation_yaml().unwrap()).unwrap();
    let field = cfg.objects.get_mut("#/$defs/field").unwrap();
    for f in &mut field.fields {
        if f.name == "agg" {
            f.mode = "keyed".into();
            f.keyword = Some("by".into());
            f.abbrev.insert("avg".into(), "mean".into());
        }
    }
    let spec = compile_with(&viz(), cfg).unwrap();
    let x = json!({"fields": [{"name": "Sales", "agg": "avg", "kind": "field"}]});
    let s = spec.compress(&x).unwrap();
    assert_eq!(s, "fields:\n\"Sales\" by mean\n");
    assert_eq!(spec.expand(&s).unwrap(), x);
}

#[test]
fn explicit_style_writes_every_optional_field_with_its_keyword() {
    let schema = json!({
        "type": "array",
        "items": {"type": "object", "additionalProperties": false,
          "required": ["Book"],
          "properties": {"Book": {"type": "object", "additionalProperties": false,
            "properties": {
              "city": {"enum": ["denver", "paris"]},
              "time": {"enum": ["monday"]},
              "near": {"enum": ["close", "distant"]}}}}}
    });
    let x = json!([{"Book": {"city": "denver", "time": "monday", "near": "close"}}]);
    let compact = compile(&schema, &CompileOptions::default()).unwrap();
    let c = compact.compress(&x).unwrap();
    // Compact: the single value is a flag, a choice word may stand alone.
    assert!(c.contains(" time") && !c.contains("monday"), "{c}");
    let yaml = compact.notation_yaml().unwrap();
    assert!(yaml.contains("mode: flag"), "{yaml}");

    let explicit =
        compile_with(&schema, NotationConfig::with_style(NotationStyle::Explicit)).unwrap();
    let e = explicit.compress(&x).unwrap();
    assert_eq!(e, "(city denver time monday near close)\n");
    assert_eq!(explicit.expand(&e).unwrap(), x);
    // The flag form is not part of the explicit language, in the grammar and the decoder.
    assert!(explicit.expand("(time)\n").is_err());
    assert!(
        explicit.grammar_gbnf().contains("\"time \""),
        "{}",
        explicit.grammar_gbnf()
    );
    // Its YAML reproduces it: `keyed` on a single-valued field writes the value.
    let cfg: NotationConfig = serde_norway::from_str(&explicit.notation_yaml().unwrap()).unwrap();
    let again = compile_with(&schema, cfg).unwrap();
    assert_eq!(again.compress(&x).unwrap(), e);
    // And the compact YAML reproduces the flag.
    let cfg: NotationConfig = serde_norway::from_str(&yaml).unwrap();
    let again = compile_with(&schema, cfg).unwrap();
    assert_eq!(again.compress(&x).unwrap(), c);
    // `flag` on a field with several values is refused.
    let bad = yaml.replacen(
        "name: city\n      mode: keyless",
        "name: city\n      mode: flag",
        1,
    );
    assert_ne!(bad, yaml);
    let cfg: NotationConfig = serde_norway::from_str(&bad).unwrap();
    let err = compile_with(&schema, cfg).unwrap_err();
    assert!(err.to_string().contains("single possible value"), "{err}");
}

#[test]
fn the_named_style_writes_required_fields_by_name_in_their_place() {
    let schema = json!({"type": "object", "additionalProperties": false,
            "required": ["title", "minutes"],
            "properties": {
                "title": {"type": "string"},
                "minutes": {"type": "integer"},
                "room": {"type": "string"}}});
    let x = json!({"title": "Budget review", "minutes": 30, "room": "B2"});
    let named = compile_with(&schema, NotationConfig::with_style(NotationStyle::Named)).unwrap();
    let text = named.compress(&x).unwrap();
    assert_eq!(text, "title \"Budget review\" minutes 30 room B2");
    assert_eq!(named.expand(&text).unwrap(), x);
    // The keyword is part of the language: the value alone, or the fields out of
    // their order, are not.
    let err = named.expand("\"Budget review\" minutes 30\n").unwrap_err();
    assert!(err.to_string().contains("`title …`"), "{err}");
    assert!(named.expand("minutes 30 title x\n").is_err());
    let gbnf = named.grammar_gbnf();
    assert!(
        gbnf.contains("\"title \" text \" minutes \" integer"),
        "{gbnf}"
    );
    assert!(
        named.grammar_bnf().contains("title <string>"),
        "{}",
        named.grammar_bnf()
    );
    // Its YAML says `named` and reproduces it; the spec file loads back.
    let yaml = named.notation_yaml().unwrap();
    assert!(yaml.contains("mode: named"), "{yaml}");
    let cfg: NotationConfig = serde_norway::from_str(&yaml).unwrap();
    assert_eq!(
        compile_with(&schema, cfg).unwrap().compress(&x).unwrap(),
        text
    );
    let back = CompiledSpec::from_json(&named.to_json().unwrap()).unwrap();
    assert_eq!(back.compress(&x).unwrap(), text);
    // `named` on an optional field is refused, as `positional` is.
    let bad = yaml.replacen(
        "name: room\n      mode: keyed",
        "name: room\n      mode: named",
        1,
    );
    assert_ne!(bad, yaml, "{yaml}");
    let cfg: NotationConfig = serde_norway::from_str(&bad).unwrap();
    assert!(compile_with(&schema, cfg).is_err());
    // The compact style keeps required fields positional.
    let compact = compile(&schema, &CompileOptions::default()).unwrap();
    assert_eq!(
        compact.compress(&x).unwrap(),
        "\"Budget review\" 30 room B2"
    );
}

#[test]
fn tool_calls_take_the_named_style_by_default() {
    let tools = json!([{"type": "function", "function": {"name": "book_room",
            "parameters": {"type": "object", "required": ["title"],
                "properties": {"title": {"type": "string"}, "minutes": {"type": "integer"}}}}}]);
    let spec = compile(&tools, &CompileOptions::default()).unwrap();
    let x = json!([{"book_room": {"title": "Standup", "minutes": 15}}]);
    let text = spec.compress(&x).unwrap();
    assert_eq!(text, "book_room title Standup minutes 15\n");
    assert_eq!(spec.expand(&text).unwrap(), x);
}

#[test]
fn ambiguous_edits_are_rejected() {
    let auto = compile(&viz(), &CompileOptions::default()).unwrap();
    let base: NotationConfig = serde_norway::from_str(&auto.notation_yaml().unwrap()).unwrap();
    let edit = |name: &str, mode: &str, keyword: Option<&str>| {
        let mut cfg = base.clone();
        for f in &mut cfg.objects.get_mut("#/$defs/field").unwrap().fields {
            if f.name == name {
                f.mode = mode.into();
                f.keyword = keyword.map(str::to_string);
            }
        }
        compile_with(&viz(), cfg).err().map(|e| e.to_string())
    };
    // An optional field cannot be positional.
    assert!(edit("agg", "positional", None)
        .unwrap()
        .contains("cannot be positional"));
    // A keyword equal to a value of a later keyless field would be read as that value.
    let mut cfg = base.clone();
    let fields = &mut cfg.objects.get_mut("#/$defs/field").unwrap().fields;
    let rd = fields
        .iter()
        .position(|f| f.name == "relative-date")
        .unwrap();
    let agg = fields.iter().position(|f| f.name == "agg").unwrap();
    fields[rd].mode = "keyed".into();
    fields[rd].keyword = Some("sum".into());
    let moved = fields.remove(rd);
    fields.insert(agg, moved);
    let e = compile_with(&viz(), cfg).unwrap_err();
    assert!(e.to_string().contains("keyword `sum`"), "{e}");
    // Unknown object names are reported.
    let mut cfg = base.clone();
    cfg.objects.insert("#/nope".into(), Default::default());
    assert!(compile_with(&viz(), cfg)
        .unwrap_err()
        .to_string()
        .contains("#/nope"));
    // A single-valued field cannot be keyless (it would be invisible).
    assert!(edit("kind", "keyless", None).is_some());
}

#[test]
fn keyless_conflicts_are_detected() {
    let schema = json!({"type": "object", "properties": {
            "a": {"enum": ["x", "y"]},
            "b": {"enum": ["y", "z"]}
        }, "additionalProperties": false});
    let spec = compile(&schema, &CompileOptions::default()).unwrap();
    // `y` could be either field, so neither is keyless.
    let x = json!({"b": "y"});
    // A one-line document has no final newline.
    assert_eq!(spec.compress(&x).unwrap(), "b y");
    assert_eq!(spec.expand("b y\n").unwrap(), x);
    let mut cfg: NotationConfig = serde_norway::from_str(&spec.notation_yaml().unwrap()).unwrap();
    for f in &mut cfg.objects.get_mut("#").unwrap().fields {
        f.mode = "keyless".into();
        f.keyword = None;
    }
    let e = compile_with(&schema, cfg).unwrap_err();
    assert!(matches!(e, CompileError::Ambiguous(_)), "{e}");
}

#[test]
fn spec_json_round_trips() {
    let spec = compile(&viz(), &CompileOptions::default()).unwrap();
    let loaded = CompiledSpec::from_json(&spec.to_json().unwrap()).unwrap();
    let x = json!({"fields": [{"name": "Sales", "kind": "field"}]});
    assert_eq!(loaded.compress(&x).unwrap(), spec.compress(&x).unwrap());
    assert_eq!(loaded.to_json().unwrap(), spec.to_json().unwrap());
    assert!(CompiledSpec::from_json("{}").is_err());
}

/// A `spec.json` holds the schema and the notation settings, nothing derived; a file
/// of another version is refused with an error naming the version found and the one
/// read, and saying to recompile, whatever its layout.
#[test]
fn a_spec_file_of_another_version_is_refused() {
    let spec = compile(&viz(), &CompileOptions::default()).unwrap();
    let text = spec.to_json().unwrap();
    let saved: Value = serde_json::from_str(&text).unwrap();
    let keys: Vec<&String> = saved.as_object().unwrap().keys().collect();
    assert_eq!(keys, ["dss_spec", "schema", "notation"]);
    assert_eq!(saved["dss_spec"], json!(SPEC_VERSION));
    for found in [SPEC_VERSION + 1, 0, 999_999] {
        let future = json!({"dss_spec": found, "spec": {}}).to_string();
        for e in [
            CompiledSpec::from_json(&future).unwrap_err(),
            SpecFile::from_json(&future).unwrap_err(),
        ] {
            assert!(
                matches!(e, SpecError::Version { found: f, expected: SPEC_VERSION } if f == found),
                "{e}"
            );
            assert_eq!(
                    e.to_string(),
                    format!("spec file: version {found} is not supported (this dss reads version {SPEC_VERSION}, and converts versions 1 and 2); recompile with `dss compile`")
                );
        }
    }
    let e = CompiledSpec::from_json(r#"{"schema": {}}"#).unwrap_err();
    assert!(e.to_string().contains("not a dss spec.json"), "{e}");
    // A `SpecFile` given to `from_file` is checked too.
    let mut file = spec.file().clone();
    file.dss_spec = 2;
    assert!(matches!(
        CompiledSpec::from_file(file),
        Err(SpecError::Version { found: 2, .. })
    ));
}

/// What is derivable is not saved: a derived table in the file is an unknown field, an
/// edited schema is the spec's schema (compiled again), edits that do not compile are
/// the compile error.
#[test]
fn a_spec_file_is_its_schema_and_settings() {
    let spec = compile(&viz(), &CompileOptions::default()).unwrap();
    let good: Value = serde_json::from_str(&spec.to_json().unwrap()).unwrap();
    let mut v = good.clone();
    v["shapes"] = json!({});
    let e = CompiledSpec::from_json(&v.to_string()).unwrap_err();
    assert!(e.to_string().contains("unknown field `shapes`"), "{e}");

    let mut v = good.clone();
    v["schema"]["properties"]["chart"] = json!({"enum": ["pie"]});
    let edited = CompiledSpec::from_json(&v.to_string()).unwrap();
    let x = json!({"fields": [{"name": "Sales", "kind": "field"}], "chart": "pie"});
    assert_eq!(edited.expand(&edited.compress(&x).unwrap()).unwrap(), x);

    let mut v = good.clone();
    v["notation"]["objects"] = json!({"#/nope": {}});
    let e = CompiledSpec::from_json(&v.to_string()).unwrap_err();
    assert!(matches!(e, SpecError::Build(_)), "{e}");
    assert!(e.to_string().contains("#/nope"), "{e}");

    let mut v = good.clone();
    v["schema"]["properties"]["chart"] = json!({"type": "integr"});
    let e = CompiledSpec::from_json(&v.to_string()).unwrap_err();
    assert!(
        matches!(&e, SpecError::Build(c) if matches!(**c, CompileError::Malformed { .. })),
        "{e}"
    );

    // Without settings: the automatic design.
    let mut v = good;
    v.as_object_mut().unwrap().remove("notation");
    let auto = CompiledSpec::from_json(&v.to_string()).unwrap();
    assert_eq!(auto.grammar_gbnf(), spec.grammar_gbnf());
}

/// A spec loaded is the spec compiled: the same notation, byte for byte, under each
/// style and under edits.
#[test]
fn a_loaded_spec_designs_the_compiled_notation() {
    let auto = compile(&viz(), &CompileOptions::default()).unwrap();
    let mut edited: NotationConfig =
        serde_norway::from_str(&auto.notation_yaml().unwrap()).unwrap();
    for f in &mut edited.objects.get_mut("#/$defs/field").unwrap().fields {
        if f.name == "agg" {
            f.mode = "keyed".into();
            f.keyword = Some("by".into());
            f.abbrev.insert("avg".into(), "mean".into());
        }
    }
    for cfg in [
        None,
        Some(NotationConfig::with_style(NotationStyle::Explicit)),
        Some(NotationConfig::with_style(NotationStyle::Named)),
        Some(edited),
    ] {
        let spec = compile(
            &viz(),
            &CompileOptions {
                notation: cfg,
                ..Default::default()
            },
        )
        .unwrap();
        let text = spec.to_json().unwrap();
        let back = CompiledSpec::from_json(&text).unwrap();
        let json = |n: &Notation| serde_json::to_string(n).unwrap();
        assert_eq!(json(back.notation()), json(spec.notation()));
        assert_eq!(back.to_json().unwrap(), text);
        assert_eq!(back.artifacts().unwrap(), spec.artifacts().unwrap());
        let copy = back.clone();
        assert_eq!(json(copy.notation()), json(spec.notation()));
    }
}

#[test]
fn pest_grammar_loads_and_parses() {
    let spec = compile(&viz(), &CompileOptions::default()).unwrap();
    let pest = spec.grammar_pest();
    let (_, rules) =
        pest_meta::parse_and_optimize(&pest).unwrap_or_else(|e| panic!("{e:?}\n{pest}"));
    let vm = pest_vm::Vm::new(rules);
    let s = spec
        .compress(
            &json!({"fields": [{"name": "Sales", "agg": "sum", "kind": "field"}], "chart": "line"}),
        )
        .unwrap();
    assert!(vm.parse("document", &s).is_ok());
    assert!(vm.parse("document", "fields:\n\"Sales\" summ\n").is_err());
}

#[test]
fn min_items_is_part_of_the_language() {
    // A model must not be able to write an array the schema rejects for being short:
    // the mapper, pest and the GBNF all demand `minItems` items.
    let schema = json!({"type": "object", "properties": {
            "fields": {"type": "array", "minItems": 2, "items": {"type": "object",
                "properties": {"name": {"type": "string"}}, "required": ["name"],
                "additionalProperties": false}},
            "box": {"type": "object", "properties": {"size": {"type": "array", "minItems": 1,
                "maxItems": 3, "items": {"type": "integer"}}}, "additionalProperties": false},
            "pair": {"type": "array", "prefixItems": [{"type": "integer"}, {"type": "string"}],
                "items": false, "minItems": 2}
        }, "required": ["fields"], "additionalProperties": false});
    let spec = compile(&schema, &CompileOptions::default()).unwrap();
    let (_, rules) = pest_meta::parse_and_optimize(&spec.grammar_pest()).unwrap();
    let vm = pest_vm::Vm::new(rules);
    let good = json!({"fields": [{"name": "a"}, {"name": "b"}, {"name": "c"}],
            "box": {"size": [1]}, "pair": [1, "x"]});
    let s = spec.compress(&good).unwrap();
    assert_eq!(spec.expand(&s).unwrap(), good);
    assert!(vm.parse("document", &s).is_ok(), "{s}");
    // One field line too few.
    let one = s.replacen("\"b\"\n", "", 1).replacen("\"c\"\n", "", 1);
    assert!(one.contains("fields:\n\"a\"\n"), "{one}");
    let e = spec.expand(&one).unwrap_err().to_string();
    assert!(e.contains("at least 2 lines"), "{e}");
    assert!(vm.parse("document", &one).is_err());
    // An empty inline list.
    let empty = s.replace("[1]", "[]");
    assert_ne!(empty, s);
    let e = spec.expand(&empty).unwrap_err().to_string();
    assert!(e.contains("at least 1 items"), "{e}");
    assert!(vm.parse("document", &empty).is_err());
    // A tuple: its first two places are mandatory.
    let short = s.replace("[1 x]", "[1]");
    assert_ne!(short, s);
    assert!(spec.expand(&short).is_err());
    assert!(vm.parse("document", &short).is_err());
}

#[test]
fn draft_04_integers_have_no_fraction() {
    // Found by fuzzing: `150.0` is an integer from draft 6 on, not in draft 4.
    let schema = json!({"$schema": "http://json-schema.org/draft-04/schema#",
            "type": "object", "properties": {"n": {"type": "integer"}},
            "additionalProperties": false});
    let spec = compile(&schema, &CompileOptions::default()).unwrap();
    assert!(spec.compress(&json!({"n": 150.0})).is_err());
    assert!(spec.expand("n 150.0\n").is_err());
    assert_eq!(spec.expand("n 150\n").unwrap(), json!({"n": 150}));
    let later = json!({"type": "object", "properties": {"n": {"type": "integer"}}});
    let spec = compile(&later, &CompileOptions::default()).unwrap();
    assert!(spec.expand("n 150.0\n").is_ok());
}

#[test]
fn a_spec_whose_positional_fields_share_a_keyword_loads_back() {
    // Found by fuzzing: required names that sanitize to one keyword (never written).
    let schema = json!({"required": ["foo\nbar", "foo\"bar", "foo\\bar", "foo\rbar"]});
    let spec = compile(&schema, &CompileOptions::default()).unwrap();
    let back = CompiledSpec::from_json(&spec.to_json().unwrap()).unwrap();
    assert_eq!(back.grammar_pest(), spec.grammar_pest());
}

#[test]
fn max_items_is_part_of_the_language() {
    // Lines of a root list, a section's lines and an inline list stop at `maxItems`.
    let schema = json!({"type": "object", "properties": {
            "calls": {"type": "array", "minItems": 1, "maxItems": 3, "items": {"type": "object",
                "properties": {"name": {"type": "string"},
                    "tags": {"type": "array", "maxItems": 2, "items": {"type": "integer"}}},
                "required": ["name"], "additionalProperties": false}}
        }, "required": ["calls"], "additionalProperties": false});
    let spec = compile(&schema, &CompileOptions::default()).unwrap();
    let (_, rules) = pest_meta::parse_and_optimize(&spec.grammar_pest()).unwrap();
    let vm = pest_vm::Vm::new(rules);
    let three = json!({"calls": [{"name": "a"}, {"name": "b", "tags": [1, 2]}, {"name": "c"}]});
    let s = spec.compress(&three).unwrap();
    assert_eq!(spec.expand(&s).unwrap(), three);
    assert!(vm.parse("document", &s).is_ok(), "{s}");
    let four = s.replacen("\"c\"\n", "\"c\"\n\"d\"\n", 1);
    assert_ne!(four, s);
    assert!(vm.parse("document", &four).is_err(), "{four}");
    let tags = s.replace("[1 2]", "[1 2 3]");
    assert_ne!(tags, s);
    assert!(vm.parse("document", &tags).is_err(), "{tags}");
    let bnf = spec.grammar_bnf();
    assert!(bnf.contains("{1,3}") && bnf.contains("{0,2}"), "{bnf}");
    // A root list of at most 2 lines.
    let spec = compile(
        &json!({"type": "array", "maxItems": 2, "items": {"type": "integer"}}),
        &CompileOptions::default(),
    )
    .unwrap();
    let (_, rules) = pest_meta::parse_and_optimize(&spec.grammar_pest()).unwrap();
    let vm = pest_vm::Vm::new(rules);
    assert!(vm.parse("document", "1\n2\n").is_ok());
    assert!(vm.parse("document", "").is_ok());
    assert!(vm.parse("document", "1\n2\n3\n").is_err());
}

#[test]
fn bounds_and_formats_are_part_of_the_grammar() {
    // What a grammar can say of `minimum`, `minLength` and an asserted `format`, it
    // says, so a model cannot write `0` for a limit or `"last spring"` for a date.
    let schema = json!({"type": "object", "properties": {
            "name": {"type": "string", "minLength": 1},
            "limit": {"type": "integer", "minimum": 1},
            "offset": {"type": "integer", "minimum": 0},
            "ratio": {"type": "number", "exclusiveMinimum": 0},
            "since": {"type": "string", "format": "date"},
            "at": {"type": "string", "format": "date-time"}
        }, "required": ["name"], "additionalProperties": false});
    let spec = compile(&schema, &CompileOptions::default()).unwrap();
    let (_, rules) = pest_meta::parse_and_optimize(&spec.grammar_pest()).unwrap();
    let vm = pest_vm::Vm::new(rules);
    let x = json!({"name": "a b", "limit": 5, "offset": 0, "ratio": 0.5,
            "since": "2024-01-31", "at": "2024-01-31T10:00:00Z"});
    let s = spec.compress(&x).unwrap();
    assert_eq!(spec.expand(&s).unwrap(), x);
    assert!(vm.parse("document", &s).is_ok(), "{s}");
    for (from, to) in [
        ("\"a b\"", "\"\""),
        ("limit 5", "limit 0"),
        ("limit 5", "limit 5.5"),
        ("limit 5", "limit 50e-1"),
        ("offset 0", "offset -1"),
        ("offset 0", "offset -0"),
        ("ratio 0.5", "ratio -0.5"),
        ("since \"2024-01-31\"", "since \"January\""),
        ("since \"2024-01-31\"", "since Jan"),
        ("since \"2024-01-31\"", "since \"2024-1-31\""),
        ("\"2024-01-31T10:00:00Z\"", "\"2024-01-31\""),
        ("\"2024-01-31T10:00:00Z\"", "\"2024-01-31T10:00:00\""),
    ] {
        let bad = s.replace(from, to);
        assert_ne!(bad, s, "{from}");
        assert!(vm.parse("document", &bad).is_err(), "{bad}");
        // The mapper reads exactly what the grammars say, with a line:column error.
        let e = spec.expand_unvalidated(&bad).unwrap_err();
        assert!(e.location().is_some(), "{bad}: {e}");
    }
    // What the grammars admit, the mapper reads.
    for (from, to) in [
        ("limit 5", "limit 5.0"),
        ("limit 5", "limit 5e0"),
        (
            "\"2024-01-31T10:00:00Z\"",
            "\"2024-01-31t10:00:00.25+01:00\"",
        ),
    ] {
        let good = s.replace(from, to);
        assert!(vm.parse("document", &good).is_ok(), "{good}");
        assert!(spec.expand(&good).is_ok(), "{good}");
    }
    // The encoder writes each number in its terminal's form: `-0` where `>= 0`.
    let neg_zero: Value = serde_json::from_str(r#"{"name": "a", "offset": -0}"#).unwrap();
    let s = spec.compress(&neg_zero).unwrap();
    assert!(
        s.contains("offset 0") && vm.parse("document", &s).is_ok(),
        "{s}"
    );
    assert_eq!(spec.expand(&s).unwrap(), json!({"name": "a", "offset": 0}));
    let bnf = spec.grammar_bnf();
    assert!(
        bnf.contains("[since <date>]") && bnf.contains("[limit <positive>]"),
        "{bnf}"
    );
    // In 2020-12 `format` is an annotation, but the grammar still writes only valid
    // dates (so a model does too): a document with another string is not written.
    let mut annotated = schema.clone();
    annotated["$schema"] = json!("https://json-schema.org/draft/2020-12/schema");
    let spec = compile(&annotated, &CompileOptions::default()).unwrap();
    let x = json!({"name": "a", "since": "January"});
    let e = spec.compress(&x).unwrap_err().to_string();
    assert!(e.contains("/since") && e.contains("`date`"), "{e}");
    let x = json!({"name": "a", "since": "2024-02-29"});
    let s = spec.compress(&x).unwrap();
    let (_, rules) = pest_meta::parse_and_optimize(&spec.grammar_pest()).unwrap();
    assert!(pest_vm::Vm::new(rules).parse("document", &s).is_ok(), "{s}");
    assert!(spec.expand(&s.replace("02-29", "02-30")).is_err());
}

#[test]
fn patterns_are_part_of_the_grammar() {
    // The model wrote `start_time` as "2pm": the grammar no longer admits it, and the
    // decoder says where and which pattern.
    let schema = json!({"type": "object", "properties": {
            "start_time": {"type": "string", "pattern": "^[0-2][0-9]:[0-5][0-9]$"},
            "quote": {"type": "string", "pattern": "^a\"b"}
        }, "required": ["start_time"]});
    let spec = compile(&schema, &CompileOptions::default()).unwrap();
    let x = json!({"start_time": "09:30", "quote": "a\"b\n"});
    let s = spec.compress(&x).unwrap();
    assert_eq!(s, "\"09:30\" quote \"a\\\"b\\n\"");
    assert_eq!(spec.expand(&s).unwrap(), x);
    let (_, rules) = pest_meta::parse_and_optimize(&spec.grammar_pest()).unwrap();
    let vm = pest_vm::Vm::new(rules);
    assert!(vm.parse("document", &s).is_ok(), "{s}");
    for bad in [
        "\"2pm\"",
        "09",
        // The same value spelled with another escape than the grammar's.
        "\"09:30\" quote \"a\\u0022b\"",
    ] {
        assert!(vm.parse("document", bad).is_err(), "{bad}");
        let e = spec.expand(bad).unwrap_err();
        assert!(e.location().is_some(), "{bad}: {e}");
    }
    let e = spec.expand("\"09:30\" quote \"a\\u0022b\"").unwrap_err();
    assert_eq!(e.location(), Some((1, 15)), "{e}");
    let e = spec.expand("\"2pm\"").unwrap_err();
    assert_eq!(e.location(), Some((1, 1)), "{e}");
    assert!(e.to_string().contains("^[0-2][0-9]:[0-5][0-9]$"), "{e}");
    assert!(spec.compress(&json!({"start_time": "2pm"})).is_err());
    assert!(spec.grammar_gbnf().contains("pattern-0 ::="));
}

#[test]
fn expand_validates_what_no_grammar_says() {
    // The grammars cannot say `maximum` alone or a look-ahead: expand still never
    // returns JSON the schema rejects, and says where.
    let schema = json!({"type": "object", "properties": {
            "days": {"type": "integer", "maximum": 7},
            "code": {"type": "string", "pattern": "^(?!X)[A-Z]+$"},
            "tags": {"type": "array", "items": {"type": "string"}, "uniqueItems": true}
        }, "additionalProperties": false});
    let spec = compile(&schema, &CompileOptions::default()).unwrap();
    assert!(spec.encoder_validates());
    assert_eq!(
        spec.expand("days 3\ncode AB\n").unwrap(),
        json!({"days": 3, "code": "AB"})
    );
    for (text, pointer, keyword) in [
        ("days 9\n", "/days", "maximum"),
        ("code XA\n", "/code", "pattern"),
        ("tags:\na\na\n", "/tags", "uniqueItems"),
    ] {
        let e = spec.expand(text).unwrap_err();
        assert_eq!(
            (e.pointer(), e.keyword()),
            (Some(pointer), Some(keyword)),
            "{text}: {e}"
        );
        assert!(e.location().is_none());
        assert!(e.to_string().contains(pointer), "{e}");
        // Without validation the text is read as it is.
        assert!(spec.expand_unvalidated(text).is_ok(), "{text}");
    }
    // Where the encoder cannot validate alone (`not`), the validator decides.
    let schema = json!({"type": "array", "items": {"type": "integer", "not": {"const": 3}}});
    let spec = compile(&schema, &CompileOptions::default()).unwrap();
    assert!(!spec.encoder_validates());
    assert_eq!(spec.expand("1\n2\n").unwrap(), json!([1, 2]));
    let e = spec.expand("1\n3\n").unwrap_err();
    assert_eq!((e.pointer(), e.keyword()), (Some("/1"), Some("not")), "{e}");
}

#[test]
fn numbers_are_never_changed() {
    // serde_json reads numbers as 64-bit integers or doubles: a number it would round
    // is refused (with where), never changed.
    let spec = compile(&json!({"type": "integer"}), &CompileOptions::default()).unwrap();
    for text in ["18446744073709551617", "100000000000000000001", "1e400"] {
        let e = spec.expand(text).unwrap_err();
        assert_eq!(e.location(), Some((1, 1)), "{text}: {e}");
        let e = check_numbers(text).unwrap_err();
        assert!(matches!(e, CompressError::Inexact { .. }), "{e}");
        assert!(e.to_string().starts_with("(root): the number"), "{e}");
    }
    // What JSON carries exactly goes through, the same value.
    for text in [
        "18446744073709551615",
        "-9223372036854775808",
        "100000000000000000000",
    ] {
        check_numbers(text).unwrap();
        let x: Value = serde_json::from_str(text).unwrap();
        let s = spec.compress(&x).unwrap();
        let back = spec.expand(&s).unwrap();
        assert!(crate::codec::json_eq(&back, &x), "{text} -> {s} -> {back}");
    }
    let spec = compile(&json!({"type": "number"}), &CompileOptions::default()).unwrap();
    for text in ["1e-400", "0.30000000000000000001"] {
        assert!(spec.expand(text).is_err(), "{text}");
    }
    assert_eq!(spec.expand("0.1").unwrap(), json!(0.1));
    // Inside compact JSON (an unconstrained subtree) too, at the number's column.
    let spec = compile(
        &json!({"type": "object", "properties": {"x": {}}}),
        &CompileOptions::default(),
    )
    .unwrap();
    let e = spec
        .expand("x {\"a\":[1,100000000000000000001]}")
        .unwrap_err();
    assert_eq!(e.location(), Some((1, 11)), "{e}");
    let e = check_numbers(r#"{"x": {"a": [1, 1e-400]}}"#).unwrap_err();
    assert_eq!(e.pointer(), "/x/a/1");
}

/// Tool specs load back: one tool (its call named), several, one call, explicit and
/// compact notations.
#[test]
fn tool_specs_load_back() {
    let tool = |name: &str, params: Value| json!({"type": "function", "function": {"name": name, "parameters": params}});
    let one = json!([tool(
        "get_weather",
        json!({"type": "object",
            "properties": {"city": {"type": "string"}, "unit": {"enum": ["c", "f"]},
                "days": {"type": "object", "properties": {"n": {"enum": ["one", "two"]}},
                    "required": ["n"], "additionalProperties": false}},
            "required": ["city", "days"]})
    )]);
    let mut several = one.clone();
    several
        .as_array_mut()
        .unwrap()
        .push(tool("stop", json!({"type": "object", "properties": {}})));
    for tools in [one, several] {
        for calls in [ToolCalls::List, ToolCalls::One] {
            for style in [
                None,
                Some(NotationStyle::Compact),
                Some(NotationStyle::Explicit),
            ] {
                let opts = CompileOptions {
                    notation: style.map(NotationConfig::with_style),
                    calls,
                    ..Default::default()
                };
                let spec = compile(&tools, &opts).unwrap();
                let back = CompiledSpec::from_json(&spec.to_json().unwrap())
                    .unwrap_or_else(|e| panic!("{tools} {calls:?} {style:?}: {e}"));
                assert_eq!(back.grammar_gbnf(), spec.grammar_gbnf());
            }
        }
    }
}

#[test]
fn fallback_and_unions() {
    // Unconstrained subtrees are compact JSON; type unions are told apart by first token.
    let schema = json!({"type": "object", "properties": {
            "meta": {},
            "v": {"type": ["string", "number", "null", "array"], "items": {"type": "boolean"}}
        }, "required": ["v"]});
    let spec = compile(&schema, &CompileOptions::default()).unwrap();
    for x in [
        json!({"v": "a", "meta": {"k": [1, {"z": null}]}}),
        json!({"v": 2.5}),
        json!({"v": null, "other": "x"}),
        json!({"v": [true, false]}),
    ] {
        let s = spec.compress(&x).unwrap();
        assert_eq!(spec.expand(&s).unwrap(), x, "{s}");
    }
}

/// A schema that cannot validate instances (an unknown `$schema`) compiles, but
/// compressing (where the validator must run: `not`) says why nothing can be
/// compressed; `check_validator` says it up front.
#[test]
fn unusable_schemas_are_their_own_compress_error() {
    let schema = json!({"$schema": "http://example.com/meta", "type": "string",
                            "not": {"const": "b"}});
    let spec = compile(&schema, &CompileOptions::default()).unwrap();
    let up_front = spec.check_validator().unwrap_err();
    assert!(
        matches!(up_front, CompileError::RemoteRef { .. }),
        "{up_front}"
    );
    for e in [
        spec.compress(&json!("a")).unwrap_err(),
        spec.validate(&json!("a")).unwrap_err(),
    ] {
        assert!(matches!(e, CompressError::Schema(_)), "{e}");
        assert_eq!((e.pointer(), e.keyword()), ("", None));
        assert_eq!(
            e.to_string(),
            format!("the schema cannot validate instances: {up_front}")
        );
    }
}

#[test]
fn bad_schemas_are_clear_errors() {
    let e = compile(
        &json!({"$ref": "http://example.com/s.json"}),
        &CompileOptions::default(),
    )
    .unwrap_err();
    assert!(matches!(e, CompileError::RemoteRef { .. }), "{e}");
    let e = compile(
        &json!({"$ref": "#/$defs/missing"}),
        &CompileOptions::default(),
    )
    .unwrap_err();
    assert!(e.to_string().contains("does not exist"), "{e}");
    assert!(compile(&json!(3), &CompileOptions::default()).is_err());
}

#[test]
fn windows_line_endings_read_and_invisible_characters_named() {
    let schema = json!({"type": "object", "required": ["items"], "properties": {
            "title": {"type": "string"},
            "items": {"type": "array", "items": {"type": "object", "required": ["name"],
                "properties": {"name": {"type": "string"}, "n": {"type": "integer"}}}}}});
    let spec = compile(&schema, &CompileOptions::default()).unwrap();
    let value = json!({"title": "Shopping", "items": [{"name": "milk", "n": 2}, {"name": "tea"}]});
    let text = spec.compress(&value).unwrap();
    assert!(text.contains('\n'), "{text}");
    let crlf = text.replace('\n', "\r\n");
    assert_eq!(spec.expand(&crlf).unwrap(), value);
    assert_eq!(spec.expand_any_order(&crlf).unwrap(), value);
    // Any other invisible character is named, at its line:column.
    for (c, name) in [
        ('\u{A0}', "U+00A0 NO-BREAK SPACE"),
        ('\u{200B}', "U+200B ZERO WIDTH SPACE"),
        ('\t', "U+0009 CHARACTER TABULATION"),
        ('\r', "U+000D CARRIAGE RETURN"),
    ] {
        let bad = text.replacen(' ', &c.to_string(), 1);
        let e = spec.expand(&bad).unwrap_err();
        assert!(e.found().is_some_and(|f| f.contains(name)), "{c:?}: {e}");
    }
    // Inside what is quoted, by code point.
    let e = spec
        .expand(&text.replacen("milk", "mi\tlk", 1))
        .unwrap_err();
    assert!(e.to_string().contains("mi<U+0009>lk"), "{e}");
    let e = spec.expand(&format!("\u{FEFF}{text}")).unwrap_err();
    assert_eq!(e.location(), Some((1, 1)));
    assert!(e.to_string().contains("U+FEFF"), "{e}");
}

/// Draft-04 counts only a number written without fraction or exponent as an integer:
/// the encoder validates such a schema alone, and still rejects `1.0` where the schema
/// says `integer` (in a property, an item, an `anyOf` branch), with the validator's
/// pointer and keyword.
#[test]
fn draft04_integers_are_checked_as_written() {
    let schema = json!({
        "$schema": "http://json-schema.org/draft-04/schema#",
        "type": "object",
        "properties": {
            "n": {"type": "integer"},
            "xs": {"type": "array", "items": {"type": ["integer", "null"]}},
            "u": {"anyOf": [{"type": "integer", "minimum": 0}, {"type": "string"}]},
            "f": {"type": "number"}
        },
        "additionalProperties": false
    });
    let spec = compile(&schema, &CompileOptions::default()).unwrap();
    assert!(spec.shapes().encoding_validates);
    assert!(spec.encoder_validates());
    for ok in [
        r#"{"n": 1, "xs": [2, null], "u": 3, "f": 1.5}"#,
        r#"{"u": "a", "f": 2.0}"#,
    ] {
        let value: Value = serde_json::from_str(ok).unwrap();
        assert!(spec.validate(&value).is_ok(), "{ok}");
        assert!(spec.compress_str(ok).is_ok(), "{ok}");
        assert!(spec.compress(&value).is_ok(), "{ok}");
    }
    for (bad, pointer, keyword) in [
        (r#"{"n": 1.0}"#, "/n", "type"),
        (r#"{"n": 1e2}"#, "/n", "type"),
        (r#"{"xs": [1, 2.0]}"#, "/xs/1", "type"),
        (r#"{"u": 3.0}"#, "/u", "anyOf"),
    ] {
        let value: Value = serde_json::from_str(bad).unwrap();
        assert!(spec.validate(&value).is_err(), "{bad}");
        assert_eq!(
            spec.encode_validating(&value).map(|r| r.is_err()),
            Some(true)
        );
        for e in [
            spec.compress_str(bad).unwrap_err(),
            spec.compress(&value).unwrap_err(),
        ] {
            assert!(matches!(e, CompressError::Invalid { .. }), "{bad}: {e}");
            assert_eq!(
                (e.pointer(), e.keyword()),
                (pointer, Some(keyword)),
                "{bad}"
            );
        }
    }
}
