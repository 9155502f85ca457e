//! `import food-ordering VENUE_DIR`: any venue in Amazon's FoodOrdering layout
//! (`schema.json` with intents and slots, `alias/*.txt`, optional `dev.json` lines
//! `{"SRC": request, "EXR": S-expression}`) or the Grammar Pruning authors' layout (the
//! same `schema.json` and alias files, cases in `processed_dev.json`).
//!
//! Everything is derived from the layout: the intents and slots of `schema.json`, the alias
//! files they name (`phrase<TAB>LABEL(value)`), and the three modifier slots of the format,
//! `NUMBER` (the order's count), `QUANTITY` (a qualifier of a `qualified` slot) and `NOT`.
//!
//! JSON shape: an array of orders, each a one-key object naming the intent (lower-cased,
//! without its `_ORDER`/`ORDER` suffix) whose value holds `number` (an integer, required)
//! and the slots (lower-cased names):
//!
//! ```json
//! [{"main_dish": {"number": 1, "main_dish_type": "cheese_burger",
//!                 "toppings": [{"name": "mayonnaise", "quantity": "light"},
//!                              {"name": "mustard", "negation": true}]}},
//!  {"drink": {"number": 2, "drink_type": "coca_cola", "size": "large"}}]
//! ```
//!
//! dss writes it as `main_dish 1 cheese_burger toppings [(mayonnaise light) (mustard
//! negation)]`, one order per line. Within a list, qualified items (`COMPLEX`) come first,
//! then the others, each group in source order: the order of the Grammar Pruning authors'
//! processed golds, which their scorer (`em_paper`) compares in order. A slot the layout marks `qualified` or `negatable` is a
//! list (plural name) of items `{"name", "quantity"?, "negation"?: true}`; other slots are
//! single values. The cases may widen this, and each widening is written to the suite's
//! notes: a slot repeated in one order, qualified, negated or given alternatives becomes a
//! list; `(SLOT (OR a b))` is an item `{"either": [a, b]}`; a value no alias file lists is
//! added to the slot's enum; a slot used by an intent that does not declare it is added to
//! that intent; an order without `NUMBER` makes `number` optional.
//!
//! **Nested values.** An alias file may write a value with one argument,
//! `extra shot<TAB>TOPPING(ESPRESSO_SHOT(1))`, and `dev.json` the same as `(TOPPING
//! (ESPRESSO_SHOT 1 ) )` (Amazon's Coffee): the value `ESPRESSO_SHOT` with the argument
//! `1`. Such a slot is a list of items whose argument sits beside the name: `count` (an
//! integer) when every argument the alias files and cases give is an integer, else
//! `detail` (one of them, as text): `{"name": "ESPRESSO_SHOT", "count": 1, "quantity"?,
//! "negation"?}`; the authors' notation writes it `Topping(name='ESPRESSO_SHOT',
//! count=1)`. The phrases of a nested value name both the value (at `.../*/name`) and its
//! argument (at `.../*/count`), whose catalog is the arguments listed. `Or(a,b)` in an alias
//! label (Burrito's `beans`) is no nested value: it stays one value as written.
//!
//! Catalogs and aliases are keyed by instance path: `/*/main_dish/main_dish_type`,
//! `/*/main_dish/toppings/*/name`, `.../*/quantity`, `.../*/negation` (value `true`, the
//! `NOT` phrases), `.../*/count` (a nested value's argument), `/*/main_dish/number`.

use crate::error::{EvalError, Result};
use crate::pycall::PyValue;
use crate::sexpr::{self, Sexpr};
use crate::suite::{Aliases, Case, Catalogs, PaperRule, Scoring, Suite, SuiteMeta};
use crate::ImportSummary;
use serde::Deserialize;
use serde_json::{json, Map, Value};
use std::collections::BTreeMap;
use std::path::Path;

#[derive(Deserialize)]
struct VenueSchema {
    intents: Vec<IntentDecl>,
}

#[derive(Deserialize)]
struct IntentDecl {
    name: String,
    slots: Vec<SlotDecl>,
}

#[derive(Deserialize, Clone)]
struct SlotDecl {
    #[serde(rename = "slotName")]
    slot_name: String,
    path: String,
    #[serde(default)]
    qualified: bool,
    #[serde(default)]
    negatable: bool,
}

/// Values of one alias file, in file order, with their phrases.
#[derive(Default, Clone)]
struct AliasList {
    values: Vec<String>,
    phrases: BTreeMap<String, Vec<String>>,
    /// The arguments of nested values (`TOPPING(ESPRESSO_SHOT(2))`: `2`), in file order.
    args: Vec<String>,
    /// Argument -> the phrases that name a nested value with it.
    arg_phrases: BTreeMap<String, Vec<String>>,
    /// Lines read leniently, for the suite's notes.
    notes: Vec<String>,
}

/// One occurrence of a slot in an order.
#[derive(Debug, Clone)]
struct Occ {
    slot: String,
    values: Vec<String>,
    /// The argument of a nested value: `(TOPPING (ESPRESSO_SHOT 2))` is the value
    /// `ESPRESSO_SHOT` with the argument `2`.
    arg: Option<String>,
    quantity: Option<String>,
    negated: bool,
}

#[derive(Debug, Clone)]
struct ParsedOrder {
    intent: String,
    number: Option<i64>,
    occs: Vec<Occ>,
}

/// How one (intent, slot) is written.
#[derive(Debug, Clone, Default)]
struct SlotPlan {
    slot: String,
    field: String,
    list: bool,
    either: bool,
    quantity: bool,
    negation: bool,
    values: Vec<String>,
    /// The arguments its nested values take (empty: it has none).
    args: Vec<String>,
    path: Option<String>,
}

impl SlotPlan {
    /// The item field of a nested value's argument: `count` (an integer) when every
    /// argument is one, else `detail` (one of the arguments, as text); `None` without
    /// nested values.
    fn arg_field(&self) -> Option<&'static str> {
        if self.args.is_empty() {
            None
        } else if self.args.iter().all(|a| a.parse::<i64>().is_ok()) {
            Some("count")
        } else {
            Some("detail")
        }
    }

    /// An argument as the gold writes it at [`SlotPlan::arg_field`].
    fn arg_json(&self, arg: &str) -> Value {
        match (self.arg_field(), arg.parse::<i64>()) {
            (Some("count"), Ok(n)) => json!(n),
            _ => json!(arg),
        }
    }
}

struct IntentPlan {
    name: String,
    tag: String,
    number_required: bool,
    slots: Vec<SlotPlan>,
    quantity_values: Vec<String>,
    quantity_path: Option<String>,
    not_path: Option<String>,
    number_path: Option<String>,
}

const MODIFIERS: [&str; 3] = ["NUMBER", "QUANTITY", "NOT"];

/// One case as read from the venue's cases file.
struct Parsed {
    /// Line (`dev.json`) or record (`processed_dev.json`) number, from 1.
    no: usize,
    request: String,
    /// Where the case comes from, as the case's `source`.
    source: Value,
    orders: Vec<ParsedOrder>,
}

/// The Grammar Pruning authors' cases: a JSON array of `{"SRC": request, "TOPALIAS":
/// "[BurgerOrder(number=1, main_dish_type='x', toppings=[Topping(name='y',
/// qualifier='light', negation=True)])]"}` (their `processed_dev.json`). An order class
/// is read as the intent that declares every slot its arguments name (an argument is a
/// slot's name, lower-cased, or its plural for a list: `toppings` for `TOPPING`;
/// `qualifier` is the item's `QUANTITY`, `negation=True` its `NOT`), the class name
/// breaking a tie (`DrinkOrder` is `DRINK_ORDER`).
fn read_processed(path: &Path, decl: &VenueSchema) -> Result<Vec<Parsed>> {
    let text = crate::suite::read(path)?;
    let records: Vec<Value> = serde_json::from_str(&text).map_err(|e| {
        EvalError::format(
            path,
            Some(format!("{}:{}", e.line(), e.column())),
            e.to_string(),
        )
    })?;
    let mut out = Vec::new();
    for (i, rec) in records.iter().enumerate() {
        let no = i + 1;
        let at = Some(format!("record {no}"));
        let src = rec.get("SRC").and_then(Value::as_str);
        let top = rec.get("TOPALIAS").and_then(Value::as_str);
        let (Some(src), Some(top)) = (src, top) else {
            return Err(EvalError::format(
                path,
                at,
                "expected string fields SRC and TOPALIAS",
            ));
        };
        let fail =
            |m: String| EvalError::format(path, at.clone(), format!("TOPALIAS: {m}: {top:?}"));
        let v = crate::pycall::parse(top).map_err(|e| fail(e.to_string()))?;
        let PyValue::List(calls) = &v else {
            return Err(fail("expected a list of orders".into()));
        };
        let orders = calls
            .iter()
            .map(|c| paper_order(c, decl))
            .collect::<std::result::Result<Vec<_>, String>>()
            .map_err(fail)?;
        if orders.is_empty() {
            return Err(fail("no order".into()));
        }
        out.push(Parsed {
            no,
            request: src.to_string(),
            source: json!({"file": "processed_dev.json", "record": no, "TOPALIAS": top}),
            orders,
        });
    }
    Ok(out)
}

