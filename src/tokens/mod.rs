//! `dss tokens`: how many tokens the same documents cost as pretty JSON, compact JSON, YAML,
//! TOON and dss shorthand, with real tokenizers; and (`--grammar`) what the prompt side
//! costs: the readable grammar against the JSON Schema itself.
//!
//! Pipeline: find the files (`corpus`), read them in parallel, then encode and count every
//! document in parallel (`measure`), then summarize and print (`report`, `plot`). Documents
//! that cannot be read or compressed are reported on stderr (`error: NAME: message`, NAME
//! being `file`, `file:LINE` or `file#/tests/N/data`), counted as failed, and make the exit
//! code 1; they are never dropped silently.

mod corpus;
mod measure;
pub(crate) mod plot;
mod report;
mod tokenizer;

use anyhow::{anyhow, bail, Result};
use clap::{Args, ValueEnum};
use corpus::{Doc, Failure, Loaded, SkipRule};
use dss_compiler::CompiledSpec;
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use measure::Measured;
use report::{RunInfo, Summary};
use serde_json::{json, Value};
use std::num::NonZeroUsize;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;
use tokenizer::Tokenizer;

#[derive(Clone, Copy, PartialEq, Eq, ValueEnum)]
pub(crate) enum Format {
    /// Per tokenizer: totals per format, their ratio to compact JSON, the median and worst
    /// per-document dss/compact ratio, the worst documents, and subtotals per folder.
    Table,
    /// One object per tokenizer (an array of them when several --tokenizer are given).
    Json,
    /// One row per document and tokenizer: path,tokenizer,pretty,compact,yaml,toon,dss.
    Csv,
}

#[derive(Args)]
#[command(after_long_help = "\
Formats: pretty JSON (2-space indent), compact JSON, YAML (serde_norway), TOON (toon-format) \
and dss (`dss compress`). Each document is validated and compressed; one that fails is \
reported on stderr with its file (and line, for JSONL) and counted in `failed`, and the \
exit code is then 1.

