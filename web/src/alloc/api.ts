// The allocation-map lens's side of the server API (`api/alloc/…`, see
// crates/memlens-server/src/alloc/mod.rs): the documents' types, the drawing
// parameters every image request carries, and its requests through the page's data
// source (the live server, whose errors are one-sentence messages, or a report). The
// first one waits while the live server is still reading the map (pending.ts).

import { DataError, type Params, type Source, answerKey, parseKey } from "../data/source";
import type { BinWire, BlockAnswerWire, BlockWire, MetaWire, MetricsWire, ReplayWire } from "../generated/alloc";
import { type ShowPending, whenReady } from "./pending";

// The documents, generated from the server's `alloc/wire.rs` (see ../generated/README.md).
export type AllocBin = BinWire;
export type AllocMeta = MetaWire;
export type ReplayReport = ReplayWire;
export type BlockAnswer = BlockAnswerWire;
export type BlockDetails = BlockWire;
export type MetricsDoc = MetricsWire;

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

/** Parameters that place an image's window on the run. */
const WINDOW_PARAMS = ["t0", "t1", "a0", "a1"];
/** Parameters that only size an image or a series. */
const SIZE_PARAMS = ["w", "h", "size", "samples"];
/** Parameters that pick a grid tile. */
const GRID_PARAMS = ["zx", "zy", "x", "y"];

/** Whether `a` and `b` agree on every parameter but `ignored`. */
function sameOptions(a: Record<string, string>, b: Record<string, string>, ignored: string[]): boolean {
  const names = (q: Record<string, string>) => Object.keys(q).filter((k) => !ignored.includes(k)).sort();
  const na = names(a);
  const nb = names(b);
  return na.length === nb.length && na.every((k, i) => k === nb[i] && a[k] === b[k]);
}

/**
 * Where `q`'s window on the axis of parameters `lo`, `hi` lies in `held`'s, as
 * fractions of `held`'s; both without these parameters cover the whole axis. Null
 * when `held`'s window does not hold `q`'s.
 */
function windowIn(held: Record<string, string>, q: Record<string, string>, lo: string, hi: string): [number, number] | null {
  if (!(lo in held) && !(lo in q)) return [0, 1];
  if (!(lo in held) || !(lo in q)) return null;
  const [h0, h1, q0, q1] = [held[lo], held[hi], q[lo], q[hi]].map(Number);
  if (q0 < h0 || q1 > h1 || !(h1 > h0)) return null;
  return [(q0 - h0) / (h1 - h0), (q1 - h0) / (h1 - h0)];
}

/** A part of an image, as fractions of its width and height (from its top left). */
interface Crop {
  x: number;
  y: number;
  w: number;
  h: number;
}

/**
 * The lens's requests to `alloc/…` through the page's data source. In a report, an
 * image that was not embedded is cut from one that was and scaled to the size asked
 * for: a grid tile from the nearest coarser tile, a window from the picture of a
 * window that holds it with the same options; brushing needs `memlens view`.
 */
export class AllocApi {
  /** Whether the block under the mouse can be asked for (not in a report). */
  readonly canBrush: boolean;

  constructor(private readonly source: Source) {
    this.canBrush = source.kind === "live";
  }

  /** Asks `memlens view` to read the window `[from, to)` (ns) of the run instead. */
  async readWindow(from: number, to: number): Promise<void> {
    await this.source.json("alloc/window", { from_ns: from, to_ns: to });
  }

  /**
   * The request of `route` with `params`, as a URL relative to `api/alloc/` with its
   * query sorted: the views' key for it, and what `image` loads.
   */
  url(route: string, params: Params): string {
    return answerKey(route, params);
  }

  async json<T>(route: string, params: Params): Promise<T> {
    try {
      return await this.source.json<T>(`alloc/${route}`, params);
    } catch (e) {
      if (this.source.kind === "live") throw e;
      // A series over a window that holds this one stands in (its points are placed
      // by their times, so a chart of a smaller window shows its part, coarser).
      const wanted = parseKey(answerKey(route, params)).params;
      const near = this.source
        .held(`alloc/${route}`)
        .find((q) => sameOptions(q, wanted, ["samples", "t0", "t1"]) && windowIn(q, wanted, "t0", "t1") !== null);
      if (near) return this.source.json<T>(`alloc/${route}`, near);
      throw new DataError(
        route === "block"
          ? "A report holds pictures only: `memlens view` shows the block under the mouse."
          : "This report holds the metrics of the whole run with the default options only; `memlens view` computes any others.",
      );
    }
  }

