//! Exact JSON around the mapper of [`CompiledSpec::compress`](crate::CompiledSpec::compress)
//! and [`CompiledSpec::expand`](crate::CompiledSpec::expand): [`check_numbers`] finds the
//! numbers of a JSON text that parsing would change, [`json_eq`] compares JSON values with
//! numbers compared by value, and [`EncodeError`] is the encoder's own error
//! ([`CompiledSpec::encode_validating`](crate::CompiledSpec::encode_validating)).

// Stage 4 — the exact mapper: JSON -> shorthand ([`Encoder`]) and shorthand -> JSON
// ([`Decoder`]), both driven by the notation. The decoder reads left to right with one token
// of lookahead — the notation stage guarantees that is enough — and reports errors as
// `line:column`, what was expected and what was found. It finds the extent of each
// terminal with the lexers of [`crate::grammar::terminal`], so it reads exactly what the
// grammars say.
//
// Both read the notation through [`Tables`], its lookups by expression, derived from the
// saved shapes and notation when a spec is compiled or loaded.
//
// Files: `tables.rs` (the lookup tables: kind, object layout and open line fields by
// expression, the per-record indexes), `index.rs` (the encoder's packed per-record index),
// `encode.rs` (the encoder), `decode.rs` (the decoder: cursor, errors, tokens, values),
// `decode_object.rs` (the decoder's objects: block documents, records, undeclared
// properties), `out.rs` (where the decoder writes: a `serde_json::Value`, or compact JSON
// text as it reads), `json.rs` (JSON values: equality, writing), `number.rs` (numbers as text:
// exactness, the lexemes of the number terminals, the form the encoder writes),
// `regular.rs` (the check of regular forms: `pattern`, `format`, lengths, integer ranges),
// `node.rs` (the JSON the encoder reads: a `serde_json::Value`, or a document read from
// text without building one, which the validator reads too).

mod decode;
mod decode_object;
mod encode;
mod index;
mod json;
mod node;
mod number;
mod out;
mod regular;
mod tables;

pub(crate) use decode::{Decoder, MAX_DEPTH};
pub use encode::EncodeError;
pub(crate) use encode::Encoder;
pub use json::json_eq;
pub(crate) use node::{Doc, JsonNode, TextJson};
pub use number::check_numbers;
pub(crate) use tables::Tables;

use std::collections::BTreeMap;

/// No abbreviations (fields without choice words, items, undeclared properties).
static NO_ABBREV: BTreeMap<String, String> = BTreeMap::new();

#[cfg(test)]
mod listed_tests {
    //! `enum`/`const` of arrays and objects: written as the listed value's compact JSON,
    //! read back as exactly those, in every grammar.
    use crate::{compile, CompileOptions, CompiledSpec};
    use serde_json::{json, Value};

    fn spec(schema: Value) -> CompiledSpec {
        compile(&schema, &CompileOptions::default()).unwrap()
    }

    /// `x` compresses, the text expands back to `x`, pest parses the text, and the text
    /// is what compress writes again.
    fn round_trip(spec: &CompiledSpec, x: &Value) -> String {
        let text = spec.compress(x).unwrap_or_else(|e| panic!("{x}: {e}"));
        let back = spec.expand(&text).unwrap_or_else(|e| panic!("{text}: {e}"));
        assert!(crate::codec::json_eq(&back, x), "{x} -> {text} -> {back}");
        assert_eq!(spec.compress(&back).unwrap(), text);
        let (_, rules) = pest_meta::parse_and_optimize(&spec.grammar_pest()).unwrap();
        assert!(
            pest_vm::Vm::new(rules).parse("document", &text).is_ok(),
            "pest: {text}"
        );
        text
    }

    fn schema() -> Value {
        json!({
            "type": "object",
            "properties": {
                "point": {"enum": [{"x": 0, "y": 0}, {"x": 1, "y": 2}]},
                "dims": {"enum": [[1, 2], [3, 4, 5]]},
                "mixed": {"enum": ["auto", 3, null, {"w": "a b"}, [true]]},
                "frame": {"const": {"kind": "box", "pad": [1, 1]}},
                "either": {"anyOf": [
                    {"type": "integer"},
                    {"const": ["a", "b"]},
                    {"type": "object", "properties": {"k": {"type": "string"}}, "required": ["k"]}
                ]},
                "list": {"type": "array", "items": {"enum": [{"id": 1}, {"id": 2}]}},
                "nested": {"type": "object", "properties": {
                    "inner": {"enum": [{"deep": {"a": [1, {"b": null}]}}, []]}
                }}
            },
            "required": ["point", "frame"],
            "additionalProperties": false
        })
    }

