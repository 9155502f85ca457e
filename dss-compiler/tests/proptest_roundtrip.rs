//! Property test: generated JSON Schemas and instances valid under them.
//!
//! A schema is drawn as a small tree ([`S`]): closed or open objects with required and
//! optional properties, string enums and mixed enums, arrays with `minItems`/`maxItems`,
//! nested objects, unions (`anyOf`) of closed objects told apart by a `const` tag, strings
//! (with `minLength`/`maxLength`, or `format: date`), numbers and integers (with bounds) and
//! booleans; an open object's instances may hold an undeclared property. Instances are drawn from the tree itself, so each is valid by construction (the
//! spec's validator confirms it). For each schema and instance `x`:
//!
//! - the schema compiles, and its pest grammar loads;
//! - `s = compress(x)` succeeds and `expand(s) == x` (JSON values: key order ignored, numbers
//!   compared by value), and `compress(expand(s)) == s`;
//! - the emitted pest grammar parses `s` (start rule `document`).
//!
//! The default case count (256) runs in a few seconds in a debug build.

use dss_compiler::codec::json_eq;
use dss_compiler::{compile, CompileOptions};
use proptest::prelude::*;
use proptest::test_runner::{FileFailurePersistence, TestCaseError};
use serde_json::{json, Map, Value};

/// A generated schema.
#[derive(Debug, Clone)]
enum S {
    Bool,
    Int {
        min: Option<i64>,
        max: Option<i64>,
    },
    Num {
        min: Option<f64>,
    },
    Str {
        min_len: usize,
        max_len: Option<usize>,
    },
    Date,
    /// A string enum, or (`mixed`) values of several JSON types.
    Enum(Vec<Value>),
    Array {
        items: Box<S>,
        min: usize,
        max: Option<usize>,
    },
    Object {
        props: Vec<Prop>,
        closed: bool,
    },
    /// `anyOf` of closed objects, each with a required `kind` tag (`const`).
    Union(Vec<Vec<Prop>>),
}

#[derive(Debug, Clone)]
struct Prop {
    name: String,
    schema: S,
    required: bool,
}

impl S {
    fn to_json(&self) -> Value {
        match self {
            S::Bool => json!({"type": "boolean"}),
            S::Int { min, max } => {
                let mut m = json!({"type": "integer"});
                if let Some(lo) = min {
                    m["minimum"] = json!(lo);
                }
                if let Some(hi) = max {
                    m["maximum"] = json!(hi);
                }
                m
            }
            S::Num { min } => {
                let mut m = json!({"type": "number"});
                if let Some(lo) = min {
                    m["minimum"] = json!(lo);
                }
                m
            }
            S::Str { min_len, max_len } => {
                let mut m = json!({"type": "string"});
                if *min_len > 0 {
                    m["minLength"] = json!(min_len);
                }
                if let Some(hi) = max_len {
                    m["maxLength"] = json!(hi);
                }
                m
            }
            S::Date => json!({"type": "string", "format": "date"}),
            S::Enum(values) => json!({"enum": values}),
            S::Array { items, min, max } => {
                let mut m = json!({"type": "array", "items": items.to_json()});
                if *min > 0 {
                    m["minItems"] = json!(min);
                }
                if let Some(hi) = max {
                    m["maxItems"] = json!(hi);
                }
                m
            }
            S::Object { props, closed } => object_json(props, *closed, None),
            S::Union(branches) => json!({"anyOf": branches
                .iter()
                .enumerate()
                .map(|(i, props)| object_json(props, true, Some(&tag(i))))
                .collect::<Vec<_>>()}),
        }
    }
}

/// The tag of union branch `i`.
fn tag(i: usize) -> String {
    ["line", "bar", "pie", "map"][i % 4].to_string()
}

fn object_json(props: &[Prop], closed: bool, tag: Option<&str>) -> Value {
    let mut properties = Map::new();
    let mut required = Vec::new();
    if let Some(t) = tag {
        properties.insert("kind".into(), json!({"const": t}));
        required.push(json!("kind"));
    }
    for p in props {
        properties.insert(p.name.clone(), p.schema.to_json());
        if p.required {
            required.push(json!(p.name));
        }
    }
    let mut m = json!({"type": "object", "properties": properties});
    if !required.is_empty() {
        m["required"] = Value::Array(required);
    }
    if closed {
        m["additionalProperties"] = json!(false);
    }
    m
}

