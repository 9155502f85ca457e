//! One record's fields: their order, mode (positional, const, keyed, keyless), keyword
//! and abbreviations, from the automatic design or the user's edits.

use super::config::{FieldConfig, NotationConfig, NotationStyle, ObjectConfig};
use super::first::{first_set, First};
use super::layout::{FieldLayout, FieldMode, RecordLayout};
use super::words::keyword_for;
use crate::error::CompileError;
use crate::shape::{ExprId, Parts, Record, Shapes};
use rustc_hash::{FxHashMap as HashMap, FxHashSet as HashSet};
use std::collections::BTreeSet;

/// The layout of record `r`: its fields ordered, each given a mode and keyword, then the
/// keyless ones chosen. Records named by an edit are added to `used`.
pub(super) fn design_record(
    shapes: &Shapes,
    canon: &[ExprId],
    r: &Record,
    config: &NotationConfig,
    used: &mut BTreeSet<String>,
) -> Result<RecordLayout, CompileError> {
    let name = format!("#{}", r.origin.replace('|', "|#"));
    let cfg = config.objects.get(&name);
    if cfg.is_some() {
        used.insert(name.clone());
    }
    // Looked up in a set, not scanned: 10,000 required properties.
    let required: HashSet<&str> = r.required.iter().map(String::as_str).collect();
    let mut fields = order_fields(&name, r, &required, cfg)?
        .into_iter()
        .map(|(n, e)| {
            let fc = cfg.and_then(|c| c.field(n));
            let req = required.contains(n.as_str());
            layout_field(
                shapes,
                &name,
                req,
                (n, *e),
                canon[*e as usize],
                fc,
                config.style,
            )
        })
        .collect::<Result<Vec<_>, _>>()?;
    check_positional_first(&name, &fields)?;
    let user_fixed = cfg.is_some();
    // An edited object keeps its modes as given; the explicit and named styles never pick
    // keyless.
    let auto = !user_fixed && config.style == NotationStyle::Compact;
    assign_keyless(
        shapes,
        &name,
        &mut fields,
        r.extras.is_some(),
        user_fixed,
        auto,
    )?;
    Ok(RecordLayout {
        extras_declared: r.extras_declared,
        ..RecordLayout::new(name, fields, r.extras.map(|e| (e, canon[e as usize])))
    })
}

/// The order fields are written in: required fields first (schema order), then optional
/// ones, unless the edit `cfg` lists an order.
fn order_fields<'r>(
    name: &str,
    r: &'r Record,
    required: &HashSet<&str>,
    cfg: Option<&ObjectConfig>,
) -> Result<Vec<&'r (String, ExprId)>, CompileError> {
    let mut order: Vec<&(String, ExprId)> = r
        .props
        .iter()
        .filter(|(n, _)| required.contains(n.as_str()))
        .collect();
    order.extend(
        r.props
            .iter()
            .filter(|(n, _)| !required.contains(n.as_str())),
    );
    if let Some(cfg) = cfg {
        cfg.order(name, r, &mut order)?;
    }
    Ok(order)
}

/// Field `n` (expression `e`, canonical `canon`; `required` or not) of the record named
/// `name`, with the mode, keyword and abbreviations its edit `fc` asks for, else the
/// automatic ones.
fn layout_field(
    shapes: &Shapes,
    name: &str,
    required: bool,
    (n, e): (&String, ExprId),
    canon: ExprId,
    fc: Option<&FieldConfig>,
    style: NotationStyle,
) -> Result<FieldLayout, CompileError> {
    let parts = shapes.parts(e);
    let mode = match fc {
        None => auto_mode(required, parts),
        Some(fc) => fc.checked_mode(name, required, parts)?,
    };
    let mode = if required && mode == FieldMode::Keyed {
        FieldMode::Positional
    } else {
        mode
    };
    let keyword = match fc {
        Some(fc) => fc.checked_keyword(name)?,
        None => None,
    };
    let abbrev = match fc {
        Some(fc) => fc.checked_abbrev(name, parts)?,
        None => Default::default(),
    };
    // A single-valued keyed field is a flag unless the style or its edit says `keyed`.
    let explicit = mode == FieldMode::Keyed
        && parts.single_value().is_some()
        && match fc {
            Some(fc) => fc.mode == "keyed",
            None => matches!(style, NotationStyle::Explicit | NotationStyle::Named),
        };
    let named = mode == FieldMode::Positional
        && match fc {
            Some(fc) => fc.mode == "named",
            None => style == NotationStyle::Named,
        };
    Ok(FieldLayout {
        name: n.clone(),
        expr: canon,
        mode,
        explicit,
        keyword: keyword.unwrap_or_else(|| keyword_for(n)),
        abbrev,
        first: BTreeSet::new(),
        source: e,
        open: false,
        quoted: false,
        named,
    })
}

/// The automatic mode: required fields are positional (or const, with a single possible
/// value), optional ones keyed until [`assign_keyless`] decides.
fn auto_mode(required: bool, parts: &Parts) -> FieldMode {
    match (required, parts.single_value()) {
        (true, Some(v)) => FieldMode::Const(v),
        (true, None) => FieldMode::Positional,
        (false, _) => FieldMode::Keyed,
    }
}

