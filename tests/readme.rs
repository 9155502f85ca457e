//! README.md stays true: every `dss …` command of its `sh` blocks runs as written (from a
//! copy of the repository root, with the built `dss` first on `PATH`) and exits 0, except
//! the ones listed in [`SKIPPED`] with their reason; and every Rust block is, word for word,
//! an example that `cargo test` builds (and, for the library one, runs).
//!
//! `cargo test --no-default-features --test readme` (the runtime is not needed).

use std::path::{Path, PathBuf};
use std::process::Command;

const DSS: &str = env!("CARGO_BIN_EXE_dss");
const WORKSPACE: &str = env!("CARGO_MANIFEST_DIR");

/// README commands this test does not run, each with why (a substring of the command).
const SKIPPED: &[(&str, &str)] = &[
    (
        "dss model list",
        "needs the `runtime` feature (llama.cpp), which this test does not build",
    ),
    (
        "dss model fetch",
        "downloads a model from PyPI (network) and needs the `runtime` feature",
    ),
    (
        "dss generate",
        "runs a local model (the `runtime` feature and a downloaded model)",
    ),
    (
        "dss eval suites/",
        "runs a local model on every case of a suite",
    ),
];

/// The examples README's Rust blocks are taken from, between `// README begin` and
/// `// README end` (indented one level, in `main`).
const RUST_EXAMPLES: &[&str] = &[
    "dss-compiler/examples/readme_library.rs",
    "dss-runtime/examples/readme_generate.rs",
];

fn readme() -> String {
    std::fs::read_to_string(Path::new(WORKSPACE).join("README.md")).expect("README.md")
}

/// The bodies of README's fenced blocks of language `lang`.
fn blocks(text: &str, lang: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut current: Option<String> = None;
    for line in text.lines() {
        match &mut current {
            None if line.trim_start() == format!("```{lang}") => current = Some(String::new()),
            None => {}
            Some(_) if line.trim_start() == "```" => out.extend(current.take()),
            Some(body) => {
                body.push_str(line);
                body.push('\n');
            }
        }
    }
    out
}

/// A shell line without its trailing `# comment` (a `#` after a space, outside quotes).
fn strip_comment(line: &str) -> &str {
    let (mut single, mut double) = (false, false);
    let mut prev = ' ';
    for (i, c) in line.char_indices() {
        match c {
            '\'' if !double => single = !single,
            '"' if !single => double = !double,
            '#' if !single && !double && prev.is_whitespace() => return line[..i].trim_end(),
            _ => {}
        }
        prev = c;
    }
    line.trim_end()
}

/// The commands of an `sh` block: continuation lines joined, comments and blank lines out.
fn commands(block: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut pending = String::new();
    for line in block.lines() {
        let line = strip_comment(line);
        if let Some(head) = line.strip_suffix('\\') {
            pending.push_str(head);
            continue;
        }
        pending.push_str(line);
        let command = pending.split_whitespace().collect::<Vec<_>>().join(" ");
        pending.clear();
        if !command.is_empty() {
            out.push(command);
        }
    }
    out
}

/// Whether a command line runs `dss` (at its start or after a pipe).
fn is_dss(command: &str) -> bool {
    command.starts_with("dss ") || command.contains("| dss ")
}

/// What a command needs besides the repository: the data directory, or `jq`.
fn needs_data(command: &str) -> bool {
    command.contains("../shared/data") || command.contains("$DSS_DATA_DIR")
}

/// A copy of the repository root made of symlinks (outputs land in the copy, not in the
/// checkout), with `../shared/data` pointing at the data directory.
fn layout(tmp: &Path, data: &Path) -> PathBuf {
    let repo = tmp.join("repo");
    std::fs::create_dir_all(&repo).unwrap();
    for entry in std::fs::read_dir(WORKSPACE).unwrap() {
        let entry = entry.unwrap();
        let name = entry.file_name();
        if matches!(name.to_str(), Some("target" | ".git" | "out" | "suites")) {
            continue;
        }
        std::os::unix::fs::symlink(entry.path(), repo.join(&name)).unwrap();
    }
    std::fs::create_dir_all(tmp.join("shared")).unwrap();
    if data.is_dir() {
        std::os::unix::fs::symlink(data, tmp.join("shared/data")).unwrap();
    }
    repo
}

