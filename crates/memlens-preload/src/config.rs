//! Recorder settings, read once from the environment at start-up.
//!
//! | variable | meaning | default |
//! |---|---|---|
//! | `MEMLENS_OUTPUT` | the trace of the process the user launched (`%p` is replaced by its pid); followed children write it with their pid (see `output.rs`) | `memlens.<prog>.<pid>.mlens` in `MEMLENS_DIR` |
//! | `MEMLENS_DIR` | directory of the traces when `MEMLENS_OUTPUT` is unset | `.` |
//! | `MEMLENS_FOLLOW_FORK` | `1` to record every process of the run, not only the launched one | off |
//! | `MEMLENS_MANIFEST` | file to which each process appends its trace path, or `unfollowed <pid>` | none |
//! | `MEMLENS_UNWIND` | `fp` or `dwarf` | `dwarf` |
//! | `MEMLENS_MARK_EVERY` | periodic marks, e.g. `100ms`, `1s` | off |
//! | `MEMLENS_CLOCK` | `monotonic` to avoid the TSC | TSC when the kernel uses it |
//! | `MEMLENS_FLUSH_MS` | longest time events wait in memory (a sampled recording without a writer thread: of the program's sampling, see `rounds.rs`) | 100 |
//! | `MEMLENS_COMPRESS` | `0` to store chunks uncompressed | 1 |
//! | `MEMLENS_LATENCY` | `1` to also record how long each allocator call took | off |
//! | `MEMLENS_WRAPPERS` | allocation wrappers the user declared, one glob per line, written into the trace | none |
//! | `MEMLENS_FREE_STACKS` | `1` to also record the call stack of every free | off |
//! | `MEMLENS_MMAP` | `1` to also record the program's own `mmap`, `munmap` and `mremap` calls | off |
//! | `MEMLENS_SAMPLE` | record a Poisson sample by bytes, about one allocation per this many bytes (`512K`, `512KiB`: `memlens-vocab`'s size grammar; see `sampling.rs`); turns `MEMLENS_LATENCY` off; no writer thread until the program starts one (`rounds.rs`) | every allocation |
//! | `MEMLENS_SAMPLE_SEED` | a number that fixes the sampling's random draws (tests) | from the clock |

use std::ffi::{CStr, OsString};
use std::os::unix::ffi::OsStringExt;

use crate::stack::Mode;

/// The settings.
pub struct Config {
    pub output: Option<OsString>,
    pub dir: Option<OsString>,
    pub manifest: Option<OsString>,
    /// Record the other processes of the run too (`memlens record --follow-fork`).
    pub follow_fork: bool,
    pub unwind: Mode,
    pub mark_every_ns: u64,
    pub monotonic: bool,
    pub flush_ns: u64,
    pub compress: bool,
    /// Record each allocator call's latency (`memlens record --latency`).
    pub latency: bool,
    /// Allocation wrappers the user declared (`memlens record --wrapper`).
    pub wrappers: Vec<String>,
    /// Record the call stack of every free (`memlens record --free-stacks`).
    pub free_stacks: bool,
    /// Record the program's own mappings (`memlens record --mmap`).
    pub mmap: bool,
    /// The mean sampling interval in bytes (`memlens record --sample`); 0 records
    /// every allocation.
    pub sample_bytes: u64,
    /// Fixes the sampling's random draws (`MEMLENS_SAMPLE_SEED`).
    pub sample_seed: Option<u64>,
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

/// Parses `100ms`, `1.5s`, `250us`, `2m`: the one duration grammar of
/// [`memlens_vocab::parse_duration`] (a unit is required, as on the command line);
/// zero is no duration.
pub fn parse_duration_ns(s: &str) -> Option<u64> {
    memlens_vocab::parse_duration(s).ok().filter(|&ns| ns > 0)
}

impl Config {
    /// Reads the settings.
    pub fn from_env() -> Config {
        Config::from_vars(env)
    }

