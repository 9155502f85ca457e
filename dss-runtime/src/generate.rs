//! Generation: a local model writes shorthand under the compiled grammar, and the result is
//! expanded to JSON and validated against the schema.
//!
//! ```no_run
//! use dss_runtime::{Generator, GeneratorOptions, LocalModel};
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let spec = dss_compiler::CompiledSpec::from_json(&std::fs::read_to_string("grammars/viz/spec.json")?)?;
//! let model = LocalModel::load(&dss_runtime::models::resolve("qwen2.5-coder-0.5b")?)?;
//! let mut gen = Generator::new(&model, spec, GeneratorOptions::default())?;
//! for request in ["profit by region", "monthly sales as a line chart"] {
//!     let out = gen.generate(request)?;          // the shared prompt prefix is reused
//!     println!("{}  ({} ms)", out.value, out.stats.total_ms);
//! }
//! # Ok(()) }
//! ```
//!
//! Stages of one request ([`Generator::generate`]):
//! 1. **Prompt**: the shared prefix (template, instruction, grammar, examples) + the request
//!    (special-token parsing off) + the assistant header ([`crate::prompt`]).
//! 2. **Prefix cache**: the longest common prefix with what the KV cache already holds, up to
//!    the end of the shared prefix, is kept, the cache is cut after it, and only the rest is
//!    evaluated, in batches aligned to absolute positions, so a warm run gives exactly the
//!    output of a cold one. (A sliding-window
//!    model keeps its full cache, `swa_full`, so cutting stays valid; if the cache ever lost
//!    early positions the cut falls back to a cold evaluation.)
//! 3. **Decoding** under a [`Constraint`]: forced text is appended without sampling
//!    (fast-forward); otherwise the greedy token is checked first and the full mask is
//!    computed only if it is rejected. End-of-generation is allowed exactly when the
//!    document may end. Generation is bounded by `max_tokens` and by repetition checks.
//! 4. **Expansion**: shorthand → JSON (`CompiledSpec::expand`), validated against the schema.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

pub use crate::calls::{CallCost, CallCostOptions, CallCosts, DECODING_TOKENS};
pub use dss_compiler::prompt::ExamplesError;
use dss_compiler::prune::{Consume, GrammarOptions, Pruner, Pruning, Restriction};
use dss_compiler::CompiledSpec;
use llama_cpp_2::context::params::LlamaContextParams;
use llama_cpp_2::context::LlamaContext;
use llama_cpp_2::llama_batch::LlamaBatch;
use llama_cpp_2::model::LlamaModel;
use llama_cpp_2::sampling::LlamaSampler;
use llama_cpp_2::token::LlamaToken;
use llguidance::ParserFactory;
use serde_json::Value;
use toktrie::TokEnv;

use crate::backend::{self, BackendError};
use crate::engine::{Constraint, EngineError, EngineKind, Grammar, GrammarSource};
use crate::prompt::{self, PromptError, PromptTemplate, Shot};