/// Whether the data directory holds the corpora README's commands read.
fn has_corpora(data: &Path) -> bool {
    ["vega-lite/examples", "maskbench/data", "APIMixSNIPS"]
        .iter()
        .all(|c| data.join(c).is_dir())
}

fn has_jq() -> bool {
    Command::new("jq")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success())
}

#[test]
fn readme_commands_run_as_written() {
    let ci = std::env::var("CI").is_ok_and(|v| v == "true");
    let data = dss_data::data_dir();
    let data = data.canonicalize().unwrap_or(data);
    let corpora = has_corpora(&data);
    let jq = has_jq();
    assert!(
        !ci || (corpora && jq),
        "under CI every README command must run: corpora in {} ({corpora}), jq ({jq})",
        data.display()
    );
    let tmp = tempfile::tempdir().unwrap();
    let repo = layout(tmp.path(), &data);
    let bin_dir = Path::new(DSS).parent().unwrap();
    let path = std::env::join_paths(std::iter::once(bin_dir.to_path_buf()).chain(
        std::env::split_paths(&std::env::var_os("PATH").unwrap_or_default()),
    ))
    .unwrap();

    let all: Vec<String> = blocks(&readme(), "sh")
        .iter()
        .flat_map(|b| commands(b))
        .filter(|c| is_dss(c))
        .collect();
    assert!(all.len() >= 20, "README's dss commands: {all:#?}");
    let (mut ran, mut failures) = (0, Vec::new());
    let mut used = vec![false; SKIPPED.len()];
    for command in &all {
        if let Some(i) = SKIPPED.iter().position(|(k, _)| command.contains(k)) {
            used[i] = true;
            eprintln!("skipped ({}): {command}", SKIPPED[i].1);
            continue;
        }
        if (needs_data(command) || command.contains("out/vl")) && !corpora {
            eprintln!("skipped (no corpora in {}): {command}", data.display());
            continue;
        }
        if command.contains("jq ") && !jq {
            eprintln!("skipped (jq is not installed): {command}");
            continue;
        }
        let out = Command::new("sh")
            .args(["-c", command])
            .current_dir(&repo)
            .env("PATH", &path)
            .env("DSS_DATA_DIR", &data)
            .output()
            .expect("run sh");
        ran += 1;
        if !out.status.success() {
            failures.push(format!(
                "{command}\n  exit {:?}\n  stderr: {}",
                out.status.code(),
                String::from_utf8_lossy(&out.stderr)
                    .lines()
                    .rev()
                    .take(5)
                    .collect::<Vec<_>>()
                    .join("\n          ")
            ));
        }
    }
    for ((key, _), used) in SKIPPED.iter().zip(used) {
        assert!(used, "SKIPPED lists `{key}`, which README no longer has");
    }
    assert!(
        failures.is_empty(),
        "README commands that fail:\n{}",
        failures.join("\n")
    );
    eprintln!("{ran} README commands ran, {} in all", all.len());
    assert!(ran >= 10, "only {ran} README commands ran");
}

/// The lines of an example between its README markers, one indentation level less.
fn example_region(path: &str) -> String {
    let text = std::fs::read_to_string(Path::new(WORKSPACE).join(path)).expect(path);
    let start = text.find("// README begin\n").expect("README begin marker") + 16;
    let end = text.find("    // README end").expect("README end marker");
    text[start..end]
        .lines()
        .map(|l| l.strip_prefix("    ").unwrap_or(l))
        .map(|l| format!("{l}\n"))
        .collect()
}

#[test]
fn readme_rust_blocks_are_the_examples_cargo_builds() {
    let rust = blocks(&readme(), "rust");
    assert_eq!(rust.len(), RUST_EXAMPLES.len(), "README's Rust blocks");
    for path in RUST_EXAMPLES {
        let region = example_region(path);
        assert!(
            rust.contains(&region),
            "README.md has no Rust block equal to the README region of {path}:\n{region}"
        );
    }
}

#[test]
fn shell_lines_are_split_as_a_shell_would() {
    assert_eq!(
        strip_comment("dss tokens --spec out/vl x --skip-if-present '$..a #b' # note"),
        "dss tokens --spec out/vl x --skip-if-present '$..a #b'"
    );
    assert_eq!(
        commands("dss a \\\n    --b c   # d\n\njq -c . x | dss e\n"),
        ["dss a --b c", "jq -c . x | dss e"]
    );
    assert!(is_dss("jq -R . r.txt | dss generate --spec g"));
    assert!(!is_dss("scripts/example   # set up"));
}
