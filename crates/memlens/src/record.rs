//! `memlens record [-o FILE] [--follow-fork] [--unwind fp|dwarf] [--latency] [--sample BYTES]
//! [--java] -- CMD ARGS…`: runs a program under the LD_PRELOAD recorder or the Java agent
//! and reports the trace files, and how many processes of the run were not recorded.
//!
//! This file is glue: the arguments, and the lines on stderr. Finding the program
//! and the recorder, the program's environment, the run and the list of traces it
//! wrote are the memlens-record crate's. The exit status is the program's (128 + N
//! when it was killed by signal N); 2 for usage errors.

use std::ffi::OsString;
use std::path::PathBuf;

use anyhow::Result;
use memlens_record::{
    JavaOptions, NativeOptions, Observer, RecordError, RecordOutcome, Unwind, Warning, record_java,
    record_native,
};

use crate::UsageError;

/// Arguments of `memlens record`.
#[derive(clap::Args)]
pub struct RecordArgs {
    /// Where to write the trace of the program (default:
    /// memlens.<CMD>.<pid>.mlens in the current directory; `%p` is the pid).
    #[arg(short, long)]
    output: Option<PathBuf>,
    /// Record the other processes of the run too (forked children, the programs
    /// they run), each to the output's name with its pid: f.mlens → f.<pid>.mlens.
    #[arg(long)]
    follow_fork: bool,
    /// How to capture call stacks: `dwarf` unwinds every frame with DWARF CFI
    /// (complete stacks of distribution binaries built without frame
    /// pointers); `fp` walks frame pointers, the fastest mode.
    #[arg(long, value_parser = ["fp", "dwarf"], default_value = "dwarf")]
    unwind: String,
    /// Place a mark periodically, e.g. `100ms` or `1s` (marks are natural
    /// snapshot times for the heap-evolution lens).
    #[arg(long, value_name = "DURATION")]
    mark_every: Option<String>,
    /// Also record how long each malloc/calloc/realloc/free/aligned call
    /// took inside the allocator (in ns, shown by `memlens summary` and
    /// `memlens dump`); costs two clock reads per call.
    #[arg(long, conflicts_with = "sample")]
    latency: bool,
    /// Record a Poisson sample by bytes, about one allocation per BYTES allocated
    /// (`512K`: the production mode of tcmalloc and heapprofd, ~1.1x native);
    /// every command then shows unbiased estimates and says so. With --java: JVMTI heap sampling.
    #[arg(long, visible_alias = "java-sample", value_name = "BYTES", value_parser = bytes)]
    sample: Option<u64>,
    /// Also record the call stack of every free: the viewer's block details
    /// then say which function freed each block.
    #[arg(long)]
    free_stacks: bool,
    /// Also record the program's own mmap/munmap/mremap calls: its mappings
    /// become blocks of the allocation map.
    #[arg(long)]
    mmap: bool,
    /// An allocation wrapper of the program (a glob over function names, e.g.
    /// `my_alloc*`; repeatable): its frames count as the allocator's, so sites
    /// name its callers in every command that reads the trace.
    #[arg(long, value_name = "GLOB")]
    wrapper: Vec<String>,
    /// Record a Java program through the JVMTI agent instead of LD_PRELOAD: typed objects, Java
    /// stacks, threads, deaths, GCs as marks, containing data structures (docs/java.md).
    #[arg(long, conflicts_with_all = [
        "mark_every", "latency", "wrapper", "follow_fork", "free_stacks", "mmap",
    ])]
    java: bool,
    /// With --java: Java frames kept per stack.
    #[arg(long, value_name = "N", requires = "java", default_value_t = 16)]
    java_depth: u32,
    #[command(flatten)]
    java_heap_walks: memlens_record::JavaHeapWalks,
    /// Overwrite the output file if it exists.
    #[arg(short, long)]
    force: bool,
    /// Print nothing but errors.
    #[arg(short, long)]
    quiet: bool,
    /// After the run, print the full summary of each trace (as `memlens summary`).
    #[arg(long)]
    summary: bool,
    /// Watch the heap live: serve the viewer of the trace while the program runs (it
    /// updates itself as the trace grows, and stays after the end until Ctrl-C).
    #[arg(long, conflicts_with = "java")]
    view: bool,
    #[command(flatten)]
    serve: crate::view_cmd::ServeArgs,
    /// The program and its arguments.
    #[arg(required = true, trailing_var_arg = true, value_name = "CMD")]
    command: Vec<OsString>,
}

