//! `memlens alloc bins|replay|metrics`: the allocation-map lens's numbers on the
//! command line — the bins of a run, the pool-allocator replay's report and the metrics
//! over time, as text or JSON. Glue only: the model, replay and metrics live in
//! `memlens-alloc`, their JSON shapes in its `protocol`; the pool options in
//! [`crate::alloc_pool`].
//!
//! Exit status: 0 on success, 2 for usage errors (an empty time window, bin sizes that
//! do not increase, an unknown bin), 1 for failures (an unreadable file, a damaged
//! trace). Each error is one sentence on stderr.

use std::path::PathBuf;

use anyhow::Result;
use memlens_alloc::metric_series;
use memlens_alloc::protocol::{BinsWire, MetricsWire, ReplayWire};

use crate::UsageError;
use crate::alloc_pool::{PoolArgs, model_for, usage};
use crate::render_cmd::{check_bins, time_window};

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
    let model = replayed.as_ref().map_or(traces.alloc(), |r| &r.0);
    if a.json {
        println!("{}", serde_json::to_string_pretty(&BinsWire::from(model))?);
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
    if !a.pool.is_given() {
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
    let model = traces.alloc();
    if a.json {
        let wire = ReplayWire::new(&report, model, a.top);
        println!("{}", serde_json::to_string_pretty(&wire)?);
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

fn metrics(a: MetricsArgs) -> Result<i32> {
    if a.samples == 0 {
        return Err(UsageError("`--samples 0`: give at least 1 sample".to_string()).into());
    }
    let (traces, replayed) = model_for(&a.files, &a.pool)?;
    let model = replayed.as_ref().map_or(traces.alloc(), |r| &r.0);
    let bin = match a.bin {
        Some(b) => Some(check_bins(model, &[b])?[0]),
        None => None,
    };
    let window = time_window(a.time.as_deref(), model)?;
    let s = metric_series(model, bin, a.samples, Some(window)).map_err(usage)?;
    if a.json {
        println!("{}", serde_json::to_string_pretty(&MetricsWire::from(&s))?);
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
