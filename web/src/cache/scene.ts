// What the canvas shows and how it changes within one animation step: the rings,
// the temperature glow behind each level, memory's glyphs, the cache's glyphs (solid,
// or ghost when a faster level holds the same data), the moves of the current step
// (every move takes the whole step), red flashes, pulses, and the time-lapse
// pathlines fading with age. Drawing is batched per colour so that tens of thousands
// of glyphs fit in a frame.

import { type Layout, armPolyline, makeLayout, type Point, slotPoint, memoryPoint } from "./layout";
import type { CacheModel, Effects } from "./model";
import { MemoryLayout } from "./memory";
import { along, chain, ease, movePath } from "./paths";
import { flashColor, regionColor, temperatureRgb } from "./colors";
import type { RegionInfo } from "./types";

const KEY = 0x1000000;

/** Fill styles per region: solid, ghost in a cache level, ghost in memory. */
const STYLES = new Map<number, [string, string, string]>();

function styleOf(region: number, variant: 0 | 1 | 2): string {
  let styles = STYLES.get(region);
  if (!styles) {
    const base = regionColor(region);
    styles = [base, `${base}55`, `${base}44`];
    STYLES.set(region, styles);
  }
  return styles[variant];
}

interface Trail {
  points: Point[];
  region: number;
  miss: boolean;
  step: number;
}

/** The most pathlines kept. */
const MAX_TRAILS = 30_000;

export interface FrameCounts {
  /** Glyphs drawn per cache level (solid and ghost), then memory's. */
  perRing: number[];
  trails: number;
  flashing: number;
}

export class Scene {
  layout: Layout;
  memory: MemoryLayout;
  private paths = new Map<number, Point[]>();
  private sprites: { path: Point[]; region: number }[] = [];
  private flashes = new Set<number>();
  private pulses = new Set<number>();
  private trails: Trail[] = [];
  private ghosts: Uint8Array[] = [];
  /** Resting positions of every slot (x, y interleaved), kept in step with the ranks. */
  private rest: Float32Array[] = [];
  /** Memory glyph positions, by line. */
  private memoryPoints = new Map<number, Point>();
  private memoryGhost = new Set<number>();
  step = 0;
  /** Steps of pathline history to draw (0: none). */
  tail = 0;
  hidden = new Set<number>();
  temperature: number[] = [];
  last: FrameCounts = { perRing: [], trails: 0, flashing: 0 };

  constructor(
    readonly model: CacheModel,
    readonly regions: RegionInfo[],
    width: number,
    height: number,
  ) {
    this.layout = this.makeLayout(width, height);
    this.memory = this.makeMemory();
    this.placeAll();
    this.refreshGhosts();
  }

  /** Recomputes every slot's resting position (after a load or a resize). */
  private placeAll(): void {
    this.rest = this.model.levels.map((store, level) => {
      const xy = new Float32Array(store.line.length * 2);
      for (let slot = 0; slot < store.line.length; slot++) this.placeSlot(xy, level, slot);
      return xy;
    });
    this.memoryPoints.clear();
  }

  private placeSlot(xy: Float32Array, level: number, slot: number): void {
    const store = this.model.levels[level];
    const ways = store.shape.ways;
    const p = slotPoint(this.layout, level, Math.floor(slot / ways), store.rank[slot]);
    xy[2 * slot] = p.x;
    xy[2 * slot + 1] = p.y;
  }

  private memoryPoint(line: number): Point {
    let p = this.memoryPoints.get(line);
    if (!p) {
      const { arc, index } = this.memory.arcOf(line);
      p = memoryPoint(this.layout, arc, index);
      this.memoryPoints.set(line, p);
    }
    return p;
  }

  private makeLayout(width: number, height: number): Layout {
    return makeLayout(
      this.model.levels.map((l) => ({ sets: l.shape.sets, ways: l.shape.ways })),
      width,
      height,
    );
  }

  private makeMemory(): MemoryLayout {
    const levels = this.model.levels;
    const lineSize = levels[levels.length - 1]?.shape.lineSize ?? 64;
    const ring = this.layout.rings[this.layout.rings.length - 1];
    return new MemoryLayout(this.regions, lineSize, ring, this.layout.glyph[this.layout.glyph.length - 1]);
  }

  resize(width: number, height: number): void {
    this.layout = this.makeLayout(width, height);
    const seen = this.memory.lines;
    this.memory = this.makeMemory();
    for (const [line, region] of seen) this.memory.see(line, region);
    this.placeAll();
    this.paths.clear();
    this.sprites = [];
    this.trails = [];
  }

  /** Forgets the current step's motion and the pathlines (after a jump). */
  reset(): void {
    this.paths.clear();
    this.sprites = [];
    this.flashes.clear();
    this.pulses.clear();
    this.trails = [];
    this.placeAll();
    this.refreshGhosts();
  }