// ── Schemas ──────────────────────────────────────────────────────────────────

/// Property names: identifiers mostly, some with spaces, dashes, non-ASCII letters or a
/// leading digit.
fn name() -> impl Strategy<Value = String> {
    prop_oneof![
        8 => "[a-z][a-zA-Z0-9_]{0,7}",
        1 => "[a-z]{1,4}[- ][a-z]{1,4}",
        1 => prop::sample::select(vec!["é", "1st", "$x", "Order Date", "limit", "fields"])
            .prop_map(str::to_string),
    ]
}

fn enum_values() -> impl Strategy<Value = Vec<Value>> {
    let string = prop_oneof![
        6 => "[a-z][a-z0-9]{0,5}",
        1 => "[A-Z][a-z]{0,4}( [a-z]{1,4})?",
        1 => "[a-z]{1,3}-[a-z]{1,3}",
    ];
    let mixed = prop_oneof![
        3 => string.clone().prop_map(Value::String),
        1 => (-100i64..100).prop_map(Value::from),
        1 => Just(Value::Null),
        1 => any::<bool>().prop_map(Value::Bool),
    ];
    prop_oneof![
        3 => prop::collection::vec(string.prop_map(Value::String), 1..5),
        1 => prop::collection::vec(mixed, 1..5),
    ]
    .prop_map(dedup_values)
}

fn dedup_values(values: Vec<Value>) -> Vec<Value> {
    let mut out: Vec<Value> = Vec::new();
    for v in values {
        if !out.contains(&v) {
            out.push(v);
        }
    }
    out
}

fn leaf() -> impl Strategy<Value = S> {
    prop_oneof![
        Just(S::Bool),
        (
            prop::option::of(-1000i64..1000),
            prop::option::of(0i64..1000)
        )
            .prop_map(|(min, span)| S::Int {
                min,
                max: span.map(|d| min.unwrap_or(0) + d),
            }),
        prop::option::of(prop::sample::select(vec![0.0, 0.5, -2.0, 1.0]))
            .prop_map(|min| S::Num { min }),
        (0usize..3, prop::option::of(0usize..6)).prop_map(|(min_len, extra)| S::Str {
            min_len,
            max_len: extra.map(|d| min_len + d),
        }),
        Just(S::Date),
        enum_values().prop_map(S::Enum),
    ]
}

/// Up to `n` properties with distinct names (never `kind`, the union tag).
fn props(inner: impl Strategy<Value = S>, n: usize) -> impl Strategy<Value = Vec<Prop>> {
    prop::collection::vec((name(), inner, any::<bool>()), 0..=n).prop_map(|ps| {
        let mut out: Vec<Prop> = Vec::new();
        for (name, schema, required) in ps {
            if name != "kind" && !out.iter().any(|p| p.name == name) {
                out.push(Prop {
                    name,
                    schema,
                    required,
                });
            }
        }
        out
    })
}

fn schema() -> impl Strategy<Value = S> {
    leaf().prop_recursive(3, 24, 4, |inner| {
        prop_oneof![
            3 => (props(inner.clone(), 4), prop::bool::weighted(0.8))
                .prop_map(|(props, closed)| S::Object { props, closed }),
            2 => (inner.clone(), 0usize..3, prop::option::of(0usize..3)).prop_map(
                |(items, min, extra)| S::Array {
                    items: Box::new(items),
                    min,
                    max: extra.map(|d| min + d),
                }
            ),
            1 => prop::collection::vec(props(inner, 3), 2..4).prop_map(S::Union),
        ]
    })
}

/// The root: an object (as most schemas are) with at least one property.
fn root() -> impl Strategy<Value = S> {
    (props(schema(), 5), prop::bool::weighted(0.8))
        .prop_filter("an object with properties", |(p, _)| !p.is_empty())
        .prop_map(|(props, closed)| S::Object { props, closed })
}

