// Unit tests of the allocation map's tile addressing, which must agree with the
// server's (crates/memlens-server/src/alloc/query.rs `tile_bounds`): exact bounds
// that neighbours share, the level that matches the screen, the tiles covering a view,
// and the coarser tile that stands in while one loads.

import { describe, expect, it } from "vitest";
import { type Grid, TILE_SIZE, parentTile, tileAt, tileBound, tileKey, tileLevel, tilesFor } from "../src/alloc/tiles";

const grid: Grid = { tStart: 100, tLen: 1000, aLen: 10, maxLevel: 48 };

describe("alloc tiles", () => {
  it("splits axes exactly as the server does", () => {
    // The same cases as the Rust test tile_bounds_split_exactly_and_share_edges.
    expect([tileBound(100, 1000, 0, 0), tileBound(100, 1000, 0, 1)]).toEqual([100, 1100]);
    expect([tileBound(100, 1000, 1, 0), tileBound(100, 1000, 1, 1)]).toEqual([100, 600]);
    expect([tileBound(0, 10, 2, 1), tileBound(0, 10, 2, 2), tileBound(0, 10, 2, 3)]).toEqual([2, 5, 7]);
    // Beyond 2^53 products BigInt keeps it exact.
    const len = 2 ** 50 + 3;
    expect(tileBound(0, len, 48, 2 ** 48)).toBe(len);
    expect(tileBound(0, len, 48, 2 ** 47)).toBe(Number((BigInt(len) * 2n ** 47n) >> 48n));
  });

  it("picks the coarsest level at least as sharp as the screen", () => {
    // The whole span on 256 px: level 0; on 257..512 px: level 1.
    expect(tileLevel(1000, 1000, TILE_SIZE, 48)).toBe(0);
    expect(tileLevel(1000, 1000, TILE_SIZE + 1, 48)).toBe(1);
    expect(tileLevel(1000, 1000, 2 * TILE_SIZE, 48)).toBe(1);
    // A quarter of the span on 256 px: level 2.
    expect(tileLevel(1000, 250, TILE_SIZE, 48)).toBe(2);
    expect(tileLevel(1000, 1e-9, TILE_SIZE, 20)).toBe(20);
    expect(tileLevel(1000, 0, TILE_SIZE, 20)).toBe(0);
  });

  it("lists exactly the tiles overlapping the view", () => {
    const view = { t0: 100, t1: 1100, a0: 0, a1: 10 };
    const tiles = tilesFor(grid, view, 512, 256);
    expect(tiles.map((t) => [t.zx, t.zy, t.x, t.y])).toEqual([
      [1, 0, 0, 0],
      [1, 0, 1, 0],
    ]);
    // A window inside tile x=1 of level 1 needs only that tile's column.
    const inner = tilesFor(grid, { t0: 650, t1: 1050, a0: 0, a1: 10 }, 200, 100);
    expect(new Set(inner.map((t) => t.x)).size).toBe(1);
    // Tiles cover the view without gaps: consecutive tiles share bounds.
    const deep = tilesFor(grid, { t0: 333, t1: 777, a0: 1, a1: 9 }, 1000, 600);
    for (const t of deep) {
      const right = deep.find((u) => u.y === t.y && u.x === t.x + 1);
      if (right) expect(right.t0).toBe(t.t1);
    }
    expect(Math.min(...deep.map((t) => t.t0))).toBeLessThanOrEqual(333);
    expect(Math.max(...deep.map((t) => t.t1))).toBeGreaterThanOrEqual(777);
  });

  it("finds the coarser tile containing a tile, and keys tiles by parameters", () => {
    const t = tileAt(grid, 3, 3, 5, 6);
    const p = parentTile(grid, t, 2)!;
    expect([p.zx, p.zy, p.x, p.y]).toEqual([1, 1, 1, 1]);
    expect(p.t0).toBeLessThanOrEqual(t.t0);
    expect(p.t1).toBeGreaterThanOrEqual(t.t1);
    expect(parentTile(grid, t, 4)).toBeNull();
    expect(tileKey("color=site", t)).toBe("color=site|3/3/5/6");
  });
});
