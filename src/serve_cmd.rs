//! `dss generate --backend openai`: the request's pruned grammar sent to an
//! OpenAI-compatible server (llama-server, vLLM, SGLang), the answer expanded and validated
//! as in process; `--jsonl` with `--concurrency N` requests in flight, results in input
//! order, every failure an error record. Built with or without the `runtime` feature.

use anyhow::{anyhow, bail, Context, Result};
use clap::{Args, ValueEnum};
use dss_compiler::prune::{Consume, GrammarOptions};
use dss_compiler::CompiledSpec;
use dss_extract::{Analysis, PruneTier, SpecIndex};
use dss_serve::{
    load_examples, run_ordered, Client, Example, Input, Mode, Pruning, ServeError, ServeOptions,
    Served, ServedGenerator, ServerConfig, ServerKind,
};
use serde_json::{json, Value};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Duration;

use crate::prune_cmd::{PruneArgs, Requests};
use crate::streams::{self, ErrorsTo, RecordError, RecordInfo};
use crate::{load_spec, open_input, write_stdout};

/// Where the model runs.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, ValueEnum)]
pub(crate) enum Backend {
    /// llama.cpp in this process (`--model`; needs the `runtime` feature).
    #[default]
    Local,
    /// An OpenAI-compatible server at `--url` (llama-server, vLLM, SGLang).
    Openai,
}

/// The server backend's flags (`dss generate --backend openai …`).
#[derive(Args, Clone, Debug)]
pub(crate) struct BackendArgs {
    /// Where the model runs: `local` (llama.cpp in this process) or `openai` (an
    /// OpenAI-compatible server at --url, sent the request's pruned grammar).
    #[arg(long, value_enum, default_value_t = Backend::Local)]
    pub backend: Backend,
    /// With --backend openai: the server's base URL (`http://127.0.0.1:8080`; `/v1` may
    /// follow).
    #[arg(long, value_name = "URL")]
    pub url: Option<String>,
    /// With --backend openai: the environment variable holding the API key (sent as
    /// `Authorization: Bearer …`).
    #[arg(long, value_name = "VAR")]
    pub api_key_env: Option<String>,
    /// With --backend openai: the server, which decides the field the grammar goes in:
    /// llama-server (`grammar`), vllm (`structured_outputs.grammar`), vllm-legacy
    /// (`guided_grammar`), sglang (`ebnf`).
    #[arg(long, default_value = "llama-server", value_parser = parse_kind)]
    pub server_kind: ServerKind,
    /// With --backend openai: the `model` of each request [default: the first model the
    /// server lists at /v1/models].
    #[arg(long, value_name = "NAME")]
    pub server_model: Option<String>,
    /// With --backend openai: `single` (one request under the request's pruned grammar;
    /// any server) or `per-line` (llama-server: one round trip per line under the grammar
    /// of the rest, the values each line used consumed, as in process).
    #[arg(long, default_value = "single", value_parser = parse_mode)]
    pub serve_mode: Mode,
    /// With --backend openai and --jsonl: requests in flight at once (results keep the
    /// input order).
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..=1024))]
    pub concurrency: u32,
    /// With --backend openai: retries of a request after a connection failure, HTTP 429 or
    /// 5xx (waiting 0.5 s, then twice as long each time).
    #[arg(long, default_value_t = 2)]
    pub retries: u32,
    /// With --backend openai and --jsonl: where failed requests are reported: `stderr`, or
    /// `inline` on stdout in the request's place as `{"dss_error": {…}}` (implies
    /// --keep-going).
    #[arg(long, value_name = "WHERE", value_enum, default_value_t = ErrorsTo::Stderr)]
    pub errors: ErrorsTo,
}

impl BackendArgs {
    /// Whether the request goes to a server.
    pub(crate) fn is_server(&self) -> bool {
        self.backend == Backend::Openai
    }
}

fn parse_kind(s: &str) -> Result<ServerKind, String> {
    ServerKind::from_name(s).ok_or_else(|| {
        format!(
            "unknown server kind `{s}` ({})",
            ServerKind::ALL.map(|(_, n)| n).join(", ")
        )
    })
}

fn parse_mode(s: &str) -> Result<Mode, String> {
    Mode::from_name(s).ok_or_else(|| format!("unknown mode `{s}` (single, per-line)"))
}

