//! `memlens export`: a trace written in the formats the tools people already run read —
//! pprof (`go tool pprof`, Pyroscope, Parca, Perfetto, speedscope), collapsed stacks
//! (inferno, flamegraph.pl), speedscope's JSON, the Firefox Profiler's processed format,
//! and Parquet tables for DuckDB, Spark or any engine beyond one machine.
//!
//! Every format reads the events once through the ingest layer
//! ([`memlens_ingest::visit_events`]) into [`Lifetimes`] (the live set: one entry per
//! live block, so memory is bounded by the live set and the unique stacks, never by the
//! number of events). The profile formats aggregate per stack ([`ProfileBuilder`]);
//! Parquet and Firefox stream one row per block or per event. Stacks are named by the
//! one frame policy, from the allocation site outwards ([`ExportStacks`]), as every
//! memlens view names them. `docs/export.md` documents each format.
#![deny(missing_docs)]

mod collapsed;
mod error;
mod firefox;
mod firefox_counter;
mod lifetimes;
mod parquet;
mod parquet_table;
mod pprof;
mod pprof_proto;
mod profile;
mod speedscope;
mod stacks;

use std::path::Path;

use memlens_heap::TimeWindow;
use memlens_ingest::{Progress, StackSymbols, TraceInput, visit_events};

pub use error::ExportError;
pub use lifetimes::{Birth, Block, Death, Lifetimes, Step};
pub use profile::{At, Key, ProfileBuilder, StackProfile, Values};
pub use stacks::ExportStacks;

/// The formats `memlens export` writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// gzip-compressed pprof `profile.proto`.
    Pprof,
    /// `root;…;leaf VALUE` lines.
    Collapsed,
    /// speedscope's JSON file format.
    Speedscope,
    /// The Firefox Profiler's processed profile with native allocations.
    Firefox,
    /// A directory of Parquet tables.
    Parquet,
}

impl Format {
    /// Every format with its name on the command line and its default file suffix.
    pub const ALL: [(Format, &'static str, &'static str); 5] = [
        (Format::Pprof, "pprof", ".pb.gz"),
        (Format::Collapsed, "collapsed", ".collapsed.txt"),
        (Format::Speedscope, "speedscope", ".speedscope.json"),
        (Format::Firefox, "firefox", ".firefox.json"),
        (Format::Parquet, "parquet", ".parquet"),
    ];

    /// The format called `name`, or the sentence listing the known ones.
    pub fn parse(name: &str) -> Result<Format, String> {
        Format::ALL
            .iter()
            .find(|(_, n, _)| *n == name)
            .map(|(f, _, _)| *f)
            .ok_or_else(|| {
                let known: Vec<&str> = Format::ALL.iter().map(|(_, n, _)| *n).collect();
                format!(
                    "unknown format `{name}`; the formats are {}",
                    known.join(", ")
                )
            })
    }

    /// The default output of `trace` in this format: its name with the format's suffix
    /// instead of `.mlens` (a directory for Parquet).
    pub fn default_output(self, trace: &Path) -> std::path::PathBuf {
        let suffix = Format::ALL
            .iter()
            .find(|(f, _, _)| *f == self)
            .map_or("", |e| e.2);
        let stem = trace
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        let stem = stem.strip_suffix(".mlens").unwrap_or(&stem);
        trace.with_file_name(format!("{stem}{suffix}"))
    }

    /// Whether the format holds one process only.
    fn single_process(self) -> bool {
        self != Format::Parquet
    }
}

/// Which value the one-value formats (collapsed, speedscope) weigh stacks by, and
/// which of pprof's four sample types is its default.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Value {
    /// Bytes in use at the instant (`--at`).
    Inuse,
    /// Bytes allocated in the window (`--from`/`--to`).
    Allocated,
}

impl Value {
    /// `inuse` or `allocated`, or the sentence naming the two.
    pub fn parse(name: &str) -> Result<Value, String> {
        match name {
            "inuse" => Ok(Value::Inuse),
            "allocated" => Ok(Value::Allocated),
            _ => Err(format!(
                "unknown value `{name}`; the values are inuse and allocated"
            )),
        }
    }

    /// The bytes of `values` this value weighs.
    pub fn bytes(self, values: &Values) -> u64 {
        match self {
            Value::Inuse => values.inuse_bytes,
            Value::Allocated => values.alloc_bytes,
        }
    }
}

/// What to export.
#[derive(Debug, Clone, Copy)]
pub struct Options {
    /// The format.
    pub format: Format,
    /// The instant of the in-use values.
    pub at: At,
    /// The window of the allocated values (the whole run when `None`).
    pub window: Option<TimeWindow>,
    /// The value of the one-value formats.
    pub value: Value,
}

/// Writes `inputs` (a process and, for Parquet, its recorded children) to `out` in
/// `options.format`; returns one sentence saying what was written. `symbols` holds one
/// namer per input, in the same order; damage met while reading is added to the inputs.
pub fn export(
    inputs: &mut [TraceInput],
    symbols: &mut [StackSymbols],
    options: &Options,
    out: &Path,
    progress: &dyn Progress,
) -> Result<String, ExportError> {
    if inputs.is_empty() {
        return Err(ExportError::NoTrace);
    }
    if options.format.single_process() && inputs.len() > 1 {
        return Err(ExportError::OneProcess);
    }
    match options.format {
        Format::Parquet => parquet::write(inputs, symbols, out, progress),
        Format::Firefox => firefox::write(&mut inputs[0], &mut symbols[0], options, out, progress),
        Format::Pprof | Format::Collapsed | Format::Speedscope => {
            let input = &mut inputs[0];
            let names = &mut symbols[0];
            let profile = stack_profile(input, options, progress);
            let mut stacks = ExportStacks::new();
            match options.format {
                Format::Pprof => pprof::write(input, names, &mut stacks, &profile, options, out),
                Format::Collapsed => {
                    collapsed::write(input, names, &mut stacks, &profile, options.value, out)
                }
                _ => speedscope::write(input, names, &mut stacks, &profile, options.value, out),
            }
        }
    }
}

/// The stack profile of `input` at `options.at`, allocations counted in its window.
fn stack_profile(
    input: &mut TraceInput,
    options: &Options,
    progress: &dyn Progress,
) -> StackProfile {
    let window = options.window.unwrap_or(TimeWindow {
        start_ns: 0,
        end_ns: u64::MAX,
    });
    let mut life = Lifetimes::new();
    let mut builder = ProfileBuilder::new(options.at, window);
    visit_events(input, progress, |event| {
        builder.before(event.time());
        life.event(event, &mut |step| builder.step(step));
    });
    builder.finish(input.run_end_ns())
}

/// Creates `path` for writing, naming it in the error.
fn create(path: &Path) -> Result<std::io::BufWriter<std::fs::File>, ExportError> {
    std::fs::File::create(path)
        .map(std::io::BufWriter::new)
        .map_err(|e| ExportError::io(path, e))
}
