//! The evaluation report: `dss eval --format json|table|csv`, and its percentiles.
//!
//! JSON shape (exactly):
//! `{"suite", "items", "model", "results": {COND: {"em", "em_paper", "valid", "p50_ms",
//! "p90_ms", "ttft_ms_p50", "sampled_tokens_p50", "forced_tokens_p50", "model_calls_p50",
//! "uncached_prompt_tokens_p50"}}, "ner": {"tp", "fp",
//! "fn", "precision", "recall", "reachable"}}`. `em` and `em_paper` are fractions 0–1,
//! `valid` a count of schema-valid outputs, `reachable` the fraction 0–1 of golds writable
//! under the pruned grammar. Conditions keep their insertion order.

use crate::score::NerCounts;
use serde::{Deserialize, Serialize};
use std::fmt::Write as _;

/// One condition's figures.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default)]
pub struct ConditionResult {
    /// Exact match (fraction of items).
    pub em: f64,
    /// Exact match under the paper's rule (fraction of items).
    pub em_paper: f64,
    /// Number of schema-valid outputs.
    pub valid: u64,
    /// Median end-to-end latency per item.
    pub p50_ms: f64,
    /// 90th-percentile end-to-end latency.
    pub p90_ms: f64,
    /// Median time to first token.
    pub ttft_ms_p50: f64,
    /// Median number of tokens the model chose.
    pub sampled_tokens_p50: f64,
    /// Median number of tokens the grammar forced.
    pub forced_tokens_p50: f64,
    /// Median number of model calls (`llama_decode`) per item, the prompt's included.
    #[serde(default)]
    pub model_calls_p50: f64,
    /// Median number of prompt tokens the model read (not in the reused KV cache).
    #[serde(default)]
    pub uncached_prompt_tokens_p50: f64,
}

impl ConditionResult {
    /// Its fields as `report.json` and the CSV name them, in order.
    pub const FIELDS: [&'static str; 10] = [
        "em",
        "em_paper",
        "valid",
        "p50_ms",
        "p90_ms",
        "ttft_ms_p50",
        "sampled_tokens_p50",
        "forced_tokens_p50",
        "model_calls_p50",
        "uncached_prompt_tokens_p50",
    ];
}

/// NER figures of a run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default)]
pub struct NerReport {
    /// True positives.
    pub tp: u64,
    /// False positives.
    pub fp: u64,
    /// False negatives.
    #[serde(rename = "fn")]
    pub fn_: u64,
    /// Micro precision.
    pub precision: f64,
    /// Micro recall.
    pub recall: f64,
    /// Fraction of golds writable under the pruned grammar.
    pub reachable: f64,
}

impl NerReport {
    /// Its fields as `report.json` names them, in order.
    pub const FIELDS: [&'static str; 6] = ["tp", "fp", "fn", "precision", "recall", "reachable"];

    /// From summed counts and the reachable fraction.
    pub fn from_counts(c: &NerCounts, reachable: f64) -> Self {
        NerReport {
            tp: c.tp,
            fp: c.fp,
            fn_: c.fn_,
            precision: c.precision(),
            recall: c.recall(),
            reachable,
        }
    }
}

/// The report of one `dss eval` run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Report {
    /// Suite name.
    pub suite: String,
    /// Number of evaluated items.
    pub items: u64,
    /// Model name.
    pub model: String,
    /// Per condition (`gp`, `prune`, `ner-cd`, `cd`, `free`, `json`), in run order;
    /// serialized as a JSON object keyed by condition.
    #[serde(with = "ordered_results")]
    pub results: Vec<(String, ConditionResult)>,
    /// NER figures.
    pub ner: NerReport,
}

impl Report {
    /// An empty report.
    pub fn new(suite: &str, items: u64, model: &str) -> Self {
        Report {
            suite: suite.into(),
            items,
            model: model.into(),
            results: Default::default(),
            ner: Default::default(),
        }
    }

    /// Adds (or replaces, keeping its place) a condition's result.
    pub fn set(&mut self, condition: &str, r: &ConditionResult) {
        match self.results.iter_mut().find(|(c, _)| c == condition) {
            Some(slot) => slot.1 = r.clone(),
            None => self.results.push((condition.to_string(), r.clone())),
        }
    }