--format json prints, per tokenizer, {\"tokenizer\", \"documents\", \"failed\", \"skipped\", \
\"totals\": {\"pretty\", \"compact\", \"yaml\", \"toon\", \"dss\"}, \"ratio_to_compact\": {…}, \
\"median_ratio\", \"worst_ratio\", \"worst_document\", \"worst\": [{\"document\", \"ratio\", \
\"dss\", \"compact\"}], \"group_by\", \"groups\": [{\"group\", \"documents\", \"totals\", \
\"ratio\", \"median_ratio\"}]} (plus \"invalid_tests\" with --schema-tests). With one \
--tokenizer it prints that object; with several, an array of them in --tokenizer order. \
Ratios are dss tokens over compact JSON tokens, per document; the worst is the highest. \
--grammar --format json prints {\"tokenizer\", \"grammar_bnf\", \"schema_compact\", \
\"schema_pretty\"}, one or an array in the same way.

Examples:
  dss tokens --spec out/vl examples/ --skip-if-present '$..data.values'
  dss tokens --schema-tests maskbench/data --tokenizer o200k --tokenizer cl100k --format json
  dss tokens --spec out/vl --grammar")]
pub(crate) struct TokensArgs {
    /// The compiled spec (directory with spec.json, a spec.json, or a schema file).
    #[arg(long, value_name = "PATH", required_unless_present = "schema_tests")]
    pub spec: Option<PathBuf>,
    /// Each file carries its own schema: {"schema": S, "tests": [{"data": D, "valid": B}]}
    /// (MaskBench), or an array of such objects (JSON-Schema-Test-Suite). Each schema is
    /// compiled and its valid tests are measured; invalid tests are counted, not measured.
    /// Subtotals are per source (`Github_easy---o1.json` is from `Github_easy`).
    #[arg(long, visible_alias = "maskbench", conflicts_with = "spec")]
    pub schema_tests: bool,
    /// JSON files, JSONL files (one document per line) or folders of them (recursively);
    /// `-` reads standard input (one JSON document, or JSON Lines).
    #[arg(value_name = "PATH", required_unless_present = "grammar")]
    pub paths: Vec<PathBuf>,
    /// The prompt side instead: tokens of the readable grammar (`dss compile` prints it)
    /// next to the JSON Schema's own, compact and pretty.
    #[arg(long, requires = "spec", conflicts_with_all = ["paths", "plot", "skip_if_present"])]
    pub grammar: bool,
    /// Tokenizer, repeatable [default: o200k]: o200k, cl100k (tiktoken, built in),
    /// gguf:MODEL.gguf (the model's own tokenizer; needs the `runtime` feature),
    /// hf:tokenizer.json (Hugging Face; needs the `hf-tokenizers` feature).
    #[arg(long = "tokenizer", value_name = "NAME")]
    pub tokenizers: Vec<String>,
    /// Report format.
    #[arg(long, value_enum, default_value_t = Format::Table)]
    pub format: Format,
    /// Draw the distribution of the per-document dss/compact ratio (a histogram per
    /// tokenizer, median marked) into FILE.svg or FILE.png. Text is drawn with a system
    /// font, or the font file in $DSS_PLOT_FONT.
    #[arg(long, value_name = "FILE")]
    pub plot: Option<PathBuf>,
    /// Leave out documents in which this exists (repeatable): a JSON pointer, matched at
    /// the root (`/data/values`), or a JSONPath query (RFC 9535) that selects anything
    /// (`$..data.values`: inline data anywhere, e.g. in Vega-Lite layers). Skipped documents
    /// are counted in `skipped`.
    #[arg(long = "skip-if-present", value_name = "POINTER|JSONPATH")]
    pub skip_if_present: Vec<String>,
    /// Leave out documents the schema rejects (each named on stderr, counted in `skipped`)
    /// instead of failing the run: for corpora that hold known-invalid examples.
    #[arg(long, conflicts_with = "grammar")]
    pub skip_invalid: bool,
    /// How many of the worst documents (highest dss/compact ratio) to list.
    #[arg(long, value_name = "N", default_value_t = 5)]
    pub top: usize,
    /// Worker threads [default: the number of cores].
    #[arg(long, short = 'j', value_name = "N")]
    pub jobs: Option<NonZeroUsize>,
}

pub(crate) fn run(args: &TokensArgs) -> Result<ExitCode> {
    let tokenizers = tokenizer::load_all(&args.tokenizers)?;
    if args.grammar {
        let Some(spec_path) = &args.spec else {
            bail!("--grammar needs --spec");
        };
        let spec = crate::load_spec(spec_path, None)?;
        grammar_report(&spec, &tokenizers, args.format)?;
        return Ok(ExitCode::SUCCESS);
    }
    let skip = args
        .skip_if_present
        .iter()
        .map(|s| SkipRule::parse(s))
        .collect::<Result<Vec<_>>>()?;
    let jobs = args
        .jobs
        .or_else(|| std::thread::available_parallelism().ok())
        .map_or(1, NonZeroUsize::get);

    let sources = corpus::sources(&args.paths, args.schema_tests)?;
    if sources.is_empty() {
        bail!("no .json or .jsonl files found in the given paths");
    }
    let loaded: Vec<Loaded> = match &args.spec {
        Some(spec_path) if !args.schema_tests => {
            let spec = crate::load_spec(spec_path, None)?;
            // Build the validator now: a schema that cannot validate is one error, not one
            // per document.
            spec.check_validator()
                .map_err(|e| anyhow!("{}: {e}", spec_path.display()))?;
            let spec = Arc::new(spec);
            let pb = progress(sources.len(), "reading");
            let loaded = measure::parallel_map(&sources, jobs, &pb, |s| {
                corpus::load_documents(s, &spec, &skip)
            });
            pb.finish_and_clear();
            loaded
        }
        _ => {
            let pb = progress(sources.len(), "compiling");
            let loaded =
                measure::parallel_map(&sources, jobs, &pb, |s| corpus::load_schema_tests(s, &skip));
            pb.finish_and_clear();
            loaded
        }
    };

    let mut docs: Vec<Doc> = Vec::new();
    let mut failures: Vec<Failure> = Vec::new();
    let (mut skipped, mut invalid_tests) = (0, 0);
    for l in loaded {
        docs.extend(l.docs);
        failures.extend(l.failures);
        skipped += l.skipped;
        invalid_tests += l.invalid_tests;
    }

    let pb = progress(docs.len(), "measuring");
    let results = measure::parallel_map(&docs, jobs, &pb, |d| measure::measure(d, &tokenizers));
    pb.finish_and_clear();
    let mut measured: Vec<Measured> = Vec::with_capacity(results.len());
    for (r, doc) in results.into_iter().zip(&docs) {
        match r {
            Ok(m) => measured.push(m),
            // --skip-invalid: a document its schema rejects is left out, not a failure.
            Err(f) if args.skip_invalid && doc.spec.validate(&doc.value).is_err() => {
                skipped += 1;
                crate::streams::report(&crate::streams::shorten(&format!(
                    "skipped: {}: {}",
                    f.name, f.message
                )));
            }
            Err(f) => failures.push(f),
        }
    }
    drop(docs);

    for f in &failures {
        crate::streams::report(&crate::streams::shorten(&format!(
            "error: {}: {}",
            f.name, f.message
        )));
    }
    let info = RunInfo {
        failed: failures.len(),
        skipped,
        invalid_tests: args.schema_tests.then_some(invalid_tests),
        group_kind: if args.schema_tests {
            "source"
        } else {
            "folder"
        },
    };
    let summaries: Vec<Summary> = tokenizers
        .iter()
        .enumerate()
        .map(|(t, tk)| Summary::new(&tk.name, t, &measured))
        .collect();
    match args.format {
        Format::Table => {
            let tables: Vec<String> = summaries
                .iter()
                .map(|s| report::to_table(s, &info, args.top))
                .collect();
            crate::write_stdout(&tables.join("\n"))?;
        }
        Format::Json => {
            let items = summaries
                .iter()
                .map(|s| report::to_json(s, &info, args.top))
                .collect();
            let text = serde_json::to_string_pretty(&report::one_or_array(items))?;
            crate::write_stdout(&text)?;
        }
        Format::Csv => {
            let names: Vec<String> = tokenizers.iter().map(|t| t.name.clone()).collect();
            report::write_csv(std::io::stdout().lock(), &measured, &names)?;
        }
    }
    if let Some(path) = &args.plot {
        plot::plot(path, &summaries)?;
        crate::streams::report(&format!(
            "wrote {} (the dss/compact token ratio per document)",
            path.display()
        ));
    }
    if failures.is_empty() {
        Ok(ExitCode::SUCCESS)
    } else {
        eprintln!(
            "error: {} documents failed (listed above); {} measured, {skipped} skipped",
            failures.len(),
            measured.len()
        );
        Ok(ExitCode::FAILURE)
    }
}

/// A progress bar on stderr; indicatif draws nothing when stderr is not a terminal.
fn progress(len: usize, what: &'static str) -> ProgressBar {
    let pb = ProgressBar::with_draw_target(Some(len as u64), ProgressDrawTarget::stderr());
    if let Ok(style) =
        ProgressStyle::with_template("{msg:>10} [{bar:40}] {pos}/{len} ({elapsed}, eta {eta})")
    {
        pb.set_style(style.progress_chars("=> "));
    }
    pb.set_message(what);
    pb
}

/// What `text` (a readable grammar) costs in a prompt: its o200k tokens, counted as
/// `dss tokens --grammar` counts them.
pub(crate) fn prompt_tokens(text: &str) -> Result<usize> {
    Tokenizer::load("o200k")?.count(text)
}

/// `--grammar`: the prompt side, per tokenizer.
fn grammar_report(spec: &CompiledSpec, tokenizers: &[Tokenizer], format: Format) -> Result<()> {
    let bnf = crate::guard::guard("grammar_bnf", || spec.grammar_bnf()).map_err(|e| anyhow!(e))?;
    let compact = serde_json::to_string(spec.schema())?;
    let pretty = serde_json::to_string_pretty(spec.schema())?;
    let mut rows = Vec::new();
    for t in tokenizers {
        rows.push((
            t.name.clone(),
            t.count(&bnf)?,
            t.count(&compact)?,
            t.count(&pretty)?,
        ));
    }
    match format {
        Format::Table => {
            let mut out = format!(
                "{:<12} {:>14} {:>16} {:>15} {:>16}\n",
                "tokenizer", "grammar (BNF)", "schema compact", "schema pretty", "grammar/schema"
            );
            for (name, g, c, p) in &rows {
                out.push_str(&format!(
                    "{name:<12} {g:>14} {c:>16} {p:>15} {:>16.3}\n",
                    *g as f64 / (*c).max(1) as f64
                ));
            }
            crate::write_stdout(&out)
        }
        Format::Json => {
            let items: Vec<Value> = rows
                .iter()
                .map(|(name, g, c, p)| {
                    json!({
                        "tokenizer": name,
                        "grammar_bnf": g,
                        "schema_compact": c,
                        "schema_pretty": p,
                    })
                })
                .collect();
            crate::write_stdout(&serde_json::to_string_pretty(&report::one_or_array(items))?)
        }
        Format::Csv => {
            let mut w = csv::Writer::from_writer(std::io::stdout().lock());
            w.write_record([
                "tokenizer",
                "grammar_bnf",
                "schema_compact",
                "schema_pretty",
            ])?;
            for (name, g, c, p) in &rows {
                w.write_record([name.clone(), g.to_string(), c.to_string(), p.to_string()])?;
            }
            w.flush()?;
            Ok(())
        }
    }
}
