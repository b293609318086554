// Generated from crates/memlens-heap/src/protocol.rs by ts-rs: do not edit.
// Regenerate with `MEMLENS_BLESS=1 cargo test -p memlens-server --test wire_types`.

/**
 * One node of a memory tree.
 */
export type NodeWire = {
  /**
   * The key of this level (`Overall` for the root, `Other` for merged siblings).
   */
  key: string,
  /**
   * The keys from below the root down to this node; empty for the root.
   */
  full_key: Array<string>,
  /**
   * Live bytes in the group (its whole subtree).
   */
  bytes: number,
  /**
   * Live blocks in the group.
   */
  objects: number,
  /**
   * `bytes` minus the same node's bytes in the series' first tree.
   */
  growth_bytes: number,
  /**
   * `objects` minus the same node's objects in the series' first tree.
   */
  growth_objects: number,
  /**
   * The position among its siblings, fixed across all times (`Other` last).
   */
  sort_position: number,
  /**
   * Whether this is the `Other` node holding pruned siblings.
   */
  is_other: boolean,
  /**
   * Index into `classifiers` of the level's classifier; none for the root.
   */
  classifier: number | null,
  /**
   * Its children, in sort-position order.
   */
  children: Array<NodeWire>,
};

/**
 * How a `--json` document (and the viewer's run) says that its figures are
 * estimates: `{"mean_interval_bytes": 524288, "estimates": true, "note": "sampled
 * recording: …"}`, or `null` for a full recording.
 */
export type SamplingWire = {
  /**
   * The mean number of bytes between two recorded allocations.
   */
  mean_interval_bytes: number,
  /**
   * Always true: every count and byte figure is an unbiased estimate.
   */
  estimates: boolean,
  /**
   * [`Sampling::note`].
   */
  note: string,
};

/**
 * One leak suspect: a tree node and how its size grew.
 */
export type SuspectWire = {
  /**
   * The group's key (its last level).
   */
  key: string,
  /**
   * The keys from below the root down to the group.
   */
  full_key: Array<string>,
  /**
   * Live bytes at the window's end minus at its start.
   */
  growth_bytes: number,
  /**
   * Live blocks at the window's end minus at its start.
   */
  growth_objects: number,
  /**
   * Live bytes at the window's start.
   */
  start_bytes: number,
  /**
   * Live bytes at the window's end.
   */
  end_bytes: number,
  /**
   * The largest sampled live bytes in the window.
   */
  max_bytes: number,
  /**
   * Bytes of the group's blocks that were never freed.
   */
  live_at_exit_bytes: number,
  /**
   * The group's blocks that were never freed.
   */
  live_at_exit_objects: number,
  /**
   * Net rise over total movement of the sampled series, in `[0, 1]`.
   */
  monotonicity: number,
  /**
   * Goodness of a least-squares line through the samples, in `[0, 1]`.
   */
  r_squared: number,
  /**
   * Slope of that line, in bytes per second.
   */
  slope_bytes_per_s: number,
  /**
   * Whether the group still grows in the window's second half, in `[0, 1]`.
   */
  persistence: number,
  /**
   * The ranking score: `growth_bytes × monotonicity × r_squared × persistence`.
   */
  score: number,
};

/**
 * The `memlens growth --json` document: leak suspects, most suspicious first.
 */
export type SuspectsWire = {
  /**
   * The suspects.
   */
  suspects: Array<SuspectWire>,
  /**
   * Present for a sampled trace: bytes and objects are estimates.
   */
  sampling?: SamplingWire,
};

/**
 * One memory tree of a series.
 */
export type TreeWire = {
  /**
   * The heap state's time.
   */
  time_ns: number,
  /**
   * The whole heap.
   */
  root: NodeWire,
};

/**
 * The `memlens tree --json` document: a series of memory trees.
 */
export type TreesWire = {
  /**
   * The classifier names, outermost level first; a node's `classifier` indexes it.
   */
  classifiers: Array<string>,
  /**
   * The trees' times, ascending.
   */
  times_ns: Array<number>,
  /**
   * What sizes nodes: [`Metric::name`].
   */
  metric: "bytes" | "objects",
  /**
   * How children are ordered: [`SortStrategy::name`].
   */
  sort: "growth" | "start" | "end",
  /**
   * One tree per time; all trees have the same nodes in the same order.
   */
  trees: Array<TreeWire>,
  /**
   * Present for a sampled trace: bytes and objects are estimates.
   */
  sampling?: SamplingWire,
};
