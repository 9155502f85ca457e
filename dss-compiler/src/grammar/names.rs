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
