use super::GrammarOptions;
use crate::grammar::{Consume, Restriction, Resume};
use crate::{compile, CompileOptions, CompiledSpec};
use pest_meta::{optimizer, parser};
use pest_vm::Vm;
use serde_json::{json, Value};
use std::collections::BTreeSet;

fn calls() -> CompiledSpec {
    let call = |name: &str, slots: Value| {
        let mut props = serde_json::Map::new();
        for (k, v) in slots.as_object().into_iter().flatten() {
            props.insert(k.clone(), json!({"enum": v}));
        }
        json!({"type": "object", "properties": {name: {
                "type": "object", "properties": props, "additionalProperties": false
            }}, "required": [name], "additionalProperties": false})
    };
    compile(
            &json!({"type": "array", "minItems": 1, "items": {"oneOf": [
                call("book_flight", json!({"from": ["paris", "rome", "oslo"], "to": ["paris", "rome", "oslo"]})),
                call("weather", json!({"city": ["paris", "rome", "oslo"], "unit": ["celsius", "fahrenheit"]})),
                call("play", json!({"song": ["yesterday", "help"]}))
            ]}}),
            &CompileOptions::default(),
        )
        .expect("compiles")
}

/// An OpenAI `tools` array whose parameters say nothing of `additionalProperties`, as
/// tool definitions usually do, with `extra` merged into the parameters.
fn weather_tool(extra: Value) -> CompiledSpec {
    let mut params = json!({
        "type": "object",
        "properties": {
            "city": {"type": "string"},
            "unit": {"enum": ["celsius", "fahrenheit"]}
        },
        "required": ["city"]
    });
    if let (Some(p), Some(e)) = (params.as_object_mut(), extra.as_object()) {
        p.extend(e.clone());
    }
    compile(
        &json!([{"type": "function", "function": {
            "name": "get_weather", "parameters": params
        }}]),
        &CompileOptions::default(),
    )
    .expect("compiles")
}

/// A call with an undeclared property, as the mapper writes it.
fn undeclared_call(spec: &CompiledSpec) -> String {
    let v = json!([{"get_weather": {"city": "Oslo", "unit": "celsius", "zip": "0150"}}]);
    spec.compress(&v)
        .expect("the mapper keeps undeclared properties")
}

/// Generation grammars in pest: the whole one and the one pruned to `unit: celsius`.
fn generation_grammars(spec: &CompiledSpec, allow_undeclared: bool) -> [String; 2] {
    let opts = GrammarOptions { allow_undeclared };
    let mut r = Restriction::default();
    r.candidates
        .insert("/*/get_weather/unit".into(), vec![json!("celsius")]);
    [
        spec.generation_grammar(opts).to_pest(),
        spec.pruned_grammar_with(&r, Resume::Start, opts).to_pest(),
    ]
}

#[test]
fn generation_offers_no_undeclared_property_a_tool_does_not_allow() {
    let spec = weather_tool(json!({}));
    let text = undeclared_call(&spec);
    assert!(text.contains("zip"), "{text}");
    let declared = spec
        .compress(&json!([{"get_weather": {"city": "Oslo", "unit": "celsius"}}]))
        .expect("compresses");
    // The published grammar and the mapper keep them.
    assert!(accepts(&spec.grammar_pest(), &text), "{text}");
    assert_eq!(
        spec.expand(&text).expect("expands")[0]["get_weather"]["zip"],
        json!("0150")
    );
    for g in generation_grammars(&spec, false) {
        assert!(!accepts(&g, &text), "{g}\n{text}");
        assert!(accepts(&g, &declared), "{g}\n{declared}");
    }
    // Neither the published GBNF's undeclared-property rule is in the generation one.
    let full = spec.grammar_gbnf();
    let gen = spec.generation_grammar(GrammarOptions::default()).to_gbnf();
    assert!(full.contains("-more"), "{full}");
    assert!(!gen.contains("-more"), "{gen}");
    // The pruned one's undeclared-property branch is gone; the pruning is the same.
    for g in generation_grammars(&spec, true) {
        assert!(accepts(&g, &text), "{g}\n{text}");
    }
}

#[test]
fn generation_offers_undeclared_properties_a_schema_allows_explicitly() {
    for extra in [
        json!({"additionalProperties": true}),
        json!({"additionalProperties": {"type": "string"}}),
        json!({"patternProperties": {"^z": {"type": "string"}}, "additionalProperties": false}),
    ] {
        let spec = weather_tool(extra.clone());
        let text = undeclared_call(&spec);
        for g in generation_grammars(&spec, false) {
            assert!(accepts(&g, &text), "{extra}: {g}\n{text}");
        }
    }
    // Closed: nowhere, not even when allowed.
    let spec = weather_tool(json!({"additionalProperties": false}));
    assert!(spec
        .compress(&json!([{"get_weather": {"city": "Oslo", "zip": "0150"}}]))
        .is_err());
    assert_eq!(
        spec.generation_grammar(GrammarOptions {
            allow_undeclared: true
        })
        .to_gbnf(),
        spec.grammar_gbnf()
    );
}

#[test]
fn an_explicit_allowance_survives_all_of_and_nesting() {
    // allOf: one branch allows them explicitly, the other declares the fields.
    let spec = compile(
        &json!({"allOf": [
            {"type": "object", "properties": {"a": {"type": "integer"}}, "required": ["a"]},
            {"additionalProperties": {"type": "integer"}}
        ]}),
        &CompileOptions::default(),
    )
    .expect("compiles");
    let text = spec.compress(&json!({"a": 1, "b": 2})).expect("compresses");
    let gen = spec.generation_grammar(GrammarOptions::default()).to_pest();
    assert!(accepts(&gen, &text), "{gen}\n{text}");
    // A nested object without `additionalProperties` under an explicitly open one.
    let spec = compile(
        &json!({"type": "object", "additionalProperties": true, "properties": {
            "inner": {"type": "object", "properties": {"x": {"type": "integer"}}}
        }}),
        &CompileOptions::default(),
    )
    .expect("compiles");
    let gen = spec.generation_grammar(GrammarOptions::default()).to_pest();
    let outer = spec
        .compress(&json!({"inner": {"x": 1}, "y": 2}))
        .expect("compresses");
    let inner = spec
        .compress(&json!({"inner": {"x": 1, "y": 2}}))
        .expect("compresses");
    assert!(accepts(&gen, &outer), "{gen}\n{outer}");
    assert!(!accepts(&gen, &inner), "{gen}\n{inner}");
    assert!(accepts(&spec.grammar_pest(), &inner), "{inner}");
}

#[test]
fn a_list_whose_items_have_values_is_not_written_empty() {
    let spec = compile(
        &json!({"type": "array", "items": {"type": "object", "additionalProperties": false,
                "required": ["check"], "properties": {"check": {
                    "type": "object", "additionalProperties": false, "required": ["ids"],
                    "properties": {
                        "ids": {"type": "array", "items": {"type": "integer"}},
                        "skip": {"type": "array", "items": {"type": "integer"}}}}}}}),
        &CompileOptions::default(),
    )
    .expect("compiles");
    let r = Restriction {
        numbers: vec![json!(102), json!(103)],
        number_sites: ["/*/check/ids/*".to_string(), "/*/check/skip/*".to_string()].into(),
        ..Restriction::default()
    };
    let pruned = spec
        .pruned_grammar_with(&r, Resume::Start, GrammarOptions::default())
        .to_pest();
    let text = |call: Value| {
        spec.compress(&json!([{ "check": call }]))
            .expect("compresses")
    };
    assert!(
        accepts(&pruned, &text(json!({"ids": [102, 103]}))),
        "{pruned}"
    );
    assert!(!accepts(&pruned, &text(json!({"ids": []}))), "{pruned}");
    // An optional list written at all carries a value too (left out, it says what
    // `[]` says); without values a required one may be empty.
    assert!(
        !accepts(&pruned, &text(json!({"ids": [103], "skip": []}))),
        "{pruned}"
    );
    assert!(
        accepts(&pruned, &text(json!({"ids": [103], "skip": [102]}))),
        "{pruned}"
    );
    assert!(accepts(&pruned, &text(json!({"ids": [103]}))), "{pruned}");
    let none = spec
        .pruned_grammar_with(
            &Restriction::default(),
            Resume::Start,
            GrammarOptions::default(),
        )
        .to_pest();
    assert!(accepts(&none, &text(json!({"ids": []}))), "{none}");
}

fn accepts(grammar: &str, text: &str) -> bool {
    let pairs = parser::parse(parser::Rule::grammar_rules, grammar).expect("pest parses");
    let ast = parser::consume_rules(pairs).expect("pest rules");
    let vm = Vm::new(optimizer::optimize(ast));
    vm.parse("document", text)
        .is_ok_and(|p| p.as_str().len() == text.len())
}

