//! Turning a panic inside a library call into an error, so that a bug in the compiler
//! never kills a `--keep-going` stream or prints a backtrace instead of an error line.

use std::cell::{Cell, RefCell};
use std::panic::{self, AssertUnwindSafe};
use std::sync::Once;

thread_local! {
    /// True while this thread runs inside [`guard`].
    static GUARDED: Cell<bool> = const { Cell::new(false) };
    /// The message of the last panic caught inside [`guard`] on this thread.
    static LAST_PANIC: RefCell<Option<String>> = const { RefCell::new(None) };
}

static INSTALL: Once = Once::new();

/// Install the panic hook: inside [`guard`] the panic message is recorded instead of
/// printed; everywhere else the default hook runs as usual.
pub(crate) fn install_hook() {
    INSTALL.call_once(|| {
        let default = panic::take_hook();
        panic::set_hook(Box::new(move |info| {
            if GUARDED.with(Cell::get) {
                let location = info
                    .location()
                    .map(|l| format!(" at {}:{}:{}", l.file(), l.line(), l.column()))
                    .unwrap_or_default();
                let message = payload_message(info.payload());
                LAST_PANIC.with(|p| *p.borrow_mut() = Some(format!("{message}{location}")));
            } else {
                default(info);
            }
        }));
    });
}

/// Run `f`; a panic becomes `Err("internal error: ...")`.
pub(crate) fn guard<T>(what: &str, f: impl FnOnce() -> T) -> Result<T, String> {
    install_hook();
    let previous = GUARDED.with(|g| g.replace(true));
    let result = panic::catch_unwind(AssertUnwindSafe(f));
    GUARDED.with(|g| g.set(previous));
    result.map_err(|payload| {
        let message = LAST_PANIC
            .with(|p| p.borrow_mut().take())
            .unwrap_or_else(|| payload_message(payload.as_ref()));
        format!("internal error: dss-compiler panicked in {what}: {message} (this is a bug in dss; please report it)")
    })
}

fn payload_message(payload: &(dyn std::any::Any + Send)) -> String {
    if let Some(s) = payload.downcast_ref::<&str>() {
        (*s).to_string()
    } else if let Some(s) = payload.downcast_ref::<String>() {
        s.clone()
    } else {
        "unknown panic payload".to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::guard;

    #[test]
    fn panic_becomes_error() {
        let r: Result<(), String> = guard("test", || panic!("boom"));
        let e = r.unwrap_err();
        assert!(e.contains("boom"), "{e}");
        assert!(e.contains("internal error"), "{e}");
        assert_eq!(guard("test", || 5), Ok(5));
    }
}