/// Errors from loading a model for generation or from one request.
#[derive(Debug, Clone, thiserror::Error)]
#[non_exhaustive]
pub enum GenerateError {
    /// Loading the model failed.
    #[error(transparent)]
    Backend(#[from] BackendError),
    /// The grammar engine failed.
    #[error(transparent)]
    Engine(#[from] EngineError),
    /// The prompt could not be rendered.
    #[error(transparent)]
    Prompt(#[from] PromptError),
    /// The model has no end-of-generation token, so it could never stop.
    #[error("model {} has no end-of-generation token", .0.display())]
    NoEogToken(PathBuf),
    /// llama.cpp could not create an inference context (usually: out of memory).
    #[error("could not create a llama.cpp context: {0}")]
    Context(String),
    /// The prompt plus the output budget does not fit the context.
    #[error("the request is too long: the prompt is {prompt_tokens} tokens and up to {max_tokens} may be generated, but the context holds {n_ctx} (shorten the request or raise --ctx)")]
    PromptTooLong {
        /// The prompt's length in tokens.
        prompt_tokens: usize,
        /// The output budget in tokens.
        max_tokens: usize,
        /// The context size in tokens.
        n_ctx: usize,
    },
    /// llama.cpp failed to evaluate a batch.
    #[error("llama.cpp failed to evaluate the prompt or a token: {0}")]
    Decode(String),
    /// The grammar allows no token at all here (an unsatisfiable grammar).
    #[error("the grammar allows no continuation after {0:?}")]
    NoAllowedToken(String),
    /// The output budget ran out before the document was complete.
    #[error("generation reached the limit of {max_tokens} tokens before the document was complete (raise --max-tokens); partial output: {partial:?}")]
    MaxTokens {
        /// The output budget in tokens.
        max_tokens: usize,
        /// What was written until then.
        partial: String,
    },
    /// The time budget ran out before the document was complete.
    #[error("generation took longer than its time budget of {seconds} s before the document was complete (raise --timeout); partial output: {partial:?}")]
    Timeout {
        /// The time budget in seconds.
        seconds: f64,
        /// What was written until then (empty when the prompt was still being evaluated).
        partial: String,
    },
    /// The model went into a loop.
    #[error("the model repeated itself without finishing; partial output: {partial:?}")]
    Repetition {
        /// What was written until then.
        partial: String,
    },
    /// The output does not expand or validate (should not happen under a grammar; with
    /// no constraint it is the expected failure).
    #[error("the model's output is not valid: {message}; output: {output:?}")]
    Invalid {
        /// What the model wrote.
        output: String,
        /// Why it does not expand or validate.
        message: String,
    },
    /// [`LocalModel::call_costs`] was asked for calls it cannot measure.
    #[error("batch sizes must be 1 to {max} tokens, got {got:?}")]
    CallSizes {
        /// The sizes asked for.
        got: Vec<usize>,
        /// The largest call a batch holds.
        max: usize,
    },
    /// An examples file could not be read.
    #[error("examples {}: {message}", path.display())]
    Examples {
        /// The examples file.
        path: PathBuf,
        /// What is wrong with it.
        message: String,
    },
}

/// A model loaded with its weights, ready to generate. Load once, share by reference.
pub struct LocalModel {
    model: LlamaModel,
    path: PathBuf,
    tok_env: TokEnv,
    eog: Arc<[LlamaToken]>,
    load_ms: f64,
    /// llguidance's parser factory, built on first use and kept: a per-request (pruned)
    /// grammar then costs its own compilation, not a pass over the vocabulary.
    factory: std::sync::OnceLock<Result<ParserFactory, String>>,
    /// The tokens whose text holds a newline, found on first use.
    line_ending: std::sync::OnceLock<Vec<LlamaToken>>,
}

impl LocalModel {
    /// Loads the GGUF model at `path` (weights included) and builds its token trie.
    pub fn load(path: &Path) -> Result<Self, GenerateError> {
        let start = Instant::now();
        let model = backend::load_model(path, false)?;
        let vocab = model.vocab();
        let eog: Vec<LlamaToken> = vocab.tokens().filter(|&t| vocab.is_eog(t)).collect();
        if eog.is_empty() {
            return Err(GenerateError::NoEogToken(path.to_owned()));
        }
        let tok_env = LlamaSampler::llguidance_tok_env(&model);
        Ok(Self {
            model,
            path: path.to_owned(),
            tok_env,
            eog: eog.into(),
            load_ms: start.elapsed().as_secs_f64() * 1e3,
            factory: std::sync::OnceLock::new(),
            line_ending: std::sync::OnceLock::new(),
        })
    }

    /// The llama.cpp model.
    pub fn llama(&self) -> &LlamaModel {
        &self.model
    }

    /// Where it was loaded from.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Milliseconds spent loading (weights, vocabulary trie).
    pub fn load_ms(&self) -> f64 {
        self.load_ms
    }

    /// The tokens whose text holds a newline (they end a shorthand line).
    fn line_ending_tokens(&self) -> &[LlamaToken] {
        self.line_ending.get_or_init(|| {
            let vocab = self.model.vocab();
            (0..vocab.n_tokens())
                .map(LlamaToken)
                .filter(|&t| vocab.token_to_piece(t, false, None).contains(&b'\n'))
                .collect()
        })
    }

    /// Prepares a grammar for this model (per-request grammars: see [`Generator::generate_with`]).
    pub fn grammar(
        &self,
        engine: EngineKind,
        source: &GrammarSource,
    ) -> Result<Grammar, GenerateError> {
        let factory = match engine {
            EngineKind::Llguidance => Some(
                self.factory
                    .get_or_init(|| {
                        crate::engine::parser_factory(&self.tok_env).map_err(|e| e.to_string())
                    })
                    .as_ref()
                    .map_err(|e| EngineError::Grammar(e.clone()))?,
            ),
            _ => None,
        };
        Ok(Grammar::with_factory(engine, source, factory, &self.model)?)
    }

    fn tokens_of(&self, text: &str) -> usize {
        self.model
            .vocab()
            .tokenize(text.as_bytes(), false, false)
            .len()
    }
}

/// What the model writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum OutputFormat {
    /// dss shorthand, expanded to JSON afterwards.
    #[default]
    Shorthand,
    /// Compact JSON directly (for comparison; the grammar is the JSON Schema).
    Json,
}

pub use dss_compiler::prompt::{load_examples, Example};

impl From<ExamplesError> for GenerateError {
    fn from(e: ExamplesError) -> Self {
        GenerateError::Examples {
            path: e.path,
            message: e.message,
        }
    }
}

/// What [`Generator::warm_cached`] did.
#[derive(Debug, Clone, PartialEq)]
pub enum PrefixCache {
    /// The prefix's KV cache was read from the file.
    Loaded {
        /// The cache file.
        path: PathBuf,
        /// How long it took, in milliseconds.
        ms: f64,
    },
    /// The prefix was evaluated and written to the file.
    Saved {
        /// The cache file.
        path: PathBuf,
        /// How long it took, in milliseconds.
        ms: f64,
    },
    /// The prefix was evaluated; the file could not be written.
    NotSaved {
        /// The cache file.
        path: PathBuf,
        /// Why it could not be written.
        reason: String,
    },
    /// The prompt has no shared prefix to cache.
    Empty,
}

impl PrefixCache {
    /// `loaded`, `saved`, `not-saved` or `empty`.
    pub fn name(&self) -> &'static str {
        match self {
            PrefixCache::Loaded { .. } => "loaded",
            PrefixCache::Saved { .. } => "saved",
            PrefixCache::NotSaved { .. } => "not-saved",
            PrefixCache::Empty => "empty",
        }
    }
}

/// How a [`Generator`] runs.
#[derive(Debug, Clone)]
pub struct GeneratorOptions {
    /// The constraint engine.
    pub engine: EngineKind,
    /// Shorthand (default) or compact JSON.
    pub format: OutputFormat,
    /// CPU threads; default: the number of physical cores.
    pub threads: Option<usize>,
    /// Context size in tokens (prompt + output).
    pub n_ctx: u32,
    /// Output budget; default: sized from the examples (3× the longest, at least 128),
    /// or 512 without examples.
    pub max_tokens: Option<usize>,
    /// Time budget per request, from the request to its document (prompt evaluation,
    /// grammar building and decoding), checked before each batch of the prompt and each
    /// token: past it the request fails with [`GenerateError::Timeout`]. Default:
    /// [`DEFAULT_TIMEOUT`]; `None`: no bound.
    pub timeout: Option<Duration>,
    /// Append forced text without sampling.
    pub fast_forward: bool,
    /// Worked examples for the prompt (their outputs must validate against the schema).
    pub examples: Vec<Example>,
    /// End the document when it may end and the model's greedy token is not allowed
    /// (instead of taking the best allowed token).
    pub end_on_rejection: bool,
    /// Let the model write properties the schema does not declare wherever the schema
    /// admits them; by default only where it allows them explicitly
    /// (`additionalProperties` other than `false`, or `patternProperties`; see
    /// [`dss_compiler::prune::GrammarOptions`]).
    pub allow_undeclared: bool,
    /// Under pruning ([`Generator::generate_pruned`]), let a line end while a value found
    /// only it could take is unwritten. By default (false) such a line goes on with the
    /// best token the grammar allows that does not end it, so one call is not split over
    /// two lines (see [`dss_compiler::prune::Pruner::line_leaves`]).
    pub split_lines: bool,
    /// Drafts from the request: at most this many tokens that follow, in the prompt's
    /// request, the last output tokens are read in the same call as the output so far
    /// (prompt-lookup decoding). Where the model's greedy choices, under the grammar,
    /// agree with them, the next steps need no call; the output is the same as without
    /// drafts. 0: no drafts.
    pub draft_tokens: usize,
}

impl GeneratorOptions {
    /// What the generation grammars offer beyond the schema's declarations.
    pub fn grammar_options(&self) -> GrammarOptions {
        GrammarOptions {
            allow_undeclared: self.allow_undeclared,
        }
    }
}

impl Default for GeneratorOptions {
    fn default() -> Self {
        Self {
            engine: EngineKind::default(),
            format: OutputFormat::default(),
            threads: None,
            n_ctx: 4096,
            max_tokens: None,
            timeout: Some(DEFAULT_TIMEOUT),
            fast_forward: true,
            examples: Vec::new(),
            end_on_rejection: true,
            allow_undeclared: false,
            split_lines: false,
            draft_tokens: DEFAULT_DRAFT_TOKENS,
        }
    }
}

/// The default time budget of one request ([`GeneratorOptions::timeout`]): a small model
/// on a CPU writes a document in seconds; one that ran for minutes was looping.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(60);

/// The default [`GeneratorOptions::draft_tokens`].
const DEFAULT_DRAFT_TOKENS: usize = 0;

/// The default thread count: physical cores.
pub fn default_threads() -> usize {
    num_cpus::get_physical().max(1)
}

/// Measurements of one request. Times in milliseconds; the model load is not included.
#[derive(Debug, Clone, Default, PartialEq, serde::Serialize)]
pub struct Stats {
    /// Tokens in the whole prompt.
    pub prompt_tokens: usize,
    /// Prompt tokens whose KV cache was reused.
    pub cached_tokens: usize,
    /// From the request to the first output token.
    pub ttft_ms: f64,
    /// Output tokens (sampled + forced).
    pub generated_tokens: usize,
    /// Output tokens appended by fast-forward, without sampling.
    pub forced_tokens: usize,
    /// Time spent in the constraint engine.
    pub constraint_ms: f64,
    /// Steps where the greedy token was rejected and the full mask was computed.
    pub full_masks: usize,
    /// From the request to the validated JSON.
    pub total_ms: f64,
    /// Time spent building pruned grammars (the first and each rebuild).
    pub prune_ms: f64,
    /// Grammars rebuilt after a line (iterative pruning).
    pub rebuilds: usize,
    /// Line ends replaced because the line had a value found only it could take.
    pub held_lines: usize,
    /// Prompt tokens the model read for this request (not in the reused KV cache).
    pub uncached_prompt_tokens: usize,
    /// Model calls (`llama_decode`) for this request, the prompt's included.
    pub model_calls: usize,
    /// Tokens the model read in those calls (uncached prompt + output).
    pub evaluated_tokens: usize,
    /// From the request until the model has read the whole prompt (with the forced text
    /// that opens the output, which goes in the same call).
    pub prompt_ms: f64,
    /// Model calls after the prompt: each reads a sampled token with the forced text after
    /// it, so there are at most as many as sampled tokens.
    pub decode_calls: usize,
    /// Time in those calls.
    pub decode_ms: f64,
    /// Tokens those calls read (each sampled token with the forced text after it, and
    /// any draft).
    pub decode_tokens: usize,
    /// Draft tokens read ([`GeneratorOptions::draft_tokens`]).
    pub drafted_tokens: usize,
    /// Steps whose logits a draft had already computed (calls saved).
    pub draft_steps: usize,
}

/// One generated document.
#[derive(Debug, Clone)]
pub struct Generation {
    /// The JSON, valid against the schema.
    pub value: Value,
    /// What the model wrote (shorthand, or JSON text).
    pub text: String,
    /// The model repeated a line; the output was cut before the repetition.
    pub cut_repetition: bool,
    /// Timings and token counts of the request.
    pub stats: Stats,
}

/// A spec and a model with an inference context: call [`generate`](Self::generate) many times.
pub struct Generator<'m> {
    model: &'m LocalModel,
    ctx: LlamaContext<'m>,
    spec: CompiledSpec,
    opts: GeneratorOptions,
    template: PromptTemplate,
    grammar: Arc<Grammar>,
    max_tokens: usize,
    /// Tokens whose KV entries are in the cache (sequence 0), in order.
    cached: Vec<LlamaToken>,
    n_batch: usize,
    /// Tokens in the shared prefix.
    prefix_len: usize,
    last_stats: Stats,
    /// When the request being generated runs out of time ([`GeneratorOptions::timeout`]).
    deadline: Option<Instant>,
    /// The deadline [`Generator::eval`] checks before each batch: set while the prompt is
    /// evaluated (decoding checks it per token, where the partial output is known).
    eval_deadline: Option<Instant>,
    /// Model calls of the request being generated.
    calls: Calls,
    /// The positions whose logits the last call computed: `(first position of its
    /// batch, first position with logits, end)`.
    logits: Option<(usize, usize, usize)>,
}

