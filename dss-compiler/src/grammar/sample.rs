//! A seeded sampler over the grammar IR (tests only): random sentences of a grammar,
//! regular forms included, to check that every sentence is read back by the decoder and
//! is valid under the schema.

use super::{Grammar, Terminal, G};
use std::collections::HashMap;

/// Random sentences of a grammar, from a seed (xorshift).
pub(crate) struct Sampler<'g> {
    rules: HashMap<&'g str, &'g G>,
    start: &'g G,
    state: u64,
    /// The fewest characters each rule can expand to (deep in a sentence, the sampler
    /// takes the alternative that ends soonest).
    cost: HashMap<&'g str, u64>,
}

impl<'g> Sampler<'g> {
    pub(crate) fn new(grammar: &'g Grammar, seed: u64) -> Sampler<'g> {
        let rules: HashMap<&str, &G> = grammar
            .rules
            .iter()
            .map(|r| (r.name.as_str(), &r.body))
            .collect();
        let mut cost: HashMap<&str, u64> = rules.keys().map(|&n| (n, u64::MAX)).collect();
        loop {
            let mut changed = false;
            for (&n, g) in &rules {
                let c = cost_of(g, &cost);
                if c < cost[n] {
                    cost.insert(n, c);
                    changed = true;
                }
            }
            if !changed {
                break;
            }
        }
        Sampler {
            rules,
            start: &grammar.rules[0].body,
            state: seed.max(1),
            cost,
        }
    }

    fn next(&mut self) -> u64 {
        let mut x = self.state;
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        self.state = x;
        x
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }

    /// One sentence of the start rule.
    pub(crate) fn sentence(&mut self) -> String {
        let mut out = String::new();
        let start = self.start;
        self.expr(start, 0, &mut out);
        out
    }

    fn expr(&mut self, g: &'g G, depth: usize, out: &mut String) {
        let deep = depth > 40;
        match g {
            G::Lit(s) | G::Text(s) => out.push_str(s),
            G::Term(t) => out.push_str(self.terminal(*t)),
            G::Rule(n) => {
                let body = self.rules[n.as_str()];
                self.expr(body, depth + 1, out);
            }
            G::Seq(xs) => xs.iter().for_each(|x| self.expr(x, depth, out)),
            G::Alt(xs) if xs.is_empty() => {}
            G::Alt(xs) => {
                let i = if deep {
                    (0..xs.len())
                        .min_by_key(|&i| cost_of(&xs[i], &self.cost))
                        .unwrap_or(0)
                } else {
                    self.below(xs.len())
                };
                self.expr(&xs[i], depth + 1, out);
            }
            G::Opt(x) => {
                if !deep && self.below(2) == 0 {
                    self.expr(x, depth + 1, out);
                }
            }
            G::Star(x) => {
                while !deep && self.below(3) > 0 {
                    self.expr(x, depth + 1, out);
                }
            }
            G::Rep(x, min, max) => {
                let extra = max.map_or(3, |m| m - min).min(if deep { 0 } else { 20 });
                let n = *min as usize + self.below(extra as usize + 1);
                for _ in 0..n {
                    self.expr(x, depth + 1, out);
                }
            }
            G::Class(ranges) => {
                let (a, b) = ranges[self.below(ranges.len())];
                let span = (b as u32 - a as u32).min(300) as usize;
                let c = (a as u32..=a as u32 + span as u32)
                    .nth(self.below(span + 1))
                    .and_then(char::from_u32)
                    .unwrap_or(a);
                out.push(c);
            }
        }
    }

    /// A lexeme of a terminal, chosen among a few.
    fn terminal(&mut self, t: Terminal) -> &'static str {
        let choices: &[&str] = match t {
            Terminal::Text => &["\"a b\"", "word", "\"\""],
            Terminal::TextNonempty => &["\"a b\"", "word"],
            Terminal::Bare => &["word", "x_1"],
            Terminal::String => &["\"s\"", "\"\"", "\"a \\\"q\\\"\""],
            Terminal::NonEmpty => &["\"x y\""],
            Terminal::Date => &["\"2024-01-31\""],
            Terminal::DateTime => &["\"2024-01-31T10:00:00Z\""],
            Terminal::Number => &["-1.5", "3", "0"],
            Terminal::NonnegNumber => &["2.5", "0"],
            Terminal::Integer => &["-3", "12"],
            Terminal::Natural => &["0", "7"],
            Terminal::Positive => &["4"],
            Terminal::JsonValue => &["{\"a\":1}", "[1,\"x\"]", "null"],
            Terminal::JsonObject => &["{}"],
            Terminal::JsonArray => &["[1]"],
        };
        choices[self.below(choices.len())]
    }
}

