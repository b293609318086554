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
use memlens_alloc::protocol::{BinsWire, MetricsWire, ReplayWire};
use memlens_alloc::{metric_series, render_bins, render_metrics, render_replay};

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
    let (traces, replayed) = model_for(&a.files, &a.pool, None)?;
    let model = replayed.as_ref().map_or(traces.alloc(), |r| &r.0);
    if a.json {
        println!("{}", serde_json::to_string_pretty(&BinsWire::from(model))?);
    } else {
        print!("{}", render_bins(model));
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
    let (traces, replayed) = model_for(&a.files, &a.pool, None)?;
    let Some((_, report)) = replayed else {
        unreachable!("a pool was given")
    };
    let model = traces.alloc();
    if a.json {
        let wire = ReplayWire::new(&report, model, a.top);
        println!("{}", serde_json::to_string_pretty(&wire)?);
        return Ok(traces.finish());
    }
    print!("{}", render_replay(&report, model, a.top));
    Ok(traces.finish())
}

fn metrics(a: MetricsArgs) -> Result<i32> {
    if a.samples == 0 {
        return Err(UsageError("`--samples 0`: give at least 1 sample".to_string()).into());
    }
    let (traces, replayed) = model_for(&a.files, &a.pool, a.time.as_deref())?;
    let model = replayed.as_ref().map_or(traces.alloc(), |r| &r.0);
    let bin = match a.bin {
        Some(b) => Some(check_bins(model, &[b])?[0]),
        None => None,
    };
    let window = time_window(a.time.as_deref(), &traces, model)?;
    let s = metric_series(model, bin, a.samples, Some(window)).map_err(usage)?;
    if a.json {
        println!("{}", serde_json::to_string_pretty(&MetricsWire::from(&s))?);
        return Ok(traces.finish());
    }
    let name = bin.map_or("all bins".to_string(), |b| {
        model.bins()[b.index()].name.clone()
    });
    print!("{}", render_metrics(&s, &name, model.has_latency()));
    Ok(traces.finish())
}
