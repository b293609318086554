//! `memlens attach PID [-o FILE] [--duration D]` and `memlens detach PID`: record a
//! running process for a while, then leave it as it was. Glue: the arguments and the
//! lines on stderr; the attach itself is the memlens-attach crate's (docs/attach.md).

use std::path::PathBuf;

use anyhow::Result;
use memlens_attach::{AttachError, AttachOptions};

use crate::UsageError;

/// Arguments of `memlens attach`.
#[derive(clap::Args)]
pub struct AttachArgs {
    /// The process to record.
    pid: u32,
    /// The trace to write (default: memlens.<prog>.<pid>.mlens, numbered when it exists).
    #[arg(short, long)]
    output: Option<PathBuf>,
    /// Detach after this long, e.g. `30s` (default: at Ctrl-C or `memlens detach PID`).
    #[arg(long, value_name = "DURATION", value_parser = memlens_vocab::parse_duration)]
    duration: Option<u64>,
    /// How to capture call stacks: `dwarf` or `fp` (as for `memlens record`).
    #[arg(long, value_parser = ["fp", "dwarf"], default_value = "dwarf")]
    unwind: String,
    /// Overwrite the output file if it exists.
    #[arg(short, long)]
    force: bool,
}

fn cli_error(e: AttachError) -> anyhow::Error {
    match e.is_usage() {
        true => UsageError(e.to_string()).into(),
        false => e.into(),
    }
}

/// Runs `memlens attach`.
pub fn run_attach(args: AttachArgs) -> Result<i32> {
    let options = AttachOptions {
        pid: args.pid,
        output: args.output,
        force: args.force,
        duration: args.duration.map(std::time::Duration::from_nanos),
        frame_pointers: args.unwind == "fp",
    };
    let outcome = memlens_attach::attach(&options, |a| eprintln!("memlens: {}", a.sentence()))
        .map_err(cli_error)?;
    eprintln!("memlens: {}", outcome.sentence());
    Ok(outcome.exit_code())
}

/// Runs `memlens detach PID`.
pub fn run_detach(pid: u32) -> Result<i32> {
    let trace = memlens_attach::detach(pid).map_err(cli_error)?;
    eprintln!(
        "memlens: detached from process {pid}; wrote {}",
        trace.display()
    );
    Ok(0)
}
