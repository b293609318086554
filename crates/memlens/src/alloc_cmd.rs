//! `memlens alloc bins|replay|metrics`: the allocation-map lens's numbers on the
//! command line — the bins of a run, the pool-allocator replay's report and the metrics
//! over time, as text or JSON. Glue only: the model, replay and metrics live in
//! `memlens-alloc`; the pool options in [`crate::alloc_pool`].
//!
//! Exit status: 0 on success, 2 for usage errors (an empty time window, bin sizes that
//! do not increase, an unknown bin), 1 for failures (an unreadable file, a damaged
//! trace). Each error is one sentence on stderr.

use std::path::PathBuf;

use anyhow::Result;
use memlens_alloc::{MetricSeries, metric_series};
use serde_json::json;

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
