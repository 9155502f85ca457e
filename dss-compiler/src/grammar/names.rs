//! Rule names: readable names from where an expression is in the schema, made unique.

use super::Terminal;
use crate::shape::{Expr, ExprId, Shapes};
use std::collections::HashMap;

/// A readable name for an expression, from where it is in the schema: the last named
/// thing on its path (a definition or a property), prefixed by the positions below it.
pub(super) fn expr_name(shapes: &Shapes, id: ExprId) -> String {
    let Expr::Node(p) = &shapes.exprs[id as usize] else {
        return format!("alt{id}");
    };
    let segs: Vec<&str> = p.split('/').filter(|s| !s.is_empty()).collect();
    let mut name = String::new();
    let mut i = segs.len();
    // Walk back to the last named thing: a definition or a property.
    while i > 0 {
        i -= 1;
        let s = segs[i];
        if i > 0
            && matches!(
                segs[i - 1],
                "$defs" | "definitions" | "properties" | "patternProperties"
            )
        {
            name = prefixed(s, name);
            break;
        }
        let label = match s {
            "items" | "prefixItems" => "item",
            "additionalProperties" => "value",
            s if s.parse::<usize>().is_ok() => s,
            _ => continue,
        };
        name = prefixed(label, name);
    }
    if name.is_empty() {
        "top".into()
    } else {
        name.replace('~', "_")
    }
}

/// `label_name`, or `label` alone.
fn prefixed(label: &str, name: String) -> String {
    if name.is_empty() {
        label.to_string()
    } else {
        format!("{label}_{name}")
    }
}

/// The names handed out in one grammar (terminals and the start rules are taken).
pub(super) struct RuleNames(HashMap<String, usize>);

impl RuleNames {
    pub(super) fn new() -> Self {
        RuleNames(
            Terminal::ALL
                .iter()
                .map(|t| (t.name().to_string(), 1))
                .collect(),
        )
    }

    /// A fresh rule name from `base`: identifier characters only, never a terminal's or a
    /// start rule's name, numbered when taken.
    pub(super) fn fresh(&mut self, base: &str) -> String {
        let mut base: String = base
            .chars()
            .map(|c| if c.is_ascii_alphanumeric() { c } else { '_' })
            .collect();
        while base.contains("__") {
            base = base.replace("__", "_");
        }
        let base = base.trim_matches('_').to_string();
        let base = if base.is_empty()
            || base.starts_with(|c: char| c.is_ascii_digit())
            || Terminal::ALL.iter().any(|t| t.name() == base)
            || matches!(base.as_str(), "document" | "root" | "WCH")
        {
            format!("r_{base}")
        } else {
            base
        };
        // Every name handed out is here; a numbered name may itself clash with a schema
        // name (`scheme_2`), so count on until a free one.
        let mut n = self.0.get(&base).copied().unwrap_or(0);
        loop {
            n += 1;
            let candidate = if n == 1 {
                base.clone()
            } else {
                format!("{base}_{n}")
            };
            if !self.0.contains_key(&candidate) {
                self.0.insert(base.clone(), n);
                self.0.insert(candidate.clone(), 1);
                return candidate;
            }
        }
    }
}

/// A name for an expression in the readable grammar, from the schema's own names: the
/// node's `title`, the definition it is (or that its `$ref` names), else its property path
/// ([`expr_name`]). Never the name of another field that happens to have the same shape.
pub(super) fn schema_name(shapes: &Shapes, schema: &serde_json::Value, id: ExprId) -> String {
    given_name(shapes, schema, id).unwrap_or_else(|| match &shapes.exprs[id as usize] {
        // A union or intersection (a property of merged forms) is named as its first
        // member is.
        Expr::Union(ms) | Expr::Inter(ms) => ms
            .iter()
            .find(|&&m| matches!(shapes.exprs[m as usize], Expr::Node(_)))
            .map_or_else(|| expr_name(shapes, id), |&m| expr_name(shapes, m)),
        _ => expr_name(shapes, id),
    })
}

/// The name the schema itself gives expression `id` (see [`named_at`]); for a union or an
/// intersection, the first such name of its members.
pub(super) fn given_name(
    shapes: &Shapes,
    schema: &serde_json::Value,
    id: ExprId,
) -> Option<String> {
    match &shapes.exprs[id as usize] {
        Expr::Node(p) => named_at(schema, p),
        Expr::Union(ms) | Expr::Inter(ms) => {
            ms.iter().find_map(|&m| match &shapes.exprs[m as usize] {
                Expr::Node(p) => named_at(schema, p),
                _ => None,
            })
        }
        _ => None,
    }
}

/// The name the schema gives the node at `pointer`: its `title`, or its definition's name
/// (following up to 8 local `$ref`s).
pub(super) fn named_at(schema: &serde_json::Value, pointer: &str) -> Option<String> {
    named_at_depth(schema, pointer, 0)
}

fn named_at_depth(schema: &serde_json::Value, pointer: &str, depth: usize) -> Option<String> {
    let node = schema.pointer(pointer)?;
    if let Some(title) = node.get("title").and_then(|t| t.as_str()) {
        let words: String = title
            .split(|c: char| !c.is_ascii_alphanumeric())
            .filter(|w| !w.is_empty())
            .map(|w| {
                let mut w = w.to_string();
                if let Some(f) = w.get_mut(0..1) {
                    f.make_ascii_uppercase();
                }
                w
            })
            .collect();
        // A title too long to be a name (a sentence) is not used as one.
        if !words.is_empty() && words.len() <= 40 {
            return Some(words);
        }
    }
    let segs: Vec<&str> = pointer.split('/').collect();
    if let [.., parent, last] = segs.as_slice() {
        if matches!(*parent, "$defs" | "definitions") && !last.is_empty() {
            return Some(last.replace("~1", "_").replace("~0", "_"));
        }
    }
    let target = node.get("$ref")?.as_str()?.strip_prefix('#')?;
    if depth >= 8 || !(target.is_empty() || target.starts_with('/')) {
        return None;
    }
    let target = crate::schema::percent_decode(target);
    named_at_depth(schema, &target, depth + 1)
}

#[cfg(test)]
mod tests {
    use super::named_at;
    use serde_json::json;

    #[test]
    fn names_come_from_titles_definitions_and_references() {
        let schema = json!({
            "$defs": {"FieldType": {"enum": ["a", "b"]}, "T": {"title": "sort order", "enum": [1]}},
            "properties": {
                "type": {"$ref": "#/$defs/FieldType"},
                "order": {"$ref": "#/$defs/T"},
                "plain": {"type": "string"},
                "loop": {"$ref": "#/properties/loop"}
            }
        });
        assert_eq!(
            named_at(&schema, "/properties/type").as_deref(),
            Some("FieldType")
        );
        assert_eq!(
            named_at(&schema, "/properties/order").as_deref(),
            Some("SortOrder")
        );
        assert_eq!(
            named_at(&schema, "/$defs/FieldType").as_deref(),
            Some("FieldType")
        );
        assert_eq!(named_at(&schema, "/properties/plain"), None);
        assert_eq!(named_at(&schema, "/properties/loop"), None);
    }
}
