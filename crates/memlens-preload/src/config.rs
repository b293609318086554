//! Recorder settings, read once from the environment at start-up.
//!
//! | variable | meaning | default |
//! |---|---|---|
//! | `MEMLENS_OUTPUT` | trace path for the first process of the run | `memlens.<prog>.<pid>.mlens` in the working directory |
//! | `MEMLENS_DIR` | directory for the other processes' traces | the directory of `MEMLENS_OUTPUT`, else `.` |
//! | `MEMLENS_MANIFEST` | file to which each process appends its trace path | none |
//! | `MEMLENS_UNWIND` | `fp` or `dwarf` | `fp` |
//! | `MEMLENS_MARK_EVERY` | periodic marks, e.g. `100ms`, `1s` | off |
//! | `MEMLENS_CLOCK` | `monotonic` to avoid the TSC | TSC when the kernel uses it |
//! | `MEMLENS_FLUSH_MS` | longest time events wait in memory | 100 |
//! | `MEMLENS_COMPRESS` | `0` to store chunks uncompressed | 1 |
//! | `MEMLENS_LATENCY` | `1` to also record how long each allocator call took | off |

use std::ffi::{CStr, OsString};
use std::os::unix::ffi::OsStringExt;

use crate::stack::Mode;

/// The settings.
pub struct Config {
    pub output: Option<OsString>,
    pub dir: Option<OsString>,
    pub manifest: Option<OsString>,
    pub unwind: Mode,
    pub mark_every_ns: u64,
    pub monotonic: bool,
    pub flush_ns: u64,
    pub compress: bool,
    /// Record each allocator call's latency (`memlens record --latency`).
    pub latency: bool,
}

/// Reads an environment variable without allocating through the hooks
/// (the caller has the reentrancy guard set).
pub fn env(name: &CStr) -> Option<OsString> {
    // SAFETY: getenv returns null or a NUL-terminated string owned by environ.
    let p = unsafe { libc::getenv(name.as_ptr()) };
    if p.is_null() {
        return None;
    }
    // SAFETY: non-null, NUL-terminated.
    let bytes = unsafe { CStr::from_ptr(p) }.to_bytes().to_vec();
    Some(OsString::from_vec(bytes))
}

/// Parses `100ms`, `1.5s`, `250us`, `2m`, or plain milliseconds.
pub fn parse_duration_ns(s: &str) -> Option<u64> {
    let s = s.trim();
    let (num, mult) = if let Some(n) = s.strip_suffix("ms") {
        (n, 1e6)
    } else if let Some(n) = s.strip_suffix("us") {
        (n, 1e3)
    } else if let Some(n) = s.strip_suffix("ns") {
        (n, 1.0)
    } else if let Some(n) = s.strip_suffix('s') {
        (n, 1e9)
    } else if let Some(n) = s.strip_suffix('m') {
        (n, 60e9)
    } else {
        (s, 1e6)
    };
    let v: f64 = num.trim().parse().ok()?;
    (v > 0.0 && v.is_finite()).then_some((v * mult) as u64)
}

impl Config {
    /// Reads the settings.
    pub fn from_env() -> Config {
        let text = |n: &CStr| env(n).map(|v| v.to_string_lossy().into_owned());
        Config {
            output: env(c"MEMLENS_OUTPUT"),
            dir: env(c"MEMLENS_DIR"),
            manifest: env(c"MEMLENS_MANIFEST"),
            unwind: if text(c"MEMLENS_UNWIND").as_deref() == Some("dwarf") {
                Mode::Dwarf
            } else {
                Mode::FramePointer
            },
            mark_every_ns: text(c"MEMLENS_MARK_EVERY")
                .and_then(|s| parse_duration_ns(&s))
                .unwrap_or(0),
            monotonic: text(c"MEMLENS_CLOCK").as_deref() == Some("monotonic"),
            flush_ns: text(c"MEMLENS_FLUSH_MS")
                .and_then(|s| s.parse::<u64>().ok())
                .filter(|&ms| ms > 0)
                .unwrap_or(100)
                * 1_000_000,
            compress: text(c"MEMLENS_COMPRESS").as_deref() != Some("0"),
            latency: text(c"MEMLENS_LATENCY").as_deref() == Some("1"),
        }
    }
}
