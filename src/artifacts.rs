//! `dss compile -o DIR`: the artifact set (spec.json and the four grammars) written as a
//! whole or not at all. Every file is made and written (and synced) in a temporary
//! directory beside DIR first; only then does it replace DIR's set by renames, which
//! replace each file whole. A failure on the way (a generator error, a full disk, a
//! permission) leaves the previous set as it was; so does a kill before the renames.

use crate::guard::guard;
use anyhow::{anyhow, bail, Context, Result};
use dss_compiler::error::SpecError;
use dss_compiler::CompiledSpec;
use std::fs;
use std::io::Write;
use std::path::{Path, PathBuf};

/// One output file: its name and how to make it.
type Artifact = (&'static str, fn(&CompiledSpec) -> Result<String, SpecError>);

const ARTIFACTS: [Artifact; 5] = [
    ("spec.json", CompiledSpec::to_json),
    ("shorthand.bnf", |s| Ok(s.grammar_bnf())),
    ("shorthand.pest", |s| Ok(s.grammar_pest())),
    ("shorthand.gbnf", |s| Ok(s.grammar_gbnf())),
    ("shorthand.lark", CompiledSpec::grammar_lark),
];

/// Write the artifact set of `spec` into `dir` (created if missing), atomically as a set
/// as far as the file system allows: see the module doc.
pub(crate) fn write_artifacts(spec: &CompiledSpec, dir: &Path) -> Result<()> {
    if dir.exists() && !dir.is_dir() {
        bail!(
            "-o {}: this is a file; -o takes the directory to write spec.json and the grammars into",
            dir.display()
        );
    }
    let parent = match dir.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    };
    fs::create_dir_all(&parent).with_context(|| format!("cannot create {}", parent.display()))?;
    let name = dir
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "out".to_string());
    let staging = tempfile::Builder::new()
        .prefix(&format!(".{name}.dss-tmp-"))
        .tempdir_in(&parent)
        .with_context(|| {
            format!(
                "cannot create a temporary directory in {}",
                parent.display()
            )
        })?;
    for (file, make) in ARTIFACTS {
        let text = guard(file, || make(spec)).map_err(|e| anyhow!(e))??;
        let path = staging.path().join(file);
        write_synced(&path, text.as_bytes())
            .with_context(|| format!("cannot write {} (for {})", path.display(), dir.display()))?;
    }
    if !dir.exists() {
        // A new directory appears whole, with every file.
        let staged = staging.keep();
        return fs::rename(&staged, dir).map_err(|e| {
            let _ = fs::remove_dir_all(&staged);
            anyhow!("cannot move the new files into {}: {e}", dir.display())
        });
    }
    replace_files(staging.path(), dir)
    // `staging` (now holding the previous files, if any) is removed on drop.
}

/// Move each artifact from `staging` into `dir`, keeping the file it replaces in
/// `staging` until all are in place; on a failure the previous files are put back.
fn replace_files(staging: &Path, dir: &Path) -> Result<()> {
    for (file, _) in ARTIFACTS {
        let target = dir.join(file);
        if target.is_dir() {
            bail!(
                "cannot replace {}: it is a directory; nothing in {} was changed",
                target.display(),
                dir.display()
            );
        }
    }
    let mut done: Vec<(&str, bool)> = Vec::new();
    for (file, _) in ARTIFACTS {
        let target = dir.join(file);
        let old = staging.join(format!("{file}.old"));
        let had_old = target.exists();
        let result = (|| {
            if had_old {
                fs::rename(&target, &old)?;
            }
            fs::rename(staging.join(file), &target).inspect_err(|_| {
                if had_old {
                    let _ = fs::rename(&old, &target);
                }
            })
        })();
        if let Err(e) = result {
            for (file, had_old) in done.into_iter().rev() {
                let target = dir.join(file);
                if had_old {
                    let _ = fs::rename(staging.join(format!("{file}.old")), &target);
                } else {
                    let _ = fs::remove_file(&target);
                }
            }
            bail!(
                "cannot replace {}: {e}; the previous files in {} are unchanged",
                target.display(),
                dir.display()
            );
        }
        done.push((file, had_old));
    }
    Ok(())
}

/// Write `bytes` to a new file and sync it to disk (a rename of a file not yet on disk
/// could leave an empty file after a crash).
fn write_synced(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let mut f = fs::File::create(path)?;
    f.write_all(bytes)?;
    f.sync_all()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A rename that fails part way (here: a staged file is missing) puts back the
    /// files already replaced.
    #[test]
    fn a_failure_part_way_restores_the_previous_files() {
        let root = tempfile::tempdir().expect("tempdir");
        let (dir, staging) = (root.path().join("out"), root.path().join("staging"));
        fs::create_dir(&dir).expect("mkdir");
        fs::create_dir(&staging).expect("mkdir");
        for (file, _) in ARTIFACTS {
            fs::write(dir.join(file), format!("old {file}")).expect("write");
        }
        // spec.json and shorthand.bnf are staged, the pest grammar is not.
        fs::write(staging.join("spec.json"), "new").expect("write");
        fs::write(staging.join("shorthand.bnf"), "new").expect("write");
        let e = replace_files(&staging, &dir).expect_err("pest is missing");
        assert!(e.to_string().contains("are unchanged"), "{e}");
        for (file, _) in ARTIFACTS {
            let text = fs::read_to_string(dir.join(file)).expect("read");
            assert_eq!(text, format!("old {file}"));
        }
        // A file that did not exist before is removed again.
        fs::remove_file(dir.join("shorthand.bnf")).expect("rm");
        fs::write(staging.join("spec.json"), "new").expect("write");
        fs::write(staging.join("shorthand.bnf"), "new").expect("write");
        assert!(replace_files(&staging, &dir).is_err());
        assert!(!dir.join("shorthand.bnf").exists());
        assert_eq!(
            fs::read_to_string(dir.join("spec.json")).expect("read"),
            "old spec.json"
        );
    }
}
