//! Extraction on APIMixATIS and APIMixSNIPS (Grammar Pruning paper, Table 2).
//!
//! Each `*_data_schema.json` is `{function: {slot: [values]}}`; the index gets one entry per
//! (function, slot, value) at site `function/slot` (a value is chosen per call, as at a
//! union variant's instance path), and a mention is scored as the pair (slot, value), the
//! paper's unit: micro counts over requests of the set of (slot, value) pairs against the
//! pairs of the gold calls (`output_items`).
//!
//! 1. Paper mode gives exactly the authors' `input_items` per request, and so the paper's
//!    Table 2 (ATIS 372 true positives, 170 false positives, 0 misses; SNIPS 457, 33, 0).
//! 2. The default extractor: recall 1.00, precision at least the paper's.
//! 3. With one seeded typo in every mention of 5+ characters: recall ≥ 0.95.
//!
//! Data: each set's full corpus in the data directory (`DSS_DATA_DIR`, else
//! `../shared/data`), else its fixture under `tests/fixtures` (the same files, unchanged),
//! found by `dss-data`; under `CI=true` the full corpus is required. `DEBUG_FP=1` prints the
//! default mode's false positives.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use dss_extract::{EntityIndex, Entry, ExtractMode, Extraction};
use serde_json::Value;

/// The folder of the set `name` (`APIMixATIS`, `APIMixSNIPS`): the full corpus, else the
/// fixture; under `CI=true` a missing full corpus fails the test.
fn corpus(name: &str) -> dss_data::Corpus {
    let corpus = dss_data::corpus(name).unwrap_or_else(|e| panic!("{e}"));
    eprintln!("corpus {name}: {corpus}");
    corpus
}

struct Row {
    input: String,
    input_items: BTreeMap<String, Vec<String>>,
    gold: BTreeSet<(String, String)>,
}

fn text(v: &Value) -> String {
    v.as_str().map_or_else(|| v.to_string(), str::to_owned)
}

fn load(set: &str, stem: &str) -> (EntityIndex, Vec<Row>) {
    let corpus = corpus(set);
    let base: &Path = corpus.path();
    let schema_path = base.join(format!("{stem}_data_schema.json"));
    let schema: serde_json::Map<String, Value> =
        serde_json::from_str(&std::fs::read_to_string(&schema_path).expect("schema readable"))
            .expect("schema JSON");
    let mut entries = Vec::new();
    for (function, slots) in &schema {
        for (slot, values) in slots.as_object().expect("slots object") {
            for v in values.as_array().expect("values array") {
                entries.push(Entry::new(&format!("{function}/{slot}"), v.clone()));
            }
        }
    }
    let index = EntityIndex::build(entries).expect("index builds");
    let rows_path = base.join(format!("{stem}_data_augmented.json"));
    let rows = std::fs::read_to_string(&rows_path)
        .expect("augmented data readable")
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| {
            let r: Value = serde_json::from_str(l).expect("augmented row JSON");
            let input_items = r["input_items"]
                .as_object()
                .expect("input_items")
                .iter()
                .map(|(k, vs)| {
                    let mut vs: Vec<String> =
                        vs.as_array().expect("items").iter().map(text).collect();
                    vs.sort();
                    (k.clone(), vs)
                })
                .collect();
            let mut gold = BTreeSet::new();
            for call in r["output_items"].as_array().expect("output_items") {
                for slots in call.as_object().expect("call").values() {
                    for (slot, v) in slots.as_object().expect("call slots") {
                        gold.insert((slot.clone(), text(v)));
                    }
                }
            }
            Row {
                input: r["input"].as_str().expect("input").to_owned(),
                input_items,
                gold,
            }
        })
        .collect();
    (index, rows)
}

fn slot_of(site: &str) -> &str {
    site.rsplit('/').next().unwrap_or(site)
}

/// The (slot, value) pairs of an extraction (numbers and dates, which name no slot, left out).
fn pairs(ex: &Extraction) -> BTreeSet<(String, String)> {
    ex.mentions
        .iter()
        .filter(|m| !m.site.starts_with('#'))
        .map(|m| (slot_of(&m.site).to_owned(), text(&m.value)))
        .collect()
}

#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
struct Counts {
    tp: usize,
    fp: usize,
    fn_: usize,
}

impl Counts {
    fn add(&mut self, pred: &BTreeSet<(String, String)>, gold: &BTreeSet<(String, String)>) {
        self.tp += pred.intersection(gold).count();
        self.fp += pred.difference(gold).count();
        self.fn_ += gold.difference(pred).count();
    }
    fn precision(&self) -> f64 {
        self.tp as f64 / (self.tp + self.fp).max(1) as f64
    }
    fn recall(&self) -> f64 {
        self.tp as f64 / (self.tp + self.fn_).max(1) as f64
    }
    fn report(&self, what: &str) {
        let (p, r) = (self.precision(), self.recall());
        let f1 = if p + r > 0.0 {
            2.0 * p * r / (p + r)
        } else {
            0.0
        };
        eprintln!(
            "{what}: TP {} FP {} FN {}  P {p:.3} R {r:.3} F1 {f1:.3}",
            self.tp, self.fp, self.fn_
        );
    }
}

