// Tile addressing of the allocation map, the same as the server's (`tile?zx&zy&x&y`):
// level `zx` splits the run into 2^zx columns of tiles and `zy` the address axis into
// 2^zy rows; each bound is `start + floor(len · i / 2^z)`, computed exactly with
// BigInt so neighbouring tiles share their edges. The two axes zoom independently.
// Also the loader that fetches tiles a few at a time and keeps recent ones.

import type { Extent } from "./viewport";

/** Pixels per tile side. */
export const TILE_SIZE = 256;

/** A tile of the grid and its window in data units. */
export interface TileRef {
  zx: number;
  zy: number;
  x: number;
  y: number;
  t0: number;
  t1: number;
  a0: number;
  a1: number;
}

/** The exact bound `start + floor(len · i / 2^z)`. */
export function tileBound(start: number, len: number, z: number, i: number): number {
  return start + Number((BigInt(Math.round(len)) * BigInt(i)) >> BigInt(z));
}

/**
 * The coarsest level whose tiles hold at least as many pixels per data unit as the
 * screen: tiles are then drawn at 1× to 2× reduction, never enlarged.
 */
export function tileLevel(fullSpan: number, viewSpan: number, screenPx: number, maxLevel: number): number {
  if (!(viewSpan > 0) || !(fullSpan > 0)) return 0;
  const z = Math.ceil(Math.log2((fullSpan * screenPx) / (viewSpan * TILE_SIZE)) - 1e-9);
  return Math.min(Math.max(z, 0), maxLevel);
}

/** The model the tiles are cut from: its run start and length, axis length. */
export interface Grid {
  tStart: number;
  tLen: number;
  aLen: number;
  maxLevel: number;
}

/** Index range of the tiles at level `z` overlapping `[lo, hi)` of `[start, start+len)`. */
function indexRange(start: number, len: number, z: number, lo: number, hi: number): [number, number] {
  const n = 2 ** z;
  let first = Math.floor(((lo - start) / len) * n);
  let last = Math.ceil(((hi - start) / len) * n) - 1;
  first = Math.min(Math.max(first, 0), n - 1);
  last = Math.min(Math.max(last, first), n - 1);
  // Float estimates may be one off: widen by the exact bounds.
  while (first > 0 && tileBound(start, len, z, first) > lo) first--;
  while (last < n - 1 && tileBound(start, len, z, last + 1) < hi) last++;
  while (first < last && tileBound(start, len, z, first + 1) <= lo) first++;
  while (last > first && tileBound(start, len, z, last) >= hi) last--;
  return [first, last];
}

/** Every tile needed to draw `view` on a `width × height` screen. */
export function tilesFor(grid: Grid, view: Extent, width: number, height: number): TileRef[] {
  const zx = tileLevel(grid.tLen, view.t1 - view.t0, width, grid.maxLevel);
  const zy = tileLevel(grid.aLen, view.a1 - view.a0, height, grid.maxLevel);
  const [x0, x1] = indexRange(grid.tStart, grid.tLen, zx, view.t0, view.t1);
  const [y0, y1] = indexRange(0, grid.aLen, zy, view.a0, view.a1);
  const out: TileRef[] = [];
  for (let y = y0; y <= y1; y++) {
    for (let x = x0; x <= x1; x++) {
      out.push(tileAt(grid, zx, zy, x, y));
    }
  }
  return out;
}

/** The tile (`x`, `y`) at levels (`zx`, `zy`). */
export function tileAt(grid: Grid, zx: number, zy: number, x: number, y: number): TileRef {
  return {
    zx,
    zy,
    x,
    y,
    t0: tileBound(grid.tStart, grid.tLen, zx, x),
    t1: tileBound(grid.tStart, grid.tLen, zx, x + 1),
    a0: tileBound(0, grid.aLen, zy, y),
    a1: tileBound(0, grid.aLen, zy, y + 1),
  };
}

/** The tile `levels` levels up on both axes that contains `tile` (for drawing a coarser
 * picture while the tile loads), or null above level 0. */
export function parentTile(grid: Grid, tile: TileRef, levels: number): TileRef | null {
  if (tile.zx < levels || tile.zy < levels) return null;
  return tileAt(grid, tile.zx - levels, tile.zy - levels, Math.floor(tile.x / 2 ** levels), Math.floor(tile.y / 2 ** levels));
}

/** The cache key of a tile under a drawing-parameters key. */
export function tileKey(params: string, t: { zx: number; zy: number; x: number; y: number }): string {
  return `${params}|${t.zx}/${t.zy}/${t.x}/${t.y}`;
}

/** Fetches images a few at a time, newest wishes first, and keeps the recent ones. */
export class ImageLoader {
  private readonly done = new Map<string, ImageBitmap>();
  private readonly failed = new Set<string>();
  private readonly inFlight = new Set<string>();
  private queue: { key: string; url: string }[] = [];

  constructor(
    private readonly fetchImage: (url: string) => Promise<ImageBitmap>,
    private readonly onLoad: () => void,
    private readonly onError: (message: string) => void,
    private readonly concurrency = 4,
    private readonly capacity = 800,
  ) {}

  /** The image for `key`, if loaded (and marks it recently used). */
  get(key: string): ImageBitmap | undefined {
    const img = this.done.get(key);
    if (img) {
      this.done.delete(key);
      this.done.set(key, img);
    }
    return img;
  }

  /** Replaces the wish list: these images, in this order, are wanted now. */
  want(wishes: { key: string; url: string }[]): void {
    this.queue = wishes.filter((w) => !this.done.has(w.key) && !this.inFlight.has(w.key) && !this.failed.has(w.key));
    this.pump();
  }

  /** Images wanted but not loaded yet. */
  get pending(): number {
    return this.queue.length + this.inFlight.size;
  }

  private pump(): void {
    while (this.inFlight.size < this.concurrency && this.queue.length > 0) {
      const { key, url } = this.queue.shift()!;
      this.inFlight.add(key);
      this.fetchImage(url)
        .then((img) => {
          this.done.set(key, img);
          while (this.done.size > this.capacity) {
            const oldest = this.done.keys().next().value as string;
            this.done.get(oldest)?.close();
            this.done.delete(oldest);
          }
        })
        .catch((e: unknown) => {
          this.failed.add(key);
          this.onError(e instanceof Error ? e.message : String(e));
        })
        .finally(() => {
          this.inFlight.delete(key);
          this.pump();
          this.onLoad();
        });
    }
  }
}