pub(crate) fn parse_secs(s: &str) -> Result<f64, String> {
    match s.parse::<f64>() {
        Ok(x) if x > 0.0 && x.is_finite() => Ok(x),
        _ => Err(format!("`{s}` is not a positive number of seconds")),
    }
}

fn parse_consume(s: &str) -> Result<Consume, String> {
    Consume::from_name(s).ok_or_else(|| format!("unknown consume mode `{s}` (class, value, off)"))
}

/// The flags `dss generate` has with either backend (flattened into the local runtime's
/// `GenerateArgs` and into `ServeGenerateArgs`).
#[derive(Args)]
pub(crate) struct GenerateCommon {
    /// The compiled spec (directory from `dss compile -o`, spec.json, or a schema file).
    #[arg(long, value_name = "PATH")]
    pub spec: PathBuf,
    /// The request, or --jsonl (in process, the shared prompt prefix is evaluated once for
    /// all lines).
    #[command(flatten)]
    pub(crate) requests: Requests,
    /// Also print the raw shorthand the model wrote (before the JSON; with --jsonl each
    /// line is {"shorthand": ..., "json": ...}).
    #[arg(long)]
    pub shorthand: bool,
    /// Print one JSON line of measurements per request to stderr.
    #[arg(long)]
    pub stats: bool,
    /// Print compact JSON (always so with --jsonl).
    #[arg(long)]
    pub compact: bool,
    /// Output token budget [default: sized from the spec's examples].
    #[arg(long, value_parser = clap::value_parser!(u32).range(1..))]
    pub max_tokens: Option<u32>,
    /// Worked examples for the prompt, JSON Lines of {"request": ..., "output": ...}
    /// [default: examples.jsonl in the spec directory, if present].
    #[arg(long, value_name = "FILE")]
    pub examples: Option<PathBuf>,
    /// Use no worked examples.
    #[arg(long, conflicts_with = "examples")]
    pub no_examples: bool,
    /// Print the prompt each request would be given and generate nothing: in process the
    /// whole text (chat template, worked examples, the grammar, the request and the items
    /// found in it), with --backend openai the chat messages it would be sent.
    #[arg(long)]
    pub print_prompt: bool,
    /// Use the full grammar (no grammar pruning by the request's values).
    #[arg(long)]
    pub no_prune: bool,
    #[command(flatten)]
    pub prune: PruneArgs,
    /// What a written line consumes from the values found: the (site, value) pair, the
    /// value at every site, or nothing (with --backend openai: --serve-mode per-line only).
    #[arg(long, default_value = "class", value_parser = parse_consume)]
    pub consume: Consume,
    /// Do not add the values found to the prompt ("Items found: …" after the request).
    #[arg(long)]
    pub no_items: bool,
    /// Let the model write properties the schema does not declare wherever the schema
    /// admits them (by default only where it allows them explicitly: `additionalProperties`
    /// other than `false`, or `patternProperties`).
    #[arg(long)]
    pub allow_undeclared: bool,
    /// Seconds one request may take, from the request to its document (prompt, grammar,
    /// decoding; with --backend openai also each HTTP round trip): past it the request
    /// fails with an error record, as at the token limit.
    #[arg(long, value_name = "SECS", default_value_t = 60.0, value_parser = parse_secs)]
    pub timeout: f64,
}

impl GenerateCommon {
    /// The worked examples (`--examples`, `--no-examples`, else beside the spec).
    pub(crate) fn worked_examples(&self) -> Result<Vec<Example>> {
        spec_examples(&self.spec, self.examples.as_deref(), self.no_examples)
    }

    /// The entity index pruning reads (`None` with --no-prune or when the spec names no
    /// values), taught by the worked examples the words it infers and the contexts of
    /// each field's values.
    pub(crate) fn index(
        &self,
        spec: &CompiledSpec,
        examples: &[Example],
    ) -> Result<Option<SpecIndex>> {
        if self.no_prune {
            return Ok(None);
        }
        self.prune
            .learned_index(&self.spec, spec, examples)
            .map(Some)
    }

