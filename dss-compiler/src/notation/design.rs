//! The design: [`design`] builds the notation from shapes as a list of passes, each a
//! function named for what it decides.

use super::config::{check_root, NotationConfig};
use super::fields::design_record;
use super::layout::{is_section, FieldMode, Form, Notation, ObjLayout, RecordLayout, RootLayout};
use super::open::mark_open;
use super::tags::{design_tagged, find_discriminator};
use crate::error::CompileError;
use crate::shape::{ExprId, ObjPart, Parts, Record, Shapes};
use rustc_hash::FxHashMap as HashMap;
use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

/// Design the notation for shapes, honouring user edits.
pub(crate) fn design(
    shapes: &Shapes,
    config: Option<&NotationConfig>,
) -> Result<Notation, CompileError> {
    let empty = NotationConfig::default();
    let config = config.unwrap_or(&empty);
    let canon = canonicalize(shapes);
    let reached = reach(shapes, &canon);
    let (mut objects, used) =
        layout_objects(shapes, &canon, &reached, |_| std::slice::from_ref(config))?;
    config.check_used(&used)?;
    let root = choose_root(shapes, &canon, &objects, config)?;
    mark_open(shapes, &mut objects);
    mark_quoted(shapes, root, &canon, &mut objects);
    Ok(Notation::new(root, canon, objects))
}

/// Expressions with equal parts share a layout and a grammar rule.
fn canonicalize(shapes: &Shapes) -> Vec<ExprId> {
    let mut seen: HashMap<&Parts, ExprId> = HashMap::default();
    // Expressions often share one parts value: those need no deep hash.
    let mut shared: HashMap<*const Parts, ExprId> = HashMap::default();
    let mut canon = Vec::with_capacity(shapes.parts.len());
    for (id, p) in shapes.parts.iter().enumerate() {
        let c = match shared.get(&Arc::as_ptr(p)) {
            Some(&c) => c,
            None => {
                let c = *seen.entry(&**p).or_insert(id as ExprId);
                shared.insert(Arc::as_ptr(p), c);
                c
            }
        };
        canon.push(c);
    }
    canon
}

/// Which canonical expressions are reachable from the root (through canonical children):
/// only those need a layout.
fn reach(shapes: &Shapes, canon: &[ExprId]) -> Vec<bool> {
    let mut reached = vec![false; shapes.parts.len()];
    let mut stack = vec![canon[shapes.root as usize]];
    while let Some(id) = stack.pop() {
        if std::mem::replace(&mut reached[id as usize], true) {
            continue;
        }
        let parts = shapes.parts(id);
        let mut push = |e: ExprId| stack.push(canon[e as usize]);
        if let Some(a) = &parts.array {
            a.prefix.iter().for_each(|&e| push(e));
            a.items.into_iter().for_each(&mut push);
        }
        if let Some(o) = &parts.object {
            for r in o.records.iter().chain(o.merged.iter()) {
                r.props.iter().for_each(|(_, e)| push(*e));
                r.extras.into_iter().for_each(&mut push);
            }
        }
    }
    reached
}

/// The layout of every reached canonical expression with an object part, each under its
/// edits (`config_of`: one for all its records, or one per variant of a tagged union),
/// and the names of the records met (for checking the edits).
fn layout_objects<'c>(
    shapes: &Shapes,
    canon: &[ExprId],
    reached: &[bool],
    config_of: impl Fn(ExprId) -> &'c [NotationConfig],
) -> Result<(BTreeMap<ExprId, ObjLayout>, BTreeSet<String>), CompileError> {
    let mut objects = BTreeMap::new();
    let mut used = BTreeSet::new();
    // Many shapes share one object part (`X` and `X | null`): design each part once (under
    // the same edits).
    let mut designed: HashMap<(&ObjPart, *const NotationConfig), ObjLayout> = HashMap::default();
    for (id, parts) in shapes.parts.iter().enumerate() {
        let id = id as ExprId;
        if canon[id as usize] != id || parts.any || !reached[id as usize] {
            continue;
        }
        if let Some(obj) = &parts.object {
            let configs = config_of(id);
            let key = (obj, configs.as_ptr());
            let layout = match designed.get(&key) {
                Some(l) => l.clone(),
                None => {
                    let l = design_object(
                        shapes,
                        canon,
                        &obj.records,
                        obj.merged.as_ref(),
                        configs,
                        &mut used,
                    )?;
                    designed.insert(key, l.clone());
                    l
                }
            };
            objects.insert(id, layout);
        }
    }
    Ok((objects, used))
}

