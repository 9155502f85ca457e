//! `dss`: compile a JSON Schema into a compact shorthand notation, and map JSON documents
//! to shorthand (`compress`) and back (`expand`).
//!
//! Exit codes: 0 success; 1 any error (bad input, bad schema, I/O, or at least one bad
//! record with `--keep-going`); 2 bad command line (from clap); 3 standard output could not
//! be written (closed, its reader gone, a full disk): results were lost.

mod artifacts;
mod bench;
#[cfg(feature = "runtime")]
mod bench_generate;
mod eval_cmd;
#[cfg(feature = "runtime")]
mod eval_plot;
mod guard;
mod prune_cmd;
mod read_args;
#[cfg(feature = "runtime")]
mod runtime_cmd;
mod serve_cmd;
mod streams;
mod tokens;

use anyhow::{anyhow, bail, Context, Result};
use clap::{Args, CommandFactory, Parser, Subcommand};
use dss_compiler::error::{CompileError, CompressError, ExpandError};
use dss_compiler::{compile_owned, CompileOptions, CompiledSpec, NotationConfig};
use serde_json::Value;
use std::fs;
use std::io::{self, BufRead, BufReader, Read};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use crate::guard::guard;
use crate::streams::{RecordError, RecordInfo, StdoutError, EXIT_STDOUT};

#[derive(Parser)]
#[command(
    name = "dss",
    version,
    about = "Compile a JSON Schema into a compact shorthand notation; map JSON <-> shorthand"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Print the notation design of a schema as editable YAML (pass it back with --notation).
    Init {
        /// The JSON Schema (JSON or YAML; `-` reads standard input).
        schema: PathBuf,
        /// Start from an edited notation design instead of the automatic one.
        #[arg(long, value_name = "FILE.yaml")]
        notation: Option<PathBuf>,
        #[command(flatten)]
        read: read_args::ReadArgs,
    },
    /// Compile a schema: writes DIR/spec.json and the grammars DIR/shorthand.{bnf,pest,gbnf}.
    /// Without -o, prints the readable BNF grammar.
    /// Tool definitions (an OpenAI `tools` array, Anthropic tools, an MCP `tools/list`
    /// result) compile to the schema of their calls.
    Compile {
        /// The JSON Schema or tool definitions (JSON or YAML; `-` reads standard input).
        schema: PathBuf,
        /// The notation design to use (from `dss init`, possibly edited).
        #[arg(long, value_name = "FILE.yaml")]
        notation: Option<PathBuf>,
        /// Output directory (created if missing).
        #[arg(short = 'o', long = "out", value_name = "DIR")]
        out: Option<PathBuf>,
        #[command(flatten)]
        read: read_args::ReadArgs,
        /// Fail (exit 1) when an assertion of the schema is not in the grammar (it would
        /// only be checked after generation); each is listed as a warning either way.
        #[arg(long)]
        strict_grammar: bool,
    },
    /// JSON -> shorthand. The instance is validated against the schema first.
    Compress(MapArgs),
    /// Shorthand -> JSON (pretty printed unless --compact).
    Expand {
        #[command(flatten)]
        map: MapArgs,
        /// Print compact JSON instead of pretty printed JSON.
        #[arg(long)]
        compact: bool,
        /// Do not validate the expanded JSON against the schema (faster; the text is still
        /// read as strictly as the grammars say).
        #[arg(long)]
        no_validate: bool,
    },
    /// The values a request names, per site of the spec (enum values, union tags, catalog
    /// entries), as JSON: mentions with span, tier and score, and the candidates per site.
    Extract(prune_cmd::ExtractArgs),
    /// Print the grammar pruned to the values a request names (what `dss generate` decodes
    /// under).
    Prune(prune_cmd::PruneCmdArgs),
    /// Count tokens of the same documents as pretty JSON, compact JSON, YAML, TOON and dss
    /// shorthand, per tokenizer; or (--grammar) of the grammar against the JSON Schema.
    Tokens(tokens::TokensArgs),
    /// Measure compile time and compress/expand throughput on the corpora (build with --release).
    Bench(bench::BenchArgs),
    /// Evaluate a local model on a suite (exact match, NER, latency per condition), or
    /// import a dataset as a suite (`dss eval import apimix|food-ordering DIR -o SUITE`).
    Eval(Box<eval_cmd::EvalArgs>),
    /// List, download and verify the pinned local models.
    #[cfg(feature = "runtime")]
    Model {
        #[command(subcommand)]
        command: runtime_cmd::ModelCommand,
    },
    /// Generate schema-valid JSON from a natural-language request with a local model that
    /// writes shorthand under the compiled grammar.
    #[cfg(feature = "runtime")]
    Generate(Box<runtime_cmd::GenerateArgs>),
    /// Generate schema-valid JSON from a natural-language request with a model served by
    /// an OpenAI-compatible server (`--backend openai --url URL`), which writes shorthand
    /// under the request's pruned grammar (this build has no local runtime).
    #[cfg(not(feature = "runtime"))]
    Generate(Box<serve_cmd::ServeGenerateArgs>),
    /// Benchmark generation: constrained shorthand vs unconstrained, llama.cpp's GBNF
    /// sampler and JSON output, on each model (medians and ratios in one run).
    #[cfg(feature = "runtime")]
    #[command(name = "bench-generate")]
    BenchGenerate(bench_generate::BenchGenerateArgs),
    /// Print a shell completion script.
    ///
    /// For example `dss completions bash > ~/.local/share/bash-completion/completions/dss`,
    /// or `dss completions zsh > ~/.zfunc/_dss`.
    Completions {
        /// The shell.
        #[arg(value_enum)]
        shell: clap_complete::Shell,
    },
    /// Print the man page (roff) of dss, or of one of its commands.
    ///
    /// For example `dss man | man -l -`, `dss man compile > dss-compile.1`.
    Man {
        /// A command (`compress`, `eval`…); none: the page of dss itself.
        command: Option<String>,
    },
}

