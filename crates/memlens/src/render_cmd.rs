//! `memlens render alloc` and `memlens alloc bins|replay|metrics`: the allocation-map
//! lens on the command line. Glue only: argument checks, trace loading
//! ([`crate::alloc_model`]), the pool configuration (flags or a small TOML file), PNG
//! encoding and printing; the model, replay, metrics and rasterizer live in
//! `memlens-alloc`.
//!
//! Exit status: 0 on success, 2 for usage errors (α ≤ 0, an empty time or address
//! window, bin sizes that do not increase, an unknown bin), 1 for failures (an
//! unreadable file, a damaged trace). Each error is one sentence on stderr.

use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use memlens_alloc::{
    AllocError, AllocModel, BarOptions, BinId, ColorBy, CushionProfile, MetricSeries,
    OverflowPolicy, PoolConfig, RenderOptions, ReplayReport, RgbaImage, SizeFilter, TimeRange,
    View, metric_series, parse_bytes, render, render_stacked_bars, replay,
};
use memlens_heap::TimeWindow;
use serde_json::json;

use crate::UsageError;
use crate::alloc_model::{AllocTraces, load_traces};
use crate::heap_model::parse_time;

/// `memlens render …`.
#[derive(clap::Subcommand)]
pub enum RenderCommand {
    /// Draw the allocation map (time → x, address → y) of one or more traces as a PNG.
    Alloc(RenderAllocArgs),
}

/// `memlens alloc …`.
#[derive(clap::Subcommand)]
pub enum AllocCommand {
    /// List the bins of a trace: main heap, thread arenas, mmap'd chunks (or a pool's bins).
    Bins(BinsArgs),
    /// Replay a trace through a pool allocator (fixed-size bins + heap) and report
    /// overflows, high-water marks and waste.
    Replay(ReplayArgs),
    /// Occupancy, waste, fragmentation, event rate and latency of a bin over time.
    Metrics(MetricsArgs),
}

/// Cushion profiles on the command line.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum CushionArg {
    /// Parabolic cushions: strongest structure.
    Parabolic,
    /// Plateau cushions: flat centre, bevelled rims.
    Plateau,
    /// Flat shading.
    None,
}

/// Colour attributes on the command line.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum ColorArg {
    /// The allocating thread.
    Thread,
    /// The allocating function.
    Site,
    /// The process (for several traces).
    Process,
    /// The requested size.
    Size,
    /// Reserved − requested bytes.
    Waste,
    /// The block's lifetime.
    Age,
    /// The allocator call's duration (traces recorded with `--latency`).
    Latency,
}

/// Heap policies of the pool replay.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum OverflowArg {
    /// The highest free run that fits.
    FirstFit,
    /// The smallest free run that fits.
    BestFit,
}

/// The pool options shared by the commands that can replay.
#[derive(clap::Args, Clone)]
pub struct PoolArgs {
    /// Replay through a pool of these bins: BLOCK_SIZE:COUNT,… with strictly increasing
    /// sizes, e.g. `16:1024,32:512,64:256`.
    #[arg(long = "pool", value_name = "SIZE:COUNT,…", conflicts_with = "config")]
    pool: Option<String>,
    /// Replay through the pool described by a TOML file (see docs/alloc-lens.md).
    #[arg(long, value_name = "FILE")]
    config: Option<PathBuf>,
    /// How the pool's heap picks a free run (default first-fit, or the file's `overflow`).
    #[arg(long, value_enum)]
    overflow: Option<OverflowArg>,
    /// The pool heap's size (bytes, `K`, `M`, `G`); unbounded by default.
    #[arg(long, value_name = "BYTES")]
    heap_size: Option<String>,
}

