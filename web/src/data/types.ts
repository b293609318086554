// Wire types of the viewer's JSON API (crates/memlens-server/src/protocol.rs) and of
// the heap engine's memory-tree and suspect documents, as the page reads them.

/** Nanoseconds since the recorded process started. */
export type TimeNs = number;

export type Metric = "bytes" | "objects";
export type SortStrategy = "growth" | "start" | "end";

export interface Window {
  start_ns: TimeNs;
  end_ns: TimeNs;
}

export interface ClassifierInfo {
  name: string;
  title: string;
  summary: string;
}

export interface SnapshotInfo {
  time_ns: TimeNs;
  kind: "start" | "point" | "mark" | "peak" | "dip" | "picked";
  label: string;
}

export interface LensInfo {
  id: string;
  title: string;
  question: string;
}

export interface Meta {
  version: number;
  program: string;
  pid: number | null;
  trace: string;
  run: Window;
  stats: {
    allocations: number;
    frees: number;
    reallocations: number;
    peak_bytes: number;
    peak_time_ns: TimeNs;
    peak_objects: number;
    live_at_exit_bytes: number;
    live_at_exit_objects: number;
  };
  marks: { time_ns: TimeNs; name: string }[];
  threads: { tid: number; name: string }[];
  classifiers: ClassifierInfo[];
  default_classifiers: string[];
  snapshots: SnapshotInfo[];
  lenses: LensInfo[];
  notes: string[];
}

export interface TimelineDoc {
  window: Window;
  peak: HeapPoint;
  buckets: {
    start_ns: TimeNs[];
    end_ns: TimeNs[];
    min_bytes: number[];
    max_bytes: number[];
    last_bytes: number[];
    min_objects: number[];
    max_objects: number[];
    last_objects: number[];
  };
}

export interface HeapPoint {
  time_ns: TimeNs;
  bytes: number;
  objects: number;
}

/** One node of a memory tree; `children` are in stable sort-position order. */
export interface TreeNode {
  key: string;
  full_key: string[];
  bytes: number;
  objects: number;
  growth_bytes: number;
  growth_objects: number;
  sort_position: number;
  is_other: boolean;
  classifier: number | null;
  children?: TreeNode[];
}

export interface TreesDoc {
  classifiers: string[];
  times_ns: TimeNs[];
  metric: Metric;
  sort: SortStrategy;
  trees: { time_ns: TimeNs; root: TreeNode }[];
}

export interface TreeResponse {
  doc: TreesDoc;
  /** The root's size at every time of the server's series. */
  totals: HeapPoint[];
  drill?: { requested: string[]; path: string[]; found: boolean };
}

export interface Suspect {
  key: string;
  full_key: string[];
  growth_bytes: number;
  growth_objects: number;
  start_bytes: number;
  end_bytes: number;
  max_bytes: number;
  live_at_exit_bytes: number;
  live_at_exit_objects: number;
  monotonicity: number;
  r_squared: number;
  slope_bytes_per_s: number;
  persistence: number;
  score: number;
}

export interface GrowthDoc {
  by: string;
  doc: { suspects: Suspect[] };
}

/** The data a report embeds in place of the API. */
export interface ReportData {
  version: number;
  meta: Meta;
  timeline: TimelineDoc;
  growth: GrowthDoc[];
  trees: { by: string; metric: Metric; sort: SortStrategy; response: TreeResponse }[];
}