fn restriction(pairs: &[(&str, &str)]) -> Restriction {
    let mut r = Restriction::default();
    for (path, v) in pairs {
        r.candidates
            .entry(path.to_string())
            .or_default()
            .push(json!(v));
    }
    r
}

#[test]
fn a_line_leaving_behind_a_value_only_it_could_take_is_reported() {
    let spec = calls();
    let sites = spec.sites();
    let r = restriction(&[
        ("/*/weather/city", "rome"),
        ("/*/weather/unit", "celsius"),
        ("/*/book_flight/from", "paris"),
    ]);
    let line = spec
        .compress(&json!([{"weather": {"city": "rome"}}]))
        .expect("compresses");
    // `celsius` can only go in this weather call, which did not write its unit.
    assert_eq!(
        spec.line_leaves(&line, &r, Consume::Class, &sites),
        vec![("/*/weather/unit".to_string(), json!("celsius"))]
    );
    // After the whole call nothing is left that only it could take (`paris` belongs
    // to another call).
    let full = spec
        .compress(&json!([{"weather": {"city": "rome", "unit": "celsius"}}]))
        .expect("compresses");
    assert!(spec
        .line_leaves(&full, &r, Consume::Class, &sites)
        .is_empty());
    // A value another call could also take is not held back when that call will be
    // written: `oslo` found as a city and as a flight's destination, and the flight's
    // origin found too.
    let r2 = restriction(&[
        ("/*/weather/unit", "celsius"),
        ("/*/weather/city", "oslo"),
        ("/*/book_flight/to", "oslo"),
        ("/*/book_flight/from", "paris"),
    ]);
    let unit = spec
        .compress(&json!([{"weather": {"unit": "celsius"}}]))
        .expect("compresses");
    assert!(spec
        .line_leaves(&unit, &r2, Consume::Class, &sites)
        .is_empty());
    // Unless `oslo` was said next to this call's `celsius` (tied to it): held.
    let mut tied = r2.clone();
    tied.ties = vec![(
        ("/*/weather/city".into(), json!("oslo")),
        ("/*/weather/unit".into(), json!("celsius")),
    )];
    assert_eq!(
        spec.line_leaves(&unit, &tied, Consume::Class, &sites),
        vec![("/*/weather/city".to_string(), json!("oslo"))]
    );
    // Nothing else found for a flight: `oslo` would only open a flight of its own, so
    // this line holds it.
    let mut r3 = r2.clone();
    r3.candidates.remove("/*/book_flight/from");
    assert_eq!(
        spec.line_leaves(&unit, &r3, Consume::Class, &sites),
        vec![("/*/weather/city".to_string(), json!("oslo"))]
    );
    // A value this kind of call could take too does not make the flight pending.
    let mut r4 = r3.clone();
    r4.candidates
        .insert("/*/book_flight/from".into(), vec![json!("oslo")]);
    assert_eq!(
        spec.line_leaves(&unit, &r4, Consume::Class, &sites),
        vec![("/*/weather/city".to_string(), json!("oslo"))]
    );
    // Only the last line counts: the second line's call is judged on its own.
    let two = format!(
        "{}{}",
        spec.compress(&json!([{"book_flight": {"from": "paris"}}]))
            .expect("compresses"),
        line
    );
    assert_eq!(spec.line_leaves(&two, &r, Consume::Class, &sites).len(), 1);
    // A line that wrote no site says nothing.
    assert!(spec.line_leaves("", &r, Consume::Class, &sites).is_empty());
}

#[test]
fn a_value_named_in_the_same_clause_is_held() {
    // "fly from paris to rome": `rome` is also a weather city, so on its own the flight
    // line would not hold it; named in the flight's clause, the flight line writes it.
    let spec = calls();
    let sites = spec.sites();
    let mut r = restriction(&[
        ("/*/book_flight/from", "paris"),
        ("/*/book_flight/to", "rome"),
        ("/*/weather/city", "rome"),
        ("/*/weather/unit", "celsius"),
    ]);
    let line = spec
        .compress(&json!([{"book_flight": {"from": "paris"}}]))
        .expect("compresses");
    assert!(spec
        .line_leaves(&line, &r, Consume::Class, &sites)
        .is_empty());
    r.together = vec![(
        ("/*/book_flight/to".into(), json!("rome")),
        ("/*/book_flight/from".into(), json!("paris")),
    )];
    assert_eq!(
        spec.line_leaves(&line, &r, Consume::Class, &sites),
        vec![("/*/book_flight/to".to_string(), json!("rome"))]
    );
    // Once written, nothing is held.
    let full = spec
        .compress(&json!([{"book_flight": {"from": "paris", "to": "rome"}}]))
        .expect("compresses");
    assert!(spec
        .line_leaves(&full, &r, Consume::Class, &sites)
        .is_empty());
}

#[test]
fn a_modifier_tied_to_another_value_is_never_held() {
    let spec = calls();
    let sites = spec.sites();
    let unit = spec
        .compress(&json!([{"weather": {"unit": "celsius"}}]))
        .expect("compresses");
    // Tied to another value than the line wrote: never held for it, even where nothing
    // else would take it (the line holding a value tied to what it wrote: see
    // `a_line_leaving_behind_a_value_only_it_could_take_is_reported`).
    let mut r2 = restriction(&[
        ("/*/weather/unit", "celsius"),
        ("/*/weather/unit", "fahrenheit"),
        ("/*/weather/city", "oslo"),
    ]);
    r2.ties = vec![(
        ("/*/weather/city".into(), json!("oslo")),
        ("/*/weather/unit".into(), json!("fahrenheit")),
    )];
    assert!(spec
        .line_leaves(&unit, &r2, Consume::Class, &sites)
        .is_empty());
    r2.ties.clear();
    assert_eq!(
        spec.line_leaves(&unit, &r2, Consume::Class, &sites).len(),
        1
    );
}

#[test]
fn common_prefix_is_taken_by_segments() {
    assert_eq!(super::common_prefix("/*/book", "/*/book"), "/*/book");
    assert_eq!(super::common_prefix("/*/book", "/*/books"), "/*");
    assert_eq!(super::common_prefix("/*/book/x", "/*/book"), "/*/book");
    assert_eq!(super::common_prefix("/a", "/b"), "");
}

#[test]
fn a_required_bound_site_with_nothing_found_offers_its_known_values() {
    // Orders whose count is required in its record (however optional the order).
    let spec = crate::compile(
        &json!({"type": "array", "items": {"oneOf": [
                {"type": "object", "required": ["pizza"], "additionalProperties": false,
                 "properties": {"pizza": {"type": "object", "required": ["number"],
                    "additionalProperties": false,
                    "properties": {"number": {"type": "integer", "minimum": 1},
                                   "size": {"enum": ["small", "large"]}}}}}]}}),
        &CompileOptions::default(),
    )
    .expect("compiles");
    let order = |n: u64| {
        spec.compress(&json!([{"pizza": {"number": n, "size": "large"}}]))
            .expect("compresses")
    };
    let mut r = restriction(&[("/*/pizza/size", "large")]);
    r.bound.insert("/*/pizza/number".into());
    // Without known values, any count stays (the schema's range).
    let pruned = spec.pruned_grammar(&r, Resume::Start).to_pest();
    assert!(accepts(&pruned, &order(100)), "{pruned}");
    // With them, the count is one of them; the full grammar still takes any.
    r.known
        .insert("/*/pizza/number".into(), vec![json!(1), json!(2), json!(3)]);
    let pruned = spec.pruned_grammar(&r, Resume::Start).to_pest();
    for n in [1, 2, 3] {
        assert!(accepts(&pruned, &order(n)), "{pruned}\n{}", order(n));
    }
    assert!(!accepts(&pruned, &order(100)), "{pruned}");
    assert!(accepts(&spec.grammar_pest(), &order(100)));
    // A count found is the one offered, known values or not.
    r.candidates
        .insert("/*/pizza/number".into(), vec![json!(5)]);
    let pruned = spec.pruned_grammar(&r, Resume::Start).to_pest();
    assert!(accepts(&pruned, &order(5)), "{pruned}");
    assert!(!accepts(&pruned, &order(2)), "{pruned}");
    // A site the worked examples show is inferred stays whole.
    r.candidates.remove("/*/pizza/number");
    r.free.insert("/*/pizza/number".into());
    let pruned = spec.pruned_grammar(&r, Resume::Start).to_pest();
    assert!(accepts(&pruned, &order(100)), "{pruned}");
}

