// The structural layout of the cache lens (paper 002, §IV-A), as pure functions:
// the CPU at the centre, one ring per cache level from fastest to slowest, main
// memory as the outermost ring; inside a level one spiral arm per set, a glyph's
// distance along its arm being its eviction rank, so the next victim sits at the
// border with the next level. Memory holds every line of the named regions, each
// region an arc of the outer ring.

export interface Point {
  x: number;
  y: number;
}

export interface Ring {
  inner: number;
  outer: number;
}

export interface LevelGeometry {
  sets: number;
  ways: number;
}

export interface Layout {
  cx: number;
  cy: number;
  cpu: number;
  /** One ring per cache level, then memory's. */
  rings: Ring[];
  levels: LevelGeometry[];
  /** The twist of each level's arms: radians turned from an arm's head to its tail. */
  twist: number[];
  /** The angle each level's arms start from, so that levels' arms interleave. */
  phase: number[];
  /** The glyph radius of each level (memory's last). */
  glyph: number[];
}

/** The share of the radius (outside the CPU) that memory's ring takes. */
export const MEMORY_SHARE = 0.22;

/**
 * Ring radii: the CPU takes 7% of the radius, memory the outer 22% of the rest, and
 * the cache levels share what is left in proportion to log2 of their line counts
 * (at least 1), so a level holding more lines gets a wider ring without the largest
 * swamping the others.
 */
export function ringRadii(levels: LevelGeometry[], radius: number): { cpu: number; rings: Ring[] } {
  const cpu = radius * 0.07;
  const usable = radius - cpu;
  const memory = usable * MEMORY_SHARE;
  const weights = levels.map((l) => Math.max(1, Math.log2(Math.max(1, l.sets * l.ways))));
  const total = weights.reduce((a, b) => a + b, 0) || 1;
  const rings: Ring[] = [];
  let at = cpu;
  for (const w of weights) {
    const width = ((usable - memory) * w) / total;
    rings.push({ inner: at, outer: at + width });
    at += width;
  }
  rings.push({ inner: at, outer: radius });
  return { cpu, rings };
}

export function makeLayout(levels: LevelGeometry[], width: number, height: number): Layout {
  const radius = Math.max(20, Math.min(width, height) / 2 - 8);
  const { cpu, rings } = ringRadii(levels, radius);
  const glyph: number[] = levels.map((l, i) => {
    const ring = rings[i];
    const radial = (ring.outer - ring.inner) / l.ways;
    const mid = (ring.inner + ring.outer) / 2;
    const around = (2 * Math.PI * mid) / l.sets;
    return clamp(0.42 * Math.min(radial, around * 1.6), 1, 7);
  });
  glyph.push(clamp(glyph[glyph.length - 1] ?? 3, 1, 4));
  return {
    cx: width / 2,
    cy: height / 2,
    cpu,
    rings,
    levels,
    // Few sets: long interlocking spirals; many sets: nearly radial arms.
    twist: levels.map((l) => Math.min(Math.PI * 0.9, (2 * Math.PI) / Math.max(1, l.sets) * 1.5 + 0.35)),
    phase: levels.map((_, i) => (i * Math.PI) / 7),
    glyph,
  };
}

function clamp(x: number, lo: number, hi: number): number {
  return Math.min(hi, Math.max(lo, x));
}

/** The fraction of the way from a level's inner to its outer border for `rank`. */
export function rankFraction(rank: number, ways: number): number {
  return (rank + 0.5) / ways;
}

/** Where the glyph of rank `rank` in set `set` of `level` sits. */
export function slotPoint(layout: Layout, level: number, set: number, rank: number): Point {
  const g = layout.levels[level];
  const ring = layout.rings[level];
  const t = rankFraction(Math.min(rank, g.ways - 1), g.ways);
  const r = ring.inner + t * (ring.outer - ring.inner);
  const angle = layout.phase[level] + (2 * Math.PI * set) / g.sets + layout.twist[level] * t;
  return { x: layout.cx + r * Math.cos(angle), y: layout.cy + r * Math.sin(angle) };
}

