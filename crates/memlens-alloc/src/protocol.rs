//! The wire forms of the engine's numbers: the documents `memlens alloc bins --json`
//! ([`BinsWire`]), `memlens alloc replay --json` ([`ReplayWire`]) and `memlens alloc
//! metrics --json` ([`MetricsWire`]) print. The engine's model and results
//! ([`AllocModel`], [`ReplayReport`], [`MetricSeries`]) stay plain; this module alone
//! knows serde, and only with the crate's `serde` feature.
//!
//! In both documents every object lists its fields in alphabetical order (they were
//! first written through serde_json's sorted maps, and the order is kept so that the
//! bytes stay the same): declare new fields in their alphabetical place.
//!
//! # `memlens alloc bins --json`
//!
//! ```json
//! { "bins": [ { "axis_start": 0, "bin": 0, "blocks": 3201,
//!               "capacity_bytes": 416344, "end": 94924750613752,
//!               "kind": "main-heap", "live_bytes_at_end": 20480, "name": "main heap",
//!               "pid": 22485 | null, "start": 94924750197408 } ] }
//! ```
//!
//! `kind` is [`BinKind::name`](crate::BinKind::name); `pid` is null for a bin of no
//! one process (a replayed pool's); `live_bytes_at_end` is the reserved bytes of its
//! blocks never freed (for the program's own mappings: what is still mapped).
//!
//! # `memlens alloc replay --json`
//!
//! ```json
//! { "bins": [ { "block_size": 16, "high_water": 64, "overflowed": 1014,
//!               "requested_bytes": 1057, "served": 118, "slots": 64,
//!               "waste_bytes": 831 } ],
//!   "failed": 0, "heap_high_water_bytes": 418816, "heap_served": 3039,
//!   "heap_waste_bytes": 14508, "overflow_count": 3039,
//!   "overflows": [ { "bin": 0 | null, "failed": false, "site": "f (a.c:3)",
//!                    "size": 472, "t_ns": 0, "tid": 22485 } ],
//!   "requests": 3202, "too_large": 2000 }
//! ```
//!
//! `bins` follows the pool's bins; an overflow's `bin` is the 0-based bin that fitted
//! best (null when it is larger than every bin). `overflows` lists the first requests
//! that did not get a block in their bin, `overflow_count` counts them all.
//!
//! # `memlens alloc metrics --json`
//!
//! ```json
//! { "bin": 1 | null, "end_ns": 41474396, "interval_ns": 2073720,
//!   "points": [ { "alloc_latency_mean_ns": 175.5 | null, "capacity_bytes": 472,
//!                 "event_rate_per_s": 3375.5, "events": 7, "fragmentation": 0.0,
//!                 "free_bytes": 16, "free_latency_mean_ns": null,
//!                 "free_run_histogram": [0, 0, 0, 0, 1], "free_runs": 1,
//!                 "largest_free_bytes": 16, "live_blocks": 1, "occupancy": 1.0,
//!                 "requested_bytes": 472, "reserved_bytes": 472, "t_ns": 1036860,
//!                 "waste_bytes": 0, "waste_ratio": 0.0 } ],
//!   "start_ns": 0 }
//! ```
//!
//! `bin` is null for the whole model; the fields of a point are those of
//! [`MetricPoint`].

use serde::Serialize;

use crate::bin::Bin;
use crate::metrics::{MetricPoint, MetricSeries};
use crate::model::AllocModel;
use crate::pool::{BinReport, Overflow, ReplayReport};

/// The `memlens alloc bins --json` document: the bins of a model.
#[derive(Serialize)]
pub struct BinsWire<'a> {
    /// Every bin, in id order.
    bins: Vec<BinWire<'a>>,
}

/// One bin: an address range that holds blocks.
#[derive(Serialize)]
pub struct BinWire<'a> {
    /// Where its range starts on the compact address axis.
    axis_start: u64,
    /// Its number.
    bin: u32,
    /// The blocks it holds over the whole run.
    blocks: u64,
    /// `end − start`.
    capacity_bytes: u64,
    /// The end of its address range (exclusive).
    end: u64,
    /// What it is: main heap, thread arena, mmap'd chunk, the program's own
    /// mappings, pool bin or pool heap.
    kind: &'static str,
    /// Σ reserved bytes of its blocks still live at the end of the run.
    live_bytes_at_end: u64,
    /// Its readable name.
    name: &'a str,
    /// The pid of its process, if it belongs to one.
    pid: Option<u32>,
    /// The start of its address range.
    start: u64,
}

