//! Skipped tests, said and counted: a test that cannot run here calls [`skip`] and returns,
//! so it is never reported as a silent pass.
//!
//! [`skip`] writes `SKIPPED <test>: <reason>` to stderr (straight to the stream, so it shows
//! even for a test that passes: libtest captures only `print!`/`eprint!`) and, when
//! `$DSS_SKIP_LOG` names a file, appends the same line to it. `scripts/test` sets
//! `DSS_SKIP_LOG` and, after `cargo test`, prints how many tests were skipped and why.
//!
//! The reason should be the same text for every test skipped for the same cause (name the
//! cause and how to enable it, not the test), so the summary groups them.

use std::io::Write;
use std::path::Path;

use crate::Policy;

/// The environment variable naming the file [`skip`] appends its line to (`scripts/test`
/// sets it; unset, the line goes to stderr only).
pub const SKIP_LOG_VAR: &str = "DSS_SKIP_LOG";

/// The environment variable that skips the tests needing the small model (set to anything;
/// not allowed under `CI=true`, see [`skip_model_test`]).
pub const SKIP_MODEL_TESTS_VAR: &str = "DSS_SKIP_MODEL_TESTS";

/// Is this a CI run (`CI=true`, see [`Policy::from_env`])? There a missing corpus, model or
/// required tool is a failure, not a skip.
pub fn under_ci() -> bool {
    Policy::from_env() == Policy::FullRequired
}

/// The line a skip is recorded as: `SKIPPED <test>: <reason>`, on one line (line breaks in
/// either part become spaces).
pub fn skip_line(test: &str, reason: &str) -> String {
    let one_line = |s: &str| s.split_whitespace().collect::<Vec<_>>().join(" ");
    format!("SKIPPED {}: {}", one_line(test), one_line(reason))
}

/// Appends `line` and a newline to the file `log` (created if missing) in one write, so
/// lines of tests running in parallel do not interleave.
pub fn append_skip(log: &Path, line: &str) -> std::io::Result<()> {
    let mut f = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(log)?;
    f.write_all(format!("{line}\n").as_bytes())
}

/// Records that `test` did not run, and why: `SKIPPED <test>: <reason>` on stderr, and
/// appended to the file named by `$DSS_SKIP_LOG` when that is set. The caller then returns
/// from the test.
///
/// It does not check the CI policy: a test whose prerequisite CI must have (the data, the
/// small model) fails under `CI=true` before it gets here ([`under_ci`], [`corpus`],
/// [`skip_model_test`]); only optional, opt-in checks skip there too.
///
/// # Panics
///
/// When `$DSS_SKIP_LOG` is set and the line cannot be appended to it: a skip that is not
/// counted would read as a pass.
///
/// [`corpus`]: crate::corpus
pub fn skip(test: &str, reason: &str) {
    let line = skip_line(test, reason);
    // Straight to the stream: libtest would hold back `eprintln!` of a passing test.
    let _ = std::io::stderr()
        .lock()
        .write_all(format!("\n{line}\n").as_bytes());
    if let Some(log) = std::env::var_os(SKIP_LOG_VAR).filter(|v| !v.is_empty()) {
        let log = Path::new(&log);
        if let Err(e) = append_skip(log, &line) {
            panic!(
                "{SKIP_LOG_VAR}={}: cannot record `{line}`: {e}",
                log.display()
            );
        }
    }
}

/// Whether the model tests are turned off (`DSS_SKIP_MODEL_TESTS` is set): then the skip of
/// `test`, which needs the model `model`, is recorded ([`skip`]) and the caller returns.
///
/// # Panics
///
/// When `DSS_SKIP_MODEL_TESTS` is set under `CI=true`: CI must run the model tests
/// (`.ci/install-deps` fetches the small model).
pub fn skip_model_test(test: &str, model: &str) -> bool {
    if std::env::var_os(SKIP_MODEL_TESTS_VAR).is_none() {
        return false;
    }
    assert!(
        !under_ci(),
        "{test}: under CI=true the model tests must run, but {SKIP_MODEL_TESTS_VAR} is set"
    );
    skip(
        test,
        &format!("{SKIP_MODEL_TESTS_VAR} is set (needs model {model}; unset it to run)"),
    );
    true
}

/// The name of the running test, for functions shared by several tests: libtest runs each
/// test on a thread named after it (`module::test_name`). `unnamed test` on a thread without
/// a name (the main thread, or one the test spawned).
pub fn current_test() -> String {
    std::thread::current()
        .name()
        .filter(|n| *n != "main")
        .unwrap_or("unnamed test")
        .to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_skip_is_one_line() {
        assert_eq!(
            skip_line("t", "no model\n  (fetch it)"),
            "SKIPPED t: no model (fetch it)"
        );
        assert_eq!(skip_line("a::b", "why"), "SKIPPED a::b: why");
    }

    #[test]
    fn skips_are_appended_to_the_log() {
        let dir = tempfile::tempdir().expect("temp dir");
        let log = dir.path().join("skips.log");
        append_skip(&log, &skip_line("one", "why")).unwrap();
        append_skip(&log, &skip_line("two", "why")).unwrap();
        assert_eq!(
            std::fs::read_to_string(&log).unwrap(),
            "SKIPPED one: why\nSKIPPED two: why\n"
        );
        assert!(append_skip(&dir.path().join("no/such/dir/log"), "x").is_err());
    }

    #[test]
    fn the_current_test_is_named_after_its_thread() {
        assert_eq!(
            current_test(),
            "skip::tests::the_current_test_is_named_after_its_thread"
        );
        let spawned = std::thread::spawn(current_test).join().unwrap();
        assert_eq!(spawned, "unnamed test");
    }
}