const SETS: [(&str, &str, Counts); 2] = [
    (
        "APIMixATIS",
        "atis",
        Counts {
            tp: 372,
            fp: 170,
            fn_: 0,
        },
    ),
    (
        "APIMixSNIPS",
        "snips",
        Counts {
            tp: 457,
            fp: 33,
            fn_: 0,
        },
    ),
];

/// The paper's `input_items` from a paper-mode extraction: per slot, each value found, as many
/// times as it was found at the last function (in schema order) that has it.
fn input_items(index: &EntityIndex, ex: &Extraction) -> BTreeMap<String, Vec<String>> {
    let order: BTreeMap<&str, usize> = index
        .sites()
        .iter()
        .enumerate()
        .map(|(i, s)| (s.as_str(), i))
        .collect();
    // slot -> value -> (site order, count)
    let mut found: BTreeMap<String, BTreeMap<String, (usize, usize)>> = BTreeMap::new();
    let mut per_site: BTreeMap<(usize, String), usize> = BTreeMap::new();
    for m in &ex.mentions {
        *per_site
            .entry((order[m.site.as_str()], text(&m.value)))
            .or_insert(0) += 1;
    }
    for ((site, value), count) in per_site {
        let slot = slot_of(&index.sites()[site]).to_owned();
        let e = found
            .entry(slot)
            .or_default()
            .entry(value)
            .or_insert((site, count));
        if site >= e.0 {
            *e = (site, count);
        }
    }
    found
        .into_iter()
        .map(|(slot, values)| {
            let mut vs: Vec<String> = values
                .into_iter()
                .flat_map(|(v, (_, n))| std::iter::repeat_n(v, n))
                .collect();
            vs.sort();
            (slot, vs)
        })
        .collect()
}

#[test]
fn paper_mode_reproduces_the_authors_extraction() {
    for (set, stem, want) in SETS {
        let (index, rows) = load(set, stem);
        let mut counts = Counts::default();
        for r in &rows {
            let ex = index.extract_with(&r.input, ExtractMode::Paper);
            assert_eq!(
                input_items(&index, &ex),
                r.input_items,
                "{set}: {}",
                r.input
            );
            counts.add(&pairs(&ex), &r.gold);
        }
        counts.report(&format!("{set} paper mode"));
        assert_eq!(counts, want, "{set}: the paper's Table 2 counts");
    }
}

#[test]
fn default_mode_recall_one_precision_at_least_the_papers() {
    for (set, stem, paper) in SETS {
        let (index, rows) = load(set, stem);
        let mut counts = Counts::default();
        let mut tiers: BTreeMap<String, usize> = BTreeMap::new();
        for r in &rows {
            let ex = index.extract(&r.input);
            for m in &ex.mentions {
                *tiers.entry(format!("{:?}", m.tier)).or_insert(0) += 1;
            }
            let p = pairs(&ex);
            if std::env::var_os("DEBUG_FP").is_some() {
                for m in &ex.mentions {
                    let pair = (slot_of(&m.site).to_owned(), text(&m.value));
                    if !m.site.starts_with('#') && !r.gold.contains(&pair) {
                        eprintln!("FP {:?} {:?} {:?} {:?}", m.tier, m.text, pair, r.input);
                    }
                }
            }
            for miss in r.gold.difference(&p) {
                eprintln!("{set}: missed {miss:?} in {:?}", r.input);
            }
            counts.add(&p, &r.gold);
        }
        counts.report(&format!("{set} default mode"));
        eprintln!("{set} default mode mentions by tier: {tiers:?}");
        assert_eq!(counts.fn_, 0, "{set}: recall 1.00");
        assert!(
            counts.precision() >= paper.precision(),
            "{set}: precision {:.3} < the paper's {:.3}",
            counts.precision(),
            paper.precision()
        );
    }
}

#[test]
fn typos_keep_recall() {
    let mut rng = dss_extract::perturb::Rng::new(0x2545_F491_4F6C_DD1D);
    for (set, stem, _) in SETS {
        let (index, rows) = load(set, stem);
        let mut counts = Counts::default();
        let mut changed = 0;
        for r in &rows {
            let values: Vec<&str> = r.gold.iter().map(|(_, v)| v.as_str()).collect();
            let typo = dss_extract::perturb::typos(&r.input, &values, &mut rng);
            changed += usize::from(typo != r.input);
            let p = pairs(&index.extract(&typo));
            for miss in r.gold.difference(&p) {
                eprintln!("{set} typos: missed {miss:?} in {typo:?}");
            }
            counts.add(&p, &r.gold);
        }
        counts.report(&format!("{set} default mode, one typo per mention of 5+ characters ({changed} requests changed)"));
        assert!(changed > rows.len() / 2, "{set}: typos were made");
        assert!(
            counts.recall() >= 0.95,
            "{set}: recall {:.3} with typos",
            counts.recall()
        );
    }
}