#[test]
fn pruning_keeps_the_found_values_and_the_variants_that_use_them() {
    let spec = calls();
    let gold = json!([{"weather": {"city": "oslo"}}]);
    let text = spec.compress(&gold).expect("compresses");
    let r = restriction(&[("/*/weather/city", "oslo")]);
    let pruned = spec.pruned_grammar(&r, Resume::Start).to_pest();
    assert!(accepts(&pruned, &text), "{pruned}\n{text}");
    // Another city, another function, or a slot nothing was found for: not offered.
    for other in [
        json!([{"weather": {"city": "rome"}}]),
        json!([{"play": {"song": "help"}}]),
        json!([{"weather": {"city": "oslo", "unit": "celsius"}}]),
    ] {
        let t = spec.compress(&other).expect("compresses");
        assert!(accepts(&spec.grammar_pest(), &t));
        assert!(!accepts(&pruned, &t), "{t} should be pruned:\n{pruned}");
    }
}

#[test]
fn a_line_holds_one_call_as_the_schema_says() {
    // `oneOf` closed single-key objects: merged into one record for the codec, but the
    // grammars admit one form at a time (two calls on one line is no instance).
    let spec = calls();
    let full = spec.grammar_pest();
    let two = spec
        .compress(&json!([{"weather": {"city": "oslo"}}, {"play": {"song": "help"}}]))
        .expect("compresses");
    assert!(accepts(&full, &two), "{full}\n{two}");
    let lines: Vec<&str> = two.lines().collect();
    assert_eq!(lines.len(), 2, "{two}");
    let joined = format!("{} {}\n", lines[0], lines[1]);
    assert!(!accepts(&full, &joined), "{joined}");
    let gbnf = spec.grammar_gbnf();
    assert!(gbnf.contains("form0") && gbnf.contains("form2"), "{gbnf}");
    let bnf = spec.grammar_bnf();
    assert!(
        bnf.contains("book_flight <Book_flight> | weather <Weather> | play <Play>"),
        "{bnf}"
    );
    // A form still takes any of its own fields, in order.
    let both = spec
        .compress(&json!([{"weather": {"city": "rome", "unit": "celsius"}}]))
        .expect("compresses");
    assert!(accepts(&full, &both), "{both}");
    // A required field after optional ones in a form, and a positional head.
    let spec = compile(
        &json!({"oneOf": [
            {"type": "object", "properties": {"id": {"type": "integer"}, "a": {"const": 1},
                "x": {"type": "integer"}}, "required": ["id", "a"], "additionalProperties": false},
            {"type": "object", "properties": {"id": {"type": "integer"}, "b": {"const": 1},
                "y": {"type": "integer"}}, "required": ["id", "b"], "additionalProperties": false}
        ]}),
        &CompileOptions::default(),
    )
    .expect("compiles");
    let pest = spec.grammar_pest();
    for x in [
        json!({"id": 1, "a": 1}),
        json!({"id": 2, "b": 1, "y": 3}),
        json!({"id": 2, "a": 1, "x": 3}),
    ] {
        let t = spec.compress(&x).expect("compresses");
        assert_eq!(spec.expand(&t).expect("expands"), x);
        assert!(accepts(&pest, &t), "{pest}\n{t}");
    }
    let t = spec
        .compress(&json!({"id": 1, "a": 1, "x": 3}))
        .expect("compresses");
    let mixed = format!("{t} y 4");
    assert!(!accepts(&pest, &mixed), "{pest}\n{mixed}");
}

#[test]
fn a_pruned_list_writes_each_found_value_as_often_as_it_was_found() {
    // Values are consumed at line ends; within a line, a list of found values must not
    // repeat one (`[(lettuce) (lettuce) …` looped in FoodOrdering's toppings).
    let topping = json!({"type": "object", "additionalProperties": false,
            "required": ["name"], "properties": {
                "name": {"enum": ["lettuce", "onion", "tomato", "bacon"]},
                "quantity": {"enum": ["light", "extra"]}}});
    for (items, min) in [
        (topping, 1),
        (json!({"enum": ["lettuce", "onion", "tomato", "bacon"]}), 0),
    ] {
        let spec = compile(
                &json!({"type": "array", "items": {
                    "type": "object", "additionalProperties": false, "required": ["dish", "toppings"],
                    "properties": {"dish": {"enum": ["burger", "salad"]},
                        "toppings": {"type": "array", "minItems": min, "items": items}}}}),
                &CompileOptions::default(),
            )
            .expect("compiles");
        let site = spec
            .sites()
            .into_iter()
            .map(|s| s.path)
            .find(|p| p.starts_with("/*/toppings/*"))
            .expect("a site in the list");
        let r = restriction(&[
            (site.as_str(), "lettuce"),
            (site.as_str(), "onion"),
            (site.as_str(), "onion"),
        ]);
        let pruned = spec.pruned_grammar(&r, Resume::Start).to_pest();
        let doc = |names: &[&str]| {
            let list: Vec<Value> = names
                .iter()
                .map(|n| {
                    if min == 1 {
                        json!({"name": n})
                    } else {
                        json!(n)
                    }
                })
                .collect();
            spec.compress(&json!([{"dish": "burger", "toppings": list}]))
                .expect("compresses")
        };
        for ok in [
            &["lettuce"][..],
            &["onion", "lettuce"],
            &["onion", "lettuce", "onion"],
            &["onion", "onion"],
        ] {
            let text = doc(ok);
            assert!(
                accepts(&pruned, &text),
                "{ok:?} rejected:\n{pruned}\n{text}"
            );
        }
        for bad in [
            &["lettuce", "lettuce"][..],
            &["onion", "onion", "onion"],
            &["tomato"],
            &["lettuce", "onion", "lettuce"],
        ] {
            let text = doc(bad);
            assert!(
                !accepts(&pruned, &text),
                "{bad:?} accepted:\n{pruned}\n{text}"
            );
            assert!(
                accepts(&spec.grammar_pest(), &text),
                "the full grammar takes {text}"
            );
        }
        // Each item keeps its other (found) fields.
        if min == 1 {
            let mut r = r.clone();
            r.candidates
                .insert("/*/toppings/*/quantity".into(), vec![json!("extra")]);
            let pruned = spec.pruned_grammar(&r, Resume::Start).to_pest();
            let text = spec
                .compress(&json!([{"dish": "burger", "toppings": [
                        {"name": "onion", "quantity": "extra"}, {"name": "lettuce"}]}]))
                .expect("compresses");
            assert!(accepts(&pruned, &text), "{pruned}\n{text}");
        }
    }
}

#[test]
fn a_value_written_uses_the_mention_with_the_fewest_readings() {
    // "a lemonade, large, plus a side order of onion rings": the first
    // `a` is the drink's (by its head), the second any order's. The drink's line uses
    // the drink's own `a`; the other stays for the side (before, the drink's line used
    // it, and the drink's own `a` was left to write `drink 1` after the orders).
    let sites = ["/*/drink/number", "/*/main_dish/number", "/*/side/number"];
    let mut r = restriction(&[]);
    for site in sites {
        r.candidates.insert(site.into(), vec![json!(1)]);
    }
    r.candidates
        .entry("/*/drink/number".into())
        .or_default()
        .push(json!(1));
    r.readings = vec![
        sites.iter().map(|s| (s.to_string(), json!(1))).collect(),
        vec![("/*/drink/number".to_string(), json!(1))],
    ];
    let rest = r.consumed(&[("/*/drink/number".into(), json!(1))], Consume::Class);
    assert_eq!(rest.at("/*/side/number"), [json!(1)], "{rest:?}");
    assert_eq!(rest.at("/*/drink/number"), [json!(1)], "{rest:?}");
    let rest = rest.consumed(&[("/*/side/number".into(), json!(1))], Consume::Class);
    assert!(rest.is_exhausted(), "{rest:?}");
}

