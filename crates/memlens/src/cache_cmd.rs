//! `memlens cache …`: the cache lens on the command line — write a built-in
//! kernel's reference trace (`kernel`) and run a cache hierarchy over a trace
//! (`simulate`). Glue only: parsing, file IO and printing; the kernels, importers
//! and the simulation live in `memlens-cache`, the reference records in
//! `memlens-trace` and their conversion in `memlens-ingest`, the report's JSON shape
//! in `memlens_cache::protocol`; `cache_report` prints it.
//!
//! Exit status: 0 on success, 2 for usage errors (a bad option, an unrealisable
//! cache level, an unknown kernel), 1 for failures (an unreadable or damaged file
//! with `--on-error stop`, a write error). Each error is one sentence on stderr,
//! printed by `main`.

use std::fs::File;
use std::io::{self, BufWriter};
use std::path::{Path, PathBuf};

use anyhow::{Result, anyhow};
use memlens_cache::import::OnError;
use memlens_cache::kernels::{Kernel, KernelParams};
use memlens_cache::spec::{parse_access_size, parse_hierarchy};
use memlens_cache::{Simulation, WritePolicy};
use memlens_ingest::reference_import::{self, ImportOptions, ReferenceFormat};
use memlens_ingest::references::{self, TextFormat};

use crate::UsageError;
use crate::cache_report::{Report, print};

/// The cache lens commands.
#[derive(clap::Subcommand)]
pub enum CacheCommand {
    /// Write the reference trace of a built-in kernel (the paper's case studies).
    Kernel(KernelArgs),
    /// Run a cache hierarchy over a reference trace and print its statistics.
    Simulate(SimulateArgs),
    /// Run a program under Valgrind and write every memory reference it makes.
    Record(crate::cache_record::RecordArgs),
    /// Open the cache lens in the viewer on the built-in kernels (no trace needed).
    View(crate::cache_view_cmd::CacheViewArgs),
}

/// Trace formats the cache lens reads and writes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum TraceFormat {
    /// memlens trace with reference chunks (regions and statement labels kept).
    Mlens,
    /// Valgrind Lackey `--trace-mem=yes` text.
    Lackey,
    /// Dinero `din` text (`LABEL ADDRESS [SIZE]`).
    Din,
}

/// Arguments of `memlens cache kernel`.
#[derive(clap::Args)]
pub struct KernelArgs {
    /// The kernel: matmul, bubble-sort, merge-sort, array-init or particles.
    name: String,
    /// The problem size: matrix dimension, array length or particle count.
    #[arg(long, default_value_t = 64)]
    n: u64,
    /// The variant (matmul: standard, transposed or blocked).
    #[arg(long)]
    variant: Option<String>,
    /// The block size of the blocked matrix multiply.
    #[arg(long, default_value_t = 8)]
    block: u64,
    /// The element size in bytes.
    #[arg(long, default_value_t = 8)]
    elem_size: u16,
    /// Time steps of the particle update.
    #[arg(long, default_value_t = 2)]
    steps: u32,
    /// Seed of the sorting kernels' input data.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// The file to write.
    #[arg(short = 'o', long = "output")]
    output: PathBuf,
    /// The output format; by default `din` for `*.din`, `lackey` for `*.lackey`
    /// and `*.txt`, else `mlens`.
    #[arg(long, value_enum)]
    format: Option<TraceFormat>,
}

/// What to do with malformed input.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
enum OnErrorArg {
    /// Report malformed input and continue.
    Skip,
    /// Report malformed input and stop with status 1.
    Stop,
}

/// Arguments of `memlens cache simulate`.
#[derive(clap::Args)]
pub struct SimulateArgs {
    /// The reference trace.
    trace: PathBuf,
    /// The trace format; by default sniffed (`mlens` by its magic, `din` for
    /// `*.din`, else `lackey`).
    #[arg(long, value_enum)]
    format: Option<TraceFormat>,
    /// A cache level, first level first: NAME:SIZE:WAYS:LINE[:POLICY], e.g.
    /// `L1:32K:8:64:lru`; POLICY is lru (default), fifo, random[=SEED] or plru.
    /// Without any, a typical x86-64 core's data caches: L1 32K 8-way, L2 256K 8-way,
    /// L3 8M 16-way, 64-byte lines.
    #[arg(
        long = "level",
        value_name = "SPEC",
        default_values = ["L1:32K:8:64", "L2:256K:8:64", "L3:8M:16:64"]
    )]
    levels: Vec<String>,
    /// How the levels' contents relate.
    #[arg(long, default_value = "non-inclusive", value_parser = ["inclusive", "non-inclusive", "exclusive"])]
    inclusion: String,
    /// Write-back levels (the default).
    #[arg(long, conflicts_with = "write_through")]
    write_back: bool,
    /// Write-through levels.
    #[arg(long)]
    write_through: bool,
    /// Store misses do not fill the line (no-write-allocate).
    #[arg(long)]
    no_write_allocate: bool,
    /// What to do with a malformed line or damaged chunk.
    #[arg(long, value_enum, default_value = "skip")]
    on_error: OnErrorArg,
    /// Keep instruction fetches of Lackey and din traces (dropped by default).
    #[arg(long)]
    instructions: bool,
    /// Access size of din lines without a size field.
    #[arg(long, default_value = "4")]
    din_size: String,
    /// Seed of `random` replacement levels given without one.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// References in the sliding window of the windowed miss rate and temperature.
    #[arg(long, default_value_t = 1000)]
    window: usize,
    /// Print JSON instead of a table.
    #[arg(long)]
    json: bool,
}

