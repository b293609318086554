//! Place named marks in a memlens trace from a Rust program.
//!
//! Under `memlens record`, the recorder library defines `memlens_mark`;
//! [`mark`] finds it once with `dlsym` and calls it. Without the recorder it
//! does nothing, so marks can stay in release builds.
//!
//! ```
//! memlens_api::mark("phase 2");
//! ```
#![deny(missing_docs)]

use std::ffi::{CString, c_char};
use std::sync::OnceLock;

type MarkFn = unsafe extern "C" fn(*const c_char);

fn resolve() -> Option<MarkFn> {
    static MARK: OnceLock<Option<MarkFn>> = OnceLock::new();
    *MARK.get_or_init(|| {
        // SAFETY: dlsym with a NUL-terminated name; the symbol, when present,
        // is the recorder's `void memlens_mark(const char *)`.
        let p = unsafe { libc::dlsym(libc::RTLD_DEFAULT, c"memlens_mark".as_ptr()) };
        // SAFETY: a non-null `memlens_mark` is the recorder's function, whose
        // C signature is `MarkFn`.
        (!p.is_null()).then(|| unsafe { std::mem::transmute::<*mut libc::c_void, MarkFn>(p) })
    })
}

/// True when the program runs under the memlens recorder.
pub fn recording() -> bool {
    resolve().is_some()
}

/// Places a mark named `name` at the current time (interior NUL bytes end
/// the name). Does nothing when not recording.
pub fn mark(name: &str) {
    let Some(f) = resolve() else { return };
    let name = name.split('\0').next().unwrap_or("");
    if let Ok(c) = CString::new(name) {
        // SAFETY: a valid NUL-terminated string for the duration of the call.
        unsafe { f(c.as_ptr()) };
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn marking_without_the_recorder_does_nothing() {
        assert!(!super::recording());
        super::mark("no recorder here");
    }
}
