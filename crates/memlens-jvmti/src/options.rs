//! The agent's option string: `-agentpath:libmemlens_jvmti.so=KEY=VALUE,…`.
//!
//! Keys: `interval=BYTES` (0, the default, records every allocation; N > 0 samples
//! about one allocation per N bytes, JEP 331), `depth=N` (Java frames per stack,
//! default 16, at most 1024), `frees=0|1` (record deaths through `ObjectFree`, default
//! 1), `quiet=0|1`, `heap_walks=N|all|none` (heap walks for the containing data
//! structure: at most N per second of run time plus one at the end, default 1; at
//! every garbage collection; or none), `data_structure=CLASS` (repeatable: more head
//! classes of data structures, e.g. `com.example.Ring`), and `output=PATH`, which must
//! come last so the path may contain commas. Without `output`, the trace goes to `$MEMLENS_OUTPUT`, else to
//! `memlens.java.<pid>.mlens` in `$MEMLENS_DIR` or the current directory.

use std::path::PathBuf;

/// The largest stack depth accepted.
pub const MAX_DEPTH: u32 = 1024;

/// When the agent walks the heap.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HeapWalks {
    /// Never.
    None,
    /// After every garbage collection, and at the end.
    All,
    /// After a garbage collection at most this many times per second of run time
    /// (at least 1), and at the end.
    PerSecond(u32),
}

impl HeapWalks {
    /// The least time between two walks: 1 s / N (0 for `all`, `u64::MAX` for none).
    pub fn gap_ns(self) -> u64 {
        match self {
            HeapWalks::None => u64::MAX,
            HeapWalks::All => 0,
            HeapWalks::PerSecond(n) => 1_000_000_000 / u64::from(n.max(1)),
        }
    }

    /// Parses `N`, `all` or `none`; the error is one sentence naming the value.
    pub fn parse(value: &str) -> Result<HeapWalks, String> {
        match value {
            "all" => Ok(HeapWalks::All),
            "none" => Ok(HeapWalks::None),
            n => match n.parse::<u32>() {
                Ok(0) => Ok(HeapWalks::None),
                Ok(n) => Ok(HeapWalks::PerSecond(n)),
                Err(_) => Err(format!(
                    "`{value}`: expected a number of heap walks per second, `all` or `none`"
                )),
            },
        }
    }
}

/// Parsed agent options.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Options {
    /// Where to write the trace; `None` means the default name.
    pub output: Option<PathBuf>,
    /// The heap sampling interval in bytes (0 = every allocation).
    pub interval: u32,
    /// Frames per stack trace.
    pub depth: u32,
    /// Whether object deaths are recorded.
    pub frees: bool,
    /// Whether the agent stays silent on stderr (errors excepted).
    pub quiet: bool,
    /// When to walk the heap for containing data structures.
    pub heap_walks: HeapWalks,
    /// Head classes of data structures besides the collections and maps.
    pub data_structures: Vec<String>,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            output: None,
            interval: 0,
            depth: 16,
            frees: true,
            quiet: false,
            heap_walks: HeapWalks::PerSecond(1),
            data_structures: Vec::new(),
        }
    }
}

fn flag(key: &str, value: &str) -> Result<bool, String> {
    match value {
        "1" | "true" | "yes" => Ok(true),
        "0" | "false" | "no" => Ok(false),
        _ => Err(format!("`{key}={value}`: expected 0 or 1")),
    }
}

/// Parses the option string (empty or absent means all defaults). The error is one
/// sentence naming the bad option.
pub fn parse(text: &str) -> Result<Options, String> {
    let mut options = Options::default();
    let mut rest = text;
    while !rest.is_empty() {
        if let Some(path) = rest.strip_prefix("output=") {
            if path.is_empty() {
                return Err("`output=` needs a path".into());
            }
            options.output = Some(PathBuf::from(path));
            break;
        }
        let (item, tail) = rest.split_once(',').unwrap_or((rest, ""));
        rest = tail;
        if item.is_empty() {
            continue;
        }
        let (key, value) = item
            .split_once('=')
            .ok_or_else(|| format!("`{item}`: expected KEY=VALUE"))?;
        let number = || {
            value
                .parse::<u32>()
                .map_err(|_| format!("`{key}={value}`: expected a whole number"))
        };
        match key {
            "interval" => {
                options.interval = number()?;
                if options.interval > i32::MAX as u32 {
                    return Err(format!("`interval={value}` is too large"));
                }
            }
            "depth" => {
                options.depth = number()?;
                if options.depth > MAX_DEPTH {
                    return Err(format!("`depth={value}`: at most {MAX_DEPTH} frames"));
                }
            }
            "frees" => options.frees = flag(key, value)?,
            "quiet" => options.quiet = flag(key, value)?,
            "heap_walks" => {
                options.heap_walks = HeapWalks::parse(value)
                    .map_err(|_| format!("`heap_walks={value}`: expected N, all or none"))?;
            }
            "data_structure" if !value.is_empty() => options.data_structures.push(value.into()),
            _ => {
                return Err(format!(
                    "unknown option `{key}` (known: interval, depth, frees, quiet, heap_walks, data_structure, output)"
                ));
            }
        }
    }
    Ok(options)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_record_everything() {
        assert_eq!(parse("").unwrap(), Options::default());
        assert_eq!(Options::default().interval, 0);
    }

    #[test]
    fn output_comes_last_and_keeps_commas() {
        let o = parse("interval=4096,depth=8,frees=0,output=/tmp/a,b.mlens").unwrap();
        assert_eq!(o.interval, 4096);
        assert_eq!(o.depth, 8);
        assert!(!o.frees);
        assert_eq!(o.output, Some(PathBuf::from("/tmp/a,b.mlens")));
    }

    #[test]
    fn heap_walks_and_data_structures() {
        assert_eq!(Options::default().heap_walks, HeapWalks::PerSecond(1));
        let o = parse("heap_walks=all,data_structure=a.B,data_structure=c.D").unwrap();
        assert_eq!(o.heap_walks, HeapWalks::All);
        assert_eq!(o.data_structures, vec!["a.B".to_owned(), "c.D".to_owned()]);
        assert_eq!(
            parse("heap_walks=none").unwrap().heap_walks,
            HeapWalks::None
        );
        assert_eq!(
            parse("heap_walks=4").unwrap().heap_walks,
            HeapWalks::PerSecond(4)
        );
        assert!(
            parse("heap_walks=often")
                .unwrap_err()
                .contains("heap_walks=often")
        );
        assert!(parse("data_structure=").is_err());
    }

    #[test]
    fn bad_options_name_themselves() {
        assert!(parse("depth=x").unwrap_err().contains("depth=x"));
        assert!(parse("depth=5000").unwrap_err().contains("at most"));
        assert!(
            parse("colour=red")
                .unwrap_err()
                .contains("unknown option `colour`")
        );
        assert!(parse("frees=maybe").unwrap_err().contains("frees=maybe"));
        assert!(parse("output=").is_err());
        assert!(parse("depth").unwrap_err().contains("KEY=VALUE"));
    }
}