/// Model calls counted by [`Generator::eval`].
#[derive(Debug, Clone, Copy, Default)]
struct Calls {
    calls: usize,
    tokens: usize,
}

/// The most tokens one model call reads (llama.cpp's `n_batch` and `n_ubatch`).
pub(crate) const N_BATCH: u32 = 512;

/// The llama.cpp context every call of the runtime runs in (generation, and
/// [`LocalModel::call_costs`], which measures those calls): one sequence of `n_ctx` tokens
/// (at least 64), batches of [`N_BATCH`], `threads` threads, a full-size cache for
/// sliding-window models.
pub(crate) fn context_params(n_ctx: u32, threads: i32) -> LlamaContextParams {
    LlamaContextParams::default()
        .with_n_ctx(std::num::NonZeroU32::new(n_ctx.max(64)))
        .with_n_batch(N_BATCH)
        .with_n_ubatch(N_BATCH)
        .with_n_seq_max(1)
        .with_n_threads(threads)
        .with_n_threads_batch(threads)
        .with_swa_full(true)
}

impl<'m> Generator<'m> {
    /// Prepares prompt, grammar and context. Nothing is evaluated yet ([`warm`](Self::warm)
    /// does the shared prefix ahead of the first request).
    pub fn new(
        model: &'m LocalModel,
        spec: CompiledSpec,
        opts: GeneratorOptions,
    ) -> Result<Self, GenerateError> {
        let (system, shots, source) = match opts.format {
            OutputFormat::Shorthand => {
                let mut shots = Vec::new();
                for ex in &opts.examples {
                    let answer =
                        spec.compress(&ex.output)
                            .map_err(|e| GenerateError::Examples {
                                path: PathBuf::from("<examples>"),
                                message: format!(
                                    "example {:?}: {}: {}",
                                    ex.request,
                                    e.pointer(),
                                    e.message()
                                ),
                            })?;
                    shots.push(Shot {
                        request: ex.request.clone(),
                        answer: answer.trim_end().to_string(),
                    });
                }
                (
                    prompt::system_message(
                        prompt::INSTRUCTION,
                        &spec.prompt_grammar(opts.grammar_options()),
                    ),
                    shots,
                    GrammarSource::Ir(spec.generation_grammar(opts.grammar_options())),
                )
            }
            OutputFormat::Json => {
                let schema = serde_json::to_string(spec.schema()).unwrap_or_default();
                let shots = opts
                    .examples
                    .iter()
                    .map(|ex| Shot {
                        request: ex.request.clone(),
                        answer: ex.output.to_string(),
                    })
                    .collect();
                (
                    prompt::system_message(prompt::JSON_INSTRUCTION, &schema),
                    shots,
                    GrammarSource::JsonSchema(spec.schema().clone()),
                )
            }
        };
        let template = PromptTemplate::render(&model.model, &system, &shots)?;
        let prefix_len = prompt::tokenize_prefix(&model.model, &template.prefix).len();
        let grammar = model.grammar(opts.engine, &source)?;
        let max_tokens = opts.max_tokens.unwrap_or_else(|| {
            shots
                .iter()
                .map(|s| model.tokens_of(&s.answer))
                .max()
                .map_or(512, |n| (3 * n).max(128))
        });
        let threads =
            i32::try_from(opts.threads.unwrap_or_else(default_threads).max(1)).unwrap_or(i32::MAX);
        let params = context_params(opts.n_ctx, threads);
        let ctx = model
            .model
            .new_context(backend::backend()?, params)
            .map_err(|e| GenerateError::Context(e.to_string()))?;
        Ok(Self {
            model,
            ctx,
            spec,
            opts,
            template,
            grammar: Arc::new(grammar),
            max_tokens,
            cached: Vec::new(),
            n_batch: N_BATCH as usize,
            prefix_len,
            last_stats: Stats::default(),
            deadline: None,
            eval_deadline: None,
            calls: Calls::default(),
            logits: None,
        })
    }

    /// The compiled spec.
    pub fn spec(&self) -> &CompiledSpec {
        &self.spec
    }

    /// The output budget per request.
    pub fn max_tokens(&self) -> usize {
        self.max_tokens
    }

    /// The prompt around the request slot (for inspection).
    pub fn prompt(&self) -> &PromptTemplate {
        &self.template
    }

    /// Tokens in the shared prefix.
    pub fn prefix_tokens(&self) -> usize {
        self.prefix_len
    }

    /// Evaluates the shared prefix now, so the first request starts warm.
    pub fn warm(&mut self) -> Result<(), GenerateError> {
        let tokens = prompt::tokenize_prefix(&self.model.model, &self.template.prefix);
        self.warm_tokens(&tokens)
    }

    /// [`warm`](Self::warm) with the prefix already tokenized.
    fn warm_tokens(&mut self, tokens: &[LlamaToken]) -> Result<(), GenerateError> {
        if tokens.len() < 2 {
            return Ok(());
        }
        // All but the last token: a request always evaluates at least one token itself.
        let split = tokens.len() - 1;
        let common = self
            .cached
            .iter()
            .zip(&tokens[..split])
            .take_while(|(a, b)| a == b)
            .count();
        let keep = self.cut(common);
        self.eval(&tokens[keep..split], keep)?;
        Ok(())
    }

