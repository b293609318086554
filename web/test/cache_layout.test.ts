// Unit tests of the cache lens's structural layout: ring radii from the CPU out to
// memory, spiral positions by set and eviction rank, memory arcs, and the motion
// paths (straight entries, wide circular evictions, sampling along a polyline).

import { describe, expect, it } from "vitest";
import { makeLayout, memoryArcs, rankFraction, ringRadii, slotPoint, toPolar } from "../src/cache/layout";
import { along, chain, fleePath, straightPath } from "../src/cache/paths";
import { temperatureRgb } from "../src/cache/colors";

const levels = [
  { sets: 8, ways: 2 },
  { sets: 16, ways: 4 },
];

describe("ring radii", () => {
  it("go from the CPU to the outer radius, one ring per level and memory last", () => {
    const { cpu, rings } = ringRadii(levels, 400);
    expect(rings).toHaveLength(3);
    expect(cpu).toBeCloseTo(28);
    expect(rings[0].inner).toBe(cpu);
    for (let i = 1; i < rings.length; i++) expect(rings[i].inner).toBeCloseTo(rings[i - 1].outer);
    expect(rings[2].outer).toBe(400);
    // Memory takes 22% of what is outside the CPU.
    expect(rings[2].outer - rings[2].inner).toBeCloseTo((400 - 28) * 0.22);
    // A level with more lines gets a wider ring: log2(16)=4 vs log2(64)=6.
    const w0 = rings[0].outer - rings[0].inner;
    const w1 = rings[1].outer - rings[1].inner;
    expect(w1 / w0).toBeCloseTo(6 / 4);
  });
});

describe("spiral arms", () => {
  const layout = makeLayout(levels, 800, 800);

  it("put the head of a set near the level's inner border and the next victim near the outer", () => {
    for (let set = 0; set < 8; set++) {
      const head = toPolar(layout, slotPoint(layout, 0, set, 0));
      const tail = toPolar(layout, slotPoint(layout, 0, set, 1));
      expect(head.r).toBeCloseTo(layout.rings[0].inner + 0.25 * (layout.rings[0].outer - layout.rings[0].inner));
      expect(tail.r).toBeCloseTo(layout.rings[0].inner + 0.75 * (layout.rings[0].outer - layout.rings[0].inner));
      expect(tail.r).toBeGreaterThan(head.r);
    }
    expect(rankFraction(3, 4)).toBeCloseTo(0.875);
  });

  it("give each set its own arm, evenly spaced and twisting with rank", () => {
    const a0 = toPolar(layout, slotPoint(layout, 1, 0, 0)).angle;
    const a1 = toPolar(layout, slotPoint(layout, 1, 1, 0)).angle;
    const step = (((a1 - a0) % (2 * Math.PI)) + 2 * Math.PI) % (2 * Math.PI);
    expect(step).toBeCloseTo((2 * Math.PI) / 16);
    const deeper = toPolar(layout, slotPoint(layout, 1, 0, 3)).angle;
    const turn = (((deeper - a0) % (2 * Math.PI)) + 2 * Math.PI) % (2 * Math.PI);
    expect(turn).toBeCloseTo(layout.twist[1] * (3.5 / 4 - 0.5 / 4));
    // Level 2's arms start at level 1's outer border.
    expect(layout.rings[1].inner).toBeCloseTo(layout.rings[0].outer);
  });

  it("keeps glyphs small enough to fit their slot", () => {
    const many = makeLayout([{ sets: 4096, ways: 4 }], 800, 800);
    expect(many.glyph[0]).toBeGreaterThanOrEqual(1);
    expect(many.glyph[0]).toBeLessThan(3);
  });
});

describe("memory arcs", () => {
  it("share the ring by line counts with a minimum sliver, in order", () => {
    const arcs = memoryArcs(
      [
        { id: 1, lines: 300 },
        { id: 2, lines: 100 },
        { id: 0, lines: 1 },
      ],
      { inner: 300, outer: 380 },
      2,
    );
    expect(arcs.map((a) => a.region)).toEqual([1, 2, 0]);
    const span = (i: number) => arcs[i].end - arcs[i].start;
    expect(span(0) / span(1)).toBeCloseTo(3, 1);
    expect(span(2)).toBeGreaterThan(0.03);
    const total = arcs.reduce((a, arc) => a + (arc.end - arc.start), 0);
    expect(total + 3 * 0.02).toBeCloseTo(2 * Math.PI);
    for (let i = 1; i < arcs.length; i++) expect(arcs[i].start).toBeGreaterThan(arcs[i - 1].end);
  });
});

describe("motion paths", () => {
  const layout = makeLayout(levels, 800, 800);
  it("are straight for entries and bulge outwards for evictions", () => {
    const a = { x: 400, y: 300 };
    const b = { x: 400, y: 50 };
    expect(straightPath(a, b)).toEqual([a, b]);
    const flee = fleePath(layout, a, b, 40);
    expect(flee[0]).toEqual({ x: 400, y: 300 });
    expect(flee[flee.length - 1]).toEqual(b);
    const mid = toPolar(layout, flee[8]);
    expect(mid.r).toBeGreaterThan((100 + 350) / 2 + 30);
  });

  it("are walked by length", () => {
    const p = along([{ x: 0, y: 0 }, { x: 10, y: 0 }, { x: 10, y: 30 }], 0.5);
    expect(p).toEqual({ x: 10, y: 10 });
    expect(chain([[{ x: 0, y: 0 }, { x: 1, y: 1 }], [{ x: 1, y: 1 }, { x: 2, y: 2 }]])).toHaveLength(3);
  });
});

describe("temperature colours", () => {
  it("diverge from white: blue for misses, red for reuse", () => {
    expect(temperatureRgb(0)).toEqual([247, 247, 247]);
    const [r1, , b1] = temperatureRgb(-1);
    expect(b1).toBeGreaterThan(r1);
    const [r2, , b2] = temperatureRgb(1);
    expect(r2).toBeGreaterThan(b2);
  });
});
