// Unit tests of the grid of bins' free-memory bar (Figure 8): the mean free fraction over
// the window's samples that have a capacity, and no bar for a bin with none.

import { describe, expect, it } from "vitest";
import { freeFraction } from "../src/alloc/bin_grid";

describe("free-memory bar", () => {
  it("is the mean of 1 − occupancy over samples with a capacity", () => {
    expect(freeFraction({ occupancy: [0.1, 0.5, 0.75], capacity_bytes: [64, 64, 64] })).toBeCloseTo((0.9 + 0.5 + 0.25) / 3);
    expect(freeFraction({ occupancy: [0, 0.5], capacity_bytes: [0, 64] })).toBeCloseTo(0.5);
  });
  it("clamps each sample to 0…1", () => {
    expect(freeFraction({ occupancy: [1.2], capacity_bytes: [10] })).toBe(0);
    expect(freeFraction({ occupancy: [-0.1, 0.5], capacity_bytes: [10, 10] })).toBeCloseTo(0.75);
  });
  it("has no value without capacity or samples", () => {
    expect(freeFraction({ occupancy: [0], capacity_bytes: [0] })).toBeNull();
    expect(freeFraction({ occupancy: [], capacity_bytes: [] })).toBeNull();
  });
});