    /// Like [`warm`](Self::warm), but through a file in `dir`: when a file there holds
    /// exactly this prefix for this model, its KV cache is read instead of evaluated (a
    /// fresh process starts warm); otherwise the prefix is evaluated and the file written.
    ///
    /// The file is named after what its KV entries depend on (the model file, the prefix
    /// tokens, the batch layout), and a file that does not hold exactly those tokens, or
    /// that llama.cpp cannot read, is ignored and rewritten. Failing to write it is not an
    /// error: the generator is warm either way, and the outcome says why.
    pub fn warm_cached(&mut self, dir: &Path) -> Result<PrefixCache, GenerateError> {
        let start = Instant::now();
        let tokens = prompt::tokenize_prefix(&self.model.model, &self.template.prefix);
        if tokens.len() < 2 {
            return Ok(PrefixCache::Empty);
        }
        let want = &tokens[..tokens.len() - 1];
        let path = dir.join(format!("prefix-{}.kv", self.prefix_key(want)));
        if path.is_file() && self.cached.as_slice() != want {
            self.clear_cache();
            match self.ctx.state_seq_load_file(&path, 0, want.len()) {
                Ok((loaded, _)) if loaded == want => {
                    self.cached = loaded;
                    return Ok(PrefixCache::Loaded {
                        path,
                        ms: ms(start),
                    });
                }
                // Someone else's file, or a damaged one: evaluate and rewrite it.
                _ => self.clear_cache(),
            }
        }
        self.warm_tokens(&tokens)?;
        // Write next to the final name, then rename: a reader never sees half a file.
        let tmp = dir.join(format!(".prefix-{}.tmp", std::process::id()));
        let saved = std::fs::create_dir_all(dir)
            .map_err(|e| e.to_string())
            .and_then(|_| {
                self.ctx
                    .state_seq_save_file(&tmp, 0, &self.cached)
                    .map_err(|e| e.to_string())
            })
            .and_then(|_| std::fs::rename(&tmp, &path).map_err(|e| e.to_string()));
        Ok(match saved {
            Ok(()) => PrefixCache::Saved {
                path,
                ms: ms(start),
            },
            Err(reason) => {
                let _ = std::fs::remove_file(&tmp);
                PrefixCache::NotSaved { path, reason }
            }
        })
    }

    /// What a saved prefix depends on: the model file, the tokens, how they are batched.
    fn prefix_key(&self, tokens: &[LlamaToken]) -> String {
        use sha2::{Digest, Sha256};
        let mut h = Sha256::new();
        h.update(b"dss prefix kv v1\0");
        h.update(self.model.path.to_string_lossy().as_bytes());
        let len = std::fs::metadata(&self.model.path).map_or(0, |m| m.len());
        h.update(len.to_le_bytes());
        h.update((self.n_batch as u64).to_le_bytes());
        for t in tokens {
            h.update(t.0.to_le_bytes());
        }
        let digest = h.finalize();
        digest.iter().take(8).map(|b| format!("{b:02x}")).collect()
    }

    /// Forgets the KV cache (the next request starts cold).
    pub fn clear_cache(&mut self) {
        self.ctx.clear_kv_cache();
        self.cached.clear();
    }

    /// Generates the JSON for `request` under the spec's grammar.
    pub fn generate(&mut self, request: &str) -> Result<Generation, GenerateError> {
        let grammar = Arc::clone(&self.grammar);
        self.generate_with(request, &grammar)
    }

    /// Generates under another grammar (e.g. one pruned for this request), prepared with
    /// [`LocalModel::grammar`]. The prompt is unchanged.
    pub fn generate_with(
        &mut self,
        request: &str,
        grammar: &Grammar,
    ) -> Result<Generation, GenerateError> {
        self.timed(|g, start, stats| g.run(request, grammar, start, stats))
    }

    /// Runs one request, timing it and keeping its stats (also when it fails).
    fn timed(
        &mut self,
        f: impl FnOnce(&mut Self, Instant, &mut Stats) -> Result<Output, GenerateError>,
    ) -> Result<Generation, GenerateError> {
        let start = Instant::now();
        self.deadline = self.opts.timeout.and_then(|t| start.checked_add(t));
        let mut stats = Stats::default();
        self.calls = Calls::default();
        let result = f(self, start, &mut stats);
        self.deadline = None;
        stats.total_ms = ms(start);
        stats.model_calls = self.calls.calls;
        stats.evaluated_tokens = self.calls.tokens;
        self.last_stats = stats.clone();
        let Output {
            value,
            text,
            cut_repetition,
        } = result?;
        Ok(Generation {
            value,
            text,
            cut_repetition,
            stats,
        })
    }

    /// Generates under the grammar pruned to `pruning.restriction` (the values found in the
    /// request), rebuilt for the rest of the document each time a line is complete, with
    /// the values that line used consumed (see [`Pruning`]; the loop is
    /// [`dss_compiler::prune::Pruner`]'s). `request` is what the prompt carries (e.g. the request
    /// followed by the items found).
    pub fn generate_pruned(
        &mut self,
        request: &str,
        pruning: &Pruning,
    ) -> Result<Generation, GenerateError> {
        self.timed(|g, start, stats| g.run_pruned(request, pruning, start, stats))
    }

    /// Compact JSON under the schema pruned to `restriction`
    /// ([`Restriction::pruned_schema`]): the JSON counterpart of
    /// [`generate_pruned`](Self::generate_pruned), with the same values offered at each
    /// site, in one grammar for the whole document (JSON has no lines to consume values
    /// by). The generator's format must be [`OutputFormat::Json`].
    pub fn generate_json_pruned(
        &mut self,
        request: &str,
        restriction: &Restriction,
    ) -> Result<Generation, GenerateError> {
        if self.opts.format != OutputFormat::Json {
            return Err(GenerateError::Decode(
                "a pruned JSON schema needs a generator writing JSON (OutputFormat::Json)".into(),
            ));
        }
        self.timed(|g, start, stats| {
            let t = Instant::now();
            let schema = restriction.pruned_schema(g.spec.schema());
            let grammar = g
                .model
                .grammar(g.opts.engine, &GrammarSource::JsonSchema(schema))?;
            stats.prune_ms += ms(t);
            g.run(request, &grammar, start, stats)
        })
    }

    fn run_pruned(
        &mut self,
        request: &str,
        pruning: &Pruning,
        start: Instant,
        stats: &mut Stats,
    ) -> Result<Output, GenerateError> {
        let t = Instant::now();
        let hold_lines = !self.opts.split_lines && self.opts.format == OutputFormat::Shorthand;
        // Lists are held with lines, where the candidates are consumed line by line.
        let pruning = Pruning {
            restriction: Restriction {
                hold_lists: hold_lines && pruning.consume != Consume::Off,
                ..pruning.restriction.clone()
            },
            consume: pruning.consume,
        };
        let grammar = self.prepared(self.pruner(&pruning).start_grammar())?;
        stats.prune_ms += ms(t);
        let prompt = self.evaluate_prompt(request, stats)?;
        let state = PruneState {
            pruning,
            hold_lines,
            checked: 0,
        };
        let decoded = self.decode_with(&grammar, prompt, start, stats, Some(state))?;
        let value = self.finish(&decoded.text)?;
        Ok(Output {
            value,
            text: decoded.text,
            cut_repetition: decoded.cut_repetition,
        })
    }

    /// The per-line pruning of the document being written for `pruning`.
    fn pruner<'a>(&'a self, pruning: &'a Pruning) -> Pruner<'a> {
        pruning.pruner(&self.spec, self.opts.grammar_options())
    }

    /// A pruned grammar, prepared for this model and engine.
    fn prepared(&self, grammar: dss_compiler::grammar::Grammar) -> Result<Grammar, GenerateError> {
        prepared(self.model, self.opts.engine, grammar)
    }