#[derive(Args)]
struct MapArgs {
    /// The compiled spec: a directory holding spec.json, a spec.json file, or a schema file
    /// (compiled on the fly).
    #[arg(long, value_name = "PATH")]
    spec: PathBuf,
    /// Notation design to use when --spec is a schema compiled on the fly.
    #[arg(long, value_name = "FILE.yaml")]
    notation: Option<PathBuf>,
    /// Input file; `-` or absent reads standard input.
    #[arg(value_name = "FILE")]
    input: Option<PathBuf>,
    /// One record per line: compress reads JSON values and writes JSON strings (the
    /// shorthand); expand reads JSON strings and writes compact JSON values.
    #[arg(long)]
    jsonl: bool,
    /// With --jsonl: report each bad record as `{"line": N, "error": "...", "message",
    /// "pointer", "keyword", "position": "L:C", …}` (the fields known) and go on; the exit
    /// code is 1 if any record failed.
    #[arg(long, requires = "jsonl")]
    keep_going: bool,
    /// With --jsonl: where bad records are reported: `stderr`, or `inline` on stdout in the
    /// bad line's place as `{"dss_error": {…}}` (outputs stay aligned with inputs; implies
    /// --keep-going).
    #[arg(long, value_name = "WHERE", requires = "jsonl", value_enum, default_value_t = streams::ErrorsTo::Stderr)]
    errors: streams::ErrorsTo,
    /// With --jsonl: the longest line read (`K`, `M`, `G`: powers of 1024); a longer line is
    /// a bad record and is never held in memory.
    #[arg(long, value_name = "SIZE", requires = "jsonl", default_value = "64M", value_parser = streams::parse_size)]
    max_line: u64,
}

impl MapArgs {
    /// How `--jsonl` treats bad records: `None` stops at the first; `--errors inline`
    /// implies `--keep-going`.
    fn jsonl_errors(&self) -> Option<streams::ErrorsTo> {
        (self.keep_going || self.errors == streams::ErrorsTo::Inline).then_some(self.errors)
    }
}

fn main() -> ExitCode {
    guard::install_hook();
    let cli = Cli::parse();
    match run(cli) {
        Ok(code) => code,
        Err(e) => {
            if let Some(out) = e.downcast_ref::<StdoutError>() {
                // The reader went away (e.g. `| head`): the exit code says it, quietly.
                if !out.is_broken_pipe() {
                    streams::report(&format!("error: {out}"));
                }
                return ExitCode::from(EXIT_STDOUT);
            }
            if is_broken_pipe(&e) {
                return ExitCode::from(EXIT_STDOUT);
            }
            streams::report(&streams::shorten(&format!("error: {e:#}")));
            ExitCode::from(1)
        }
    }
}