    /// Reads the settings from `var`, which gives a variable's value.
    pub fn from_vars(var: impl Fn(&CStr) -> Option<OsString>) -> Config {
        let text = |n: &CStr| var(n).map(|v| v.to_string_lossy().into_owned());
        let sample_bytes = text(c"MEMLENS_SAMPLE")
            .and_then(|s| memlens_vocab::parse_size(&s).ok())
            .unwrap_or(0);
        Config {
            output: var(c"MEMLENS_OUTPUT"),
            dir: var(c"MEMLENS_DIR"),
            manifest: var(c"MEMLENS_MANIFEST"),
            follow_fork: text(c"MEMLENS_FOLLOW_FORK").as_deref() == Some("1"),
            unwind: if text(c"MEMLENS_UNWIND").as_deref() == Some("fp") {
                Mode::FramePointer
            } else {
                Mode::Dwarf
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
            // A sampled recording has no latencies: its fast path reads no clock.
            latency: text(c"MEMLENS_LATENCY").as_deref() == Some("1") && sample_bytes == 0,
            wrappers: text(c"MEMLENS_WRAPPERS")
                .map(|w| {
                    w.lines()
                        .map(str::trim)
                        .filter(|p| !p.is_empty())
                        .map(String::from)
                        .collect()
                })
                .unwrap_or_default(),
            free_stacks: text(c"MEMLENS_FREE_STACKS").as_deref() == Some("1"),
            mmap: text(c"MEMLENS_MMAP").as_deref() == Some("1"),
            sample_bytes,
            sample_seed: text(c"MEMLENS_SAMPLE_SEED").and_then(|s| s.trim().parse().ok()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The settings for the variables `vars` (name, value).
    fn config(vars: &[(&str, &str)]) -> Config {
        Config::from_vars(|name| {
            let name = name.to_str().unwrap();
            vars.iter()
                .find(|(n, _)| *n == name)
                .map(|(_, v)| OsString::from(v))
        })
    }

    #[test]
    fn durations() {
        assert_eq!(parse_duration_ns("100ms"), Some(100_000_000));
        assert_eq!(parse_duration_ns(" 1.5s "), Some(1_500_000_000));
        assert_eq!(parse_duration_ns("250us"), Some(250_000));
        assert_eq!(parse_duration_ns("40ns"), Some(40));
        assert_eq!(parse_duration_ns("2m"), Some(120_000_000_000));
        assert_eq!(parse_duration_ns("3 ms"), Some(3_000_000));
        // The same grammar as `memlens record --mark-every`: a unit is required.
        for bad in ["", "ms", "0", "0ms", "7", "-1s", "abc", "1h", "inf", "NaN"] {
            assert_eq!(parse_duration_ns(bad), None, "{bad:?}");
        }
    }

    #[test]
    fn defaults() {
        let c = config(&[]);
        assert_eq!((&c.output, &c.dir, &c.manifest), (&None, &None, &None));
        assert!(!c.follow_fork);
        assert_eq!(c.unwind, Mode::Dwarf);
        assert_eq!(c.mark_every_ns, 0);
        assert!(!c.monotonic);
        assert_eq!(c.flush_ns, 100_000_000);
        assert!(c.compress);
        assert!(!c.latency);
    }

    #[test]
    fn every_variable() {
        let c = config(&[
            ("MEMLENS_OUTPUT", "/tmp/a.mlens"),
            ("MEMLENS_DIR", "/tmp/d"),
            ("MEMLENS_MANIFEST", "/tmp/m"),
            ("MEMLENS_FOLLOW_FORK", "1"),
            ("MEMLENS_UNWIND", "fp"),
            ("MEMLENS_MARK_EVERY", "1s"),
            ("MEMLENS_CLOCK", "monotonic"),
            ("MEMLENS_FLUSH_MS", "25"),
            ("MEMLENS_COMPRESS", "0"),
            ("MEMLENS_LATENCY", "1"),
            ("MEMLENS_WRAPPERS", "my_alloc*\n\n  Arena::make  \n"),
        ]);
        assert_eq!(c.output, Some(OsString::from("/tmp/a.mlens")));
        assert_eq!(c.dir, Some(OsString::from("/tmp/d")));
        assert_eq!(c.manifest, Some(OsString::from("/tmp/m")));
        assert!(c.follow_fork);
        assert_eq!(c.unwind, Mode::FramePointer);
        assert_eq!(c.mark_every_ns, 1_000_000_000);
        assert!(c.monotonic);
        assert_eq!(c.flush_ns, 25_000_000);
        assert!(!c.compress);
        assert!(c.latency);
        assert_eq!(c.wrappers, ["my_alloc*", "Arena::make"]);
    }

    #[test]
    fn odd_values_fall_back_to_defaults() {
        let c = config(&[
            ("MEMLENS_UNWIND", "DWARF"),
            ("MEMLENS_MARK_EVERY", "soon"),
            ("MEMLENS_CLOCK", "tsc"),
            ("MEMLENS_FLUSH_MS", "0"),
            ("MEMLENS_COMPRESS", "no"),
            ("MEMLENS_LATENCY", "yes"),
            ("MEMLENS_FOLLOW_FORK", "yes"),
        ]);
        assert_eq!(c.unwind, Mode::Dwarf);
        assert_eq!(c.mark_every_ns, 0);
        assert!(!c.monotonic);
        assert_eq!(c.flush_ns, 100_000_000);
        assert!(c.compress);
        assert!(!c.latency);
        assert!(!c.follow_fork);
        assert_eq!(config(&[("MEMLENS_FLUSH_MS", "1.5")]).flush_ns, 100_000_000);
    }

    #[test]
    fn sampling_reads_the_size_grammar_and_turns_latency_off() {
        let c = config(&[]);
        assert_eq!((c.sample_bytes, c.sample_seed), (0, None));
        for (text, bytes) in [("512K", 512 << 10), ("512KiB", 512 << 10), ("4096", 4096)] {
            let c = config(&[("MEMLENS_SAMPLE", text), ("MEMLENS_LATENCY", "1")]);
            assert_eq!(c.sample_bytes, bytes, "{text}");
            assert!(!c.latency);
        }
        assert_eq!(config(&[("MEMLENS_SAMPLE", "lots")]).sample_bytes, 0);
        assert_eq!(config(&[("MEMLENS_SAMPLE_SEED", "7")]).sample_seed, Some(7));
    }

    #[test]
    fn free_stacks_and_mappings_are_opt_in() {
        let c = config(&[]);
        assert!(!c.free_stacks && !c.mmap);
        let c = config(&[("MEMLENS_FREE_STACKS", "1"), ("MEMLENS_MMAP", "1")]);
        assert!(c.free_stacks && c.mmap);
        let c = config(&[("MEMLENS_FREE_STACKS", "yes"), ("MEMLENS_MMAP", "0")]);
        assert!(!c.free_stacks && !c.mmap);
    }
}
