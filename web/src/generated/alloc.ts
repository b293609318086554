// Generated from crates/memlens-server/src/alloc/wire.rs by ts-rs: do not edit.
// Regenerate with `MEMLENS_BLESS=1 cargo test -p memlens-server --test wire_types`.
import type { Site } from "./vocab";

/**
 * A bin.
 */
export type BinWire = {
  /**
   * Its id (`bins=`, `bin=`).
   */
  id: number,
  /**
   * `main-heap`, `arena`, `mmap`, `mapping` (the program's own mappings), `pool` or `heap`.
   */
  kind: "main-heap" | "arena" | "mmap" | "mapping" | "pool" | "heap",
  /**
   * A readable name.
   */
  name: string,
  /**
   * The pid of its process (none for replay bins).
   */
  pid: number | null,
  /**
   * Its lowest raw address, hex.
   */
  start_hex: string,
  /**
   * One past its highest raw address, hex.
   */
  end_hex: string,
  /**
   * Where it starts on the axis.
   */
  axis_start: number,
  /**
   * Where it ends on the axis.
   */
  axis_end: number,
  /**
   * Its capacity in bytes.
   */
  capacity: number,
  /**
   * Its blocks.
   */
  blocks: number,
  /**
   * A pool bin's block size.
   */
  block_size: number | null,
  /**
   * A pool bin's number of blocks.
   */
  slots: number | null,
};

/**
 * `api/alloc/block`: the block under the mouse, or `null`.
 */
export type BlockAnswerWire = {
  /**
   * The block, if any lies there.
   */
  block: BlockWire | null,
};

/**
 * Brushing details of one block.
 */
export type BlockWire = {
  /**
   * Its id.
   */
  id: number,
  /**
   * Its bin.
   */
  bin: number,
  /**
   * The bin's name.
   */
  bin_name: string,
  /**
   * Allocated at, ns.
   */
  t_alloc: number,
  /**
   * Freed at, ns; none when never freed.
   */
  t_free: number | null,
  /**
   * Where its rectangle ends on the time axis (the end of the run if never freed).
   */
  t_end: number,
  /**
   * Its address, hex.
   */
  addr_hex: string,
  /**
   * Where it starts on the axis.
   */
  y0: number,
  /**
   * Where its reserved size ends on the axis.
   */
  y1: number,
  /**
   * Requested bytes.
   */
  requested: number,
  /**
   * Reserved bytes.
   */
  reserved: number,
  /**
   * reserved − requested.
   */
  waste: number,
  /**
   * Lifetime, ns.
   */
  lifetime_ns: number,
  /**
   * Thread id.
   */
  tid: number,
  /**
   * Thread name.
   */
  thread_name: string,
  /**
   * Process id.
   */
  pid: number,
  /**
   * Process name.
   */
  process_name: string,
  /**
   * The allocating function, or empty when unknown.
   */
  function: string,
  /**
   * Its `file:line`, or empty.
   */
  location: string,
  /**
   * The allocation site as the frame policy chose it, structured (function, file,
   * line, module, address, offset, frame kind).
   */
  site: Site,
  /**
   * A call path that reached its allocation site, from the site outwards (up to
   * `main`): the first stack recorded at that site. Empty when unknown.
   */
  stack: Array<Site>,
  /**
   * The same for the site that freed it (traces recorded with `--free-stacks`).
   */
  free_stack: Array<Site>,
  /**
   * The function that freed it (the `free` recorded with `--free-stacks`, or the
   * `realloc` that moved it), or empty when unknown.
   */
  free_function: string,
  /**
   * Its `file:line`, or empty.
   */
  free_location: string,
  /**
   * True when made by `realloc`.
   */
  from_realloc: boolean,
  /**
   * True when it is one of the program's own mappings (`mmap`, recorded with
   * `--mmap`), not a heap block.
   */
  mapping: boolean,
  /**
   * Allocation latency, ns (traces recorded with `--latency`).
   */
  alloc_latency_ns: number | null,
  /**
   * Free latency, ns.
   */
  free_latency_ns: number | null,
};

/**
 * A colouring attribute.
 */
export type ColorByWire = {
  /**
   * Its name (`color=`).
   */
  id: string,
  /**
   * True for categories (legend of colours), false for a blue→red scale.
   */
  categorical: boolean,
  /**
   * False when the trace lacks it (latency without `--latency`).
   */
  available: boolean,
};

