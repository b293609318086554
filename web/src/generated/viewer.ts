// Generated from crates/memlens-server/src/protocol.rs by ts-rs: do not edit.
// Regenerate with `MEMLENS_BLESS=1 cargo test -p memlens-server --test wire_types`.
import type { SamplingWire, SuspectsWire, TreesWire } from "./heap";
import type { FrameKind } from "./vocab";

/**
 * The base run trees are compared with (`memlens view NEW --base OLD`).
 */
export type BaseInfoWire = {
  /**
   * The base trace's file name.
   */
  name: string,
  /**
   * The base's recorded run.
   */
  run: WindowWire,
  /**
   * Peak live bytes of the base.
   */
  peak_bytes: number,
  /**
   * Bytes the base never freed.
   */
  live_at_exit_bytes: number,
};

/**
 * A node's live memory in the base run (zero when the base has no such group).
 */
export type BaseNodeWire = {
  /**
   * The node's full key, as in the viewed run's tree.
   */
  full_key: Array<string>,
  /**
   * Live bytes in the base.
   */
  bytes: number,
  /**
   * Live blocks in the base.
   */
  objects: number,
};

/**
 * The base run's values of the nodes of one tree (`memlens view --base`).
 */
export type BaseTreeWire = {
  /**
   * The tree's time in the viewed run.
   */
  time_ns: number,
  /**
   * The base instant it is compared with: the same fraction of the base run.
   */
  base_time_ns: number,
  /**
   * One entry per node of the tree.
   */
  nodes: Array<BaseNodeWire>,
};

/**
 * Timeline buckets as columns.
 */
export type BucketColumns = {
  /**
   * First nanosecond of each bucket.
   */
  start_ns: Array<number>,
  /**
   * Last nanosecond of each bucket.
   */
  end_ns: Array<number>,
  /**
   * Smallest live bytes in each bucket.
   */
  min_bytes: Array<number>,
  /**
   * Largest live bytes in each bucket.
   */
  max_bytes: Array<number>,
  /**
   * Live bytes at each bucket's end.
   */
  last_bytes: Array<number>,
  /**
   * Smallest live objects in each bucket.
   */
  min_objects: Array<number>,
  /**
   * Largest live objects in each bucket.
   */
  max_objects: Array<number>,
  /**
   * Live objects at each bucket's end.
   */
  last_objects: Array<number>,
};

/**
 * A classifier the user can add to the list.
 */
export type ClassifierWire = {
  /**
   * The name used in `by`.
   */
  name: string,
  /**
   * The human title.
   */
  title: string,
  /**
   * What it groups by, one phrase.
   */
  summary: string,
};

/**
 * How a drill-down path was resolved.
 */
export type DrillWire = {
  /**
   * The path asked for.
   */
  requested: Array<string>,
  /**
   * The path of the node returned as each tree's root: the requested one, or its
   * closest ancestor that exists and is not empty in every requested tree.
   */
  path: Array<string>,
  /**
   * Whether the requested node itself was returned.
   */
  found: boolean,
};

/**
 * One embedded answer: a JSON document as it is, anything else (PNG images, binary
 * columns) in base64.
 */
export type EmbeddedAnswerWire = {
  /**
   * The answer's media type, as the server's `Content-Type`.
   */
  type: string,
  /**
   * The JSON document, for JSON answers.
   */
  json?: unknown,
  /**
   * The bytes in standard base64 with padding, for the others.
   */
  base64?: string,
};

/**
 * One symbolized frame.
 */
export type FrameWire = {
  /**
   * The function; empty when no symbol covers the address.
   */
  function: string,
  /**
   * The source file; empty when unknown.
   */
  file: string,
  /**
   * The 1-based line; 0 when unknown.
   */
  line: number,
  /**
   * The module (executable or shared object).
   */
  module: string,
  /**
   * Inlined into the next frame outwards.
   */
  inlined: boolean,
  /**
   * What the frame policy says of it.
   */
  kind: FrameKind,
};

/**
 * `api/heap/growth`.
 */
