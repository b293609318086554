//! `memlens summary FILE [--json]`: totals, peak and when, leaked at exit,
//! temporary allocations, the top allocation sites by bytes and by count,
//! and allocator latency percentiles per function when the trace has them
//! (`memlens record --latency`).

use std::path::PathBuf;

use anyhow::Result;
use memlens_heap::latency::{LatencyRow, LatencyTable};
use memlens_heap::summary::{StackFigures, Summary, SummaryBuilder};
use memlens_trace::{AllocFn, Event};
use serde::Serialize;

use crate::load;
use crate::sites::SiteNamer;

/// Arguments of `memlens summary`.
#[derive(clap::Args)]
pub struct SummaryArgs {
    /// The trace to summarise.
    file: PathBuf,
    /// Print JSON instead of text.
    #[arg(long)]
    json: bool,
    /// How many sites to list.
    #[arg(long, default_value_t = 10)]
    top: usize,
}

/// One row of a top-sites list (the JSON shape of the interface contract,
/// plus the call path and the other figures).
#[derive(Serialize)]
struct SiteRow {
    site: String,
    stack: Vec<String>,
    bytes: u64,
    allocations: u64,
    peak_bytes: u64,
    leaked_bytes: u64,
    leaked_allocations: u64,
    temporary: u64,
}

#[derive(Serialize)]
struct SummaryJson {
    file: String,
    program: String,
    pid: u32,
    allocations: u64,
    frees: u64,
    reallocations: u64,
    allocated_bytes: u64,
    peak_bytes: u64,
    peak_time_ns: u64,
    peak_allocations: u64,
    duration_ns: u64,
    leaked_bytes: u64,
    leaked_allocations: u64,
    temporary_allocations: u64,
    unknown_frees: u64,
    threads: usize,
    complete: bool,
    warnings: Vec<String>,
    damage: Vec<String>,
    top_sites: Vec<SiteRow>,
    top_sites_by_count: Vec<SiteRow>,
    top_peak_sites: Vec<SiteRow>,
    top_leak_sites: Vec<SiteRow>,
    /// Allocator latency per function (only for traces recorded with `--latency`).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    latency: Vec<LatencyJson>,
}

/// One function's allocator latency figures, in ns.
#[derive(Serialize)]
struct LatencyJson {
    function: String,
    calls: u64,
    p50_ns: u32,
    p90_ns: u32,
    p99_ns: u32,
    max_ns: u32,
    mean_ns: f64,
}

impl From<&LatencyRow> for LatencyJson {
    fn from(r: &LatencyRow) -> Self {
        LatencyJson {
            function: r.function.clone(),
            calls: r.calls,
            p50_ns: r.p50_ns,
            p90_ns: r.p90_ns,
            p99_ns: r.p99_ns,
            max_ns: r.max_ns,
            mean_ns: (r.mean_ns * 10.0).round() / 10.0,
        }
    }
}

/// Merges stacks that render to the same call path and ranks them.
fn rank(
    namer: &mut SiteNamer,
    md: &memlens_trace::Metadata,
    stacks: &[StackFigures],
    top: usize,
    key: impl Fn(&StackFigures) -> u64,
) -> Vec<SiteRow> {
    // Rank candidate stacks first so only a few are symbolized.
    let mut order: Vec<usize> = (0..stacks.len()).filter(|&i| key(&stacks[i]) > 0).collect();
    order.sort_by_key(|&i| std::cmp::Reverse(key(&stacks[i])));
    let mut rows: Vec<SiteRow> = Vec::new();
    for &i in order.iter().take(top * 8) {
        let path = namer.path(md, i as u32, 4);
        let site = if path.is_empty() {
            "(no stack)".to_string()
        } else {
            path.join(" ← ")
        };
        let f = &stacks[i];
        match rows.iter_mut().find(|r| r.site == site) {
            Some(r) => {
                r.bytes += f.bytes;
                r.allocations += f.allocations;
                r.peak_bytes += f.peak_bytes;
                r.leaked_bytes += f.leaked_bytes;
                r.leaked_allocations += f.leaked_allocations;
                r.temporary += f.temporary;
            }
            None => rows.push(SiteRow {
                site,
                stack: path,
                bytes: f.bytes,
                allocations: f.allocations,
                peak_bytes: f.peak_bytes,
                leaked_bytes: f.leaked_bytes,
                leaked_allocations: f.leaked_allocations,
                temporary: f.temporary,
            }),
        }
    }
    rows.sort_by_key(|r| {
        std::cmp::Reverse(key(&StackFigures {
            allocations: r.allocations,
            bytes: r.bytes,
            temporary: r.temporary,
            peak_bytes: r.peak_bytes,
            leaked_bytes: r.leaked_bytes,
            leaked_allocations: r.leaked_allocations,
        }))
    });
    rows.truncate(top);
    rows
}