/// Arguments of `memlens render alloc`.
#[derive(clap::Args)]
pub struct RenderAllocArgs {
    /// The trace file(s): several (a parent and its forked children) share one picture.
    #[arg(required = true)]
    files: Vec<PathBuf>,
    /// The PNG file to write.
    #[arg(short = 'o', long = "output")]
    output: PathBuf,
    /// Image width in pixels.
    #[arg(long, default_value_t = 1920)]
    width: u32,
    /// Image height in pixels (of the map; bars are added below it).
    #[arg(long, default_value_t = 1080)]
    height: u32,
    /// The bias α of the antialiasing (above 0): 1 averages by area, smaller values make
    /// thin isolated blocks visible.
    #[arg(long, default_value_t = 0.5, allow_negative_numbers = true)]
    alpha: f64,
    /// The cushion profile.
    #[arg(long, value_enum, default_value_t = CushionArg::Plateau)]
    cushion: CushionArg,
    /// What the colours show.
    #[arg(long, value_enum, default_value_t = ColorArg::Thread)]
    color_by: ColorArg,
    /// Only these bins (numbers from `memlens alloc bins`, comma-separated); the address
    /// axis then spans just them.
    #[arg(long, value_delimiter = ',')]
    bin: Vec<u32>,
    /// Only blocks whose requested size is in MIN..MAX bytes (either end may be empty).
    #[arg(long, value_name = "MIN..MAX")]
    size: Option<String>,
    /// The time window A..B (`1.5s`, `200ms`, `25%`; either end may be empty).
    #[arg(long, value_name = "A..B")]
    time: Option<String>,
    /// The address window A..B (hex or decimal addresses of the recorded run).
    #[arg(long, value_name = "A..B")]
    addr: Option<String>,
    /// Add the stacked occupancy bars of the shown bins under the map (the paper's Figure 6).
    #[arg(long)]
    bars: bool,
    #[command(flatten)]
    pool: PoolArgs,
}

/// Arguments of `memlens alloc bins`.
#[derive(clap::Args)]
pub struct BinsArgs {
    /// The trace file(s).
    #[arg(required = true)]
    files: Vec<PathBuf>,
    /// Print JSON.
    #[arg(long)]
    json: bool,
    #[command(flatten)]
    pool: PoolArgs,
}

/// Arguments of `memlens alloc replay`.
#[derive(clap::Args)]
pub struct ReplayArgs {
    /// The trace file(s).
    #[arg(required = true)]
    files: Vec<PathBuf>,
    /// Print JSON.
    #[arg(long)]
    json: bool,
    /// How many overflowing requests to list.
    #[arg(long, default_value_t = 10)]
    top: usize,
    #[command(flatten)]
    pool: PoolArgs,
}

/// Arguments of `memlens alloc metrics`.
#[derive(clap::Args)]
pub struct MetricsArgs {
    /// The trace file(s).
    #[arg(required = true)]
    files: Vec<PathBuf>,
    /// The bin (a number from `memlens alloc bins`); all bins together by default.
    #[arg(long)]
    bin: Option<u32>,
    /// Number of samples over the window.
    #[arg(long, default_value_t = 20)]
    samples: usize,
    /// The time window A..B.
    #[arg(long, value_name = "A..B")]
    time: Option<String>,
    /// Print JSON.
    #[arg(long)]
    json: bool,
    #[command(flatten)]
    pool: PoolArgs,
}

/// An engine error as a usage error (its message already names the value at fault).
fn usage(e: AllocError) -> anyhow::Error {
    UsageError(e.to_string()).into()
}

impl PoolArgs {
    /// The pool configuration, if one was asked for.
    fn config(&self) -> Result<Option<PoolConfig>> {
        let mut config = match (&self.pool, &self.config) {
            (Some(spec), _) => PoolConfig::new(
                PoolConfig::parse_bins(spec)
                    .map_err(|e| UsageError(format!("`--pool {spec}`: {e}")))?,
            ),
            (None, Some(path)) => read_pool_toml(path)?,
            (None, None) => {
                if self.overflow.is_some() || self.heap_size.is_some() {
                    return Err(UsageError(
                        "`--overflow` and `--heap-size` need a pool: give `--pool SIZE:COUNT,…` or `--config FILE`"
                            .to_string(),
                    )
                    .into());
                }
                return Ok(None);
            }
        };
        if let Some(o) = self.overflow {
            config.overflow = match o {
                OverflowArg::FirstFit => OverflowPolicy::FirstFit,
                OverflowArg::BestFit => OverflowPolicy::BestFit,
            };
        }
        if let Some(h) = &self.heap_size {
            config.heap_size = Some(parse_bytes(h).ok_or_else(|| {
                UsageError(format!(
                    "`--heap-size {h}` is not a size: write bytes, `64K` or `8M`"
                ))
            })?);
        }
        config.validate().map_err(usage)?;
        Ok(Some(config))
    }
}