    /// After a complete line (the text ends with a newline), the values it used leave the
    /// candidates and the constraint continues under the grammar of the rest.
    ///
    /// A line that repeats a value in an optional field is written again without it first
    /// ([`Pruner::deduplicated_line`]): the cache is cut back to the line's start and the
    /// new line left for the next call to read.
    fn rebuild(&mut self, st: &mut Decoding, stats: &mut Stats) -> Result<(), GenerateError> {
        let Some(p) = st.prune.as_ref() else {
            return Ok(());
        };
        if p.pruning.consume == Consume::Off
            || st.text.last() != Some(&b'\n')
            || st.text.len() == p.checked
        {
            return Ok(());
        }
        let t = Instant::now();
        let Ok(text) = std::str::from_utf8(&st.text) else {
            return Ok(());
        };
        let fixed = self.pruner(&p.pruning).deduplicated_line(text);
        if let Some(fixed) = fixed {
            self.rewrite_last_line(st, &fixed)?;
        }
        let Some(p) = st.prune.as_mut() else {
            return Ok(());
        };
        p.checked = st.text.len();
        let Ok(text) = std::str::from_utf8(&st.text) else {
            return Ok(());
        };
        let rest = PrunedRest {
            pruner: self.pruner(&p.pruning),
            engine: self.opts.engine,
        };
        let Some(constraint) = rest.after_lines(self.model, text)? else {
            return Ok(());
        };
        st.constraint = constraint;
        stats.rebuilds += 1;
        let spent = ms(t);
        stats.prune_ms += spent;
        st.constraint_time += spent / 1e3;
        Ok(())
    }

    /// Replaces the output's last line by the last line of `fixed` (the same text before
    /// it).
    /// `false` (nothing changed) where no output token ends exactly where the line starts.
    fn rewrite_last_line(&mut self, st: &mut Decoding, fixed: &str) -> Result<bool, GenerateError> {
        let body = &st.text[..st.text.len().saturating_sub(1)];
        let start = body.iter().rposition(|&b| b == b'\n').map_or(0, |i| i + 1);
        if !fixed.as_bytes().starts_with(&st.text[..start]) {
            return Ok(false);
        }
        let vocab = self.model.model.vocab();
        let mut at = 0;
        let mut k = 0;
        while at < start && k < st.out.len() {
            at += vocab.token_to_piece(st.out[k], false, None).len();
            k += 1;
        }
        if at != start {
            return Ok(false);
        }
        let line = &fixed.as_bytes()[start..];
        let toks = vocab.tokenize(line, false, false);
        // The next call cuts the cache where the line starts and reads the new line with
        // what follows it ([`flush`](Self::flush)).
        st.out.truncate(k);
        st.out.extend_from_slice(&toks);
        st.text = fixed.as_bytes().to_vec();
        Ok(true)
    }

    /// The measurements of the last request, also when it failed.
    pub fn last_stats(&self) -> &Stats {
        &self.last_stats
    }

    /// One request: the prompt evaluated on top of the cached prefix, the output decoded
    /// under `grammar`, then expanded and validated.
    fn run(
        &mut self,
        request: &str,
        grammar: &Grammar,
        start: Instant,
        stats: &mut Stats,
    ) -> Result<Output, GenerateError> {
        let prompt = self.evaluate_prompt(request, stats)?;
        let decoded = self.decode_with(grammar, prompt, start, stats, None)?;
        let value = self.finish(&decoded.text)?;
        Ok(Output {
            value,
            text: decoded.text,
            cut_repetition: decoded.cut_repetition,
        })
    }

    /// Tokenizes the prompt for `request` and evaluates what the KV cache does not hold yet,
    /// except the request's own tokens (after the shared prefix): the decoding loop reads
    /// those in one call with the forced text that opens the output.
    fn evaluate_prompt(
        &mut self,
        request: &str,
        stats: &mut Stats,
    ) -> Result<Prompt, GenerateError> {
        let tokens = prompt::tokenize(&self.model.model, &self.template, request);
        stats.prompt_tokens = tokens.len();
        if tokens.is_empty() {
            return Err(GenerateError::Decode("the prompt is empty".into()));
        }
        let n_ctx = self.ctx.n_ctx() as usize;
        if tokens.len() + self.max_tokens > n_ctx {
            return Err(GenerateError::PromptTooLong {
                prompt_tokens: tokens.len(),
                max_tokens: self.max_tokens,
                n_ctx,
            });
        }
        // Reuse stops at the shared prefix (less its last token), and a cold run evaluates
        // the prefix in the same batches as `warm`: the request's tokens always go through
        // the model in the same batch on top of bit-identical KV entries, so the output
        // does not depend on what the cache held.
        let split = self.prefix_len.saturating_sub(1).min(tokens.len() - 1);
        let common = self
            .cached
            .iter()
            .zip(&tokens)
            .take_while(|(a, b)| a == b)
            .count();
        let keep = self.cut(common.min(split));
        stats.cached_tokens = keep;
        stats.uncached_prompt_tokens = tokens.len() - keep;
        self.eval_deadline = self.deadline;
        let evaluated = self.eval(&tokens[keep..split], keep);
        self.eval_deadline = None;
        evaluated.map(|()| Prompt { tokens, split })
    }

    /// [`GenerateError::Timeout`] once the request's deadline has passed, with `partial`.
    fn check_time(
        &self,
        deadline: Option<Instant>,
        partial: impl FnOnce() -> String,
    ) -> Result<(), GenerateError> {
        match (deadline, self.opts.timeout) {
            (Some(d), Some(t)) if Instant::now() >= d => Err(GenerateError::Timeout {
                seconds: t.as_secs_f64(),
                partial: partial(),
            }),
            _ => Ok(()),
        }
    }

    /// The decoding loop: fast-forward forced text, pick the next token under the
    /// constraint, stop at the end of the document, the budget or a repetition.
    ///
    /// The model reads each sampled token together with the forced text after it, in one
    /// call ([`flush`](Self::flush) runs only where logits are needed); the part of the
    /// prompt not evaluated yet goes in the first call.
    fn decode_with(
        &mut self,
        grammar: &Grammar,
        prompt: Prompt,
        start: Instant,
        stats: &mut Stats,
        prune: Option<PruneState>,
    ) -> Result<Decoded, GenerateError> {
        let t = Instant::now();
        let mut st = Decoding {
            constraint: grammar.start(&self.model.model, self.model.eog.clone())?,
            constraint_time: t.elapsed().as_secs_f64(),
            out: Vec::new(),
            text: Vec::new(),
            checked_newlines: 0,
            start,
            prune,
            prompt_len: prompt.tokens.len(),
            prompt,
            prompt_read: false,
            logits_at: -1,
        };
        let mut logits_buf: Vec<f32> = Vec::new();
        let mut cut_repetition = false;
        loop {
            self.check_time(self.deadline, || st.partial())?;
            if self.opts.fast_forward {
                self.fast_forward(&mut st, stats)?;
                self.rebuild(&mut st, stats)?;
            }
            let t = Instant::now();
            let finished = st.constraint.is_finished();
            st.constraint_time += t.elapsed().as_secs_f64();
            if finished {
                break;
            }
            self.flush(&mut st, stats)?;
            if st.out.len() >= self.max_tokens {
                // The budget counts the tokens written; ending the document writes none.
                // A document complete at the cap, where the model's next choice is to end
                // it, is the document (not "the limit before the document was complete").
                if self.ends_at_budget(&mut st, &mut logits_buf, stats)? {
                    break;
                }
                return Err(GenerateError::MaxTokens {
                    max_tokens: self.max_tokens,
                    partial: st.partial(),
                });
            }
            let Some(token) = self.next_token(&mut st, &mut logits_buf, stats)? else {
                break;
            };
            st.push(token, &self.model.model, stats);
            if self.check_repetition(&mut st)? {
                cut_repetition = true;
                break;
            }
            self.rebuild(&mut st, stats)?;
            stats.generated_tokens = st.out.len();
            stats.constraint_ms = st.constraint_time * 1e3;
        }
        stats.generated_tokens = st.out.len();
        stats.constraint_ms = st.constraint_time * 1e3;
        let text = String::from_utf8(st.text).map_err(|e| GenerateError::Invalid {
            output: String::from_utf8_lossy(e.as_bytes()).into_owned(),
            message: "not UTF-8".into(),
        })?;
        Ok(Decoded {
            text,
            cut_repetition,
        })
    }