fn run(cli: Cli) -> Result<ExitCode> {
    match cli.command {
        Command::Init {
            schema,
            notation,
            read,
        } => {
            let spec = compile_schema_file(&schema, notation.as_deref(), read)?;
            let yaml =
                guard("notation_yaml", || spec.notation_yaml()).map_err(|e| anyhow!(e))??;
            write_stdout(&yaml)?;
            Ok(ExitCode::SUCCESS)
        }
        Command::Compile {
            schema,
            notation,
            out,
            read,
            strict_grammar,
        } => {
            let spec = compile_schema_file(&schema, notation.as_deref(), read)?;
            // Compile checks everything up front: the validator is otherwise built lazily.
            let schema = shown(&schema);
            spec.check_validator()
                .map_err(|e| compile_error(schema, notation.as_deref(), &e))?;
            for w in spec.warnings() {
                streams::report(&format!("warning: {}: {w}", schema.display()));
            }
            let gaps = spec.grammar_gaps();
            let level = if strict_grammar { "error" } else { "warning" };
            for g in &gaps {
                streams::report(&format!("{level}: {}: {g}", schema.display()));
            }
            if strict_grammar && !gaps.is_empty() {
                return Ok(ExitCode::FAILURE);
            }
            let bnf = guard("grammar_bnf", || spec.grammar_bnf()).map_err(|e| anyhow!(e))?;
            match &out {
                Some(dir) => artifacts::write_artifacts(&spec, dir)?,
                None => write_stdout(&bnf)?,
            }
            streams::report(&compiled_line(out.as_deref(), &bnf));
            Ok(ExitCode::SUCCESS)
        }
        Command::Compress(args) => {
            let spec = load_spec(&args.spec, args.notation.as_deref())?;
            let input = open_input(args.input.as_deref())?;
            if args.jsonl {
                run_jsonl_capped(input, args.jsonl_errors(), args.max_line, |line| {
                    compress_record(&spec, line)
                })
            } else {
                compress_document(&spec, input)?;
                Ok(ExitCode::SUCCESS)
            }
        }
        Command::Expand {
            map: args,
            compact,
            no_validate,
        } => {
            let spec = load_spec(&args.spec, args.notation.as_deref())?;
            let input = open_input(args.input.as_deref())?;
            if args.jsonl {
                run_jsonl_capped(input, args.jsonl_errors(), args.max_line, |line| {
                    expand_record(&spec, line, no_validate)
                })
            } else {
                expand_document(&spec, input, compact, no_validate)?;
                Ok(ExitCode::SUCCESS)
            }
        }
        Command::Extract(args) => prune_cmd::run_extract(&args),
        Command::Prune(args) => prune_cmd::run_prune(&args),
        Command::Tokens(args) => tokens::run(&args),
        Command::Bench(args) => bench::run(&args),
        Command::Eval(args) => eval_cmd::run(&args),
        #[cfg(feature = "runtime")]
        Command::Model { command } => runtime_cmd::run_model(&command),
        #[cfg(feature = "runtime")]
        Command::Generate(args) => runtime_cmd::run_generate(&args),
        #[cfg(not(feature = "runtime"))]
        Command::Generate(args) => serve_cmd::run_without_runtime(&args),
        #[cfg(feature = "runtime")]
        Command::BenchGenerate(args) => bench_generate::run(&args),
        Command::Completions { shell } => {
            let mut script = Vec::new();
            clap_complete::generate(shell, &mut Cli::command(), "dss", &mut script);
            streams::Out::new()?.write_flushed(&[&script])?;
            Ok(ExitCode::SUCCESS)
        }
        Command::Man { command } => {
            let root = Cli::command();
            let page = match &command {
                None => root,
                Some(name) => {
                    let Some(sub) = root.find_subcommand(name) else {
                        let names: Vec<String> = root
                            .get_subcommands()
                            .map(|c| c.get_name().to_string())
                            .collect();
                        bail!("no command `{name}` (one of: {})", names.join(", "));
                    };
                    let sub = sub.clone();
                    let page = format!("dss-{}", sub.get_name());
                    let usage = format!("dss {}", sub.get_name());
                    sub.display_name(page)
                        .bin_name(usage)
                        .version(env!("CARGO_PKG_VERSION"))
                }
            };
            let mut roff = Vec::new();
            clap_mangen::Man::new(page)
                .render(&mut roff)
                .context("cannot render the man page")?;
            streams::Out::new()?.write_flushed(&[&roff])?;
            Ok(ExitCode::SUCCESS)
        }
    }
}