#[test]
fn a_held_list_writes_the_values_only_it_could_take() {
    // FoodOrdering: `toppings [(lettuce) (tomato)]` ended early and the skipped `pickle`
    // came back as a main dish of its own. Held, the list takes every topping found
    // that only it could take before it ends; more than five are written in the
    // request's order, each once.
    let names = [
        "lettuce", "onion", "tomato", "pickle", "bacon", "mustard", "ketchup", "mayo",
    ];
    let spec = compile(
        &json!({"type": "array", "items": {
                "type": "object", "additionalProperties": false, "required": ["dish"],
                "properties": {"dish": {"enum": ["burger", "salad"]},
                    "side": {"enum": ["fries", "onion"]},
                    "toppings": {"type": "array", "minItems": 1, "items": {
                        "type": "object", "additionalProperties": false,
                        "required": ["name"], "properties": {
                            "name": {"enum": names},
                            "quantity": {"enum": ["light", "extra"]}}}}}}}),
        &CompileOptions::default(),
    )
    .expect("compiles");
    let site = "/*/toppings/*/name";
    let found = |tops: &[&str], dishes: &[&str]| {
        let mut r = restriction(&tops.iter().map(|t| (site, *t)).collect::<Vec<_>>());
        for d in dishes {
            r.candidates
                .entry("/*/dish".into())
                .or_default()
                .push(json!(d));
        }
        r.hold_lists = true;
        r
    };
    let doc = |tops: &[(&str, Option<&str>)]| {
        let list: Vec<Value> = tops
            .iter()
            .map(|(n, q)| match q {
                Some(q) => json!({"name": n, "quantity": q}),
                None => json!({"name": n}),
            })
            .collect();
        spec.compress(&json!([{"dish": "burger", "toppings": list}]))
            .expect("compresses")
    };
    let plain = |tops: &[&str]| doc(&tops.iter().map(|t| (*t, None)).collect::<Vec<_>>());
    let check = |r: &Restriction, text: &str, ok: bool| {
        let pruned = spec.pruned_grammar(r, Resume::Start).to_pest();
        assert_eq!(accepts(&pruned, text), ok, "{text}\n{pruned}");
        assert!(
            accepts(&spec.grammar_pest(), text),
            "the full grammar takes {text}"
        );
    };
    // Up to five values: any order, each once, none left out.
    let r = found(&["lettuce", "tomato", "pickle"], &["burger"]);
    check(&r, &plain(&["lettuce", "tomato"]), false);
    check(&r, &plain(&["pickle", "lettuce", "tomato"]), true);
    check(
        &r,
        &plain(&["lettuce", "tomato", "pickle", "pickle"]),
        false,
    );
    // Not held: it may end early.
    let free = Restriction {
        hold_lists: false,
        ..r.clone()
    };
    check(&free, &plain(&["lettuce", "tomato"]), true);
    // Another dish still asked for: the toppings may be its own.
    let two = found(&["lettuce", "tomato", "pickle"], &["burger", "salad"]);
    check(&two, &plain(&["lettuce", "tomato"]), true);
    // A value another field could take (the side `onion`) is not held.
    let mut side = found(&["lettuce", "onion"], &["burger"]);
    side.candidates
        .insert("/*/side".into(), vec![json!("onion")]);
    side.readings = vec![vec![
        (site.into(), json!("onion")),
        ("/*/side".into(), json!("onion")),
    ]];
    check(&side, &plain(&["lettuce"]), true);
    // More than five: in the request's order, the held ones all written.
    let many = found(&names, &["burger"]);
    check(&many, &plain(&names), true);
    check(&many, &plain(&names[1..]), false);
    let mut swapped = names.to_vec();
    swapped.swap(0, 1);
    check(&many, &plain(&swapped), false);
    let loose = Restriction {
        hold_lists: false,
        ..many.clone()
    };
    check(&loose, &plain(&["onion", "mayo"]), true);
    check(&loose, &plain(&["mayo", "onion"]), false);
    // A modifier tied to one item (`extra onions lettuce`) goes on that item only.
    let mut tied = found(&["onion", "lettuce"], &["burger"]);
    tied.candidates
        .insert("/*/toppings/*/quantity".into(), vec![json!("extra")]);
    tied.ties = vec![(
        ("/*/toppings/*/quantity".into(), json!("extra")),
        (site.into(), json!("onion")),
    )];
    check(
        &tied,
        &doc(&[("onion", Some("extra")), ("lettuce", None)]),
        true,
    );
    check(
        &tied,
        &doc(&[("onion", None), ("lettuce", Some("extra"))]),
        false,
    );
    check(
        &tied,
        &doc(&[("onion", Some("extra")), ("lettuce", Some("extra"))]),
        false,
    );
    // Held, the onions' item writes its `extra` (left out, it opened an order of its
    // own); not held, it may leave it out.
    check(&tied, &doc(&[("onion", None), ("lettuce", None)]), false);
    let loose_tied = Restriction {
        hold_lists: false,
        ..tied.clone()
    };
    check(
        &loose_tied,
        &doc(&[("onion", None), ("lettuce", None)]),
        true,
    );
    check(
        &loose_tied,
        &doc(&[("onion", None), ("lettuce", Some("extra"))]),
        false,
    );
}

#[test]
fn an_optional_section_whose_words_a_required_one_can_take_is_left_out() {
    // "profit by region": `region` reads as a field and as a sort key; the required
    // fields take it, and the sort is not offered unless a word only it takes says so.
    let names = json!({"enum": ["Profit", "Region"]});
    let spec = compile(
        &json!({"type": "object", "additionalProperties": false, "required": ["fields"],
                "properties": {
                    "fields": {"type": "array", "minItems": 1, "items": {"type": "object",
                        "additionalProperties": false, "required": ["fieldName"],
                        "properties": {"fieldName": names}}},
                    "sort": {"type": "array", "items": {"type": "object",
                        "additionalProperties": false, "required": ["fieldName"],
                        "properties": {"fieldName": names,
                            "direction": {"enum": ["asc", "desc"]}}}}}}),
        &CompileOptions::default(),
    )
    .expect("compiles");
    let mut r = restriction(&[
        ("/fields/*/fieldName", "Profit"),
        ("/sort/*/fieldName", "Profit"),
        ("/fields/*/fieldName", "Region"),
        ("/sort/*/fieldName", "Region"),
    ]);
    r.readings = ["Profit", "Region"]
        .iter()
        .map(|v| {
            vec![
                ("/fields/*/fieldName".to_string(), json!(v)),
                ("/sort/*/fieldName".to_string(), json!(v)),
            ]
        })
        .collect();
    let both = spec
        .compress(&json!({"fields": [{"fieldName": "Profit"}, {"fieldName": "Region"}]}))
        .expect("compresses");
    let sorted = spec
        .compress(&json!({"fields": [{"fieldName": "Profit"}],
                "sort": [{"fieldName": "Region"}]}))
        .expect("compresses");
    let pruned = spec.pruned_grammar(&r, Resume::Start).to_pest();
    assert!(accepts(&pruned, &both), "{pruned}\n{both}");
    assert!(!accepts(&pruned, &sorted), "{pruned}\n{sorted}");
    assert!(accepts(&spec.grammar_pest(), &sorted));
    // A word only the sort takes (`ascending`) keeps it.
    let mut asc = r.clone();
    asc.candidates
        .insert("/sort/*/direction".into(), vec![json!("asc")]);
    let pruned = spec.pruned_grammar(&asc, Resume::Start).to_pest();
    assert!(accepts(&pruned, &sorted), "{pruned}\n{sorted}");
    // While the fields section is open, the sort stays out; once the model has
    // moved on to the sort, it takes what is left.
    let open = spec
        .pruned_grammar(&r, Resume::Block { field: 0, items: 1 })
        .to_pest();
    assert!(accepts(&open, "Region\n"), "{open}");
    assert!(!accepts(&open, "sort:\nRegion\n"), "{open}");
    // The fields may end there, leaving `Region` unwritten; held, they may not (the
    // sort that could take it is not offered).
    assert!(accepts(&open, ""), "{open}");
    let held = Restriction {
        hold_lists: true,
        ..r.clone()
    };
    let open = spec
        .pruned_grammar(&held, Resume::Block { field: 0, items: 1 })
        .to_pest();
    assert!(!accepts(&open, ""), "{open}");
    assert!(accepts(&open, "Region\n"), "{open}");
    let written = held.consumed(
        &[
            ("/fields/*/fieldName".into(), json!("Profit")),
            ("/fields/*/fieldName".into(), json!("Region")),
        ],
        Consume::Class,
    );
    let done = spec
        .pruned_grammar(&written, Resume::Block { field: 0, items: 2 })
        .to_pest();
    assert!(accepts(&done, ""), "{done}");
    let moved = spec
        .pruned_grammar(&r, Resume::Block { field: 1, items: 0 })
        .to_pest();
    assert!(accepts(&moved, "Region\n"), "{moved}");
}

#[test]
fn a_section_asks_for_no_more_lines_once_its_found_values_are_written() {
    // A field's role is left unpruned (the writer infers it, `Restriction::free`); it
    // must not keep the fields section going once the named columns are written (the
    // model wrote fields nobody named).
    let spec = compile(
        &json!({"type": "object", "additionalProperties": false, "required": ["fields"],
                "properties": {"fields": {"type": "array", "minItems": 1, "items": {
                    "type": "object", "additionalProperties": false, "required": ["name"],
                    "properties": {"name": {"enum": ["Sales", "Profit", "Region"]},
                        "role": {"enum": ["dimension", "measure"]}}}}}}),
        &CompileOptions::default(),
    )
    .expect("compiles");
    let mut r = restriction(&[("/fields/*/name", "Sales")]);
    r.free.insert("/fields/*/role".into());
    let rest = r.consumed(&[("/fields/*/name".into(), json!("Sales"))], Consume::Class);
    let g = spec
        .pruned_grammar(&rest, Resume::Block { field: 0, items: 1 })
        .to_pest();
    assert!(accepts(&g, ""), "{g}");
    assert!(!accepts(&g, "Profit\n"), "{g}");
    // Before the found value is written, lines may follow.
    let start = spec.pruned_grammar(&r, Resume::Start).to_pest();
    assert!(accepts(&start, "fields:\nSales measure\n"), "{start}");
}

