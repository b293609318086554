// Motion paths of the cache lens (Table I, motion): every move takes the same time,
// so long moves are fast. A glyph entering on a miss goes straight; an evicted glyph
// flees along a wider circular arc (its radius bulges outwards on the way); a glyph
// changing its place within a level glides along the ring. Paths are polylines, so
// the time-lapse mode can chain several moves and draw them as pathlines.

import type { Layout, MemoryArc, Point } from "./layout";
import { memoryPoint, polar, slotPoint, toPolar } from "./layout";
import type { Move, Place } from "./model";

/** Where memory keeps each line: its region's arc and index there. */
export interface MemoryIndex {
  arcOf(line: number): { arc: MemoryArc; index: number };
}

export function placePoint(layout: Layout, memory: MemoryIndex, place: Place): Point {
  if (place.kind === "slot") return slotPoint(layout, place.level, place.set, place.rank);
  const { arc, index } = memory.arcOf(place.line);
  return memoryPoint(layout, arc, index);
}

/** A straight path. */
export function straightPath(a: Point, b: Point): Point[] {
  return [a, b];
}

/**
 * The eviction path: polar interpolation from `a` to `b` the long way round by an
 * extra quarter turn, its radius bulging outwards by `bulge` in the middle.
 */
export function fleePath(layout: Layout, a: Point, b: Point, bulge: number, samples = 16): Point[] {
  const pa = toPolar(layout, a);
  const pb = toPolar(layout, b);
  let delta = pb.angle - pa.angle;
  while (delta > Math.PI) delta -= 2 * Math.PI;
  while (delta < -Math.PI) delta += 2 * Math.PI;
  const sweep = delta + (delta >= 0 ? 0.35 : -0.35);
  const points: Point[] = [];
  for (let i = 0; i <= samples; i++) {
    const t = i / samples;
    const r = pa.r + (pb.r - pa.r) * t + bulge * Math.sin(Math.PI * t);
    points.push(polar(layout, r, pa.angle + sweep * t));
  }
  points[points.length - 1] = b;
  return points;
}

/** A glide within a ring: polar interpolation the short way. */
export function glidePath(layout: Layout, a: Point, b: Point, samples = 6): Point[] {
  const pa = toPolar(layout, a);
  const pb = toPolar(layout, b);
  let delta = pb.angle - pa.angle;
  while (delta > Math.PI) delta -= 2 * Math.PI;
  while (delta < -Math.PI) delta += 2 * Math.PI;
  const points: Point[] = [];
  for (let i = 0; i <= samples; i++) {
    const t = i / samples;
    points.push(polar(layout, pa.r + (pb.r - pa.r) * t, pa.angle + delta * t));
  }
  points[points.length - 1] = b;
  return points;
}

/** The polyline a move follows, by its kind. */
export function movePath(layout: Layout, memory: MemoryIndex, move: Move): Point[] {
  const a = placePoint(layout, memory, move.from);
  const b = placePoint(layout, memory, move.to);
  if (move.kind === "enter") return straightPath(a, b);
  if (move.kind === "evict") {
    const ring = layout.rings[Math.min(layout.rings.length - 1, move.from.kind === "slot" ? move.from.level : 0)];
    return fleePath(layout, a, b, (ring.outer - ring.inner) * 0.5 + 6);
  }
  return glidePath(layout, a, b);
}

/** Smooth start and stop. */
export function ease(t: number): number {
  const x = Math.min(1, Math.max(0, t));
  return x * x * (3 - 2 * x);
}

/** The point a fraction `t` of the way along a polyline, by length. */
export function along(points: Point[], t: number): Point {
  if (points.length === 1 || t <= 0) return points[0];
  if (t >= 1) return points[points.length - 1];
  let total = 0;
  for (let i = 1; i < points.length; i++) total += Math.hypot(points[i].x - points[i - 1].x, points[i].y - points[i - 1].y);
  if (total === 0) return points[points.length - 1];
  let left = t * total;
  for (let i = 1; i < points.length; i++) {
    const a = points[i - 1];
    const b = points[i];
    const d = Math.hypot(b.x - a.x, b.y - a.y);
    if (left <= d) {
      const f = d === 0 ? 0 : left / d;
      return { x: a.x + (b.x - a.x) * f, y: a.y + (b.y - a.y) * f };
    }
    left -= d;
  }
  return points[points.length - 1];
}

/** Joins consecutive moves of one glyph into one path (time-lapse). */
export function chain(paths: Point[][]): Point[] {
  const out: Point[] = [];
  for (const p of paths) {
    for (const q of p) {
      const last = out[out.length - 1];
      if (!last || last.x !== q.x || last.y !== q.y) out.push(q);
    }
  }
  return out;
}