impl<'a> From<&'a AllocModel> for BinsWire<'a> {
    fn from(model: &'a AllocModel) -> BinsWire<'a> {
        let mut live = vec![0u64; model.bins().len()];
        for (b, bin) in model.blocks().iter().zip(&model.block_bin) {
            if !b.freed {
                live[bin.index()] += b.reserved;
            }
        }
        BinsWire {
            bins: model
                .bins()
                .iter()
                .map(|bin| BinWire::new(bin, model, live[bin.id.index()]))
                .collect(),
        }
    }
}

impl<'a> BinWire<'a> {
    fn new(bin: &'a Bin, model: &AllocModel, live_bytes_at_end: u64) -> BinWire<'a> {
        BinWire {
            axis_start: bin.axis_start,
            bin: bin.id.0,
            blocks: bin.blocks,
            capacity_bytes: bin.capacity(),
            end: bin.end,
            kind: bin.kind.name(),
            live_bytes_at_end,
            name: &bin.name,
            pid: (bin.process).map(|process| model.processes()[process.index()].pid),
            start: bin.start,
        }
    }
}

/// The `memlens alloc replay --json` document: what a pool-allocator replay found.
#[derive(Serialize)]
pub struct ReplayWire<'a> {
    /// One entry per pool bin, in the pool's order.
    bins: Vec<PoolBinWire>,
    /// Requests the heap could not serve either.
    failed: u64,
    /// The heap's high-water mark in bytes.
    heap_high_water_bytes: u64,
    /// Requests served by the heap.
    heap_served: u64,
    /// Σ (rounded − requested) over heap blocks.
    heap_waste_bytes: u64,
    /// Every request that did not get a block in its bin.
    overflow_count: usize,
    /// The first of those requests, in time order.
    overflows: Vec<OverflowWire<'a>>,
    /// Requests replayed.
    requests: u64,
    /// Requests larger than the largest bin.
    too_large: u64,
}

/// One pool bin's results.
#[derive(Serialize)]
pub struct PoolBinWire {
    /// The block size.
    block_size: u64,
    /// The most blocks in use at once.
    high_water: u64,
    /// Requests that fitted this bin best but found it full.
    overflowed: u64,
    /// Σ requested over the served requests.
    requested_bytes: u64,
    /// Requests served by this bin.
    served: u64,
    /// The number of blocks.
    slots: u64,
    /// Σ (block size − requested) over the served requests.
    waste_bytes: u64,
}

/// A request that did not get a block in its bin.
#[derive(Serialize)]
pub struct OverflowWire<'a> {
    /// The 0-based bin that fitted best; none when larger than every bin.
    bin: Option<usize>,
    /// Whether the heap could not serve it either.
    failed: bool,
    /// The allocating site's label.
    site: &'a str,
    /// The requested size.
    size: u64,
    /// When it was requested, ns.
    t_ns: u64,
    /// The requesting thread's kernel id.
    tid: u32,
}

