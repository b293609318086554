//! `memlens cache …`: the cache lens on the command line — write a built-in
//! kernel's reference trace (`kernel`) and run a cache hierarchy over a trace
//! (`simulate`). Glue only: parsing, file IO and printing; the kernels, importers,
//! simulator and statistics live in `memlens-cache`, the reference records in
//! `memlens-trace`.
//!
//! Exit status: 0 on success, 2 for usage errors (a bad option, an unrealisable
//! cache level, an unknown kernel), 1 for failures (an unreadable or damaged file
//! with `--on-error stop`, a write error). Each error is one sentence on stderr.

use std::fs::File;
use std::io::{self, BufRead, BufReader, BufWriter, Write};
use std::path::{Path, PathBuf};

use anyhow::Result;
use memlens_cache::import::{
    DinOptions, DinReader, ImportCounts, ImportError, ImportErrorKind, LackeyOptions, LackeyReader,
    OnError,
};
use memlens_cache::kernels::{Kernel, KernelParams};
use memlens_cache::spec::{parse_level, parse_size};
use memlens_cache::{
    AccessKind, Hierarchy, HierarchyConfig, Inclusion, LabelId, LevelCounters, Reference, RegionId,
    Statistics, Temperature, TemperatureConfig, WindowedMissRate, WritePolicy,
};
use memlens_trace::{
    RefItem, RefKind, RefRecord, ReferenceWriter, TraceFile, TraceWriter, read_references,
};
use serde::Serialize;

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
    let outcome = match cmd {
        CacheCommand::Kernel(args) => kernel(&args),
        CacheCommand::Simulate(args) => simulate(&args),
        CacheCommand::Record(args) => return crate::cache_record::run(args),
        CacheCommand::View(args) => return crate::cache_view_cmd::run(args),
    };
    Ok(match outcome {
        Ok(()) => 0,
        Err(Failure::Usage(message)) => {
            eprintln!("memlens: {message}");
            2
        }
        Err(Failure::Failed(message)) => {
            eprintln!("memlens: {message}");
            1
        }
    })
}

/// Why a command did not succeed, as one sentence.
enum Failure {
    /// A usage error (status 2).
    Usage(String),
    /// A failure (status 1).
    Failed(String),
}

fn failed(path: &Path, e: impl std::fmt::Display) -> Failure {
    Failure::Failed(format!("{}: {e}", path.display()))
}

// ---------------------------------------------------------------------------
// kernel

fn kernel(args: &KernelArgs) -> Result<(), Failure> {
    let params = KernelParams {
        n: args.n,
        elem_size: args.elem_size,
        block: args.block,
        steps: args.steps,
        seed: args.seed,
    };
    let kernel = Kernel::new(&args.name, args.variant.as_deref(), params)
        .map_err(|e| Failure::Usage(e.to_string()))?;
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
        TraceFormat::Mlens => write_mlens(&kernel, out),
        TraceFormat::Din | TraceFormat::Lackey => write_text(&kernel, out, format),
    };
    let count = written.map_err(|e| failed(&args.output, format!("cannot write: {e}")))?;
    eprintln!(
        "memlens: wrote {count} references of {} to {}",
        args.name,
        args.output.display()
    );
    Ok(())
}

fn ref_kind(kind: AccessKind) -> RefKind {
    match kind {
        AccessKind::Read => RefKind::Read,
        AccessKind::Write => RefKind::Write,
        AccessKind::Modify => RefKind::Modify,
        AccessKind::Instruction => RefKind::Instruction,
    }
}

fn write_mlens(kernel: &Kernel, out: BufWriter<File>) -> io::Result<u64> {
    let info = kernel.info();
    let mut trace = TraceWriter::new(out, true)?;
    let mut refs = ReferenceWriter::new();
    for (id, region) in info.regions.iter() {
        refs.region(&mut trace, id.0, region.start, region.len, &region.name)?;
    }
    for (id, text) in info.labels.iter() {
        refs.label(&mut trace, id.0, text)?;
    }
    let (mut count, mut error) = (0u64, None);
    kernel.generate(|r| {
        if error.is_some() {
            return;
        }
        let record = RefRecord {
            addr: r.addr,
            size: r.size,
            kind: ref_kind(r.kind),
            region: r.region.0,
            label: r.label.0,
        };
        match refs.reference(&mut trace, record) {
            Ok(()) => count += 1,
            Err(e) => error = Some(e),
        }
    });
    if let Some(e) = error {
        return Err(e);
    }
    refs.finish(&mut trace)?;
    trace.finish()?.flush()?;
    Ok(count)
}

