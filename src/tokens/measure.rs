//! Writing each document in every format and counting its tokens, over all cores.

use super::corpus::{Doc, Failure};
use super::tokenizer::Tokenizer;
use indicatif::ProgressBar;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;

/// The formats compared, in report order.
pub(super) const FORMATS: [&str; 5] = ["pretty", "compact", "yaml", "toon", "dss"];
/// Their names in the terminal table.
pub(super) const FORMAT_TITLES: [&str; 5] = ["pretty JSON", "compact JSON", "YAML", "TOON", "dss"];
pub(super) const COMPACT: usize = 1;
pub(super) const DSS: usize = 4;

/// Token counts of one document in each format, for one tokenizer.
pub(super) type Counts = [usize; FORMATS.len()];

/// One measured document.
pub(super) struct Measured {
    pub name: String,
    pub group: String,
    /// One entry per tokenizer, in `--tokenizer` order.
    pub counts: Vec<Counts>,
}

/// The same value as pretty JSON (2-space indent), compact JSON, YAML, TOON and dss.
pub(super) fn encode(doc: &Doc) -> Result<[String; FORMATS.len()], String> {
    let dss = crate::compress_value(&doc.spec, &doc.value)
        .map_err(|e| format!("cannot compress: {e}"))?;
    let pretty = serde_json::to_string_pretty(&doc.value).map_err(|e| format!("JSON: {e}"))?;
    let compact = serde_json::to_string(&doc.value).map_err(|e| format!("JSON: {e}"))?;
    let yaml = serde_norway::to_string(&doc.value).map_err(|e| format!("YAML: {e}"))?;
    let toon = toon_format::encode_default(&doc.value).map_err(|e| format!("TOON: {e}"))?;
    Ok([pretty, compact, yaml, toon, dss])
}

/// Encode `doc` and count each text with each tokenizer.
pub(super) fn measure(doc: &Doc, tokenizers: &[Tokenizer]) -> Result<Measured, Failure> {
    let fail = |message: String| Failure {
        name: doc.name.clone(),
        message,
    };
    let texts = encode(doc).map_err(fail)?;
    let mut counts = Vec::with_capacity(tokenizers.len());
    for t in tokenizers {
        let mut c: Counts = [0; FORMATS.len()];
        for (n, text) in c.iter_mut().zip(&texts) {
            *n = t.count(text).map_err(|e| fail(format!("{e:#}")))?;
        }
        counts.push(c);
    }
    Ok(Measured {
        name: doc.name.clone(),
        group: doc.group.clone(),
        counts,
    })
}

/// `f` over `items` on `jobs` threads (scoped), results in input order; `progress` advances
/// by one per item.
pub(super) fn parallel_map<T, R, F>(
    items: &[T],
    jobs: usize,
    progress: &ProgressBar,
    f: F,
) -> Vec<R>
where
    T: Sync,
    R: Send,
    F: Fn(&T) -> R + Sync,
{
    let next = AtomicUsize::new(0);
    let done: Mutex<Vec<(usize, R)>> = Mutex::new(Vec::with_capacity(items.len()));
    let jobs = jobs.clamp(1, items.len().max(1));
    std::thread::scope(|scope| {
        for _ in 0..jobs {
            scope.spawn(|| {
                let mut mine = Vec::new();
                loop {
                    let i = next.fetch_add(1, Ordering::Relaxed);
                    let Some(item) = items.get(i) else { break };
                    mine.push((i, f(item)));
                    progress.inc(1);
                }
                // A poisoned lock means another worker panicked; the scope re-raises that.
                if let Ok(mut all) = done.lock() {
                    all.extend(mine);
                }
            });
        }
    });
    let mut all = done.into_inner().unwrap_or_else(|e| e.into_inner());
    all.sort_unstable_by_key(|(i, _)| *i);
    all.into_iter().map(|(_, r)| r).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parallel_map_keeps_order() {
        let items: Vec<usize> = (0..1000).collect();
        let pb = ProgressBar::hidden();
        for jobs in [1, 2, 7] {
            let out = parallel_map(&items, jobs, &pb, |x| x * 2);
            assert_eq!(out, items.iter().map(|x| x * 2).collect::<Vec<_>>());
        }
        assert!(parallel_map(&[] as &[usize], 4, &pb, |x| *x).is_empty());
    }
}