/// The slot an argument of the authors' notation names (`toppings` -> `TOPPING`).
fn slot_of_arg<'a>(arg: &str, decl: &'a VenueSchema) -> Option<&'a str> {
    let up = arg.to_uppercase();
    decl.intents
        .iter()
        .flat_map(|i| &i.slots)
        .map(|s| s.slot_name.as_str())
        .filter(|s| !MODIFIERS.contains(s))
        .find(|s| *s == up || format!("{s}S") == up || format!("{s}ES") == up)
}

/// One order call of the authors' notation as an order of the venue.
fn paper_order(call: &PyValue, decl: &VenueSchema) -> std::result::Result<ParsedOrder, String> {
    let PyValue::Call { name, args } = call else {
        return Err(format!("expected an order call, found {call}"));
    };
    let mut number = None;
    let mut occs = Vec::new();
    let mut named: Vec<&str> = Vec::new();
    for (k, v) in args {
        if k == "number" {
            match v {
                PyValue::Int(n) => number = Some(*n),
                PyValue::None => {}
                other => return Err(format!("`number` of {name} is {other}, not an integer")),
            }
            continue;
        }
        if matches!(v, PyValue::None | PyValue::Bool(false)) {
            continue;
        }
        let slot = slot_of_arg(k, decl)
            .ok_or_else(|| format!("`{k}` of {name} names no slot of this venue's schema.json"))?;
        named.push(slot);
        match v {
            PyValue::Str(s) => occs.push(Occ {
                slot: slot.to_string(),
                values: vec![s.clone()],
                arg: None,
                quantity: None,
                negated: false,
            }),
            PyValue::Int(n) => occs.push(Occ {
                slot: slot.to_string(),
                values: vec![n.to_string()],
                arg: None,
                quantity: None,
                negated: false,
            }),
            PyValue::List(items) => {
                for it in items {
                    occs.push(paper_item(it, slot)?);
                }
            }
            PyValue::Call { .. } => occs.push(paper_item(v, slot)?),
            other => return Err(format!("`{k}` of {name} is {other}")),
        }
    }
    // The intent: one that declares every slot named, the class name breaking a tie.
    let fits: Vec<&IntentDecl> = decl
        .intents
        .iter()
        .filter(|i| {
            named
                .iter()
                .all(|n| i.slots.iter().any(|s| s.slot_name == *n))
        })
        .collect();
    let class = name.to_uppercase();
    let class = class.strip_suffix("ORDER").unwrap_or(&class);
    let intent = match fits.as_slice() {
        [one] => *one,
        [] => {
            return Err(format!(
                "no intent of this venue's schema.json declares every slot of {name} ({})",
                named.join(", ")
            ))
        }
        many => {
            let by_name: Vec<&&IntentDecl> = many
                .iter()
                .filter(|i| i.name.replace('_', "").starts_with(&class.replace('_', "")))
                .collect();
            match by_name.as_slice() {
                [one] => **one,
                _ => {
                    let names: Vec<&str> = many.iter().map(|i| i.name.as_str()).collect();
                    return Err(format!(
                        "{name} could be any of the intents {}",
                        names.join(", ")
                    ));
                }
            }
        }
    };
    Ok(ParsedOrder {
        intent: intent.name.clone(),
        number,
        occs,
    })
}

/// One item of a list argument: a value, or `Topping(name='x', qualifier='light',
/// negation=True)`.
fn paper_item(item: &PyValue, slot: &str) -> std::result::Result<Occ, String> {
    let mut occ = Occ {
        slot: slot.to_string(),
        values: Vec::new(),
        arg: None,
        quantity: None,
        negated: false,
    };
    match item {
        PyValue::Str(s) => occ.values.push(s.clone()),
        PyValue::Call { name, args } => {
            for (k, v) in args {
                match (k.as_str(), v) {
                    (_, PyValue::None) | ("negation", PyValue::Bool(false)) => {}
                    ("name", PyValue::Str(s)) => occ.values.push(s.clone()),
                    ("qualifier" | "quantity", PyValue::Str(q)) => occ.quantity = Some(q.clone()),
                    // A nested value's argument (`TOPPING(ESPRESSO_SHOT(2))` in the alias
                    // files): `Topping(name='ESPRESSO_SHOT', count=2)`.
                    ("count", PyValue::Int(n)) => occ.arg = Some(n.to_string()),
                    ("detail", PyValue::Str(d)) => occ.arg = Some(d.clone()),
                    ("negation", PyValue::Bool(true)) => occ.negated = true,
                    _ => return Err(format!("unexpected argument `{k}={v}` of {name}")),
                }
            }
            if occ.values.is_empty() {
                return Err(format!("{name} has no `name`"));
            }
        }
        other => return Err(format!("unexpected item {other} of a {slot} list")),
    }
    Ok(occ)
}

