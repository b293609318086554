// Unit tests of the event-to-animation mapping of the cache lens: fills that answer a
// miss come straight in from memory or a slower level and flash red; evictions leave
// on a flee path to the next level or home; hits pulse and reorder the set; ghosts
// mark data held by a faster level too.

import { describe, expect, it } from "vitest";
import type { Batch } from "../src/cache/columns";
import { CacheModel } from "../src/cache/model";

interface Ev {
  type: number;
  level: number;
  to?: number;
  set: number;
  way?: number;
  line: number;
  region?: number;
}

/** A batch of references; each gives its events and the ranks of the sets it touched. */
function batch(refs: { events: Ev[]; sets: { level: number; set: number; ranks: number[] }[]; missed?: number }[]): Batch {
  const ev = refs.flatMap((r) => r.events);
  const sets = refs.flatMap((r) => r.sets);
  let e = 0;
  let s = 0;
  const u8 = (xs: number[]) => Uint8Array.from(xs);
  return {
    start: 0,
    count: refs.length,
    levels: 2,
    served: new Uint8Array(refs.length),
    hit: new Uint16Array(refs.length),
    missed: Uint16Array.from(refs.map((r) => r.missed ?? 0)),
    kind: new Uint8Array(refs.length),
    region: new Uint16Array(refs.length),
    label: new Uint16Array(refs.length),
    addr: new Float64Array(refs.length),
    eventsEnd: Uint32Array.from(refs.map((r) => (e += r.events.length))),
    setsEnd: Uint32Array.from(refs.map((r) => (s += r.sets.length))),
    temp: new Int8Array(refs.length * 2),
    evType: u8(ev.map((x) => x.type)),
    evLevel: u8(ev.map((x) => x.level)),
    evTo: u8(ev.map((x) => x.to ?? 0)),
    evFlags: new Uint8Array(ev.length),
    evSet: Uint32Array.from(ev.map((x) => x.set)),
    evWay: Uint16Array.from(ev.map((x) => x.way ?? 0)),
    evRegion: Uint16Array.from(ev.map((x) => x.region ?? 1)),
    evLine: Float64Array.from(ev.map((x) => x.line)),
    setLevel: u8(sets.map((x) => x.level)),
    setIndex: Uint32Array.from(sets.map((x) => x.set)),
    ranks: u8(sets.flatMap((x) => x.ranks)),
  };
}

const shapes = [
  { name: "L1", sets: 2, ways: 2, lineSize: 64 },
  { name: "L2", sets: 2, ways: 2, lineSize: 64 },
];

