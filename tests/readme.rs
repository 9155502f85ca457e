//! The documentation stays true: README.md, ARCHITECTURE.md and the book under `docs/`.
//!
//! - every `dss …` command of their `sh` blocks runs as written (from a copy of the
//!   repository root, with the built `dss` first on `PATH`) and exits 0, except the ones
//!   listed in [`SKIPPED`] with their reason;
//! - every Rust block is, word for word, an example that `cargo test` builds (and, for the
//!   library one, runs); README.md has both;
//! - every relative link (a file, and a `#anchor` into a Markdown file) resolves;
//! - every command `dss --help` lists has its section in `docs/reference/commands.md`.
//!
//! `cargo test --no-default-features --test readme` (the runtime is not needed).

use std::path::{Path, PathBuf};
use std::process::Command;

const DSS: &str = env!("CARGO_BIN_EXE_dss");
const WORKSPACE: &str = env!("CARGO_MANIFEST_DIR");

/// Documented commands this test does not run, each with why (a substring of the command).
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
        "dss model bench",
        "times a local model's calls (the `runtime` feature and a downloaded model)",
    ),
    (
        "dss eval suites/",
        "runs a local model on every case of a suite",
    ),
    (
        "dss eval examples/",
        "runs a local model on every case of a bundled suite",
    ),
    (
        "dss eval table out/",
        "reads the reports of the `dss eval` runs above (tested in tests/cli/eval.rs)",
    ),
];

/// The examples the documentation's Rust blocks are taken from, between `// README begin` and
/// `// README end` (indented one level, in `main`).
const RUST_EXAMPLES: &[&str] = &[
    "dss-compiler/examples/readme_library.rs",
    "dss-runtime/examples/readme_generate.rs",
];

fn readme() -> String {
    std::fs::read_to_string(Path::new(WORKSPACE).join("README.md")).expect("README.md")
}

/// The documentation's Markdown files, relative to the workspace, in a fixed order: README.md,
/// ARCHITECTURE.md, CHANGELOG.md, then `docs/**/*.md` sorted.
fn documents() -> Vec<PathBuf> {
    fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
        let mut entries: Vec<_> = std::fs::read_dir(dir)
            .expect("read docs/")
            .map(|e| e.expect("entry").path())
            .collect();
        entries.sort();
        for path in entries {
            if path.is_dir() {
                walk(&path, out);
            } else if path.extension().is_some_and(|e| e == "md") {
                out.push(path);
            }
        }
    }
    let root = Path::new(WORKSPACE);
    let mut out: Vec<PathBuf> = ["README.md", "ARCHITECTURE.md", "CHANGELOG.md"]
        .iter()
        .map(|f| root.join(f))
        .collect();
    walk(&root.join("docs"), &mut out);
    out.into_iter()
        .map(|p| {
            p.strip_prefix(root)
                .expect("in the workspace")
                .to_path_buf()
        })
        .collect()
}

