//! `memlens export TRACE… --format F [-o OUT] [--at TIME|peak|end] [--from T --to T]
//! [--value inuse|allocated]`: the trace in another tool's format (the exporters live in
//! `memlens-export`; this is the arguments and the glue).

use std::path::PathBuf;

use anyhow::Result;
use memlens_export::{At, Format, Options, Value};

use crate::UsageError;
use crate::heap_args::{parse_time, run_window, window};
use crate::read;

/// Arguments of `memlens export`.
#[derive(clap::Args)]
pub struct ExportArgs {
    /// The trace (for `parquet`, also the traces of its recorded child processes).
    #[arg(required = true)]
    traces: Vec<PathBuf>,
    /// pprof, collapsed, speedscope, firefox or parquet (see docs/export.md).
    #[arg(long, short = 'f', value_parser = Format::parse)]
    format: Format,
    /// Where to write (default: the trace's name with the format's suffix; a directory
    /// for parquet).
    #[arg(long, short = 'o')]
    output: Option<PathBuf>,
    /// The instant of the in-use values: `peak`, `end` or a time (`1.5s`, `50%`).
    #[arg(long, default_value = "peak")]
    at: String,
    /// Count allocations from this time on (default: the start).
    #[arg(long)]
    from: Option<String>,
    /// Count allocations up to this time (default: the end).
    #[arg(long)]
    to: Option<String>,
    /// What collapsed and speedscope weigh stacks by, and pprof's default sample type:
    /// `inuse` (bytes in use at `--at`) or `allocated` (bytes allocated in the window).
    #[arg(long, default_value = "inuse", value_parser = Value::parse)]
    value: Value,
}

/// Runs `memlens export`.
pub fn run(args: ExportArgs) -> Result<i32> {
    let inputs = args
        .traces
        .iter()
        .map(|t| read::open(t))
        .collect::<Result<Vec<_>>>()?;
    let run = run_window(&inputs[0]);
    let at = match args.at.as_str() {
        "peak" => At::Peak,
        "end" => At::End,
        text => At::Time(parse_time("--at", text, run)?),
    };
    let options = Options {
        format: args.format,
        at,
        window: window(args.from.as_deref(), args.to.as_deref(), run)?,
        value: args.value,
    };
    let out = args
        .output
        .unwrap_or_else(|| args.format.default_output(&args.traces[0]));
    let mut read = read::read(inputs, memlens_ingest::Wanted::default());
    let written = memlens_export::export(
        &mut read.inputs,
        &mut read.symbols,
        &options,
        &out,
        &read::Bar::default(),
    )
    .map_err(|e| match e {
        memlens_export::ExportError::OneProcess => UsageError(e.to_string()).into(),
        e => anyhow::Error::from(e),
    })?;
    eprintln!("memlens: wrote {}: {written}", out.display());
    Ok(read.finish())
}
