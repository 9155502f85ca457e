//! The one llama.cpp backend of the process, its log routing, and model loading.
//!
//! llama.cpp may be initialised only once per process (`LlamaBackend::init` errors the
//! second time), so every part of the runtime goes through [`backend`].
//!
//! llama.cpp and ggml log through a callback installed here: messages become `tracing`
//! events with target `llama.cpp` (DEBUG for chatter, WARN/ERROR as llama.cpp rates them),
//! so nothing reaches the terminal unless the application installs a subscriber.
//! `capture_llama_logs` additionally collects the messages a call logs on the current
//! thread, which is how grammar errors get their reasons.

use std::cell::RefCell;
use std::ffi::{c_char, c_void, CStr};
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use llama_cpp_2::llama_backend::LlamaBackend;
use llama_cpp_2::model::params::LlamaModelParams;
use llama_cpp_2::model::LlamaModel;

/// Errors from initialising llama.cpp or loading a model.
#[derive(Debug, Clone, thiserror::Error)]
#[non_exhaustive]
pub enum BackendError {
    /// `llama_backend_init` failed (typically: something else in the process initialised
    /// llama.cpp without going through [`backend`]).
    #[error("could not initialise the llama.cpp backend: {0}")]
    Init(String),
    /// The model path does not exist (checked here: llama-cpp-2 only `debug_assert`s it).
    #[error("model file {} does not exist", .0.display())]
    ModelMissing(PathBuf),
    /// llama.cpp refused the file.
    #[error("llama.cpp could not load model {}: {reason}", path.display())]
    ModelLoad {
        /// The model file.
        path: PathBuf,
        /// llama.cpp's message.
        reason: String,
    },
}

/// The process-wide llama.cpp backend, initialised (with log routing) on first use.
pub fn backend() -> Result<&'static LlamaBackend, BackendError> {
    static BACKEND: OnceLock<Result<LlamaBackend, String>> = OnceLock::new();
    BACKEND
        .get_or_init(|| {
            install_log_callback();
            LlamaBackend::init().map_err(|e| e.to_string())
        })
        .as_ref()
        .map_err(|e| BackendError::Init(e.clone()))
}

/// Loads a GGUF model. `vocab_only` skips the weights: enough for tokenising and
/// grammars, and fast even for large models.
pub fn load_model(path: &Path, vocab_only: bool) -> Result<LlamaModel, BackendError> {
    let backend = backend()?;
    if !path.is_file() {
        return Err(BackendError::ModelMissing(path.to_owned()));
    }
    let params = LlamaModelParams::default().with_vocab_only(vocab_only);
    let (model, logs) = capture_llama_logs(|| LlamaModel::load_from_file(backend, path, &params));
    model.map_err(|e| BackendError::ModelLoad {
        path: path.to_owned(),
        reason: error_reason(&logs).unwrap_or_else(|| e.to_string()),
    })
}

/// The warning/error lines of captured logs, joined, if any.
pub(crate) fn error_reason(logs: &[LogLine]) -> Option<String> {
    let lines: Vec<&str> = logs
        .iter()
        .filter(|l| matches!(l.level, tracing::Level::ERROR | tracing::Level::WARN))
        .map(|l| l.text.as_str())
        .collect();
    (!lines.is_empty()).then(|| lines.join("; "))
}

/// One message llama.cpp logged.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct LogLine {
    pub level: tracing::Level,
    pub text: String,
}

thread_local! {
    /// Set while [`capture_llama_logs`] runs on this thread.
    static CAPTURE: RefCell<Option<Vec<LogLine>>> = const { RefCell::new(None) };
}

/// Runs `f`, returning what llama.cpp logged on this thread meanwhile. Captured messages
/// go to `tracing` at DEBUG only, since the caller reports them itself.
pub(crate) fn capture_llama_logs<T>(f: impl FnOnce() -> T) -> (T, Vec<LogLine>) {
    let outer = CAPTURE.with(|c| c.borrow_mut().replace(Vec::new()));
    let out = f();
    let logs = CAPTURE
        .with(|c| std::mem::replace(&mut *c.borrow_mut(), outer))
        .unwrap_or_default();
    (out, logs)
}

fn install_log_callback() {
    // SAFETY: the callback is a plain function that lives for the whole program and
    // ignores `user_data`; llama.cpp calls it with a NUL-terminated string.
    unsafe { llama_cpp_sys_2::llama_log_set(Some(log_callback), std::ptr::null_mut()) }
}

