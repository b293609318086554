// Unit tests of the chart geometry: icicle rectangles, sunburst hit testing and label
// room, which the canvas renderer and the SVG labels rely on.

import { describe, expect, it } from "vitest";
import { labelBox, lerpCoords, nodePath, pointToCoords } from "../src/heap/geometry";

const frame = { width: 300, height: 200, levels: 3 };

describe("geometry", () => {
  it("draws icicle nodes as rectangles: levels left to right, sizes top to bottom", () => {
    // Columns: root 0.45 of a column, then two full ones: 300 / 2.45 = 122.45 px each.
    expect(nodePath("icicle", { x0: 0.5, x1: 1, y0: 1, y1: 2 }, frame)).toBe("M55.10,100.00h120.45v99.00h-120.45Z");
    expect(nodePath("icicle", { x0: 0, x1: 1, y0: 0, y1: 1 }, frame)).toBe("M0.00,0.00h53.10v199.00h-53.10Z");
    expect(nodePath("icicle", { x0: 0.3, x1: 0.3, y0: 1, y1: 2 }, frame)).toBe("");
  });

  it("finds partition coordinates under a point", () => {
    const up = pointToCoords("sunburst", 0, -50, frame);
    expect(up.x).toBeCloseTo(0);
    const right = pointToCoords("sunburst", 50, 0, frame);
    expect(right.x).toBeCloseTo(0.25);
    const icicle = pointToCoords("icicle", 55.1 + 122.449 / 2, 50, frame);
    expect(icicle.x).toBe(0.25);
    expect(icicle.y).toBeCloseTo(1.5);
    expect(pointToCoords("icicle", 27.55, 0, frame).y).toBeCloseTo(0.5);
  });

  it("gives labels room along wide arcs and across narrow ones", () => {
    const wide = labelBox("sunburst", { x0: 0, x1: 0.4, y0: 1, y1: 2 }, frame, false);
    const narrow = labelBox("sunburst", { x0: 0, x1: 0.05, y0: 1, y1: 2 }, frame, false);
    expect(wide.width).toBeGreaterThan(narrow.width);
    expect(narrow.height).toBeLessThan(wide.height);
    expect(lerpCoords({ x0: 0, x1: 1, y0: 0, y1: 1 }, { x0: 1, x1: 1, y0: 2, y1: 3 }, 0.5)).toEqual({ x0: 0.5, x1: 1, y0: 1, y1: 2 });
  });
});
