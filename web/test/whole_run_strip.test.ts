// Unit tests of the allocation map's whole-run strip math: time ↔ x over the whole run,
// a drag turned into a window of whole ns within the run (a click is none), the
// address row under the mouse (the highest on top) and its addresses, and the
// picture's size at the screen's pixel density.

import { describe, expect, it } from "vitest";
import { dragWindow, pictureSize, rowAt, rowPlace, stripTime, stripX } from "../src/alloc/whole_run_strip";

const run = { start_ns: 1_000, end_ns: 101_000 };

describe("time across the strip", () => {
  it("maps the run's ends to the strip's edges and back", () => {
    expect(stripX(run, 500, 1_000)).toBe(0);
    expect(stripX(run, 500, 101_000)).toBe(500);
    expect(stripX(run, 500, 51_000)).toBe(250);
    expect(stripTime(run, 500, 125)).toBe(26_000);
    expect(stripTime(run, 500, stripX(run, 500, 73_000))).toBeCloseTo(73_000);
  });

  it("clamps times to the run, and survives an empty run", () => {
    expect(stripTime(run, 500, -20)).toBe(1_000);
    expect(stripTime(run, 500, 900)).toBe(101_000);
    expect(Number.isFinite(stripX({ start_ns: 5, end_ns: 5 }, 100, 5))).toBe(true);
  });
});

describe("a drag across the strip", () => {
  it("is the window between its ends, in either direction, in whole ns", () => {
    expect(dragWindow(run, 1000, 100, 300)).toEqual([11_000, 31_000]);
    expect(dragWindow(run, 1000, 300, 100)).toEqual([11_000, 31_000]);
    const [from, to] = dragWindow(run, 700, 33.3, 222.2)!;
    expect(Number.isInteger(from) && Number.isInteger(to)).toBe(true);
    expect(from).toBeLessThanOrEqual(stripTime(run, 700, 33.3));
    expect(to).toBeGreaterThanOrEqual(stripTime(run, 700, 222.2));
  });

  it("is clamped to the run", () => {
    expect(dragWindow(run, 1000, -50, 100)).toEqual([1_000, 11_000]);
    expect(dragWindow(run, 1000, 900, 1400)).toEqual([91_000, 101_000]);
  });

  it("is nothing when narrower than a few pixels (a click)", () => {
    expect(dragWindow(run, 1000, 100, 100)).toBeNull();
    expect(dragWindow(run, 1000, 100, 102)).toBeNull();
    expect(dragWindow(run, 1000, 1005, 1200)).toBeNull();
    expect(dragWindow(run, 1000, 100, 104)).not.toBeNull();
  });
});

describe("the address row under the mouse", () => {
  it("counts rows from the bottom, the highest on top", () => {
    expect(rowAt(10, 100, 0)).toBe(9);
    expect(rowAt(10, 100, 99.9)).toBe(0);
    expect(rowAt(10, 100, 55)).toBe(4);
    expect(rowAt(1000, 100, 50)).toBe(500);
    expect(rowAt(10, 100, -1)).toBeNull();
    expect(rowAt(10, 100, 100)).toBeNull();
    expect(rowAt(0, 100, 10)).toBeNull();
  });

  it("lies in its extent, at its own addresses", () => {
    const whole = {
      row_bytes: 4096,
      extents: [
        { process: 0, first_row: 0, rows: 3, start: "0x10000", end: "0x13000" },
        { process: 0, first_row: 3, rows: 2, start: "0x7f0000000000", end: "0x7f0000002000" },
      ],
    };
    expect(rowPlace(whole, 1)).toEqual({ extent: whole.extents[0], start: "0x11000", end: "0x12000" });
    expect(rowPlace(whole, 4)).toEqual({ extent: whole.extents[1], start: "0x7f0000001000", end: "0x7f0000002000" });
    expect(rowPlace(whole, 5)).toBeNull();
  });
});

describe("the picture's size", () => {
  it("is the strip's at the pixel density, within the server's limits", () => {
    expect(pictureSize(900, 100, 1)).toEqual({ w: 900, h: 100 });
    expect(pictureSize(900, 100, 2)).toEqual({ w: 1800, h: 200 });
    expect(pictureSize(3000, 100, 2)).toEqual({ w: 4096, h: 200 });
    expect(pictureSize(0, 0, 0)).toEqual({ w: 1, h: 1 });
  });
});
