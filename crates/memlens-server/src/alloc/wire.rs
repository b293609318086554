//! The allocation-map lens's JSON documents (serialized here, at the edge; the engine's
//! types stay plain). Times are ns on the model's timeline, positions are on the
//! compact address axis; raw addresses also travel as hex text because a page's
//! numbers are doubles.

use serde::Serialize;
use ts_rs::TS;

/// `api/alloc/meta`: what the page needs to lay out its views.
#[derive(Serialize, TS)]
#[ts(export_to = "alloc.ts")]
pub struct MetaWire {
    /// The pool configuration replayed, or `None` for the real run.
    pub pool: Option<String>,
    /// Blocks in the model.
    pub blocks: u64,
    /// The run's first and last instant (of a window of the run: the window's).
    pub run: RangeWire,
    /// The instant shown times count from: the run's start, or for the map of a window
    /// of a run the run's time 0, so the window's times read as in the whole run.
    pub time_origin_ns: u64,
    /// Whether the model holds a window of a run too large for the map's memory (its
    /// notes say which); `memlens view` reads another on `api/alloc/window`.
    pub window: bool,
    /// Length of the compact address axis (the bins' extents stacked).
    pub axis_len: u64,
    /// The deepest tile level on either axis.
    pub max_level: u32,
    /// True when the trace has allocator latencies.
    pub has_latency: bool,
    /// The bins, bottom of the axis first.
    pub bins: Vec<BinWire>,
    /// The recorded processes.
    pub processes: Vec<ProcessWire>,
    /// The threads (the legend of colour-by thread).
    pub threads: Vec<ThreadWire>,
    /// The sites with the most blocks (the legend of colour-by site).
    pub sites: Vec<SiteWire>,
    /// How many sites allocated blocks in all.
    pub site_count: u64,
    /// The colouring attributes.
    pub color_by: Vec<ColorByWire>,
    /// What the model's builder repaired, one sentence each.
    pub notes: Vec<String>,
    /// The replay's report, for a pool model.
    pub replay: Option<ReplayWire>,
    /// The real run's blocks by glibc's allocation path for their requested size (the
    /// bins by size class, beside the bins by address region); empty for a pool model.
    pub size_classes: Vec<SizeClassWire>,
    /// For the map of a window of a run: the whole run at a glance
    /// (`api/alloc/whole_run`), when the pass that read it saw the whole run.
    pub whole_run: Option<WholeRunWire>,
}

/// The whole run's occupancy at a glance (`api/alloc/whole_run?w=&h=` draws it: time →
/// x over the whole run, address rows → y, the highest addresses on top; each pixel the
/// mean occupancy of its cells, blue (empty) → red (full), transparent where no block
/// ever was).
#[derive(Serialize, TS)]
#[ts(export_to = "alloc.ts")]
pub struct WholeRunWire {
    /// The whole run, on the model's timeline (the window lies within it).
    pub run: RangeWire,
    /// Address rows, bottom (lowest address) first.
    pub rows: u64,
    /// The bytes of address space per row.
    pub row_bytes: u64,
    /// Runs of rows of adjacent addresses, bottom first: where the picture's address
    /// axis jumps.
    pub extents: Vec<WholeRunExtentWire>,
}

/// Rows of adjacent addresses in the whole-run picture.
#[derive(Serialize, TS)]
#[ts(export_to = "alloc.ts")]
pub struct WholeRunExtentWire {
    /// The process (index into `processes`).
    pub process: u32,
    /// Its first row (0 = bottom).
    pub first_row: u64,
    /// How many rows.
    pub rows: u64,
    /// Its first address, hex.
    pub start: String,
    /// The address after its last byte, hex.
    pub end: String,
}

/// One of glibc's allocation paths as a bin by size: the requested sizes that take it
/// (`smin=`, `smax=` select it) and the run's blocks there.
#[derive(Serialize, TS)]
#[ts(export_to = "alloc.ts")]
pub struct SizeClassWire {
    /// `tcache+fast`, `tcache+small`, `tcache+large`, `large` or `mmap`.
    pub name: String,
    /// What glibc does with such a request.
    pub description: String,
    /// Smallest requested size, bytes.
    pub min: u64,
    /// Largest requested size, bytes; none for no limit.
    pub max: Option<u64>,
    /// Blocks of the class.
    pub blocks: u64,
    /// Their reserved bytes.
    pub reserved_bytes: u64,
}

/// A time range.
#[derive(Serialize, TS)]
#[ts(export_to = "alloc.ts")]
pub struct RangeWire {
    /// First instant, ns.
    pub start_ns: u64,
    /// Last instant, ns.
    pub end_ns: u64,
}