fn read_doc(path: &Path) -> String {
    std::fs::read_to_string(Path::new(WORKSPACE).join(path))
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()))
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

    let all: Vec<String> = documents()
        .iter()
        .flat_map(|d| blocks(&read_doc(d), "sh"))
        .flat_map(|b| commands(&b))
        .filter(|c| is_dss(c))
        .collect();
    assert!(
        all.len() >= 40,
        "the documentation's dss commands: {all:#?}"
    );
    let (mut ran, mut failures) = (0, Vec::new());
    let mut used = vec![false; SKIPPED.len()];
    // Commands left out because this machine lacks something CI has: counted as a skip.
    let (mut no_data, mut no_jq) = (0, 0);
    for command in &all {
        if let Some(i) = SKIPPED.iter().position(|(k, _)| command.contains(k)) {
            used[i] = true;
            eprintln!("not run ({}): {command}", SKIPPED[i].1);
            continue;
        }
        if (needs_data(command) || command.contains("out/vl")) && !corpora {
            eprintln!("not run (no corpora in {}): {command}", data.display());
            no_data += 1;
            continue;
        }
        if command.contains("jq ") && !jq {
            eprintln!("not run (jq is not installed): {command}");
            no_jq += 1;
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
        assert!(
            used,
            "SKIPPED lists `{key}`, which the documentation no longer has"
        );
    }
    assert!(
        failures.is_empty(),
        "documented commands that fail:\n{}",
        failures.join("\n")
    );
    eprintln!("{ran} documented commands ran, {} in all", all.len());
    assert!(ran >= 15, "only {ran} documented commands ran");
    let test = "readme_commands_run_as_written";
    if no_data > 0 {
        dss_data::skip(
            test,
            &format!(
                "partly: {no_data} documented commands need the full corpora, which are not \
                 in {} (set DSS_DATA_DIR to the data directory)",
                data.display()
            ),
        );
    }
    if no_jq > 0 {
        dss_data::skip(
            test,
            &format!("partly: {no_jq} documented commands pipe through jq, which is not installed"),
        );
    }
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
fn rust_blocks_in_the_book_are_the_examples_cargo_builds() {
    let regions: Vec<String> = RUST_EXAMPLES.iter().map(|p| example_region(p)).collect();
    for doc in documents() {
        for block in blocks(&read_doc(&doc), "rust") {
            assert!(
                regions.contains(&block),
                "{}: a Rust block that is none of {RUST_EXAMPLES:?}'s README region:\n{block}",
                doc.display()
            );
        }
    }
}

/// GitHub's anchor of a heading: lower-cased, punctuation other than `-` and `_` dropped,
/// spaces as `-`.
fn slug(heading: &str) -> String {
    heading
        .trim()
        .to_lowercase()
        .chars()
        .filter(|c| c.is_alphanumeric() || matches!(c, ' ' | '-' | '_'))
        .map(|c| if c == ' ' { '-' } else { c })
        .collect()
}

/// The anchors of a Markdown text's headings (outside fenced blocks), with GitHub's `-1`,
/// `-2` … for repeated ones.
fn anchors(text: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    let mut fenced = false;
    for line in text.lines() {
        if line.trim_start().starts_with("```") {
            fenced = !fenced;
            continue;
        }
        if fenced || !line.starts_with('#') {
            continue;
        }
        let base = slug(line.trim_start_matches('#'));
        let mut anchor = base.clone();
        let mut n = 0;
        while out.contains(&anchor) {
            n += 1;
            anchor = format!("{base}-{n}");
        }
        out.push(anchor);
    }
    out
}

/// The targets of a Markdown text's links and images (`[text](target)`), outside fenced
/// blocks and inline code.
fn links(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut fenced = false;
    for line in text.lines() {
        if line.trim_start().starts_with("```") {
            fenced = !fenced;
            continue;
        }
        if fenced {
            continue;
        }
        // Inline code spans out (a backtick run opens and the same run closes).
        let mut plain = String::new();
        let mut rest = line;
        while let Some(i) = rest.find('`') {
            plain.push_str(&rest[..i]);
            let run = rest[i..].chars().take_while(|&c| c == '`').count();
            let after = &rest[i + run..];
            match after.find(&"`".repeat(run)) {
                Some(j) => rest = &after[j + run..],
                None => {
                    rest = after;
                    break;
                }
            }
        }
        plain.push_str(rest);
        let mut from = 0;
        while let Some(i) = plain[from..].find("](") {
            let start = from + i + 2;
            let Some(len) = plain[start..].find(')') else {
                break;
            };
            out.push(plain[start..start + len].to_string());
            from = start + len;
        }
    }
    out
}

#[test]
fn relative_links_resolve() {
    let root = Path::new(WORKSPACE);
    let mut broken = Vec::new();
    let mut checked = 0;
    for doc in documents() {
        let text = read_doc(&doc);
        for target in links(&text) {
            if target.contains("://") || target.starts_with("mailto:") {
                continue;
            }
            checked += 1;
            let (file, anchor) = match target.split_once('#') {
                Some((f, a)) => (f, Some(a)),
                None => (target.as_str(), None),
            };
            let path = if file.is_empty() {
                doc.clone()
            } else {
                doc.parent().unwrap_or(Path::new("")).join(file)
            };
            let full = root.join(&path);
            if !full.exists() {
                broken.push(format!(
                    "{}: {target} (no {})",
                    doc.display(),
                    path.display()
                ));
                continue;
            }
            if let Some(anchor) = anchor {
                let is_md = full.extension().is_some_and(|e| e == "md");
                let known = is_md
                    && anchors(&std::fs::read_to_string(&full).unwrap_or_default())
                        .iter()
                        .any(|a| a == anchor);
                if !known {
                    broken.push(format!(
                        "{}: {target} (no heading #{anchor})",
                        doc.display()
                    ));
                }
            }
        }
    }
    assert!(checked >= 50, "only {checked} relative links found");
    assert!(broken.is_empty(), "broken links:\n{}", broken.join("\n"));
}

#[test]
fn every_command_has_its_reference_section() {
    let help = Command::new(DSS)
        .arg("--help")
        .output()
        .expect("dss --help");
    let help = String::from_utf8_lossy(&help.stdout).into_owned();
    let reference = read_doc(Path::new("docs/reference/commands.md"));
    let sections = anchors(&reference);
    let names: Vec<&str> = help
        .lines()
        .skip_while(|l| !l.starts_with("Commands:"))
        .skip(1)
        .take_while(|l| l.starts_with("  "))
        .filter_map(|l| l.split_whitespace().next())
        .filter(|&n| n != "help")
        .collect();
    assert!(names.len() >= 10, "dss --help lists: {names:?}");
    for name in names {
        let anchor = format!("dss-{name}");
        assert!(
            sections.contains(&anchor),
            "docs/reference/commands.md has no section `dss {name}`"
        );
    }
}

#[test]
fn anchors_and_links_are_read_as_github_does() {
    assert_eq!(slug(" `dss model list`"), "dss-model-list");
    assert_eq!(
        slug(" Grammar pruning — where extraction and pruning sit"),
        "grammar-pruning--where-extraction-and-pruning-sit"
    );
    assert_eq!(anchors("# A\n```\n# not\n```\n## A\n"), ["a", "a-1"]);
    assert_eq!(
        links("see [x](a.md#b) and `[y](not)` and ![i](p.svg)"),
        ["a.md#b", "p.svg"]
    );
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
