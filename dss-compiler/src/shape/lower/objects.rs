//! Object keywords: `properties`, `required`, `patternProperties` and
//! `additionalProperties`, as one object form ([`Record`]).

use crate::schema::escape_token;
use crate::shape::model::{ExprId, ObjPart, Record, ANY, NEVER};
use crate::shape::Builder;
use rustc_hash::FxHashSet as HashSet;
use serde_json::{Map, Value};
use std::sync::Arc;

impl<'a> Builder<'_, 'a> {
    /// The object form the object keywords of the node at `p` declare: its properties in
    /// schema order, then required but undeclared ones (positional fields of the extras'
    /// shape).
    pub(super) fn lower_object(&mut self, m: &'a Map<String, Value>, p: &str) -> ObjPart {
        let mut rec = Record::open(p);
        if let Some(Value::Object(props)) = m.get("properties") {
            for (name, sub) in props {
                let e = self.node_at(format!("{p}/properties/{}", escape_token(name)), sub);
                rec.props.push((name.clone(), e));
            }
        }
        // Names looked up in sets, not scanned: 10,000 required properties.
        let mut declared: HashSet<&str> = rec.props.iter().map(|(n, _)| n.as_str()).collect();
        let mut required: HashSet<&str> = HashSet::default();
        if let Some(Value::Array(req)) = m.get("required") {
            for r in req.iter().filter_map(Value::as_str) {
                if required.insert(r) {
                    rec.required.push(r.to_string());
                }
            }
        }
        rec.extras = self.lower_extras(m, p);
        rec.extras_declared = rec.extras.is_some()
            && (m.contains_key("additionalProperties") || m.contains_key("patternProperties"));
        let mut undeclared = Vec::new();
        for r in &rec.required {
            if declared.insert(r) {
                undeclared.push((r.clone(), rec.extras.unwrap_or(ANY)));
            }
        }
        rec.props.extend(undeclared);
        ObjPart {
            records: vec![Arc::new(rec)],
            merged: None,
        }
    }

    /// The shape of undeclared properties: keys matching a pattern must satisfy its
    /// schema, others `additionalProperties`; `None` = closed.
    fn lower_extras(&mut self, m: &'a Map<String, Value>, p: &str) -> Option<ExprId> {
        let mut extra_ids = Vec::new();
        if let Some(Value::Object(pats)) = m.get("patternProperties") {
            for (name, sub) in pats {
                extra_ids.push(
                    self.node_at(format!("{p}/patternProperties/{}", escape_token(name)), sub),
                );
            }
        }
        let additional = match m.get("additionalProperties") {
            None => Some(ANY),
            Some(sub) => {
                let e = self.node_at(format!("{p}/additionalProperties"), sub);
                if e == NEVER {
                    None
                } else {
                    Some(e)
                }
            }
        };
        match additional {
            Some(a) => {
                extra_ids.push(a);
                Some(self.union(&extra_ids))
            }
            None if extra_ids.is_empty() => None,
            None => Some(self.union(&extra_ids)),
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::shape::test_support::shapes;
    use serde_json::json;

    #[test]
    fn many_required_properties_once_each() {
        let props: serde_json::Map<String, serde_json::Value> = (0..10_000)
            .map(|i| (format!("p{i}"), json!({"type": "integer"})))
            .collect();
        // Every declared name required twice, and 10 required but undeclared ones.
        let mut required: Vec<String> = (0..10_000).map(|i| format!("p{i}")).collect();
        required.extend((0..10_000).map(|i| format!("p{i}")));
        required.extend((0..10).map(|i| format!("u{i}")));
        let s = shapes(json!({"type": "object", "properties": props, "required": required}));
        let r = &s.parts(s.root).object.as_ref().unwrap().records[0];
        assert_eq!(r.required.len(), 10_010);
        assert_eq!(r.props.len(), 10_010);
        assert_eq!(r.props[9_999].0, "p9999");
        assert_eq!(r.props[10_000].0, "u0");
    }

    #[test]
    fn object_with_required_and_enum() {
        let s = shapes(json!({
            "type": "object",
            "properties": {"a": {"type": "string"}, "b": {"enum": ["x", "y"]}},
            "required": ["a"],
            "additionalProperties": false
        }));
        let p = s.parts(s.root);
        assert!(p.object_only());
        let r = &p.object.as_ref().unwrap().records[0];
        assert_eq!(r.required, vec!["a"]);
        assert_eq!(r.extras, None);
        let b = s.parts(r.prop("b").unwrap());
        assert_eq!(
            b.string.as_ref().unwrap().values.as_ref().unwrap(),
            &vec!["x", "y"]
        );
        assert!(b.number.is_none());
    }
}
