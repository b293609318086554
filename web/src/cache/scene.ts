// What the canvas shows and how it changes within one animation step: the rings,
// the temperature glow behind each level, memory's glyphs, the cache's glyphs (solid,
// or ghost when a faster level holds the same data), the moves of the current step
// (every move takes the whole step), red flashes, pulses, and the time-lapse
// pathlines fading with age. So that tens of thousands of glyphs fit in a frame of a
// software-rasterizing browser, the static picture is an offscreen canvas redrawn
// only when it changes, the glyphs are blended straight into the frame's pixels
// (`raster.ts`), and only flashes, pulses, flights home and pathlines are vector
// shapes drawn on top.

import { type Layout, armPolyline, makeLayout, type Point, slotPoint, memoryPoint } from "./layout";
import type { CacheModel, Effects } from "./model";
import { MemoryLayout } from "./memory";
import { along, chain, ease, movePath } from "./paths";
import { flashColor, regionColor, temperatureRgb } from "./colors";
import { fillBox, fillDisc, packHex, type Rgb } from "./raster";
import type { RegionInfo } from "./types";

const KEY = 0x1000000;

/** The stage's background, under the glow (the canvas is opaque). */
const BACKGROUND = "#fbfbfc";
/** Opacity of a ghost glyph in a cache level, and in memory. */
const GHOST_CACHE = 0x55 / 255;
const GHOST_MEMORY = 0x44 / 255;
/** Per-slot marks of the current step. */
const MOVING = 1;
const FLASH = 2;
const PULSE = 4;

/** Packed colours per region, for the rasterizer. */
const RGB = new Map<number, Rgb>();

