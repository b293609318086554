//! Per-bin metrics over time (the paper's quality metrics), sampled at the midpoints of
//! `samples` equal intervals of a time window:
//!
//! - **occupancy** = Σ reserved of live blocks / capacity. A pool bin's capacity is its
//!   slots × block size; the pool heap's its extent (its size, or for an unbounded heap
//!   the extent it used). A region of the real run grows, so its capacity at time t is
//!   its extent from its lowest address to the highest block end seen so far (its
//!   high-water mark).
//! - **waste** = Σ (reserved − requested) of live blocks (internal fragmentation), and
//!   its ratio to Σ reserved.
//! - **fragmentation** = 1 − largest free run / total free, where the free runs are the
//!   gaps between live blocks inside the capacity (0 when there is at most one run).
//!   In the real run a block occupies its whole glibc chunk, not only its usable bytes:
//!   the chunk's size field sits just below the returned address (8 bytes; 16 for an
//!   mmap'd chunk), so two neighbouring chunks leave no gap. Counting from the
//!   returned address instead would see an 8-byte "free run" between every pair of
//!   neighbours and report nearly total fragmentation for any busy arena;
//!   with the count of free runs and their histogram by size (bucket k counts runs of
//!   `2^k ≤ size < 2^(k+1)` bytes).
//! - **event rate**: allocations + frees in the interval, per second.
//! - **latency** (traces recorded with `--latency`): mean allocator latency of the
//!   interval's allocations and of its frees.
//!
//! Without a bin the metrics cover every bin: sizes add up, the largest free run is the
//! largest of any bin, histograms add.

use std::collections::BTreeMap;

use crate::bin::{Bin, BinKind};
use crate::error::AllocError;
use crate::ids::BinId;
use crate::model::AllocModel;
use crate::time_range::TimeRange;

/// The metrics at one sample.
#[derive(Clone, Debug, PartialEq, Default)]
pub struct MetricPoint {
    /// Sample time (the interval's midpoint), ns.
    pub t_ns: u64,
    /// Live blocks.
    pub live_blocks: u64,
    /// Σ requested of live blocks.
    pub requested_bytes: u64,
    /// Σ reserved of live blocks.
    pub reserved_bytes: u64,
    /// Capacity at this time.
    pub capacity_bytes: u64,
    /// reserved / capacity (0 for an empty capacity).
    pub occupancy: f64,
    /// Σ (reserved − requested) of live blocks.
    pub waste_bytes: u64,
    /// waste / reserved (0 when nothing is live).
    pub waste_ratio: f64,
    /// Free bytes inside the capacity.
    pub free_bytes: u64,
    /// The largest free run.
    pub largest_free_bytes: u64,
    /// 1 − largest free run / total free (0 when nothing or one run is free).
    pub fragmentation: f64,
    /// Number of free runs.
    pub free_runs: u64,
    /// Free runs by size: bucket k counts runs of 2^k ≤ size < 2^(k+1) bytes (trailing
    /// empty buckets trimmed).
    pub free_run_histogram: Vec<u64>,
    /// Allocations and frees in the interval.
    pub events: u64,
    /// events per second of the interval.
    pub event_rate_per_s: f64,
    /// Mean allocator latency of the interval's allocations, ns (traces with latency).
    pub alloc_latency_mean_ns: Option<f64>,
    /// Mean allocator latency of the interval's frees, ns.
    pub free_latency_mean_ns: Option<f64>,
}

/// Metrics of one bin (or all) over a window.
#[derive(Clone, Debug, PartialEq)]
pub struct MetricSeries {
    /// The bin, or `None` for all bins.
    pub bin: Option<BinId>,
    /// The window.
    pub window: TimeRange,
    /// Length of each interval, ns.
    pub interval_ns: u64,
    /// One point per interval.
    pub points: Vec<MetricPoint>,
}

/// Free-run statistics of one layout.
#[derive(Default)]
struct FreeRuns {
    total: u64,
    largest: u64,
    count: u64,
    histogram: Vec<u64>,
}

impl FreeRuns {
    fn add(&mut self, len: u64) {
        if len == 0 {
            return;
        }
        self.total += len;
        self.largest = self.largest.max(len);
        self.count += 1;
        let k = 63 - len.leading_zeros() as usize;
        if self.histogram.len() <= k {
            self.histogram.resize(k + 1, 0);
        }
        self.histogram[k] += 1;
    }
}

