//! Constraint engines: what may come next, given what the model has written so far.
//!
//! Every engine answers the same questions, so the decoding loop in [`crate::generate`]
//! is written once and the engines can be measured against each other:
//! - [`Constraint::allows`]: may this one token come next? Asked first for the model's
//!   greedy token, which is nearly always right, so the full mask is rarely needed;
//! - [`Constraint::mask`]: the full mask, only when the greedy token was rejected;
//! - [`Constraint::forced_bytes`]: text the grammar forces (fast-forward, no sampling needed);
//! - [`Constraint::is_accepting`] / [`Constraint::is_finished`]: may / must the model stop.
//!
//! The engines:
//! - [`EngineKind::Llguidance`] (default): llguidance's Earley parser with a token trie,
//!   over the Lark grammar printed from dss's grammar IR ([`lark`]), built
//!   into llguidance's grammar directly (`llg.rs`). Single-token checks cost
//!   microseconds; full masks well under a millisecond; it knows the forced bytes.
//! - [`EngineKind::Gbnf`]: llama.cpp's own GBNF sampler (the baseline): greedy token
//!   first, the whole vocabulary only on rejection. No fast-forward.
//! - [`EngineKind::Unconstrained`]: nothing is checked (for benchmarks).
//!
//! A [`Grammar`] is prepared once (Lark printing, llguidance's grammar and lexer; or GBNF
//! printing and llama.cpp's parsing) and instantiated per request
//! ([`Grammar::start`]), so a request can use a different grammar than the one before
//! (per-request pruning), and an engine may replace its grammar mid-request.

/// The Lark structure printed from dss's grammar IR (dss-compiler's printer, the one
/// that writes `shorthand.lark`): what the llguidance engine builds its grammar from.
pub use dss_compiler::grammar::lark;

use std::sync::Arc;

use llama_cpp_2::model::LlamaModel;
use llama_cpp_2::sampling::LlamaSampler;
use llama_cpp_2::token::data::LlamaTokenData;
use llama_cpp_2::token::data_array::LlamaTokenDataArray;
use llama_cpp_2::token::LlamaToken;
use llguidance::api::{GrammarInit, TopLevelGrammar};
use llguidance::{Matcher, ParserFactory};
use toktrie::{TokEnv, TokenId};

use crate::gbnf::GbnfChecker;

/// Which constraint engine decodes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum EngineKind {
    /// llguidance over the Lark grammar printed from dss's grammar IR: greedy-first
    /// checks, fast-forward.
    #[default]
    Llguidance,
    /// llama.cpp's GBNF sampler, greedy token first (the baseline).
    Gbnf,
    /// No constraint at all.
    Unconstrained,
}

impl EngineKind {
    /// The name used on the command line and in reports.
    pub fn name(self) -> &'static str {
        match self {
            Self::Llguidance => "llguidance",
            Self::Gbnf => "gbnf",
            Self::Unconstrained => "none",
        }
    }

    /// Parses [`name`](Self::name).
    pub fn from_name(name: &str) -> Option<Self> {
        match name {
            "llguidance" | "llg" => Some(Self::Llguidance),
            "gbnf" => Some(Self::Gbnf),
            "none" | "unconstrained" => Some(Self::Unconstrained),
            _ => None,
        }
    }
}

/// Errors from preparing or running a constraint.
#[derive(Debug, Clone, thiserror::Error)]
#[non_exhaustive]
pub enum EngineError {
    /// The grammar could not be converted or compiled.
    #[error("the grammar cannot be used: {0}")]
    Grammar(String),
    /// The engine failed on a token it had allowed (an engine bug, reported, not a panic).
    #[error("constraint engine error: {0}")]
    Engine(String),
}

/// What a grammar is written in.
#[derive(Debug, Clone)]
pub enum GrammarSource {
    /// dss's grammar IR: a spec's grammar, its generation grammar or a pruned grammar
    /// ([`dss_compiler::CompiledSpec::pruned_grammar`]). The llguidance engine builds its
    /// grammar from the Lark structure printed from it
    /// ([`dss_compiler::grammar::Grammar::to_lark_grammar`]); the GBNF engine gets its GBNF
    /// ([`dss_compiler::grammar::Grammar::to_gbnf`]). Both say the same language.
    Ir(dss_compiler::grammar::Grammar),
    /// GBNF text with the start rule `root` (dss's `shorthand.gbnf`, or written by hand):
    /// for the GBNF engine (llama.cpp's sampler) only. The llguidance engine refuses it
    /// ([`EngineError::Grammar`]): it takes dss's grammar IR ([`GrammarSource::Ir`]).
    Gbnf(String),
    /// A JSON Schema: compact JSON output (llguidance only; for comparisons).
    JsonSchema(serde_json::Value),
}

