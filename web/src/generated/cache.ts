// Generated from crates/memlens-server/src/cache/wire.rs by ts-rs: do not edit.
// Regenerate with `MEMLENS_BLESS=1 cargo test -p memlens-server --test wire_types`.

/**
 * Counters of one level.
 */
export type CountsWire = {
  /**
   * The level's name.
   */
  name: string,
  /**
   * Demand accesses (reads and writes).
   */
  accesses: number,
  /**
   * Demand accesses that found their line.
   */
  hits: number,
  /**
   * Demand accesses that did not.
   */
  misses: number,
  /**
   * `misses / accesses` (0 without accesses).
   */
  miss_rate: number,
  /**
   * Lines placed in the level.
   */
  fills: number,
  /**
   * Valid lines it gave up to make room (replacement victims).
   */
  evictions: number,
  /**
   * Evicted dirty lines written to the next level or memory.
   */
  write_backs: number,
};

/**
 * One level of the hierarchy in use.
 */
export type LevelWire = {
  /**
   * Its name (`L1`, `L2`, `LL`, …).
   */
  name: string,
  /**
   * Capacity in bytes: `sets × ways × line_size`.
   */
  size: number,
  /**
   * The associativity (lines per set).
   */
  ways: number,
  /**
   * Line size in bytes.
   */
  line_size: number,
  /**
   * The number of sets.
   */
  sets: number,
  /**
   * The replacement policy as the CLI spells it (`lru`, `fifo`, `plru`, `random=SEED`).
   */
  policy: string,
};

/**
 * `occupancy` per level.
 */
export type OccupancyLevelWire = {
  /**
   * The level's name.
   */
  name: string,
  /**
   * Lines held.
   */
  lines: number,
};

/**
 * `occupancy`.
 */
export type OccupancyWire = {
  /**
   * The reference index the occupancy is taken before.
   */
  at: number,
  /**
   * Per level, first level first.
   */
  levels: Array<OccupancyLevelWire>,
};

/**
 * One region's statistics.
 */
export type RegionStatsWire = {
  /**
   * The region's id.
   */
  id: number,
  /**
   * The region's name.
   */
  name: string,
  /**
   * References into the region.
   */
  references: number,
  /**
   * Its counters per level.
   */
  levels: Array<CountsWire>,
};

/**
 * A region: the colour of its glyphs.
 */
export type RegionWire = {
  /**
   * Its id, as the batches' region columns carry it.
   */
  id: number,
  /**
   * Its name.
   */
  name: string,
  /**
   * Its first address.
   */
  start: number,
  /**
   * Its length in bytes.
   */
  len: number,
};

/**
 * `session`.
 */
export type SessionWire = {
  /**
   * The source's id.
   */
  source: string,
  /**
   * The source's title (with its problem size for a kernel).
   */
  title: string,
  /**
   * A kernel's problem size.
   */
  n: number | null,
  /**
   * The number of references.
   */
  references: number,
  /**
   * References between two checkpoints of the simulation.
   */
  every: number,
  /**
   * `inclusive`, `non-inclusive` or `exclusive`.
   */
  inclusion: string,
  /**
   * The first level's write policy: `back` or `through`.
   */
  write: string,
  /**
   * The hierarchy, first level first.
   */
  levels: Array<LevelWire>,
  /**
   * The named regions.
   */
  regions: Array<RegionWire>,
  /**
   * Label texts by id (index 0 is "no label", the empty string).
   */
  labels: Array<string>,
  /**
   * The miss-rate timeline.
   */
  timeline: TimelineWire,
  /**
   * How the cache temperature is computed (`twindow`, `tweights`).
   */
  temperature: TemperatureWire,
  /**
   * Statistics per level over the whole source.
   */
  totals: Array<CountsWire>,
};

/**
 * One source the kernel picker offers.
 */
export type SourceWire = {
  /**
   * The id the page asks for (`source=`).
   */
  id: string,
  /**
   * The picker's text.
   */
  title: string,
  /**
   * Whether it is a built-in kernel (which takes `n`).
   */
  kernel: boolean,
  /**
   * A kernel's problem size when the page names none.
   */
  default_n: number | null,
  /**
   * The largest problem size a kernel accepts.
   */
  max_n: number | null,
};

/**
 * `sources`.
 */
export type SourcesWire = {
  /**
   * The id of the source the page starts with.
   */
  default: string,
  /**
   * The sources, in the picker's order.
   */
  sources: Array<SourceWire>,
};

/**
 * `stats`.
 */
export type StatsWire = {
  /**
   * The reference index the statistics are taken before.
   */
  at: number,
  /**
   * References simulated so far.
   */
  references: number,
  /**
   * The cache temperature per level, −1…1.
   */
  temperature: Array<number>,
  /**
   * Counters per level.
   */
  levels: Array<CountsWire>,
  /**
   * Counters per region.
   */
  regions: Array<RegionStatsWire>,
};

/**
 * One level's temperature scores.
 */
export type TemperatureWeightsWire = {
  /**
   * The score of a hit.
   */
  hit: number,
  /**
   * The penalty of a miss (subtracted).
   */
  miss: number,
};

/**
 * The cache temperature's settings: a level's temperature is (hits × hit − misses ×
 * miss) / window over the last `window` references.
 */
export type TemperatureWire = {
  /**
   * References averaged over.
   */
  window: number,
  /**
   * Per level, first level first.
   */
  weights: Array<TemperatureWeightsWire>,
};

/**
 * One level's timeline.
 */
export type TimelineLevelWire = {
  /**
   * The level's name.
   */
  name: string,
  /**
   * Per bucket: references that probed the level.
   */
  accesses: Array<number>,
  /**
   * Per bucket: references that missed in the level.
   */
  misses: Array<number>,
};

/**
 * The miss-rate timeline.
 */
export type TimelineWire = {
  /**
   * References per bucket (the last may hold fewer).
   */
  bucket: number,
  /**
   * One series per level, first level first.
   */
  levels: Array<TimelineLevelWire>,
};
