//! `enum` and `const`: the values a node lists, as parts of their own that the node's
//! parts are intersected with.

use crate::shape::algebra::{dedup_values, retain_integers};
use crate::shape::model::{json_key, NumPart, Parts, StrPart};
use serde_json::{Map, Value};

/// The parts admitting the values `const` (else `enum`) lists: scalars exactly, arrays and
/// objects as [`Parts::listed`] (each its compact JSON, written as it is); numbers only
/// whole ones where `parts` admits integers only. `None` where the node lists no values.
pub(super) fn listed_parts(m: &Map<String, Value>, parts: &Parts) -> Option<Parts> {
    let listed: Vec<&Value> = match (m.get("const"), m.get("enum")) {
        (Some(c), _) => vec![c],
        (None, Some(Value::Array(xs))) => xs.iter().collect(),
        _ => return None,
    };
    let mut e = Parts::never();
    let mut keys = rustc_hash::FxHashSet::default();
    for v in listed {
        add_listed(&mut e, v, &mut keys);
    }
    // Repeats dropped once at the end (a scan per value would be quadratic).
    if let Some(vs) = e.number.as_mut().and_then(|n| n.values.as_mut()) {
        *vs = dedup_values(std::mem::take(vs));
    }
    if let Some(vs) = e.string.as_mut().and_then(|s| s.values.as_mut()) {
        *vs = dedup_values(std::mem::take(vs));
    }
    if let (Some(en), Some(tn)) = (&mut e.number, &parts.number) {
        if tn.integer {
            retain_integers(&mut en.values);
        }
    }
    Some(e)
}

/// Adds one listed value `v` to the parts `e` (`keys`: those of the arrays and objects
/// already listed, so a repeat is dropped in constant time).
fn add_listed(e: &mut Parts, v: &Value, keys: &mut rustc_hash::FxHashSet<String>) {
    match v {
        Value::Null => e.null = true,
        Value::Bool(false) => e.bool_false = true,
        Value::Bool(true) => e.bool_true = true,
        Value::Number(n) => {
            let np = e.number.get_or_insert(NumPart {
                integer: false,
                values: Some(Vec::new()),
                lower: None,
                range: None,
            });
            if let Some(vs) = &mut np.values {
                vs.push(n.clone());
            }
        }
        Value::String(s) => {
            let sp = e.string.get_or_insert(StrPart {
                values: Some(Vec::new()),
                lexical: None,
            });
            if let Some(vs) = &mut sp.values {
                vs.push(s.clone());
            }
        }
        Value::Array(_) | Value::Object(_) => {
            if keys.insert(json_key(v)) {
                e.listed
                    .get_or_insert_with(Vec::new)
                    .push(serde_json::to_string(v).unwrap_or_default());
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::shape::test_support::shapes;
    use serde_json::{json, Value};

    #[test]
    fn large_enum_keeps_first_of_each_value_in_order() {
        // 100,000 strings, each listed twice, and numbers equal as JSON Schema compares them.
        let mut listed: Vec<Value> = (0..100_000).map(|i| json!(format!("v{i}"))).collect();
        listed.extend((0..100_000).rev().map(|i| json!(format!("v{i}"))));
        listed.extend([
            json!(1),
            json!(1.0),
            json!(2.5),
            json!(0),
            json!(-0.0),
            json!(2.5),
        ]);
        let s = shapes(json!({"enum": listed}));
        let p = s.parts(s.root);
        let strings = p.string.as_ref().unwrap().values.as_ref().unwrap();
        assert_eq!(strings.len(), 100_000);
        assert!(strings
            .iter()
            .enumerate()
            .all(|(i, v)| *v == format!("v{i}")));
        let numbers = p.number.as_ref().unwrap().values.as_ref().unwrap();
        let numbers: Vec<Value> = numbers.iter().cloned().map(Value::Number).collect();
        assert_eq!(numbers, vec![json!(1), json!(2.5), json!(0)]);
    }

    #[test]
    fn const_is_single_value() {
        let s = shapes(json!({"const": "x"}));
        assert_eq!(s.parts(s.root).single_value(), Some(json!("x")));
    }
}