/// A bin.
#[derive(Serialize, TS)]
#[ts(export_to = "alloc.ts")]
pub struct BinWire {
    /// Its id (`bins=`, `bin=`).
    pub id: u32,
    /// `main-heap`, `arena`, `mmap`, `mapping` (the program's own mappings), `pool` or `heap`.
    #[ts(type = r#""main-heap" | "arena" | "mmap" | "mapping" | "pool" | "heap""#)]
    pub kind: &'static str,
    /// A readable name.
    pub name: String,
    /// The pid of its process (none for replay bins).
    pub pid: Option<u32>,
    /// Its lowest raw address, hex.
    pub start_hex: String,
    /// One past its highest raw address, hex.
    pub end_hex: String,
    /// Where it starts on the axis.
    pub axis_start: u64,
    /// Where it ends on the axis.
    pub axis_end: u64,
    /// Its capacity in bytes.
    pub capacity: u64,
    /// Its blocks.
    pub blocks: u64,
    /// A pool bin's block size.
    pub block_size: Option<u64>,
    /// A pool bin's number of blocks.
    pub slots: Option<u64>,
}

/// A process.
#[derive(Serialize, TS)]
#[ts(export_to = "alloc.ts")]
pub struct ProcessWire {
    /// Its pid.
    pub pid: u32,
    /// Its parent's pid (0 when unknown).
    pub ppid: u32,
    /// Its executable's name.
    pub name: String,
    /// Its colour under colour-by process, `#rrggbb`.
    pub color: String,
}

/// A thread.
#[derive(Serialize, TS)]
#[ts(export_to = "alloc.ts")]
pub struct ThreadWire {
    /// Kernel thread id.
    pub tid: u32,
    /// Name (empty when unnamed).
    pub name: String,
    /// Its process's pid.
    pub pid: u32,
    /// Its colour under colour-by thread.
    pub color: String,
    /// Blocks it allocated.
    pub blocks: u64,
}

/// A site.
#[derive(Serialize, TS)]
#[ts(export_to = "alloc.ts")]
pub struct SiteWire {
    /// `function (file:line)`, or empty for the unknown site.
    pub label: String,
    /// Its colour under colour-by site.
    pub color: String,
    /// Blocks it allocated.
    pub blocks: u64,
}

/// A colouring attribute.
#[derive(Serialize, TS)]
#[ts(export_to = "alloc.ts")]
pub struct ColorByWire {
    /// Its name (`color=`).
    pub id: &'static str,
    /// True for categories (legend of colours), false for a blue→red scale.
    pub categorical: bool,
    /// False when the trace lacks it (latency without `--latency`).
    pub available: bool,
}

/// A pool replay's report.
#[derive(Serialize, TS)]
#[ts(export_to = "alloc.ts")]
pub struct ReplayWire {
    /// Requests replayed.
    pub requests: u64,
    /// Served by the heap.
    pub heap_served: u64,
    /// Larger than the largest bin.
    pub too_large: u64,
    /// Not served at all.
    pub failed: u64,
    /// The heap's high-water mark, bytes.
    pub heap_high_water_bytes: u64,
    /// The heap's rounding waste, bytes.
    pub heap_waste_bytes: u64,
    /// Per pool bin.
    pub bins: Vec<ReplayBinWire>,
    /// All requests that overflowed their bin.
    pub overflow_count: u64,
    /// The first overflows, in time order.
    pub overflows: Vec<OverflowWire>,
}

/// A pool bin's replay figures.
#[derive(Serialize, TS)]
#[ts(export_to = "alloc.ts")]
pub struct ReplayBinWire {
    /// Block size.
    pub block_size: u64,
    /// Blocks.
    pub slots: u64,
    /// Requests served.
    pub served: u64,
    /// Requests that found it full.
    pub overflowed: u64,
    /// Most blocks in use at once.
    pub high_water: u64,
    /// Σ (block size − requested).
    pub waste_bytes: u64,
}

/// An overflowed request.
#[derive(Serialize, TS)]
#[ts(export_to = "alloc.ts")]
pub struct OverflowWire {
    /// When, ns.
    pub t_ns: u64,
    /// Requested bytes.
    pub size: u64,
    /// The bin (0-based) that fitted best, or none when larger than all.
    pub bin: Option<usize>,
    /// True when the heap could not serve it either.
    pub failed: bool,
}