impl<'a> ReplayWire<'a> {
    /// The document of `report`, a replay of `recorded` (the model whose blocks its
    /// overflows name, for their sites and threads), listing the first `top` overflows.
    pub fn new(report: &ReplayReport, recorded: &'a AllocModel, top: usize) -> ReplayWire<'a> {
        ReplayWire {
            bins: report.bins.iter().map(PoolBinWire::from).collect(),
            failed: report.failed,
            heap_high_water_bytes: report.heap_high_water_bytes,
            heap_served: report.heap_served,
            heap_waste_bytes: report.heap_waste_bytes,
            overflow_count: report.overflows.len(),
            overflows: (report.overflows.iter().take(top))
                .map(|overflow| OverflowWire::new(overflow, recorded))
                .collect(),
            requests: report.requests,
            too_large: report.too_large,
        }
    }
}

impl From<&BinReport> for PoolBinWire {
    fn from(bin: &BinReport) -> PoolBinWire {
        PoolBinWire {
            block_size: bin.block_size,
            high_water: bin.high_water,
            overflowed: bin.overflowed,
            requested_bytes: bin.requested_bytes,
            served: bin.served,
            slots: bin.slots,
            waste_bytes: bin.waste_bytes,
        }
    }
}

impl<'a> OverflowWire<'a> {
    fn new(overflow: &Overflow, recorded: &'a AllocModel) -> OverflowWire<'a> {
        let block = recorded.block(overflow.block);
        OverflowWire {
            bin: overflow.bin,
            failed: overflow.failed,
            site: recorded.site_label(block.site),
            size: overflow.size,
            t_ns: overflow.t_ns,
            tid: recorded.threads()[block.thread.index()].tid,
        }
    }
}

/// The `memlens alloc metrics --json` document: one bin's (or the whole model's)
/// metrics over a time window.
#[derive(Serialize)]
pub struct MetricsWire<'a> {
    /// The bin's number; none for all bins together.
    bin: Option<u32>,
    /// The window's end, ns.
    end_ns: u64,
    /// The length of each interval, ns.
    interval_ns: u64,
    /// One point per interval.
    points: Vec<MetricPointWire<'a>>,
    /// The window's start, ns.
    start_ns: u64,
}

/// The metrics of one interval (see [`MetricPoint`] for each field's meaning).
#[derive(Serialize)]
pub struct MetricPointWire<'a> {
    /// Mean allocator latency of the interval's allocations, ns.
    alloc_latency_mean_ns: Option<f64>,
    /// Capacity at this time.
    capacity_bytes: u64,
    /// Events per second of the interval.
    event_rate_per_s: f64,
    /// Allocations and frees in the interval.
    events: u64,
    /// 1 − largest free run / total free.
    fragmentation: f64,
    /// Free bytes inside the capacity.
    free_bytes: u64,
    /// Mean allocator latency of the interval's frees, ns.
    free_latency_mean_ns: Option<f64>,
    /// Free runs by size: bucket k counts runs of 2^k ≤ size < 2^(k+1) bytes.
    free_run_histogram: &'a [u64],
    /// Number of free runs.
    free_runs: u64,
    /// The largest free run.
    largest_free_bytes: u64,
    /// Live blocks.
    live_blocks: u64,
    /// reserved / capacity.
    occupancy: f64,
    /// Σ requested of live blocks.
    requested_bytes: u64,
    /// Σ reserved of live blocks.
    reserved_bytes: u64,
    /// Sample time (the interval's midpoint), ns.
    t_ns: u64,
    /// Σ (reserved − requested) of live blocks.
    waste_bytes: u64,
    /// waste / reserved.
    waste_ratio: f64,
}

impl<'a> From<&'a MetricSeries> for MetricsWire<'a> {
    fn from(series: &'a MetricSeries) -> MetricsWire<'a> {
        MetricsWire {
            bin: series.bin.map(|bin| bin.0),
            end_ns: series.window.end_ns,
            interval_ns: series.interval_ns,
            points: series.points.iter().map(MetricPointWire::from).collect(),
            start_ns: series.window.start_ns,
        }
    }
}

impl<'a> From<&'a MetricPoint> for MetricPointWire<'a> {
    fn from(point: &'a MetricPoint) -> MetricPointWire<'a> {
        MetricPointWire {
            alloc_latency_mean_ns: point.alloc_latency_mean_ns,
            capacity_bytes: point.capacity_bytes,
            event_rate_per_s: point.event_rate_per_s,
            events: point.events,
            fragmentation: point.fragmentation,
            free_bytes: point.free_bytes,
            free_latency_mean_ns: point.free_latency_mean_ns,
            free_run_histogram: &point.free_run_histogram,
            free_runs: point.free_runs,
            largest_free_bytes: point.largest_free_bytes,
            live_blocks: point.live_blocks,
            occupancy: point.occupancy,
            requested_bytes: point.requested_bytes,
            reserved_bytes: point.reserved_bytes,
            t_ns: point.t_ns,
            waste_bytes: point.waste_bytes,
            waste_ratio: point.waste_ratio,
        }
    }
}

#[cfg(test)]
mod tests {
    use memlens_vocab::Site;

    use super::*;
    use crate::{AllocEvent, AllocModelBuilder, BinId, PoolConfig, ProcessInfo, TimeRange};

    /// Three 10-byte requests and one of 100 bytes by thread 7 at `grow (a.c:3)`,
    /// replayed through a pool of one 16-byte block: the first request gets it, the
    /// next two overflow bin 0, the last is larger than every bin.
    fn replayed() -> (AllocModel, ReplayReport) {
        let mut builder = AllocModelBuilder::new();
        let process = builder.add_process(ProcessInfo {
            pid: 100,
            ppid: 1,
            name: "test".into(),
        });
        let thread = builder.thread(process, 7, "main");
        let site = builder.site(&Site::at("grow", "a.c", 3));
        for (t, size) in [(1, 10), (2, 10), (3, 10), (4, 100)] {
            builder.alloc(AllocEvent {
                t,
                thread,
                addr: 0x1000 * t,
                size,
                site,
                latency_ns: None,
            });
        }
        let recorded = builder.finish(10);
        let config = PoolConfig::new(PoolConfig::parse_bins("16:1").unwrap());
        let (_, report) = crate::replay(&recorded, &config).unwrap();
        (recorded, report)
    }