/// Runs the streaming summary over a loaded trace.
pub fn summarize(loaded: &load::Loaded) -> (Summary, Vec<memlens_trace::Damage>) {
    let (s, _, damage) = summarize_with_latency(loaded);
    (s, damage)
}

/// [`summarize`], also collecting allocator latencies per function (empty
/// unless the trace was recorded with `--latency`).
pub fn summarize_with_latency(
    loaded: &load::Loaded,
) -> (Summary, LatencyTable, Vec<memlens_trace::Damage>) {
    let bar = load::progress(loaded);
    let mut b = SummaryBuilder::new();
    let mut lat = LatencyTable::new();
    let alloc_ops = AllocFn::ALL.map(|f| lat.op(f.name()));
    let realloc_op = lat.op("realloc");
    let free_op = lat.op("free");
    let damage = load::for_each_event_with_latency(loaded, &bar, |e, latency| match *e {
        Event::Alloc {
            t,
            tid,
            addr,
            size,
            stack,
            func,
        } => {
            b.alloc(t, tid, addr, size, stack);
            if let Some(ns) = latency {
                lat.record(alloc_ops[func as usize], ns);
            }
        }
        Event::Free { t, tid, addr } => {
            b.free(t, tid, addr);
            if let Some(ns) = latency {
                lat.record(free_op, ns);
            }
        }
        Event::Realloc {
            t,
            tid,
            old_addr,
            new_addr,
            size,
            stack,
        } => {
            b.realloc(t, tid, old_addr, new_addr, size, stack);
            if let Some(ns) = latency {
                lat.record(realloc_op, ns);
            }
        }
    });
    b.end(loaded.metadata.last_time);
    (b.finish(), lat, damage)
}

/// Latency in ns, compact: `850 ns`, `12.3 µs`, `4.56 ms`.
fn latency(ns: u32) -> String {
    let v = f64::from(ns);
    if ns < 1_000 {
        format!("{ns} ns")
    } else if ns < 1_000_000 {
        format!("{:.1} µs", v / 1e3)
    } else {
        format!("{:.2} ms", v / 1e6)
    }
}

/// Human-readable bytes (binary units).
pub fn bytes(n: u64) -> String {
    const UNITS: [&str; 5] = ["B", "KiB", "MiB", "GiB", "TiB"];
    let mut v = n as f64;
    let mut u = 0;
    while v >= 1024.0 && u < UNITS.len() - 1 {
        v /= 1024.0;
        u += 1;
    }
    if u == 0 {
        format!("{n} B")
    } else {
        format!("{v:.2} {}", UNITS[u])
    }
}

/// Human-readable duration.
pub fn duration(ns: u64) -> String {
    if ns >= 1_000_000_000 {
        format!("{:.3} s", ns as f64 / 1e9)
    } else if ns >= 1_000_000 {
        format!("{:.3} ms", ns as f64 / 1e6)
    } else {
        format!("{:.1} µs", ns as f64 / 1e3)
    }
}

/// Runs `memlens summary`.
pub fn run(args: SummaryArgs) -> Result<i32> {
    print(&args.file, args.json, args.top)
}