/// Reads a pool configuration file:
///
/// ```toml
/// overflow = "best-fit"      # or "first-fit" (default)
/// heap_size = "1M"           # optional: unbounded by default
/// heap_align = 16            # optional
/// [[bin]]
/// size = 16
/// count = 1024
/// [[bin]]
/// size = "1K"
/// count = 64
/// ```
pub fn read_pool_toml(path: &Path) -> Result<PoolConfig> {
    let text = std::fs::read_to_string(path)
        .with_context(|| format!("cannot read the pool configuration {}", path.display()))?;
    parse_pool_toml(&text).map_err(|m| UsageError(format!("{}: {m}", path.display())).into())
}

fn toml_bytes(v: &toml::Value) -> Option<u64> {
    match v {
        toml::Value::Integer(i) => u64::try_from(*i).ok(),
        toml::Value::String(s) => parse_bytes(s),
        _ => None,
    }
}

/// Parses the TOML text of a pool configuration; errors are one sentence.
pub fn parse_pool_toml(text: &str) -> std::result::Result<PoolConfig, String> {
    let table: toml::Table = text
        .parse()
        .map_err(|e: toml::de::Error| format!("not valid TOML: {}", e.message()))?;
    for key in table.keys() {
        if !["overflow", "heap_size", "heap_align", "bin"].contains(&key.as_str()) {
            return Err(format!(
                "unknown key `{key}`: the keys are overflow, heap_size, heap_align and [[bin]] tables"
            ));
        }
    }
    let bins = table
        .get("bin")
        .and_then(|b| b.as_array())
        .ok_or("no `[[bin]]` tables: give each bin's `size` and `count`")?;
    let mut out = Vec::new();
    for (i, b) in bins.iter().enumerate() {
        let get = |k: &str| b.get(k).and_then(toml_bytes);
        let (Some(size), Some(count)) = (get("size"), get("count")) else {
            return Err(format!(
                "bin {} needs a `size` (bytes, or \"1K\") and a `count`",
                i + 1
            ));
        };
        out.push(memlens_alloc::PoolBin {
            block_size: size,
            count,
        });
    }
    let mut config = PoolConfig::new(out);
    if let Some(o) = table.get("overflow") {
        config.overflow = match o.as_str() {
            Some("first-fit") => OverflowPolicy::FirstFit,
            Some("best-fit") => OverflowPolicy::BestFit,
            _ => return Err("`overflow` must be \"first-fit\" or \"best-fit\"".to_string()),
        };
    }
    if let Some(h) = table.get("heap_size") {
        config.heap_size = Some(toml_bytes(h).ok_or("`heap_size` must be a size in bytes")?);
    }
    if let Some(a) = table.get("heap_align") {
        config.heap_align = toml_bytes(a).ok_or("`heap_align` must be a number of bytes")?;
    }
    config.validate().map_err(|e| e.to_string())?;
    Ok(config)
}

/// The traces' model, replayed through the pool when one was given.
fn model_for(
    files: &[PathBuf],
    pool: &PoolArgs,
) -> Result<(AllocTraces, Option<(AllocModel, ReplayReport)>)> {
    let config = pool.config()?;
    let traces = load_traces(files)?;
    let replayed = match config {
        Some(c) => Some(replay(&traces.model, &c).map_err(usage)?),
        None => None,
    };
    Ok((traces, replayed))
}