  /** Starts a step made of the effects of one or more references (time-lapse). */
  begin(effects: Effects[]): void {
    this.paths.clear();
    this.sprites = [];
    this.flashes.clear();
    this.pulses.clear();
    this.step += 1;
    const key = (level: number, slot: number) => level * KEY + slot;
    for (const fx of effects) {
      for (const move of fx.moves) {
        this.memory.see(move.line, move.region);
        const path = movePath(this.layout, this.memory, move);
        if (this.tail > 0) this.trail(path, move.region, move.flash);
        if (move.kind === "evict") {
          const before = this.paths.get(key(move.from.kind === "slot" ? move.from.level : 0, move.fromSlot));
          if (before) this.paths.delete(key(move.from.kind === "slot" ? move.from.level : 0, move.fromSlot));
          const whole = before ? chain([before, path]) : path;
          if (move.level >= 0 && move.slot >= 0) this.paths.set(key(move.level, move.slot), whole);
          else this.sprites.push({ path: whole, region: move.region });
        } else {
          const k = key(move.level, move.slot);
          const before = move.kind === "shift" ? this.paths.get(k) : undefined;
          this.paths.set(k, before ? chain([before, path]) : path);
          if (move.flash) this.flashes.add(k);
        }
      }
      for (const p of fx.pulses) this.pulses.add(key(p.level, p.slot));
      for (const move of fx.moves) {
        if (move.level >= 0 && move.slot >= 0) this.placeSlot(this.rest[move.level], move.level, move.slot);
      }
    }
    this.refreshGhosts();
  }

  private trail(points: Point[], region: number, miss: boolean): void {
    this.trails.push({ points, region, miss, step: this.step });
    if (this.trails.length > MAX_TRAILS) this.trails.splice(0, this.trails.length - MAX_TRAILS);
  }

  private refreshGhosts(): void {
    const model = this.model;
    this.ghosts = model.levels.map((store, l) => {
      const flags = new Uint8Array(store.line.length);
      if (l === 0) return flags;
      for (const slot of store.index.values()) if (model.isGhost(l, slot)) flags[slot] = 1;
      return flags;
    });
    this.memoryGhost.clear();
    const below = model.levels.length;
    for (const line of this.memory.lines.keys()) {
      if (model.heldAbove(below, line, this.memory.lineSize)) this.memoryGhost.add(line);
    }
  }

  /** Where the glyph of a slot is at step progress `t`. */
  position(level: number, slot: number, t: number): Point {
    const path = this.paths.get(level * KEY + slot);
    if (path) return along(path, ease(t));
    const xy = this.rest[level];
    return { x: xy[2 * slot], y: xy[2 * slot + 1] };
  }

  /** Whether the glyph of a slot is flashing red in this step. */
  isFlashing(level: number, slot: number): boolean {
    return this.flashes.has(level * KEY + slot);
  }

  /** Draws the frame at step progress `t` (0…1). */
  draw(ctx: CanvasRenderingContext2D, width: number, height: number, t: number): FrameCounts {
    const L = this.layout;
    ctx.clearRect(0, 0, width, height);
    this.drawStructure(ctx);
    const perRing: number[] = [];
    const e = ease(t);
    // Memory's glyphs.
    const memR = L.glyph[L.glyph.length - 1];
    const memBatches = new Map<string, Path2D>();
    let memCount = 0;
    for (const [line, region] of this.memory.lines) {
      if (this.hidden.has(region)) continue;
      const p = this.memoryPoint(line);
      const style = styleOf(region, this.memoryGhost.has(line) ? 2 : 0);
      let path = memBatches.get(style);
      if (!path) memBatches.set(style, (path = new Path2D()));
      path.rect(p.x - memR, p.y - memR, memR * 2, memR * 2);
      memCount++;
    }
    for (const [style, path] of memBatches) {
      ctx.fillStyle = style;
      ctx.fill(path);
    }
    // Pathlines, oldest first, fading with age.
    let trailCount = 0;
    if (this.tail > 0) {
      ctx.lineWidth = 1.2;
      for (const tr of this.trails) {
        const age = this.step - tr.step;
        if (age >= this.tail || this.hidden.has(tr.region)) continue;
        ctx.globalAlpha = Math.max(0.05, 1 - age / this.tail) * 0.8;
        ctx.strokeStyle = tr.miss ? "#e0301e" : regionColor(tr.region);
        ctx.beginPath();
        ctx.moveTo(tr.points[0].x, tr.points[0].y);
        for (let i = 1; i < tr.points.length; i++) ctx.lineTo(tr.points[i].x, tr.points[i].y);
        ctx.stroke();
        trailCount++;
      }
      ctx.globalAlpha = 1;
    }
    // Cache glyphs, batched per colour; flashing and pulsing ones on top.
    const special: { x: number; y: number; r: number; style: string }[] = [];
    this.model.levels.forEach((store, level) => {
      const r = L.glyph[level];
      const batches = new Map<string, Path2D>();
      let count = 0;
      const ghosts = this.ghosts[level];
      const rest = this.rest[level];
      for (const slot of store.index.values()) {
        const region = store.region[slot];
        if (this.hidden.has(region)) continue;
        count++;
        const k = level * KEY + slot;
        const path = this.paths.get(k);
        let x: number;
        let y: number;
        if (path) {
          const p = along(path, e);
          x = p.x;
          y = p.y;
        } else {
          x = rest[2 * slot];
          y = rest[2 * slot + 1];
        }
        const base = regionColor(region);
        const flashing = this.flashes.has(k);
        const pulsing = this.pulses.has(k);
        if (flashing || pulsing) {
          const grow = pulsing ? 1 + 1.1 * Math.sin(Math.PI * e) : 1;
          special.push({ x, y, r: r * grow, style: flashing ? flashColor(base, 1 - e * 0.85) : base });
          continue;
        }
        const style = styleOf(region, ghosts[slot] ? 1 : 0);
        let batch = batches.get(style);
        if (!batch) batches.set(style, (batch = new Path2D()));
        if (r < 2.5) batch.rect(x - r, y - r, r * 2, r * 2);
        else {
          batch.moveTo(x + r, y);
          batch.arc(x, y, r, 0, 2 * Math.PI);
        }
      }
      for (const [style, path] of batches) {
        ctx.fillStyle = style;
        ctx.fill(path);
      }
      perRing.push(count);
    });
    perRing.push(memCount);
    for (const s of this.sprites) {
      if (this.hidden.has(s.region)) continue;
      const p = along(s.path, e);
      special.push({ x: p.x, y: p.y, r: L.glyph[0], style: regionColor(s.region) });
    }
    for (const s of special) {
      ctx.fillStyle = s.style;
      ctx.beginPath();
      ctx.arc(s.x, s.y, Math.max(1.5, s.r), 0, 2 * Math.PI);
      ctx.fill();
    }
    this.last = { perRing, trails: trailCount, flashing: this.flashes.size };
    return this.last;
  }