/// `dss compile`'s one line on stderr: what was written, and what the readable grammar
/// costs in a prompt (o200k tokens, as `dss tokens --grammar` counts them).
fn compiled_line(out: Option<&Path>, bnf: &str) -> String {
    let cost = match tokens::prompt_tokens(bnf) {
        Ok(n) => format!("the readable grammar is {n} tokens (o200k) in a prompt"),
        Err(e) => format!("the readable grammar's tokens were not counted: {e:#}"),
    };
    match out {
        Some(dir) => format!(
            "wrote {} (spec.json, shorthand.bnf, shorthand.pest, shorthand.gbnf, shorthand.lark); {cost}",
            dir.display()
        ),
        None => format!("{cost}; `-o DIR` writes the spec and the grammars"),
    }
}

// ── Loading schemas, notations and specs ─────────────────────────────────────

/// The text of a file, or of standard input for `-`.
pub(crate) fn read_file(path: &Path) -> Result<String> {
    if is_stdin(path) {
        return read_all(stdin_input()).map(|(_, text)| text);
    }
    let bytes = fs::read(path).with_context(|| format!("cannot read {}", path.display()))?;
    String::from_utf8(bytes).map_err(|e| {
        anyhow!(
            "{}: not UTF-8 text (invalid byte at offset {})",
            path.display(),
            e.utf8_error().valid_up_to()
        )
    })
}

/// `serde_json`'s message without its trailing " at line L column C" (we print the
/// position ourselves, in `file:line:col` form).
fn json_error_message(e: &serde_json::Error) -> String {
    let full = e.to_string();
    let suffix = format!(" at line {} column {}", e.line(), e.column());
    full.strip_suffix(&suffix).unwrap_or(&full).to_string()
}

fn json_error(name: &str, e: &serde_json::Error) -> anyhow::Error {
    anyhow!(
        "{name}:{}:{}: invalid JSON: {}",
        e.line(),
        e.column(),
        json_error_message(e)
    )
}

fn yaml_error(name: &str, e: &serde_norway::Error) -> anyhow::Error {
    match e.location() {
        Some(loc) => anyhow!("{name}:{}:{}: invalid YAML: {e}", loc.line(), loc.column()),
        None => anyhow!("{name}: invalid YAML: {e}"),
    }
}

/// Parse a schema document: JSON, or YAML (read straight into a JSON value).
fn parse_schema_text(text: &str, path: &Path) -> Result<Value> {
    let name = path.display().to_string();
    let ext = path
        .extension()
        .and_then(|e| e.to_str())
        .map(str::to_ascii_lowercase);
    match ext.as_deref() {
        Some("json") => serde_json::from_str(text).map_err(|e| json_error(&name, &e)),
        Some("yaml" | "yml") => serde_norway::from_str(text).map_err(|e| yaml_error(&name, &e)),
        _ => match serde_json::from_str(text) {
            Ok(v) => Ok(v),
            Err(json_err) => match serde_norway::from_str(text) {
                Ok(v) => Ok(v),
                Err(yaml_err) => {
                    let t = text.trim_start();
                    if t.starts_with('{') || t.starts_with('[') {
                        Err(json_error(&name, &json_err))
                    } else {
                        Err(yaml_error(&name, &yaml_err))
                    }
                }
            },
        },
    }
}

pub(crate) fn load_notation(path: Option<&Path>) -> Result<Option<NotationConfig>> {
    let Some(path) = path else { return Ok(None) };
    let text = read_file(path)?;
    let name = path.display().to_string();
    let config: NotationConfig = serde_norway::from_str(&text).map_err(|e| {
        let message = e.to_string();
        let hint = did_you_mean(&message)
            .map(|k| format!(" (did you mean `{k}`?)"))
            .unwrap_or_default();
        match e.location() {
            Some(loc) => {
                // The position is given once, in front.
                let suffix = format!(" at line {} column {}", loc.line(), loc.column());
                let message = message.strip_suffix(&suffix).unwrap_or(&message);
                anyhow!(
                    "{name}:{}:{}: invalid notation: {message}{hint}",
                    loc.line(),
                    loc.column()
                )
            }
            None => anyhow!("{name}: invalid notation: {message}{hint}"),
        }
    })?;
    Ok(Some(config))
}