/// The run as typed times see it: from time 0 (the first process's start) to the end.
fn run_window(model: &AllocModel) -> TimeWindow {
    TimeWindow {
        start_ns: 0,
        end_ns: model.run().end_ns.max(1),
    }
}

/// Parses `A..B` with `part` for each end (an empty end is `None`).
fn split_range<'a>(arg: &str, text: &'a str) -> Result<(Option<&'a str>, Option<&'a str>)> {
    let (a, b) = text.split_once("..").ok_or_else(|| {
        UsageError(format!(
            "`{arg} {text}` is not a range: write A..B (either end may be empty)"
        ))
    })?;
    let opt = |s: &'a str| (!s.trim().is_empty()).then_some(s.trim());
    Ok((opt(a), opt(b)))
}

/// The time window of `--time`, or the whole run.
fn time_window(text: Option<&str>, model: &AllocModel) -> Result<TimeRange> {
    let run = run_window(model);
    let whole = TimeRange {
        start_ns: model.run().start_ns.min(run.end_ns - 1),
        end_ns: run.end_ns,
    };
    let Some(text) = text else { return Ok(whole) };
    let (a, b) = split_range("--time", text)?;
    let start_ns = a.map_or(Ok(whole.start_ns), |a| parse_time("--time", a, run))?;
    let end_ns = b.map_or(Ok(whole.end_ns), |b| parse_time("--time", b, run))?;
    if end_ns <= start_ns {
        return Err(UsageError(format!(
            "`--time {text}` is an empty window: its end must be after its start"
        ))
        .into());
    }
    Ok(TimeRange { start_ns, end_ns })
}

fn parse_addr(arg: &str, text: &str) -> Result<u64> {
    let t = text.trim();
    let v = match t.strip_prefix("0x").or_else(|| t.strip_prefix("0X")) {
        Some(hex) => u64::from_str_radix(&hex.replace('_', ""), 16).ok(),
        None => t.replace('_', "").parse().ok(),
    };
    v.ok_or_else(|| {
        UsageError(format!(
            "`{arg}`: `{text}` is not an address: write hex (0x55d0…) or decimal"
        ))
        .into()
    })
}

fn write_png(path: &Path, img: &RgbaImage) -> Result<()> {
    let file = File::create(path).with_context(|| format!("cannot create {}", path.display()))?;
    let mut w = BufWriter::new(file);
    encode_png(&mut w, img).with_context(|| format!("cannot write {}", path.display()))?;
    w.flush()
        .with_context(|| format!("cannot write {}", path.display()))?;
    Ok(())
}

/// Encodes `img` as an 8-bit RGBA PNG (deterministic: fixed compression settings).
pub fn encode_png(w: impl Write, img: &RgbaImage) -> Result<()> {
    let mut enc = png::Encoder::new(w, img.width, img.height);
    enc.set_color(png::ColorType::Rgba);
    enc.set_depth(png::BitDepth::Eight);
    enc.set_compression(png::Compression::Fast);
    let mut writer = enc.write_header()?;
    writer.write_image_data(&img.pixels)?;
    writer.finish()?;
    Ok(())
}

fn color_by(c: ColorArg) -> ColorBy {
    match c {
        ColorArg::Thread => ColorBy::Thread,
        ColorArg::Site => ColorBy::Site,
        ColorArg::Process => ColorBy::Process,
        ColorArg::Size => ColorBy::Size,
        ColorArg::Waste => ColorBy::Waste,
        ColorArg::Age => ColorBy::Age,
        ColorArg::Latency => ColorBy::Latency,
    }
}

fn check_bins(model: &AllocModel, bins: &[u32]) -> Result<Vec<BinId>> {
    bins.iter()
        .map(|&b| {
            if model.bin(BinId(b)).is_some() {
                Ok(BinId(b))
            } else {
                Err(UsageError(format!(
                    "`--bin {b}`: there is no bin {b}; this model has bins 0 to {} (see `memlens alloc bins`)",
                    model.bins().len().saturating_sub(1)
                ))
                .into())
            }
        })
        .collect()
}

