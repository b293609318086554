//! `memlens render alloc`: the allocation map as a PNG on the command line, and the
//! time, address and bin arguments the allocation-map commands share. Glue only:
//! argument checks, trace loading ([`crate::alloc_model`]), the pool replay
//! ([`crate::alloc_pool`]) and PNG encoding; the model and the rasterizer live in
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
    AllocError, AllocModel, BarOptions, BinId, ColorBy, CushionProfile, RenderOptions, RgbaImage,
    SizeFilter, TimeRange, View, parse_bytes, render, render_stacked_bars,
};
use memlens_heap::TimeWindow;

use crate::UsageError;
use crate::alloc_pool::{PoolArgs, model_for, usage};
use crate::heap_args::parse_time;
use crate::read::Read;

/// `memlens render …`.
#[derive(clap::Subcommand)]
pub enum RenderCommand {
    /// Draw the allocation map (time → x, address → y) of one or more traces as a PNG.
    Alloc(RenderAllocArgs),
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

/// The ends typed in `--time A..B` (an empty end is `None`) on the allocation map's
/// timeline, from time 0 (the first process's start) to `run_end`: the traces' end,
/// also when the model holds only a window of them.
pub(crate) fn typed_ends(text: &str, run_end: u64) -> Result<(Option<u64>, Option<u64>)> {
    let run = TimeWindow {
        start_ns: 0,
        end_ns: run_end.max(1),
    };
    let (a, b) = split_range("--time", text)?;
    let start = a.map(|a| parse_time("--time", a, run)).transpose()?;
    let end = b.map(|b| parse_time("--time", b, run)).transpose()?;
    if let (Some(s), Some(e)) = (start, end)
        && e <= s
    {
        return Err(UsageError(format!(
            "`--time {text}` is an empty window: its end must be after its start"
        ))
        .into());
    }
    Ok((start, end))
}

/// Parses `A..B` (an empty end is `None`).
fn split_range<'a>(arg: &str, text: &'a str) -> Result<(Option<&'a str>, Option<&'a str>)> {
    memlens_vocab::split_range(text).map_err(|e| UsageError(e.for_argument(arg)).into())
}

/// The time window of `--time` over `traces`' allocation map `model`, or its whole run.
pub(crate) fn time_window(
    text: Option<&str>,
    traces: &Read,
    model: &AllocModel,
) -> Result<TimeRange> {
    let end = memlens_ingest::timeline_end(&traces.inputs)
        .max(model.run().end_ns)
        .max(1);
    let whole = TimeRange {
        start_ns: model.run().start_ns.min(end - 1),
        end_ns: end,
    };
    let Some(text) = text else { return Ok(whole) };
    let (start, end) = typed_ends(text, end)?;
    let window = TimeRange {
        start_ns: start.unwrap_or(whole.start_ns),
        end_ns: end.unwrap_or(whole.end_ns),
    };
    if window.end_ns <= window.start_ns {
        return Err(UsageError(format!(
            "`--time {text}` is an empty window: its end must be after its start"
        ))
        .into());
    }
    Ok(window)
}

fn parse_addr(arg: &str, text: &str) -> Result<u64> {
    memlens_vocab::parse_address(text).map_err(|e| UsageError(e.for_argument(arg)).into())
}

fn write_png(path: &Path, img: &RgbaImage) -> Result<()> {
    let file = File::create(path).with_context(|| format!("cannot create {}", path.display()))?;
    let mut w = BufWriter::new(file);
    w.write_all(&img.to_png())
        .and_then(|()| w.flush())
        .with_context(|| format!("cannot write {}", path.display()))?;
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

pub(crate) fn check_bins(model: &AllocModel, bins: &[u32]) -> Result<Vec<BinId>> {
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
    let (traces, replayed) = model_for(&a.files, &a.pool, a.time.as_deref())?;
    let model = replayed.as_ref().map_or(traces.alloc(), |r| &r.0);
    let bins = check_bins(model, &a.bin)?;
    let time = time_window(a.time.as_deref(), &traces, model)?;
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
