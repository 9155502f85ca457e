//! Discriminated unions: the tag property that tells the variants apart, and the tags
//! written for it (short ones by default, as the DSS paper writes them).

use super::config::NotationConfig;
use super::fields::design_record;
use super::layout::{ObjLayout, TaggedVariant};
use super::words::{is_word, render_word};
use crate::error::CompileError;
use crate::shape::{ExprId, Record, Shapes, ANY};
use rustc_hash::{FxHashMap as HashMap, FxHashSet as HashSet};
use std::collections::BTreeSet;
use std::sync::Arc;

/// The layout of a union of `records` told apart by property `key`: each variant's
/// record without the key, and the tag written for each of its values. Variant `i` is
/// designed under `configs[i]` (the last one past the end: the user's edits are one for
/// all).
pub(super) fn design_tagged(
    shapes: &Shapes,
    canon: &[ExprId],
    records: &[Arc<Record>],
    key: String,
    configs: &[NotationConfig],
    used: &mut BTreeSet<String>,
) -> Result<ObjLayout, CompileError> {
    let config_of = |i: usize| configs.get(i).or(configs.last());
    let mut variants = Vec::with_capacity(records.len());
    for (i, r) in records.iter().enumerate() {
        let Some(config) = config_of(i) else {
            return Err(CompileError::Notation("internal: no edits given".into()));
        };
        variants.push(design_variant(shapes, canon, r, &key, config, used)?);
    }
    let user_tags = variants.iter().enumerate().any(|(i, v)| {
        config_of(i)
            .and_then(|c| c.objects.get(&v.record.name))
            .is_some_and(|c| c.tag.is_some())
    });
    assign_tags(&key, &mut variants, user_tags)?;
    Ok(ObjLayout::Tagged { key, variants })
}

/// Variant `r` of a union told apart by `key`: its record without the key, and its tag
/// values, each written as itself for now, or as the edit's tag when it has just one.
fn design_variant(
    shapes: &Shapes,
    canon: &[ExprId],
    r: &Record,
    key: &str,
    config: &NotationConfig,
    used: &mut BTreeSet<String>,
) -> Result<TaggedVariant, CompileError> {
    let tag_expr = r.prop(key).unwrap_or(ANY);
    let values = shapes
        .parts(tag_expr)
        .string
        .as_ref()
        .and_then(|s| s.values.clone())
        .unwrap_or_default();
    let mut rest = r.clone();
    rest.props.retain(|(n, _)| *n != key);
    rest.required.retain(|n| *n != key);
    let layout = design_record(shapes, canon, &rest, config, used)?;
    let tag_cfg = config.objects.get(&layout.name).and_then(|c| c.tag.clone());
    let single = values_len(shapes, tag_expr) == 1;
    let tags = values
        .into_iter()
        .map(|v| {
            let w = match &tag_cfg {
                Some(t) if single => t.clone(),
                _ => v.clone(),
            };
            (v, w)
        })
        .collect();
    Ok(TaggedVariant {
        tags,
        record: layout,
    })
}

/// The tags written: short ones unless an edit names a tag (`user_tags`), bare when they
/// are words, else quoted; no two alike.
fn assign_tags(
    key: &str,
    variants: &mut [TaggedVariant],
    user_tags: bool,
) -> Result<(), CompileError> {
    if !user_tags {
        shorten_tags(variants);
    }
    for v in variants.iter_mut() {
        for (_, w) in &mut v.tags {
            *w = render_word(w);
        }
    }
    check_tags(key, variants)
}

/// Short tags for union variants, as the DSS paper writes them (`relative-date` -> `rd`,
/// `categorical` -> `cat`): initials of compound values, a three-letter prefix of long
/// words. All or nothing: if any two would collide, the union keeps its full values.
fn shorten_tags(variants: &mut [TaggedVariant]) {
    let short = |v: &str| -> String {
        let parts: Vec<&str> = v
            .split(['-', '_', ' ', '.'])
            .filter(|p| !p.is_empty())
            .collect();
        let mut words: Vec<String> = Vec::new();
        for p in parts {
            // camelCase splits too.
            let mut cur = String::new();
            for c in p.chars() {
                if c.is_ascii_uppercase() && !cur.is_empty() {
                    words.push(std::mem::take(&mut cur));
                }
                cur.push(c);
            }
            if !cur.is_empty() {
                words.push(cur);
            }
        }
        if words.len() >= 2 {
            words
                .iter()
                .filter_map(|w| w.chars().next())
                .collect::<String>()
                .to_ascii_lowercase()
        } else if v.chars().count() > 6 {
            v.chars().take(3).collect::<String>().to_ascii_lowercase()
        } else {
            v.to_string()
        }
    };
    let mut seen = BTreeSet::new();
    let mut planned = Vec::new();
    for var in variants.iter() {
        for (v, _) in &var.tags {
            let s = short(v);
            if !is_word(&s) || !seen.insert(s.clone()) {
                return;
            }
            planned.push(s);
        }
    }
    let mut it = planned.into_iter();
    for var in variants.iter_mut() {
        for (_, w) in var.tags.iter_mut() {
            if let Some(s) = it.next() {
                *w = s;
            }
        }
    }
}

fn values_len(shapes: &Shapes, e: ExprId) -> usize {
    shapes
        .parts(e)
        .string
        .as_ref()
        .and_then(|s| s.values.as_ref())
        .map_or(0, |v| v.len())
}

fn check_tags(key: &str, variants: &[TaggedVariant]) -> Result<(), CompileError> {
    let mut seen = BTreeSet::new();
    for v in variants {
        for (_, w) in &v.tags {
            if !seen.insert(w.clone()) {
                return Err(CompileError::Ambiguous(format!(
                    "tag `{w}` of `{key}` is written for two variants"
                )));
            }
        }
    }
    Ok(())
}

/// A property required by every record, whose values are string enums disjoint across them.
pub(super) fn find_discriminator(shapes: &Shapes, records: &[Arc<Record>]) -> Option<String> {
    let first = &records[0];
    // Each record's required names and properties (the first of a name, as
    // `Record::prop`), looked up in maps, not scanned: records of 10,000 properties.
    let index: Vec<(HashSet<&str>, HashMap<&str, ExprId>)> = records
        .iter()
        .map(|r| {
            let mut props = HashMap::default();
            for (n, e) in &r.props {
                props.entry(n.as_str()).or_insert(*e);
            }
            (r.required.iter().map(String::as_str).collect(), props)
        })
        .collect();
    'candidates: for name in &first.required {
        let mut seen: BTreeSet<&str> = BTreeSet::new();
        for (required, props) in &index {
            if !required.contains(name.as_str()) {
                continue 'candidates;
            }
            let Some(&e) = props.get(name.as_str()) else {
                continue 'candidates;
            };
            let p = shapes.parts(e);
            let only_string = p.string.is_some()
                && !p.any
                && !p.null
                && !p.bool_false
                && !p.bool_true
                && p.number.is_none()
                && p.array.is_none()
                && p.object.is_none()
                && p.listed.is_none();
            let Some(values) = p.string.as_ref().and_then(|s| s.values.as_ref()) else {
                continue 'candidates;
            };
            if !only_string {
                continue 'candidates;
            }
            for v in values {
                if !seen.insert(v.as_str()) {
                    continue 'candidates;
                }
            }
        }
        return Some(name.clone());
    }
    None
}