/// For serde's "unknown field `kyeword`, expected one of `name`, `keyword`, …" (or
/// "unknown variant"): the expected name closest to the unknown one, if one is close.
fn did_you_mean(message: &str) -> Option<String> {
    let (_, rest) = message
        .split_once("unknown field `")
        .or_else(|| message.split_once("unknown variant `"))?;
    let (unknown, rest) = rest.split_once('`')?;
    let expected = rest.split_once("expected")?.1;
    expected
        .split('`')
        .skip(1)
        .step_by(2)
        .map(|k| (strsim::damerau_levenshtein(unknown, k), k))
        .filter(|&(d, k)| d <= (k.chars().count() / 3).max(1))
        .min_by_key(|&(d, _)| d)
        .map(|(_, k)| k.to_string())
}

fn compile_error(schema: &Path, notation: Option<&Path>, e: &CompileError) -> anyhow::Error {
    match (e, notation) {
        (CompileError::Notation(_) | CompileError::Ambiguous(_), Some(n)) => {
            anyhow!("{}: {e}", n.display())
        }
        _ => anyhow!("{}: {e}", schema.display()),
    }
}

fn compile_value(
    schema: Value,
    path: &Path,
    notation: Option<&Path>,
    read: read_args::ReadArgs,
) -> Result<CompiledSpec> {
    let mut notation_cfg = load_notation(notation)?;
    if let Some(style) = read.style {
        notation_cfg
            .get_or_insert_with(NotationConfig::default)
            .set_style(style);
    }
    let opts = CompileOptions {
        notation: notation_cfg,
        lenient: read.lenient,
        calls: read.calls(),
    };
    // The schema is ours: the spec keeps it rather than a copy.
    let spec = guard("compile", || compile_owned(schema, &opts))
        .map_err(|e| anyhow!("{}: {e}", path.display()))?
        .map_err(|e| {
            anyhow!(
                "{:#}{}",
                compile_error(path, notation, &e),
                read_args::hint(&e)
            )
        })?;
    read_args::report(&spec, path);
    Ok(spec)
}

/// Whether a path argument means standard input (`-`).
fn is_stdin(path: &Path) -> bool {
    path.as_os_str() == "-"
}

/// A path argument as messages name it: `<stdin>` for `-`.
fn shown(path: &Path) -> &Path {
    if is_stdin(path) {
        Path::new("<stdin>")
    } else {
        path
    }
}

fn compile_schema_file(
    path: &Path,
    notation: Option<&Path>,
    read: read_args::ReadArgs,
) -> Result<CompiledSpec> {
    let text = read_file(path)?;
    let path = shown(path);
    let schema = parse_schema_text(&text, path)?;
    compile_value(schema, path, notation, read)
}

fn spec_from_json(text: &str, path: &Path) -> Result<CompiledSpec> {
    guard("from_json", || CompiledSpec::from_json(text))
        .map_err(|e| anyhow!("{}: {e}", path.display()))?
        .map_err(|e| anyhow!("{}: {e}", path.display()))
}

/// The top-level key that marks a `spec.json` written by `CompiledSpec::to_json`.
const SPEC_MARKER: &str = "dss_spec";

/// `--spec`: a directory with spec.json, a spec.json file, or a schema file. A file not
/// named `spec.json` is tried as a compiled spec first, then compiled as a schema.
fn load_spec(path: &Path, notation: Option<&Path>) -> Result<CompiledSpec> {
    let no_notation = |what: &str| {
        anyhow!(
            "--notation applies only when --spec is a schema; {} is {what}",
            path.display()
        )
    };
    if path.is_dir() {
        if notation.is_some() {
            return Err(no_notation("a compiled spec directory"));
        }
        let file = path.join("spec.json");
        if !file.is_file() {
            bail!(
                "{}: no spec.json in this directory (create it with `dss compile SCHEMA -o {}`)",
                path.display(),
                path.display()
            );
        }
        return spec_from_json(&read_file(&file)?, &file);
    }
    let text = read_file(path)?;
    if path.file_name().and_then(|n| n.to_str()) == Some("spec.json") {
        if notation.is_some() {
            return Err(no_notation("a compiled spec"));
        }
        return spec_from_json(&text, path);
    }
    let spec_err = match spec_from_json(&text, path) {
        Ok(spec) => {
            if notation.is_some() {
                return Err(no_notation("a compiled spec"));
            }
            return Ok(spec);
        }
        Err(e) => e,
    };
    // A spec.json that does not load (e.g. an old version) must not be mistaken for a
    // schema: any JSON object is a schema, one that would accept anything.
    let looks_like_spec =
        serde_json::from_str::<Value>(&text).is_ok_and(|v| v.get(SPEC_MARKER).is_some());
    if looks_like_spec {
        return Err(spec_err);
    }
    let schema = parse_schema_text(&text, path).map_err(|schema_err| {
        anyhow!("neither a compiled spec ({spec_err:#}) nor a schema ({schema_err:#})")
    })?;
    compile_value(schema, path, notation, read_args::ReadArgs::default())
}