/// `--sample`'s size, in `memlens-vocab`'s grammar (`512K`, `1MiB`), at least one byte.
fn bytes(text: &str) -> Result<u64, String> {
    match memlens_vocab::parse_size(text) {
        Ok(0) => Err("the mean interval must be at least one byte".into()),
        r => r.map_err(|e| e.to_string()),
    }
}

/// A recording error as the CLI reports it: command-line mistakes exit with 2.
pub fn cli_error(e: RecordError) -> anyhow::Error {
    if e.is_usage() {
        UsageError(e.to_string()).into()
    } else {
        e.into()
    }
}

/// Prints the recorder's warnings before the program starts; the field is `--quiet`.
struct StderrWarnings(bool);

impl Observer for StderrWarnings {
    fn warning(&mut self, warning: &Warning) {
        if !self.0 {
            eprintln!("memlens: warning: {warning}");
        }
    }
}

/// Runs `memlens record`.
pub fn run(args: RecordArgs) -> Result<i32> {
    if args.java {
        return run_java(args);
    }
    let (to_viewer, viewer) = std::sync::mpsc::channel();
    let serve = args.view.then(|| args.serve.clone());
    let viewer = serve.map(|s| std::thread::spawn(move || viewer.recv().map(|p| view(p, s))));
    let options = NativeOptions {
        on_trace: args.view.then_some(to_viewer),
        command: args.command.clone(),
        output: args.output.clone(),
        follow_fork: args.follow_fork,
        force: args.force,
        unwind: match args.unwind.as_str() {
            "fp" => Unwind::FramePointers,
            _ => Unwind::Dwarf,
        },
        mark_every: args.mark_every.clone(),
        latency: args.latency,
        free_stacks: args.free_stacks,
        mmap: args.mmap,
        wrappers: args.wrapper.clone(),
        sample_bytes: args.sample,
    };
    let mut warnings = StderrWarnings(args.quiet);
    let outcome = record_native(&options, &mut warnings).map_err(cli_error)?;
    if !args.quiet {
        report(&outcome);
    }
    let status = finish(&args, &outcome);
    if let Some(viewer) = viewer {
        eprintln!("memlens: the program has ended; the viewer stays open until Ctrl-C");
        let _ = viewer.join();
    }
    status
}

/// The viewer of the trace at `path` while it is written (`--view`).
fn view(path: PathBuf, serve: crate::view_cmd::ServeArgs) {
    if let Err(e) = crate::view_cmd::run(crate::view_cmd::ViewArgs::of(path, serve)) {
        eprintln!("memlens: the viewer stopped: {e:#}");
    }
}

/// Runs `memlens record --java`.
fn run_java(args: RecordArgs) -> Result<i32> {
    let options = JavaOptions {
        command: args.command.clone(),
        output: args.output.clone(),
        force: args.force,
        sample_bytes: args.sample,
        depth: args.java_depth,
        heap_walks: args.java_heap_walks.clone(),
    };
    let outcome = record_java(&options).map_err(cli_error)?;
    if outcome.traces.is_empty() {
        eprintln!("memlens: {}", outcome.no_jvm());
    } else if !args.quiet {
        report(&outcome);
    }
    finish(&args, &outcome)
}

/// The full summary of the main trace with `--summary`; the program's exit code.
/// A trace written over an older one leaves that one's index stale: it goes.
fn finish(args: &RecordArgs, outcome: &RecordOutcome) -> Result<i32> {
    for path in &outcome.traces {
        std::fs::remove_file(memlens_ingest::index_path(path)).ok();
    }
    if args.summary
        && let Some(main) = outcome.traces.first()
    {
        println!();
        crate::summary_cmd::print(main, false, 5)?;
    }
    Ok(outcome.exit_code)
}

/// Prints where the traces are, with a one-line summary of each, and what the run
/// did not record.
fn report(outcome: &RecordOutcome) {
    let paths = &outcome.traces;
    if paths.is_empty() {
        eprintln!("memlens: {}", outcome.nothing_written());
        return;
    }
    const SHOWN: usize = 3;
    for path in paths.iter().take(SHOWN) {
        let Ok(input) = crate::read::open(path) else {
            eprintln!("memlens: wrote {}", path.display());
            continue;
        };
        eprintln!(
            "memlens: wrote {} — {}",
            path.display(),
            input.recorded_line()
        );
        for note in input.recorded_notes() {
            eprintln!("memlens: {note}");
        }
    }
    for note in [outcome.more_traces(SHOWN), outcome.unfollowed_note()] {
        note.into_iter().for_each(|n| eprintln!("memlens: {n}"));
    }
    if let Some(first) = paths.first() {
        eprintln!("memlens: next: memlens summary {}", first.display());
    }
}