    /// The analysis of `request` (`None` without an index) and the request as the prompt
    /// carries it: followed by the items found, unless --no-items.
    pub(crate) fn analyze(
        &self,
        index: Option<&SpecIndex>,
        request: &str,
    ) -> (String, Option<Analysis>) {
        let Some(index) = index else {
            return (request.to_string(), None);
        };
        let a = self.prune.analyze(index, request);
        let prompt_request = if self.no_items {
            request.to_string()
        } else {
            a.prompt(request)
        };
        (prompt_request, Some(a))
    }

    /// One `--jsonl` output line: the JSON, or with --shorthand
    /// `{"shorthand": …, "json": …}`.
    pub(crate) fn record(&self, text: String, value: Value) -> String {
        if self.shorthand {
            json!({"shorthand": text, "json": value}).to_string()
        } else {
            value.to_string()
        }
    }

    /// One request's answer on stdout: with --shorthand the text first, then the JSON
    /// (pretty unless --compact).
    pub(crate) fn write_answer(&self, text: &str, value: &Value) -> Result<()> {
        if self.shorthand {
            write_stdout(text)?;
        }
        let json = if self.compact {
            serde_json::to_string(value)?
        } else {
            serde_json::to_string_pretty(value)?
        };
        write_stdout(&json)
    }
}

/// A restriction's tier as `--stats` names it (`exact`, `fuzzy`, `nearest`).
pub(crate) fn tier_name(tier: PruneTier) -> String {
    serde_json::to_value(tier)
        .ok()
        .and_then(|v| v.as_str().map(str::to_string))
        .unwrap_or_default()
}

/// `dss generate` in a build without the `runtime` feature: the server backend only.
#[cfg(not(feature = "runtime"))]
#[derive(Args)]
pub(crate) struct ServeGenerateArgs {
    #[command(flatten)]
    pub common: GenerateCommon,
    #[command(flatten)]
    pub backend: BackendArgs,
}

/// `dss generate` without the runtime: `--backend openai` is the only backend.
#[cfg(not(feature = "runtime"))]
pub(crate) fn run_without_runtime(args: &ServeGenerateArgs) -> Result<ExitCode> {
    if !args.backend.is_server() {
        bail!(
            "this dss was built without the local runtime (feature `runtime`): pass --backend openai --url URL to use a server"
        );
    }
    run(&args.common, &args.backend)
}

/// The examples for a spec: `--examples`, else `DIR/examples.jsonl` (or beside spec.json).
pub(crate) fn spec_examples(
    spec: &Path,
    explicit: Option<&Path>,
    none: bool,
) -> Result<Vec<Example>> {
    if none {
        return Ok(Vec::new());
    }
    if let Some(p) = explicit {
        return Ok(load_examples(p)?);
    }
    let dir = if spec.is_dir() {
        Some(spec.to_path_buf())
    } else if spec.file_name().and_then(|n| n.to_str()) == Some("spec.json") {
        spec.parent().map(Path::to_path_buf)
    } else {
        None
    };
    match dir.map(|d| d.join("examples.jsonl")) {
        Some(p) if p.is_file() => Ok(load_examples(&p)?),
        _ => Ok(Vec::new()),
    }
}

/// The client for `--url`, with the key from `--api-key-env`.
pub(crate) fn client(b: &BackendArgs, timeout: f64) -> Result<Client> {
    let Some(url) = &b.url else {
        bail!(
            "--backend openai needs --url URL (the server's base URL, e.g. http://127.0.0.1:8080)"
        );
    };
    let api_key = match &b.api_key_env {
        None => None,
        Some(var) => match std::env::var(var) {
            Ok(k) if !k.is_empty() => Some(k),
            _ => bail!("--api-key-env {var}: the environment variable {var} is not set"),
        },
    };
    let mut cfg = ServerConfig::new(url);
    cfg.api_key = api_key;
    cfg.api_key_env = b.api_key_env.clone();
    cfg.timeout = Duration::from_secs_f64(timeout);
    cfg.retries = b.retries;
    Ok(Client::new(cfg))
}

/// The request's analysis for the prompt and the grammar.
struct Prepared {
    prompt_request: String,
    pruning: Option<Pruning>,
    tier: Option<String>,
}