/// One object part: a tagged union when its records have a discriminator, else one record
/// (the merged one, for a union). `configs`: the edits, one for all records or one per
/// variant of a tagged union (the first for a record).
fn design_object(
    shapes: &Shapes,
    canon: &[ExprId],
    records: &[Arc<Record>],
    merged: Option<&Arc<Record>>,
    configs: &[NotationConfig],
    used: &mut BTreeSet<String>,
) -> Result<ObjLayout, CompileError> {
    if records.len() >= 2 {
        if let Some(key) = find_discriminator(shapes, records) {
            return design_tagged(shapes, canon, records, key, configs, used);
        }
    }
    let Some(config) = configs.first() else {
        return Err(CompileError::Notation("internal: no edits given".into()));
    };
    if let [r] = records {
        if config.name_calls {
            if let Some(layout) = design_named_call(shapes, canon, r, config, used)? {
                return Ok(ObjLayout::Record(layout));
            }
        }
    }
    let merged = match (records.len(), merged) {
        (1, _) => &records[0],
        (_, Some(m)) => m,
        _ => {
            return Err(CompileError::Notation(
                "internal: union of objects was not merged".into(),
            ))
        }
    };
    let mut layout = design_record(shapes, canon, merged, config, used)?;
    if records.len() >= 2 {
        layout.forms = record_forms(records, &layout).unwrap_or_default();
    }
    Ok(ObjLayout::Record(layout))
}

/// A tool call of the only tool, `{"name": {…}}` (closed, one required property): its
/// property is written with its keyword, as the first keyword of a call is when it selects
/// among several tools, so the model writes the tool's name and the call reads the same
/// whatever the number of tools. The property is laid out as an optional keyed field, and
/// one form requiring it ([`RecordLayout::forms`]) keeps the grammars requiring it. `None`
/// for any other record, and where an edit asks for another mode of the property.
fn design_named_call(
    shapes: &Shapes,
    canon: &[ExprId],
    r: &Arc<Record>,
    config: &NotationConfig,
    used: &mut BTreeSet<String>,
) -> Result<Option<RecordLayout>, CompileError> {
    let [(name, _)] = r.props.as_slice() else {
        return Ok(None);
    };
    if r.extras.is_some() || r.required.as_slice() != std::slice::from_ref(name) {
        return Ok(None);
    }
    let mut optional = Record::clone(r);
    optional.required.clear();
    // An edit that does not fit an optional field (`positional`) asks for the plain record.
    let Ok(mut layout) = design_record(shapes, canon, &optional, config, used) else {
        return Ok(None);
    };
    if layout.fields.len() != 1 || layout.fields[0].mode != FieldMode::Keyed {
        return Ok(None);
    }
    layout.forms = vec![Form {
        fields: vec![0],
        required: vec![0],
    }];
    Ok(Some(layout))
}

/// The forms of a union of object forms merged into `layout`, when the first keyword
/// written tells them apart: every form closed, and the first of its written fields
/// required in it, keyed, and declared by no other form (as in `{"Call": {…}}` tool
/// calls, serde's externally tagged enums). Then the grammars admit one form at a time,
/// as the schema does, instead of any combination of the merged fields. `None` otherwise.
fn record_forms(records: &[Arc<Record>], layout: &RecordLayout) -> Option<Vec<Form>> {
    if records.iter().any(|r| r.extras.is_some()) {
        return None;
    }
    let index: HashMap<&str, usize> = layout
        .fields
        .iter()
        .enumerate()
        .map(|(i, f)| (f.name.as_str(), i))
        .collect();
    let mut owners: HashMap<usize, usize> = HashMap::default();
    let mut forms = Vec::with_capacity(records.len());
    for r in records {
        let mut fields = Vec::new();
        let mut required = Vec::new();
        for (n, _) in &r.props {
            let &i = index.get(n.as_str())?;
            let f = &layout.fields[i];
            if !matches!(f.mode, FieldMode::Keyed | FieldMode::Keyless) || fields.contains(&i) {
                continue;
            }
            fields.push(i);
            *owners.entry(i).or_insert(0) += 1;
            if r.required.contains(n) {
                required.push(i);
            }
        }
        // A required name the closed form does not declare: no instance has this form.
        if r.required
            .iter()
            .any(|n| !r.props.iter().any(|(p, _)| p == n))
        {
            return None;
        }
        fields.sort_unstable();
        required.sort_unstable();
        forms.push(Form { fields, required });
    }
    for form in &forms {
        let &first = form.fields.first()?;
        if !form.required.contains(&first)
            || owners.get(&first) != Some(&1)
            || layout.fields[first].mode != FieldMode::Keyed
        {
            return None;
        }
    }
    Some(forms)
}