/// Imports a FoodOrdering venue folder into a suite folder `out`. Without `dev.json` the
/// suite has the schema, catalogs and aliases and no case. Checks with dss that the schema
/// compiles and every gold compresses and expands back equal.
pub fn import_food_ordering(venue_dir: &Path, out: &Path) -> Result<ImportSummary> {
    let venue = venue_dir
        .canonicalize()
        .ok()
        .and_then(|p| p.file_name().and_then(|n| n.to_str()).map(str::to_string))
        .unwrap_or_else(|| "venue".into());
    let schema_path = venue_dir.join("schema.json");
    let decl: VenueSchema =
        serde_json::from_str(&crate::suite::read(&schema_path)?).map_err(|e| {
            EvalError::format(
                &schema_path,
                Some(format!("{}:{}", e.line(), e.column())),
                e.to_string(),
            )
        })?;
    if decl.intents.is_empty() {
        return Err(EvalError::format(&schema_path, None, "no intent"));
    }
    let mut alias_files: BTreeMap<String, AliasList> = BTreeMap::new();
    for i in &decl.intents {
        for s in &i.slots {
            if !alias_files.contains_key(&s.path) {
                let list = read_alias_file(&venue_dir.join(&s.path), s.slot_name == "NUMBER")?;
                alias_files.insert(s.path.clone(), list);
            }
        }
    }
    let mut notes = vec![
        "Shape: an array of orders, each {INTENT: {number, slots}}; qualified/negatable slots are lists of {name, quantity?, negation?}; see dss_eval::food.".to_string(),
    ];
    notes.extend(alias_files.values().flat_map(|a| a.notes.iter().cloned()));

    // The cases: Amazon's `dev.json` (S-expressions), else the Grammar Pruning authors'
    // `processed_dev.json` (their Python order notation).
    let dev_path = venue_dir.join("dev.json");
    let processed_path = venue_dir.join("processed_dev.json");
    let mut parsed: Vec<Parsed> = Vec::new();
    let mut cases_file = "dev.json";
    if dev_path.exists() {
        let text = crate::suite::read(&dev_path)?;
        for (n, line) in text.lines().enumerate() {
            let lineno = n + 1;
            if line.trim().is_empty() {
                continue;
            }
            let at = |col: Option<usize>| {
                Some(col.map_or(lineno.to_string(), |c| format!("{lineno}:{c}")))
            };
            let rec: Value = serde_json::from_str(line)
                .map_err(|e| EvalError::format(&dev_path, at(Some(e.column())), e.to_string()))?;
            let src = rec.get("SRC").and_then(Value::as_str);
            let exr = rec.get("EXR").and_then(Value::as_str);
            let (Some(src), Some(exr)) = (src, exr) else {
                return Err(EvalError::format(
                    &dev_path,
                    at(None),
                    "expected string fields SRC and EXR",
                ));
            };
            let tree = sexpr::parse_all(exr)
                .map_err(|e| EvalError::format(&dev_path, at(None), format!("EXR {e}: {exr:?}")))?;
            let orders = tree
                .iter()
                .map(|o| parse_order(o, &decl))
                .collect::<std::result::Result<Vec<_>, String>>()
                .map_err(|m| EvalError::format(&dev_path, at(None), format!("EXR: {m}")))?;
            if orders.is_empty() {
                return Err(EvalError::format(&dev_path, at(None), "EXR holds no order"));
            }
            parsed.push(Parsed {
                no: lineno,
                request: src.to_string(),
                source: json!({"file": "dev.json", "line": lineno, "EXR": exr}),
                orders,
            });
        }
    } else if processed_path.exists() {
        cases_file = "processed_dev.json";
        parsed = read_processed(&processed_path, &decl)?;
    } else {
        notes.push(
            "No dev.json or processed_dev.json: the suite has the schema, catalogs and aliases, and no case.".into(),
        );
    }

    // The plan: the layout, widened by what the cases use.
    let mut plans: Vec<IntentPlan> = Vec::new();
    let mut tags: Vec<String> = Vec::new();
    for i in &decl.intents {
        let mut tag = order_tag(&i.name);
        if tags.contains(&tag) {
            tag = i.name.to_lowercase();
        }
        tags.push(tag.clone());
        let modifier = |m: &str| {
            i.slots
                .iter()
                .find(|s| s.slot_name == m)
                .map(|s| s.path.clone())
        };
        let quantity_path = modifier("QUANTITY");
        let quantity_values = quantity_path
            .as_ref()
            .map(|p| alias_files[p].values.clone())
            .unwrap_or_default();
        let mut slots: Vec<SlotPlan> = Vec::new();
        for s in i
            .slots
            .iter()
            .filter(|s| !MODIFIERS.contains(&s.slot_name.as_str()))
        {
            if slots.iter().any(|p| p.slot == s.slot_name) {
                continue;
            }
            let file = &alias_files[&s.path];
            slots.push(SlotPlan {
                slot: s.slot_name.clone(),
                // A nested value is an item with its argument beside its name.
                list: s.qualified || s.negatable || !file.args.is_empty(),
                quantity: s.qualified,
                negation: s.negatable,
                values: file.values.clone(),
                args: file.args.clone(),
                path: Some(s.path.clone()),
                ..Default::default()
            });
        }
        // The slot naming what the order is (`DRINK_TYPE` of `DRINK_ORDER`) is written
        // first, after the count, as the venues list it but Coffee (`SIZE` … `DRINK_TYPE`):
        // a model then writes each drink's modifiers after the drink they go with.
        let head = tag.replace('_', "") + "type";
        if let Some(k) = slots
            .iter()
            .position(|p| p.slot.to_lowercase().replace('_', "") == head)
        {
            let s = slots.remove(k);
            slots.insert(0, s);
        }
        plans.push(IntentPlan {
            name: i.name.clone(),
            tag,
            number_required: true,
            slots,
            quantity_values,
            quantity_path,
            not_path: modifier("NOT"),
            number_path: modifier("NUMBER"),
        });
    }
    for Parsed {
        no: lineno, orders, ..
    } in &parsed
    {
        for o in orders {
            let Some(plan) = plans.iter_mut().find(|p| p.name == o.intent) else {
                continue;
            };
            if o.number.is_none() && plan.number_required {
                plan.number_required = false;
                notes.push(format!(
                    "{cases_file}:{lineno}: a {} order has no NUMBER: `number` is optional there.",
                    o.intent
                ));
            }
            for occ in &o.occs {
                if !plan.slots.iter().any(|s| s.slot == occ.slot) {
                    let path = decl
                        .intents
                        .iter()
                        .flat_map(|i| &i.slots)
                        .find(|s| s.slot_name == occ.slot)
                        .map(|s| s.path.clone());
                    let values = path
                        .as_ref()
                        .map(|p| alias_files[p].values.clone())
                        .unwrap_or_default();
                    notes.push(format!("{cases_file}:{lineno}: {} uses slot {}, which the layout declares only for other intents: added.", o.intent, occ.slot));
                    plan.slots.push(SlotPlan {
                        slot: occ.slot.clone(),
                        values,
                        path,
                        ..Default::default()
                    });
                }
                let repeats = o.occs.iter().filter(|x| x.slot == occ.slot).count() > 1;
                let Some(slot) = plan.slots.iter_mut().find(|s| s.slot == occ.slot) else {
                    continue;
                };
                let mut widen = |what: &str, flag: &mut bool| {
                    if !*flag {
                        *flag = true;
                        notes.push(format!(
                            "{cases_file}:{lineno}: {} {} {what}.",
                            o.intent, occ.slot
                        ));
                    }
                };
                let why = if repeats {
                    Some("occurs twice in one order")
                } else if occ.arg.is_some() {
                    Some("takes a nested value")
                } else if occ.quantity.is_some() {
                    Some("takes a quantity")
                } else if occ.negated {
                    Some("is negated")
                } else if occ.values.len() > 1 {
                    Some("takes alternatives")
                } else {
                    None
                };
                if let Some(why) = why {
                    widen(
                        &format!("{why}: written as a list of items"),
                        &mut slot.list,
                    );
                }
                if occ.quantity.is_some() {
                    widen("takes a quantity", &mut slot.quantity);
                }
                if occ.negated {
                    widen("takes a negation", &mut slot.negation);
                }
                if occ.values.len() > 1 {
                    widen(
                        "takes alternatives (OR): items may be {\"either\": [...]}",
                        &mut slot.either,
                    );
                }
                if let Some(a) = &occ.arg {
                    if !slot.args.contains(a) {
                        notes.push(format!("{cases_file}:{lineno}: {} {} nested value argument `{a}` is in no alias file: added.", o.intent, occ.slot));
                        slot.args.push(a.clone());
                    }
                }
                for v in &occ.values {
                    if !slot.values.contains(v) {
                        notes.push(format!("{cases_file}:{lineno}: {} {} value `{v}` is in no alias file: added to the enum.", o.intent, occ.slot));
                        slot.values.push(v.clone());
                    }
                }
                if let Some(q) = &occ.quantity {
                    if !plan.quantity_values.contains(q) {
                        notes.push(format!(
                            "{cases_file}:{lineno}: {} quantity `{q}` is in no alias file: added.",
                            o.intent
                        ));
                        plan.quantity_values.push(q.clone());
                    }
                }
            }
        }
    }
    for plan in &mut plans {
        let mut used: Vec<String> = vec!["number".into()];
        for s in &mut plan.slots {
            let base = s.slot.to_lowercase();
            let mut field = if s.list && !base.ends_with('s') {
                format!("{base}s")
            } else {
                base.clone()
            };
            if used.contains(&field) {
                field = format!("{base}_list");
            }
            used.push(field.clone());
            s.field = field;
        }
    }

    // Schema, catalogs, aliases.
    let schema = build_schema(&plans);
    let mut catalogs = Catalogs::new();
    let mut aliases = Aliases::new();
    let mut unordered = vec![String::new()];
    let mut negation_aliases: Vec<(String, Vec<String>)> = Vec::new();
    // Nested values' arguments: (path, catalog, aliases).
    type ArgEntry = (String, Vec<Value>, BTreeMap<String, Vec<String>>);
    let mut arg_entries: Vec<ArgEntry> = Vec::new();
    for p in &plans {
        let mut add = |path: String, values: Vec<Value>, file: Option<&String>| {
            if let Some(f) = file {
                let a = &alias_files[f];
                let m: BTreeMap<String, Vec<String>> = values
                    .iter()
                    .filter_map(|v| {
                        let key = v
                            .as_str()
                            .map(str::to_string)
                            .unwrap_or_else(|| v.to_string());
                        a.phrases.get(&key).map(|ph| (key, ph.clone()))
                    })
                    .collect();
                if !m.is_empty() {
                    aliases.insert(path.clone(), m);
                }
            }
            catalogs.insert(path, values);
        };
        if let Some(np) = &p.number_path {
            let nums: Vec<Value> = alias_files[np]
                .values
                .iter()
                .filter_map(|v| v.parse::<i64>().ok())
                .map(Value::from)
                .collect();
            add(format!("/*/{}/number", p.tag), nums, Some(np));
        }
        for s in &p.slots {
            let vals: Vec<Value> = s.values.iter().map(|v| json!(v)).collect();
            let base = format!("/*/{}/{}", p.tag, s.field);
            if s.list {
                unordered.push(base.clone());
                add(format!("{base}/*/name"), vals.clone(), s.path.as_ref());
                if s.either {
                    unordered.push(format!("{base}/*/either"));
                    add(format!("{base}/*/either/*"), vals, s.path.as_ref());
                }
                if let Some(field) = s.arg_field() {
                    let path = format!("{base}/*/{field}");
                    let file = s.path.as_ref().map(|f| &alias_files[f]);
                    let phrases: BTreeMap<String, Vec<String>> = s
                        .args
                        .iter()
                        .filter_map(|a| Some((a.clone(), file?.arg_phrases.get(a)?.clone())))
                        .collect();
                    let values = s.args.iter().map(|a| s.arg_json(a)).collect();
                    arg_entries.push((path, values, phrases));
                }
                if s.quantity {
                    let q = p.quantity_values.iter().map(|v| json!(v)).collect();
                    add(format!("{base}/*/quantity"), q, p.quantity_path.as_ref());
                }
                if s.negation {
                    add(format!("{base}/*/negation"), vec![json!(true)], None);
                    if let Some(np) = &p.not_path {
                        let phrases: Vec<String> = alias_files[np]
                            .phrases
                            .values()
                            .flatten()
                            .cloned()
                            .collect();
                        negation_aliases.push((format!("{base}/*/negation"), phrases));
                    }
                }
            } else {
                add(base, vals, s.path.as_ref());
            }
        }
    }

    for (path, phrases) in negation_aliases {
        aliases.insert(path, [("true".to_string(), phrases)].into());
    }
    for (path, values, phrases) in arg_entries {
        if !phrases.is_empty() {
            aliases.insert(path.clone(), phrases);
        }
        catalogs.insert(path, values);
    }

    // Golds.
    let mut cases = Vec::new();
    for p in &parsed {
        let gold: Vec<Value> = p.orders.iter().map(|o| order_json(o, &plans)).collect();
        let mut extra = Map::new();
        extra.insert("source".into(), p.source.clone());
        cases.push(Case {
            id: format!("{venue}-{:03}", p.no),
            request: p.request.clone(),
            gold: Value::Array(gold),
            tools: None,
            acceptable: None,
            extra,
        });
    }
    let license = [
        venue_dir.to_path_buf(),
        venue_dir.join(".."),
        venue_dir.join("../.."),
    ]
    .iter()
    .map(|d| crate::read_license(d))
    .find(|l| l != "unknown")
    .unwrap_or_else(|| "unknown".into());
    let suite = Suite {
        notation: Some(if plans.len() == 1 {
            // One kind of order: written with its name (`drink 1 size large …`), as the
            // orders of a venue with several kinds are, not as a bare `(1 size large …)`.
            format!(
                "{}# The venue's one kind of order is named on its line, as several kinds are.\nname_calls: true\n",
                crate::suite::EXPLICIT_NOTATION
            )
        } else {
            crate::suite::EXPLICIT_NOTATION.into()
        }),
        meta: SuiteMeta {
            name: format!("food-ordering-{venue}"),
            source: if parsed.is_empty() {
                format!("FoodOrdering venue `{venue}` (schema.json, alias/*.txt)")
            } else {
                format!("FoodOrdering venue `{venue}` (schema.json, alias/*.txt, {cases_file})")
            },
            license,
            notes,
            scoring: Scoring {
                unordered,
                paper: PaperRule::SortedOrders,
            },
        },
        schema: Some(schema),
        catalogs,
        aliases,
        cases,
        examples: Vec::new(),
    };
    crate::finish_import(&suite, out, Vec::new())
}