    /// Whether, with the budget spent, the document ends here: it may end, and what the
    /// model would take next is the end ([`choose`](Self::choose): end-of-generation, or a
    /// rejected greedy token). Nothing is accepted.
    fn ends_at_budget(
        &mut self,
        st: &mut Decoding,
        logits_buf: &mut Vec<f32>,
        stats: &mut Stats,
    ) -> Result<bool, GenerateError> {
        let t = Instant::now();
        let ends = st.constraint.is_accepting() && self.choose(st, logits_buf, stats)?.is_none();
        st.constraint_time += t.elapsed().as_secs_f64();
        Ok(ends)
    }

    /// Appends the text the constraint forces, without sampling (its last token is left
    /// to the model, since it could merge with what follows).
    fn fast_forward(&mut self, st: &mut Decoding, stats: &mut Stats) -> Result<(), GenerateError> {
        let t = Instant::now();
        let forced = st.constraint.forced_bytes();
        let mut n_forced = 0;
        let mut toks = Vec::new();
        if !forced.is_empty() {
            let vocab = self.model.model.vocab();
            let trie = self.model.tok_env.tok_trie();
            toks = vocab.tokenize(&forced, false, false);
            if toks
                .last()
                .is_some_and(|&l| trie.has_extensions(&vocab.token_to_piece(l, false, None)))
            {
                toks.pop();
            }
            toks.truncate(self.max_tokens.saturating_sub(st.out.len()));
            n_forced = st.constraint.accept_forced(&toks)?;
        }
        st.constraint_time += t.elapsed().as_secs_f64();
        for &tok in &toks[..n_forced] {
            st.push(tok, &self.model.model, stats);
        }
        stats.forced_tokens += n_forced;
        Ok(())
    }

    /// Makes the logits after the output so far available (`st.logits_at`): from the
    /// last call where a draft read this very sequence, else in one call that reads what
    /// the model has not read (the rest of the prompt, the output after the cache's
    /// common prefix with it) and a new draft after it.
    fn flush(&mut self, st: &mut Decoding, stats: &mut Stats) -> Result<(), GenerateError> {
        let total = st.prompt_len + st.out.len();
        let token_at = |i: usize| {
            if i < st.prompt_len {
                st.prompt.tokens[i]
            } else {
                st.out[i - st.prompt_len]
            }
        };
        let common = self
            .cached
            .iter()
            .take(total)
            .enumerate()
            .take_while(|&(i, &c)| token_at(i) == c)
            .count();
        if common == total {
            if let Some(at) = self.logits_index(total - 1) {
                st.logits_at = at;
                stats.draft_steps += 1;
                return Ok(());
            }
        }
        let keep = common.min(total - 1);
        if keep < self.cached.len() {
            let before = self.cached.clone();
            let kept = self.cut(keep);
            if kept < keep {
                // The cache could not be cut there: evaluate again what it lost.
                self.eval(&before[kept..keep], kept)?;
            }
        }
        let mut toks: Vec<LlamaToken> = (keep..total).map(token_at).collect();
        // A draft goes in the same batch only: its logits must come from one call.
        let room = self.n_batch - (total - 1) % self.n_batch - 1;
        let draft = self.draft(st, room.min(self.opts.draft_tokens))?;
        stats.drafted_tokens += draft.len();
        toks.extend_from_slice(&draft);
        let t = Instant::now();
        self.eval_logits(&toks, keep, total - 1)?;
        st.logits_at = self
            .logits_index(total - 1)
            .ok_or_else(|| GenerateError::Decode("no logits after the call".into()))?;
        if st.prompt_read {
            stats.decode_calls += 1;
            stats.decode_tokens += toks.len();
            stats.decode_ms += ms(t);
        } else {
            st.prompt_read = true;
            stats.prompt_ms = ms(st.start);
            if !st.out.is_empty() {
                stats.ttft_ms = stats.prompt_ms;
            }
        }
        Ok(())
    }

    /// The batch index of the logits at absolute position `pos`, if the last call computed
    /// them and the cache still holds what they were computed on.
    fn logits_index(&self, pos: usize) -> Option<i32> {
        let (start, from, end) = self.logits?;
        (from <= pos && pos < end && pos < self.cached.len())
            .then(|| i32::try_from(pos - start).ok())
            .flatten()
    }

    /// Prompt lookup: the tokens that follow, in the request's part of the prompt, a run
    /// of the last output tokens (1 to 3, within the current line), as far as the grammar
    /// allows them from here; of all such places, the one with the longest run, then the
    /// most tokens allowed. At most `max`, none with a line end.
    fn draft(&self, st: &mut Decoding, max: usize) -> Result<Vec<LlamaToken>, GenerateError> {
        if max == 0 || st.out.is_empty() {
            return Ok(Vec::new());
        }
        let vocab = self.model.model.vocab();
        let ends_line = |t: LlamaToken| {
            self.model.eog.contains(&t) || vocab.token_to_piece(t, false, None).contains(&b'\n')
        };
        let request = &st.prompt.tokens[st.prompt.split..];
        for m in (1..=3.min(st.out.len())).rev() {
            let run = &st.out[st.out.len() - m..];
            if run.iter().any(|&t| ends_line(t)) {
                continue;
            }
            let mut best: Vec<LlamaToken> = Vec::new();
            for (i, _) in request.windows(m).enumerate().filter(|(_, w)| *w == run) {
                let next: Vec<LlamaToken> = request[i + m..]
                    .iter()
                    .copied()
                    .take_while(|&t| !ends_line(t))
                    .take(max)
                    .collect();
                let n = st.constraint.valid_prefix(&next)?;
                if n > best.len() {
                    best = next[..n].to_vec();
                }
            }
            if !best.is_empty() {
                return Ok(best);
            }
        }
        Ok(Vec::new())
    }

    /// The next token: the greedy one if the constraint allows it, else the best allowed
    /// one under the full mask. `None` ends the document (end of generation, or a rejected
    /// greedy token where the document may end).
    fn next_token(
        &mut self,
        st: &mut Decoding,
        logits_buf: &mut Vec<f32>,
        stats: &mut Stats,
    ) -> Result<Option<LlamaToken>, GenerateError> {
        let t = Instant::now();
        let Some(token) = self.choose(st, logits_buf, stats)? else {
            st.constraint_time += t.elapsed().as_secs_f64();
            return Ok(None);
        };
        let token = self.hold_line(st, token, logits_buf, stats)?;
        st.constraint.accept(token)?;
        st.constraint_time += t.elapsed().as_secs_f64();
        Ok(Some(token))
    }