/// `memlens render …`.
pub fn run(command: RenderCommand) -> Result<i32> {
    match command {
        RenderCommand::Alloc(a) => render_alloc(a),
    }
}

fn render_alloc(a: RenderAllocArgs) -> Result<i32> {
    // Argument checks that need no trace come first.
    if !(a.alpha.is_finite() && a.alpha > 0.0) {
        return Err(usage(AllocError::BadAlpha(a.alpha)));
    }
    let size = match &a.size {
        None => SizeFilter::ALL,
        Some(text) => {
            let (lo, hi) = split_range("--size", text)?;
            let bytes = |s: Option<&str>, d: u64| -> Result<u64> {
                s.map_or(Ok(d), |s| {
                    parse_bytes(s).ok_or_else(|| {
                        UsageError(format!("`--size {text}`: `{s}` is not a size in bytes")).into()
                    })
                })
            };
            let f = SizeFilter {
                min: bytes(lo, 0)?,
                max: bytes(hi, u64::MAX)?,
            };
            if f.max < f.min {
                return Err(UsageError(format!("`--size {text}` is an empty range")).into());
            }
            f
        }
    };
    let (traces, replayed) = model_for(&a.files, &a.pool)?;
    let model = replayed.as_ref().map_or(&traces.model, |r| &r.0);
    let bins = check_bins(model, &a.bin)?;
    let time = time_window(a.time.as_deref(), model)?;
    let mut addr = (0, model.axis().len().max(1));
    if !bins.is_empty() {
        let lo = bins
            .iter()
            .map(|b| model.bins()[b.index()].axis_range().0)
            .min();
        let hi = bins
            .iter()
            .map(|b| model.bins()[b.index()].axis_range().1)
            .max();
        addr = (lo.unwrap_or(0), hi.unwrap_or(1));
    }
    if let Some(text) = &a.addr {
        let (lo, hi) = split_range("--addr", text)?;
        let lo = lo.map_or(Ok(0), |s| parse_addr("--addr", s))?;
        let hi = hi.map_or(Ok(u64::MAX), |s| parse_addr("--addr", s))?;
        if hi <= lo {
            return Err(UsageError(format!(
                "`--addr {text}` is an empty window: its end must be above its start"
            ))
            .into());
        }
        let (ya, yb) = model.axis().raw_range_to_axis(lo, hi).ok_or_else(|| {
            UsageError(format!("`--addr {text}`: no bin of this trace holds those addresses (see `memlens alloc bins`)"))
        })?;
        addr = (addr.0.max(ya), addr.1.min(yb));
        if addr.1 <= addr.0 {
            return Err(
                UsageError(format!("`--addr {text}` does not overlap the chosen bins")).into(),
            );
        }
    }
    let view = View {
        time,
        addr,
        width: a.width,
        height: a.height,
    };
    let cushion = match a.cushion {
        CushionArg::Parabolic => CushionProfile::Parabolic,
        CushionArg::Plateau => CushionProfile::Plateau,
        CushionArg::None => CushionProfile::None,
    };
    let options = RenderOptions {
        alpha: a.alpha,
        cushion,
        color_by: color_by(a.color_by),
        bins: bins.clone(),
        size,
        ..RenderOptions::default()
    };
    let started = std::time::Instant::now();
    let large = model.blocks().len() >= 1_000_000;
    if large {
        eprintln!(
            "memlens: drawing {} blocks at {}×{}…",
            model.blocks().len(),
            a.width,
            a.height
        );
    }
    let mut img = render(model, &view, &options).map_err(usage)?;
    if a.bars {
        let shown: Vec<BinId> = if bins.is_empty() {
            model.bins().iter().map(|b| b.id).rev().collect()
        } else {
            bins.iter().rev().copied().collect()
        };
        let bar_options = BarOptions {
            profile: if cushion == CushionProfile::None {
                CushionProfile::Plateau
            } else {
                cushion
            },
            alpha: a.alpha,
            ..BarOptions::default()
        };
        let bars = render_stacked_bars(model, &shown, time, a.width, 16, 2, &bar_options)
            .map_err(usage)?;
        let mut both = RgbaImage::new(a.width, img.height + 4 + bars.height);
        both.pixels.fill(255);
        both.paste_rows(&img, 0);
        both.paste_rows(&bars, img.height + 4);
        img = both;
    }
    write_png(&a.output, &img)?;
    if large {
        eprintln!("memlens: drew in {:.2} s", started.elapsed().as_secs_f64());
    }
    eprintln!(
        "memlens: wrote {} ({}×{}, {} blocks in {} bins)",
        a.output.display(),
        img.width,
        img.height,
        model.blocks().len(),
        model.bins().len()
    );
    Ok(traces.finish())
}