/// The root layout: the edit's, if the schema allows it, else the automatic one.
fn choose_root(
    shapes: &Shapes,
    canon: &[ExprId],
    objects: &BTreeMap<ExprId, ObjLayout>,
    config: &NotationConfig,
) -> Result<RootLayout, CompileError> {
    let root_parts = shapes.parts(shapes.root);
    let root_layout = objects.get(&canon[shapes.root as usize]);
    let auto = auto_root(shapes, root_parts, root_layout);
    match config.root {
        None => Ok(auto),
        Some(asked) => check_root(
            asked,
            auto,
            root_parts.object_only(),
            matches!(root_layout, Some(ObjLayout::Record(_))),
        ),
    }
}

/// A root object with sections is a block, any other root object a line; a root array
/// with no tuple part is one item per line; anything else one value.
fn auto_root(shapes: &Shapes, root_parts: &Parts, root_layout: Option<&ObjLayout>) -> RootLayout {
    if root_parts.object_only() {
        match root_layout {
            Some(ObjLayout::Record(r)) if r.fields.iter().any(|f| is_section(shapes, f.expr)) => {
                RootLayout::Block
            }
            _ => RootLayout::Line,
        }
    } else if root_parts.array_only()
        && root_parts
            .array
            .as_ref()
            .is_some_and(|a| a.prefix.is_empty())
    {
        RootLayout::Lines
    } else {
        RootLayout::Value
    }
}

/// Quote the leading slot of every line item when it is a free string.
///
/// A line of a section (or of a `lines` document) that starts with a bare word reads like
/// a keyword line: a model that wants to write `limit 5` or `filters:` there would get an
/// item whose string is `limit`. With the leading string quoted, as in the paper's
/// `"Sales" sum desc`, such a line is not in the language and the model must write a real
/// item, a section header, or stop. Tagged items already start with their tag.
pub(super) fn mark_quoted(
    shapes: &Shapes,
    root: RootLayout,
    canon: &[ExprId],
    objects: &mut BTreeMap<ExprId, ObjLayout>,
) {
    let root_expr = canon[shapes.root as usize];
    let items: Vec<ExprId> = match root {
        RootLayout::Block => match objects.get(&root_expr) {
            Some(ObjLayout::Record(r)) => r
                .fields
                .iter()
                .filter(|f| is_section(shapes, f.expr))
                .map(|f| shapes.items_of(f.expr))
                .collect(),
            _ => Vec::new(),
        },
        RootLayout::Lines => vec![shapes.items_of(shapes.root)],
        RootLayout::Line | RootLayout::Value => Vec::new(),
    };
    for item in items {
        if !shapes.parts(item).object_only() {
            continue;
        }
        let Some(ObjLayout::Record(r)) = objects.get_mut(&canon[item as usize]) else {
            continue;
        };
        let first = r
            .fields
            .iter_mut()
            .find(|f| !matches!(f.mode, FieldMode::Const(_)));
        if let Some(f) = first {
            let free = shapes
                .parts(f.expr)
                .string
                .as_ref()
                .is_some_and(|s| s.values.is_none());
            // A named slot starts with its keyword: its value cannot read as one.
            if f.mode == FieldMode::Positional && free && !f.named {
                f.quoted = true;
            }
        }
    }
}
