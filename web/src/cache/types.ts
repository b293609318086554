// The cache lens's JSON documents, as the server's `cache/wire.rs` writes them.

export interface SourceInfo {
  id: string;
  title: string;
  kernel: boolean;
  default_n: number | null;
  max_n: number | null;
}

export interface SourcesDoc {
  default: string;
  sources: SourceInfo[];
}

export interface LevelInfo {
  name: string;
  size: number;
  ways: number;
  line_size: number;
  sets: number;
  policy: string;
}

export interface RegionInfo {
  id: number;
  name: string;
  start: number;
  len: number;
}

export interface SessionDoc {
  source: string;
  title: string;
  n: number | null;
  references: number;
  every: number;
  inclusion: string;
  write: string;
  levels: LevelInfo[];
  regions: RegionInfo[];
  labels: string[];
  timeline: { bucket: number; levels: { name: string; accesses: number[]; misses: number[] }[] };
}

export interface Counts {
  name: string;
  accesses: number;
  hits: number;
  misses: number;
  miss_rate: number;
  fills: number;
  evictions: number;
  write_backs: number;
}

export interface StatsDoc {
  at: number;
  references: number;
  temperature: number[];
  levels: Counts[];
  regions: { id: number; name: string; references: number; levels: Counts[] }[];
}

export interface OccupancyDoc {
  at: number;
  levels: { name: string; lines: number }[];
}

/** What the page asks the server for: a source under a hierarchy. */
export interface SessionParams {
  source: string;
  n: number | null;
  /** `NAME:SIZE:WAYS:LINE:POLICY,…`, or empty for the source's default. */
  levels: string;
  inclusion: string;
}