#[test]
fn a_value_every_form_could_take_keeps_no_form() {
    // FoodOrdering: `a` reads as the number 1 of any order; it must not keep a main
    // dish the request never names (`main_dish 1` written as an extra order).
    let order = |name: &str, ty: Value| {
        json!({"type": "object", "additionalProperties": false, "required": [name],
                "properties": {name: {"type": "object", "additionalProperties": false,
                    "required": ["number"], "properties": {
                        "number": {"enum": [1, 2, 3]}, "type": ty,
                        "size": {"enum": ["small", "large"]}}}}})
    };
    let spec = compile(
        &json!({"type": "array", "minItems": 1, "items": {"oneOf": [
                order("main_dish", json!({"enum": ["burger", "salad"]})),
                order("drink", json!({"enum": ["coke", "tea"]}))]}}),
        &CompileOptions::default(),
    )
    .expect("compiles");
    let mut r = restriction(&[("/*/drink/type", "coke"), ("/*/drink/size", "large")]);
    for site in ["/*/main_dish/number", "/*/drink/number"] {
        r.candidates.insert(site.into(), vec![json!(1)]);
    }
    let pruned = spec.pruned_grammar(&r, Resume::Start).to_pest();
    let drink = spec
        .compress(&json!([{"drink": {"number": 1, "type": "coke", "size": "large"}}]))
        .expect("compresses");
    assert!(accepts(&pruned, &drink), "{pruned}\n{drink}");
    let dish = spec
        .compress(&json!([{"main_dish": {"number": 1}}]))
        .expect("compresses");
    assert!(!accepts(&pruned, &dish), "{pruned}\n{dish}");
    // Named, the main dish is offered again.
    r.candidates
        .insert("/*/main_dish/type".into(), vec![json!("salad")]);
    let pruned = spec.pruned_grammar(&r, Resume::Start).to_pest();
    assert!(accepts(&pruned, &dish), "{pruned}\n{dish}");
    // The value alone (found nowhere else): every form stays possible.
    let mut only = Restriction::default();
    for site in ["/*/main_dish/number", "/*/drink/number"] {
        only.candidates.insert(site.into(), vec![json!(1)]);
    }
    let pruned = spec.pruned_grammar(&only, Resume::Start).to_pest();
    assert!(accepts(&pruned, &dish), "{pruned}\n{dish}");
    // After a line, such a value left over (an `a` no order used) starts no line of
    // its own: a release build wrote `drink 1` after the orders.
    let rest = spec
        .pruned_grammar(&only, Resume::Lines { items: 1 })
        .to_pest();
    assert!(accepts(&rest, ""), "{rest}");
    assert!(!accepts(&rest, &dish), "{rest}\n{dish}");
    let mut named = only.clone();
    named
        .candidates
        .insert("/*/drink/type".into(), vec![json!("coke")]);
    let rest = spec
        .pruned_grammar(&named, Resume::Lines { items: 1 })
        .to_pest();
    let coke = spec
        .compress(&json!([{"drink": {"number": 1, "type": "coke"}}]))
        .expect("compresses");
    assert!(accepts(&rest, &coke), "{rest}\n{coke}");
}

#[test]
fn found_fields_may_come_in_any_order_under_pruning() {
    // The model writes the slots as the request names them; the pruned grammar and
    // `expand_any_order` take any order (each once), the full grammar and `expand` the
    // notation's.
    let spec = calls();
    let gold = json!([{"weather": {"city": "oslo", "unit": "celsius"}}]);
    let text = spec.compress(&gold).expect("compresses");
    assert_eq!(text, "weather oslo celsius\n");
    let swapped = "weather celsius oslo\n";
    let r = restriction(&[("/*/weather/city", "oslo"), ("/*/weather/unit", "celsius")]);
    let pruned = spec.pruned_grammar(&r, Resume::Start).to_pest();
    assert!(accepts(&pruned, &text), "{pruned}");
    assert!(accepts(&pruned, swapped), "{pruned}");
    assert!(accepts(&pruned, "weather celsius\n"));
    assert!(!accepts(&pruned, "weather celsius celsius\n"));
    assert!(!accepts(&spec.grammar_pest(), swapped));
    assert!(spec.expand(swapped).is_err());
    assert_eq!(spec.expand_any_order(swapped).expect("reads"), gold);
    assert_eq!(
        spec.compress(&spec.expand_any_order(swapped).expect("reads"))
            .expect("compresses"),
        text
    );
    let twice = "weather celsius oslo celsius\n";
    let e = spec.expand_any_order(twice).expect_err("twice").to_string();
    assert!(e.contains("given already"), "{e}");
    // The lines so far are read in any order too (the rebuilds after each line).
    let p = spec.progress(swapped, &spec.sites()).expect("progress");
    assert_eq!(p.used.len(), 2, "{:?}", p.used);
}

#[test]
fn a_value_found_once_is_written_once_in_a_record() {
    // `from dallas to boston`: each city could be the departure or the destination;
    // found once, each goes to one field of the call, not to both.
    let spec = compile(
        &json!({"type": "array", "items": {"oneOf": [{"type": "object",
                "properties": {"distance": {"type": "object", "properties": {
                    "departure_city": {"enum": ["dallas", "boston", "oslo"]},
                    "destination_city": {"enum": ["dallas", "boston", "oslo"]},
                    "unit": {"enum": ["miles", "km"]}},
                    "additionalProperties": false}},
                "required": ["distance"], "additionalProperties": false}]}}),
        &CompileOptions::default(),
    )
    .expect("compiles");
    let mut r = restriction(&[
        ("/*/distance/departure_city", "dallas"),
        ("/*/distance/destination_city", "dallas"),
        ("/*/distance/departure_city", "boston"),
        ("/*/distance/destination_city", "boston"),
        ("/*/distance/unit", "miles"),
    ]);
    // One word, two readings: as extraction records a mention at two sites.
    r.readings = ["dallas", "boston"]
        .iter()
        .map(|city| {
            ["departure_city", "destination_city"]
                .iter()
                .map(|f| (format!("/*/distance/{f}"), json!(city)))
                .collect()
        })
        .collect();
    // Without them, the same value found at two sites may be two mentions: both
    // may be written.
    let apart = r.clone();
    let pruned = spec.pruned_grammar(&r, Resume::Start).to_pest();
    let text = |call: Value| {
        spec.compress(&json!([{ "distance": call }]))
            .expect("compresses")
    };
    for good in [
        json!({"departure_city": "dallas", "destination_city": "boston", "unit": "miles"}),
        json!({"departure_city": "boston", "destination_city": "dallas"}),
        json!({"departure_city": "boston"}),
    ] {
        let t = text(good);
        assert!(accepts(&pruned, &t), "{t}\n{pruned}");
    }
    for bad in [
        json!({"departure_city": "dallas", "destination_city": "dallas"}),
        json!({"departure_city": "boston", "destination_city": "boston", "unit": "miles"}),
        json!({"departure_city": "oslo"}),
    ] {
        let t = text(bad);
        assert!(!accepts(&pruned, &t), "{t}\n{pruned}");
    }
    let pruned = spec
        .pruned_grammar(
            &Restriction {
                readings: Vec::new(),
                ..apart
            },
            Resume::Start,
        )
        .to_pest();
    let t = text(json!({"departure_city": "dallas", "destination_city": "dallas"}));
    assert!(accepts(&pruned, &t), "{t}\n{pruned}");
    // Found twice (`from dallas to dallas`), it may be written twice.
    let mut twice = r.clone();
    for site in ["/*/distance/departure_city", "/*/distance/destination_city"] {
        twice
            .candidates
            .entry(site.into())
            .or_default()
            .push(json!("dallas"));
    }
    let pruned = spec.pruned_grammar(&twice, Resume::Start).to_pest();
    let t = text(json!({"departure_city": "dallas", "destination_city": "dallas"}));
    assert!(accepts(&pruned, &t), "{t}\n{pruned}");
}