/// Prints the summary of `file` (text or JSON) with `top` sites per list;
/// returns 1 when the trace is damaged, 0 otherwise.
pub fn print(file: &std::path::Path, json: bool, top: usize) -> Result<i32> {
    let args = SummaryArgs {
        file: file.to_path_buf(),
        json,
        top,
    };
    let mut loaded = load::open(&args.file)?;
    let (s, latency_table, more_damage) = summarize_with_latency(&loaded);
    let latency_rows = latency_table.rows();
    loaded.damage.extend(more_damage);
    let md = &loaded.metadata;
    let mut namer = SiteNamer::new(md);
    let by_bytes = rank(&mut namer, md, &s.stacks, top, |f| f.bytes);
    let by_count = rank(&mut namer, md, &s.stacks, top, |f| f.allocations);
    let by_peak = rank(&mut namer, md, &s.stacks, top, |f| f.peak_bytes);
    let by_leak = rank(&mut namer, md, &s.stacks, top, |f| f.leaked_bytes);
    let process = md.process.clone();
    let warnings: Vec<String> = md.warnings.iter().map(|(_, w)| w.clone()).collect();
    if args.json {
        let j = SummaryJson {
            file: args.file.display().to_string(),
            program: process.as_ref().map(|p| p.exe.clone()).unwrap_or_default(),
            pid: process.as_ref().map(|p| p.pid).unwrap_or(0),
            allocations: s.allocations,
            frees: s.frees,
            reallocations: s.reallocations,
            allocated_bytes: s.allocated_bytes,
            peak_bytes: s.peak_bytes,
            peak_time_ns: s.peak_time_ns,
            peak_allocations: s.peak_allocations,
            duration_ns: s.duration_ns,
            leaked_bytes: s.leaked_bytes,
            leaked_allocations: s.leaked_allocations,
            temporary_allocations: s.temporary,
            unknown_frees: s.unknown_frees,
            threads: md.threads.len(),
            complete: md.end.is_some() && loaded.damage.is_empty(),
            warnings,
            damage: loaded
                .damage
                .iter()
                .map(|d| format!("byte offset {}: {}", d.offset, d.reason))
                .collect(),
            top_sites: by_bytes,
            top_sites_by_count: by_count,
            top_peak_sites: by_peak,
            top_leak_sites: by_leak,
            latency: latency_rows.iter().map(LatencyJson::from).collect(),
        };
        println!("{}", serde_json::to_string_pretty(&j)?);
    } else {
        let prog = process
            .as_ref()
            .map(|p| format!("{} (pid {})", p.cmdline.join(" "), p.pid))
            .unwrap_or_else(|| "unknown program".into());
        println!("{}: {prog}", args.file.display());
        println!(
            "  ran {} in {} thread(s){}",
            duration(s.duration_ns),
            md.threads.len(),
            match &md.end {
                Some((_, how)) => format!(", ended by {how}"),
                None => ", no clean end recorded (killed or crashed)".into(),
            }
        );
        println!(
            "  {} allocations, {} reallocations, {} frees; {} requested in total",
            s.allocations,
            s.reallocations,
            s.frees,
            bytes(s.allocated_bytes)
        );
        println!(
            "  peak heap {} in {} blocks at {}",
            bytes(s.peak_bytes),
            s.peak_allocations,
            duration(s.peak_time_ns)
        );
        println!(
            "  leaked at exit {} in {} blocks; {} temporary allocations",
            bytes(s.leaked_bytes),
            s.leaked_allocations,
            s.temporary
        );
        for w in &warnings {
            println!("  warning: {w}");
        }
        if !latency_rows.is_empty() {
            println!("\nallocator latency (time inside the allocator, per call):");
            println!(
                "  {:<15} {:>11} {:>10} {:>10} {:>10} {:>10}",
                "function", "calls", "p50", "p90", "p99", "max"
            );
            for r in &latency_rows {
                println!(
                    "  {:<15} {:>11} {:>10} {:>10} {:>10} {:>10}",
                    r.function,
                    r.calls,
                    latency(r.p50_ns),
                    latency(r.p90_ns),
                    latency(r.p99_ns),
                    latency(r.max_ns)
                );
            }
        }
        type Figure = fn(&SiteRow) -> String;
        let sections: [(&str, &Vec<SiteRow>, Figure); 4] = [
            ("top sites by bytes allocated", &by_bytes, |r| {
                format!("{} in {} calls", bytes(r.bytes), r.allocations)
            }),
            ("top sites by number of allocations", &by_count, |r| {
                format!("{} calls, {}", r.allocations, bytes(r.bytes))
            }),
            ("top sites at the peak", &by_peak, |r| bytes(r.peak_bytes)),
            ("top sites leaked at exit", &by_leak, |r| {
                format!(
                    "{} in {} blocks",
                    bytes(r.leaked_bytes),
                    r.leaked_allocations
                )
            }),
        ];
        for (title, rows, fig) in sections {
            if rows.is_empty() {
                continue;
            }
            println!("\n{title}:");
            for r in rows.iter() {
                println!(
                    "  {:>22}  {}",
                    fig(r),
                    r.stack.first().cloned().unwrap_or_default()
                );
                for f in r.stack.iter().skip(1) {
                    println!("  {:>22}    ← {f}", "");
                }
            }
        }
    }
    load::report_damage(&args.file, &loaded.damage);
    Ok(if loaded.damage.is_empty() { 0 } else { 1 })
}