/// A grammar prepared for one model and engine; [`start`](Self::start) it per request.
pub struct Grammar {
    kind: EngineKind,
    inner: GrammarInner,
}

enum GrammarInner {
    Llg(Box<Matcher>),
    Gbnf(String),
    None,
}

impl Grammar {
    /// Prepares `source` for `engine`. `tok_env` is the model's llguidance token
    /// environment ([`crate::LocalModel`] builds it once).
    pub fn new(
        engine: EngineKind,
        source: &GrammarSource,
        tok_env: &TokEnv,
        model: &LlamaModel,
    ) -> Result<Self, EngineError> {
        let factory = match engine {
            EngineKind::Llguidance => Some(parser_factory(tok_env)?),
            _ => None,
        };
        Self::with_factory(engine, source, factory.as_ref(), model)
    }

    /// [`new`](Self::new) with llguidance's parser factory built already (one per model:
    /// building it reads the whole vocabulary, a grammar alone does not). `factory` is
    /// needed for [`EngineKind::Llguidance`] only.
    pub fn with_factory(
        engine: EngineKind,
        source: &GrammarSource,
        factory: Option<&ParserFactory>,
        model: &LlamaModel,
    ) -> Result<Self, EngineError> {
        let inner = match engine {
            EngineKind::Unconstrained => GrammarInner::None,
            EngineKind::Llguidance => {
                let factory = factory.ok_or_else(|| {
                    EngineError::Grammar("llguidance needs a parser factory".into())
                })?;
                let init = match source {
                    // Built from the Lark structure, not parsed from Lark text: see `llg`.
                    GrammarSource::Ir(g) => {
                        let lark = g
                            .to_lark_grammar()
                            .map_err(|e| EngineError::Grammar(e.to_string()))?;
                        crate::llg::grammar_init(&lark, factory.limits().initial_lexer_fuel)
                            .map_err(|e| EngineError::Grammar(e.to_string()))?
                    }
                    GrammarSource::Gbnf(_) => {
                        return Err(EngineError::Grammar(
                            "the llguidance engine takes dss's grammar (GrammarSource::Ir), \
                             not GBNF text; GBNF text runs on the gbnf engine"
                                .into(),
                        ))
                    }
                    GrammarSource::JsonSchema(schema) => {
                        let mut schema = schema.clone();
                        if let Some(obj) = schema.as_object_mut() {
                            obj.insert(
                                "x-guidance".into(),
                                serde_json::json!({
                                    "whitespace_flexible": false,
                                    "item_separator": ",",
                                    "key_separator": ":",
                                    "lenient": true
                                }),
                            );
                        }
                        GrammarInit::Serialized(TopLevelGrammar::from_json_schema(schema))
                    }
                };
                let parser = factory
                    .create_parser_from_init_default(init)
                    .map_err(|e| EngineError::Grammar(e.to_string()))?;
                let matcher = Matcher::new(Ok(parser));
                if let Some(e) = matcher.get_error() {
                    return Err(EngineError::Grammar(e));
                }
                GrammarInner::Llg(Box::new(matcher))
            }
            EngineKind::Gbnf => {
                let g = match source {
                    GrammarSource::Ir(g) => g.to_gbnf(),
                    GrammarSource::Gbnf(g) => g.clone(),
                    GrammarSource::JsonSchema(_) => {
                        return Err(EngineError::Grammar(
                            "the GBNF engine needs a GBNF grammar, not a JSON Schema".into(),
                        ))
                    }
                };
                // Checked with llama.cpp's parser now, so a bad grammar is an error here
                // and not an abort later.
                GbnfChecker::check_with(model, &g, "root")
                    .map_err(|e| EngineError::Grammar(e.to_string()))?;
                GrammarInner::Gbnf(g)
            }
        };
        Ok(Self {
            kind: engine,
            inner,
        })
    }

    /// The engine this grammar runs on.
    pub fn engine(&self) -> EngineKind {
        self.kind
    }

    /// A fresh constraint at the start of the grammar.
    pub fn start(
        &self,
        model: &LlamaModel,
        eog: Arc<[LlamaToken]>,
    ) -> Result<Box<dyn Constraint>, EngineError> {
        Ok(match &self.inner {
            GrammarInner::None => Box::new(Unconstrained { eog }),
            GrammarInner::Llg(m) => Box::new(LlgConstraint {
                matcher: m.deep_clone(),
                eog,
            }),
            GrammarInner::Gbnf(g) => {
                let sampler = GbnfChecker::sampler_with(model, g, "root")
                    .map_err(|e| EngineError::Grammar(e.to_string()))?;
                Box::new(GbnfConstraint {
                    sampler,
                    eog,
                    scratch: Vec::new(),
                })
            }
        })
    }
}