unsafe extern "C" fn log_callback(
    level: llama_cpp_sys_2::ggml_log_level,
    text: *const c_char,
    _user_data: *mut c_void,
) {
    if text.is_null() {
        return;
    }
    // SAFETY: non-null and NUL-terminated per llama.cpp's logging contract.
    let raw = unsafe { CStr::from_ptr(text) }.to_string_lossy();
    let text = raw.trim_end();
    if text.is_empty() {
        return;
    }
    let level = match level {
        llama_cpp_sys_2::GGML_LOG_LEVEL_ERROR => tracing::Level::ERROR,
        llama_cpp_sys_2::GGML_LOG_LEVEL_WARN => tracing::Level::WARN,
        llama_cpp_sys_2::GGML_LOG_LEVEL_INFO => tracing::Level::INFO,
        _ => tracing::Level::DEBUG,
    };
    let captured = CAPTURE
        .try_with(|c| match c.try_borrow_mut() {
            Ok(mut slot) => match slot.as_mut() {
                Some(buf) => {
                    buf.push(LogLine {
                        level,
                        text: text.to_owned(),
                    });
                    true
                }
                None => false,
            },
            Err(_) => false,
        })
        .unwrap_or(false);
    if captured {
        tracing::debug!(target: "llama.cpp", "{text}");
        return;
    }
    // Model loading logs dozens of INFO lines; keep them at DEBUG.
    match level {
        tracing::Level::ERROR => tracing::error!(target: "llama.cpp", "{text}"),
        tracing::Level::WARN => tracing::warn!(target: "llama.cpp", "{text}"),
        _ => tracing::debug!(target: "llama.cpp", "{text}"),
    }
}

/// Runs `f`, returning what was written to file descriptor 2 meanwhile.
///
/// Why: llama.cpp's GBNF parser reports syntax errors with a bare `fprintf(stderr)`, not
/// through its log callback. Capturing it keeps tests and the CLI quiet and lets the
/// error carry the reason. The redirection is process-wide, so a mutex serialises
/// captures; anything another thread writes to stderr in that (short) window is captured
/// too. Falls back to not capturing if the redirection cannot be set up.
#[cfg(unix)]
pub(crate) fn capture_stderr<T>(f: impl FnOnce() -> T) -> (T, String) {
    use std::io::{Read, Seek};
    use std::os::fd::AsRawFd;
    use std::sync::{Mutex, PoisonError};

    static LOCK: Mutex<()> = Mutex::new(());

    /// Puts the saved fd back on drop, so stderr is restored even if `f` panics.
    struct Restore(i32);
    impl Drop for Restore {
        fn drop(&mut self) {
            // SAFETY: plain fd calls on descriptors we own; flushing all C streams first
            // so buffered output lands in the capture file, not the real stderr.
            unsafe {
                libc::fflush(std::ptr::null_mut());
                libc::dup2(self.0, 2);
                libc::close(self.0);
            }
        }
    }

    let _guard = LOCK.lock().unwrap_or_else(PoisonError::into_inner);
    let Ok(mut file) = tempfile::tempfile() else {
        return (f(), String::new());
    };
    // SAFETY: dup/dup2 on fd 2 and on a file we own; results are checked.
    let saved = unsafe { libc::dup(2) };
    if saved < 0 {
        return (f(), String::new());
    }
    // SAFETY: as above.
    if unsafe { libc::dup2(file.as_raw_fd(), 2) } < 0 {
        // SAFETY: `saved` is ours to close.
        unsafe { libc::close(saved) };
        return (f(), String::new());
    }
    let restore = Restore(saved);
    let out = f();
    drop(restore);
    let mut bytes = Vec::new();
    if file.rewind().is_ok() {
        // A failed read only loses the reason text.
        let _ = file.read_to_end(&mut bytes);
    }
    (out, String::from_utf8_lossy(&bytes).into_owned())
}

/// Without POSIX fds, stderr is left alone.
#[cfg(not(unix))]
pub(crate) fn capture_stderr<T>(f: impl FnOnce() -> T) -> (T, String) {
    (f(), String::new())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn backend_is_shared() {
        let a = backend().expect("backend");
        let b = backend().expect("backend again");
        assert!(std::ptr::eq(a, b));
    }

    #[test]
    fn missing_model_is_a_clear_error() {
        let err = load_model(Path::new("/nonexistent/model.gguf"), true).expect_err("missing");
        assert!(matches!(err, BackendError::ModelMissing(_)), "{err}");
    }

    #[test]
    fn garbage_model_reports_llama_reason() {
        let tmp = tempfile::NamedTempFile::new().expect("temp file");
        std::fs::write(tmp.path(), b"definitely not gguf").expect("write");
        let err = load_model(tmp.path(), true).expect_err("garbage");
        assert!(matches!(err, BackendError::ModelLoad { .. }), "{err}");
    }

    #[cfg(unix)]
    #[test]
    fn stderr_is_captured_and_restored() {
        let ((), text) = capture_stderr(|| {
            let msg = c"captured-by-test\n";
            // SAFETY: writing a valid buffer to fd 2.
            unsafe { libc::write(2, msg.as_ptr().cast(), msg.to_bytes().len()) };
        });
        assert_eq!(text, "captured-by-test\n");
    }

    #[test]
    fn nested_log_capture_restores_outer() {
        let (((), inner), outer) = capture_llama_logs(|| capture_llama_logs(|| ()));
        assert!(inner.is_empty() && outer.is_empty());
        CAPTURE.with(|c| assert!(c.borrow().is_none()));
    }
}
