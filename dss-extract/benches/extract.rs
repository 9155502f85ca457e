//! Index build over a generated catalog of 100,000 values and extraction per request
//! (targets: build ≤ 1 s, extraction ≤ 1 ms per request, release build).
//!
//! `cargo bench -p dss-extract --bench extract`

// `criterion_group!` generates an undocumented public function.
#![allow(missing_docs)]

use criterion::{criterion_group, criterion_main, BatchSize, Criterion};
use dss_extract::{EntityIndex, Entry};
use serde_json::json;
use std::hint::black_box;

/// A deterministic xorshift generator.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
}

/// Pseudo-words from syllables: a vocabulary shared by the catalog and the requests.
fn vocabulary(rng: &mut Rng, n: usize) -> Vec<String> {
    const ONSETS: [&str; 18] = [
        "b", "c", "d", "f", "g", "h", "k", "l", "m", "n", "p", "r", "s", "t", "v", "br", "st", "tr",
    ];
    const VOWELS: [&str; 7] = ["a", "e", "i", "o", "u", "ai", "ou"];
    const CODAS: [&str; 6] = ["", "n", "r", "s", "l", "x"];
    (0..n)
        .map(|_| {
            let syl = 1 + rng.below(3);
            (0..syl)
                .map(|_| {
                    format!(
                        "{}{}{}",
                        ONSETS[rng.below(ONSETS.len())],
                        VOWELS[rng.below(VOWELS.len())],
                        CODAS[rng.below(CODAS.len())]
                    )
                })
                .collect::<String>()
        })
        .collect()
}

/// 100,000 catalog values of 1–3 words (product-like names, some with a number), over 3 sites.
fn catalog(rng: &mut Rng, vocab: &[String]) -> Vec<Entry> {
    let sites = ["/fields/*/fieldName", "/filters/*/values/*", "/products/*"];
    let mut out = Vec::with_capacity(100_000);
    let mut seen = std::collections::HashSet::new();
    while out.len() < 100_000 {
        let words = 1 + rng.below(3);
        let mut v: Vec<String> = (0..words)
            .map(|_| vocab[rng.below(vocab.len())].clone())
            .collect();
        if rng.below(4) == 0 {
            v.push(format!("{}", rng.below(1000)));
        }
        let v = v.join(" ");
        if seen.insert(v.clone()) {
            out.push(Entry::new(sites[out.len() % 3], json!(v)));
        }
    }
    out
}

/// Requests of ~20 words: filler, two or three catalog values (one with a typo), a number, a date.
fn requests(rng: &mut Rng, vocab: &[String], entries: &[Entry]) -> Vec<String> {
    const FILLER: [&str; 12] = [
        "show", "me", "the", "total", "for", "and", "by", "per", "please", "compare", "with", "of",
    ];
    (0..100)
        .map(|_| {
            let mut words: Vec<String> = Vec::new();
            for k in 0..3 {
                for _ in 0..4 {
                    words.push(FILLER[rng.below(FILLER.len())].to_owned());
                }
                words.push(vocab[rng.below(vocab.len())].clone());
                let mut v = entries[rng.below(entries.len())]
                    .value
                    .as_str()
                    .unwrap_or("")
                    .to_owned();
                if k == 2 && v.len() > 5 {
                    v.insert(3, 'q');
                }
                words.push(v);
            }
            words.push("over the last 2 years since march 3".to_owned());
            words.join(" ")
        })
        .collect()
}

fn bench(c: &mut Criterion) {
    let mut rng = Rng(0x9E37_79B9_7F4A_7C15);
    let vocab = vocabulary(&mut rng, 20_000);
    let entries = catalog(&mut rng, &vocab);
    let reqs = requests(&mut rng, &vocab, &entries);
    let mut g = c.benchmark_group("extract");
    g.sample_size(10);
    g.bench_function("build_100k", |b| {
        b.iter_batched(
            || entries.clone(),
            |e| EntityIndex::build(black_box(e)).expect("builds"),
            BatchSize::LargeInput,
        );
    });
    let index = EntityIndex::build(entries.clone()).expect("builds");
    g.sample_size(30);
    let mut i = 0;
    g.bench_function("extract_per_request_100k", |b| {
        b.iter(|| {
            i = (i + 1) % reqs.len();
            black_box(index.extract(&reqs[i]))
        });
    });
    g.bench_function("nearest3_per_request_100k", |b| {
        b.iter(|| {
            i = (i + 1) % reqs.len();
            let ex = index.extract(&reqs[i]);
            black_box(index.nearest(&reqs[i], &ex, 3))
        });
    });
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
