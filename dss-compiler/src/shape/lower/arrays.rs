//! Array keywords: `prefixItems` (or draft-07 `items: [..]`) as tuple positions, `items`
//! (or `additionalItems`) for the rest, `minItems` and `maxItems`.

use crate::shape::model::{ArrPart, ANY, NEVER};
use crate::shape::Builder;
use serde_json::{Map, Value};

impl<'a> Builder<'_, 'a> {
    /// The array the array keywords of the node at `p` describe.
    pub(super) fn lower_array(&mut self, m: &'a Map<String, Value>, p: &str) -> ArrPart {
        let mut prefix = Vec::new();
        let mut items = Some(ANY);
        let tuple_key = if m.get("prefixItems").is_some_and(Value::is_array) {
            Some("prefixItems")
        } else if m.get("items").is_some_and(Value::is_array) {
            Some("items")
        } else {
            None
        };
        if let Some(k) = tuple_key {
            if let Some(Value::Array(xs)) = m.get(k) {
                for (i, x) in xs.iter().enumerate() {
                    prefix.push(self.node_at(format!("{p}/{k}/{i}"), x));
                }
            }
            if k == "items" {
                if let Some(sub) = m.get("additionalItems") {
                    items = Some(self.node_at(format!("{p}/additionalItems"), sub));
                }
            } else if let Some(sub) = m.get("items").filter(|v| !v.is_array()) {
                items = Some(self.node_at(format!("{p}/items"), sub));
            }
        } else if let Some(sub) = m.get("items") {
            items = Some(self.node_at(format!("{p}/items"), sub));
        }
        if items == Some(NEVER) {
            items = None;
        }
        let min_items = m
            .get("minItems")
            .and_then(Value::as_u64)
            .map_or(0, |n| n.min(u64::from(u32::MAX)) as u32);
        let max_items = m
            .get("maxItems")
            .and_then(Value::as_u64)
            .map(|n| n.min(u64::from(u32::MAX)) as u32);
        ArrPart::new(prefix, items, min_items, max_items)
    }
}
