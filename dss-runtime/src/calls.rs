//! What a model call costs on this machine, measured with llama.cpp's own timings.
//!
//! A request's time is its uncached prompt tokens (read in one call) plus one call per
//! sampled token (which also reads the forced text after it). [`LocalModel::call_costs`]
//! measures what a call of `k` tokens costs on top of a cached context, for several `k`,
//! the way the decoding loop makes its calls (one sequence, logits for the last token).
//! Decoding calls read a few tokens (a sampled token and the forced text after it): their
//! cost is fitted as `per_call + k × per_token` over the calls of at most
//! [`DECODING_TOKENS`] tokens. The prompt's uncached part is one long call: its cost per
//! token is the largest batch's. Together they bound a request's latency on this CPU.

use std::time::Instant;

use llama_cpp_2::llama_batch::LlamaBatch;
use llama_cpp_2::token::LlamaToken;

use crate::backend;
use crate::generate::{default_threads, GenerateError, LocalModel};

/// The largest call the decoding fit covers (a sampled token and its forced text).
pub const DECODING_TOKENS: usize = 8;

/// What [`LocalModel::call_costs`] measures.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CallCostOptions {
    /// CPU threads [default: physical cores].
    pub threads: Option<usize>,
    /// Tokens already in the KV cache before each measured call (a prompt's shared
    /// prefix).
    pub context: usize,
    /// The numbers of tokens a measured call reads.
    pub batches: Vec<usize>,
    /// Calls measured per batch size (after one call not counted).
    pub repeats: usize,
}

impl Default for CallCostOptions {
    fn default() -> Self {
        Self {
            threads: None,
            context: 400,
            batches: vec![1, 2, 4, 8, 16, 32, 64],
            repeats: 10,
        }
    }
}

/// The cost of a call that reads `tokens` tokens.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct CallCost {
    /// Tokens the call reads.
    pub tokens: usize,
    /// Calls measured.
    pub calls: usize,
    /// Median wall time of `llama_decode`, in milliseconds.
    pub wall_ms_p50: f64,
    /// Median time llama.cpp's own counters give the call (`llama_perf_context`), in
    /// milliseconds.
    pub llama_ms_p50: f64,
}

/// [`LocalModel::call_costs`]'s result: each batch size's cost and the linear fit.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct CallCosts {
    /// Threads the calls ran on.
    pub threads: usize,
    /// Tokens in the KV cache before each call.
    pub context: usize,
    /// One entry per batch size, in the order asked.
    pub costs: Vec<CallCost>,
    /// The decoding fit's fixed cost of a call (llama.cpp's timings, calls of at most
    /// [`DECODING_TOKENS`] tokens), in milliseconds.
    pub per_call_ms: f64,
    /// The decoding fit's cost of each token a call reads, in milliseconds.
    pub per_token_ms: f64,
    /// The largest batch's cost per token: what the prompt's uncached part costs a
    /// token, in milliseconds.
    pub prompt_ms_per_token: f64,
}

impl CallCosts {
    /// What a request costs by these measurements, in milliseconds: `prompt_tokens` read
    /// in one long call, then `calls` decoding calls reading `tokens` tokens in all.
    pub fn predict_ms(&self, prompt_tokens: f64, calls: f64, tokens: f64) -> f64 {
        prompt_tokens * self.prompt_ms_per_token
            + calls * self.per_call_ms
            + tokens * self.per_token_ms
    }
}