export type GrowthAnswerWire = {
  /**
   * The classifier list, e.g. `site,thread`.
   */
  by: string,
  /**
   * The heap engine's `memlens growth --json` document, as it wrote it.
   */
  doc: SuspectsWire,
};

/**
 * `api/heap/meta`: the heap lens's run, totals, marks, threads, classifiers and
 * snapshot times.
 */
export type HeapMetaWire = {
  /**
   * The recorded run.
   */
  run: WindowWire,
  /**
   * Totals over the run.
   */
  stats: StatsWire,
  /**
   * The program's marks.
   */
  marks: Array<MarkWire>,
  /**
   * The recorded threads.
   */
  threads: Array<ThreadWire>,
  /**
   * Every classifier the engine offers.
   */
  classifiers: Array<ClassifierWire>,
  /**
   * The classifier list the viewer starts with.
   */
  default_classifiers: Array<string>,
  /**
   * The snapshot times, sorted.
   */
  snapshots: Array<SnapshotWire>,
  /**
   * Things the user should know about the data (repaired events), one sentence each.
   */
  notes: Array<string>,
  /**
   * The base run trees are compared with, when there is one.
   */
  base?: BaseInfoWire,
};

/**
 * One first-level group over the times of a tree series.
 */
export type LayerWire = {
  /**
   * The group's key.
   */
  key: string,
  /**
   * Whether it is `Other`.
   */
  is_other: boolean,
  /**
   * Its live bytes at each time.
   */
  bytes: Array<number>,
  /**
   * Its live blocks at each time.
   */
  objects: Array<number>,
};

/**
 * A lens the page may show.
 */
export type LensWire = {
  /**
   * The id the page's lens registry knows it by.
   */
  id: string,
  /**
   * The tab title.
   */
  title: string,
  /**
   * The question it answers.
   */
  question: string,
};

/**
 * `api/live`: how far a followed trace is read.
 */
export type LiveWire = {
  /**
   * Bumped after every read: the lenses answer from the new read once it changed.
   */
  generation: number,
  /**
   * Whether the program is still running (more reads follow).
   */
  running: boolean,
  /**
   * The run recorded so far, ns since the process start.
   */
  recorded_ns: number,
  /**
   * When the latest read finished, ms since the Unix epoch.
   */
  updated_unix_ms: number,
  /**
   * How long the latest read took, ms (updates come no faster).
   */
  read_ms: number,
};

/**
 * A mark.
 */
export type MarkWire = {
  /**
   * When.
   */
  time_ns: number,
  /**
   * Its name.
   */
  name: string,
};

/**
 * `api/meta`: the run and the lenses; each lens's own data comes from its routes.
 */
export type MetaWire = {
  /**
   * [`VERSION`].
   */
  version: number,
  /**
   * The recorded command line.
   */
  program: string,
  /**
   * The recorded process id.
   */
  pid: number | null,
  /**
   * The trace's file name (never a directory: the page learns nothing about the
   * file system).
   */
  trace: string,
  /**
   * The lenses this viewer has data for, in tab order; the page shows only these.
   */
  lenses: Array<LensWire>,
  /**
   * Things the user should know about the viewer as a whole, one sentence each
   * (a report names the answers it could not embed).
   */
  notes: Array<string>,
  /**
   * Set when the trace was sampled: every count and byte figure of every lens is an
   * estimate, and the page says so with its `note`.
   */
  sampling: SamplingWire | null,
  /**
   * Set when the trace starts mid-run (`memlens attach`): one sentence saying so
   * (blocks allocated before the attach are unknown, their frees not matched).
   */
  mid_run: string | null,
  /**
   * Whether the viewer follows a trace still being written: the page then asks
   * `api/live` what changed.
   */
  live: boolean,
};

/**
 * A point of the heap curve.
 */
export type PointWire = {
  /**
   * When.
   */
  time_ns: number,
  /**
   * Live bytes.
   */
  bytes: number,
  /**
   * Live blocks.
   */
  objects: number,
};