/**
 * `api/alloc/meta`: what the page needs to lay out its views.
 */
export type MetaWire = {
  /**
   * The pool configuration replayed, or `None` for the real run.
   */
  pool: string | null,
  /**
   * Blocks in the model.
   */
  blocks: number,
  /**
   * The run's first and last instant (of a window of the run: the window's).
   */
  run: RangeWire,
  /**
   * The instant shown times count from: the run's start, or for the map of a window
   * of a run the run's time 0, so the window's times read as in the whole run.
   */
  time_origin_ns: number,
  /**
   * Whether the model holds a window of a run too large for the map's memory (its
   * notes say which); `memlens view` reads another on `api/alloc/window`.
   */
  window: boolean,
  /**
   * Length of the compact address axis (the bins' extents stacked).
   */
  axis_len: number,
  /**
   * The deepest tile level on either axis.
   */
  max_level: number,
  /**
   * True when the trace has allocator latencies.
   */
  has_latency: boolean,
  /**
   * The bins, bottom of the axis first.
   */
  bins: Array<BinWire>,
  /**
   * The recorded processes.
   */
  processes: Array<ProcessWire>,
  /**
   * The threads (the legend of colour-by thread).
   */
  threads: Array<ThreadWire>,
  /**
   * The sites with the most blocks (the legend of colour-by site).
   */
  sites: Array<SiteWire>,
  /**
   * How many sites allocated blocks in all.
   */
  site_count: number,
  /**
   * The colouring attributes.
   */
  color_by: Array<ColorByWire>,
  /**
   * What the model's builder repaired, one sentence each.
   */
  notes: Array<string>,
  /**
   * The replay's report, for a pool model.
   */
  replay: ReplayWire | null,
  /**
   * The real run's blocks by glibc's allocation path for their requested size (the
   * bins by size class, beside the bins by address region); empty for a pool model.
   */
  size_classes: Array<SizeClassWire>,
  /**
   * For the map of a window of a run: the whole run at a glance
   * (`api/alloc/whole_run`), when the pass that read it saw the whole run.
   */
  whole_run: WholeRunWire | null,
};

/**
 * `api/alloc/metrics`: a bin's (or all bins') metrics over a window, in columns.
 */
export type MetricsWire = {
  /**
   * The bin, or none for all.
   */
  bin: number | null,
  /**
   * The window.
   */
  window: RangeWire,
  /**
   * Interval length, ns.
   */
  interval_ns: number,
  /**
   * Sample times (interval midpoints), ns.
   */
  t_ns: Array<number>,
  /**
   * Occupancy, 0..=1.
   */
  occupancy: Array<number>,
  /**
   * Live blocks.
   */
  live_blocks: Array<number>,
  /**
   * Σ reserved of live blocks.
   */
  reserved_bytes: Array<number>,
  /**
   * Capacity.
   */
  capacity_bytes: Array<number>,
  /**
   * Σ (reserved − requested).
   */
  waste_bytes: Array<number>,
  /**
   * waste / reserved.
   */
  waste_ratio: Array<number>,
  /**
   * 1 − largest free run / total free.
   */
  fragmentation: Array<number>,
  /**
   * Free bytes.
   */
  free_bytes: Array<number>,
  /**
   * Largest free run.
   */
  largest_free_bytes: Array<number>,
  /**
   * Number of free runs.
   */
  free_runs: Array<number>,
  /**
   * Free runs by size (bucket k: 2^k ≤ size < 2^(k+1)), per sample.
   */
  free_run_histogram: Array<Array<number>>,
  /**
   * Allocations + frees per second.
   */
  event_rate: Array<number>,
  /**
   * Mean allocation latency, ns (none without latency or without allocations).
   */
  alloc_latency_ns: Array<number | null> | null,
  /**
   * Mean free latency, ns.
   */
  free_latency_ns: Array<number | null> | null,
};

/**
 * An overflowed request.
 */
export type OverflowWire = {
  /**
   * When, ns.
   */
  t_ns: number,
  /**
   * Requested bytes.
   */
  size: number,
  /**
   * The bin (0-based) that fitted best, or none when larger than all.
   */
  bin: number | null,
  /**
   * True when the heap could not serve it either.
   */
  failed: boolean,
};

/**
 * A process.
 */