/// `memlens alloc …`.
pub fn run_alloc(command: AllocCommand) -> Result<i32> {
    match command {
        AllocCommand::Bins(a) => bins(a),
        AllocCommand::Replay(a) => replay_cmd(a),
        AllocCommand::Metrics(a) => metrics(a),
    }
}

fn bins(a: BinsArgs) -> Result<i32> {
    let (traces, replayed) = model_for(&a.files, &a.pool)?;
    let model = replayed.as_ref().map_or(&traces.model, |r| &r.0);
    if a.json {
        let bins: Vec<_> = model
            .bins()
            .iter()
            .map(|b| {
                json!({
                    "bin": b.id.0,
                    "kind": b.kind.name(),
                    "name": b.name,
                    "pid": b.process.map(|p| model.processes()[p.index()].pid),
                    "start": b.start,
                    "end": b.end,
                    "capacity_bytes": b.capacity(),
                    "blocks": b.blocks,
                    "axis_start": b.axis_start,
                })
            })
            .collect();
        println!(
            "{}",
            serde_json::to_string_pretty(&json!({ "bins": bins }))?
        );
    } else {
        println!(
            "{:>4}  {:<10} {:>18} {:>18} {:>12} {:>10}  name",
            "bin", "kind", "start", "end", "bytes", "blocks"
        );
        for b in model.bins() {
            println!(
                "{:>4}  {:<10} {:>#18x} {:>#18x} {:>12} {:>10}  {}",
                b.id.0,
                b.kind.name(),
                b.start,
                b.end,
                b.capacity(),
                b.blocks,
                b.name
            );
        }
    }
    Ok(traces.finish())
}