fn prepare(c: &GenerateCommon, index: Option<&SpecIndex>, request: &str) -> Prepared {
    let (prompt_request, a) = c.analyze(index, request);
    Prepared {
        prompt_request,
        tier: a.as_ref().map(|a| tier_name(a.tier)),
        pruning: a.map(|a| Pruning {
            restriction: a.restriction,
            consume: c.consume,
        }),
    }
}

/// One request: pruned (with the items in the prompt), retried once under the full
/// grammar if the answer fails (as in process); transport errors are not retried that way.
fn one(
    gen: &ServedGenerator,
    c: &GenerateCommon,
    index: Option<&SpecIndex>,
    request: &str,
) -> (Result<Served, ServeError>, Option<String>) {
    let p = prepare(c, index, request);
    let first = gen.generate(&p.prompt_request, p.pruning.as_ref());
    match first {
        Err(e) if e.is_answer() && p.pruning.is_some() => {
            streams::report(&format!(
                "warning: the answer under the pruned grammar failed ({e}); retrying under the full grammar"
            ));
            (gen.generate(request, None), Some("full".into()))
        }
        r => (r, p.tier),
    }
}

/// The measurements line of one request (`--stats`).
fn stats_line(
    served: Option<&Served>,
    error: Option<&ServeError>,
    tier: Option<&str>,
    b: &BackendArgs,
) {
    let mut v = match served {
        Some(s) => serde_json::to_value(&s.stats).unwrap_or_else(|_| json!({})),
        None => json!({}),
    };
    if let Value::Object(o) = &mut v {
        o.insert("ok".into(), json!(error.is_none()));
        if let Some(e) = error {
            o.insert("error".into(), json!(e.to_string()));
            o.insert("error_kind".into(), json!(e.kind()));
        }
        if let Some(t) = tier {
            o.insert("prune_tier".into(), json!(t));
        }
        if let Some(ms) = o.get("total_ms").and_then(Value::as_f64) {
            o.insert("total_ms".into(), json!((ms * 100.0).round() / 100.0));
        }
        o.insert("backend".into(), json!("openai"));
        o.insert("server_kind".into(), json!(b.server_kind.name()));
        o.insert("serve_mode".into(), json!(b.serve_mode.name()));
    }
    streams::report(&v.to_string());
}

/// A served request's failure as a `--jsonl` error record.
fn record_error(e: &ServeError) -> RecordError {
    let output = match e {
        ServeError::NotShorthand { output, .. }
        | ServeError::Invalid { output, .. }
        | ServeError::Length {
            partial: output, ..
        } => Some(output.clone()),
        _ => None,
    };
    RecordInfo {
        error: e.to_string(),
        message: Some(e.kind().to_string()),
        found: output,
        ..Default::default()
    }
    .into()
}

/// `dss generate --backend openai`.
pub(crate) fn run(c: &GenerateCommon, b: &BackendArgs) -> Result<ExitCode> {
    let spec: CompiledSpec = load_spec(&c.spec, None)?;
    let examples = c.worked_examples()?;
    let index = c.index(&spec, &examples)?;
    let client = client(b, c.timeout)?;
    let opts = ServeOptions {
        kind: b.server_kind,
        mode: b.serve_mode,
        model: b.server_model.clone(),
        max_tokens: c.max_tokens.map(|t| t as usize),
        grammar: GrammarOptions {
            allow_undeclared: c.allow_undeclared,
        },
        timeout: Some(Duration::from_secs_f64(c.timeout)),
    };
    if c.print_prompt {
        // The messages only: no server needed.
        let opts = ServeOptions {
            model: Some(b.server_model.clone().unwrap_or_default()),
            ..opts
        };
        let gen = ServedGenerator::new(client, spec, &examples, opts)?;
        let show = |r: &str| {
            let p = prepare(c, index.as_ref(), r);
            gen.messages(&p.prompt_request)
        };
        if let Some(done) = c.requests.each_line(|r| Ok(show(r).to_string())) {
            return done;
        }
        write_stdout(&serde_json::to_string_pretty(&show(c.requests.single()?))?)?;
        return Ok(ExitCode::SUCCESS);
    }
    let gen = ServedGenerator::new(client, spec, &examples, opts)
        .with_context(|| format!("preparing requests to {}", b.url.as_deref().unwrap_or("")))?;
    if c.requests.jsonl {
        return run_jsonl(&gen, c, index.as_ref(), b);
    }
    let request = c.requests.single()?;
    let (result, tier) = one(&gen, c, index.as_ref(), request);
    if c.stats {
        stats_line(
            result.as_ref().ok(),
            result.as_ref().err(),
            tier.as_deref(),
            b,
        );
    }
    let served = result.map_err(|e| anyhow!(e))?;
    c.write_answer(&served.text, &served.value)?;
    Ok(ExitCode::SUCCESS)
}

