// The allocation-map lens's side of the server API (`api/alloc/…`, see
// crates/memlens-server/src/alloc/mod.rs): the documents' types, the drawing
// parameters every image request carries, and fetch helpers whose errors are the
// server's one-sentence messages.

import { fetchOk } from "../data/http";

export interface AllocBin {
  id: number;
  kind: "main-heap" | "arena" | "mmap" | "pool" | "heap";
  name: string;
  pid: number | null;
  start_hex: string;
  end_hex: string;
  axis_start: number;
  axis_end: number;
  capacity: number;
  blocks: number;
  block_size: number | null;
  slots: number | null;
}

export interface AllocMeta {
  pool: string | null;
  blocks: number;
  run: { start_ns: number; end_ns: number };
  axis_len: number;
  max_level: number;
  has_latency: boolean;
  bins: AllocBin[];
  processes: { pid: number; ppid: number; name: string; color: string }[];
  threads: { tid: number; name: string; pid: number; color: string; blocks: number }[];
  sites: { label: string; color: string; blocks: number }[];
  site_count: number;
  color_by: { id: string; categorical: boolean; available: boolean }[];
  notes: string[];
  replay: ReplayReport | null;
}

export interface ReplayReport {
  requests: number;
  heap_served: number;
  too_large: number;
  failed: number;
  heap_high_water_bytes: number;
  heap_waste_bytes: number;
  bins: { block_size: number; slots: number; served: number; overflowed: number; high_water: number; waste_bytes: number }[];
  overflow_count: number;
  overflows: { t_ns: number; size: number; bin: number | null; failed: boolean }[];
}

export interface BlockDetails {
  id: number;
  bin: number;
  bin_name: string;
  t_alloc: number;
  t_free: number | null;
  t_end: number;
  addr_hex: string;
  y0: number;
  y1: number;
  requested: number;
  reserved: number;
  waste: number;
  lifetime_ns: number;
  tid: number;
  thread_name: string;
  pid: number;
  process_name: string;
  function: string;
  location: string;
  from_realloc: boolean;
  alloc_latency_ns: number | null;
  free_latency_ns: number | null;
}

export interface MetricsDoc {
  bin: number | null;
  window: { start_ns: number; end_ns: number };
  interval_ns: number;
  t_ns: number[];
  occupancy: number[];
  live_blocks: number[];
  reserved_bytes: number[];
  capacity_bytes: number[];
  waste_bytes: number[];
  waste_ratio: number[];
  fragmentation: number[];
  free_bytes: number[];
  largest_free_bytes: number[];
  free_runs: number[];
  free_run_histogram: number[][];
  event_rate: number[];
  alloc_latency_ns: (number | null)[] | null;
  free_latency_ns: (number | null)[] | null;
}

/** What every map image depends on besides its window. */
export interface DrawParams {
  color: string;
  alpha: number;
  cushion: "none" | "parabolic" | "plateau";
  /** Main-view bin filter (null: all bins). */
  bin: number | null;
  smin: string;
  smax: string;
  pool: string | null;
  overflow: "first-fit" | "best-fit";
}

/** Occupancy bar parameters. */
export interface BarParams {
  style: "flat" | "outlined" | "cushioned" | "antialiased";
  profile: "none" | "parabolic" | "plateau";
  alpha: number;
}

/** Query parameters selecting the model (real run or a replay). */
export function modelQuery(p: Pick<DrawParams, "pool" | "overflow">): Record<string, string> {
  return p.pool ? { pool: p.pool, overflow: p.overflow } : {};
}

/** Query parameters of a map image (without its window). */
export function mapQuery(p: DrawParams, bins: number[] | null = null): Record<string, string> {
  const q: Record<string, string> = { ...modelQuery(p), color: p.color, alpha: String(p.alpha), cushion: p.cushion };
  const list = bins ?? (p.bin === null ? [] : [p.bin]);
  if (list.length > 0) q.bins = list.join(",");
  if (p.smin.trim()) q.smin = p.smin.trim();
  if (p.smax.trim()) q.smax = p.smax.trim();
  return q;
}

/** Query parameters of an occupancy bar. */
export function barQuery(b: BarParams): Record<string, string> {
  return { style: b.style, profile: b.profile, alpha: String(b.alpha) };
}

/** A stable key of query parameters (for client-side caches). */
export function queryKey(q: Record<string, string>): string {
  return Object.keys(q)
    .sort()
    .map((k) => `${k}=${q[k]}`)
    .join("&");
}

/** The lens's API next to the page. */
export class AllocApi {
  constructor(private readonly base: URL) {}

  /** The URL of `route` with `params` (numbers written as whole numbers where needed). */
  url(route: string, params: Record<string, string | number>): string {
    const url = new URL(`api/alloc/${route}`, this.base);
    for (const [k, v] of Object.entries(params)) url.searchParams.set(k, String(v));
    return url.toString();
  }

  async json<T>(route: string, params: Record<string, string | number>): Promise<T> {
    return (await (await fetchOk(this.url(route, params))).json()) as T;
  }

  async image(url: string): Promise<ImageBitmap> {
    const blob = await (await fetchOk(url)).blob();
    return createImageBitmap(blob);
  }

  meta(p: Pick<DrawParams, "pool" | "overflow">): Promise<AllocMeta> {
    return this.json("meta", modelQuery(p));
  }
}