// ── Input and output ─────────────────────────────────────────────────────────

struct Input {
    /// For messages: the file name, or `<stdin>`.
    name: String,
    reader: Box<dyn BufRead>,
}

fn open_input(path: Option<&Path>) -> Result<Input> {
    match path {
        None => Ok(stdin_input()),
        Some(p) if is_stdin(p) => Ok(stdin_input()),
        Some(p) => {
            let file = fs::File::open(p).with_context(|| format!("cannot read {}", p.display()))?;
            Ok(Input {
                name: p.display().to_string(),
                reader: Box::new(BufReader::new(file)),
            })
        }
    }
}

fn stdin_input() -> Input {
    Input {
        name: "<stdin>".to_string(),
        reader: Box::new(BufReader::new(io::stdin())),
    }
}

fn read_all(mut input: Input) -> Result<(String, String)> {
    let mut bytes = Vec::new();
    input
        .reader
        .read_to_end(&mut bytes)
        .with_context(|| format!("cannot read {}", input.name))?;
    let text = String::from_utf8(bytes).map_err(|e| {
        anyhow!(
            "{}: not UTF-8 text (invalid byte at offset {})",
            input.name,
            e.utf8_error().valid_up_to()
        )
    })?;
    Ok((input.name, text))
}

/// Write a result to standard output, ending it with a newline; a failure is a
/// [`StdoutError`] (exit code 3).
fn write_stdout(text: &str) -> Result<()> {
    let newline: &[u8] = if !text.is_empty() && !text.ends_with('\n') {
        b"\n"
    } else {
        b""
    };
    streams::Out::new()?.write_flushed(&[text.as_bytes(), newline])?;
    Ok(())
}

fn is_broken_pipe(e: &anyhow::Error) -> bool {
    e.chain().any(|c| {
        c.downcast_ref::<io::Error>()
            .is_some_and(|io| io.kind() == io::ErrorKind::BrokenPipe)
    })
}

/// A JSON pointer for messages: the root (`""`) is shown as `(root)`.
fn show_pointer(pointer: &str) -> &str {
    if pointer.is_empty() {
        "(root)"
    } else {
        pointer
    }
}

// ── compress / expand ────────────────────────────────────────────────────────

fn compress_value(spec: &CompiledSpec, value: &Value) -> Result<String, String> {
    guard("compress", || spec.compress(value))?.map_err(|e| show_compress_error(&e))
}

/// A compress error for messages: where (the root shown as `(root)`), what, and for an
/// invalid instance the violated keyword.
fn show_compress_error(e: &CompressError) -> String {
    match e {
        CompressError::Invalid {
            pointer,
            keyword,
            message,
        } => format!("{}: {message} (keyword `{keyword}`)", show_pointer(pointer)),
        CompressError::Unencodable { pointer, message } => format!(
            "{}: the notation cannot write this value: {message}",
            show_pointer(pointer)
        ),
        _ => e.to_string(),
    }
}

/// JSON text -> shorthand, read from the text without building a `Value`
/// ([`CompiledSpec::compress_str`]). What is reported, and in which order, is what reading
/// the value first reports: the text's JSON error (serde_json's message), then a number
/// the JSON would not carry exactly, then what compress found.
fn compress_text(spec: &CompiledSpec, text: &str) -> Result<String, TextError> {
    let compressed = guard("compress", || spec.compress_str(text)).map_err(TextError::Panic)?;
    if let Err(CompressError::Json { .. }) = &compressed {
        // serde_json's own error as a `Value` reads it (only where the text is no JSON).
        if let Err(e) = serde_json::from_str::<Value>(text) {
            return Err(TextError::Json(e));
        }
    }
    dss_compiler::codec::check_numbers(text).map_err(TextError::Numbers)?;
    compressed.map_err(TextError::Compress)
}

