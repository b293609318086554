// Unit tests of the allocation map's viewport math: zoom around an anchor that stays
// put, independent zoom per axis, drag panning, clamping to the model, and the
// pixel ↔ data mappings the main view, context view and brushing rely on.

import { describe, expect, it } from "vitest";
import {
  addressAt,
  centreAddressAt,
  clampExtent,
  limitsOf,
  panBy,
  sameExtent,
  timeAt,
  wholeExtent,
  xOf,
  yOf,
  zoomAt,
} from "../src/alloc/viewport";

const lim = limitsOf(1_000, 101_000, 1 << 20);
const whole = wholeExtent(lim);

describe("alloc viewport", () => {
  it("maps data to pixels and back, addresses growing upwards", () => {
    expect(xOf(whole, 500, 1_000)).toBe(0);
    expect(xOf(whole, 500, 51_000)).toBe(250);
    expect(yOf(whole, 400, 0)).toBe(400);
    expect(yOf(whole, 400, 1 << 20)).toBe(0);
    expect(timeAt(whole, 500, 250)).toBe(51_000);
    expect(addressAt(whole, 400, 100)).toBe(0.75 * (1 << 20));
  });

  it("zooms around the anchor, which stays under the mouse", () => {
    const z = zoomAt(whole, lim, 4, 2, 0.25, 0.5);
    expect(z.t1 - z.t0).toBeCloseTo(25_000);
    expect(z.a1 - z.a0).toBeCloseTo((1 << 20) / 2);
    // The anchor's data point is at the same screen fraction before and after.
    expect(timeAt(z, 1, 0.25)).toBeCloseTo(timeAt(whole, 1, 0.25));
    expect(addressAt(z, 1, 0.5)).toBeCloseTo(addressAt(whole, 1, 0.5));
    // Zooming back out by the same factors returns to the whole model.
    const back = zoomAt(z, lim, 1 / 4, 1 / 2, 0.25, 0.5);
    expect(sameExtent(back, whole)).toBe(true);
  });

  it("zooms each axis alone", () => {
    const timeOnly = zoomAt(whole, lim, 10, 1, 0.5, 0.5);
    expect(timeOnly.a0).toBe(whole.a0);
    expect(timeOnly.a1).toBe(whole.a1);
    expect(timeOnly.t1 - timeOnly.t0).toBeCloseTo(10_000);
    const addrOnly = zoomAt(whole, lim, 1, 8, 0.5, 0.5);
    expect(addrOnly.t0).toBe(whole.t0);
    expect(addrOnly.a1 - addrOnly.a0).toBeCloseTo((1 << 20) / 8);
  });

  it("never zooms out past the model nor in below the smallest spans", () => {
    const out = zoomAt(whole, lim, 0.01, 0.01, 0.9, 0.1);
    expect(sameExtent(out, whole)).toBe(true);
    const deep = zoomAt(whole, lim, 1e9, 1e9, 0.5, 0.5);
    expect(deep.t1 - deep.t0).toBe(lim.minDt);
    expect(deep.a1 - deep.a0).toBe(lim.minDa);
    expect(deep.t0).toBeGreaterThanOrEqual(lim.tStart);
  });

  it("pans with the mouse and stops at the model's edges", () => {
    const z = zoomAt(whole, lim, 10, 10, 0.5, 0.5);
    // Dragging 100 px right on a 1000 px view shows 10 % earlier times.
    const right = panBy(z, lim, 100, 0, 1000, 500);
    expect(right.t0).toBeCloseTo(z.t0 - 0.1 * (z.t1 - z.t0));
    expect(right.t1 - right.t0).toBeCloseTo(z.t1 - z.t0);
    // Dragging down shows higher addresses.
    const down = panBy(z, lim, 0, 50, 1000, 500);
    expect(down.a0).toBeGreaterThan(z.a0);
    // Far past the start: pinned to the start, size kept.
    const far = panBy(z, lim, 1e6, 0, 1000, 500);
    expect(far.t0).toBe(lim.tStart);
    expect(far.t1 - far.t0).toBeCloseTo(z.t1 - z.t0);
  });

  it("centres the address window for the context view and clamps odd extents", () => {
    const z = zoomAt(whole, lim, 1, 16, 0.5, 0.5);
    const c = centreAddressAt(z, lim, 1000);
    expect(c.a0).toBe(0);
    const mid = centreAddressAt(z, lim, 1 << 19);
    expect((mid.a0 + mid.a1) / 2).toBeCloseTo(1 << 19);
    const clamped = clampExtent({ t0: -5e9, t1: 5e9, a0: 10, a1: 10 }, lim);
    expect(clamped.t0).toBe(lim.tStart);
    expect(clamped.t1).toBe(lim.tEnd);
    expect(clamped.a1 - clamped.a0).toBe(lim.minDa);
  });
});