describe("event to animation", () => {
  it("brings a missed line straight in from memory with a red flash and a pulse", () => {
    const model = new CacheModel(shapes);
    const b = batch([
      {
        missed: 3,
        events: [
          { type: 1, level: 0, set: 0, line: 0 },
          { type: 1, level: 1, set: 0, line: 0 },
          { type: 2, level: 1, set: 0, way: 1, line: 0 },
          { type: 2, level: 0, set: 0, way: 0, line: 0 },
        ],
        sets: [
          { level: 0, set: 0, ranks: [0, 255] },
          { level: 1, set: 0, ranks: [255, 0] },
        ],
      },
    ]);
    const fx = model.apply(b, 0);
    const enters = fx.moves.filter((m) => m.kind === "enter");
    expect(enters).toHaveLength(2);
    const l1 = enters.find((m) => m.level === 0)!;
    // L2 was filled first, so L1's copy comes from L2's slot; L2's from memory.
    expect(l1.from).toEqual({ kind: "slot", level: 1, set: 0, rank: 255 });
    expect(l1.to).toEqual({ kind: "slot", level: 0, set: 0, rank: 0 });
    expect(l1.flash).toBe(true);
    expect(enters.find((m) => m.level === 1)!.from).toEqual({ kind: "memory", line: 0 });
    expect(fx.pulses).toContainEqual({ level: 0, slot: 0 });
    expect(model.occupancy()).toEqual([1, 1]);
    expect(model.isGhost(1, 1)).toBe(true);
    expect(model.isGhost(0, 0)).toBe(false);
  });

  it("sends a victim on a flee path and moves a hit to the head of its set", () => {
    const model = new CacheModel(shapes);
    model.load({
      at: 0,
      temperature: [0, 0],
      levels: [
        { line: Float64Array.from([0, 128, NaN, NaN]), region: Uint16Array.from([1, 2, 0, 0]), rank: Uint8Array.from([1, 0, 255, 255]), dirty: new Uint8Array(4) },
        { line: Float64Array.from([NaN, NaN, NaN, NaN]), region: new Uint16Array(4), rank: new Uint8Array(4).fill(255), dirty: new Uint8Array(4) },
      ],
    });
    const b = batch([
      // A hit on line 0 (rank 1 → 0): line 128 shifts to rank 1.
      { events: [{ type: 0, level: 0, set: 0, line: 0 }], sets: [{ level: 0, set: 0, ranks: [0, 1] }] },
      // A miss on line 256: line 128 (the victim) goes to L2, 256 takes its way.
      {
        missed: 1,
        events: [
          { type: 1, level: 0, set: 0, line: 256 },
          { type: 3, level: 0, to: 1, set: 0, way: 1, line: 128, region: 2 },
          { type: 2, level: 1, set: 0, way: 0, line: 128, region: 2 },
          { type: 2, level: 0, set: 0, way: 1, line: 256, region: 3 },
        ],
        sets: [
          { level: 0, set: 0, ranks: [1, 0] },
          { level: 1, set: 0, ranks: [0, 255] },
        ],
      },
    ]);
    const hit = model.apply(b, 0);
    expect(hit.pulses).toEqual([{ level: 0, slot: 0 }]);
    const shifts = hit.moves.filter((m) => m.kind === "shift");
    expect(shifts.map((m) => [m.line, (m.from as { rank: number }).rank, (m.to as { rank: number }).rank])).toEqual([
      [0, 1, 0],
      [128, 0, 1],
    ]);
    const miss = model.apply(b, 1);
    const evict = miss.moves.find((m) => m.kind === "evict")!;
    expect(evict.line).toBe(128);
    expect(evict.from).toEqual({ kind: "slot", level: 0, set: 0, rank: 1 });
    // It lands in L2 (not a miss there: no flash), at its new rank.
    expect(evict.level).toBe(1);
    expect(evict.to).toEqual({ kind: "slot", level: 1, set: 0, rank: 0 });
    expect(evict.flash).toBe(false);
    const enter = miss.moves.find((m) => m.kind === "enter")!;
    expect(enter.line).toBe(256);
    expect(enter.flash).toBe(true);
    expect(enter.from).toEqual({ kind: "memory", line: 256 });
    // Line 0 aged from rank 0 to 1 without being touched.
    expect(miss.moves.find((m) => m.kind === "shift")!.line).toBe(0);
    expect(model.slotOf(0, 128)).toBe(-1);
    expect(model.slotOf(1, 128)).toBe(0);
    expect(model.occupancy()).toEqual([2, 1]);
  });

  it("sends a line home to memory when evicted from the last level", () => {
    const model = new CacheModel([{ name: "L1", sets: 1, ways: 1, lineSize: 64 }]);
    const b = batch([
      { events: [{ type: 2, level: 0, set: 0, line: 0 }], sets: [{ level: 0, set: 0, ranks: [0] }] },
      {
        events: [
          { type: 3, level: 0, to: 255, set: 0, line: 0 },
          { type: 2, level: 0, set: 0, line: 64 },
        ],
        sets: [{ level: 0, set: 0, ranks: [0] }],
      },
    ]);
    model.apply(b, 0);
    const fx = model.apply(b, 1);
    const evict = fx.moves.find((m) => m.kind === "evict")!;
    expect(evict.to).toEqual({ kind: "memory", line: 0 });
    expect(evict.level).toBe(-1);
    expect(model.slotOf(0, 64)).toBe(0);
  });
});