/// llguidance's parser factory for a model's vocabulary (quiet: no parser logs).
pub fn parser_factory(tok_env: &TokEnv) -> Result<ParserFactory, EngineError> {
    let mut factory =
        ParserFactory::new_simple(tok_env).map_err(|e| EngineError::Grammar(e.to_string()))?;
    factory.quiet();
    Ok(factory)
}

/// One request's constraint state. See the module docs.
pub trait Constraint {
    /// Whether `token` may come next. An end-of-generation token is allowed exactly when
    /// the document may end here.
    fn allows(&mut self, token: LlamaToken) -> Result<bool, EngineError>;
    /// Sets the logit of every token that may not come next to `-inf`.
    fn mask(&mut self, logits: &mut [f32]) -> Result<(), EngineError>;
    /// Advances past `token`, which [`allows`](Self::allows) or [`mask`](Self::mask) allowed.
    fn accept(&mut self, token: LlamaToken) -> Result<(), EngineError>;
    /// Bytes that must come next whatever the model does (empty if there is a choice).
    fn forced_bytes(&mut self) -> Vec<u8>;
    /// Advances past as many of `tokens` as the grammar allows; returns how many.
    fn accept_forced(&mut self, tokens: &[LlamaToken]) -> Result<usize, EngineError>;
    /// Whether the document may end here.
    fn is_accepting(&mut self) -> bool;
    /// Whether the document must end here (nothing else can follow).
    fn is_finished(&mut self) -> bool;
    /// How many of `tokens`, in order, the grammar allows from here, without advancing.
    /// An engine that cannot look ahead checks the first one only.
    fn valid_prefix(&mut self, tokens: &[LlamaToken]) -> Result<usize, EngineError> {
        match tokens.first() {
            Some(&t) => Ok(usize::from(self.allows(t)?)),
            None => Ok(0),
        }
    }
}

fn is_eog(eog: &[LlamaToken], t: LlamaToken) -> bool {
    eog.contains(&t)
}

struct Unconstrained {
    eog: Arc<[LlamaToken]>,
}

impl Constraint for Unconstrained {
    fn allows(&mut self, _: LlamaToken) -> Result<bool, EngineError> {
        Ok(true)
    }
    fn mask(&mut self, _: &mut [f32]) -> Result<(), EngineError> {
        Ok(())
    }
    fn accept(&mut self, _: LlamaToken) -> Result<(), EngineError> {
        Ok(())
    }
    fn forced_bytes(&mut self) -> Vec<u8> {
        Vec::new()
    }
    fn accept_forced(&mut self, tokens: &[LlamaToken]) -> Result<usize, EngineError> {
        Ok(tokens
            .iter()
            .take_while(|t| !is_eog(&self.eog, **t))
            .count())
    }
    fn is_accepting(&mut self) -> bool {
        true
    }
    fn is_finished(&mut self) -> bool {
        false
    }
}

struct LlgConstraint {
    matcher: Matcher,
    eog: Arc<[LlamaToken]>,
}

fn tid(t: LlamaToken) -> TokenId {
    u32::try_from(t.0).unwrap_or(u32::MAX)
}

impl LlgConstraint {
    fn error(&self, what: &str) -> EngineError {
        EngineError::Engine(format!(
            "{what}: {}",
            self.matcher.get_error().unwrap_or_else(|| "unknown".into())
        ))
    }
}

impl Constraint for LlgConstraint {
    fn allows(&mut self, token: LlamaToken) -> Result<bool, EngineError> {
        if is_eog(&self.eog, token) {
            return Ok(self.is_accepting());
        }
        if self.matcher.is_stopped() {
            return Ok(false);
        }
        let n = self
            .matcher
            .validate_tokens(&[tid(token)])
            .map_err(|e| EngineError::Engine(e.to_string()))?;
        Ok(n == 1)
    }