fn replay_cmd(a: ReplayArgs) -> Result<i32> {
    if a.pool.pool.is_none() && a.pool.config.is_none() {
        return Err(UsageError(
            "`memlens alloc replay` needs a pool: give `--pool SIZE:COUNT,…` or `--config FILE`"
                .to_string(),
        )
        .into());
    }
    let (traces, replayed) = model_for(&a.files, &a.pool)?;
    let Some((_, report)) = replayed else {
        unreachable!("a pool was given")
    };
    let model = &traces.model;
    if a.json {
        let bins: Vec<_> = report
            .bins
            .iter()
            .map(|b| {
                json!({
                    "block_size": b.block_size,
                    "slots": b.slots,
                    "served": b.served,
                    "overflowed": b.overflowed,
                    "high_water": b.high_water,
                    "waste_bytes": b.waste_bytes,
                    "requested_bytes": b.requested_bytes,
                })
            })
            .collect();
        let overflows: Vec<_> = report
            .overflows
            .iter()
            .take(a.top)
            .map(|o| {
                let b = model.block(o.block);
                json!({
                    "t_ns": o.t_ns,
                    "size": o.size,
                    "bin": o.bin,
                    "failed": o.failed,
                    "site": model.site_label(b.site),
                    "tid": model.threads()[b.thread.index()].tid,
                })
            })
            .collect();
        let out = json!({
            "requests": report.requests,
            "bins": bins,
            "heap_served": report.heap_served,
            "too_large": report.too_large,
            "failed": report.failed,
            "heap_high_water_bytes": report.heap_high_water_bytes,
            "heap_waste_bytes": report.heap_waste_bytes,
            "overflow_count": report.overflows.len(),
            "overflows": overflows,
        });
        println!("{}", serde_json::to_string_pretty(&out)?);
        return Ok(traces.finish());
    }
    println!("{} requests replayed", report.requests);
    println!(
        "{:>4} {:>10} {:>8} {:>10} {:>10} {:>10} {:>12} {:>7}",
        "bin", "block", "slots", "served", "overflow", "high-water", "waste", "waste%"
    );
    for (i, b) in report.bins.iter().enumerate() {
        let pct = if b.served > 0 {
            100.0 * b.waste_bytes as f64 / (b.served * b.block_size) as f64
        } else {
            0.0
        };
        println!(
            "{:>4} {:>10} {:>8} {:>10} {:>10} {:>10} {:>12} {:>6.1}%",
            i + 1,
            b.block_size,
            b.slots,
            b.served,
            b.overflowed,
            b.high_water,
            b.waste_bytes,
            pct
        );
    }
    println!(
        "heap: {} requests ({} larger than every bin), high-water {} bytes, waste {} bytes, {} failed",
        report.heap_served,
        report.too_large,
        report.heap_high_water_bytes,
        report.heap_waste_bytes,
        report.failed
    );
    if !report.overflows.is_empty() {
        println!("first overflowing requests:");
        for o in report.overflows.iter().take(a.top) {
            let b = model.block(o.block);
            let why = match o.bin {
                Some(k) => format!("bin {} full", k + 1),
                None => "larger than every bin".to_string(),
            };
            println!(
                "  {:>12} ns  {:>10} B  {}{}  {}",
                o.t_ns,
                o.size,
                why,
                if o.failed { ", heap full: failed" } else { "" },
                model.site_label(b.site)
            );
        }
    }
    Ok(traces.finish())
}

fn series_json(s: &MetricSeries) -> serde_json::Value {
    let points: Vec<_> = s
        .points
        .iter()
        .map(|p| {
            json!({
                "t_ns": p.t_ns,
                "live_blocks": p.live_blocks,
                "requested_bytes": p.requested_bytes,
                "reserved_bytes": p.reserved_bytes,
                "capacity_bytes": p.capacity_bytes,
                "occupancy": p.occupancy,
                "waste_bytes": p.waste_bytes,
                "waste_ratio": p.waste_ratio,
                "free_bytes": p.free_bytes,
                "largest_free_bytes": p.largest_free_bytes,
                "fragmentation": p.fragmentation,
                "free_runs": p.free_runs,
                "free_run_histogram": p.free_run_histogram,
                "events": p.events,
                "event_rate_per_s": p.event_rate_per_s,
                "alloc_latency_mean_ns": p.alloc_latency_mean_ns,
                "free_latency_mean_ns": p.free_latency_mean_ns,
            })
        })
        .collect();
    json!({
        "bin": s.bin.map(|b| b.0),
        "start_ns": s.window.start_ns,
        "end_ns": s.window.end_ns,
        "interval_ns": s.interval_ns,
        "points": points,
    })
}

