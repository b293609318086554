// Unit tests of the cushion cursors' profile: the logarithmic opacity fall-off from the
// centre, softness (wider and fainter), the lit cushion shading across the cursor, the
// α slider's logarithmic scale and finding the cursor near a click.

import { describe, expect, it } from "vitest";
import { alphaFromSlider, sliderFromAlpha } from "../src/alloc/controls";
import { cursorNear, cursorOpacity, cursorShade, cursorStyle } from "../src/alloc/cursors";

describe("cushion cursors", () => {
  it("fall off logarithmically from the peak at the centre to zero at the radius", () => {
    const s = { radius: 10, sigma: 2, peak: 0.8 };
    expect(cursorOpacity(0, s)).toBeCloseTo(0.8);
    expect(cursorOpacity(10, s)).toBe(0);
    expect(cursorOpacity(25, s)).toBe(0);
    // The profile: peak · (1 − ln(1 + d/σ) / ln(1 + R/σ)).
    expect(cursorOpacity(4, s)).toBeCloseTo(0.8 * (1 - Math.log(3) / Math.log(6)));
    expect(cursorOpacity(-4, s)).toBe(cursorOpacity(4, s));
    // Strictly decreasing, and steeper near the centre than at the rim (logarithmic).
    const values = [0, 1, 2, 3, 4, 5, 6, 7, 8, 9].map((d) => cursorOpacity(d, s));
    for (let i = 1; i < values.length; i++) expect(values[i]).toBeLessThan(values[i - 1]);
    expect(values[0] - values[1]).toBeGreaterThan(values[8] - values[9]);
  });

  it("get wider and fainter with softness", () => {
    const hard = cursorStyle(0);
    const soft = cursorStyle(1);
    expect(soft.radius).toBeGreaterThan(hard.radius);
    expect(soft.peak).toBeLessThan(hard.peak);
    expect(cursorStyle(7)).toEqual(soft);
    expect(cursorStyle(-1)).toEqual(hard);
  });

  it("are shaded as a lit cushion: bright on the lit side, dark on the other", () => {
    expect(cursorShade(-0.8)).toBeGreaterThan(cursorShade(0.8));
    for (const u of [-1, -0.5, 0, 0.5, 1]) {
      expect(cursorShade(u)).toBeGreaterThanOrEqual(0.16);
      expect(cursorShade(u)).toBeLessThanOrEqual(1);
    }
  });

  it("are found near a click", () => {
    expect(cursorNear([10, 50, 53], 52, 4)).toBe(2);
    expect(cursorNear([10, 50], 30, 4)).toBe(-1);
  });

  it("share the α slider's logarithmic scale", () => {
    expect(alphaFromSlider(0)).toBeCloseTo(0.05);
    expect(alphaFromSlider(100)).toBeCloseTo(2);
    expect(sliderFromAlpha(0.5)).toBe(62);
    expect(alphaFromSlider(sliderFromAlpha(1))).toBeCloseTo(1, 1);
  });
});
