//! `dss tokens`: how many tokens the same documents cost as pretty JSON, compact JSON and
//! dss shorthand, with real tokenizers (o200k, cl100k; embedded, offline).

use anyhow::{anyhow, Context, Result};
use clap::Args;
use dss_compiler::CompiledSpec;
use serde_json::Value;
use std::path::{Path, PathBuf};
use tiktoken_rs::CoreBPE;

#[derive(Args)]
pub struct TokensArgs {
    /// The compiled spec (directory with spec.json, a spec.json, or a schema file).
    #[arg(long, value_name = "PATH")]
    pub spec: PathBuf,
    /// JSON files, JSONL files (one document per line) or folders of them.
    #[arg(value_name = "PATH", required = true)]
    pub paths: Vec<PathBuf>,
}

struct Doc {
    name: String,
    value: Value,
}

fn collect(path: &Path, out: &mut Vec<Doc>) -> Result<()> {
    if path.is_dir() {
        let mut entries: Vec<PathBuf> = std::fs::read_dir(path)
            .with_context(|| format!("{}: cannot read folder", path.display()))?
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| p.is_dir() || p.extension().is_some_and(|x| x == "json" || x == "jsonl"))
            .collect();
        entries.sort();
        for p in entries {
            collect(&p, out)?;
        }
        return Ok(());
    }
    let text = std::fs::read_to_string(path)
        .with_context(|| format!("{}: cannot read", path.display()))?;
    if path.extension().is_some_and(|x| x == "jsonl") {
        for (i, line) in text
            .lines()
            .enumerate()
            .filter(|(_, l)| !l.trim().is_empty())
        {
            let value = serde_json::from_str(line)
                .map_err(|e| anyhow!("{}:{}: {e}", path.display(), i + 1))?;
            out.push(Doc {
                name: format!("{}:{}", path.display(), i + 1),
                value,
            });
        }
    } else {
        let value = serde_json::from_str(&text).map_err(|e| anyhow!("{}: {e}", path.display()))?;
        out.push(Doc {
            name: path.display().to_string(),
            value,
        });
    }
    Ok(())
}

pub fn run(spec: &CompiledSpec, args: &TokensArgs) -> Result<bool> {
    let mut docs = Vec::new();
    for p in &args.paths {
        collect(p, &mut docs)?;
    }
    let tokenizers: Vec<(&str, CoreBPE)> = vec![
        (
            "o200k",
            tiktoken_rs::o200k_base().map_err(|e| anyhow!("o200k tokenizer: {e}"))?,
        ),
        (
            "cl100k",
            tiktoken_rs::cl100k_base().map_err(|e| anyhow!("cl100k tokenizer: {e}"))?,
        ),
    ];
    let mut failed = 0;
    let mut rows = Vec::new();
    for d in &docs {
        match spec.compress(&d.value) {
            Ok(s) => rows.push((
                serde_json::to_string_pretty(&d.value)?,
                serde_json::to_string(&d.value)?,
                s,
            )),
            Err(e) => {
                failed += 1;
                eprintln!("error: {}: {e}", d.name);
            }
        }
    }
    println!("{} documents ({} failed to compress)", rows.len(), failed);
    println!(
        "{:<8} {:>12} {:>12} {:>12} {:>10}",
        "tokens", "pretty JSON", "compact JSON", "dss", "dss/compact"
    );
    for (name, bpe) in &tokenizers {
        let n = |s: &str| bpe.encode_with_special_tokens(s).len();
        let (mut p, mut c, mut d) = (0usize, 0usize, 0usize);
        for (pretty, compact, dss) in &rows {
            p += n(pretty);
            c += n(compact);
            d += n(dss);
        }
        let ratio = if c == 0 { 0.0 } else { d as f64 / c as f64 };
        println!("{name:<8} {p:>12} {c:>12} {d:>12} {ratio:>10.2}");
    }
    Ok(failed == 0)
}
