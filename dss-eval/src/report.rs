//! The evaluation report: `dss eval --format json|table|csv`, and its percentiles.
//!
//! JSON shape (exactly):
//! `{"suite", "items", "model", "results": {COND: {"em", "em_paper", "valid", "p50_ms",
//! "p90_ms", "ttft_ms_p50", "sampled_tokens_p50", "forced_tokens_p50", "model_calls_p50",
//! "uncached_prompt_tokens_p50"}}, "ner": {"tp", "fp",
//! "fn", "precision", "recall", "reachable"}, "run": {"suite", "catalog_mode", "perturb",
//! "suite_cases", "build", "machine", "threads", "date", "seconds"}}`. `em` and `em_paper`
//! are fractions 0–1, `valid` a count of schema-valid outputs, `reachable` the fraction 0–1
//! of golds writable under the pruned grammar. Conditions keep their insertion order.
//! `run` ([`RunInfo`]) says how and where the figures were made; a report without it
//! (written before it existed, or built in code) still reads.
//!
//! [`side_by_side`] puts reports of several suites and catalog modes into one Markdown
//! table (`dss eval table`).

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
    /// How and where the run was made.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub run: Option<RunInfo>,
}

/// How and where a report's figures were made: what [`side_by_side`] prints beside them.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default)]
pub struct RunInfo {
    /// The suite's own name (the report's `suite` adds the setting to it).
    pub suite: String,
    /// `closed`, `loo` or `open`.
    pub catalog_mode: String,
    /// `typo:SEED` where requests were perturbed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub perturb: Option<String>,
    /// Cases in the whole suite (the report's `items` were run: fewer where a subset was
    /// chosen).
    pub suite_cases: u64,
    /// The dss build: version and the commit it was built from.
    pub build: String,
    /// The machine: CPU model and logical cores.
    pub machine: String,
    /// Threads the model ran on.
    pub threads: u32,
    /// When the run ended (UTC, RFC 3339).
    pub date: String,
    /// Wall-clock seconds of the whole run.
    pub seconds: f64,
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
            run: None,
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

/// The catalog modes [`side_by_side`] puts in columns, in order.
const MODES: [&str; 3] = ["closed", "loo", "open"];

/// Reports of several suites and catalog modes as one Markdown table: a row per suite,
/// setting and condition, a column per catalog mode (exact match and the suite's own rule,
/// valid outputs, cases run), then a list of where each figure comes from (file, build, machine, date, time).
/// Each report comes with a label (its path). A report without [`RunInfo`] is placed by
/// its suite name and listed with its provenance unknown.
pub fn side_by_side(reports: &[(String, Report)]) -> String {
    // Rows keyed by (suite, perturb, condition), in the order first seen.
    let mut rows: Vec<(String, String, [Option<String>; 3])> = Vec::new();
    let mut sources = String::new();
    for (n, (label, r)) in reports.iter().enumerate() {
        let (suite, mode) = match &r.run {
            Some(run) => {
                let suite = match &run.perturb {
                    Some(p) => format!("{} ({p})", run.suite),
                    None => run.suite.clone(),
                };
                (suite, run.catalog_mode.clone())
            }
            None => split_setting(&r.suite),
        };
        let col = MODES.iter().position(|m| *m == mode);
        let mark = n + 1;
        let whole = r.run.as_ref().map(|run| run.suite_cases);
        for (cond, c) in &r.results {
            let mut cell = format!(
                "**{:.3}** / {:.3} ({}/{} valid",
                c.em, c.em_paper, c.valid, r.items
            );
            if let Some(whole) = whole.filter(|&w| w != r.items) {
                let _ = write!(cell, "; {} of {whole} cases", r.items);
            }
            let _ = write!(cell, ") [{mark}]");
            let key = (suite.clone(), cond.clone());
            let row = match rows.iter().position(|(s, c, _)| (s, c) == (&key.0, &key.1)) {
                Some(i) => i,
                None => {
                    rows.push((key.0, key.1, Default::default()));
                    rows.len() - 1
                }
            };
            match col {
                Some(i) => rows[row].2[i] = Some(cell),
                // A mode this table has no column for: beside the closed figure.
                None => rows[row].2[0] = Some(format!("{cell} ({mode})")),
            }
        }
        let _ = match &r.run {
            Some(run) => writeln!(
                sources,
                "{mark}. `{label}`: {}, model {}, {} ({} threads), {}, {:.0} s",
                run.build, r.model, run.machine, run.threads, run.date, run.seconds
            ),
            None => writeln!(
                sources,
                "{mark}. `{label}`: model {}; build, machine and date not recorded",
                r.model
            ),
        };
    }
    let mut s =
        String::from("| suite | condition | closed | `loo` | `open` |\n|---|---|---|---|---|\n");
    for (suite, cond, cells) in &rows {
        let cells: Vec<&str> = cells
            .iter()
            .map(|c| c.as_deref().unwrap_or("not run"))
            .collect();
        let _ = writeln!(s, "| {suite} | {cond} | {} |", cells.join(" | "));
    }
    s.push_str(
        "\nEach cell: exact match / the suite's own rule (`em_paper`: the paper's for \
         FoodOrdering and APIMix, BFCL's AST checker for BFCL), schema-valid outputs, the \
         cases run where fewer than the suite's, and where the figure comes from:\n\n",
    );
    s.push_str(&sources);
    s
}

/// A report's suite name split into the suite and its catalog mode (`snips (loo)` →
/// `snips`, `loo`), for reports without [`RunInfo`].
fn split_setting(name: &str) -> (String, String) {
    if let Some((base, setting)) = name.rsplit_once(" (") {
        let setting = setting.trim_end_matches(')');
        for mode in MODES {
            if setting.split(", ").any(|p| p == mode) {
                let rest: Vec<&str> = setting.split(", ").filter(|p| *p != mode).collect();
                let suite = if rest.is_empty() {
                    base.to_string()
                } else {
                    format!("{base} ({})", rest.join(", "))
                };
                return (suite, mode.to_string());
            }
        }
    }
    (name.to_string(), "closed".to_string())
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

    fn with_run(mut r: Report, mode: &str, items: u64, whole: u64) -> Report {
        r.items = items;
        r.run = Some(RunInfo {
            suite: "burger".into(),
            catalog_mode: mode.into(),
            perturb: None,
            suite_cases: whole,
            build: "dss 0.1.0 (abc1234)".into(),
            machine: "Some CPU, 2 cores".into(),
            threads: 2,
            date: "2026-01-02T03:04:05Z".into(),
            seconds: 61.0,
        });
        r
    }

    #[test]
    fn the_run_is_saved_with_the_report() {
        let r = with_run(report(), "loo", 161, 161);
        let v: serde_json::Value = serde_json::from_str(&r.to_json().unwrap()).unwrap();
        let keys =
            |v: &serde_json::Value| v.as_object().unwrap().keys().cloned().collect::<Vec<_>>();
        assert_eq!(
            keys(&v),
            ["suite", "items", "model", "results", "ner", "run"]
        );
        assert_eq!(
            keys(&v["run"]),
            [
                "suite",
                "catalog_mode",
                "suite_cases",
                "build",
                "machine",
                "threads",
                "date",
                "seconds"
            ]
        );
        let back: Report = serde_json::from_value(v).unwrap();
        assert_eq!(back, r);
    }

    #[test]
    fn reports_of_each_catalog_mode_stand_side_by_side() {
        let mut open = with_run(report(), "open", 20, 161);
        open.results.truncate(1);
        open.set(
            "gp",
            &ConditionResult {
                em: 0.25,
                valid: 20,
                ..Default::default()
            },
        );
        let mut old = report();
        old.suite = "snips (loo, typo:1)".into();
        let table = side_by_side(&[
            ("out/burger".into(), with_run(report(), "closed", 161, 161)),
            ("out/burger-open".into(), open),
            ("old/snips".into(), old),
        ]);
        let lines: Vec<&str> = table.lines().collect();
        assert_eq!(lines[0], "| suite | condition | closed | `loo` | `open` |");
        assert_eq!(
            lines[2],
            "| burger | gp | **0.900** / 0.910 (161/161 valid) [1] | not run | **0.250** / 0.000 (20/20 valid; 20 of 161 cases) [2] |"
        );
        assert_eq!(
            lines[3],
            "| burger | json | **0.500** / 0.000 (0/161 valid) [1] | not run | not run |"
        );
        assert_eq!(
            lines[4],
            "| snips (typo:1) | gp | not run | **0.900** / 0.910 (161/161 valid) [3] | not run |"
        );
        assert!(table.contains(
            "1. `out/burger`: dss 0.1.0 (abc1234), model qwen, Some CPU, 2 cores (2 threads), 2026-01-02T03:04:05Z, 61 s"
        ));
        assert!(table.contains("3. `old/snips`: model qwen; build, machine and date not recorded"));
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