  private drawStructure(ctx: CanvasRenderingContext2D): void {
    const L = this.layout;
    // Temperature glow behind each level: a soft band coloured by the diverging map.
    L.rings.slice(0, -1).forEach((ring, level) => {
      const t = this.temperature[level] ?? 0;
      const [r, g, b] = temperatureRgb(t);
      const strength = 0.18 + 0.5 * Math.abs(t);
      const gradient = ctx.createRadialGradient(L.cx, L.cy, Math.max(0, ring.inner - 6), L.cx, L.cy, ring.outer + 6);
      gradient.addColorStop(0, `rgba(${r},${g},${b},0)`);
      gradient.addColorStop(0.5, `rgba(${r},${g},${b},${strength})`);
      gradient.addColorStop(1, `rgba(${r},${g},${b},0)`);
      ctx.fillStyle = gradient;
      ctx.beginPath();
      ctx.arc(L.cx, L.cy, ring.outer + 6, 0, 2 * Math.PI);
      ctx.arc(L.cx, L.cy, Math.max(0, ring.inner - 6), 0, 2 * Math.PI, true);
      ctx.fill();
    });
    // Ring borders, set arms (when there are few enough to see), memory's arcs.
    ctx.strokeStyle = "rgba(120,130,145,0.45)";
    ctx.lineWidth = 1;
    for (const ring of L.rings) {
      ctx.beginPath();
      ctx.arc(L.cx, L.cy, ring.outer, 0, 2 * Math.PI);
      ctx.stroke();
    }
    ctx.strokeStyle = "rgba(120,130,145,0.18)";
    L.levels.forEach((g, level) => {
      if (g.sets > 256) return;
      for (let set = 0; set < g.sets; set++) {
        const pts = armPolyline(L, level, set);
        ctx.beginPath();
        ctx.moveTo(pts[0].x, pts[0].y);
        for (const p of pts.slice(1)) ctx.lineTo(p.x, p.y);
        ctx.stroke();
      }
    });
    const mem = L.rings[L.rings.length - 1];
    for (const arc of this.memory.arcs) {
      if (this.hidden.has(arc.region)) continue;
      ctx.strokeStyle = `${regionColor(arc.region)}66`;
      ctx.lineWidth = 3;
      ctx.beginPath();
      ctx.arc(L.cx, L.cy, mem.outer - 2, arc.start, arc.end);
      ctx.stroke();
    }
    ctx.fillStyle = "#39404d";
    ctx.beginPath();
    ctx.arc(L.cx, L.cy, L.cpu, 0, 2 * Math.PI);
    ctx.fill();
    ctx.fillStyle = "#fff";
    ctx.font = `${Math.max(9, L.cpu * 0.5)}px system-ui, sans-serif`;
    ctx.textAlign = "center";
    ctx.textBaseline = "middle";
    ctx.fillText("CPU", L.cx, L.cy);
  }
}