    /// What [`next_token`](Self::next_token) takes next, before any line holding, without
    /// accepting it: `None` ends the document.
    fn choose(
        &mut self,
        st: &mut Decoding,
        logits_buf: &mut Vec<f32>,
        stats: &mut Stats,
    ) -> Result<Option<LlamaToken>, GenerateError> {
        let logits = self.ctx.get_logits_ith(st.logits_at);
        let greedy = argmax(logits);
        let token = match greedy {
            Some(g) if st.constraint.allows(g)? => g,
            // Where the document may end and the model wants to write something the
            // grammar does not allow here (typically a section out of order), end it:
            // the alternative is forcing the model into content it did not intend. Not
            // under a pruned grammar: there the model's first choice is often a value the
            // request does not name, and the best value it does name is what is wanted.
            _ if self.opts.end_on_rejection
                && st.prune.is_none()
                && st.constraint.is_accepting() =>
            {
                return Ok(None);
            }
            _ => {
                stats.full_masks += 1;
                logits_buf.clear();
                logits_buf.extend_from_slice(logits);
                st.constraint.mask(logits_buf)?;
                match argmax(logits_buf) {
                    Some(t) if logits_buf[t.0 as usize] != f32::NEG_INFINITY => t,
                    _ => return Err(GenerateError::NoAllowedToken(st.partial())),
                }
            }
        };
        Ok((!self.model.eog.contains(&token)).then_some(token))
    }

    /// A token that ends a line while a value found only that line could take is still
    /// unwritten ([`CompiledSpec::line_leaves`]) is replaced by the best allowed token that
    /// does not end the line, if there is one: a call is not split over two lines.
    fn hold_line(
        &self,
        st: &mut Decoding,
        token: LlamaToken,
        logits_buf: &mut Vec<f32>,
        stats: &mut Stats,
    ) -> Result<LlamaToken, GenerateError> {
        let Some(p) = st.prune.as_ref().filter(|p| p.hold_lines) else {
            return Ok(token);
        };
        let piece = self.model.model.vocab().token_to_piece(token, false, None);
        let Some(nl) = piece.iter().position(|&b| b == b'\n') else {
            return Ok(token);
        };
        let mut text = st.text.clone();
        text.extend_from_slice(&piece[..=nl]);
        let Ok(text) = String::from_utf8(text) else {
            return Ok(token);
        };
        let leaves = self.pruner(&p.pruning).line_leaves(&text);
        if leaves.is_empty() {
            return Ok(token);
        }
        stats.held_lines += 1;
        let logits = self.ctx.get_logits_ith(st.logits_at);
        logits_buf.clear();
        logits_buf.extend_from_slice(logits);
        st.constraint.mask(logits_buf)?;
        for &t in self
            .model
            .line_ending_tokens()
            .iter()
            .chain(self.model.eog.iter())
        {
            if let Some(l) = logits_buf.get_mut(t.0 as usize) {
                *l = f32::NEG_INFINITY;
            }
        }
        Ok(match argmax(logits_buf) {
            Some(t) if logits_buf[t.0 as usize] != f32::NEG_INFINITY => t,
            _ => token,
        })
    }

    /// Repetition: a line repeated within its section ends the document before it (if
    /// what comes before is complete: returns true); a token loop is an error.
    fn check_repetition(&self, st: &mut Decoding) -> Result<bool, GenerateError> {
        if self.opts.format == OutputFormat::Shorthand {
            let newlines = st.text.iter().filter(|&&b| b == b'\n').count();
            if newlines > st.checked_newlines {
                st.checked_newlines = newlines;
                if let Some(cut) = repeated_line(&st.text) {
                    let head = String::from_utf8_lossy(&st.text[..cut]).into_owned();
                    if self.spec.expand_any_order(&head).is_ok() {
                        st.text.truncate(cut);
                        return Ok(true);
                    }
                    return Err(GenerateError::Repetition { partial: head });
                }
            }
        }
        if looping(&st.out) {
            // A loop inside a line (`drink 100000…`, `[(lettuce) (lettuce) …`) after complete
            // lines that make a document: the document ends before the looping line, as
            // before a repeated line. Else it is an error.
            if self.opts.format == OutputFormat::Shorthand {
                if let Some(cut) =
                    complete_lines(&st.text, |head| self.spec.expand_any_order(head).is_ok())
                {
                    st.text.truncate(cut);
                    return Ok(true);
                }
            }
            return Err(GenerateError::Repetition {
                partial: st.partial(),
            });
        }
        Ok(false)
    }

    /// Expands (shorthand) or parses (JSON) the output and validates it.
    fn finish(&self, text: &str) -> Result<Value, GenerateError> {
        let invalid = |message: String| GenerateError::Invalid {
            output: text.to_string(),
            message,
        };
        let value = match self.opts.format {
            // A pruned grammar lets the fields found come in any order (each once).
            OutputFormat::Shorthand => self
                .spec
                .expand_any_order(text)
                .map_err(|e| invalid(e.to_string()))?,
            OutputFormat::Json => {
                serde_json::from_str(text.trim()).map_err(|e| invalid(e.to_string()))?
            }
        };
        self.spec
            .validate(&value)
            .map_err(|e| invalid(e.describe()))?;
        Ok(value)
    }

    /// Cuts the cache after `keep` tokens; returns how many are really kept.
    fn cut(&mut self, keep: usize) -> usize {
        if keep >= self.cached.len() {
            return self.cached.len();
        }
        let ok = u32::try_from(keep).is_ok_and(|k| {
            self.ctx
                .clear_kv_cache_seq(Some(0), Some(k), None)
                .unwrap_or(false)
        });
        // A cache that dropped early positions (sliding window without `swa_full`) cannot
        // continue from the cut: start cold.
        let lost_early = keep > 0 && self.ctx.kv_cache_seq_pos_min(0) > 0;
        if !ok || lost_early {
            self.ctx.clear_kv_cache();
            self.cached.clear();
            return 0;
        }
        self.cached.truncate(keep);
        keep
    }

    /// Evaluates `tokens` at positions `pos..`; logits of the last one are kept.
    fn eval(&mut self, tokens: &[LlamaToken], pos: usize) -> Result<(), GenerateError> {
        self.eval_logits(tokens, pos, (pos + tokens.len()).saturating_sub(1))
    }

    /// Evaluates `tokens` at positions `pos..`, keeping the logits of every position from
    /// `logits_from` on that the last batch holds.
    fn eval_logits(
        &mut self,
        tokens: &[LlamaToken],
        pos: usize,
        logits_from: usize,
    ) -> Result<(), GenerateError> {
        debug_assert_eq!(pos, self.cached.len());
        if tokens.is_empty() {
            return Ok(());
        }
        self.logits = None;
        let mut batch = LlamaBatch::new(self.n_batch, 1);
        // Batches end at multiples of `n_batch` (absolute positions), so the same tokens
        // at the same positions are always evaluated in the same batches.
        let mut done = 0;
        while done < tokens.len() {
            self.check_time(self.eval_deadline, String::new)?;
            let at = pos + done;
            let len = (self.n_batch - at % self.n_batch).min(tokens.len() - done);
            let chunk = &tokens[done..done + len];
            batch.clear();
            let final_batch = done + len == tokens.len();
            for (i, &t) in chunk.iter().enumerate() {
                let p = i32::try_from(at + i).map_err(|e| GenerateError::Decode(e.to_string()))?;
                let logits = final_batch && at + i >= logits_from;
                batch
                    .add(t, p, &[0], logits)
                    .map_err(|e| GenerateError::Decode(e.to_string()))?;
            }
            self.ctx
                .decode(&mut batch)
                .map_err(|e| GenerateError::Decode(e.to_string()))?;
            self.calls.calls += 1;
            self.calls.tokens += len;
            self.cached.extend_from_slice(chunk);
            done += len;
            if final_batch {
                self.logits = Some((at, logits_from.max(at), at + len));
            }
        }
        Ok(())
    }
}

/// What one request produced, before its stats are attached.
struct Output {
    value: Value,
    text: String,
    cut_repetition: bool,
}