/**
 * The data a report embeds: the viewer's meta and the answers of every lens, keyed
 * by `<lens>/<route>`, then `?` and the query when there is one, its pairs sorted by
 * name and written as `application/x-www-form-urlencoded` (the page's `URLSearchParams`
 * writes the same text).
 */
export type ReportWire = {
  /**
   * What `api/meta` answers.
   */
  meta: MetaWire,
  /**
   * The answers, by key.
   */
  answers: { [key in string]: EmbeddedAnswerWire },
};

/**
 * A snapshot time.
 */
export type SnapshotWire = {
  /**
   * When.
   */
  time_ns: number,
  /**
   * `start`, `point`, `mark`, `peak` or `dip`.
   */
  kind: "start" | "point" | "mark" | "peak" | "dip",
  /**
   * The mark's name, `peak`, … or empty.
   */
  label: string,
};

/**
 * One stack of a group.
 */
export type StackWire = {
  /**
   * Live bytes allocated from it in the group.
   */
  bytes: number,
  /**
   * Live blocks.
   */
  objects: number,
  /**
   * Its frames, the allocation site first (allocator frames folded, as the frame
   * policy says).
   */
  frames: Array<FrameWire>,
};

/**
 * `api/heap/stacks`: the call stacks behind one node of a memory tree.
 */
export type StacksWire = {
  /**
   * The classifier list, e.g. `site,thread`.
   */
  by: string,
  /**
   * The node's full key.
   */
  path: Array<string>,
  /**
   * The instant, ns since the process started.
   */
  time_ns: number,
  /**
   * The group's live bytes at the instant.
   */
  bytes: number,
  /**
   * Its live blocks.
   */
  objects: number,
  /**
   * How many distinct stacks hold them.
   */
  stack_count: number,
  /**
   * The heaviest stacks, heaviest first.
   */
  stacks: Array<StackWire>,
};

/**
 * Run totals.
 */
export type StatsWire = {
  /**
   * Allocations recorded.
   */
  allocations: number,
  /**
   * Blocks freed.
   */
  frees: number,
  /**
   * `realloc` calls that kept a block.
   */
  reallocations: number,
  /**
   * The largest live heap.
   */
  peak_bytes: number,
  /**
   * When it was first reached.
   */
  peak_time_ns: number,
  /**
   * Live blocks then.
   */
  peak_objects: number,
  /**
   * Bytes never freed.
   */
  live_at_exit_bytes: number,
  /**
   * Blocks never freed.
   */
  live_at_exit_objects: number,
};

/**
 * A thread.
 */
export type ThreadWire = {
  /**
   * The operating-system thread id.
   */
  tid: number,
  /**
   * Its name, empty when never named.
   */
  name: string,
};

/**
 * `api/timeline`, in columns.
 */
export type TimelineWire = {
  /**
   * The window the buckets cover.
   */
  window: WindowWire,
  /**
   * The highest heap in the window.
   */
  peak: PointWire,
  /**
   * The buckets, one array per field.
   */
  buckets: BucketColumns,
};

/**
 * `api/heap/tree`.
 */
export type TreeAnswerWire = {
  /**
   * The memory trees of the requested times: the heap engine's `memlens tree
   * --json` document, as it wrote it.
   */
  doc: TreesWire,
  /**
   * The heap at every time of the series.
   */
  totals: Array<PointWire>,
  /**
   * The first-level groups of the trees at every time of the series (`totals`'
   * times), for the stacked "memory over time by group" chart.
   */
  layers: Array<LayerWire>,
  /**
   * How the drill-down path was resolved, when one was asked for.
   */
  drill?: DrillWire,
  /**
   * With a base run (`memlens view NEW --base OLD`): the base's values of every node
   * of each tree in `doc`, in its order.
   */
  base?: Array<BaseTreeWire>,
};

/**
 * A time window.
 */
export type WindowWire = {
  /**
   * First instant.
   */
  start_ns: number,
  /**
   * Last instant.
   */
  end_ns: number,
};
