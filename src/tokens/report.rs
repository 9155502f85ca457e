//! Statistics over the measured documents, and the reports: terminal table, JSON, CSV.

use super::measure::{Counts, Measured, COMPACT, DSS, FORMATS, FORMAT_TITLES};
use anyhow::Result;
use serde_json::{json, Map, Value};
use std::collections::BTreeMap;
use std::fmt::Write as _;

/// Counts that are the same for every tokenizer.
pub(super) struct RunInfo {
    pub failed: usize,
    pub skipped: usize,
    /// Schema test corpora only: tests marked invalid (not measured).
    pub invalid_tests: Option<usize>,
    /// What the subtotals are: "folder" or "source".
    pub group_kind: &'static str,
}

/// A document's dss/compact ratio.
pub(super) struct Ratio {
    pub name: String,
    pub ratio: f64,
    pub dss: usize,
    pub compact: usize,
}

pub(super) struct Group {
    pub group: String,
    pub documents: usize,
    pub totals: Counts,
    pub median_ratio: Option<f64>,
}

/// Everything reported for one tokenizer.
pub(super) struct Summary {
    pub tokenizer: String,
    pub documents: usize,
    pub totals: Counts,
    /// Every document's dss/compact ratio, sorted from the worst (highest) down.
    pub ratios: Vec<Ratio>,
    pub median_ratio: Option<f64>,
    pub groups: Vec<Group>,
}

fn ratio(dss: usize, compact: usize) -> f64 {
    dss as f64 / compact.max(1) as f64
}

/// The median of an ascending slice (the mean of the two middle values if even).
pub(super) fn median(sorted: &[f64]) -> Option<f64> {
    let n = sorted.len();
    match n {
        0 => None,
        _ if n % 2 == 1 => Some(sorted[n / 2]),
        _ => Some((sorted[n / 2 - 1] + sorted[n / 2]) / 2.0),
    }
}

fn add(total: &mut Counts, c: &Counts) {
    for (t, n) in total.iter_mut().zip(c) {
        *t += n;
    }
}

impl Summary {
    /// The summary for tokenizer number `t` (its index in `Measured::counts`).
    pub(super) fn new(tokenizer: &str, t: usize, docs: &[Measured]) -> Self {
        let mut totals: Counts = [0; FORMATS.len()];
        let mut ratios = Vec::with_capacity(docs.len());
        let mut groups: BTreeMap<&str, (usize, Counts, Vec<f64>)> = BTreeMap::new();
        for d in docs {
            let c = &d.counts[t];
            add(&mut totals, c);
            let r = ratio(c[DSS], c[COMPACT]);
            ratios.push(Ratio {
                name: d.name.clone(),
                ratio: r,
                dss: c[DSS],
                compact: c[COMPACT],
            });
            let g = groups
                .entry(&d.group)
                .or_insert_with(|| (0, [0; FORMATS.len()], Vec::new()));
            g.0 += 1;
            add(&mut g.1, c);
            g.2.push(r);
        }
        ratios.sort_by(|a, b| b.ratio.total_cmp(&a.ratio).then(a.name.cmp(&b.name)));
        let ascending: Vec<f64> = ratios.iter().rev().map(|r| r.ratio).collect();
        let groups = groups
            .into_iter()
            .map(|(group, (documents, totals, mut rs))| {
                rs.sort_by(f64::total_cmp);
                Group {
                    group: group.to_string(),
                    documents,
                    totals,
                    median_ratio: median(&rs),
                }
            })
            .collect();
        Summary {
            tokenizer: tokenizer.to_string(),
            documents: docs.len(),
            totals,
            median_ratio: median(&ascending),
            ratios,
            groups,
        }
    }

    /// Total tokens of each format over compact JSON's.
    fn ratio_to_compact(&self, f: usize) -> f64 {
        ratio(self.totals[f], self.totals[COMPACT])
    }
}

fn round4(x: f64) -> f64 {
    (x * 1e4).round() / 1e4
}

fn totals_json(c: &Counts) -> Value {
    let mut m = Map::new();
    for (name, n) in FORMATS.iter().zip(c) {
        m.insert((*name).to_string(), json!(n));
    }
    Value::Object(m)
}

fn opt_ratio(x: Option<f64>) -> Value {
    x.map_or(Value::Null, |x| json!(round4(x)))
}

/// The `--format json` object of one tokenizer.
pub(super) fn to_json(s: &Summary, info: &RunInfo, top: usize) -> Value {
    let mut ratios = Map::new();
    for (f, name) in FORMATS.iter().enumerate() {
        ratios.insert((*name).to_string(), json!(round4(s.ratio_to_compact(f))));
    }
    let worst = s.ratios.first();
    let mut out = json!({
        "tokenizer": s.tokenizer,
        "documents": s.documents,
        "failed": info.failed,
        "skipped": info.skipped,
        "totals": totals_json(&s.totals),
        "ratio_to_compact": ratios,
        "median_ratio": opt_ratio(s.median_ratio),
        "worst_ratio": opt_ratio(worst.map(|w| w.ratio)),
        "worst_document": worst.map(|w| w.name.clone()),
        "worst": s.ratios.iter().take(top).map(|w| json!({
            "document": w.name,
            "ratio": round4(w.ratio),
            "dss": w.dss,
            "compact": w.compact,
        })).collect::<Vec<_>>(),
        "group_by": info.group_kind,
        "groups": s.groups.iter().map(|g| json!({
            "group": g.group,
            "documents": g.documents,
            "totals": totals_json(&g.totals),
            "ratio": round4(ratio(g.totals[DSS], g.totals[COMPACT])),
            "median_ratio": opt_ratio(g.median_ratio),
        })).collect::<Vec<_>>(),
    });
    if let (Some(n), Some(obj)) = (info.invalid_tests, out.as_object_mut()) {
        obj.insert("invalid_tests".to_string(), json!(n));
    }
    out
}