fn write_text(kernel: &Kernel, mut out: BufWriter<File>, format: TraceFormat) -> io::Result<u64> {
    let (mut count, mut error) = (0u64, None);
    kernel.generate(|r| {
        if error.is_none() {
            let written = match format {
                TraceFormat::Din => memlens_cache::import::din::write_line(&mut out, &r),
                _ => memlens_cache::import::lackey::write_line(&mut out, &r),
            };
            match written {
                Ok(()) => count += 1,
                Err(e) => error = Some(e),
            }
        }
    });
    match error {
        Some(e) => Err(e),
        None => out.flush().map(|()| count),
    }
}

// ---------------------------------------------------------------------------
// simulate

/// Everything the statistics are folded into while a trace streams through.
struct Run {
    cache: Hierarchy,
    sinks: (Temperature, WindowedMissRate),
    region_names: Vec<String>,
    labels: usize,
}

impl Run {
    fn access(&mut self, reference: &Reference) {
        self.cache.access(reference, &mut self.sinks);
    }

    fn name_region(&mut self, id: u16, name: String) {
        let i = usize::from(id);
        if self.region_names.len() <= i {
            self.region_names.resize(i + 1, String::new());
        }
        self.region_names[i] = name;
    }

    fn region_name(&self, id: RegionId) -> String {
        match self.region_names.get(id.index()) {
            Some(name) if !name.is_empty() => name.clone(),
            _ if id == RegionId::NONE => memlens_cache::region::UNNAMED_REGION.to_owned(),
            _ => format!("region {}", id.0),
        }
    }
}

fn hierarchy_config(args: &SimulateArgs) -> Result<HierarchyConfig, Failure> {
    let write_policy = if args.write_through {
        WritePolicy::WriteThrough
    } else {
        WritePolicy::WriteBack
    };
    let mut levels = Vec::new();
    for spec in &args.levels {
        let level =
            parse_level(spec, args.seed).map_err(|e| Failure::Usage(format!("--level {e}")))?;
        levels.push(level.with_writes(write_policy, !args.no_write_allocate));
    }
    let inclusion = match args.inclusion.as_str() {
        "inclusive" => Inclusion::Inclusive,
        "exclusive" => Inclusion::Exclusive,
        _ => Inclusion::NonInclusive,
    };
    Ok(HierarchyConfig::new(levels).with_inclusion(inclusion))
}

fn sniff_format(path: &Path) -> TraceFormat {
    let mut magic = [0u8; 8];
    let is_mlens = File::open(path)
        .and_then(|mut f| io::Read::read_exact(&mut f, &mut magic))
        .is_ok()
        && magic == memlens_trace::format::FILE_MAGIC;
    if is_mlens {
        TraceFormat::Mlens
    } else if path.extension().and_then(|e| e.to_str()) == Some("din") {
        TraceFormat::Din
    } else {
        TraceFormat::Lackey
    }
}

/// Prints import errors as `FILE:LINE: reason`, at most `LIMIT`, and counts the rest.
struct ErrorReport<'a> {
    path: &'a Path,
    printed: usize,
}

impl ErrorReport<'_> {
    const LIMIT: usize = 20;

    fn report(&mut self, error: &ImportError) {
        if self.printed < Self::LIMIT {
            eprintln!("memlens: {}:{error}", self.path.display());
        }
        self.printed += 1;
    }

    fn finish(&self, counts: &ImportCounts) {
        if counts.malformed as usize > Self::LIMIT {
            eprintln!(
                "memlens: {}: {} malformed lines in all, {} not shown",
                self.path.display(),
                counts.malformed,
                counts.malformed as usize - Self::LIMIT
            );
        }
    }
}

