//! Deep recursion without stack overflow. A schema's shapes form a graph: a chain of
//! thousands of `$ref`s, `allOf`s, `anyOf`s, properties or items is walked one recursive
//! call per link, by the shape builder (`materialize`) and the grammar builder
//! (`value_as`, `body`, `array_tail`). Those calls go through [`deep`], which moves to a
//! fresh heap-allocated stack segment when the current one runs low
//! ([`stacker::maybe_grow`], as rustc does). A stack overflow aborts the process and no
//! panic guard catches it, so no such walk may go without it.
//!
//! The limit is the shape builder's: a schema has at most 50,000 expressions (beyond that,
//! new ones are plain JSON); the shape builder enters no expression already in progress
//! and the grammar builder builds each rule once, so neither goes deeper than that. A chain
//! of 20,000 `allOf` links compiles in about 2 s and 100 MB. Walks over JSON nesting (the
//! schema document, an instance, a shorthand text) are bounded by the nesting the JSON and
//! shorthand readers accept (128 levels), the sites walk by its own depth limit.

/// Grow the stack when less than this is left before a recursive call.
const RED_ZONE: usize = 128 * 1024;
/// The size of each new stack segment.
const SEGMENT: usize = 4 * 1024 * 1024;

/// Run `f` (a recursive call) on enough stack.
#[inline]
pub(crate) fn deep<R>(f: impl FnOnce() -> R) -> R {
    stacker::maybe_grow(RED_ZONE, SEGMENT, f)
}

/// Run `f` on a thread with a 512 KiB stack (the main thread has 8 MiB), so that a
/// recursion left without [`deep`] overflows in a test, not only on a bigger schema.
#[cfg(test)]
pub(crate) fn on_small_stack(f: impl FnOnce() + Send + 'static) {
    std::thread::Builder::new()
        .stack_size(512 * 1024)
        .spawn(f)
        .expect("spawn a test thread")
        .join()
        .expect("the test thread panicked");
}

#[cfg(test)]
mod tests {
    //! Long reference chains through every stage: compile, grammars, `spec.json`, notation
    //! YAML, sites, and a compress/expand of a small instance, on a small stack.
    use super::on_small_stack;
    use crate::codec::Encoder;
    use crate::grammar::{Restriction, Resume};
    use crate::{compile, CompileOptions, CompiledSpec};
    use serde_json::{json, Map, Value};

    /// `{"$defs": {d0: link(1), …, d{n-1}: link(n), d{n}: last}, "$ref": "#/$defs/d0"}`.
    fn chain(n: usize, link: impl Fn(usize) -> Value, last: Value) -> Value {
        let mut defs: Map<String, Value> = (0..n).map(|i| (format!("d{i}"), link(i + 1))).collect();
        defs.insert(format!("d{n}"), last);
        json!({"$defs": defs, "$ref": "#/$defs/d0"})
    }

    fn to(i: usize) -> Value {
        json!({"$ref": format!("#/$defs/d{i}")})
    }

    /// Everything a user can do with the compiled spec of `schema`, with `instance`.
    fn every_stage(schema: &Value, instance: &Value) {
        let spec = compile(schema, &CompileOptions::default()).unwrap();
        spec.check_validator().unwrap();
        let files = spec.artifacts().unwrap();
        assert_eq!(files.len(), 5);
        assert!(files.iter().all(|(_, text)| !text.is_empty()));
        spec.notation_yaml().unwrap();
        let _ = spec.warnings();
        let sites = spec.sites();
        let g = spec.pruned_grammar(&Restriction::default(), Resume::default());
        assert!(!g.to_gbnf().is_empty());
        assert!(!g.to_lark().unwrap().is_empty());
        let loaded = CompiledSpec::from_json(&spec.to_json().unwrap()).unwrap();
        let text = spec.compress(instance).unwrap();
        assert_eq!(&loaded.expand(&text).unwrap(), instance);
        assert_eq!(loaded.compress(instance).unwrap(), text);
        let lines = if text.ends_with('\n') {
            text
        } else {
            format!("{text}\n")
        };
        spec.progress(&lines, &sites).unwrap();
    }