/** Where a level's arm for `set` starts and turns: the polyline of its ways. */
export function armPolyline(layout: Layout, level: number, set: number, steps = 12): Point[] {
  const g = layout.levels[level];
  const ring = layout.rings[level];
  const points: Point[] = [];
  for (let i = 0; i <= steps; i++) {
    const t = i / steps;
    const r = ring.inner + t * (ring.outer - ring.inner);
    const angle = layout.phase[level] + (2 * Math.PI * set) / g.sets + layout.twist[level] * t;
    points.push({ x: layout.cx + r * Math.cos(angle), y: layout.cy + r * Math.sin(angle) });
  }
  return points;
}

/** One region's arc of the memory ring. */
export interface MemoryArc {
  region: number;
  start: number;
  end: number;
  /** The lines the arc holds (memory's line size). */
  lines: number;
  /** Rows of glyphs across the ring's width. */
  rows: number;
}

/**
 * Splits the memory ring among regions in proportion to their line counts (each gets
 * at least a sliver), leaving small gaps between arcs; the last arc is for lines of
 * no named region.
 */
export function memoryArcs(
  regions: { id: number; lines: number }[],
  ring: Ring,
  glyph: number,
): MemoryArc[] {
  const gap = 0.02;
  const parts = regions.length;
  const total = regions.reduce((a, r) => a + Math.max(1, r.lines), 0) || 1;
  const free = 2 * Math.PI - gap * parts;
  const minShare = Math.min(0.04, 1 / Math.max(1, parts));
  const shares = regions.map((r) => Math.max(minShare, Math.max(1, r.lines) / total));
  const shareTotal = shares.reduce((a, b) => a + b, 0) || 1;
  const arcs: MemoryArc[] = [];
  let at = -Math.PI / 2;
  regions.forEach((r, i) => {
    const span = (free * shares[i]) / shareTotal;
    const mid = (ring.inner + ring.outer) / 2;
    const perRow = Math.max(1, Math.floor((span * mid) / (glyph * 2.2)));
    const maxRows = Math.max(1, Math.floor((ring.outer - ring.inner) / (glyph * 2.2)));
    const rows = Math.min(maxRows, Math.max(1, Math.ceil(Math.max(1, r.lines) / perRow)));
    arcs.push({ region: r.id, start: at, end: at + span, lines: Math.max(1, r.lines), rows });
    at += span + gap;
  });
  return arcs;
}

/** Where line number `index` of an arc sits (lines beyond the arc wrap around it). */
export function memoryPoint(layout: Layout, arc: MemoryArc, index: number): Point {
  const ring = layout.rings[layout.rings.length - 1];
  const perRow = Math.ceil(arc.lines / arc.rows);
  const i = ((index % arc.lines) + arc.lines) % arc.lines;
  const column = Math.floor(i / arc.rows);
  const row = i % arc.rows;
  const angle = arc.start + ((column + 0.5) / perRow) * (arc.end - arc.start);
  const r = ring.inner + ((row + 0.5) / arc.rows) * (ring.outer - ring.inner);
  return { x: layout.cx + r * Math.cos(angle), y: layout.cy + r * Math.sin(angle) };
}

/** A point on the circle of radius `r` about the centre at `angle`. */
export function polar(layout: Layout, r: number, angle: number): Point {
  return { x: layout.cx + r * Math.cos(angle), y: layout.cy + r * Math.sin(angle) };
}

/** The radius and angle of a point. */
export function toPolar(layout: Layout, p: Point): { r: number; angle: number } {
  return { r: Math.hypot(p.x - layout.cx, p.y - layout.cy), angle: Math.atan2(p.y - layout.cy, p.x - layout.cx) };
}