fn simulate(args: &SimulateArgs) -> Result<(), Failure> {
    let config = hierarchy_config(args)?;
    let cache = Hierarchy::new(&config).map_err(|e| Failure::Usage(e.to_string()))?;
    let din_size = parse_size(&args.din_size)
        .ok()
        .and_then(|s| u16::try_from(s).ok())
        .filter(|&s| s > 0)
        .ok_or_else(|| {
            Failure::Usage(format!(
                "--din-size `{}` must be a size from 1 to 65535 bytes",
                args.din_size
            ))
        })?;
    let levels = cache.level_count();
    let mut run = Run {
        cache,
        sinks: (
            Temperature::new(&TemperatureConfig {
                window: args.window.max(1),
                ..TemperatureConfig::standard(levels)
            }),
            WindowedMissRate::new(levels, args.window.max(1)),
        ),
        region_names: Vec::new(),
        labels: 0,
    };
    let format = args.format.unwrap_or_else(|| sniff_format(&args.trace));
    let on_error = match args.on_error {
        OnErrorArg::Skip => OnError::Skip,
        OnErrorArg::Stop => OnError::Stop,
    };
    let import = match format {
        TraceFormat::Mlens => {
            simulate_mlens(&args.trace, on_error, &mut run)?;
            None
        }
        TraceFormat::Lackey | TraceFormat::Din => {
            let file = File::open(&args.trace)
                .map_err(|e| failed(&args.trace, format!("cannot open: {e}")))?;
            let input = BufReader::with_capacity(1 << 20, file);
            Some(simulate_text(
                &args.trace,
                input,
                format,
                on_error,
                args.instructions,
                din_size,
                &mut run,
            )?)
        }
    };
    let stats = run.cache.statistics();
    let report = report(args, format, &run, &stats, import.as_ref());
    let mut stdout = io::stdout().lock();
    let printed = if args.json {
        serde_json::to_writer_pretty(&mut stdout, &report)
            .map_err(io::Error::other)
            .and_then(|()| writeln!(stdout))
    } else {
        print_table(&mut stdout, &report)
    };
    printed.map_err(|e| Failure::Failed(format!("cannot write the report: {e}")))
}

fn simulate_text(
    path: &Path,
    input: impl BufRead,
    format: TraceFormat,
    on_error: OnError,
    instructions: bool,
    din_size: u16,
    run: &mut Run,
) -> Result<ImportCounts, Failure> {
    let mut errors = ErrorReport { path, printed: 0 };
    let mut stopped = None;
    let mut handle = |item: Result<Reference, ImportError>, run: &mut Run| match item {
        Ok(reference) => run.access(&reference),
        Err(error) if on_error == OnError::Stop || matches!(error.kind, ImportErrorKind::Io(_)) => {
            stopped = Some(format!("{}:{error}", path.display()));
        }
        Err(error) => errors.report(&error),
    };
    let counts = if format == TraceFormat::Din {
        let options = DinOptions {
            keep_instructions: instructions,
            default_size: din_size,
            on_error,
        };
        let mut reader = DinReader::new(input, options);
        for item in reader.by_ref() {
            handle(item, run);
        }
        reader.counts()
    } else {
        let options = LackeyOptions {
            keep_instructions: instructions,
            on_error,
        };
        let mut reader = LackeyReader::new(input, options);
        for item in reader.by_ref() {
            handle(item, run);
        }
        reader.counts()
    };
    errors.finish(&counts);
    match stopped {
        Some(message) => Err(Failure::Failed(format!("{message} (import stopped)"))),
        None => Ok(counts),
    }
}