#[test]
fn lines_stop_when_nothing_found_is_left() {
    // A free part of an item (a boolean flag nothing binds) does not keep a pruned
    // document going once its found values are written.
    let order = |name: &str| {
        json!({"type": "object", "properties": {name: {"type": "object", "properties": {
                "kind": {"enum": ["a", "b"]}, "flag": {"type": "boolean"}},
                "additionalProperties": false}}, "required": [name], "additionalProperties": false})
    };
    let spec = compile(
            &json!({"type": "array", "minItems": 1, "items": {"oneOf": [order("drink"), order("side")]}}),
            &CompileOptions::default(),
        )
        .expect("compiles");
    let r = restriction(&[("/*/drink/kind", "a")]);
    let first = spec.pruned_grammar(&r, Resume::Start).to_pest();
    let line = spec
        .compress(&json!([{"drink": {"kind": "a"}}]))
        .expect("compresses");
    assert!(accepts(&first, &line), "{first}");
    let more = format!("{line}{line}");
    let rest = r.consumed(&[("/*/drink/kind".into(), json!("a"))], Consume::Class);
    let g = spec
        .pruned_grammar(&rest, Resume::Lines { items: 1 })
        .to_pest();
    assert!(accepts(&g, ""), "{g}");
    let side = spec
        .compress(&json!([{"side": {"kind": "b"}}]))
        .expect("compresses");
    assert!(!accepts(&g, &side), "{g}");
    // The full grammar still takes any number of lines.
    assert!(accepts(&spec.grammar_pest(), &more));
}

#[test]
fn pruning_drops_the_calls_nothing_was_found_for() {
    let spec = calls();
    let r = restriction(&[("/*/weather/city", "oslo"), ("/*/play/song", "help")]);
    let pruned = spec.pruned_grammar(&r, Resume::Start).to_pest();
    for (gold, kept) in [
        (
            json!([{"weather": {"city": "oslo"}}, {"play": {"song": "help"}}]),
            true,
        ),
        (json!([{"play": {"song": "help"}}]), true),
        (json!([{"book_flight": {"from": "oslo"}}]), false),
    ] {
        let t = spec.compress(&gold).expect("compresses");
        assert_eq!(accepts(&pruned, &t), kept, "{t}\n{pruned}");
    }
    // A call kept for its found items is not written empty.
    let empty = spec
        .compress(&json!([{"weather": {}}]))
        .expect("compresses");
    assert!(accepts(&spec.grammar_pest(), &empty));
    assert!(!accepts(&pruned, &empty), "{empty}\n{pruned}");
    // Nothing found at all: every call stays offered (its optional slots, with no
    // candidate, are not).
    let none = spec
        .pruned_grammar(&Restriction::default(), Resume::Start)
        .to_pest();
    for call in ["book_flight", "weather", "play"] {
        let t = spec.compress(&json!([{call: {}}])).expect("compresses");
        assert!(accepts(&none, &t), "{t}\n{none}");
    }
}

#[test]
fn a_required_site_with_no_candidate_keeps_its_full_set() {
    let spec = compile(
        &json!({"type": "object", "properties": {
                "unit": {"enum": ["celsius", "fahrenheit"]}
            }, "required": ["unit"]}),
        &CompileOptions::default(),
    )
    .expect("compiles");
    let pruned = spec
        .pruned_grammar(&Restriction::default(), Resume::Start)
        .to_pest();
    assert!(accepts(&pruned, "celsius"));
    assert!(accepts(&pruned, "fahrenheit"));
}

#[test]
fn a_catalog_bound_free_string_becomes_its_candidates() {
    let spec = compile(
        &json!({"type": "object", "properties": {
                "fields": {"type": "array", "items": {"type": "object", "properties": {
                    "fieldName": {"type": "string"},
                    "aggregate": {"enum": ["sum", "mean"]}
                }, "required": ["fieldName"]}}
            }, "required": ["fields"]}),
        &CompileOptions::default(),
    )
    .expect("compiles");
    let mut r = restriction(&[
        ("/fields/*/fieldName", "Order Date"),
        ("/fields/*/fieldName", "Sales"),
        ("/fields/*/aggregate", "sum"),
    ]);
    r.bound.insert("/fields/*/fieldName".into());
    let pruned = spec.pruned_grammar(&r, Resume::Start).to_pest();
    let ok = spec
            .compress(&json!({"fields": [{"fieldName": "Order Date"}, {"fieldName": "Sales", "aggregate": "sum"}]}))
            .expect("compresses");
    assert!(accepts(&pruned, &ok), "{pruned}\n{ok}");
    for bad in [
        json!({"fields": [{"fieldName": "Profit"}]}),
        json!({"fields": [{"fieldName": "Sales", "aggregate": "mean"}]}),
    ] {
        let t = spec.compress(&bad).expect("compresses");
        assert!(!accepts(&pruned, &t), "{t} should be pruned:\n{pruned}");
    }
}

#[test]
fn progress_reads_the_lines_so_far_and_the_rest_is_resumed() {
    let spec = calls();
    let sites = spec.sites();
    let doc =
        json!([{"weather": {"city": "oslo"}}, {"book_flight": {"from": "paris", "to": "rome"}}]);
    let text = spec.compress(&doc).expect("compresses");
    let first_line = &text[..=text.find('\n').expect("two lines")];
    let p = spec.progress(first_line, &sites).expect("reads");
    assert_eq!(p.resume, Some(Resume::Lines { items: 1 }));
    assert_eq!(p.used, vec![("/*/weather/city".to_string(), json!("oslo"))]);
    // The rest, with what is left: the second line alone.
    let r = restriction(&[
        ("/*/book_flight/from", "paris"),
        ("/*/book_flight/to", "rome"),
    ]);
    let rest = spec
        .pruned_grammar(&r, Resume::Lines { items: 1 })
        .to_pest();
    assert!(accepts(&rest, &text[first_line.len()..]), "{rest}");
    assert!(!accepts(&rest, first_line));
    // A block section that needs an item still needs it after its header.
    let viz = compile(
        &json!({"type": "object", "properties": {
                "fields": {"type": "array", "minItems": 1, "items": {"enum": ["a", "b"]}}
            }, "required": ["fields"]}),
        &CompileOptions::default(),
    )
    .expect("compiles");
    let p = viz.progress("fields:\n", &viz.sites()).expect("reads");
    assert_eq!(p.resume, Some(Resume::Block { field: 0, items: 0 }));
    let rest = viz
        .pruned_grammar(
            &Restriction::default(),
            Resume::Block { field: 0, items: 0 },
        )
        .to_pest();
    assert!(!accepts(&rest, ""), "{rest}");
    assert!(accepts(&rest, "a\n"), "{rest}");
    // Nothing left: the rest may only end.
    let done = spec
        .pruned_grammar(&Restriction::default(), Resume::Lines { items: 2 })
        .to_pest();
    assert!(accepts(&done, ""));
}

/// L(G_x) ⊆ L(G): random restrictions of the viz spec; every document the pruned
/// grammar accepts among the bundled examples is accepted by the full grammar, and the
/// examples whose values are all offered are accepted by the pruned one.
#[test]
fn pruned_languages_are_subsets_on_the_bundled_examples() {
    let (spec, docs) = crate::test_support::viz_spec_and_examples();
    let sites = spec.sites();
    assert!(!docs.is_empty());
    let full = spec.grammar_pest();
    let mut seed = 0x9e37_79b9_7f4a_7c15u64;
    for doc in &docs {
        let text = spec.compress(doc).expect("compresses");
        let p = spec.progress(&text, &sites).expect("reads");
        // Its own values: accepted.
        let mut own = Restriction::default();
        for (path, v) in &p.used {
            own.candidates
                .entry(path.clone())
                .or_default()
                .push(v.clone());
        }
        let pruned = spec.pruned_grammar(&own, Resume::Start).to_pest();
        assert!(accepts(&pruned, &text), "{text}\n{pruned}");
        // Random halves of them: whatever is accepted is in the full language.
        for _ in 0..4 {
            let mut r = Restriction::default();
            for (path, v) in &p.used {
                seed ^= seed << 13;
                seed ^= seed >> 7;
                seed ^= seed << 17;
                if seed & 1 == 0 {
                    r.candidates
                        .entry(path.clone())
                        .or_default()
                        .push(v.clone());
                }
            }
            let pruned = spec.pruned_grammar(&r, Resume::Start).to_pest();
            for other in &docs {
                let t = spec.compress(other).expect("compresses");
                if accepts(&pruned, &t) {
                    assert!(accepts(&full, &t));
                }
            }
        }
    }
}

/// A tool as people write them: free strings and numbers, nothing listed.
fn painter() -> CompiledSpec {
    compile(
        &json!({"type": "array", "minItems": 1, "items": {"type": "object",
        "additionalProperties": false, "required": ["paint_wall"],
        "properties": {"paint_wall": {"type": "object", "additionalProperties": false,
            "required": ["width", "height"],
            "properties": {
                "width": {"type": "integer", "minimum": 1},
                "height": {"type": "number"},
                "coats": {"type": "integer", "minimum": 1},
                "finish": {"type": "string"},
                "color": {"type": "string", "minLength": 1},
                "date": {"type": "string", "format": "date"}
            }}}}}),
        &CompileOptions::default(),
    )
    .expect("compiles")
}