    #[test]
    fn all_of_chain() {
        on_small_stack(|| {
            let s = chain(
                3000,
                |i| json!({"allOf": [to(i)]}),
                json!({"type": "integer"}),
            );
            every_stage(&s, &json!(7));
        });
    }

    #[test]
    fn ref_chain() {
        on_small_stack(|| {
            let s = chain(10_000, to, json!({"type": "integer"}));
            every_stage(&s, &json!(7));
        });
    }

    #[test]
    fn any_of_chain() {
        on_small_stack(|| {
            let s = chain(
                3000,
                |i| json!({"anyOf": [to(i), {"type": "null"}]}),
                json!({"type": "string"}),
            );
            every_stage(&s, &json!("x"));
        });
    }

    #[test]
    fn properties_chain() {
        on_small_stack(|| {
            let s = chain(
                10_000,
                |i| json!({"type": "object", "properties": {"a": to(i)}}),
                json!({"type": "integer"}),
            );
            every_stage(&s, &json!({"a": {"a": {}}}));
        });
    }

    #[test]
    fn required_properties_chain() {
        on_small_stack(|| {
            let s = chain(
                10_000,
                |i| json!({"type": "object", "properties": {"a": to(i)}, "required": ["a"]}),
                json!({"type": "integer"}),
            );
            // No finite small instance: the chain must still compile and write its grammars.
            let spec = compile(&s, &CompileOptions::default()).unwrap();
            assert_eq!(spec.artifacts().unwrap().len(), 5);
        });
    }

    #[test]
    fn items_chain() {
        on_small_stack(|| {
            let s = chain(
                10_000,
                |i| json!({"type": "array", "items": to(i)}),
                json!({"type": "integer"}),
            );
            every_stage(&s, &json!([[], [[]]]));
        });
    }

    #[test]
    fn cyclic_graph() {
        on_small_stack(|| {
            let n = 5000;
            let defs: Map<String, Value> = (0..n)
                .map(|i| {
                    let v = json!({"type": "object", "properties": {
                        "n": to((i + 1) % n),
                        "m": to((i * 7 + 3) % n),
                    }});
                    (format!("d{i}"), v)
                })
                .collect();
            let s = json!({"$defs": defs, "$ref": "#/$defs/d0"});
            every_stage(&s, &json!({"n": {"m": {}}, "m": {"n": {}}}));
        });
    }

    #[test]
    fn cyclic_unions() {
        on_small_stack(|| {
            let n = 5000;
            let defs: Map<String, Value> = (0..n)
                .map(|i| {
                    let v = json!({"anyOf": [
                        {"type": "null"},
                        {"type": "object", "properties": {
                            "x": to((i + 1) % n),
                            "y": {"allOf": [to((i * 7 + 3) % n)]},
                        }},
                    ]});
                    (format!("d{i}"), v)
                })
                .collect();
            let s = json!({"$defs": defs, "$ref": "#/$defs/d0"});
            every_stage(&s, &json!({"x": {"y": null}, "y": {}}));
        });
    }

    /// A cycle of unions through no property or item (each definition's first branch is the
    /// next one): the shapes admit any value there, and every stage still terminates.
    #[test]
    fn cycle_without_structure() {
        on_small_stack(|| {
            let n = 5000;
            let defs: Map<String, Value> = (0..n)
                .map(|i| {
                    let v = json!({"anyOf": [
                        to((i + 1) % n),
                        {"type": "object", "properties": {"x": to((i * 7 + 3) % n)}},
                    ]});
                    (format!("d{i}"), v)
                })
                .collect();
            let s = json!({"$defs": defs, "$ref": "#/$defs/d0"});
            let spec = compile(&s, &CompileOptions::default()).unwrap();
            assert_eq!(spec.artifacts().unwrap().len(), 5);
            // The encoder alone: a validator cannot end on a cycle through no instance.
            let x = json!({"x": {"x": {}}});
            let encoder = Encoder::new(spec.shapes(), spec.notation(), spec.tables());
            let text = encoder.document(&x).unwrap();
            assert_eq!(spec.expand_unvalidated(&text).unwrap(), x);
        });
    }
}