function rgbOf(region: number): Rgb {
  let rgb = RGB.get(region);
  if (rgb === undefined) {
    rgb = packHex(regionColor(region));
    RGB.set(region, rgb);
  }
  return rgb;
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
  /** Per level and slot: whether its glyph moves, flashes or pulses in this step. */
  private marks: Uint8Array[] = [];
  private frame: { image: ImageData; pixels: Uint32Array } | null = null;
  private backdrop: { key: string; layout: Layout; canvas: HTMLCanvasElement; pixels: Uint32Array } | null = null;
  /** How often the static picture was redrawn (the test hook reports it). */
  structureDraws = 0;
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
    this.mark();
  }

  /** Marks the slots that move, flash or pulse in this step, so drawing needs no lookups. */
  private mark(): void {
    this.marks = this.model.levels.map((store, level) => {
      const marks = this.marks[level]?.length === store.line.length ? this.marks[level].fill(0) : new Uint8Array(store.line.length);
      return marks;
    });
    const set = (k: number, bit: number) => {
      const marks = this.marks[Math.floor(k / KEY)];
      if (marks && k % KEY < marks.length) marks[k % KEY] |= bit;
    };
    for (const k of this.paths.keys()) set(k, MOVING);
    for (const k of this.flashes) set(k, FLASH);
    for (const k of this.pulses) set(k, PULSE);
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
    this.mark();
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
    this.mark();
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

  /**
   * Draws the frame at step progress `t` (0…1) onto `ctx`, whose bitmap spans `width` ×
   * `height` CSS pixels (the context's transform maps CSS pixels for the vector parts).
   */
  draw(ctx: CanvasRenderingContext2D, width: number, height: number, t: number): FrameCounts {
    const L = this.layout;
    const pw = ctx.canvas.width;
    const ph = ctx.canvas.height;
    const frame = this.frameBuffer(ctx, pw, ph);
    const buf = frame.pixels;
    buf.set(this.structure(pw, ph, width, height));
    const sx = pw / width;
    const sy = ph / height;
    const perRing: number[] = [];
    const e = ease(t);
    const hidden = this.hidden;
    const anyHidden = hidden.size > 0;
    // Memory's glyphs: boxes, lighter where a cache level holds the line.
    const memR = L.glyph[L.glyph.length - 1] * sx;
    let memCount = 0;
    for (const [line, region] of this.memory.lines) {
      if (anyHidden && hidden.has(region)) continue;
      const p = this.memoryPoint(line);
      const ghost = this.memoryGhost.has(line);
      fillBox(buf, pw, ph, p.x * sx, p.y * sy, memR, rgbOf(region), ghost ? GHOST_MEMORY : 1);
      memCount++;
    }
    // Cache glyphs: discs (boxes when tiny), a third opaque for ghosts; flashing and
    // pulsing ones are drawn on top as vector shapes.
    const special: { x: number; y: number; r: number; style: string }[] = [];
    this.model.levels.forEach((store, level) => {
      const r = L.glyph[level];
      const rr = r * sx;
      const box = r < 2.5;
      let count = 0;
      const ghosts = this.ghosts[level];
      const rest = this.rest[level];
      const lines = store.line;
      const regions = store.region;
      const marks = this.marks[level];
      for (let slot = 0; slot < lines.length; slot++) {
        if (Number.isNaN(lines[slot])) continue;
        const region = regions[slot];
        if (anyHidden && hidden.has(region)) continue;
        count++;
        const mark = marks[slot];
        let x = rest[2 * slot];
        let y = rest[2 * slot + 1];
        if (mark & MOVING) {
          const p = along(this.paths.get(level * KEY + slot)!, e);
          x = p.x;
          y = p.y;
        }
        if (mark & (FLASH | PULSE)) {
          const base = regionColor(region);
          const grow = mark & PULSE ? 1 + 1.1 * Math.sin(Math.PI * e) : 1;
          special.push({ x, y, r: r * grow, style: mark & FLASH ? flashColor(base, 1 - e * 0.85) : base });
          continue;
        }
        const alpha = ghosts[slot] ? GHOST_CACHE : 1;
        if (box) fillBox(buf, pw, ph, x * sx, y * sy, rr, rgbOf(region), alpha);
        else fillDisc(buf, pw, ph, x * sx, y * sy, rr, rgbOf(region), alpha);
      }
      perRing.push(count);
    });
    perRing.push(memCount);
    ctx.putImageData(frame.image, 0, 0);
    // Pathlines over the glyphs, oldest first, fading with age: one stroke per colour and age.
    let trailCount = 0;
    if (this.tail > 0) {
      const strokes = new Map<string, { path: Path2D; alpha: number; style: string }>();
      for (const tr of this.trails) {
        const age = this.step - tr.step;
        if (age >= this.tail || (anyHidden && hidden.has(tr.region))) continue;
        const style = tr.miss ? "#e0301e" : regionColor(tr.region);
        const key = `${age}|${style}`;
        let stroke = strokes.get(key);
        if (!stroke) {
          stroke = { path: new Path2D(), alpha: Math.max(0.05, 1 - age / this.tail) * 0.8, style };
          strokes.set(key, stroke);
        }
        stroke.path.moveTo(tr.points[0].x, tr.points[0].y);
        for (let i = 1; i < tr.points.length; i++) stroke.path.lineTo(tr.points[i].x, tr.points[i].y);
        trailCount++;
      }
      ctx.lineWidth = 1.2;
      for (const stroke of [...strokes.values()].sort((a, b) => a.alpha - b.alpha)) {
        ctx.globalAlpha = stroke.alpha;
        ctx.strokeStyle = stroke.style;
        ctx.stroke(stroke.path);
      }
      ctx.globalAlpha = 1;
    }
    for (const s of this.sprites) {
      if (anyHidden && hidden.has(s.region)) continue;
      const p = along(s.path, e);
      special.push({ x: p.x, y: p.y, r: L.glyph[0], style: regionColor(s.region) });
    }
    for (const s of special) {
      ctx.fillStyle = s.style;
      ctx.beginPath();
      ctx.arc(s.x, s.y, Math.max(1.5, s.r), 0, 2 * Math.PI);
      ctx.fill();
    }
    this.drawRingLabels(ctx);
    this.last = { perRing, trails: trailCount, flashing: this.flashes.size };
    return this.last;
  }

  /**
   * Where each ring's name is written: on the vertical through the CPU, just inside each
   * cache ring's outer border, and memory's just inside the outermost circle.
   */
  ringLabels(): { name: string; x: number; y: number }[] {
    const L = this.layout;
    const names = [...this.model.levels.map((l) => l.shape.name), "memory"];
    return L.rings.map((ring, i) => ({ name: names[i] ?? "", x: L.cx, y: L.cy - ring.outer + 3 }));
  }

  /** The rings' names on white pills, over the glyphs so that they stay readable. */
  private drawRingLabels(ctx: CanvasRenderingContext2D): void {
    ctx.save();
    ctx.font = "600 11px system-ui, sans-serif";
    ctx.textAlign = "center";
    ctx.textBaseline = "top";
    for (const label of this.ringLabels()) {
      const w = ctx.measureText(label.name).width + 10;
      ctx.fillStyle = "rgba(255,255,255,0.88)";
      ctx.beginPath();
      ctx.roundRect(label.x - w / 2, label.y, w, 15, 7);
      ctx.fill();
      ctx.fillStyle = "#39404d";
      ctx.fillText(label.name, label.x, label.y + 2);
    }
    ctx.restore();
  }

  /** The frame's pixel buffer, reallocated when the canvas changes size. */
  private frameBuffer(ctx: CanvasRenderingContext2D, pw: number, ph: number): { image: ImageData; pixels: Uint32Array } {
    if (!this.frame || this.frame.image.width !== pw || this.frame.image.height !== ph) {
      const image = ctx.createImageData(pw, ph);
      this.frame = { image, pixels: new Uint32Array(image.data.buffer) };
    }
    return this.frame;
  }

  /**
   * The static picture behind the glyphs (background, temperature glow, rings, arms,
   * memory's arcs, the CPU) as pixels, redrawn offscreen only when the size, the
   * region filter or a level's temperature (in steps of 1/32) changed.
   */
  private structure(pw: number, ph: number, width: number, height: number): Uint32Array {
    const temps = this.layout.rings.slice(0, -1).map((_, l) => Math.round((this.temperature[l] ?? 0) * 32));
    const key = `${pw}x${ph}|${width}x${height}|${temps.join(",")}|${[...this.hidden].sort((a, b) => a - b).join(",")}`;
    if (this.backdrop && this.backdrop.key === key && this.backdrop.layout === this.layout) return this.backdrop.pixels;
    const canvas = this.backdrop?.canvas ?? document.createElement("canvas");
    if (canvas.width !== pw) canvas.width = pw;
    if (canvas.height !== ph) canvas.height = ph;
    const ctx = canvas.getContext("2d", { willReadFrequently: true })!;
    ctx.setTransform(pw / width, 0, 0, ph / height, 0, 0);
    ctx.fillStyle = BACKGROUND;
    ctx.fillRect(0, 0, width, height);
    this.drawStructure(ctx, temps.map((q) => q / 32));
    const pixels = new Uint32Array(ctx.getImageData(0, 0, pw, ph).data.buffer);
    this.backdrop = { key, layout: this.layout, canvas, pixels };
    this.structureDraws++;
    return pixels;
  }

  private drawStructure(ctx: CanvasRenderingContext2D, temperature: number[]): void {
    const L = this.layout;
    // Temperature glow behind each level: a soft band coloured by the diverging map.
    L.rings.slice(0, -1).forEach((ring, level) => {
      const t = temperature[level] ?? 0;
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