    #[test]
    fn listed_values_round_trip() {
        let spec = spec(schema());
        let all = json!({
            "point": {"x": 1, "y": 2},
            "dims": [3, 4, 5],
            "mixed": {"w": "a b"},
            "frame": {"kind": "box", "pad": [1, 1]},
            "either": ["a", "b"],
            "list": [{"id": 2}, {"id": 1}, {"id": 2}],
            "nested": {"inner": {"deep": {"a": [1, {"b": null}]}}}
        });
        let text = round_trip(&spec, &all);
        assert!(text.contains(r#"{"x":1,"y":2}"#), "{text}");
        // The const object is a required field with one value: not written.
        assert!(!text.contains("box"), "{text}");
        for x in [
            json!({"point": {"x": 0, "y": 0}, "frame": {"kind": "box", "pad": [1, 1]}}),
            json!({"point": {"y": 0, "x": 0}, "frame": {"pad": [1, 1.0], "kind": "box"},
                   "mixed": [true], "either": {"k": "v"}, "nested": {"inner": []}}),
            json!({"point": {"x": 0, "y": 0}, "frame": {"kind": "box", "pad": [1, 1]},
                   "mixed": "auto", "either": 7, "list": []}),
            json!({"point": {"x": 0, "y": 0}, "frame": {"kind": "box", "pad": [1, 1]},
                   "mixed": 3}),
            json!({"point": {"x": 0, "y": 0}, "frame": {"kind": "box", "pad": [1, 1]},
                   "mixed": null}),
        ] {
            round_trip(&spec, &x);
        }
    }

    #[test]
    fn a_value_not_listed_is_refused_both_ways() {
        let spec = spec(schema());
        let base = json!({"point": {"x": 0, "y": 0}, "frame": {"kind": "box", "pad": [1, 1]}});
        let text = spec.compress(&base).unwrap();
        let good = r#"{"x":0,"y":0}"#;
        assert!(text.contains(good), "{text}");
        for bad in [
            r#"{"x":0,"y":1}"#,
            r#"{"y":0,"x":0}"#,
            r#"{"x":0, "y":0}"#,
            r#"{"x":0}"#,
        ] {
            let t = text.replacen(good, bad, 1);
            assert!(spec.expand(&t).is_err(), "{t}");
        }
        let mut other = base.clone();
        other["point"] = json!({"x": 5, "y": 5});
        assert!(spec.compress(&other).is_err());
        let mut other = base.clone();
        other["dims"] = json!([1, 2, 3]);
        assert!(spec.compress(&other).is_err());
    }

    #[test]
    fn every_grammar_lists_the_values() {
        let spec = spec(schema());
        let literal = r#"{"x":1,"y":2}"#;
        let escaped = r#"{\"x\":1,\"y\":2}"#;
        assert!(spec.grammar_gbnf().contains(escaped));
        assert!(spec.grammar_pest().contains(escaped));
        assert!(spec.grammar_lark().unwrap().contains(escaped));
        assert!(
            spec.grammar_bnf().contains(literal),
            "{}",
            spec.grammar_bnf()
        );
    }

    #[test]
    fn no_gap_is_left_for_listed_values() {
        let gaps: Vec<String> = spec(schema())
            .grammar_gaps()
            .into_iter()
            .map(|g| g.pointer)
            .collect();
        assert!(gaps.is_empty(), "{gaps:?}");
        // Beside keywords a listed value breaks, the listed values are still written,
        // so the enum stays a gap.
        let gaps = spec(
            json!({"type": "object", "properties": {"a": {"type": "string"}},
            "enum": [{"a": 1}, {"a": "x"}]}),
        )
        .grammar_gaps();
        assert_eq!(gaps.len(), 1, "{gaps:?}");
        assert_eq!(gaps[0].pointer, "/enum");
    }

    #[test]
    fn a_large_enum_of_objects_is_a_grammar_alternative_and_round_trips() {
        // Its compile time against size is measured in `benches/compile.rs` (enums of
        // 2,000 and 20,000 objects).
        let listed: Vec<Value> = (0..2_000)
            .map(|i| json!({"id": i, "tag": [i % 7]}))
            .collect();
        let spec = spec(
            json!({"type": "object", "properties": {"o": {"enum": listed}},
            "required": ["o"]}),
        );
        assert!(spec.grammar_gbnf().contains(r#"{\"id\":1999,\"tag\":[4]}"#));
        let x = json!({"o": {"id": 1_999, "tag": [1_999 % 7]}});
        let text = spec.compress(&x).unwrap();
        assert_eq!(text, r#"{"id":1999,"tag":[4]}"#);
        assert_eq!(spec.expand(&text).unwrap(), x);
    }
}
