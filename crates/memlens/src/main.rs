//! The `memlens` command line: argument parsing and glue between the trace
//! reader, the analysis crates and the terminal. No analysis lives here.
//!
//! Exit status: the recorded program's status for `record`; 2 for usage
//! errors (a bad argument, an unknown name); 1 for failures (an unreadable
//! file). Errors are one sentence on stderr naming the file, offset or
//! argument at fault.

mod alloc_cmd;
mod alloc_pool;
mod attach_cmd;
mod cache_cmd;
mod cache_record;
mod cache_report;
mod cache_view_cmd;
mod diff_cmd;
mod dump_cmd;
mod export_cmd;
mod growth_cmd;
mod heap_args;
mod read;
mod record;
mod render_cmd;
mod report_cmd;
mod summary_cmd;
mod tree_cmd;
mod view_cmd;

use clap::{CommandFactory, Parser, Subcommand};

/// Record how a program uses memory and look at it through three lenses:
/// heap evolution, allocation map and cache.
#[derive(Parser)]
#[command(name = "memlens", version, about, long_about = None)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Run a program under the recorder and write a trace of every allocation.
    Record(record::RecordArgs),
    /// Record a running process (ptrace) until Ctrl-C, --duration or `memlens detach PID`.
    Attach(attach_cmd::AttachArgs),
    /// Stop the `memlens attach` recording a process; the process runs on.
    Detach {
        /// The process `memlens attach` records.
        pid: u32,
    },
    /// Totals, peak, leaks and top allocation sites of a trace.
    Summary(summary_cmd::SummaryArgs),
    /// Print every record of a trace, one per line.
    Dump(dump_cmd::DumpArgs),
    /// Memory trees at several snapshot times: what the heap holds, grouped by
    /// classifiers such as site or thread, and how each group grows.
    Tree(tree_cmd::TreeArgs),
    /// Rank the groups whose live memory grows over the run: leak suspects.
    Growth(growth_cmd::GrowthArgs),
    /// Compare two runs group by group: what holds more or less memory at the peak and
    /// at the end.
    Diff(diff_cmd::DiffArgs),
    /// Cache lens: record a program's memory references, built-in kernels, the
    /// multi-level cache simulator and its view in the browser.
    #[command(subcommand)]
    Cache(cache_cmd::CacheCommand),
    /// Serve the viewer of a trace on this machine and open it in the browser.
    View(view_cmd::ViewArgs),
    /// Write one self-contained HTML report of a trace, viewable with no server.
    Report(report_cmd::ReportArgs),
    /// Draw a lens as an image: `render alloc` draws the allocation map as a PNG.
    #[command(subcommand)]
    Render(render_cmd::RenderCommand),
    /// Allocation-map lens: bins of a trace, the pool-allocator replay and metrics over time.
    #[command(subcommand)]
    Alloc(alloc_cmd::AllocCommand),
    /// Write a trace in another tool's format: pprof, collapsed stacks, speedscope,
    /// the Firefox Profiler or Parquet tables.
    Export(export_cmd::ExportArgs),
}

/// A usage error: exits with status 2.
#[derive(Debug)]
pub struct UsageError(pub String);

impl std::fmt::Display for UsageError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for UsageError {}

/// Prints a command-line error as one sentence (help and version output as
/// clap renders them) and exits: 2 for errors, 0 for help and version.
fn usage_error(e: clap::Error) -> ! {
    use clap::error::ErrorKind;
    if matches!(
        e.kind(),
        ErrorKind::DisplayHelp
            | ErrorKind::DisplayVersion
            | ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand
    ) {
        e.exit();
    }
    let rendered = e.render().to_string();
    // clap's message runs until its "Usage:" block; keep it as one line.
    let first: String = rendered
        .lines()
        .take_while(|l| {
            !l.starts_with("Usage:")
                && !l.trim_start().starts_with("tip:")
                && !l.starts_with("For more information")
        })
        .map(|l| l.trim().trim_start_matches("error: "))
        .filter(|l| !l.is_empty())
        .collect::<Vec<_>>()
        .join(" ");
    // The subcommands the user typed, for the hint: `memlens cache simulate --help`.
    let mut command: Vec<String> = Vec::new();
    let mut level = Cli::command();
    for arg in std::env::args().skip(1).take_while(|a| !a.starts_with('-')) {
        let Some(sub) = level.find_subcommand(&arg).cloned() else {
            break;
        };
        command.push(arg);
        level = sub;
    }
    let help = if command.is_empty() {
        "memlens --help".to_string()
    } else {
        format!("memlens {} --help", command.join(" "))
    };
    eprintln!("memlens: {first} (see `{help}`)");
    std::process::exit(2);
}

fn main() {
    // Die quietly on a closed pipe (`memlens dump x | head`), as Unix tools do.
    // SAFETY: restoring the default disposition of one signal.
    unsafe { libc::signal(libc::SIGPIPE, libc::SIG_DFL) };
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) => usage_error(e),
    };
    let result = match cli.command {
        Command::Record(a) => record::run(a),
        Command::Attach(a) => attach_cmd::run_attach(a),
        Command::Detach { pid } => attach_cmd::run_detach(pid),
        Command::Summary(a) => summary_cmd::run(a),
        Command::Dump(a) => dump_cmd::run(a),
        Command::Tree(a) => tree_cmd::run(a),
        Command::Growth(a) => growth_cmd::run(a),
        Command::Diff(a) => diff_cmd::run(a),
        Command::Cache(c) => cache_cmd::run(c),
        Command::View(a) => view_cmd::run(a),
        Command::Report(a) => report_cmd::run(a),
        Command::Render(c) => render_cmd::run(c),
        Command::Alloc(c) => alloc_cmd::run_alloc(c),
        Command::Export(a) => export_cmd::run(a),
    };
    match result {
        Ok(code) => std::process::exit(code),
        Err(e) => {
            let code = if e.downcast_ref::<UsageError>().is_some() {
                2
            } else {
                1
            };
            eprintln!("memlens: {e:#}");
            std::process::exit(code);
        }
    }
}