/// The text the decoding loop produced.
struct Decoded {
    text: String,
    /// The output was cut before a repeated line.
    cut_repetition: bool,
}

/// The state of one decoding loop.
struct Decoding {
    constraint: Box<dyn Constraint>,
    /// Seconds spent in the constraint engine.
    constraint_time: f64,
    out: Vec<LlamaToken>,
    text: Vec<u8>,
    /// Lines already checked for repetition.
    checked_newlines: usize,
    start: Instant,
    /// Iterative pruning, when the request is pruned.
    prune: Option<PruneState>,
    /// The prompt's length in tokens.
    prompt_len: usize,
    /// The prompt (the cache holds it up to its split when decoding begins).
    prompt: Prompt,
    /// Whether the model has read the whole prompt.
    prompt_read: bool,
    /// The index, in the last call's batch, of the logits after the output so far (set by
    /// [`Generator::flush`]).
    logits_at: i32,
}

/// A request's prompt, tokenized.
struct Prompt {
    tokens: Vec<LlamaToken>,
    /// Where the request's own tokens begin (after the shared prefix).
    split: usize,
}

/// A pruned grammar, prepared for `model` and `engine` (from the IR: no grammar text is
/// printed for llguidance).
fn prepared(
    model: &LocalModel,
    engine: EngineKind,
    grammar: dss_compiler::grammar::Grammar,
) -> Result<Grammar, GenerateError> {
    model.grammar(engine, &GrammarSource::Ir(grammar))
}

/// What a rebuild under pruning needs: the per-line pruning of the document
/// ([`Pruner`]: the spec, the request's candidates, what a written line consumes, the
/// grammar options) and the constraint engine. [`PrunedRest::after_lines`] is the step
/// [`Generator::generate_pruned`] takes after each complete line (public so that the
/// rebuild benchmark measures exactly it).
pub struct PrunedRest<'a> {
    /// The per-line pruning of the document.
    pub pruner: Pruner<'a>,
    /// The constraint engine.
    pub engine: EngineKind,
}

impl PrunedRest<'_> {
    /// The constraint for the rest of the document after the complete lines of `text`,
    /// under the candidates less what those lines used. `None` when the lines so far
    /// cannot be resumed after (the decoder keeps the constraint it has).
    ///
    /// # Errors
    /// A grammar the engine rejects.
    pub fn after_lines(
        &self,
        model: &LocalModel,
        text: &str,
    ) -> Result<Option<Box<dyn Constraint>>, GenerateError> {
        let Ok(Some(rest)) = self.pruner.after_lines(text) else {
            return Ok(None);
        };
        let grammar = prepared(model, self.engine, rest.grammar)?;
        Ok(Some(grammar.start(&model.model, model.eog.clone())?))
    }
}

/// Iterative pruning during one decoding loop.
struct PruneState {
    /// The request's candidates (lists held with lines) and what a line consumes.
    pruning: Pruning,
    /// See [`GeneratorOptions::split_lines`] (negated).
    hold_lines: bool,
    /// Output length when lines were last read.
    checked: usize,
}

impl Decoding {
    /// Appends an output token (its text too); the first one sets the time to first token.
    fn push(&mut self, token: LlamaToken, model: &LlamaModel, stats: &mut Stats) {
        // Forced text written before the model has read the prompt counts from the call
        // that reads it ([`Generator::flush`]).
        if self.out.is_empty() && self.prompt_read {
            stats.ttft_ms = ms(self.start);
        }
        self.out.push(token);
        self.text
            .extend(model.vocab().token_to_piece(token, false, None));
    }

    /// The output so far, for error messages.
    fn partial(&self) -> String {
        String::from_utf8_lossy(&self.text).into_owned()
    }
}

fn ms(start: Instant) -> f64 {
    start.elapsed().as_secs_f64() * 1e3
}

fn argmax(logits: &[f32]) -> Option<LlamaToken> {
    let mut best: Option<(usize, f32)> = None;
    for (i, &l) in logits.iter().enumerate() {
        if best.is_none_or(|(_, b)| l > b) {
            best = Some((i, l));
        }
    }
    best.and_then(|(i, _)| i32::try_from(i).ok().map(LlamaToken))
}

/// If the last complete line of `text` repeats an earlier line of the same section (lines
/// after the last `name:` header), the byte offset where that last line starts.
fn repeated_line(text: &[u8]) -> Option<usize> {
    let end = text.iter().rposition(|&b| b == b'\n')?;
    let start = text[..end]
        .iter()
        .rposition(|&b| b == b'\n')
        .map_or(0, |i| i + 1);
    let line = &text[start..end];
    if line.is_empty() || line.ends_with(b":") {
        return None;
    }
    for earlier in text[..start].split(|&b| b == b'\n').rev() {
        if earlier.ends_with(b":") {
            break;
        }
        if earlier == line {
            return Some(start);
        }
    }
    None
}

/// The length of `text` up to its last newline, when that prefix is not empty and
/// `expands` accepts it.
fn complete_lines(text: &[u8], expands: impl Fn(&str) -> bool) -> Option<usize> {
    let cut = text.iter().rposition(|&b| b == b'\n')? + 1;
    let head = std::str::from_utf8(&text[..cut]).ok()?;
    (!head.trim().is_empty() && expands(head)).then_some(cut)
}

/// Whether the output ends in a loop: the same 1–16 tokens at least 4 times over the last
/// 32 or more tokens.
fn looping(out: &[LlamaToken]) -> bool {
    (1..=16).any(|p| {
        let n = (4 * p).max(32);
        n <= out.len() && {
            let tail = &out[out.len() - n..];
            tail.iter().skip(p).zip(tail).all(|(a, b)| a == b)
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn repeated_lines_are_found_within_a_section() {
        let t = b"fields:\n\"A\" sum\n\"B\"\n\"A\" sum\n";
        assert_eq!(repeated_line(t), Some(t.len() - 8));
        // Same line in another section is fine.
        assert_eq!(
            repeated_line(b"fields:\n\"A\" sum\nsort:\n\"A\" sum\n"),
            None
        );
        assert_eq!(repeated_line(b"fields:\n\"A\"\n\"B\"\n"), None);
        assert_eq!(repeated_line(b"fields:\n\"A\"\n\"A"), None);
        assert_eq!(repeated_line(b""), None);
    }

    #[test]
    fn a_loop_ends_the_document_after_its_complete_lines() {
        let ok = |h: &str| h.lines().all(|l| l.starts_with("side"));
        let t = b"side 1\nside 2\ndrink 1000000000";
        assert_eq!(complete_lines(t, ok), Some(14));
        // No complete line, or complete lines that do not expand: no document.
        assert_eq!(complete_lines(b"drink 100000", ok), None);
        assert_eq!(complete_lines(b"\ndrink 100000", ok), None);
        assert_eq!(complete_lines(b"drink 1\nside 1000", ok), None);
    }

    #[test]
    fn loops_need_a_long_periodic_tail() {
        let t = |v: &[i32]| v.iter().map(|&i| LlamaToken(i)).collect::<Vec<_>>();
        assert!(!looping(&t(&[1; 31])));
        assert!(looping(&t(&[1; 32])));
        let mut v: Vec<i32> = (0..10).collect();
        for _ in 0..11 {
            v.extend([7, 8, 9]);
        }
        assert!(looping(&t(&v)));
        let varied: Vec<i32> = (0..100).collect();
        assert!(!looping(&t(&varied)));
    }

    #[test]
    fn argmax_picks_the_largest() {
        assert_eq!(argmax(&[0.0, 3.0, -1.0]), Some(LlamaToken(1)));
        assert_eq!(argmax(&[]), None);
    }
}