/// Why JSON text was not compressed.
enum TextError {
    /// The text is not JSON.
    Json(serde_json::Error),
    /// A number the JSON would not carry exactly.
    Numbers(CompressError),
    /// What compress found.
    Compress(CompressError),
    /// A panic, as a message.
    Panic(String),
}

fn compress_document(spec: &CompiledSpec, input: Input) -> Result<()> {
    let (name, text) = read_all(input)?;
    let shorthand = compress_text(spec, &text).map_err(|e| match e {
        TextError::Json(e) => json_error(&name, &e),
        TextError::Numbers(e) => anyhow!("{name}: {e}"),
        TextError::Compress(e) => anyhow!("{name}: {}", show_compress_error(&e)),
        TextError::Panic(e) => anyhow!("{name}: {e}"),
    })?;
    write_stdout(&shorthand)
}

/// Shorthand -> JSON, validated unless `no_validate`; a panic is an error message.
fn expand_text(
    spec: &CompiledSpec,
    text: &str,
    no_validate: bool,
) -> Result<Result<Value, ExpandError>, String> {
    if no_validate {
        guard("expand", || spec.expand_unvalidated(text))
    } else {
        guard("expand", || spec.expand(text))
    }
}

fn expand_document(
    spec: &CompiledSpec,
    input: Input,
    compact: bool,
    no_validate: bool,
) -> Result<()> {
    let (name, text) = read_all(input)?;
    if no_validate && compact {
        // Straight to text: the same JSON, without building the value first.
        let json = guard("expand", || spec.expand_unvalidated_json(&text))
            .map_err(|e| anyhow!("{name}: {e}"))?
            .map_err(|e| match e {
                ExpandError::Syntax { .. } => anyhow!("{name}:{e}"),
                _ => anyhow!("{name}: {e}"),
            })?;
        return write_stdout(&json);
    }
    let value = expand_text(spec, &text, no_validate)
        .map_err(|e| anyhow!("{name}: {e}"))?
        .map_err(|e| match e {
            ExpandError::Syntax { .. } => anyhow!("{name}:{e}"),
            _ => anyhow!("{name}: {e}"),
        })?;
    let json = if compact {
        serde_json::to_string(&value)
    } else {
        serde_json::to_string_pretty(&value)
    }
    .context("cannot serialize the expanded JSON")?;
    write_stdout(&json)
}

/// A record's line that is not JSON: the error with its column.
fn record_json_error(e: &serde_json::Error) -> RecordError {
    let message = format!("invalid JSON: {}", json_error_message(e));
    RecordInfo {
        error: format!(
            "invalid JSON at column {}: {}",
            e.column(),
            json_error_message(e)
        ),
        message: Some(message),
        position: Some((e.line(), e.column())),
        ..Default::default()
    }
    .into()
}

/// A compress error as a `--jsonl` record error: pointer, keyword and message apart.
fn compress_record_error(e: &CompressError) -> RecordError {
    RecordInfo {
        error: show_compress_error(e),
        message: Some(e.message().into_owned()),
        pointer: Some(e.pointer().to_string()),
        keyword: e.keyword().map(str::to_string),
        ..Default::default()
    }
    .into()
}

/// One `--jsonl` compress record: a JSON value -> a JSON string holding the shorthand.
fn compress_record(spec: &CompiledSpec, line: &str) -> Result<String, RecordError> {
    let shorthand = compress_text(spec, line).map_err(|e| match e {
        TextError::Json(e) => record_json_error(&e),
        TextError::Numbers(e) | TextError::Compress(e) => compress_record_error(&e),
        TextError::Panic(e) => e.into(),
    })?;
    Ok(serde_json::to_string(&shorthand).map_err(|e| e.to_string())?)
}

/// One `--jsonl` expand record: a JSON string holding the shorthand -> a compact JSON value.
fn expand_record(
    spec: &CompiledSpec,
    line: &str,
    no_validate: bool,
) -> Result<String, RecordError> {
    let record: Value = serde_json::from_str(line).map_err(|e| record_json_error(&e))?;
    let Value::String(text) = record else {
        return Err(format!(
            "expected a JSON string holding the shorthand, found {}",
            json_kind(&record)
        )
        .into());
    };
    if no_validate {
        // Straight to compact text, as the record is written.
        return guard("expand", || spec.expand_unvalidated_json(&text))?
            .map_err(|e| expand_record_error(&e));
    }
    let value = expand_text(spec, &text, no_validate)?.map_err(|e| expand_record_error(&e))?;
    Ok(serde_json::to_string(&value).map_err(|e| e.to_string())?)
}