    /// `--format json`.
    pub fn to_json(&self) -> Result<String, serde_json::Error> {
        serde_json::to_string_pretty(self)
    }

    /// `--format csv`: one row per condition.
    pub fn to_csv(&self) -> String {
        let mut s = format!(
            "suite,items,model,condition,{}\n",
            ConditionResult::FIELDS.join(",")
        );
        for (c, r) in &self.results {
            let _ = writeln!(
                s,
                "{},{},{},{},{:.4},{:.4},{},{:.1},{:.1},{:.1},{},{},{},{}",
                csv_field(&self.suite),
                self.items,
                csv_field(&self.model),
                csv_field(c),
                r.em,
                r.em_paper,
                r.valid,
                r.p50_ms,
                r.p90_ms,
                r.ttft_ms_p50,
                r.sampled_tokens_p50,
                r.forced_tokens_p50,
                r.model_calls_p50,
                r.uncached_prompt_tokens_p50
            );
        }
        s
    }

    /// `--format table`: an aligned text table and the NER line.
    pub fn to_table(&self) -> String {
        let head = [
            "condition",
            "em",
            "em_paper",
            "valid",
            "p50 ms",
            "p90 ms",
            "ttft p50",
            "sampled p50",
            "forced p50",
            "calls p50",
            "uncached p50",
        ];
        let mut rows: Vec<Vec<String>> = vec![head.iter().map(|s| s.to_string()).collect()];
        for (c, r) in &self.results {
            rows.push(vec![
                c.clone(),
                format!("{:.3}", r.em),
                format!("{:.3}", r.em_paper),
                format!("{}/{}", r.valid, self.items),
                format!("{:.0}", r.p50_ms),
                format!("{:.0}", r.p90_ms),
                format!("{:.0}", r.ttft_ms_p50),
                format!("{}", r.sampled_tokens_p50),
                format!("{}", r.forced_tokens_p50),
                format!("{}", r.model_calls_p50),
                format!("{}", r.uncached_prompt_tokens_p50),
            ]);
        }
        let widths: Vec<usize> = (0..head.len())
            .map(|i| rows.iter().map(|r| r[i].chars().count()).max().unwrap_or(0))
            .collect();
        let mut s = format!(
            "suite {} · {} items · model {}\n",
            self.suite, self.items, self.model
        );
        for row in &rows {
            let line: Vec<String> = row
                .iter()
                .enumerate()
                .map(|(i, c)| {
                    if i == 0 {
                        format!("{c:<w$}", w = widths[i])
                    } else {
                        format!("{c:>w$}", w = widths[i])
                    }
                })
                .collect();
            let _ = writeln!(s, "{}", line.join("  ").trim_end());
        }
        let n = &self.ner;
        let counts = NerCounts {
            tp: n.tp,
            fp: n.fp,
            fn_: n.fn_,
        };
        let _ = writeln!(
            s,
            "NER: P {:.3} R {:.3} F1 {:.3} (tp {} fp {} fn {}) · gold reachable {:.3}",
            n.precision,
            n.recall,
            counts.f1(),
            n.tp,
            n.fp,
            n.fn_,
            n.reachable
        );
        s
    }
}

/// `results` as a JSON object in run order.
mod ordered_results {
    use super::ConditionResult;
    use serde::ser::SerializeMap;
    use serde::{Deserialize, Deserializer, Serializer};

    pub(super) fn serialize<S: Serializer>(
        v: &[(String, ConditionResult)],
        s: S,
    ) -> Result<S::Ok, S::Error> {
        let mut m = s.serialize_map(Some(v.len()))?;
        for (k, r) in v {
            m.serialize_entry(k, r)?;
        }
        m.end()
    }

    pub(super) fn deserialize<'de, D: Deserializer<'de>>(
        d: D,
    ) -> Result<Vec<(String, ConditionResult)>, D::Error> {
        let m = serde_json::Map::<String, serde_json::Value>::deserialize(d)?;
        m.into_iter()
            .map(|(k, v)| {
                serde_json::from_value(v)
                    .map(|r| (k, r))
                    .map_err(serde::de::Error::custom)
            })
            .collect()
    }
}

fn csv_field(s: &str) -> String {
    if s.contains([',', '"', '\n']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_string()
    }
}