/// `MAIN_DISH_ORDER` -> `main_dish`, `PIZZAORDER` -> `pizza`.
fn order_tag(intent: &str) -> String {
    let l = intent.to_lowercase();
    let t = l
        .strip_suffix("_order")
        .or_else(|| l.strip_suffix("order"))
        .unwrap_or(&l);
    if t.is_empty() {
        l.clone()
    } else {
        t.to_string()
    }
}

fn read_alias_file(path: &Path, numeric: bool) -> Result<AliasList> {
    let text = crate::suite::read(path)?;
    let mut out = AliasList::default();
    for (n, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let at = Some((n + 1).to_string());
        // `phrase<TAB>LABEL(value)`; a line whose phrase and label a space separates (the
        // Grammar Pruning authors' Coffee `toppings.txt:18`, `cinamon TOPPING(cinnamon)`)
        // is read at its last space before a `LABEL(`, and noted.
        let split = line.split_once('\t').or_else(|| {
            let (phrase, label) = line.trim_end().rsplit_once(char::is_whitespace)?;
            let head = &label[..label.find('(')?];
            (!phrase.trim().is_empty()
                && !head.is_empty()
                && head.chars().all(|c| c.is_ascii_uppercase() || c == '_'))
            .then(|| {
                out.notes.push(format!(
                    "{}:{}: phrase and label separated by a space, not a tab: read as {:?} -> {label}.",
                    path.file_name().map_or_else(String::new, |f| format!("alias/{}", f.to_string_lossy())),
                    n + 1,
                    phrase.trim()
                ));
                (phrase, label)
            })
        });
        let Some((phrase, label)) = split else {
            return Err(EvalError::format(
                path,
                at,
                format!("expected `phrase<TAB>LABEL(value)`, found {line:?}"),
            ));
        };
        let label = label.trim();
        let value = label
            .find('(')
            .filter(|_| label.ends_with(')'))
            .map(|i| label[i + 1..label.len() - 1].trim().to_string())
            .filter(|v| !v.is_empty())
            .ok_or_else(|| {
                EvalError::format(
                    path,
                    at.clone(),
                    format!("expected `LABEL(value)`, found {label:?}"),
                )
            })?;
        // A nested value, `TOPPING(ESPRESSO_SHOT(1))`: the value `ESPRESSO_SHOT`, its
        // argument `1`. (`Or(a,b)`, Burrito's alternatives, stays one value as written.)
        let (value, arg) = match nested_value(&value) {
            Some((v, a)) if !numeric => (v.to_string(), Some(a.to_string())),
            _ => (value, None),
        };
        if numeric && value.parse::<i64>().is_err() {
            return Err(EvalError::format(
                path,
                at,
                format!("a NUMBER value must be an integer, found {value:?}"),
            ));
        }
        if !out.values.contains(&value) {
            out.values.push(value.clone());
        }
        let phrase = phrase.trim().to_string();
        if let Some(arg) = arg {
            if !out.args.contains(&arg) {
                out.args.push(arg.clone());
            }
            let ph = out.arg_phrases.entry(arg).or_default();
            if !ph.contains(&phrase) {
                ph.push(phrase.clone());
            }
        }
        let ph = out.phrases.entry(value).or_default();
        if !ph.contains(&phrase) {
            ph.push(phrase);
        }
    }
    Ok(out)
}

/// `ESPRESSO_SHOT(1)` -> (`ESPRESSO_SHOT`, `1`): a value written with one argument, as an
/// alias file nests it in its label. The value is a word (letters, digits, `_`, `-`) other
/// than `Or`/`OR` (alternatives); the argument one word.
fn nested_value(text: &str) -> Option<(&str, &str)> {
    let open = text.find('(')?;
    let (head, rest) = (text[..open].trim(), &text[open + 1..]);
    let arg = rest.strip_suffix(')')?.trim();
    let word = |w: &str| {
        !w.is_empty()
            && w.chars()
                .all(|c| c.is_alphanumeric() || c == '_' || c == '-' || c == '.')
    };
    (word(head) && !head.eq_ignore_ascii_case("or") && word(arg)).then_some((head, arg))
}

fn parse_order(node: &Sexpr, decl: &VenueSchema) -> std::result::Result<ParsedOrder, String> {
    let head = node
        .head()
        .ok_or_else(|| format!("expected an order `(INTENT ...)`, found {node}"))?;
    let intent = decl
        .intents
        .iter()
        .find(|i| i.name == head)
        .ok_or_else(|| {
            let names: Vec<&str> = decl.intents.iter().map(|i| i.name.as_str()).collect();
            format!(
                "unknown intent `{head}`, expected one of {}",
                names.join(", ")
            )
        })?;
    let mut order = ParsedOrder {
        intent: intent.name.clone(),
        number: None,
        occs: Vec::new(),
    };
    for child in node.args() {
        if child.head() == Some("NUMBER") {
            let n = match child.args() {
                [Sexpr::Atom(a)] => a
                    .parse::<i64>()
                    .map_err(|_| format!("expected an integer in {child}"))?,
                _ => return Err(format!("expected `(NUMBER n)`, found {child}")),
            };
            if order.number.replace(n).is_some() {
                return Err(format!("a second NUMBER in {node}"));
            }
        } else {
            order.occs.push(parse_occ(child, decl)?);
        }
    }
    Ok(order)
}

fn parse_occ(node: &Sexpr, decl: &VenueSchema) -> std::result::Result<Occ, String> {
    match node.head() {
        Some("NOT") => match node.args() {
            [inner] => {
                let mut o = parse_occ(inner, decl)?;
                if o.negated {
                    return Err(format!("double negation in {node}"));
                }
                o.negated = true;
                Ok(o)
            }
            _ => Err(format!("expected `(NOT (SLOT ...))`, found {node}")),
        },
        Some("COMPLEX") => {
            let args = node.args();
            let q = args.iter().position(|a| a.head() == Some("QUANTITY"));
            match (args.len(), q) {
                (2, Some(qi)) => {
                    let quantity = match args[qi].args() {
                        [Sexpr::Atom(a)] => a.clone(),
                        _ => return Err(format!("expected `(QUANTITY q)`, found {}", args[qi])),
                    };
                    let mut o = parse_occ(&args[1 - qi], decl)?;
                    if o.quantity.replace(quantity).is_some() {
                        return Err(format!("two quantities in {node}"));
                    }
                    Ok(o)
                }
                _ => Err(format!(
                    "expected `(COMPLEX (QUANTITY q) (SLOT v))`, found {node}"
                )),
            }
        }
        Some(slot) => {
            let known = decl
                .intents
                .iter()
                .flat_map(|i| &i.slots)
                .any(|s| s.slot_name == slot);
            if !known || MODIFIERS.contains(&slot) {
                return Err(format!(
                    "`{slot}` is not a value slot of this venue's schema.json, in {node}"
                ));
            }
            let mut arg = None;
            let values = match node.args() {
                [Sexpr::Atom(a)] => vec![a.clone()],
                // A nested value: `(TOPPING (ESPRESSO_SHOT 1))`.
                [nested @ Sexpr::List(items)]
                    if nested.head().is_some_and(|h| {
                        h != "OR" && h != "COMPLEX" && !MODIFIERS.contains(&h)
                    }) =>
                {
                    match items.as_slice() {
                        [Sexpr::Atom(v), Sexpr::Atom(a)] => {
                            arg = Some(a.clone());
                            vec![v.clone()]
                        }
                        _ => {
                            return Err(format!(
                                "expected a nested value `(VALUE argument)` of one word, found {nested} in {node}"
                            ))
                        }
                    }
                }
                [or] if or.head() == Some("OR") => {
                    let vals: Option<Vec<String>> = or
                        .args()
                        .iter()
                        .map(|a| match a {
                            Sexpr::Atom(a) => Some(a.clone()),
                            Sexpr::List(_) => None,
                        })
                        .collect();
                    match vals {
                        Some(v) if v.len() >= 2 => v,
                        _ => {
                            return Err(format!(
                                "expected `(OR a b ...)` of at least two values, found {or}"
                            ))
                        }
                    }
                }
                _ => {
                    return Err(format!(
                        "expected `({slot} value)`, `({slot} (OR a b))` or `({slot} (VALUE argument))`, found {node}"
                    ))
                }
            };
            Ok(Occ {
                slot: slot.to_string(),
                values,
                arg,
                quantity: None,
                negated: false,
            })
        }
        None => Err(format!("expected `(SLOT ...)`, found {node}")),
    }
}