/// An expand error as a `--jsonl` record error: the position in the shorthand, what was
/// expected and found; or the pointer and keyword the expanded JSON violates.
fn expand_record_error(e: &ExpandError) -> RecordError {
    let error = match e {
        ExpandError::Syntax { .. } => format!("in the shorthand at {e}"),
        _ => e.to_string(),
    };
    let message = match e {
        ExpandError::Invalid { message, .. } => Some(message.clone()),
        ExpandError::Syntax {
            expected, found, ..
        } => Some(format!("expected {expected}, found {found}")),
        _ => None,
    };
    RecordInfo {
        error,
        message,
        pointer: e.pointer().map(str::to_string),
        keyword: e.keyword().map(str::to_string),
        position: e.location(),
        expected: e.expected().map(str::to_string),
        found: e.found().map(str::to_string),
    }
    .into()
}

fn json_kind(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// Map each non-blank line through `f`, writing one output line per record and flushing it.
/// Without `keep_going` the first bad record stops the run with an error naming its line;
/// with it, each bad record is reported on stderr as a JSON line and the exit code is 1 at
/// the end if any failed. A line longer than `--max-line` is a bad record (never held in
/// memory). A failed write to stdout stops the run ([`StdoutError`], exit code 3); a report
/// that cannot be written to stderr is lost, the records are not.
fn run_jsonl(
    input: Input,
    keep_going: bool,
    f: impl FnMut(&str) -> Result<String, String>,
) -> Result<ExitCode> {
    let errors = keep_going.then_some(streams::ErrorsTo::Stderr);
    run_jsonl_capped(input, errors, streams::DEFAULT_MAX_LINE, f)
}

/// [`run_jsonl`] with lines of at most `max_line` bytes; `errors`: where bad records are
/// reported (`None`: the first stops the run).
fn run_jsonl_capped<E: Into<RecordError>>(
    mut input: Input,
    errors: Option<streams::ErrorsTo>,
    max_line: u64,
    mut f: impl FnMut(&str) -> Result<String, E>,
) -> Result<ExitCode> {
    let keep_going = errors.is_some();
    let mut out = streams::Out::new()?;
    let mut buf = Vec::new();
    let mut line_no = 0usize;
    let mut failed = 0usize;
    loop {
        let line = streams::read_line(&mut input.reader, &mut buf, max_line, keep_going)
            .with_context(|| format!("cannot read {}", input.name))?;
        let result = match line {
            streams::Line::End => break,
            streams::Line::TooLong { len } => {
                line_no += 1;
                // Without --keep-going reading stopped at the limit: the length is unknown.
                let size = if keep_going {
                    format!(" ({len} bytes)")
                } else {
                    String::new()
                };
                Err(RecordError::from(format!(
                    "the line{size} is longer than the limit of {} (--max-line SIZE sets it)",
                    streams::show_size(max_line)
                )))
            }
            streams::Line::Text => {
                line_no += 1;
                if buf.last() == Some(&b'\r') {
                    buf.pop();
                }
                match std::str::from_utf8(&buf) {
                    Err(e) => Err(RecordError::from(RecordInfo {
                        error: format!(
                            "not UTF-8 text (invalid byte at column {})",
                            e.valid_up_to() + 1
                        ),
                        position: Some((1, e.valid_up_to() + 1)),
                        ..Default::default()
                    })),
                    Ok(line) if line.trim().is_empty() => continue,
                    Ok(line) => f(line).map_err(Into::into),
                }
            }
        };
        match (result, errors) {
            (Ok(record), _) => out.write_flushed(&[record.as_bytes(), b"\n"])?,
            (Err(e), Some(to)) => {
                failed += 1;
                let report = e.record(line_no);
                match to {
                    streams::ErrorsTo::Stderr => {
                        streams::report(&report.to_string());
                    }
                    streams::ErrorsTo::Inline => {
                        let inline = serde_json::json!({ "dss_error": report }).to_string();
                        out.write_flushed(&[inline.as_bytes(), b"\n"])?;
                    }
                }
            }
            (Err(e), None) => bail!("{}:{line_no}: {}", input.name, e.error()),
        }
    }
    Ok(if failed > 0 {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    })
}