    #[test]
    fn a_bins_document_lists_its_fields_in_alphabetical_order() {
        let (recorded, _) = replayed();
        let json = serde_json::to_string(&BinsWire::from(&recorded)).unwrap();
        let bin = &recorded.bins()[0];
        let expected = format!(
            concat!(
                r#"{{"bins":[{{"axis_start":0,"bin":0,"blocks":4,"capacity_bytes":{},"#,
                r#""end":{},"kind":"{}","live_bytes_at_end":176,"name":"{}","pid":100,"start":{}}}]}}"#
            ),
            bin.capacity(),
            bin.end,
            bin.kind.name(),
            bin.name,
            bin.start,
        );
        assert_eq!(json, expected);
    }

    #[test]
    fn a_replay_document_lists_its_fields_in_alphabetical_order() {
        let (recorded, report) = replayed();
        let site = recorded.site_label(recorded.block(report.overflows[0].block).site);
        assert!(
            site.contains("grow"),
            "the label names the function: {site}"
        );
        let json = serde_json::to_string(&ReplayWire::new(&report, &recorded, 2)).unwrap();
        let expected = format!(
            concat!(
                r#"{{"bins":[{{"block_size":16,"high_water":1,"overflowed":2,"#,
                r#""requested_bytes":10,"served":1,"slots":1,"waste_bytes":6}}],"#,
                r#""failed":0,"heap_high_water_bytes":144,"heap_served":3,"#,
                r#""heap_waste_bytes":24,"overflow_count":3,"overflows":["#,
                r#"{{"bin":0,"failed":false,"site":"{site}","size":10,"t_ns":2,"tid":7}},"#,
                r#"{{"bin":0,"failed":false,"site":"{site}","size":10,"t_ns":3,"tid":7}}],"#,
                r#""requests":4,"too_large":1}}"#
            ),
            site = site
        );
        assert_eq!(json, expected);
    }

    #[test]
    fn a_metrics_document_lists_its_fields_in_alphabetical_order() {
        let point = MetricPoint {
            t_ns: 5,
            live_blocks: 2,
            requested_bytes: 20,
            reserved_bytes: 32,
            capacity_bytes: 64,
            occupancy: 0.5,
            waste_bytes: 12,
            waste_ratio: 0.375,
            free_bytes: 32,
            largest_free_bytes: 16,
            fragmentation: 0.5,
            free_runs: 2,
            free_run_histogram: vec![0, 0, 0, 0, 2],
            events: 3,
            event_rate_per_s: 300.0,
            alloc_latency_mean_ns: Some(175.5),
            free_latency_mean_ns: None,
        };
        let series = MetricSeries {
            bin: Some(BinId(1)),
            window: TimeRange {
                start_ns: 0,
                end_ns: 10,
            },
            interval_ns: 10,
            points: vec![point],
        };
        let json = serde_json::to_string(&MetricsWire::from(&series)).unwrap();
        let expected = concat!(
            r#"{"bin":1,"end_ns":10,"interval_ns":10,"points":[{"#,
            r#""alloc_latency_mean_ns":175.5,"capacity_bytes":64,"event_rate_per_s":300.0,"#,
            r#""events":3,"fragmentation":0.5,"free_bytes":32,"free_latency_mean_ns":null,"#,
            r#""free_run_histogram":[0,0,0,0,2],"free_runs":2,"largest_free_bytes":16,"#,
            r#""live_blocks":2,"occupancy":0.5,"requested_bytes":20,"reserved_bytes":32,"#,
            r#""t_ns":5,"waste_bytes":12,"waste_ratio":0.375}],"start_ns":0}"#
        );
        assert_eq!(json, expected);
        let whole = MetricSeries {
            bin: None,
            ..series
        };
        let json = serde_json::to_string(&MetricsWire::from(&whole)).unwrap();
        assert!(json.starts_with(r#"{"bin":null,"#), "all bins: {json}");
    }
}
