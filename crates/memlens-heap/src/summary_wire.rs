//! The `memlens summary --json` document (interface contract: `allocations`, `frees`,
//! `reallocations`, `peak_bytes`, `peak_time_ns`, `duration_ns`, `leaked_bytes`,
//! `leaked_allocations`, `top_sites[{site, bytes, allocations}]`), built from the
//! streaming [`Summary`] and the ranked sites. A sampled trace's document has a
//! `sampling` field: its figures are estimates.

use serde::Serialize;

use crate::latency::LatencyRow;
use crate::protocol::SamplingWire;
use crate::ranking::RankedSite;
use crate::sampling::Sampling;
use crate::summary::Summary;

/// One row of a top-sites list: the site (its call path as one line), the call path's
/// frames, and the figures of every stack merged into it.
#[derive(Debug, Clone, Serialize)]
pub struct SiteWire {
    /// The call path, innermost frame first, joined by ` ← `; `(no stack)` when empty.
    pub site: String,
    /// The call path's frames, innermost first.
    pub stack: Vec<String>,
    /// Bytes requested.
    pub bytes: u64,
    /// Allocation calls.
    pub allocations: u64,
    /// Bytes live at the global peak.
    pub peak_bytes: u64,
    /// Bytes still live at the end.
    pub leaked_bytes: u64,
    /// Blocks still live at the end.
    pub leaked_allocations: u64,
    /// Allocations freed right after being allocated.
    pub temporary: u64,
}

impl From<RankedSite<Vec<String>>> for SiteWire {
    fn from(r: RankedSite<Vec<String>>) -> SiteWire {
        let f = r.figures;
        SiteWire {
            site: if r.key.is_empty() {
                "(no stack)".to_owned()
            } else {
                r.key.join(" ← ")
            },
            stack: r.key,
            bytes: f.bytes,
            allocations: f.allocations,
            peak_bytes: f.peak_bytes,
            leaked_bytes: f.leaked_bytes,
            leaked_allocations: f.leaked_allocations,
            temporary: f.temporary,
        }
    }
}

/// The whole `memlens summary --json` document.
#[derive(Debug, Clone, Serialize)]
pub struct SummaryWire {
    /// The trace's path.
    pub file: String,
    /// The recorded executable.
    pub program: String,
    /// Its process id.
    pub pid: u32,
    /// Allocation calls (including fresh blocks made by `realloc`).
    pub allocations: u64,
    /// Frees.
    pub frees: u64,
    /// `realloc` calls.
    pub reallocations: u64,
    /// Bytes requested in all.
    pub allocated_bytes: u64,
    /// The largest live heap.
    pub peak_bytes: u64,
    /// When it was first reached.
    pub peak_time_ns: u64,
    /// Live blocks then.
    pub peak_allocations: u64,
    /// The recorded run's length.
    pub duration_ns: u64,
    /// Bytes live at the end.
    pub leaked_bytes: u64,
    /// Blocks live at the end.
    pub leaked_allocations: u64,
    /// Allocations freed right after being allocated.
    pub temporary_allocations: u64,
    /// Frees of addresses the trace never allocated.
    pub unknown_frees: u64,
    /// Threads seen.
    pub threads: usize,
    /// Whether the trace ended cleanly with no damage.
    pub complete: bool,
    /// The recorder's warnings.
    pub warnings: Vec<String>,
    /// Damage, one phrase per place (`byte offset N: reason`).
    pub damage: Vec<String>,
    /// Sites by bytes allocated.
    pub top_sites: Vec<SiteWire>,
    /// Sites by allocation calls.
    pub top_sites_by_count: Vec<SiteWire>,
    /// Sites by bytes live at the peak.
    pub top_peak_sites: Vec<SiteWire>,
    /// Sites by bytes leaked at the end.
    pub top_leak_sites: Vec<SiteWire>,
    /// Allocator latency per function (only for traces recorded with `--latency`).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub latency: Vec<LatencyWire>,
    /// Present for a sampled trace: every count and byte figure is an estimate.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sampling: Option<SamplingWire>,
    /// Present when the trace starts mid-run (`memlens attach`): the sentence saying
    /// so (blocks allocated before the attach are unknown).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub mid_run: Option<String>,
}

/// What a summary document says about its trace besides the figures of the events.
#[derive(Debug, Clone, Default)]
pub struct TraceFacts {
    /// The trace's path.
    pub file: String,
    /// The recorded executable.
    pub program: String,
    /// Its process id.
    pub pid: u32,
    /// Threads seen.
    pub threads: usize,
    /// Whether the trace ended cleanly with no damage.
    pub complete: bool,
    /// The recorder's warnings.
    pub warnings: Vec<String>,
    /// Damage, one phrase per place.
    pub damage: Vec<String>,
    /// How the trace was sampled, if it was.
    pub sampling: Option<Sampling>,
    /// The sentence saying the trace starts mid-run (`memlens attach`), if it does.
    pub mid_run: Option<String>,
}

/// The four site rankings of a summary: by bytes, by count, at the peak, leaked.
pub type SiteLists = [Vec<SiteWire>; 4];

impl SummaryWire {
    /// The document of summary `s` of the trace `facts` describes, with its ranked
    /// `sites` and allocator `latency` rows.
    pub fn new(s: &Summary, facts: TraceFacts, sites: SiteLists, latency: &[LatencyRow]) -> Self {
        let [
            top_sites,
            top_sites_by_count,
            top_peak_sites,
            top_leak_sites,
        ] = sites;
        SummaryWire {
            file: facts.file,
            program: facts.program,
            pid: facts.pid,
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
            threads: facts.threads,
            complete: facts.complete,
            warnings: facts.warnings,
            damage: facts.damage,
            top_sites,
            top_sites_by_count,
            top_peak_sites,
            top_leak_sites,
            latency: latency.iter().map(LatencyWire::from).collect(),
            sampling: facts.sampling.map(SamplingWire::from),
            mid_run: facts.mid_run,
        }
    }
}

/// One function's allocator latency figures, in ns.
#[derive(Debug, Clone, Serialize)]
pub struct LatencyWire {
    /// `malloc`, `free`, …
    pub function: String,
    /// Calls timed.
    pub calls: u64,
    /// Median.
    pub p50_ns: u32,
    /// 90th percentile.
    pub p90_ns: u32,
    /// 99th percentile.
    pub p99_ns: u32,
    /// The slowest call.
    pub max_ns: u32,
    /// The mean, to a tenth of a nanosecond.
    pub mean_ns: f64,
}

impl From<&LatencyRow> for LatencyWire {
    fn from(r: &LatencyRow) -> Self {
        LatencyWire {
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