/// Runs a cache command and returns the process exit status.
pub fn run(cmd: CacheCommand) -> Result<i32> {
    match cmd {
        CacheCommand::Kernel(args) => kernel(&args)?,
        CacheCommand::Simulate(args) => simulate(&args)?,
        CacheCommand::Record(args) => return crate::cache_record::run(args),
        CacheCommand::View(args) => return crate::cache_view_cmd::run(args),
    }
    Ok(0)
}

/// A failure about a file: `FILE: what went wrong`.
fn failed(path: &Path, e: impl std::fmt::Display) -> anyhow::Error {
    anyhow!("{}: {e}", path.display())
}

fn kernel(args: &KernelArgs) -> Result<()> {
    let params = KernelParams {
        n: args.n,
        elem_size: args.elem_size,
        block: args.block,
        steps: args.steps,
        seed: args.seed,
    };
    let kernel = Kernel::new(&args.name, args.variant.as_deref(), params)
        .map_err(|e| UsageError(e.to_string()))?;
    let format =
        args.format
            .unwrap_or_else(|| match args.output.extension().and_then(|e| e.to_str()) {
                Some("din") => TraceFormat::Din,
                Some("lackey" | "txt") => TraceFormat::Lackey,
                _ => TraceFormat::Mlens,
            });
    let file = File::create(&args.output)
        .map_err(|e| failed(&args.output, format!("cannot create: {e}")))?;
    let out = BufWriter::with_capacity(1 << 20, file);
    let written = match format {
        TraceFormat::Mlens => references::write_trace(&kernel, out),
        TraceFormat::Din => references::write_text(&kernel, out, TextFormat::Din),
        TraceFormat::Lackey => references::write_text(&kernel, out, TextFormat::Lackey),
    };
    let count = written.map_err(|e| failed(&args.output, format!("cannot write: {e}")))?;
    eprintln!(
        "memlens: wrote {count} references of {} to {}",
        args.name,
        args.output.display()
    );
    Ok(())
}

fn simulate(args: &SimulateArgs) -> Result<()> {
    let writes = match args.write_through {
        true => WritePolicy::WriteThrough,
        false => WritePolicy::WriteBack,
    };
    let config = parse_hierarchy(
        &args.levels,
        args.seed,
        writes,
        !args.no_write_allocate,
        &args.inclusion,
    )
    .map_err(|e| UsageError(format!("--level {e}")))?;
    let mut simulation =
        Simulation::new(&config, args.window).map_err(|e| UsageError(e.to_string()))?;
    let din_size =
        parse_access_size(&args.din_size).map_err(|e| UsageError(format!("--din-size {e}")))?;
    let format = match args.format {
        Some(TraceFormat::Mlens) => ReferenceFormat::Mlens,
        Some(TraceFormat::Lackey) => ReferenceFormat::Lackey,
        Some(TraceFormat::Din) => ReferenceFormat::Din,
        None => ReferenceFormat::sniff(&args.trace),
    };
    let options = ImportOptions {
        format,
        on_error: match args.on_error {
            OnErrorArg::Skip => OnError::Skip,
            OnErrorArg::Stop => OnError::Stop,
        },
        keep_instructions: args.instructions,
        din_size,
    };
    let imported = reference_import::simulate_file(&args.trace, &options, &mut simulation);
    imported
        .notes
        .iter()
        .for_each(|n| eprintln!("memlens: {n}"));
    if let Some(failure) = imported.failure {
        return Err(anyhow!(failure));
    }
    let import = imported.counts;
    let summary = simulation.summary();
    if summary.references == 0 {
        let why = reference_import::no_references(&args.trace, format, import.as_ref());
        return Err(anyhow!(why));
    }
    let report = Report {
        trace: &args.trace.display().to_string(),
        format: format.name(),
        summary: &summary,
        import: import.as_ref(),
    };
    print(&mut io::stdout().lock(), &report, args.json)
        .map_err(|e| anyhow!("cannot write the report: {e}"))
}