export type ProcessWire = {
  /**
   * Its pid.
   */
  pid: number,
  /**
   * Its parent's pid (0 when unknown).
   */
  ppid: number,
  /**
   * Its executable's name.
   */
  name: string,
  /**
   * Its colour under colour-by process, `#rrggbb`.
   */
  color: string,
};

/**
 * A time range.
 */
export type RangeWire = {
  /**
   * First instant, ns.
   */
  start_ns: number,
  /**
   * Last instant, ns.
   */
  end_ns: number,
};

/**
 * A pool bin's replay figures.
 */
export type ReplayBinWire = {
  /**
   * Block size.
   */
  block_size: number,
  /**
   * Blocks.
   */
  slots: number,
  /**
   * Requests served.
   */
  served: number,
  /**
   * Requests that found it full.
   */
  overflowed: number,
  /**
   * Most blocks in use at once.
   */
  high_water: number,
  /**
   * Σ (block size − requested).
   */
  waste_bytes: number,
};

/**
 * A pool replay's report.
 */
export type ReplayWire = {
  /**
   * Requests replayed.
   */
  requests: number,
  /**
   * Served by the heap.
   */
  heap_served: number,
  /**
   * Larger than the largest bin.
   */
  too_large: number,
  /**
   * Not served at all.
   */
  failed: number,
  /**
   * The heap's high-water mark, bytes.
   */
  heap_high_water_bytes: number,
  /**
   * The heap's rounding waste, bytes.
   */
  heap_waste_bytes: number,
  /**
   * Per pool bin.
   */
  bins: Array<ReplayBinWire>,
  /**
   * All requests that overflowed their bin.
   */
  overflow_count: number,
  /**
   * The first overflows, in time order.
   */
  overflows: Array<OverflowWire>,
};

/**
 * A site.
 */
export type SiteWire = {
  /**
   * `function (file:line)`, or empty for the unknown site.
   */
  label: string,
  /**
   * Its colour under colour-by site.
   */
  color: string,
  /**
   * Blocks it allocated.
   */
  blocks: number,
};

/**
 * One of glibc's allocation paths as a bin by size: the requested sizes that take it
 * (`smin=`, `smax=` select it) and the run's blocks there.
 */
export type SizeClassWire = {
  /**
   * `tcache+fast`, `tcache+small`, `tcache+large`, `large` or `mmap`.
   */
  name: string,
  /**
   * What glibc does with such a request.
   */
  description: string,
  /**
   * Smallest requested size, bytes.
   */
  min: number,
  /**
   * Largest requested size, bytes; none for no limit.
   */
  max: number | null,
  /**
   * Blocks of the class.
   */
  blocks: number,
  /**
   * Their reserved bytes.
   */
  reserved_bytes: number,
};

/**
 * A thread.
 */
export type ThreadWire = {
  /**
   * Kernel thread id.
   */
  tid: number,
  /**
   * Name (empty when unnamed).
   */
  name: string,
  /**
   * Its process's pid.
   */
  pid: number,
  /**
   * Its colour under colour-by thread.
   */
  color: string,
  /**
   * Blocks it allocated.
   */
  blocks: number,
};

/**
 * Rows of adjacent addresses in the whole-run picture.
 */
export type WholeRunExtentWire = {
  /**
   * The process (index into `processes`).
   */
  process: number,
  /**
   * Its first row (0 = bottom).
   */
  first_row: number,
  /**
   * How many rows.
   */
  rows: number,
  /**
   * Its first address, hex.
   */
  start: string,
  /**
   * The address after its last byte, hex.
   */
  end: string,
};

/**
 * The whole run's occupancy at a glance (`api/alloc/whole_run?w=&h=` draws it: time →
 * x over the whole run, address rows → y, the highest addresses on top; each pixel the
 * mean occupancy of its cells, blue (empty) → red (full), transparent where no block
 * ever was).
 */
export type WholeRunWire = {
  /**
   * The whole run, on the model's timeline (the window lies within it).
   */
  run: RangeWire,
  /**
   * Address rows, bottom (lowest address) first.
   */
  rows: number,
  /**
   * The bytes of address space per row.
   */
  row_bytes: number,
  /**
   * Runs of rows of adjacent addresses, bottom first: where the picture's address
   * axis jumps.
   */
  extents: Array<WholeRunExtentWire>,
};