fn simulate_mlens(path: &Path, on_error: OnError, run: &mut Run) -> Result<(), Failure> {
    let trace = TraceFile::open(path).map_err(|e| Failure::Failed(e.to_string()))?;
    let damage = read_references(&trace, &mut |item| match item {
        RefItem::Region { id, name, .. } => run.name_region(id, name),
        RefItem::Label { .. } => run.labels += 1,
        RefItem::Reference(r) => {
            let kind = match r.kind {
                RefKind::Read => AccessKind::Read,
                RefKind::Write => AccessKind::Write,
                RefKind::Modify => AccessKind::Modify,
                RefKind::Instruction => AccessKind::Instruction,
            };
            let reference =
                Reference::new(kind, r.addr, r.size).with(RegionId(r.region), LabelId(r.label));
            run.access(&reference);
        }
    });
    for d in &damage {
        eprintln!("memlens: {}: {d}", path.display());
    }
    match damage.first() {
        Some(d) if on_error == OnError::Stop => Err(failed(path, format!("damaged at {d}"))),
        _ => Ok(()),
    }
}

// ---------------------------------------------------------------------------
// report: the `--json` shape (a superset of the interface contract's
// `{"levels":[{"name","accesses","hits","misses","evictions"}],"references"}`)

/// The counters of one level, for the whole trace or one region.
#[derive(Serialize)]
struct Counts {
    name: String,
    accesses: u64,
    hits: u64,
    misses: u64,
    miss_rate: f64,
    evictions: u64,
    write_backs: u64,
    read_hits: u64,
    read_misses: u64,
    write_hits: u64,
    write_misses: u64,
    writeback_hits: u64,
    writeback_misses: u64,
    fills: u64,
    invalidations: u64,
    /// The miss rate over the last `--window` references (null when idle).
    windowed_miss_rate: Option<f64>,
}

impl Counts {
    fn new(name: &str, c: &LevelCounters, windowed_miss_rate: Option<f64>) -> Counts {
        Counts {
            name: name.to_owned(),
            accesses: c.accesses(),
            hits: c.hits(),
            misses: c.misses(),
            miss_rate: c.miss_rate(),
            evictions: c.evictions,
            write_backs: c.write_backs,
            read_hits: c.read_hits,
            read_misses: c.read_misses,
            write_hits: c.write_hits,
            write_misses: c.write_misses,
            writeback_hits: c.writeback_hits,
            writeback_misses: c.writeback_misses,
            fills: c.fills,
            invalidations: c.invalidations,
            windowed_miss_rate,
        }
    }
}

#[derive(Serialize)]
struct LevelRow {
    #[serde(flatten)]
    counts: Counts,
    size: u64,
    ways: u32,
    line_size: u32,
    sets: u64,
    policy: &'static str,
    write_policy: &'static str,
    write_allocate: bool,
    /// Whole references that needed a deeper level (a straddle counts once).
    reference_misses: u64,
    /// The cache temperature over the last `--window` references.
    temperature: f64,
}

#[derive(Serialize)]
struct RegionRow {
    id: u16,
    name: String,
    references: u64,
    levels: Vec<Counts>,
}

#[derive(Serialize)]
struct MemoryRow {
    references: u64,
}

#[derive(Serialize)]
struct ImportRow {
    lines: u64,
    ignored: u64,
    malformed: u64,
}

#[derive(Serialize)]
struct Report {
    trace: String,
    format: String,
    references: u64,
    inclusion: &'static str,
    levels: Vec<LevelRow>,
    memory: MemoryRow,
    regions: Vec<RegionRow>,
    labels: usize,
    #[serde(skip_serializing_if = "Option::is_none")]
    import: Option<ImportRow>,
}

fn report(
    args: &SimulateArgs,
    format: TraceFormat,
    run: &Run,
    stats: &Statistics,
    import: Option<&ImportCounts>,
) -> Report {
    let config = run.cache.config();
    let levels = config
        .levels
        .iter()
        .enumerate()
        .map(|(i, level)| LevelRow {
            counts: Counts::new(&level.name, &stats.level(i), run.sinks.1.level(i)),
            size: level.size,
            ways: level.ways,
            line_size: level.line_size,
            sets: run.cache.geometry(i).sets,
            policy: level.replacement.name(),
            write_policy: match level.write_policy {
                WritePolicy::WriteBack => "write-back",
                WritePolicy::WriteThrough => "write-through",
            },
            write_allocate: level.write_allocate,
            reference_misses: stats.reference_misses(i),
            temperature: run.sinks.0.value(i),
        })
        .collect();
    let regions = stats
        .active_regions()
        .into_iter()
        .map(|region| RegionRow {
            id: region.0,
            name: run.region_name(region),
            references: stats.region_references(region),
            levels: (config.levels.iter().enumerate())
                .map(|(i, level)| {
                    Counts::new(
                        &level.name,
                        &stats.region_level(region, i),
                        run.sinks.1.region(region, i),
                    )
                })
                .collect(),
        })
        .collect();
    Report {
        trace: args.trace.display().to_string(),
        format: format!("{format:?}").to_lowercase(),
        references: stats.references(),
        inclusion: config.inclusion.name(),
        levels,
        memory: MemoryRow {
            references: stats.served_by(config.levels.len()),
        },
        regions,
        labels: run.labels,
        import: import.map(|c| ImportRow {
            lines: c.lines,
            ignored: c.ignored,
            malformed: c.malformed,
        }),
    }
}