fn open_restriction(spec: &CompiledSpec, request: &str, numbers: &[Value]) -> Restriction {
    let mut r = Restriction {
        spans: crate::grammar::prune::Spans::of(request),
        numbers: numbers.to_vec(),
        ..Restriction::default()
    };
    for site in spec.sites() {
        let policy = site.span_policy();
        match site.kind {
            crate::sites::SiteKind::Text { .. } => {
                if policy.narrows() {
                    r.span_policy.insert(site.path.clone(), policy);
                }
                r.span_sites.insert(site.path)
            }
            crate::sites::SiteKind::Number { .. } => r.number_sites.insert(site.path),
            _ => false,
        };
    }
    r
}

/// A tool `name` with one required free string, `text`.
fn text_tool(name: &str) -> CompiledSpec {
    compile(
        &json!({"type": "array", "minItems": 1, "items": {"type": "object",
            "additionalProperties": false, "required": [name],
            "properties": {name: {"type": "object", "additionalProperties": false,
                "required": ["text"], "properties": {"text": {"type": "string"}}}}}}),
        &CompileOptions::default(),
    )
    .expect("compiles")
}

/// A tool whose required location has `City, ST` examples.
fn forecast() -> CompiledSpec {
    compile(
        &json!({"type": "array", "minItems": 1, "items": {"type": "object",
            "additionalProperties": false, "required": ["forecast"],
            "properties": {"forecast": {"type": "object", "additionalProperties": false,
                "required": ["place"], "properties": {
                    "place": {"type": "string",
                        "description": "Where, as 'Austin, TX' or 'Lyon, France'"},
                    "days": {"type": "integer"}}}}}}),
        &CompileOptions::default(),
    )
    .expect("compiles")
}

/// The first line's `tool` call of 199 sampled sentences of `spec`'s grammar pruned
/// for `request`, with the request's `numbers` (each sentence read back).
fn sampled_calls(spec: &CompiledSpec, request: &str, numbers: &[Value], tool: &str) -> Vec<Value> {
    let r = open_restriction(spec, request, numbers);
    let g = spec.pruned_grammar(&r, Resume::Start);
    (1..200u64)
        .map(|seed| {
            let text = crate::grammar::sample::Sampler::new(&g, seed).sentence();
            let v = spec
                .expand_any_order(&text)
                .unwrap_or_else(|e| panic!("{text:?}: {e}"));
            v[0][tool].clone()
        })
        .collect()
}

#[test]
fn a_code_another_field_s_name_labels_is_not_an_optional_field_s_span() {
    let spec = compile(
        &json!({"type": "array", "minItems": 1, "items": {"type": "object",
            "additionalProperties": false, "required": ["list_alerts"],
            "properties": {"list_alerts": {"type": "object", "additionalProperties": false,
                "required": ["pageSize"], "properties": {
                    "pageSize": {"type": "integer"},
                    "after": {"type": "string"},
                    "tags": {"type": "array", "items": {"type": "string"}},
                    "deviceSerial": {"type": "string"}}}}}}),
        &CompileOptions::default(),
    )
    .expect("compiles");
    let request = "Show the alerts of the device with serial number ZK42-77QP, 20 per page";
    let calls = sampled_calls(&spec, request, &[json!(20)], "list_alerts");
    assert!(
        calls
            .iter()
            .any(|c| c["deviceSerial"] == json!("ZK42-77QP")),
        "{calls:?}"
    );
    for c in &calls {
        assert_eq!(c["pageSize"], json!(20), "{c}");
        assert!(c.get("after").is_none(), "only the serial is marked: {c}");
        assert!(c.get("tags").is_none(), "nor a list's items: {c}");
    }
}

#[test]
fn a_form_the_request_gives_is_offered_and_one_it_lacks_is_completed() {
    let spec = forecast();
    let sample = |request: &str| -> Vec<String> {
        sampled_calls(&spec, request, &[], "forecast")
            .iter()
            .map(|c| c["place"].as_str().unwrap_or_default().to_string())
            .collect()
    };
    // The request has the form: only its spans of that form.
    for place in sample("rain tomorrow in Turku, Finland or not") {
        assert_eq!(place, "Turku, Finland");
    }
    // A comma before words in lower case is no `Head, Tail`: the head is completed
    // with a tail of the model's own, shaped as the examples' (capitalized words).
    let mut heads = std::collections::BTreeSet::new();
    for place in sample("forecast for Kyoto, and make it short") {
        let (head, tail) = place
            .rsplit_once(", ")
            .unwrap_or_else(|| panic!("{place:?}"));
        assert!("forecast for Kyoto".contains(head), "{place:?}");
        assert!(tail.split(' ').count() <= 1, "{place:?}");
        assert!(tail.starts_with(|c: char| c.is_uppercase()), "{place:?}");
        heads.insert(head.to_string());
    }
    assert!(heads.contains("Kyoto"), "{heads:?}");
    // The written value uses the span it completed.
    let r = open_restriction(&spec, "forecast for Kyoto", &[]);
    let used = r.consumed(
        &[("/*/forecast/place".into(), json!("Kyoto, Japan"))],
        Consume::Class,
    );
    assert!(used.spans.words.iter().any(|w| w.text == "Kyoto" && w.used));
}

#[test]
fn a_city_the_request_names_is_completed_with_its_region() {
    let spec = forecast();
    let mut r = open_restriction(&spec, "snow in Denver or in Kyoto", &[]);
    r.places = vec![
        crate::grammar::prune::Place {
            name: "Denver".into(),
            country: "United States".into(),
            state: Some(("CO".into(), "Colorado".into())),
        },
        crate::grammar::prune::Place {
            name: "Kyoto".into(),
            country: "Japan".into(),
            state: None,
        },
    ];
    let g = spec.pruned_grammar(&r, Resume::Start);
    let mut places = BTreeSet::new();
    for seed in 1..120u64 {
        let text = crate::grammar::sample::Sampler::new(&g, seed).sentence();
        let v = spec.expand_any_order(&text).expect("expands");
        for call in v.as_array().into_iter().flatten() {
            places.insert(
                call["forecast"]["place"]
                    .as_str()
                    .unwrap_or_default()
                    .to_string(),
            );
        }
    }
    // An example's tail is a code (`TX`): a state by its code.
    let expected: BTreeSet<String> = ["Denver, CO", "Kyoto, Japan"].map(String::from).into();
    assert_eq!(places, expected);
    assert!(r.span_policy["/*/forecast/place"].tail_codes);
    // Where none is, by its name.
    assert_eq!(r.places[0].completed(false), "Denver, Colorado");
}

/// A tool `grid` with required integers `rows`, `cols` and `layers`, and an optional
/// integer `seed`.
fn grid() -> CompiledSpec {
    compile(
        &json!({"type": "array", "minItems": 1, "items": {"type": "object",
            "additionalProperties": false, "required": ["grid"],
            "properties": {"grid": {"type": "object", "additionalProperties": false,
                "required": ["rows", "cols", "layers"], "properties": {
                    "rows": {"type": "integer"}, "cols": {"type": "integer"},
                    "layers": {"type": "integer"}, "seed": {"type": "integer"}}}}}}),
        &CompileOptions::default(),
    )
    .expect("compiles")
}

/// The `grid` calls of 199 sampled sentences of the grammar pruned for `request`.
fn sampled_grids(request: &str, numbers: &[Value]) -> Vec<Value> {
    sampled_calls(&grid(), request, numbers, "grid")
}

#[test]
fn a_number_said_once_is_written_once_across_required_and_optional_fields() {
    let calls = sampled_grids(
        "a grid of 3 rows, 4 columns and 7 layers",
        &[json!(3), json!(4), json!(7)],
    );
    let mut orders = BTreeSet::new();
    for call in &calls {
        let mut written: Vec<i64> = ["rows", "cols", "layers", "seed"]
            .iter()
            .filter_map(|f| call.get(*f).and_then(Value::as_i64))
            .collect();
        let n = written.len();
        orders.insert(format!("{call}"));
        written.sort_unstable();
        written.dedup();
        assert_eq!(written.len(), n, "a number written twice: {call}");
        assert!(
            call.get("seed").is_none(),
            "every number already used: {call}"
        );
    }
    assert!(orders.len() > 1, "the grammar still lets the model choose");
}

#[test]
fn a_number_said_twice_may_be_written_twice() {
    let calls = sampled_grids(
        "3 rows, 3 columns and 7 layers",
        &[json!(3), json!(3), json!(7)],
    );
    assert!(
        calls
            .iter()
            .any(|c| c["rows"] == json!(3) && c["cols"] == json!(3)),
        "no sentence writes 3 twice"
    );
    // 7 is said once: never in two fields.
    for c in &calls {
        let sevens = ["rows", "cols", "layers", "seed"]
            .iter()
            .filter(|f| c.get(**f) == Some(&json!(7)))
            .count();
        assert!(sevens <= 1, "{c}");
    }
}