    fn mask(&mut self, logits: &mut [f32]) -> Result<(), EngineError> {
        let accepting = self.is_accepting();
        let eog_logits: Vec<(usize, f32)> = self
            .eog
            .iter()
            .filter_map(|t| usize::try_from(t.0).ok())
            .filter_map(|i| logits.get(i).map(|&l| (i, l)))
            .collect();
        if self.matcher.is_stopped() {
            logits.fill(f32::NEG_INFINITY);
        } else {
            let mask = self
                .matcher
                .compute_mask()
                .map_err(|e| EngineError::Engine(e.to_string()))?;
            mask.iter_unset_entries(|i| {
                if let Some(l) = logits.get_mut(i) {
                    *l = f32::NEG_INFINITY;
                }
            });
            if let Some(rest) = logits.get_mut(mask.len()..) {
                rest.fill(f32::NEG_INFINITY);
            }
        }
        // End-of-generation exactly when the document may end.
        for (i, l) in eog_logits {
            logits[i] = if accepting { l } else { f32::NEG_INFINITY };
        }
        Ok(())
    }

    fn accept(&mut self, token: LlamaToken) -> Result<(), EngineError> {
        if is_eog(&self.eog, token) {
            return Ok(());
        }
        self.matcher
            .consume_token(tid(token))
            .map_err(|_| self.error("consume"))
    }

    fn forced_bytes(&mut self) -> Vec<u8> {
        if self.matcher.is_stopped() {
            return Vec::new();
        }
        self.matcher.compute_ff_bytes()
    }

    fn accept_forced(&mut self, tokens: &[LlamaToken]) -> Result<usize, EngineError> {
        let ids: Vec<TokenId> = tokens.iter().map(|&t| tid(t)).collect();
        self.matcher
            .try_consume_tokens(&ids)
            .map_err(|_| self.error("fast-forward"))
    }

    fn is_accepting(&mut self) -> bool {
        self.matcher.is_stopped() || self.matcher.is_accepting().unwrap_or(false)
    }

    fn valid_prefix(&mut self, tokens: &[LlamaToken]) -> Result<usize, EngineError> {
        if self.matcher.is_stopped() {
            return Ok(0);
        }
        let ids: Vec<TokenId> = tokens
            .iter()
            .take_while(|&&t| !is_eog(&self.eog, t))
            .map(|&t| tid(t))
            .collect();
        self.matcher
            .validate_tokens(&ids)
            .map_err(|e| EngineError::Engine(e.to_string()))
    }

    fn is_finished(&mut self) -> bool {
        self.matcher.is_stopped()
    }
}

struct GbnfConstraint {
    sampler: LlamaSampler,
    eog: Arc<[LlamaToken]>,
    scratch: Vec<LlamaTokenData>,
}

impl GbnfConstraint {
    fn allows_one(&mut self, token: LlamaToken) -> bool {
        let mut candidates =
            LlamaTokenDataArray::new(vec![LlamaTokenData::new(token, 0.0, 0.0)], false);
        self.sampler.apply(&mut candidates);
        candidates
            .data
            .first()
            .is_some_and(|d| d.logit() != f32::NEG_INFINITY)
    }
}

impl Constraint for GbnfConstraint {
    fn allows(&mut self, token: LlamaToken) -> Result<bool, EngineError> {
        Ok(self.allows_one(token))
    }

    fn mask(&mut self, logits: &mut [f32]) -> Result<(), EngineError> {
        let mut data = std::mem::take(&mut self.scratch);
        data.clear();
        data.extend(
            logits
                .iter()
                .enumerate()
                .map(|(i, &l)| LlamaTokenData::new(LlamaToken(i as i32), l, 0.0)),
        );
        let mut arr = LlamaTokenDataArray::new(data, false);
        self.sampler.apply(&mut arr);
        for d in &arr.data {
            if let Some(l) = usize::try_from(d.id().0)
                .ok()
                .and_then(|i| logits.get_mut(i))
            {
                *l = d.logit();
            }
        }
        self.scratch = arr.data;
        Ok(())
    }

    fn accept(&mut self, token: LlamaToken) -> Result<(), EngineError> {
        if is_eog(&self.eog, token) {
            return Ok(());
        }
        // `try_accept`: llama.cpp throws on a disallowed token; never abort.
        self.sampler
            .try_accept(token)
            .map_err(|e| EngineError::Engine(format!("llama.cpp grammar: {e}")))
    }

    fn forced_bytes(&mut self) -> Vec<u8> {
        Vec::new()
    }

    fn accept_forced(&mut self, tokens: &[LlamaToken]) -> Result<usize, EngineError> {
        let mut n = 0;
        for &t in tokens {
            if is_eog(&self.eog, t) || !self.allows_one(t) {
                break;
            }
            self.accept(t)?;
            n += 1;
        }
        Ok(n)
    }

    fn is_accepting(&mut self) -> bool {
        let first = self.eog.first().copied();
        first.is_some_and(|t| self.allows_one(t))
    }

    fn is_finished(&mut self) -> bool {
        false
    }
}