/// The free runs of `[start, end)` around the live blocks `live` (address → end).
/// The bytes of allocator bookkeeping just below a block's address in a bin of this
/// kind: glibc's size field (8 bytes) for heap chunks, the 16-byte header of an mmap'd
/// chunk, nothing in a replayed pool (its blocks are exact slots) or among the
/// program's own mappings (whole pages).
fn chunk_header(kind: BinKind) -> u64 {
    match kind {
        BinKind::MainHeap | BinKind::ThreadArena => 8,
        BinKind::Mmap => 16,
        BinKind::Mapping | BinKind::PoolBin { .. } | BinKind::PoolHeap => 0,
    }
}

fn free_runs(live: &BTreeMap<u64, u64>, start: u64, end: u64, out: &mut FreeRuns) {
    let mut at = start;
    for (&a, &e) in live.range(start..end) {
        if a > at {
            out.add(a - at);
        }
        at = at.max(e);
    }
    if end > at {
        out.add(end - at);
    }
}

/// The capacity of `bin` (all bins when `None`) at each of `times` (ascending), as the
/// occupancy metric counts it: a pool bin's or the pool heap's fixed extent, a real
/// region's high-water extent (its lowest address to the highest block end allocated at
/// or before that time). The occupancy bars divide by it too, so that a bar and the
/// occupancy chart show one quantity.
pub fn capacity_at(model: &AllocModel, bin: Option<BinId>, times: &[u64]) -> Vec<u64> {
    let mut out = vec![0u64; times.len()];
    let grows = |b: &Bin| !matches!(b.kind, BinKind::PoolBin { .. } | BinKind::PoolHeap);
    // One pass over the blocks: (bin, allocation time, end address) of growing regions.
    let mut ends: Vec<(u32, u64, u64)> = model
        .blocks
        .iter()
        .zip(&model.block_bin)
        .filter(|(_, b)| bin.is_none_or(|x| x == **b) && grows(&model.bins[b.index()]))
        .map(|(blk, b)| (b.0, blk.t_alloc, blk.addr + blk.reserved))
        .collect();
    ends.sort_unstable();
    let bins: Vec<&Bin> = match bin {
        Some(b) => model.bin(b).into_iter().collect(),
        None => model.bins.iter().collect(),
    };
    for b in bins {
        if !grows(b) {
            for c in &mut out {
                *c += b.capacity();
            }
            continue;
        }
        let from = ends.partition_point(|e| e.0 < b.id.0);
        let to = ends.partition_point(|e| e.0 <= b.id.0);
        let mine = &ends[from..to];
        let (mut top, mut e) = (b.start, 0);
        for (k, &t) in times.iter().enumerate() {
            while e < mine.len() && mine[e].1 <= t {
                top = top.max(mine[e].2);
                e += 1;
            }
            out[k] += top.saturating_sub(b.start);
        }
    }
    out
}

/// Samples the metrics of `bin` (all bins when `None`) at `samples` intervals of
/// `window` (the whole run when `None`).
pub fn metric_series(
    model: &AllocModel,
    bin: Option<BinId>,
    samples: usize,
    window: Option<TimeRange>,
) -> Result<MetricSeries, AllocError> {
    if let Some(b) = bin
        && model.bin(b).is_none()
    {
        return Err(AllocError::NoSuchBin(b.0));
    }
    let run = model.run();
    let window = window.unwrap_or(TimeRange {
        start_ns: run.start_ns,
        end_ns: run.end_ns.max(run.start_ns + 1),
    });
    if window.end_ns <= window.start_ns {
        return Err(AllocError::EmptyTimeWindow {
            start_ns: window.start_ns,
            end_ns: window.end_ns,
        });
    }
    if samples == 0 {
        return Err(AllocError::BadOption(
            "the number of samples must be at least 1".to_string(),
        ));
    }
    let samples = samples.min(window.duration_ns() as usize);
    let interval = window.duration_ns().div_ceil(samples as u64);
    let bins: Vec<&Bin> = match bin {
        Some(b) => vec![&model.bins[b.index()]],
        None => model.bins.iter().collect(),
    };
    let mut points: Vec<MetricPoint> = (0..samples)
        .map(|k| MetricPoint {
            t_ns: window.start_ns + k as u64 * interval + interval / 2,
            ..MetricPoint::default()
        })
        .collect();
    let mut runs: Vec<FreeRuns> = (0..samples).map(|_| FreeRuns::default()).collect();
    let mut lat_sum = vec![[0f64; 2]; samples];
    let mut lat_n = vec![[0u64; 2]; samples];
    for b in &bins {
        measure_bin(
            model,
            b,
            &window,
            interval,
            &mut points,
            &mut runs,
            &mut lat_sum,
            &mut lat_n,
        );
    }
    let secs = interval as f64 / 1e9;
    for (k, p) in points.iter_mut().enumerate() {
        let r = std::mem::take(&mut runs[k]);
        p.free_bytes = r.total;
        p.largest_free_bytes = r.largest;
        p.free_runs = r.count;
        p.free_run_histogram = r.histogram;
        p.fragmentation = if r.count > 1 {
            1.0 - r.largest as f64 / r.total as f64
        } else {
            0.0
        };
        p.occupancy = if p.capacity_bytes > 0 {
            p.reserved_bytes as f64 / p.capacity_bytes as f64
        } else {
            0.0
        };
        p.waste_ratio = if p.reserved_bytes > 0 {
            p.waste_bytes as f64 / p.reserved_bytes as f64
        } else {
            0.0
        };
        p.event_rate_per_s = p.events as f64 / secs;
        if model.has_latency() {
            p.alloc_latency_mean_ns = (lat_n[k][0] > 0).then(|| lat_sum[k][0] / lat_n[k][0] as f64);
            p.free_latency_mean_ns = (lat_n[k][1] > 0).then(|| lat_sum[k][1] / lat_n[k][1] as f64);
        }
    }
    Ok(MetricSeries {
        bin,
        window,
        interval_ns: interval,
        points,
    })
}

