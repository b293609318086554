// Geometry of the two charts: from partition coordinates (size axis in [0, 1], level
// axis in levels) to an SVG path and a label position, for a sunburst (angle × radius)
// or a horizontal icicle (levels left to right, sizes top to bottom).

import { arc } from "d3-shape";

export type ChartKind = "sunburst" | "icicle";

/** Partition coordinates of one node (see `PlacedNode`). */
export interface Coords {
  x0: number;
  x1: number;
  y0: number;
  y1: number;
}

/** The drawing area and how many level slots it is divided into. */
export interface Frame {
  width: number;
  height: number;
  levels: number;
}

export interface LabelBox {
  /** SVG transform placing the text's anchor. */
  transform: string;
  /** Room for the text along its baseline, in pixels. */
  width: number;
  /** Room across the baseline, in pixels. */
  height: number;
  anchor: "start" | "middle";
}

const TAU = 2 * Math.PI;
const arcPath = arc<Coords>()
  .startAngle((c) => c.x0 * TAU)
  .endAngle((c) => c.x1 * TAU)
  .padAngle((c) => Math.min(0.003, (c.x1 - c.x0) * TAU * 0.25));

/** An icicle's root column is narrower than the others: it only says "everything". */
const ICICLE_ROOT_SHARE = 0.45;

/** The x position of level coordinate `y` in an icicle (piecewise linear). */
function icicleX(y: number, frame: Frame): number {
  const column = frame.width / (frame.levels - 1 + ICICLE_ROOT_SHARE);
  const root = column * ICICLE_ROOT_SHARE;
  return y <= 1 ? y * root : root + (y - 1) * column;
}

/** The sunburst's outer radius in a frame. */
export function sunburstRadius(frame: Frame): number {
  return Math.max(10, Math.min(frame.width, frame.height) / 2 - 4);
}

/** The SVG path of a node, relative to the chart's origin (the centre of a sunburst). */
export function nodePath(kind: ChartKind, c: Coords, frame: Frame): string {
  // An empty group draws nothing (not even its outline).
  if (c.x1 - c.x0 <= 1e-9) return "";
  if (kind === "sunburst") {
    const ring = sunburstRadius(frame) / frame.levels;
    const inner = c.y0 * ring;
    const outer = Math.max(inner, c.y1 * ring - 1);
    return arcPath.innerRadius(inner).outerRadius(outer)(c) ?? "";
  }
  const x = icicleX(c.y0, frame);
  const w = Math.max(0, icicleX(c.y1, frame) - x - 2);
  const y = c.x0 * frame.height;
  const full = (c.x1 - c.x0) * frame.height;
  const hgt = Math.max(0, full > 3 ? full - 1 : full);
  return `M${x.toFixed(2)},${y.toFixed(2)}h${w.toFixed(2)}v${hgt.toFixed(2)}h${(-w).toFixed(2)}Z`;
}

/** Where a node's label goes and how much room it has. */
export function labelBox(kind: ChartKind, c: Coords, frame: Frame, isRoot: boolean): LabelBox {
  if (kind === "sunburst") {
    const ring = sunburstRadius(frame) / frame.levels;
    const r0 = c.y0 * ring;
    const r1 = c.y1 * ring;
    if (isRoot) {
      return { transform: "translate(0,0)", width: r1 * 1.6, height: r1 * 1.2, anchor: "middle" };
    }
    const sweep = (c.x1 - c.x0) * TAU;
    const a = ((c.x0 + c.x1) / 2) * TAU;
    const deg = (a * 180) / Math.PI;
    const r = (r0 + r1) / 2;
    const thickness = r1 - r0;
    const arcLength = sweep * r;
    if (arcLength > thickness * 1.25) {
      // Wide segments: text along the tangent, where there is more room; the chord
      // must stay inside the ring (its sagitta within half the ring).
      const slack = Math.max(0, thickness / 2 - 7);
      const inRing = 2 * Math.sqrt(Math.max(0, r * r - (r - slack) * (r - slack)));
      const chord = 2 * r * (sweep >= Math.PI ? 1 : Math.sin(sweep / 2));
      const flip = deg > 90 && deg < 270 ? 180 : 0;
      return {
        transform: `rotate(${deg.toFixed(2)}) translate(0,${(-r).toFixed(2)}) rotate(${flip})`,
        width: Math.max(0, Math.min(chord, inRing) - 10),
        height: thickness,
        anchor: "middle",
      };
    }
    const flip = deg > 180 ? 180 : 0;
    return {
      transform: `rotate(${(deg - 90).toFixed(2)}) translate(${r.toFixed(2)},0) rotate(${flip})`,
      width: Math.max(0, thickness - 8),
      height: arcLength,
      anchor: "middle",
    };
  }
  const x0 = icicleX(c.y0, frame);
  const y = ((c.x0 + c.x1) / 2) * frame.height;
  return {
    transform: `translate(${(x0 + 6).toFixed(2)},${y.toFixed(2)})`,
    width: Math.max(0, icicleX(c.y1, frame) - x0 - 14),
    height: (c.x1 - c.x0) * frame.height,
    anchor: "start",
  };
}

/** Linear interpolation between two sets of coordinates. */
export function lerpCoords(a: Coords, b: Coords, t: number): Coords {
  return {
    x0: a.x0 + (b.x0 - a.x0) * t,
    x1: a.x1 + (b.x1 - a.x1) * t,
    y0: a.y0 + (b.y0 - a.y0) * t,
    y1: a.y1 + (b.y1 - a.y1) * t,
  };
}

/** The partition coordinates under a point of the chart (origin as for `nodePath`). */
export function pointToCoords(kind: ChartKind, px: number, py: number, frame: Frame): { x: number; y: number } {
  if (kind === "sunburst") {
    const ring = sunburstRadius(frame) / frame.levels;
    let a = Math.atan2(px, -py);
    if (a < 0) a += TAU;
    return { x: a / TAU, y: Math.hypot(px, py) / ring };
  }
  const column = frame.width / (frame.levels - 1 + ICICLE_ROOT_SHARE);
  const root = column * ICICLE_ROOT_SHARE;
  return { x: py / frame.height, y: px <= root ? px / root : 1 + (px - root) / column };
}