fn build_schema(plans: &[IntentPlan]) -> Value {
    let branches: Vec<Value> = plans
        .iter()
        .map(|p| {
            let mut props = Map::new();
            props.insert("number".into(), json!({"type": "integer", "minimum": 1}));
            for s in &p.slots {
                let schema = if s.list {
                    let mut item_props = Map::new();
                    item_props.insert("name".into(), json!({"enum": s.values}));
                    match s.arg_field() {
                        Some("count") => {
                            item_props.insert("count".into(), json!({"type": "integer", "minimum": 0}));
                        }
                        Some(field) => {
                            item_props.insert(field.into(), json!({"enum": s.args}));
                        }
                        None => {}
                    }
                    if s.quantity {
                        item_props.insert("quantity".into(), json!({"enum": p.quantity_values}));
                    }
                    if s.negation {
                        item_props.insert("negation".into(), json!({"const": true}));
                    }
                    let name_item = json!({"type": "object", "additionalProperties": false, "required": ["name"], "properties": item_props});
                    let item = if s.either {
                        let mut either_props = item_props.clone();
                        either_props.shift_remove("name");
                        if let Some(field) = s.arg_field() {
                            either_props.shift_remove(field);
                        }
                        let mut ep = Map::new();
                        ep.insert("either".into(), json!({"type": "array", "minItems": 2, "items": {"enum": s.values}}));
                        ep.extend(either_props);
                        json!({"oneOf": [name_item, {"type": "object", "additionalProperties": false, "required": ["either"], "properties": ep}]})
                    } else {
                        name_item
                    };
                    json!({"type": "array", "minItems": 1, "items": item})
                } else {
                    json!({"enum": s.values})
                };
                props.insert(s.field.clone(), schema);
            }
            let required: Vec<&str> = if p.number_required { vec!["number"] } else { vec![] };
            json!({
                "type": "object",
                "additionalProperties": false,
                "required": [p.tag],
                "properties": {p.tag.clone(): {"type": "object", "additionalProperties": false, "required": required, "properties": props}}
            })
        })
        .collect();
    json!({
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "description": "A list of orders.",
        "type": "array",
        "minItems": 1,
        "items": {"oneOf": branches}
    })
}

fn order_json(o: &ParsedOrder, plans: &[IntentPlan]) -> Value {
    let Some(plan) = plans.iter().find(|p| p.name == o.intent) else {
        return Value::Null;
    };
    let mut body = Map::new();
    if let Some(n) = o.number {
        body.insert("number".into(), json!(n));
    }
    for s in &plan.slots {
        let occs: Vec<&Occ> = o.occs.iter().filter(|x| x.slot == s.slot).collect();
        if occs.is_empty() {
            continue;
        }
        if s.list {
            // The authors' order (their processed Burger golds): qualified items first, then
            // the others, each group in source order. `em_paper` counts this order.
            let (mut occs, plain): (Vec<&Occ>, Vec<&Occ>) =
                occs.into_iter().partition(|x| x.quantity.is_some());
            occs.extend(plain);
            let items: Vec<Value> = occs
                .iter()
                .map(|x| {
                    let mut item = Map::new();
                    if x.values.len() > 1 {
                        item.insert("either".into(), json!(x.values));
                    } else {
                        item.insert("name".into(), json!(x.values[0]));
                        if let (Some(field), Some(a)) = (s.arg_field(), &x.arg) {
                            item.insert(field.into(), s.arg_json(a));
                        }
                    }
                    if let Some(q) = &x.quantity {
                        item.insert("quantity".into(), json!(q));
                    }
                    if x.negated {
                        item.insert("negation".into(), json!(true));
                    }
                    Value::Object(item)
                })
                .collect();
            body.insert(s.field.clone(), Value::Array(items));
        } else {
            body.insert(s.field.clone(), json!(occs[0].values[0]));
        }
    }
    json!({ plan.tag.clone(): body })
}

/// Converts the Grammar Pruning authors' order notation (`[BurgerOrder(number=1,
/// main_dish_type='x', toppings=[Topping(name='y', qualifier='light', negation=True)])]`)
/// to this module's JSON. `classes` maps each class name to its order tag (`BurgerOrder` ->
/// `main_dish`); `qualifier` becomes `quantity`, `negation=True` stays, `None`/`False`
/// arguments are left out, and an item class's `name` stays `name`.
pub fn from_paper_orders(
    v: &PyValue,
    classes: &[(&str, &str)],
) -> std::result::Result<Value, String> {
    let PyValue::List(orders) = v else {
        return Err(format!("expected a list of orders, found {v}"));
    };
    orders
        .iter()
        .map(|o| {
            let PyValue::Call { name, args } = o else {
                return Err(format!("expected an order call, found {o}"));
            };
            let tag = classes
                .iter()
                .find(|(c, _)| c == name)
                .map(|(_, t)| *t)
                .ok_or_else(|| format!("unknown order class `{name}`"))?;
            Ok(json!({ tag: paper_args(args)? }))
        })
        .collect::<std::result::Result<Vec<_>, _>>()
        .map(Value::Array)
}

fn paper_args(args: &[(String, PyValue)]) -> std::result::Result<Value, String> {
    let mut m = Map::new();
    for (k, v) in args {
        let key = if k == "qualifier" {
            "quantity".to_string()
        } else {
            k.clone()
        };
        let val = match v {
            PyValue::None | PyValue::Bool(false) => continue,
            PyValue::Bool(true) => json!(true),
            PyValue::Int(i) => json!(i),
            PyValue::Float(f) => json!(f),
            PyValue::Str(s) => json!(s),
            PyValue::List(items) => Value::Array(
                items
                    .iter()
                    .map(|it| match it {
                        PyValue::Call { args, .. } => paper_args(args),
                        PyValue::Str(s) => Ok(json!(s)),
                        other => Err(format!("unexpected list item {other}")),
                    })
                    .collect::<std::result::Result<Vec<_>, _>>()?,
            ),
            PyValue::Call { args, .. } => paper_args(args)?,
        };
        m.insert(key, val);
    }
    Ok(Value::Object(m))
}