/// `--jsonl`: up to `--concurrency` requests in flight, outputs in input order; a failed
/// request is an error record (`--keep-going`, `--errors inline`) or stops the run.
fn run_jsonl(
    gen: &ServedGenerator,
    c: &GenerateCommon,
    index: Option<&SpecIndex>,
    b: &BackendArgs,
) -> Result<ExitCode> {
    let mut input = open_input(c.requests.input.as_deref())?;
    let errors = (c.requests.keep_going || b.errors == ErrorsTo::Inline).then_some(b.errors);
    let mut out = streams::Out::new()?;
    let mut buf = Vec::new();
    let mut line_no = 0usize;
    let mut failed = 0usize;
    let mut first_failure: Option<(usize, String)> = None;
    // A result: the input line and the output record or the error.
    type Done = (usize, Result<String, RecordError>);
    let mut next = || -> Result<Option<Input<(usize, String), Done>>> {
        loop {
            let line =
                streams::read_line(&mut input.reader, &mut buf, streams::DEFAULT_MAX_LINE, true)
                    .with_context(|| format!("cannot read {}", input.name))?;
            match line {
                streams::Line::End => return Ok(None),
                streams::Line::TooLong { len } => {
                    line_no += 1;
                    let e = format!(
                        "the line ({len} bytes) is longer than the limit of {}",
                        streams::show_size(streams::DEFAULT_MAX_LINE)
                    );
                    return Ok(Some(Input::Done((line_no, Err(e.into())))));
                }
                streams::Line::Text => {
                    line_no += 1;
                    if buf.last() == Some(&b'\r') {
                        buf.pop();
                    }
                    let text = String::from_utf8_lossy(&buf);
                    if text.trim().is_empty() {
                        continue;
                    }
                    return Ok(Some(match serde_json::from_str::<Value>(&text) {
                        Ok(Value::String(r)) => Input::Work((line_no, r)),
                        Ok(_) => Input::Done((
                            line_no,
                            Err("expected a JSON string holding the request"
                                .to_string()
                                .into()),
                        )),
                        Err(e) => Input::Done((line_no, Err(format!("invalid JSON: {e}").into()))),
                    }));
                }
            }
        }
    };
    let work = |(line, request): (usize, String)| -> Done {
        let (result, tier) = one(gen, c, index, &request);
        if c.stats {
            stats_line(
                result.as_ref().ok(),
                result.as_ref().err(),
                tier.as_deref(),
                b,
            );
        }
        let record = result
            .map_err(|e| record_error(&e))
            .map(|s| c.record(s.text, s.value));
        (line, record)
    };
    let mut emit = |(line, record): Done| -> Result<bool> {
        match (record, errors) {
            (Ok(r), _) => out.write_flushed(&[r.as_bytes(), b"\n"])?,
            (Err(e), Some(to)) => {
                failed += 1;
                let mut report = e.record(line);
                if let (Value::Object(o), Some(kind)) = (&mut report, e.0.message.as_deref()) {
                    o.insert("kind".into(), json!(kind));
                    o.remove("message");
                }
                match to {
                    ErrorsTo::Stderr => {
                        streams::report(&report.to_string());
                    }
                    ErrorsTo::Inline => {
                        let inline = json!({ "dss_error": report }).to_string();
                        out.write_flushed(&[inline.as_bytes(), b"\n"])?;
                    }
                }
            }
            (Err(e), None) => {
                first_failure = Some((line, e.error().to_string()));
                return Ok(false);
            }
        }
        Ok(true)
    };
    run_ordered(b.concurrency as usize, &mut next, work, &mut emit)?;
    if let Some((line, e)) = first_failure {
        bail!("{}:{line}: {e}", input.name);
    }
    Ok(if failed > 0 {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    })
}