/// Positional fields come first: none may follow an optional field.
fn check_positional_first(name: &str, fields: &[FieldLayout]) -> Result<(), CompileError> {
    let Some(first_opt) = fields
        .iter()
        .position(|f| matches!(f.mode, FieldMode::Keyed | FieldMode::Keyless))
    else {
        return Ok(());
    };
    match fields[first_opt..]
        .iter()
        .find(|f| f.mode == FieldMode::Positional)
    {
        Some(late) => Err(CompileError::Ambiguous(format!(
            "`{name}`: positional field `{}` must come before the optional fields",
            late.name
        ))),
        None => Ok(()),
    }
}

/// Decide keyless fields (automatic) or check them (user edits), scanning backwards: an
/// optional field may be keyless only if its first tokens cannot start anything after it.
fn assign_keyless(
    shapes: &Shapes,
    name: &str,
    fields: &mut [FieldLayout],
    open: bool,
    user_fixed: bool,
    auto: bool,
) -> Result<(), CompileError> {
    let mut follow: BTreeSet<First> = BTreeSet::new();
    if open {
        follow.insert(First::Quoted);
    }
    let mut keywords = BTreeSet::new();
    // Value first-tokens of every optional field: a keyless field must not share any with a
    // sibling, or a reader (model or human) could not tell `[start] [end]` apart.
    let mut value_firsts: Vec<BTreeSet<First>> = fields
        .iter()
        .map(|f| match f.mode {
            FieldMode::Keyed | FieldMode::Keyless => first_set(shapes.parts(f.expr), &f.abbrev),
            _ => BTreeSet::new(),
        })
        .collect();
    let shared = shared_tokens(&value_firsts);
    for (idx, f) in fields.iter_mut().enumerate().rev() {
        let shared = shared[idx];
        if !matches!(f.mode, FieldMode::Keyed | FieldMode::Keyless) {
            continue;
        }
        let parts = shapes.parts(f.expr);
        let first = std::mem::take(&mut value_firsts[idx]);
        let clash = first.iter().find(|t| follow.contains(t)).cloned();
        let keyless_ok = clash.is_none() && parts.single_value().is_none();
        if f.mode == FieldMode::Keyless && !keyless_ok {
            return Err(CompileError::Ambiguous(format!(
                "`{name}` field `{}` cannot be keyless: {}",
                f.name,
                match clash {
                    Some(t) =>
                        format!("a value starting with {t:?} could also start what follows it"),
                    None =>
                        "it has a single value, so without a keyword it would be invisible".into(),
                }
            )));
        }
        if auto && f.mode == FieldMode::Keyed && keyless_ok && !shared && auto_keyless(parts) {
            f.mode = FieldMode::Keyless;
        }
        if f.mode == FieldMode::Keyless {
            follow.extend(first.iter().cloned());
            f.first = first;
        } else {
            place_keyword(name, f, &mut follow, &mut keywords, user_fixed)?;
        }
    }
    Ok(())
}

/// For each field, whether one of its value first-tokens is another field's too.
fn shared_tokens(value_firsts: &[BTreeSet<First>]) -> Vec<bool> {
    let mut counts: HashMap<&First, usize> = HashMap::default();
    for set in value_firsts {
        for t in set {
            *counts.entry(t).or_insert(0) += 1;
        }
    }
    value_firsts
        .iter()
        .map(|set| set.iter().any(|t| counts.get(t).copied().unwrap_or(0) > 1))
        .collect()
}

/// Keyed field `f` of record `name`: its keyword must not start what follows it (`follow`)
/// nor repeat a later keyword; an automatic one is lengthened with `_` until it does not,
/// an edited one (`user_fixed`) is an error. Adds the keyword to `follow` and `keywords`.
fn place_keyword(
    name: &str,
    f: &mut FieldLayout,
    follow: &mut BTreeSet<First>,
    keywords: &mut BTreeSet<String>,
    user_fixed: bool,
) -> Result<(), CompileError> {
    let clashes = |k: &str, follow: &BTreeSet<First>, keywords: &BTreeSet<String>| {
        follow.contains(&First::Word(k.to_string())) || keywords.contains(k)
    };
    if clashes(&f.keyword, follow, keywords) {
        if user_fixed {
            return Err(CompileError::Ambiguous(format!(
                "`{name}` field `{}`: keyword `{}` could also start what follows it",
                f.name, f.keyword
            )));
        }
        let mut k = format!("{}_", f.keyword);
        while clashes(&k, follow, keywords) {
            k.push('_');
        }
        f.keyword = k;
    }
    keywords.insert(f.keyword.clone());
    follow.insert(First::Word(f.keyword.clone()));
    f.first = BTreeSet::from([First::Word(f.keyword.clone())]);
    Ok(())
}

/// Which optional fields the automatic design writes without a key: enums, numbers and
/// free strings read naturally by value; booleans, arrays and objects keep their key.
/// Only words from a list of choices are keyless by default: `desc` says what it is, a
/// bare `5` or `"Region"` does not. A model that wants to write `limit 5` must be able to,
/// rather than guess that a number after `desc` is the limit. (A user may still make a
/// number or free string keyless in the notation file.)
fn auto_keyless(parts: &Parts) -> bool {
    !parts.any
        && !parts.bool_true
        && !parts.bool_false
        && parts.array.is_none()
        && parts.object.is_none()
        && parts.listed.is_none()
        && parts.number.is_none()
        && parts.string.as_ref().is_some_and(|s| s.values.is_some())
}
