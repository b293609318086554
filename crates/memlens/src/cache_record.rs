//! `memlens cache record`: run a program under the memlens Valgrind tool and
//! write every memory reference it makes as a memlens reference trace, with
//! named regions (client requests), heap blocks by allocation site, the stack
//! and data symbols as home regions, and one label per instruction operand.
//!
//! This file is glue: the arguments, and the lines on stderr. The recording itself
//! (building the tool, running Valgrind, decoding the tool's stream and encoding
//! the trace) is the memlens-valgrind crate's.
//!
//! Exit status: the program's (128 + signal when a signal killed it); 2 for
//! usage errors; 1 when Valgrind or the tool cannot run, or the trace cannot
//! be written — each error one sentence on stderr.

use std::ffi::OsString;
use std::io::IsTerminal;
use std::path::{Path, PathBuf};

use anyhow::Result;
use memlens_valgrind::{Notices, RecordOptions, Recording};

use crate::UsageError;
use crate::record::cli_error;

/// Arguments of `memlens cache record`.
#[derive(clap::Args)]
#[command(
    after_help = "The program may name regions and limit recording with the client \
requests of include/memlens.h: MEMLENS_NAME_REGION(ptr, len, \"name\"), MEMLENS_START() and \
MEMLENS_STOP(). Needs Valgrind (Debian package valgrind), a C compiler and make; the tool is \
built once, on first use."
)]
pub struct RecordArgs {
    /// The trace to write (default: `memlens.<program>.<pid>.refs.mlens` in the
    /// current directory).
    #[arg(short = 'o', long = "output")]
    output: Option<PathBuf>,
    /// Overwrite the output file if it exists.
    #[arg(short, long)]
    force: bool,
    /// Record instruction fetches too (kind 3, one shared label), like Lackey's
    /// `I` lines; by default only data references, like Cachegrind's `D refs`.
    #[arg(long)]
    instructions: bool,
    /// Record only between MEMLENS_START() and MEMLENS_STOP() (the region of
    /// interest); heap blocks and names are tracked all the time.
    #[arg(long)]
    roi: bool,
    /// Start each label with its instruction address (`0x401136 main m.c:23
    /// load`), for offline symbolization; labels always stand for one operand of
    /// one instruction.
    #[arg(long)]
    with_ip: bool,
    /// Do not track heap blocks (their references then fall in no region).
    #[arg(long)]
    no_heap: bool,
    /// No progress or summary lines on stderr.
    #[arg(short, long)]
    quiet: bool,
    /// The program and its arguments.
    #[arg(required = true, trailing_var_arg = true, value_name = "CMD")]
    command: Vec<OsString>,
}

fn resolve_program(program: &OsString) -> Option<PathBuf> {
    memlens_record::find_on_path(Path::new(program)).and_then(|c| std::fs::canonicalize(c).ok())
}

/// Runs `memlens cache record` and returns the program's exit status.
pub fn run(args: RecordArgs) -> Result<i32> {
    let program = &args.command[0];
    let resolved = resolve_program(program)
        .ok_or_else(|| UsageError(format!("{}: no such program", program.to_string_lossy())))?;
    memlens_record::refuse_existing_output(args.output.as_deref(), args.force)
        .map_err(cli_error)?;
    let mut notices = Notices {
        quiet: args.quiet,
        progress: !args.quiet && std::io::stderr().is_terminal(),
        print: |text: &str| eprint!("{text}"),
    };
    let options = RecordOptions {
        command: args.command.clone(),
        program: resolved.clone(),
        output: args.output.clone(),
        instructions: args.instructions,
        roi: args.roi,
        with_ip: args.with_ip,
        heap: !args.no_heap,
    };
    let recording = Recording::prepare(options, &mut notices)?;
    memlens_record::leave_signals_to_the_program();
    let outcome = recording.run(&mut notices)?;
    let code = memlens_record::exit_code(outcome.status);
    if let Some(nothing) = outcome.nothing_recorded(code) {
        eprintln!("memlens: {nothing}");
        return Ok(if code == 0 { 1 } else { code });
    }
    if !args.quiet {
        for line in outcome.sentences(&resolved, args.instructions, args.roi) {
            eprintln!("memlens: {line}");
        }
    }
    Ok(code)
}