// ── Instances ────────────────────────────────────────────────────────────────

/// Characters of free strings: letters, and what the notation must quote or escape.
fn text(min: usize, max: usize) -> impl Strategy<Value = String> {
    let c = prop_oneof![
        6 => prop::char::range('a', 'z'),
        1 => prop::char::range('A', 'Z'),
        1 => prop::char::range('0', '9'),
        2 => prop::sample::select(vec![
            ' ', '"', '\\', '\n', '\t', '#', ':', '(', ')', '[', ']', ',', '-', '.', 'é', '😀',
        ]),
    ];
    prop::collection::vec(c, min..=max).prop_map(|cs| cs.into_iter().collect())
}

fn instance(s: &S) -> BoxedStrategy<Value> {
    match s {
        S::Bool => any::<bool>().prop_map(Value::Bool).boxed(),
        S::Int { min, max } => {
            let lo = min.unwrap_or(i64::MIN);
            let hi = max.unwrap_or(i64::MAX);
            prop_oneof![
                3 => lo.max(-1000)..=hi.min(1000).max(lo.max(-1000)),
                1 => lo..=hi,
            ]
            .prop_map(Value::from)
            .boxed()
        }
        S::Num { min } => {
            let lo = min.unwrap_or(f64::MIN);
            prop_oneof![
                3 => (-4000i32..4000).prop_map(|i| f64::from(i) / 8.0),
                1 => prop::num::f64::NORMAL | prop::num::f64::ZERO,
            ]
            .prop_map(move |f| Value::from(if f < lo { lo + (lo - f).abs() } else { f }))
            .prop_filter("finite", |v| v.as_f64().is_some_and(f64::is_finite))
            .boxed()
        }
        S::Str { min_len, max_len } => text(*min_len, max_len.unwrap_or(min_len + 8))
            .prop_map(Value::String)
            .boxed(),
        S::Date => (1990u32..2040, 1u32..=12, 1u32..=28)
            .prop_map(|(y, m, d)| Value::String(format!("{y:04}-{m:02}-{d:02}")))
            .boxed(),
        S::Enum(values) => prop::sample::select(values.clone()).boxed(),
        S::Array { items, min, max } => {
            prop::collection::vec(instance(items), *min..=max.unwrap_or(min + 3))
                .prop_map(Value::Array)
                .boxed()
        }
        S::Object { props, closed } => {
            let known = object_instance(props, None);
            if *closed || props.iter().any(|p| p.name == EXTRA) {
                return known;
            }
            // An open object may hold a property its schema does not declare.
            let extra = prop::option::weighted(
                0.3,
                prop_oneof![
                    text(0, 6).prop_map(Value::String),
                    (-50i64..50).prop_map(Value::from),
                    Just(json!({"a": [1, null]})),
                ],
            );
            (known, extra)
                .prop_map(|(mut o, extra)| {
                    if let (Value::Object(m), Some(v)) = (&mut o, extra) {
                        m.insert(EXTRA.into(), v);
                    }
                    o
                })
                .boxed()
        }
        S::Union(branches) => {
            let options: Vec<BoxedStrategy<Value>> = branches
                .iter()
                .enumerate()
                .map(|(i, props)| object_instance(props, Some(tag(i))))
                .collect();
            prop::strategy::Union::new(options).boxed()
        }
    }
}

/// The name of an undeclared property in an open object's instances.
const EXTRA: &str = "zz extra";

/// An object: every required property, each optional one or not.
fn object_instance(props: &[Prop], tag: Option<String>) -> BoxedStrategy<Value> {
    let fields: Vec<BoxedStrategy<Option<(String, Value)>>> = props
        .iter()
        .map(|p| {
            let name = p.name.clone();
            let value = instance(&p.schema).prop_map(move |v| (name.clone(), v));
            if p.required {
                value.prop_map(Some).boxed()
            } else {
                prop::option::of(value).boxed()
            }
        })
        .collect();
    fields
        .prop_map(move |fs| {
            let mut m = Map::new();
            if let Some(t) = &tag {
                m.insert("kind".into(), Value::String(t.clone()));
            }
            m.extend(fs.into_iter().flatten());
            Value::Object(m)
        })
        .boxed()
}