/// `api/alloc/block`: the block under the mouse, or `null`.
#[derive(Serialize, TS)]
#[ts(export_to = "alloc.ts")]
pub struct BlockAnswerWire {
    /// The block, if any lies there.
    pub block: Option<BlockWire>,
}

/// Brushing details of one block.
#[derive(Serialize, TS)]
#[ts(export_to = "alloc.ts")]
pub struct BlockWire {
    /// Its id.
    pub id: u32,
    /// Its bin.
    pub bin: u32,
    /// The bin's name.
    pub bin_name: String,
    /// Allocated at, ns.
    pub t_alloc: u64,
    /// Freed at, ns; none when never freed.
    pub t_free: Option<u64>,
    /// Where its rectangle ends on the time axis (the end of the run if never freed).
    pub t_end: u64,
    /// Its address, hex.
    pub addr_hex: String,
    /// Where it starts on the axis.
    pub y0: u64,
    /// Where its reserved size ends on the axis.
    pub y1: u64,
    /// Requested bytes.
    pub requested: u64,
    /// Reserved bytes.
    pub reserved: u64,
    /// reserved − requested.
    pub waste: u64,
    /// Lifetime, ns.
    pub lifetime_ns: u64,
    /// Thread id.
    pub tid: u32,
    /// Thread name.
    pub thread_name: String,
    /// Process id.
    pub pid: u32,
    /// Process name.
    pub process_name: String,
    /// The allocating function, or empty when unknown.
    pub function: String,
    /// Its `file:line`, or empty.
    pub location: String,
    /// The allocation site as the frame policy chose it, structured (function, file,
    /// line, module, address, offset, frame kind).
    pub site: memlens_vocab::Site,
    /// A call path that reached its allocation site, from the site outwards (up to
    /// `main`): the first stack recorded at that site. Empty when unknown.
    pub stack: Vec<memlens_vocab::Site>,
    /// The same for the site that freed it (traces recorded with `--free-stacks`).
    pub free_stack: Vec<memlens_vocab::Site>,
    /// The function that freed it (the `free` recorded with `--free-stacks`, or the
    /// `realloc` that moved it), or empty when unknown.
    pub free_function: String,
    /// Its `file:line`, or empty.
    pub free_location: String,
    /// True when made by `realloc`.
    pub from_realloc: bool,
    /// True when it is one of the program's own mappings (`mmap`, recorded with
    /// `--mmap`), not a heap block.
    pub mapping: bool,
    /// Allocation latency, ns (traces recorded with `--latency`).
    pub alloc_latency_ns: Option<u32>,
    /// Free latency, ns.
    pub free_latency_ns: Option<u32>,
}

/// `api/alloc/metrics`: a bin's (or all bins') metrics over a window, in columns.
#[derive(Serialize, TS)]
#[ts(export_to = "alloc.ts")]
pub struct MetricsWire {
    /// The bin, or none for all.
    pub bin: Option<u32>,
    /// The window.
    pub window: RangeWire,
    /// Interval length, ns.
    pub interval_ns: u64,
    /// Sample times (interval midpoints), ns.
    pub t_ns: Vec<u64>,
    /// Occupancy, 0..=1.
    pub occupancy: Vec<f64>,
    /// Live blocks.
    pub live_blocks: Vec<u64>,
    /// Σ reserved of live blocks.
    pub reserved_bytes: Vec<u64>,
    /// Capacity.
    pub capacity_bytes: Vec<u64>,
    /// Σ (reserved − requested).
    pub waste_bytes: Vec<u64>,
    /// waste / reserved.
    pub waste_ratio: Vec<f64>,
    /// 1 − largest free run / total free.
    pub fragmentation: Vec<f64>,
    /// Free bytes.
    pub free_bytes: Vec<u64>,
    /// Largest free run.
    pub largest_free_bytes: Vec<u64>,
    /// Number of free runs.
    pub free_runs: Vec<u64>,
    /// Free runs by size (bucket k: 2^k ≤ size < 2^(k+1)), per sample.
    pub free_run_histogram: Vec<Vec<u64>>,
    /// Allocations + frees per second.
    pub event_rate: Vec<f64>,
    /// Mean allocation latency, ns (none without latency or without allocations).
    pub alloc_latency_ns: Option<Vec<Option<f64>>>,
    /// Mean free latency, ns.
    pub free_latency_ns: Option<Vec<Option<f64>>>,
}

/// `#rrggbb` of an engine colour.
pub fn hex_color(c: memlens_alloc::Rgb) -> String {
    let [r, g, b] = memlens_alloc::colormap::to_u8(c);
    format!("#{r:02x}{g:02x}{b:02x}")
}