/// The paper's Burger classes and this importer's Burger tags.
pub const BURGER_PAPER_CLASSES: [(&str, &str); 3] = [
    ("BurgerOrder", "main_dish"),
    ("SideOrder", "side"),
    ("DrinkOrder", "drink"),
];

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pycall;
    use crate::score::{em, em_paper};
    use crate::testdata::{assert_golds_round_trip, data_dir};

    fn venue() -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        std::fs::create_dir(d.join("alias")).unwrap();
        std::fs::write(
            d.join("schema.json"),
            r#"{"intents": [
                {"name": "BOWL_ORDER", "slots": [
                    {"slotName": "BASE", "path": "alias/base.txt"},
                    {"slotName": "TOPPING", "qualified": true, "negatable": true, "path": "alias/top.txt"},
                    {"slotName": "NUMBER", "path": "alias/number.txt"},
                    {"slotName": "QUANTITY", "path": "alias/q.txt"},
                    {"slotName": "NOT", "path": "alias/not.txt"}]},
                {"name": "DRINKORDER", "slots": [
                    {"slotName": "DRINK", "path": "alias/drink.txt"},
                    {"slotName": "NUMBER", "path": "alias/number.txt"}]}]}"#,
        )
        .unwrap();
        for (f, t) in [
            (
                "base.txt",
                "rice bowl\tBASE(rice)\nnoodle bowl\tBASE(noodles)\n",
            ),
            (
                "top.txt",
                "egg\tTOPPING(egg)\neggs\tTOPPING(egg)\nchili\tTOPPING(chili)\n\n",
            ),
            ("number.txt", "a\tnumber(1)\ntwo\tnumber(2)\n"),
            ("q.txt", "extra\tquantity(extra)\n"),
            ("not.txt", "no\tNOT(not)\nwithout\tNOT(not)\n"),
            ("drink.txt", "tea\tdrinkType(tea)\n"),
        ] {
            std::fs::write(d.join("alias").join(f), t).unwrap();
        }
        dir
    }

    #[test]
    fn orders_from_s_expressions_and_widening() {
        let v = venue();
        std::fs::write(
            v.path().join("dev.json"),
            concat!(
                r#"{"SRC": "a rice bowl with extra egg no chili and a tea", "EXR": "(BOWL_ORDER (NUMBER 1 ) (BASE rice ) (COMPLEX (QUANTITY extra ) (TOPPING egg ) ) (NOT (TOPPING chili ) ) ) (DRINKORDER (NUMBER 1 ) (DRINK tea ) )"}"#,
                "\n",
                r#"{"SRC": "two teas, green or black", "EXR": "(DRINKORDER (NUMBER 2 ) (DRINK (OR green black ) ) )"}"#,
                "\n"
            ),
        )
        .unwrap();
        let out = tempfile::tempdir().unwrap();
        let s = import_food_ordering(v.path(), out.path()).unwrap();
        assert_eq!(s.cases, 2);
        let suite = Suite::load(out.path()).unwrap();
        assert_eq!(
            suite.cases[0].gold,
            json!([
                {"bowl": {"number": 1, "base": "rice", "toppings": [{"name": "egg", "quantity": "extra"}, {"name": "chili", "negation": true}]}},
                {"drink": {"number": 1, "drinks": [{"name": "tea"}]}}
            ])
        );
        // DRINK with OR (line 2) becomes a list for every order, with an `either` item;
        // both values join the enum.
        assert_eq!(
            suite.cases[1].gold,
            json!([{"drink": {"number": 2, "drinks": [{"either": ["green", "black"]}]}}])
        );
        assert!(
            suite
                .meta
                .notes
                .iter()
                .any(|n| n.contains("value `green` is in no alias file")),
            "{:?}",
            suite.meta.notes
        );
        assert!(suite
            .meta
            .notes
            .iter()
            .any(|n| n.contains("alternatives (OR)")));
        assert_eq!(
            suite.catalogs["/*/bowl/toppings/*/name"],
            vec![json!("egg"), json!("chili")]
        );
        assert_eq!(suite.catalogs["/*/bowl/number"], vec![json!(1), json!(2)]);
        assert_eq!(
            suite.aliases["/*/bowl/toppings/*/name"]["egg"],
            vec!["egg", "eggs"]
        );
        assert_eq!(
            suite.aliases["/*/bowl/toppings/*/negation"]["true"],
            vec!["no", "without"]
        );
        assert!(suite
            .meta
            .scoring
            .unordered
            .contains(&"/*/bowl/toppings".to_string()));
        assert_golds_round_trip(&suite);
    }

    /// A tea house in Amazon's layout whose alias files nest values
    /// (`SYRUP(HONEY_PUMP(2))`), its cases too; then the same in the authors' layout.
    #[test]
    fn nested_values_import_in_both_layouts() {
        let v = tempfile::tempdir().unwrap();
        let d = v.path();
        std::fs::create_dir(d.join("alias")).unwrap();
        std::fs::write(
            d.join("schema.json"),
            r#"{"intents": [{"name": "TEA_ORDER", "slots": [
                {"slotName": "TEA_TYPE", "path": "alias/teas.txt"},
                {"slotName": "SYRUP", "path": "alias/syrups.txt", "negatable": true},
                {"slotName": "LEAF", "path": "alias/leaves.txt"},
                {"slotName": "NUMBER", "path": "alias/number.txt"},
                {"slotName": "NOT", "path": "alias/not.txt"}]}]}"#,
        )
        .unwrap();
        for (f, t) in [
            ("teas.txt", "oolong\tTEA_TYPE(oolong)\nchai\tTEA_TYPE(chai)\n"),
            (
                "syrups.txt",
                "mint syrup\tSYRUP(mint)\na pump of honey\tSYRUP(HONEY_PUMP(1))\ntwo pumps of honey\tSYRUP(HONEY_PUMP(2))\ndouble honey\tSYRUP(HONEY_PUMP(2))\n",
            ),
            // A slot that is no list in the layout, nested with a word.
            ("leaves.txt", "loose\tLEAF(loose)\nrolled green\tLEAF(ROLLED(green))\n"),
            ("number.txt", "one\tNUMBER(1)\ntwo\tNUMBER(2)\n"),
            ("not.txt", "no\tNOT(not)\n"),
        ] {
            std::fs::write(d.join("alias").join(f), t).unwrap();
        }
        std::fs::write(
            d.join("dev.json"),
            [
                json!({"SRC": "two chai with two pumps of honey and mint syrup", "EXR": "(TEA_ORDER (NUMBER 2 ) (TEA_TYPE chai ) (SYRUP (HONEY_PUMP 2 ) ) (SYRUP mint ) )"}),
                json!({"SRC": "one oolong, rolled green leaves, no honey", "EXR": "(TEA_ORDER (NUMBER 1 ) (TEA_TYPE oolong ) (LEAF (ROLLED green ) ) (NOT (SYRUP (HONEY_PUMP 1 ) ) ) )"}),
            ]
            .map(|l| l.to_string() + "\n")
            .concat(),
        )
        .unwrap();
        let out = tempfile::tempdir().unwrap();
        import_food_ordering(d, out.path()).unwrap();
        let suite = Suite::load(out.path()).unwrap();
        assert_eq!(
            suite.cases[0].gold,
            json!([{"tea": {"number": 2, "tea_type": "chai", "syrups": [
                {"name": "HONEY_PUMP", "count": 2}, {"name": "mint"}]}}])
        );
        assert_eq!(
            suite.cases[1].gold,
            json!([{"tea": {"number": 1, "tea_type": "oolong",
                "syrups": [{"name": "HONEY_PUMP", "count": 1, "negation": true}],
                "leafs": [{"name": "ROLLED", "detail": "green"}]}}])
        );
        let item = &suite.schema.clone().unwrap_or_default()["items"]["oneOf"][0]["properties"]
            ["tea"]["properties"];
        assert_eq!(
            item["syrups"]["items"]["properties"]["count"],
            json!({"type": "integer", "minimum": 0})
        );
        assert_eq!(
            item["syrups"]["items"]["properties"]["name"]["enum"],
            json!(["mint", "HONEY_PUMP"])
        );
        assert_eq!(
            item["leafs"]["items"]["properties"]["detail"]["enum"],
            json!(["green"])
        );
        assert_eq!(
            suite.catalogs["/*/tea/syrups/*/count"],
            vec![json!(1), json!(2)]
        );
        let count_aliases = &suite.aliases["/*/tea/syrups/*/count"];
        assert_eq!(
            count_aliases["2"],
            vec!["two pumps of honey", "double honey"]
        );
        assert_eq!(
            suite.aliases["/*/tea/syrups/*/name"]["HONEY_PUMP"],
            vec!["a pump of honey", "two pumps of honey", "double honey"]
        );
        assert_golds_round_trip(&suite);

        // The authors' layout: the same venue, its cases in their notation.
        std::fs::remove_file(d.join("dev.json")).unwrap();
        std::fs::write(
            d.join("processed_dev.json"),
            json!([{"SRC": "two chai with two pumps of honey and mint syrup",
                    "TOPALIAS": "[TeaOrder(number=2, tea_type='chai', syrups=[Syrup(name='HONEY_PUMP', count=2), Syrup(name='mint')])]"}])
            .to_string(),
        )
        .unwrap();
        import_food_ordering(d, out.path()).unwrap();
        let theirs = Suite::load(out.path()).unwrap();
        assert_eq!(theirs.cases[0].gold, suite.cases[0].gold);
        assert_golds_round_trip(&theirs);

        // A nested value of more than one argument: the file, the line, what was expected.
        std::fs::remove_file(d.join("processed_dev.json")).unwrap();
        std::fs::write(
            d.join("dev.json"),
            json!({"SRC": "x", "EXR": "(TEA_ORDER (NUMBER 1 ) (SYRUP (HONEY_PUMP 1 2 ) ) )"})
                .to_string(),
        )
        .unwrap();
        let e = import_food_ordering(d, out.path()).unwrap_err().to_string();
        assert!(
            e.contains("dev.json:1:") && e.contains("expected a nested value `(VALUE argument)`"),
            "{e}"
        );
    }

    /// Amazon's Coffee: `TOPPING(ESPRESSO_SHOT(1))` in its toppings file is the topping
    /// `ESPRESSO_SHOT` with a count.
    #[test]
    fn coffee_shots_are_toppings_with_a_count() {
        let Some(s) = import_venue("coffee") else {
            return;
        };
        let toppings = &s.schema.clone().unwrap_or_default()["items"]["oneOf"][0]["properties"]
            ["drink"]["properties"]["toppings"];
        assert_eq!(
            toppings["items"]["properties"]["count"],
            json!({"type": "integer", "minimum": 0})
        );
        let names = toppings["items"]["properties"]["name"]["enum"]
            .as_array()
            .unwrap();
        assert!(names.contains(&json!("ESPRESSO_SHOT")), "{names:?}");
        assert!(!names
            .iter()
            .any(|n| n.as_str().is_some_and(|n| n.contains('('))));
        assert_eq!(
            s.catalogs["/*/drink/toppings/*/count"],
            vec![json!(1), json!(2), json!(3), json!(4)]
        );
        assert!(
            s.aliases["/*/drink/toppings/*/count"]["2"].contains(&"two extra shots".to_string())
        );
        assert!(s.aliases["/*/drink/toppings/*/name"]["ESPRESSO_SHOT"]
            .contains(&"an extra shot".to_string()));
        // A drink with two extra shots and light foam round-trips.
        let order = json!([{"drink": {"number": 1, "drink_type": "latte", "toppings": [
            {"name": "ESPRESSO_SHOT", "count": 2}, {"name": "foam", "quantity": "light"}]}}]);
        let spec = dss_compiler::compile(s.schema.as_ref().expect("a schema"), &Default::default())
            .unwrap();
        spec.validate(&order).unwrap();
        assert_eq!(spec.expand(&spec.compress(&order).unwrap()).unwrap(), order);
    }

    #[test]
    fn unreadable_lines_are_errors_with_file_and_line() {
        let v = venue();
        let out = tempfile::tempdir().unwrap();
        for (exr, want) in [
            ("(BOWL_ORDER (NUMBER 1 ) (BASE rice )", "never closed"),
            ("(SOUP_ORDER (NUMBER 1 ) )", "unknown intent `SOUP_ORDER`"),
            ("(BOWL_ORDER (NUMBER one ) )", "expected an integer"),
            (
                "(BOWL_ORDER (NUMBER 1 ) (SAUCE x ) )",
                "`SAUCE` is not a value slot",
            ),
            (
                "(BOWL_ORDER (NUMBER 1 ) (COMPLEX (TOPPING egg ) ) )",
                "COMPLEX",
            ),
            (
                "(BOWL_ORDER (NUMBER 1 ) (BASE rice noodles ) )",
                "(BASE value)",
            ),
        ] {
            let line = json!({"SRC": "x", "EXR": exr}).to_string();
            std::fs::write(
                v.path().join("dev.json"),
                format!(
                    "{}\n{line}\n",
                    json!({"SRC": "ok", "EXR": "(DRINKORDER (NUMBER 1 ) (DRINK tea ) )"})
                ),
            )
            .unwrap();
            let e = import_food_ordering(v.path(), out.path())
                .unwrap_err()
                .to_string();
            assert!(e.contains("dev.json:2:") && e.contains(want), "{exr}: {e}");
        }
        std::fs::write(v.path().join("dev.json"), "{\"SRC\": \"x\"\n").unwrap();
        let e = import_food_ordering(v.path(), out.path())
            .unwrap_err()
            .to_string();
        assert!(e.contains("dev.json:1"), "{e}");
        std::fs::write(v.path().join("alias/base.txt"), "rice bowl\n").unwrap();
        let e = import_food_ordering(v.path(), out.path())
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("base.txt:1") && e.contains("phrase<TAB>LABEL"),
            "{e}"
        );
        // A space where the tab belongs (as a line of the authors' Coffee toppings): read
        // at the last space before the label, and noted in the suite.
        std::fs::remove_file(v.path().join("dev.json")).unwrap();
        std::fs::write(v.path().join("alias/base.txt"), "rice bowl BASE(rice)\n").unwrap();
        import_food_ordering(v.path(), out.path()).unwrap();
        let suite = Suite::load(out.path()).unwrap();
        assert!(
            suite
                .meta
                .notes
                .iter()
                .any(|n| n.contains("alias/base.txt:1") && n.contains("\"rice bowl\"")),
            "{:?}",
            suite.meta.notes
        );
        let phrases = &suite.aliases.values().find_map(|m| m.get("rice")).unwrap();
        assert!(phrases.contains(&"rice bowl".to_string()), "{phrases:?}");
    }

    #[test]
    fn paper_orders_convert() {
        let v = pycall::parse("[BurgerOrder(number=1, main_dish_type='cheese_burger', toppings=[Topping(name='mayonnaise', qualifier='light'), Topping(name='mustard', negation=True)]), DrinkOrder(number=2, drink_type='milk', size=None)]").unwrap();
        assert_eq!(
            from_paper_orders(&v, &BURGER_PAPER_CLASSES).unwrap(),
            json!([
                {"main_dish": {"number": 1, "main_dish_type": "cheese_burger", "toppings": [{"name": "mayonnaise", "quantity": "light"}, {"name": "mustard", "negation": true}]}},
                {"drink": {"number": 2, "drink_type": "milk"}}
            ])
        );
        assert!(from_paper_orders(
            &pycall::parse("[PizzaOrder(number=1)]").unwrap(),
            &BURGER_PAPER_CLASSES
        )
        .is_err());
    }

    fn import_venue(name: &str) -> Option<Suite> {
        let data = data_dir()?;
        let out = tempfile::tempdir().unwrap();
        import_food_ordering(
            &data.join("FoodOrdering_amazon/data").join(name),
            out.path(),
        )
        .unwrap();
        let suite = Suite::load(out.path()).unwrap();
        assert_eq!(suite.meta.name, format!("food-ordering-{name}"));
        assert_golds_round_trip(&suite);
        // Every gold value at a catalog path is in its catalog.
        for c in &suite.cases {
            for (slot, value) in crate::score::gold_pairs(&c.gold, suite.catalogs.keys()) {
                let ok = suite.catalogs[&slot]
                    .iter()
                    .any(|v| v.as_str().map_or(v.to_string(), str::to_string) == value);
                assert!(ok, "{} {slot} {value}", c.id);
            }
        }
        Some(suite)
    }

    /// The Grammar Pruning authors' layout (`processed_dev.json`, their Python order
    /// notation, their modified alias files) imports to the same cases as Amazon's
    /// `dev.json`: the same requests, and golds equal under the suite's scoring.
    #[test]
    fn imports_the_authors_processed_cases_as_amazons() {
        let Some(data) = data_dir() else { return };
        let Some(amazon) = import_venue("burger") else {
            return;
        };
        let out = tempfile::tempdir().unwrap();
        let summary = import_food_ordering(
            &data.join("FoodOrdering_grammar_pruning/data/burger"),
            out.path(),
        )
        .unwrap();
        let theirs = Suite::load(out.path()).unwrap();
        assert_golds_round_trip(&theirs);
        assert_eq!(theirs.cases.len(), amazon.cases.len(), "{summary:?}");
        assert!(theirs.meta.source.contains("processed_dev.json"));
        for (a, b) in amazon.cases.iter().zip(&theirs.cases) {
            assert_eq!(a.request, b.request, "{}", b.id);
            assert!(
                em(&b.gold, &a.gold, &amazon.meta.scoring),
                "{}: {} vs {}",
                b.id,
                b.gold,
                a.gold
            );
        }
    }

    #[test]
    fn processed_cases_name_intents_by_their_slots_and_report_bad_records() {
        let v = tempfile::tempdir().unwrap();
        let dir = v.path();
        std::fs::create_dir(dir.join("alias")).unwrap();
        std::fs::write(
            dir.join("schema.json"),
            r#"{"intents": [
                {"name": "DRINK_ORDER", "slots": [
                    {"slotName": "DRINK_TYPE", "path": "alias/drinks.txt"},
                    {"slotName": "SIZE", "path": "alias/sizes.txt"},
                    {"slotName": "TOPPING", "path": "alias/toppings.txt", "qualified": true, "negatable": true},
                    {"slotName": "QUANTITY", "path": "alias/q.txt"},
                    {"slotName": "NUMBER", "path": "alias/n.txt"}]},
                {"name": "SIDE_ORDER", "slots": [
                    {"slotName": "SIDE_TYPE", "path": "alias/sides.txt"},
                    {"slotName": "SIZE", "path": "alias/sizes.txt"},
                    {"slotName": "NUMBER", "path": "alias/n.txt"}]}]}"#,
        )
        .unwrap();
        for (f, body) in [
            ("drinks.txt", "latte\tDRINK_TYPE(latte)\n"),
            ("sizes.txt", "large\tSIZE(large)\n"),
            ("toppings.txt", "oat milk\tTOPPING(oat_milk)\n"),
            ("q.txt", "extra\tQUANTITY(extra)\n"),
            ("n.txt", "two\tNUMBER(2)\n"),
            ("sides.txt", "fries\tSIDE_TYPE(fries)\n"),
        ] {
            std::fs::write(dir.join("alias").join(f), body).unwrap();
        }
        let record = |top: &str| {
            format!(
                "[{}]",
                json!({"SRC": "two large lattes with extra oat milk and fries", "TOPALIAS": top})
            )
        };
        std::fs::write(
            dir.join("processed_dev.json"),
            record("[DrinkOrder(number=2, drink_type='latte', size='large', toppings=[Topping(name='oat_milk', qualifier='extra')]), SideOrder(number=1, side_type='fries', size=None)]"),
        )
        .unwrap();
        let out = tempfile::tempdir().unwrap();
        import_food_ordering(dir, out.path()).unwrap();
        let suite = Suite::load(out.path()).unwrap();
        assert_eq!(
            suite.cases[0].gold,
            json!([
                {"drink": {"number": 2, "drink_type": "latte", "size": "large",
                           "toppings": [{"name": "oat_milk", "quantity": "extra"}]}},
                {"side": {"number": 1, "side_type": "fries"}}
            ])
        );
        // A size alone fits both intents: the class name decides.
        std::fs::write(
            dir.join("processed_dev.json"),
            record("[SideOrder(number=1, size='large')]"),
        )
        .unwrap();
        import_food_ordering(dir, out.path()).unwrap();
        let suite = Suite::load(out.path()).unwrap();
        assert_eq!(
            suite.cases[0].gold,
            json!([{"side": {"number": 1, "size": "large"}}])
        );
        // Bad records: an error naming the file, the record and what was expected.
        for (top, want) in [
            (
                "[DrinkOrder(number=1, flavour='x')]",
                "`flavour` of DrinkOrder names no slot",
            ),
            (
                "[DrinkOrder(drink_type='latte', side_type='fries')]",
                "no intent",
            ),
            (
                "[Order(number=1, size='large')]",
                "could be any of the intents",
            ),
            ("[DrinkOrder(number=1", "TOPALIAS"),
            ("[]", "no order"),
        ] {
            std::fs::write(dir.join("processed_dev.json"), record(top)).unwrap();
            let e = import_food_ordering(dir, out.path())
                .unwrap_err()
                .to_string();
            assert!(
                e.contains("processed_dev.json") && e.contains("record 1") && e.contains(want),
                "{top}: {e}"
            );
        }
    }

    #[test]
    fn imports_burger() {
        let Some(s) = import_venue("burger") else {
            return;
        };
        assert_eq!(s.cases.len(), 161);
        assert_eq!(
            s.cases[0].gold,
            json!([
                {"main_dish": {"number": 1, "main_dish_type": "vegan_burger", "toppings": [{"name": "lettuce"}, {"name": "tomato"}, {"name": "onion"}]}},
                {"side": {"number": 1, "side_type": "sweet_potato_fries", "size": "large"}}
            ])
        );
        // `(TOPPING bacon) ... (COMPLEX (QUANTITY extra) (TOPPING onion))`: the qualified item first.
        assert_eq!(
            s.cases[73].gold[0]["main_dish"]["toppings"][0],
            json!({"name": "onion", "quantity": "extra"})
        );
    }

    /// The authors' Burger golds (their `expected`, first 131 items) are this importer's golds.
    #[test]
    fn burger_golds_are_the_authors_golds() {
        let Some(data) = data_dir() else { return };
        let Some(burger) = import_venue("burger") else {
            return;
        };
        let file = data.join("FoodOrdering_grammar_pruning/output_fa3d033/tuned_Qwen2.5-Coder-1.5B-Instruct-f16-burger-NER-Disambiguation.json");
        let items: Vec<Value> =
            serde_json::from_str(&std::fs::read_to_string(file).unwrap()).unwrap();
        for (i, it) in items.iter().take(131).enumerate() {
            let py = pycall::parse(it["expected"].as_str().unwrap()).unwrap();
            let expected = from_paper_orders(&py, &BURGER_PAPER_CLASSES).unwrap();
            assert_eq!(
                it["input"].as_str(),
                Some(burger.cases[i].request.as_str()),
                "item {i}"
            );
            assert!(
                em_paper(&expected, &burger.cases[i].gold, &burger.meta.scoring),
                "item {i}: {expected} vs {}",
                burger.cases[i].gold
            );
        }
    }

    #[test]
    fn imports_pizza() {
        let Some(s) = import_venue("pizza") else {
            return;
        };
        assert_eq!(s.cases.len(), 348);
    }

    #[test]
    fn imports_burrito() {
        let Some(s) = import_venue("burrito") else {
            return;
        };
        assert_eq!(s.cases.len(), 191);
        // `(BEAN_FILLING (OR black_beans pinto_beans))` is an `either` item.
        assert!(s.cases.iter().any(|c| c
            .gold
            .to_string()
            .contains(r#""either":["black_beans","pinto_beans"]"#)));
    }

    #[test]
    fn imports_sub() {
        let Some(s) = import_venue("sub") else { return };
        assert_eq!(s.cases.len(), 161);
    }

    /// FNV-1a (64 bits) of a text: a fixed digest, the same on every platform.
    fn fnv1a(text: &str) -> u64 {
        text.bytes().fold(0xcbf2_9ce4_8422_2325, |h, b| {
            (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
        })
    }

    /// The suite files of the venues without nested values are exactly what the importer
    /// wrote before it read nested values (digests of `schema.json`, `catalogs.yaml`,
    /// `aliases.yaml`, `cases.jsonl`, `suite.yaml`, `notation.yaml`).
    #[test]
    fn venues_without_nested_values_import_as_before() {
        let Some(data) = data_dir() else { return };
        let files = [
            "schema.json",
            "catalogs.yaml",
            "aliases.yaml",
            "cases.jsonl",
            "suite.yaml",
            "notation.yaml",
        ];
        let mut got = Vec::new();
        for venue in ["burger", "pizza", "burrito", "sub"] {
            let out = tempfile::tempdir().unwrap();
            import_food_ordering(
                &data.join("FoodOrdering_amazon/data").join(venue),
                out.path(),
            )
            .unwrap();
            for f in files {
                let text = std::fs::read_to_string(out.path().join(f)).unwrap();
                got.push(format!("{venue}/{f} {:016x}", fnv1a(&text)));
            }
        }
        let want: [&str; 24] = [
            "burger/schema.json 58e20c58d5acf367",
            "burger/catalogs.yaml bef5ca11dbc3766d",
            "burger/aliases.yaml f43f8431c852e628",
            "burger/cases.jsonl a85990dff01d7732",
            "burger/suite.yaml 11552eed01f12cb3",
            "burger/notation.yaml 2b71c66567a95df5",
            "pizza/schema.json e611dd1d591b927a",
            "pizza/catalogs.yaml 5d1c41f20539e90c",
            "pizza/aliases.yaml 91711b43a6a04a82",
            "pizza/cases.jsonl db45c14210d9542a",
            "pizza/suite.yaml 4014c349e77fbd91",
            "pizza/notation.yaml 2b71c66567a95df5",
            "burrito/schema.json 9295a84b50fd5bb2",
            "burrito/catalogs.yaml 89cf71e71835edff",
            "burrito/aliases.yaml ce4e7d473285a201",
            "burrito/cases.jsonl 7e3831248a099808",
            "burrito/suite.yaml f888cb89f9d9bf80",
            "burrito/notation.yaml 2b71c66567a95df5",
            "sub/schema.json 7d0eae07422acd11",
            "sub/catalogs.yaml b0a07dc8a66ec998",
            "sub/aliases.yaml a6c94f7337767a68",
            "sub/cases.jsonl 36f2070dc8de042e",
            "sub/suite.yaml aed6df041d8b3ba6",
            "sub/notation.yaml 2b71c66567a95df5",
        ];
        assert_eq!(got, want, "{}", got.join("\n"));
    }

    #[test]
    fn imports_coffee_schema_without_cases() {
        let Some(s) = import_venue("coffee") else {
            return;
        };
        assert!(s.cases.is_empty());
        let schema = s.schema.as_ref().expect("a schema");
        let drink = &schema["items"]["oneOf"][0]["properties"]["drink"]["properties"];
        assert!(
            drink["toppings"]["items"]["properties"]["quantity"].is_object(),
            "{drink}"
        );
        assert!(s.catalogs.contains_key("/*/drink/drink_type"));
        assert!(!s.aliases["/*/drink/drink_type"].is_empty());
        // Its one kind of order is written with its name, as a venue with several writes
        // each, not as a bare `(1 size large …)`.
        let notation: dss_compiler::NotationConfig =
            serde_norway::from_str(s.notation.as_deref().expect("a notation")).unwrap();
        let spec = dss_compiler::compile(
            schema,
            &dss_compiler::CompileOptions {
                notation: Some(notation),
                ..Default::default()
            },
        )
        .unwrap();
        let order = json!([{"drink": {"number": 2, "size": "large", "drink_type": "latte"}}]);
        let text = spec.compress(&order).unwrap();
        // The order's type comes first, before its modifiers.
        assert_eq!(text.trim_end(), "drink 2 drink_type latte size large");
        assert_eq!(spec.expand(&text).unwrap(), order);
        // A venue of several kinds keeps the plain explicit notation.
        let burger = import_venue("burger").unwrap();
        assert!(!burger.notation.unwrap_or_default().contains("name_calls"));
        // The authors' Coffee (their modified alias files, one line with a space for its
        // tab) imports too.
        let Some(data) = data_dir() else { return };
        let out = tempfile::tempdir().unwrap();
        import_food_ordering(
            &data.join("FoodOrdering_grammar_pruning/data/coffee"),
            out.path(),
        )
        .unwrap();
        let theirs = Suite::load(out.path()).unwrap();
        assert!(theirs.cases.is_empty());
        let cinnamon = theirs.aliases["/*/drink/toppings/*/name"]
            .get("cinnamon")
            .expect("cinnamon's phrases");
        assert!(cinnamon.contains(&"cinamon".to_string()), "{cinnamon:?}");
    }

    /// The authors' Burger outputs, re-scored over the paper's first 131 items with the
    /// paper's rule: 118 (0.5B F16), 124 (1.5B Q4) and 126 (1.5B F16) correct.
    #[test]
    fn em_paper_on_the_authors_burger_outputs() {
        let Some(data) = data_dir() else { return };
        let Some(burger) = import_venue("burger") else {
            return;
        };
        let dir = data.join("FoodOrdering_grammar_pruning/output_fa3d033");
        for (file, want) in [
            (
                "tuned_Qwen2.5-Coder-0.5B-Instruct-f16-burger-NER-Disambiguation.json",
                118,
            ),
            (
                "tuned_Qwen2.5-Coder-1.5B-Instruct-bnb-4bit-burger-NER-Disambiguation.json",
                124,
            ),
            (
                "tuned_Qwen2.5-Coder-1.5B-Instruct-f16-burger-NER-Disambiguation.json",
                126,
            ),
        ] {
            let items: Vec<Value> =
                serde_json::from_str(&std::fs::read_to_string(dir.join(file)).unwrap()).unwrap();
            assert!(items.len() >= 131, "{file}");
            let mut correct = 0;
            let mut correct_em = 0;
            for (i, it) in items.iter().take(131).enumerate() {
                let conv = |k: &str| {
                    let text = it[k]
                        .as_str()
                        .unwrap_or_else(|| panic!("{file} {i}: no {k}"));
                    let py = pycall::parse(text).unwrap_or_else(|e| panic!("{file} {i} {k}: {e}"));
                    from_paper_orders(&py, &BURGER_PAPER_CLASSES)
                        .unwrap_or_else(|e| panic!("{file} {i} {k}: {e}"))
                };
                let (output, expected) = (conv("output"), conv("expected"));
                correct += usize::from(em_paper(&output, &expected, &burger.meta.scoring));
                // Against this suite's own gold: the same verdict.
                assert_eq!(
                    em_paper(&output, &burger.cases[i].gold, &burger.meta.scoring),
                    em_paper(&output, &expected, &burger.meta.scoring),
                    "{file} item {i}"
                );
                correct_em += usize::from(em(&output, &expected, &burger.meta.scoring));
            }
            assert_eq!(correct, want, "{file}");
            // `em` (toppings as a multiset) is never stricter than the paper's rule.
            assert!(correct_em >= correct, "{file}");
            eprintln!("{file}: em_paper {correct}/131, em {correct_em}/131");
        }
    }
}