fn metrics(a: MetricsArgs) -> Result<i32> {
    if a.samples == 0 {
        return Err(UsageError("`--samples 0`: give at least 1 sample".to_string()).into());
    }
    let (traces, replayed) = model_for(&a.files, &a.pool)?;
    let model = replayed.as_ref().map_or(&traces.model, |r| &r.0);
    let bin = match a.bin {
        Some(b) => Some(check_bins(model, &[b])?[0]),
        None => None,
    };
    let window = time_window(a.time.as_deref(), model)?;
    let s = metric_series(model, bin, a.samples, Some(window)).map_err(usage)?;
    if a.json {
        println!("{}", serde_json::to_string_pretty(&series_json(&s))?);
        return Ok(traces.finish());
    }
    let name = bin.map_or("all bins".to_string(), |b| {
        model.bins()[b.index()].name.clone()
    });
    println!(
        "{name}: {} samples every {}",
        s.points.len(),
        memlens_heap::format_duration(s.interval_ns)
    );
    let lat = model.has_latency();
    print!(
        "{:>12} {:>8} {:>12} {:>10} {:>8} {:>8} {:>6} {:>12}",
        "time", "blocks", "reserved", "occupancy", "waste%", "frag", "runs", "events/s"
    );
    println!("{}", if lat { "  alloc-ns   free-ns" } else { "" });
    for p in &s.points {
        print!(
            "{:>12} {:>8} {:>12} {:>9.1}% {:>7.1}% {:>8.3} {:>6} {:>12.0}",
            memlens_heap::format_duration(p.t_ns),
            p.live_blocks,
            p.reserved_bytes,
            100.0 * p.occupancy,
            100.0 * p.waste_ratio,
            p.fragmentation,
            p.free_runs,
            p.event_rate_per_s
        );
        if lat {
            let f = |v: Option<f64>| v.map_or("-".to_string(), |v| format!("{v:.0}"));
            print!(
                "  {:>8} {:>9}",
                f(p.alloc_latency_mean_ns),
                f(p.free_latency_mean_ns)
            );
        }
        println!();
    }
    Ok(traces.finish())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pool_files_parse_and_bad_ones_say_why() {
        let c = parse_pool_toml(
            "overflow = \"best-fit\"\nheap_size = \"1K\"\n[[bin]]\nsize = 16\ncount = 4\n[[bin]]\nsize = \"1K\"\ncount = 2\n",
        )
        .unwrap();
        assert_eq!(c.overflow, OverflowPolicy::BestFit);
        assert_eq!(c.heap_size, Some(1024));
        assert_eq!(c.bins[1].block_size, 1024);
        let e = parse_pool_toml("[[bin]]\nsize = 32\ncount = 1\n[[bin]]\nsize = 16\ncount = 1\n")
            .unwrap_err();
        assert!(e.contains("must strictly increase"), "{e}");
        assert!(
            parse_pool_toml("bins = 3")
                .unwrap_err()
                .contains("unknown key")
        );
        assert!(
            parse_pool_toml("[[bin]]\nsize = 16\n")
                .unwrap_err()
                .contains("count")
        );
        assert!(parse_pool_toml("not toml [").unwrap_err().contains("TOML"));
    }

    #[test]
    fn golden_png_of_a_fixed_model() {
        use memlens_alloc::*;
        let mut b = AllocModelBuilder::new();
        let p = b.add_process(ProcessInfo {
            pid: 1,
            ppid: 0,
            name: "t".into(),
        });
        let th = [b.thread(p, 1, ""), b.thread(p, 2, "")];
        for i in 0..64u64 {
            b.alloc(AllocEvent {
                t: i * 10,
                thread: th[(i % 2) as usize],
                addr: 0x5000_0000 + (i % 16) * 64,
                size: 8 + i % 40,
                site: SiteId::UNKNOWN,
                latency_ns: None,
            });
            b.free(FreeEvent {
                t: i * 10 + 9,
                thread: th[0],
                addr: 0x5000_0000 + (i % 16) * 64,
                latency_ns: None,
            });
        }
        let m = b.finish(700);
        let img = render(&m, &View::whole(&m, 64, 32), &RenderOptions::default()).unwrap();
        let mut bytes = Vec::new();
        encode_png(&mut bytes, &img).unwrap();
        let sum = bytes.iter().fold(0xcbf2_9ce4_8422_2325u64, |h, &b| {
            (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
        });
        assert_eq!(&bytes[..8], b"\x89PNG\r\n\x1a\n");
        assert_eq!(sum, GOLDEN_PNG, "golden PNG checksum changed: {sum:#x}");
    }

    const GOLDEN_PNG: u64 = 0x9d30_9321_4529_ceaa;
}