  async image(url: string): Promise<ImageBitmap> {
    const { route, params } = parseKey(url);
    if (this.source.kind === "live") return createImageBitmap(await this.source.blob(`alloc/${route}`, params));
    try {
      return await createImageBitmap(await this.source.blob(`alloc/${route}`, params));
    } catch (e) {
      if (!(e instanceof DataError)) throw e;
    }
    const near = "zx" in params ? this.coarserTile(params) : this.widerWindow(route, params);
    if (!near) throw new DataError("This report holds the pictures of the whole run at its first zoom levels; `memlens view` draws this one.");
    const whole = await createImageBitmap(await this.source.blob(`alloc/${route}`, near.params));
    const c = near.crop;
    const sx = Math.floor(c.x * whole.width);
    const sy = Math.floor(c.y * whole.height);
    const sw = Math.max(1, Math.round(c.w * whole.width));
    const sh = Math.max(1, Math.round(c.h * whole.height));
    const width = Number(params.w ?? params.size ?? sw);
    const height = Number(params.h ?? params.size ?? sh);
    const part = await createImageBitmap(whole, sx, sy, sw, sh, { resizeWidth: width, resizeHeight: height, resizeQuality: "medium" });
    whole.close();
    return part;
  }

  /** The embedded grid tile with the most detail that holds grid tile `q`, and where. */
  private coarserTile(q: Record<string, string>): { params: Record<string, string>; crop: Crop } | null {
    const [zx, zy, x, y] = GRID_PARAMS.map((k) => Number(q[k]));
    let best: { params: Record<string, string>; crop: Crop; detail: number } | null = null;
    for (const held of this.source.held("alloc/tile")) {
      if (!("zx" in held) || !sameOptions(held, q, GRID_PARAMS)) continue;
      const [hx, hy, tx, ty] = GRID_PARAMS.map((k) => Number(held[k]));
      const dx = zx - hx;
      const dy = zy - hy;
      if (dx < 0 || dy < 0 || Math.floor(x / 2 ** dx) !== tx || Math.floor(y / 2 ** dy) !== ty) continue;
      if (best && best.detail >= hx + hy) continue;
      const w = 1 / 2 ** dx;
      const h = 1 / 2 ** dy;
      // Tile rows count from the bottom; image rows from the top.
      const fromBottom = (y - ty * 2 ** dy) * h;
      best = { params: held, crop: { x: (x - tx * 2 ** dx) * w, y: 1 - fromBottom - h, w, h }, detail: hx + hy };
    }
    return best;
  }

  /** An embedded picture of `route` with the same options over a window that holds `q`'s. */
  private widerWindow(route: string, q: Record<string, string>): { params: Record<string, string>; crop: Crop } | null {
    for (const held of this.source.held(`alloc/${route}`)) {
      if ("zx" in held || !sameOptions(held, q, [...WINDOW_PARAMS, ...SIZE_PARAMS])) continue;
      const time = windowIn(held, q, "t0", "t1");
      const address = windowIn(held, q, "a0", "a1");
      if (!time || !address) continue;
      // Image rows run from the highest address down.
      return { params: held, crop: { x: time[0], y: 1 - address[1], w: time[1] - time[0], h: address[1] - address[0] } };
    }
    return null;
  }

  /**
   * The real run's meta document, the lens's first request: live, asked again while
   * the server is still reading the map, showing its sentences (see pending.ts); null
   * when there will be no map.
   */
  firstMeta(show: ShowPending): Promise<AllocMeta | null> {
    return whenReady(() => this.meta({ pool: null, overflow: "first-fit" }), show);
  }

  async meta(p: Pick<DrawParams, "pool" | "overflow">): Promise<AllocMeta> {
    try {
      return await this.source.json<AllocMeta>("alloc/meta", modelQuery(p));
    } catch (e) {
      if (this.source.kind === "live") throw e;
      const held = this.reportPool();
      throw new DataError(
        held
          ? `This report holds the replay of ${held} only; \`memlens view\` replays any configuration.`
          : "This report holds no pool replay; `memlens view` replays any configuration.",
      );
    }
  }

  /** The pool configuration a report replayed (null live, or when it holds none). */
  reportPool(): string | null {
    return this.source.held("alloc/meta").find((q) => q.pool)?.pool ?? null;
  }
}