/// The `q`-th percentile (0–100) by linear interpolation between closest ranks (numpy's
/// default); `None` for no values. NaNs are ignored.
pub fn percentile(values: &[f64], q: f64) -> Option<f64> {
    let mut v: Vec<f64> = values.iter().copied().filter(|x| !x.is_nan()).collect();
    if v.is_empty() {
        return None;
    }
    v.sort_by(f64::total_cmp);
    let rank = (q.clamp(0.0, 100.0) / 100.0) * (v.len() - 1) as f64;
    let (lo, hi) = (rank.floor() as usize, rank.ceil() as usize);
    Some(v[lo] + (v[hi] - v[lo]) * (rank - lo as f64))
}

/// The median (50th percentile).
pub fn median(values: &[f64]) -> Option<f64> {
    percentile(values, 50.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn report() -> Report {
        let mut r = Report::new("burger", 161, "qwen");
        r.set(
            "gp",
            &ConditionResult {
                em: 0.9,
                em_paper: 0.91,
                valid: 161,
                p50_ms: 500.0,
                p90_ms: 800.0,
                ttft_ms_p50: 100.0,
                sampled_tokens_p50: 5.0,
                forced_tokens_p50: 20.0,
                model_calls_p50: 6.0,
                uncached_prompt_tokens_p50: 40.0,
            },
        );
        r.set(
            "json",
            &ConditionResult {
                em: 0.5,
                ..Default::default()
            },
        );
        r.ner = NerReport::from_counts(
            &NerCounts {
                tp: 8,
                fp: 2,
                fn_: 2,
            },
            0.95,
        );
        r
    }

    #[test]
    fn json_has_exactly_the_report_shape() {
        let v: serde_json::Value = serde_json::from_str(&report().to_json().unwrap()).unwrap();
        let keys =
            |v: &serde_json::Value| v.as_object().unwrap().keys().cloned().collect::<Vec<_>>();
        assert_eq!(keys(&v), ["suite", "items", "model", "results", "ner"]);
        assert_eq!(keys(&v["results"]), ["gp", "json"]);
        assert_eq!(keys(&v["results"]["gp"]), ConditionResult::FIELDS);
        assert_eq!(keys(&v["ner"]), NerReport::FIELDS);
        assert_eq!(v["ner"]["precision"], 0.8);
        let back: Report = serde_json::from_value(v).unwrap();
        assert_eq!(back, report());
        // Setting a condition again replaces it in its place.
        let mut r = report();
        r.set(
            "gp",
            &ConditionResult {
                em: 0.1,
                ..Default::default()
            },
        );
        assert_eq!(
            r.results
                .iter()
                .map(|(c, _)| c.as_str())
                .collect::<Vec<_>>(),
            ["gp", "json"]
        );
        assert_eq!(r.results[0].1.em, 0.1);
    }

    #[test]
    fn csv_and_table() {
        let csv = report().to_csv();
        let lines: Vec<&str> = csv.lines().collect();
        assert_eq!(lines.len(), 3);
        assert_eq!(
            lines[0],
            "suite,items,model,condition,em,em_paper,valid,p50_ms,p90_ms,ttft_ms_p50,sampled_tokens_p50,forced_tokens_p50,model_calls_p50,uncached_prompt_tokens_p50"
        );
        assert_eq!(
            lines[1],
            "burger,161,qwen,gp,0.9000,0.9100,161,500.0,800.0,100.0,5,20,6,40"
        );
        let t = report().to_table();
        assert!(t.contains("gp"), "{t}");
        assert!(t.contains("161/161"), "{t}");
        assert!(t.contains("F1 0.800"), "{t}");
    }

    #[test]
    fn percentiles() {
        assert_eq!(percentile(&[], 50.0), None);
        assert_eq!(median(&[3.0, 1.0, 2.0]), Some(2.0));
        assert_eq!(median(&[1.0, 2.0, 3.0, 4.0]), Some(2.5));
        assert_eq!(
            percentile(
                &[1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0, 10.0, 11.0],
                90.0
            ),
            Some(10.0)
        );
        assert_eq!(percentile(&[7.0], 90.0), Some(7.0));
        assert_eq!(percentile(&[1.0, f64::NAN, 3.0], 100.0), Some(3.0));
    }
}