fn percent(rate: Option<f64>) -> String {
    rate.map_or_else(|| "-".into(), |r| format!("{:.2}%", r * 100.0))
}

fn human_size(bytes: u64) -> String {
    match bytes {
        b if b >= 1 << 20 && b % (1 << 20) == 0 => format!("{}M", b >> 20),
        b if b >= 1 << 10 && b % (1 << 10) == 0 => format!("{}K", b >> 10),
        b => b.to_string(),
    }
}

/// Regions listed in the text report, busiest first.
const TEXT_REGIONS: usize = 20;

fn print_table(out: &mut impl Write, report: &Report) -> io::Result<()> {
    let r = report;
    writeln!(
        out,
        "{} ({}, {}): {} references",
        r.trace, r.format, r.inclusion, r.references
    )?;
    writeln!(
        out,
        "{:<6} {:>6} {:>4} {:>4} {:<6} {:>12} {:>12} {:>12} {:>8} {:>8} {:>12} {:>11} {:>6}",
        "level",
        "size",
        "ways",
        "line",
        "policy",
        "accesses",
        "hits",
        "misses",
        "miss%",
        "window%",
        "evictions",
        "write-backs",
        "temp"
    )?;
    for l in &r.levels {
        let c = &l.counts;
        writeln!(
            out,
            "{:<6} {:>6} {:>4} {:>4} {:<6} {:>12} {:>12} {:>12} {:>8} {:>8} {:>12} {:>11} {:>6.2}",
            c.name,
            human_size(l.size),
            l.ways,
            l.line_size,
            l.policy,
            c.accesses,
            c.hits,
            c.misses,
            percent(Some(c.miss_rate)),
            percent(c.windowed_miss_rate),
            c.evictions,
            c.write_backs,
            l.temperature,
        )?;
    }
    writeln!(out, "memory: {} references served", r.memory.references)?;
    if !r.regions.is_empty() {
        // The busiest regions first; a recorded program can have hundreds (every
        // global and allocation site), which `--json` lists in full.
        let mut shown: Vec<_> = r.regions.iter().collect();
        shown.sort_by_key(|region| std::cmp::Reverse(region.references));
        let hidden = shown.len().saturating_sub(TEXT_REGIONS);
        shown.truncate(TEXT_REGIONS);
        let width = (shown.iter())
            .map(|region| region.name.chars().count())
            .max()
            .unwrap_or(0)
            .clamp(6, 48);
        writeln!(
            out,
            "\n{:<width$} {:>12}  miss rate per level",
            "region", "references"
        )?;
        for region in shown {
            let rates: Vec<String> = (region.levels.iter())
                .map(|c| format!("{} {}", c.name, percent(Some(c.miss_rate))))
                .collect();
            let name: String = region.name.chars().take(width).collect();
            writeln!(
                out,
                "{name:<width$} {:>12}  {}",
                region.references,
                rates.join("  ")
            )?;
        }
        if hidden > 0 {
            writeln!(out, "… and {hidden} smaller regions (`--json` lists all)")?;
        }
    }
    if let Some(i) = &r.import {
        writeln!(
            out,
            "\nimport: {} lines, {} ignored, {} malformed",
            i.lines, i.ignored, i.malformed
        )?;
    }
    Ok(())
}