/// A schema and a few instances of it.
fn case() -> impl Strategy<Value = (S, Vec<Value>)> {
    root().prop_flat_map(|s| {
        let xs = prop::collection::vec(instance(&s), 1..4);
        (Just(s), xs)
    })
}

// ── The property ─────────────────────────────────────────────────────────────

fn round_trip(s: &S, xs: &[Value]) -> Result<(), TestCaseError> {
    let schema = s.to_json();
    let spec = compile(&schema, &CompileOptions::default())
        .map_err(|e| TestCaseError::fail(format!("compile: {e}\nschema: {schema}")))?;
    let grammar = spec.grammar_pest();
    let (_, rules) = pest_meta::parse_and_optimize(&grammar)
        .map_err(|e| TestCaseError::fail(format!("the pest grammar loads: {e:?}\n{grammar}")))?;
    let vm = pest_vm::Vm::new(rules);
    for x in xs {
        let ctx = || format!("schema: {schema}\ninstance: {x}");
        spec.validate(x).map_err(|e| {
            TestCaseError::fail(format!("generated instance invalid: {e}\n{}", ctx()))
        })?;
        let text = spec
            .compress(x)
            .map_err(|e| TestCaseError::fail(format!("compress: {e}\n{}", ctx())))?;
        let back = spec
            .expand(&text)
            .map_err(|e| TestCaseError::fail(format!("expand: {e}\ntext:\n{text}\n{}", ctx())))?;
        prop_assert!(
            json_eq(&back, x),
            "expand(compress(x)) = {back}\ntext:\n{text}\n{}",
            ctx()
        );
        let again = spec.compress(&back).map_err(|e| {
            TestCaseError::fail(format!("compress of expand's output: {e}\n{}", ctx()))
        })?;
        prop_assert_eq!(&again, &text, "compress(expand(s)) != s\n{}", ctx());
        if let Err(e) = vm.parse("document", &text) {
            return Err(TestCaseError::fail(format!(
                "the pest grammar rejects the shorthand: {e}\ntext:\n{text}\n{}\ngrammar:\n{grammar}",
                ctx()
            )));
        }
    }
    Ok(())
}

proptest! {
    // The default case count; a failing case is kept in tests/proptest_roundtrip.regressions.
    #![proptest_config(ProptestConfig {
        failure_persistence: Some(Box::new(FileFailurePersistence::WithSource("regressions"))),
        ..ProptestConfig::default()
    })]
    #[test]
    fn generated_schemas_round_trip((s, xs) in case()) {
        round_trip(&s, &xs)?;
    }
}

#[test]
fn a_generated_schema_is_what_it_says() {
    // The tree's JSON form, checked on one hand-written case: a union of tagged closed
    // objects and a bounded array.
    let s = S::Object {
        closed: true,
        props: vec![
            Prop {
                name: "items".into(),
                schema: S::Array {
                    items: Box::new(S::Int {
                        min: Some(0),
                        max: None,
                    }),
                    min: 1,
                    max: Some(2),
                },
                required: true,
            },
            Prop {
                name: "chart".into(),
                schema: S::Union(vec![vec![], vec![]]),
                required: false,
            },
        ],
    };
    assert_eq!(
        s.to_json(),
        json!({"type": "object", "properties": {
            "items": {"type": "array", "items": {"type": "integer", "minimum": 0},
                      "minItems": 1, "maxItems": 2},
            "chart": {"anyOf": [
                {"type": "object", "properties": {"kind": {"const": "line"}},
                 "required": ["kind"], "additionalProperties": false},
                {"type": "object", "properties": {"kind": {"const": "bar"}},
                 "required": ["kind"], "additionalProperties": false}]}},
            "required": ["items"], "additionalProperties": false})
    );
    round_trip(
        &s,
        &[
            json!({"items": [3]}),
            json!({"items": [0, 7], "chart": {"kind": "bar"}}),
        ],
    )
    .unwrap();
}