/// The fewest characters `g` can expand to, given those of the rules.
fn cost_of(g: &G, rules: &HashMap<&str, u64>) -> u64 {
    match g {
        G::Lit(s) | G::Text(s) => s.len() as u64,
        G::Term(_) | G::Class(_) => 1,
        G::Rule(n) => rules.get(n.as_str()).copied().unwrap_or(u64::MAX),
        G::Seq(xs) => xs
            .iter()
            .map(|x| cost_of(x, rules))
            .fold(0u64, u64::saturating_add),
        G::Alt(xs) => xs
            .iter()
            .map(|x| cost_of(x, rules))
            .min()
            .unwrap_or(u64::MAX),
        G::Opt(_) | G::Star(_) => 0,
        G::Rep(x, min, _) => cost_of(x, rules).saturating_mul(u64::from(*min)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{compile, CompileOptions};
    use serde_json::{json, Value};

    /// `n` sampled documents of `schema`'s grammar: each reads back (expand) as a value
    /// the schema's validator accepts, and pest parses it.
    fn sample_all_valid(schema: Value, n: u64) -> Vec<Value> {
        let spec = compile(&schema, &CompileOptions::default()).unwrap();
        let grammar = super::super::build(spec.shapes(), spec.notation());
        let (_, rules) = pest_meta::parse_and_optimize(&grammar.to_pest()).unwrap();
        let vm = pest_vm::Vm::new(rules);
        let mut values = Vec::new();
        for seed in 1..=n {
            let text = Sampler::new(&grammar, seed * 7919).sentence();
            let v = spec
                .expand(&text)
                .unwrap_or_else(|e| panic!("seed {seed}: {e}\n{text}"));
            spec.validate(&v)
                .unwrap_or_else(|e| panic!("seed {seed}: {e}\n{text}"));
            assert!(
                vm.parse("document", &text).is_ok(),
                "pest, seed {seed}: {text}"
            );
            values.push(v);
        }
        values
    }

    #[test]
    fn sampled_calendar_documents_are_valid() {
        let schema = json!({
            "type": "object",
            "properties": {
                "title": {"type": "string", "minLength": 1, "maxLength": 40},
                "notes": {"type": "string", "minLength": 2, "maxLength": 200},
                "start_time": {"type": "string", "pattern": "^[0-2][0-9]:[0-5][0-9]$"},
                "organizer": {"type": "string", "format": "email"},
                "link": {"type": "string", "format": "uri"},
                "priority": {"type": "integer", "minimum": 1, "maximum": 10},
                "day": {"type": "string", "format": "date"},
                "room": {"type": "string", "pattern": "B[0-9]{2}"},
                "attendees": {
                    "type": "array",
                    "maxItems": 3,
                    "items": {
                        "type": "object",
                        "properties": {
                            "name": {"type": "string"},
                            "email": {"type": "string", "format": "email"},
                            "id": {"type": "string", "format": "uuid"}
                        },
                        "required": ["email"],
                        "additionalProperties": false
                    }
                }
            },
            "required": ["title", "start_time", "organizer", "priority"],
            "additionalProperties": false
        });
        let values = sample_all_valid(schema, 300);
        // The sampler reached the optional and repeated parts.
        assert!(values.iter().any(|v| v.get("link").is_some()));
        assert!(values
            .iter()
            .any(|v| v["attendees"].as_array().is_some_and(|a| a.len() >= 2)));
        let priorities: std::collections::BTreeSet<i64> = values
            .iter()
            .filter_map(|v| v["priority"].as_i64())
            .collect();
        assert!(priorities.len() >= 5, "{priorities:?}");
    }

    #[test]
    fn sampled_listed_objects_and_arrays_are_valid() {
        // `enum`/`const` of objects and arrays, nested, in unions, in lists, optional:
        // each sampled document is one of the listed values there, and valid.
        let point = json!([{"x": 0, "y": 0}, {"x": 1, "y": -2.5}, {"x": "a b", "y": null}]);
        let schema = json!({
            "type": "object",
            "properties": {
                "origin": {"enum": point},
                "size": {"enum": [[1, 2], [3, 4, 5], [], "auto", 7, null]},
                "frame": {"const": {"kind": "box", "pad": [1, 1]}},
                "marks": {"type": "array", "maxItems": 4, "items": {"anyOf": [
                    {"type": "string", "enum": ["dot", "line"]},
                    {"enum": [{"shape": "star", "n": 5}, {"shape": "poly", "sides": [3, "\"q\""]}]}
                ]}},
                "style": {"type": "object", "properties": {
                    "dash": {"enum": [[4, 2], [1, 1, 3]]},
                    "font": {"type": "string"}
                }, "additionalProperties": false}
            },
            "required": ["origin", "frame"],
            "additionalProperties": false
        });
        let values = sample_all_valid(schema, 300);
        assert!(values
            .iter()
            .all(|v| v["frame"] == json!({"kind": "box", "pad": [1, 1]})));
        let origins: std::collections::BTreeSet<String> =
            values.iter().map(|v| v["origin"].to_string()).collect();
        assert_eq!(origins.len(), 3, "{origins:?}");
        assert!(values
            .iter()
            .any(|v| v.get("size").is_some_and(Value::is_array)));
        assert!(values.iter().any(|v| v["marks"]
            .as_array()
            .is_some_and(|m| m.iter().any(Value::is_object))));
        assert!(values
            .iter()
            .any(|v| v.pointer("/style/dash").is_some_and(Value::is_array)));
    }

    #[test]
    fn sampled_formats_are_valid() {
        let formats = [
            "date",
            "time",
            "date-time",
            "email",
            "hostname",
            "uri",
            "uuid",
            "ipv4",
            "ipv6",
        ];
        let props: serde_json::Map<String, Value> = formats
            .iter()
            .map(|f| (f.to_string(), json!({"type": "string", "format": f})))
            .collect();
        let required: Vec<&str> = formats.to_vec();
        let schema = json!({"type": "object", "properties": props, "required": required,
            "additionalProperties": false});
        sample_all_valid(schema, 300);
    }

    /// L(G_gen) ⊆ L(G): every sampled sentence of the whole generation grammar is one the
    /// published pest grammar parses; every one of it and of a pruned one is read back by
    /// the mapper as a valid value, and none has an undeclared property where the schema
    /// leaves `additionalProperties` out.
    #[test]
    fn generation_grammars_are_sublanguages_of_the_published_one() {
        use crate::grammar::{Restriction, Resume};
        use crate::request::GrammarOptions;
        let schema = json!({
            "type": "object",
            "properties": {
                "city": {"type": "string", "minLength": 1},
                "unit": {"enum": ["celsius", "fahrenheit"]},
                "days": {"type": "integer", "minimum": 1},
                "options": {"type": "object", "properties": {
                    "hourly": {"type": "boolean"},
                    "lang": {"enum": ["en", "no"]}
                }},
                "tags": {"type": "object", "additionalProperties": {"type": "string"}}
            },
            "required": ["city"]
        });
        let spec = compile(&schema, &CompileOptions::default()).unwrap();
        let (_, rules) = pest_meta::parse_and_optimize(&spec.grammar_pest()).unwrap();
        let vm = pest_vm::Vm::new(rules);
        let mut r = Restriction::default();
        r.candidates.insert("/unit".into(), vec![json!("celsius")]);
        r.candidates
            .insert("/options/lang".into(), vec![json!("no")]);
        let opts = GrammarOptions::default();
        let grammars = [
            spec.generation_grammar(opts),
            spec.pruned_grammar_with(&r, Resume::Start, opts),
        ];
        let declared = ["city", "unit", "days", "options", "tags", "hourly", "lang"];
        let (mut tags, mut repeated) = (0, 0);
        for (k, g) in grammars.iter().enumerate() {
            for seed in 1..=300 {
                let text = Sampler::new(g, seed * 7919).sentence();
                // A pruned grammar lets found fields come in any order (read by
                // `expand_any_order`), so only the whole one is checked with pest.
                assert!(
                    k == 1
                        || vm
                            .parse("document", &text)
                            .is_ok_and(|p| p.as_str().len() == text.len()),
                    "pest, seed {seed}: {text}"
                );
                // The sampler may repeat a map's key (its strings come from a short
                // list), which no grammar rules out and the mapper refuses.
                let v = match spec.expand_any_order(&text) {
                    Ok(v) => v,
                    Err(e) if e.to_string().contains("is declared or repeated") => {
                        repeated += 1;
                        continue;
                    }
                    Err(e) => panic!("seed {seed}: {e}\n{text}"),
                };
                spec.validate(&v)
                    .unwrap_or_else(|e| panic!("seed {seed}: {e}\n{text}"));
                let root = v.as_object().unwrap();
                assert!(root.keys().all(|k| declared.contains(&k.as_str())), "{v}");
                if let Some(o) = root.get("options").and_then(Value::as_object) {
                    assert!(o.keys().all(|k| declared.contains(&k.as_str())), "{v}");
                }
                // The map that allows them explicitly still takes them.
                tags += root
                    .get("tags")
                    .and_then(Value::as_object)
                    .map_or(0, |t| t.len());
            }
        }
        assert!(tags > 0, "no sampled map entry");
        assert!(repeated < 100, "{repeated} of 600 sentences repeat a key");
    }
}