/// One object for one tokenizer, an array for several.
pub(super) fn one_or_array(mut items: Vec<Value>) -> Value {
    if items.len() == 1 {
        items.remove(0)
    } else {
        Value::Array(items)
    }
}

/// The terminal report of one tokenizer.
pub(super) fn to_table(s: &Summary, info: &RunInfo, top: usize) -> String {
    let mut o = String::new();
    let mut head = format!(
        "{}: {} documents ({} failed, {} skipped",
        s.tokenizer, s.documents, info.failed, info.skipped
    );
    if let Some(n) = info.invalid_tests {
        let _ = write!(head, ", {n} invalid tests not measured");
    }
    let _ = writeln!(o, "{head})");
    let _ = writeln!(
        o,
        "  {:<14} {:>10} {:>11}",
        "format", "tokens", "vs compact"
    );
    for (f, title) in FORMAT_TITLES.iter().enumerate() {
        let _ = writeln!(
            o,
            "  {title:<14} {:>10} {:>11.3}",
            s.totals[f],
            s.ratio_to_compact(f)
        );
    }
    let (Some(median), Some(worst)) = (s.median_ratio, s.ratios.first()) else {
        return o;
    };
    let _ = writeln!(
        o,
        "  dss/compact per document: median {median:.3}, worst {:.3} ({})",
        worst.ratio, worst.name
    );
    if top > 0 {
        let _ = writeln!(o, "  worst {} by dss/compact:", top.min(s.ratios.len()));
        for w in s.ratios.iter().take(top) {
            let _ = writeln!(
                o,
                "    {:.3}  {:>6} / {:<6} {}",
                w.ratio, w.dss, w.compact, w.name
            );
        }
    }
    if s.groups.len() > 1 {
        let width = s
            .groups
            .iter()
            .map(|g| g.group.chars().count())
            .max()
            .unwrap_or(0)
            .max(info.group_kind.len());
        let _ = write!(o, "  per {:<width$} {:>6}", info.group_kind, "docs");
        for f in FORMATS {
            let _ = write!(o, " {f:>9}");
        }
        let _ = writeln!(o, " {:>11} {:>7}", "dss/compact", "median");
        for g in &s.groups {
            let _ = write!(o, "      {:<width$} {:>6}", g.group, g.documents);
            for n in g.totals {
                let _ = write!(o, " {n:>9}");
            }
            let _ = writeln!(
                o,
                " {:>11.3} {:>7.3}",
                ratio(g.totals[DSS], g.totals[COMPACT]),
                g.median_ratio.unwrap_or(f64::NAN)
            );
        }
    }
    o
}

/// `--format csv`: one row per document and tokenizer.
pub(super) fn write_csv(
    out: impl std::io::Write,
    docs: &[Measured],
    tokenizers: &[String],
) -> Result<()> {
    let mut w = csv::Writer::from_writer(out);
    let mut header = vec!["path", "tokenizer"];
    header.extend(FORMATS);
    w.write_record(&header)?;
    for d in docs {
        for (t, name) in tokenizers.iter().enumerate() {
            let mut row = vec![d.name.clone(), name.clone()];
            row.extend(d.counts[t].iter().map(|n| n.to_string()));
            w.write_record(&row)?;
        }
    }
    w.flush()?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn doc(name: &str, group: &str, compact: usize, dss: usize) -> Measured {
        Measured {
            name: name.into(),
            group: group.into(),
            counts: vec![[compact * 2, compact, compact, compact, dss]],
        }
    }

    #[test]
    fn median_and_worst() {
        assert_eq!(median(&[]), None);
        assert_eq!(median(&[1.0, 2.0, 4.0]), Some(2.0));
        assert_eq!(median(&[1.0, 2.0, 4.0, 5.0]), Some(3.0));
        let docs = [
            doc("a", "x", 10, 5),
            doc("b", "x", 10, 9),
            doc("c", "y", 4, 1),
        ];
        let s = Summary::new("o200k", 0, &docs);
        assert_eq!(s.totals, [48, 24, 24, 24, 15]);
        assert_eq!(s.ratios[0].name, "b");
        assert_eq!(s.median_ratio, Some(0.5));
        assert_eq!(s.groups.len(), 2);
        assert_eq!(s.groups[0].median_ratio, Some(0.7));
        let info = RunInfo {
            failed: 1,
            skipped: 0,
            invalid_tests: None,
            group_kind: "folder",
        };
        let j = to_json(&s, &info, 2);
        assert_eq!(j["worst_document"], "b");
        assert_eq!(j["worst"].as_array().map(Vec::len), Some(2));
        assert_eq!(j["totals"]["dss"], 15);
        let table = to_table(&s, &info, 2);
        assert!(table.contains("per folder"), "{table}");
    }
}