impl LocalModel {
    /// Measures what a call of each of `opts.batches` tokens costs on top of
    /// `opts.context` cached tokens (the context is filled once with the tokens of a
    /// neutral text, and cut back to it before each call). Errors where a batch size is 0
    /// or larger than 512 ([`GenerateError::CallSizes`]), or the context cannot be made.
    pub fn call_costs(&self, opts: &CallCostOptions) -> Result<CallCosts, GenerateError> {
        const N_BATCH: usize = crate::generate::N_BATCH as usize;
        let largest = opts.batches.iter().copied().max().unwrap_or(0);
        if opts.batches.is_empty() || opts.batches.contains(&0) || largest > N_BATCH {
            return Err(GenerateError::CallSizes {
                got: opts.batches.clone(),
                max: N_BATCH,
            });
        }
        let threads = opts.threads.unwrap_or_else(default_threads).max(1);
        let t = i32::try_from(threads).unwrap_or(i32::MAX);
        let n_ctx = u32::try_from(opts.context + largest + 8)
            .map_err(|e| GenerateError::Context(e.to_string()))?;
        // The generator's context, with llama.cpp's timings on.
        let params = crate::generate::context_params(n_ctx, t).with_no_perf(false);
        let model = self.llama();
        let mut ctx = model
            .new_context(backend::backend()?, params)
            .map_err(|e| GenerateError::Context(e.to_string()))?;
        let tokens = filler(model, opts.context + largest)?;
        let decode_err = |e: &dyn std::fmt::Display| GenerateError::Decode(e.to_string());
        let mut batch = LlamaBatch::new(N_BATCH, 1);
        let mut eval = |ctx: &mut llama_cpp_2::context::LlamaContext<'_>,
                        toks: &[LlamaToken],
                        at: usize|
         -> Result<(), GenerateError> {
            batch.clear();
            for (i, &tok) in toks.iter().enumerate() {
                let p = i32::try_from(at + i).map_err(|e| decode_err(&e))?;
                batch
                    .add(tok, p, &[0], i + 1 == toks.len())
                    .map_err(|e| decode_err(&e))?;
            }
            ctx.decode(&mut batch).map_err(|e| decode_err(&e))
        };
        for (i, chunk) in tokens[..opts.context].chunks(N_BATCH).enumerate() {
            eval(&mut ctx, chunk, i * N_BATCH)?;
        }
        let at = opts.context;
        let context_pos = u32::try_from(at).map_err(|e| decode_err(&e))?;
        let mut costs = Vec::new();
        for &k in &opts.batches {
            let mut wall = Vec::new();
            let mut llama = Vec::new();
            for r in 0..=opts.repeats {
                ctx.clear_kv_cache_seq(Some(0), Some(context_pos), None)
                    .map_err(|e| decode_err(&e))?;
                ctx.reset_timings();
                let start = Instant::now();
                eval(&mut ctx, &tokens[at..at + k], at)?;
                // Reading the logits waits for the call and closes llama.cpp's timing of
                // it, as the decoding loop's next step does.
                let last = i32::try_from(k - 1).map_err(|e| decode_err(&e))?;
                std::hint::black_box(ctx.get_logits_ith(last).first());
                let spent = start.elapsed().as_secs_f64() * 1e3;
                let timings = ctx.timings();
                if r > 0 {
                    wall.push(spent);
                    llama.push(timings.t_p_eval_ms() + timings.t_eval_ms());
                }
            }
            costs.push(CallCost {
                tokens: k,
                calls: wall.len(),
                wall_ms_p50: median(&mut wall),
                llama_ms_p50: median(&mut llama),
            });
        }
        let short: Vec<CallCost> = costs
            .iter()
            .filter(|c| c.tokens <= DECODING_TOKENS)
            .cloned()
            .collect();
        let (per_call_ms, per_token_ms) = fit(if short.is_empty() { &costs } else { &short });
        let prompt_ms_per_token = costs
            .iter()
            .max_by_key(|c| c.tokens)
            .map_or(f64::NAN, |c| c.llama_ms_p50 / c.tokens as f64);
        Ok(CallCosts {
            threads,
            context: opts.context,
            costs,
            per_call_ms,
            per_token_ms,
            prompt_ms_per_token,
        })
    }
}

/// `n` tokens of a neutral English text, repeated as needed (the cost of a call does not
/// depend on which tokens it reads).
fn filler(
    model: &llama_cpp_2::model::LlamaModel,
    n: usize,
) -> Result<Vec<LlamaToken>, GenerateError> {
    const TEXT: &str = "A request names the values of a call in its own words: a city, a date, \
        a number of guests, the name of a song or of a person. The grammar offers those \
        values at the fields that take them, and the model writes one line per call. ";
    let once = model.vocab().tokenize(TEXT.as_bytes(), false, false);
    if once.is_empty() {
        return Err(GenerateError::Decode(
            "the filler text has no tokens".into(),
        ));
    }
    Ok(once.iter().copied().cycle().take(n).collect())
}

fn median(v: &mut [f64]) -> f64 {
    if v.is_empty() {
        return f64::NAN;
    }
    v.sort_by(f64::total_cmp);
    let m = v.len() / 2;
    if v.len() % 2 == 1 {
        v[m]
    } else {
        (v[m - 1] + v[m]) / 2.0
    }
}

/// Least squares `llama_ms_p50 ≈ a + b × tokens`: `(a, b)`; with one batch size, all of
/// its cost is per token.
fn fit(costs: &[CallCost]) -> (f64, f64) {
    let n = costs.len() as f64;
    let (sx, sy) = costs.iter().fold((0.0, 0.0), |(x, y), c| {
        (x + c.tokens as f64, y + c.llama_ms_p50)
    });
    let (mx, my) = (sx / n, sy / n);
    let sxx: f64 = costs.iter().map(|c| (c.tokens as f64 - mx).powi(2)).sum();
    if sxx == 0.0 {
        return (0.0, my / mx.max(1.0));
    }
    let sxy: f64 = costs
        .iter()
        .map(|c| (c.tokens as f64 - mx) * (c.llama_ms_p50 - my))
        .sum();
    let b = sxy / sxx;
    (my - b * mx, b)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cost(tokens: usize, ms: f64) -> CallCost {
        CallCost {
            tokens,
            calls: 1,
            wall_ms_p50: ms,
            llama_ms_p50: ms,
        }
    }

    #[test]
    fn the_fit_recovers_a_fixed_and_a_per_token_cost() {
        let costs: Vec<CallCost> = [1, 2, 4, 8, 16]
            .iter()
            .map(|&k| cost(k, 20.0 + 5.0 * k as f64))
            .collect();
        let (a, b) = fit(&costs);
        assert!((a - 20.0).abs() < 1e-9 && (b - 5.0).abs() < 1e-9, "{a} {b}");
    }

    #[test]
    fn one_batch_size_puts_the_whole_cost_on_its_tokens() {
        assert_eq!(fit(&[cost(4, 40.0)]), (0.0, 10.0));
    }

    #[test]
    fn medians_of_odd_and_even_counts() {
        assert_eq!(median(&mut [3.0, 1.0, 2.0]), 2.0);
        assert_eq!(median(&mut [4.0, 1.0, 2.0, 3.0]), 2.5);
        assert!(median(&mut []).is_nan());
    }
}