#[test]
fn a_required_field_is_still_written_when_the_shared_numbers_run_out() {
    // Two numbers for three required fields: the third takes any integer.
    let calls = sampled_grids("a grid of 3 rows and 4 columns", &[json!(3), json!(4)]);
    for c in &calls {
        for f in ["rows", "cols", "layers"] {
            assert!(c.get(f).is_some_and(Value::is_i64), "{f} missing: {c}");
        }
        assert_ne!(c["rows"], c["cols"], "{c}");
    }
}

#[test]
fn spans_are_written_quoted_so_a_value_of_several_words_can_go_on() {
    let spec = text_tool("remind");
    let request = "remind me to water plants";
    let r = open_restriction(&spec, request, &[]);
    let g = spec.pruned_grammar(&r, Resume::Start);
    let mut several = false;
    for seed in 1..200u64 {
        let text = crate::grammar::sample::Sampler::new(&g, seed).sentence();
        let v = spec
            .expand_any_order(&text)
            .unwrap_or_else(|e| panic!("{text:?}: {e}"));
        let value = v[0]["remind"]["text"].as_str().unwrap_or_default();
        assert!(
            request.contains(value),
            "{value:?} is no span of the request"
        );
        // One-word strings read bare in this notation, but a span is never offered bare:
        // after its first word the value may still go on.
        let quoted = serde_json::to_string(value).unwrap_or_default();
        assert!(text.contains(&quoted), "{text:?} writes {value:?} bare");
        several |= value.contains(' ');
    }
    assert!(several, "no span of several words sampled");
}

#[test]
fn open_sites_take_the_request_s_spans_and_numbers() {
    let spec = painter();
    let request =
        "paint the north wall 12 feet wide and 2.5 m high in Forest Green with a satin finish";
    let r = open_restriction(&spec, request, &[json!(12), json!(2.5)]);
    let gbnf = spec.pruned_grammar(&r, Resume::Start).to_gbnf();
    // Numbers are the request's, each where its type allows: 2.5 is no integer.
    assert!(gbnf.contains("\"12\"") || gbnf.contains("\"12 "), "{gbnf}");
    assert!(gbnf.contains("\"2.5\""), "{gbnf}");
    assert!(
        !gbnf.contains("integer") && !gbnf.contains("number ::="),
        "{gbnf}"
    );
    // No date in the request: the optional date is left out; the spans are offered.
    assert!(!gbnf.contains("\"date "), "{gbnf}");
    // Every sentence of the pruned grammar is valid under the full schema, writes
    // the request's own words, and never half of the name `Forest Green`.
    let g = spec.pruned_grammar(&r, Resume::Start);
    let mut seen_span = false;
    for seed in 1..300u64 {
        let text = crate::grammar::sample::Sampler::new(&g, seed).sentence();
        let v = spec
            .expand_any_order(&text)
            .unwrap_or_else(|e| panic!("{text:?}: {e}"));
        let call = &v[0]["paint_wall"];
        for field in ["finish", "color"] {
            if let Some(s) = call.get(field).and_then(Value::as_str) {
                seen_span = true;
                assert!(request.contains(s), "{s:?} is no span of the request");
                assert!(s != "Forest" && s != "Green", "{text:?}");
            }
        }
        for field in ["width", "height", "coats"] {
            if let Some(n) = call.get(field) {
                assert!(*n == json!(12) || *n == json!(2.5), "{text:?}");
            }
        }
    }
    assert!(seen_span);
}

/// How many of 59 sampled sentences of the grammar of the rest, after one line that
/// wrote `used`, write another line (the request's open values as `open_restriction`).
fn sampled_lines_after_one(
    spec: &CompiledSpec,
    request: &str,
    numbers: &[Value],
    used: &[(String, Value)],
) -> usize {
    let r = open_restriction(spec, request, numbers);
    let rest = r.consumed(used, crate::grammar::Consume::Class);
    let g = spec.pruned_grammar(&rest, Resume::Lines { items: 1 });
    (1..60u64)
        .map(|seed| crate::grammar::sample::Sampler::new(&g, seed).sentence())
        .filter(|t| !t.trim().is_empty())
        .count()
}

fn shipper() -> CompiledSpec {
    compile(
            &json!({"type": "array", "minItems": 1, "items": {"type": "object",
            "additionalProperties": false, "required": ["ship"],
            "properties": {"ship": {"type": "object", "additionalProperties": false,
                "required": ["address"],
                "properties": {
                    "address": {"type": "string",
                        "description": "Street and town, as 'Street, Town', e.g. '12 Oak Lane, Dover'."},
                    "qty": {"type": "integer"},
                    "note": {"type": "string"}
                }}}}}),
            &CompileOptions::default(),
        )
        .expect("compiles")
}

#[test]
fn a_described_form_and_an_optional_field_narrow_the_spans() {
    let spec = shipper();
    let request = "ship 3 boxes to 40 Elm Road, Salem and mark them Fragile";
    let r = open_restriction(&spec, request, &[json!(3), json!(40)]);
    let g = spec.pruned_grammar(&r, Resume::Start);
    let mut notes = BTreeSet::new();
    for seed in 1..300u64 {
        let text = crate::grammar::sample::Sampler::new(&g, seed).sentence();
        let v = spec
            .expand_any_order(&text)
            .unwrap_or_else(|e| panic!("{text:?}: {e}"));
        let call = &v[0]["ship"];
        // The address is of the examples' form: never `Salem` or `Elm Road` alone.
        let address = call["address"].as_str().unwrap_or_default();
        assert!(address.ends_with("Elm Road, Salem"), "{text:?}");
        if let Some(n) = call.get("note").and_then(Value::as_str) {
            notes.insert(n.to_string());
        }
    }
    // The optional note takes spans the request marks (names), never its plain words.
    assert!(notes.contains("Fragile"), "{notes:?}");
    for n in &notes {
        for plain in ["ship", "boxes", "and", "mark", "them"] {
            assert!(!n.split(' ').any(|w| w == plain), "{notes:?}");
        }
    }
}

#[test]
fn numbers_and_plain_words_left_ask_for_no_more_lines() {
    let spec = shipper();
    let lines_after_one = |request: &str, numbers: &[Value]| {
        let used = [
            ("/*/ship/address".to_string(), json!("Elm Road, Salem")),
            ("/*/ship/qty".to_string(), json!(3)),
        ];
        sampled_lines_after_one(&spec, request, numbers, &used)
    };
    assert_eq!(
        lines_after_one(
            "ship 3 boxes to Elm Road, Salem by 5 pm",
            &[json!(3), json!(5)]
        ),
        0,
        "a number left is no evidence of a second shipment"
    );
    assert!(
        lines_after_one(
            "ship 3 boxes to Elm Road, Salem and 2 to Pine Street, Dover",
            &[json!(3), json!(2)]
        ) > 0,
        "a name left may be a second shipment's"
    );
}

#[test]
fn plain_words_left_ask_for_no_more_lines_where_marked_ones_do() {
    let spec = text_tool("add_note");
    let lines_after_one = |request: &str| {
        let used = [("/*/add_note/text".to_string(), json!("buy milk"))];
        sampled_lines_after_one(&spec, request, &[], &used)
    };
    assert_eq!(
        lines_after_one("note down buy milk and water the plants"),
        0,
        "plain words are no evidence of a second note"
    );
    assert!(
        lines_after_one("note down buy milk and call Ada Lovelace") > 0,
        "a name left may be a second note's"
    );
}

#[test]
fn a_required_number_with_none_given_is_bounded_and_dates_come_from_the_request() {
    let spec = painter();
    let mut r = open_restriction(&spec, "paint it on 2024-05-01", &[]);
    r.dates = vec![json!("2024-05-01")];
    let g = spec.pruned_grammar(&r, Resume::Start);
    let gbnf = g.to_gbnf();
    assert!(gbnf.contains("2024-05-01"), "{gbnf}");
    for seed in 1..300u64 {
        let text = crate::grammar::sample::Sampler::new(&g, seed).sentence();
        let v = spec
            .expand_any_order(&text)
            .unwrap_or_else(|e| panic!("{text:?}: {e}"));
        let call = &v[0]["paint_wall"];
        assert!(call.get("coats").is_none(), "no number: no optional one");
        if let Some(d) = call.get("date") {
            assert_eq!(d, "2024-05-01");
        }
        // Required numbers keep a range, bounded in digits.
        for field in ["width", "height"] {
            let t = call[field].to_string();
            let digits = t
                .trim_start_matches('-')
                .split('.')
                .next()
                .map_or(0, str::len);
            assert!(digits <= 15, "{t}");
        }
    }
}
