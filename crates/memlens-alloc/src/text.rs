//! The allocation-map lens's numbers as text tables (`memlens alloc bins|replay|metrics`
//! without `--json`): the bins of a model, a pool replay's report and the metrics over
//! time. Their JSON shapes are in [`protocol`](crate::protocol).

use std::fmt::Write;

use memlens_vocab::format_duration;

use crate::metrics::MetricSeries;
use crate::model::AllocModel;
use crate::pool::ReplayReport;

/// One row per bin: number, kind, address range, capacity, blocks and name.
pub fn render_bins(model: &AllocModel) -> String {
    let mut out = format!(
        "{:>4}  {:<10} {:>18} {:>18} {:>12} {:>10}  name\n",
        "bin", "kind", "start", "end", "bytes", "blocks"
    );
    for b in model.bins() {
        let _ = writeln!(
            out,
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
    out
}

/// A pool replay's report: a row per pool bin, the heap's line, and the first `top`
/// overflowing requests with their sites in `model`.
pub fn render_replay(report: &ReplayReport, model: &AllocModel, top: usize) -> String {
    let mut out = format!("{} requests replayed\n", report.requests);
    let _ = writeln!(
        out,
        "{:>4} {:>10} {:>8} {:>10} {:>10} {:>10} {:>12} {:>7}",
        "bin", "block", "slots", "served", "overflow", "high-water", "waste", "waste%"
    );
    for (i, b) in report.bins.iter().enumerate() {
        let pct = if b.served > 0 {
            100.0 * b.waste_bytes as f64 / (b.served * b.block_size) as f64
        } else {
            0.0
        };
        let _ = writeln!(
            out,
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
    let _ = writeln!(
        out,
        "heap: {} requests ({} larger than every bin), high-water {} bytes, waste {} bytes, {} failed",
        report.heap_served,
        report.too_large,
        report.heap_high_water_bytes,
        report.heap_waste_bytes,
        report.failed
    );
    if !report.overflows.is_empty() {
        out.push_str("first overflowing requests:\n");
        for o in report.overflows.iter().take(top) {
            let b = model.block(o.block);
            let why = match o.bin {
                Some(k) => format!("bin {} full", k + 1),
                None => "larger than every bin".to_string(),
            };
            let failed = if o.failed { ", heap full: failed" } else { "" };
            let site = model.site_label(b.site);
            let _ = writeln!(
                out,
                "  {:>12} ns  {:>10} B  {why}{failed}  {site}",
                o.t_ns, o.size
            );
        }
    }
    out
}

/// The metrics of `name` (a bin, or all bins) over time: a row per sample, with the
/// allocator's mean latencies when `latency` (the trace has them).
pub fn render_metrics(s: &MetricSeries, name: &str, latency: bool) -> String {
    let mut out = format!(
        "{name}: {} samples every {}\n",
        s.points.len(),
        format_duration(s.interval_ns)
    );
    let _ = write!(
        out,
        "{:>12} {:>8} {:>12} {:>10} {:>8} {:>8} {:>6} {:>12}",
        "time", "blocks", "reserved", "occupancy", "waste%", "frag", "runs", "events/s"
    );
    out.push_str(if latency {
        "  alloc-ns   free-ns\n"
    } else {
        "\n"
    });
    for p in &s.points {
        let _ = write!(
            out,
            "{:>12} {:>8} {:>12} {:>9.1}% {:>7.1}% {:>8.3} {:>6} {:>12.0}",
            format_duration(p.t_ns),
            p.live_blocks,
            p.reserved_bytes,
            100.0 * p.occupancy,
            100.0 * p.waste_ratio,
            p.fragmentation,
            p.free_runs,
            p.event_rate_per_s
        );
        if latency {
            let f = |v: Option<f64>| v.map_or("-".to_string(), |v| format!("{v:.0}"));
            let (alloc, free) = (f(p.alloc_latency_mean_ns), f(p.free_latency_mean_ns));
            let _ = write!(out, "  {alloc:>8} {free:>9}");
        }
        out.push('\n');
    }
    out
}