#[allow(clippy::too_many_arguments)]
fn measure_bin(
    model: &AllocModel,
    bin: &Bin,
    window: &TimeRange,
    interval: u64,
    points: &mut [MetricPoint],
    runs: &mut [FreeRuns],
    lat_sum: &mut [[f64; 2]],
    lat_n: &mut [[u64; 2]],
) {
    // Pool bins and the pool heap (which grows down from its top) have fixed extents.
    let fixed = matches!(bin.kind, BinKind::PoolBin { .. } | BinKind::PoolHeap);
    // The chunk header below each returned address (see the module comment).
    let header = chunk_header(bin.kind);
    // Events of this bin: (time, 0 = free / 1 = alloc, block index).
    let mut events: Vec<(u64, u8, u32)> = Vec::new();
    for (i, b) in model.blocks.iter().enumerate() {
        if model.block_bin[i] != bin.id {
            continue;
        }
        events.push((b.t_alloc, 1, i as u32));
        if b.freed {
            events.push((b.t_free, 0, i as u32));
        }
    }
    events.sort_unstable();
    let n = points.len();
    let slot = |t: u64| -> Option<usize> {
        (t >= window.start_ns && t < window.end_ns)
            .then(|| ((t - window.start_ns) / interval) as usize)
            .filter(|&k| k < n)
    };
    let mut live: BTreeMap<u64, u64> = BTreeMap::new();
    let (mut requested, mut reserved, mut count) = (0u64, 0u64, 0u64);
    let mut top = bin.start;
    let mut e = 0;
    for k in 0..points.len() {
        let t = points[k].t_ns;
        // Apply every event at or before the sample time.
        while e < events.len() && events[e].0 <= t {
            let (_, kind, i) = events[e];
            let b = &model.blocks[i as usize];
            if kind == 1 {
                live.insert(b.addr.saturating_sub(header), b.addr + b.reserved);
                requested += b.requested;
                reserved += b.reserved;
                count += 1;
                top = top.max(b.addr + b.reserved);
            } else if live.remove(&b.addr.saturating_sub(header)).is_some() {
                requested -= b.requested;
                reserved -= b.reserved;
                count -= 1;
            }
            e += 1;
        }
        let end = if fixed { bin.end } else { top };
        let p = &mut points[k];
        p.live_blocks += count;
        p.requested_bytes += requested;
        p.reserved_bytes += reserved;
        p.waste_bytes += reserved - requested.min(reserved);
        p.capacity_bytes += end.saturating_sub(bin.start);
        let mut r = FreeRuns::default();
        free_runs(&live, bin.start.saturating_sub(header), end, &mut r);
        let acc = &mut runs[k];
        acc.total += r.total;
        acc.largest = acc.largest.max(r.largest);
        acc.count += r.count;
        if acc.histogram.len() < r.histogram.len() {
            acc.histogram.resize(r.histogram.len(), 0);
        }
        for (a, h) in acc.histogram.iter_mut().zip(&r.histogram) {
            *a += h;
        }
    }
    // Event counts and latencies per interval.
    for &(t, kind, i) in &events {
        let Some(k) = slot(t) else { continue };
        points[k].events += 1;
        if let Some(l) = model.latency(crate::ids::BlockId(i)) {
            let v = if kind == 1 { l.alloc_ns } else { l.free_ns };
            if let Some(v) = v {
                lat_sum[k][usize::from(kind == 0)] += f64::from(v);
                lat_n[k][usize::from(kind == 0)] += 1;
            }
        }
    }
}
