// The allocation map's main view: time → x, compact address → y (upwards), drawn from
// the server's PNG tiles at the zoom level that matches the screen (coarser tiles
// stand in while finer ones load). Wheel zooms (Shift: time only, Alt: addresses
// only), drag pans, a click places or removes a cushion cursor, and the mouse brushes
// the block under it. A gutter on the left names the bins and the addresses.

import { h } from "../app/dom";
import { ellipsize } from "../format";
import { type BlockDetails, mapQuery, queryKey } from "./api";
import type { AllocContext } from "./context";
import { drawCursors } from "./cursors";
import { ImageLoader, TILE_SIZE, type TileRef, parentTile, tileKey, tilesFor } from "./tiles";
import { type Extent, addressAt, panBy, timeAt, xOf, yOf, zoomAt } from "./viewport";

/** Width of the address gutter, pixels. */
export const GUTTER = 118;

/** Wheel zoom per pixel of scroll. */
const WHEEL_RATE = 0.0018;

export class MainView {
  readonly el: HTMLElement;
  readonly canvas: HTMLCanvasElement;
  private readonly gutter: HTMLCanvasElement;
  private readonly loader: ImageLoader;
  private frame = 0;
  private brushSeq = 0;
  private brushBusy = false;
  private brushNext: { x: number; y: number } | null = null;
  private drag: { x: number; y: number; start: Extent; moved: boolean } | null = null;

  constructor(
    private readonly ctx: AllocContext,
    readonly width: number,
    readonly height: number,
  ) {
    this.canvas = h("canvas", { class: "alloc-main", width, height, "data-testid": "alloc-main" });
    this.gutter = h("canvas", { class: "alloc-gutter", width: GUTTER, height });
    this.el = h("div", { class: "alloc-main-wrap" }, this.gutter, this.canvas);
    this.loader = new ImageLoader(
      (url) => ctx.api.image(url),
      () => this.draw(),
      (m) => ctx.report(m),
    );
    this.canvas.addEventListener("wheel", (e) => this.onWheel(e), { passive: false });
    this.gutter.addEventListener("mousemove", (e) => this.gutterTitle(e));
    this.canvas.addEventListener("mousedown", (e) => this.onDown(e));
    window.addEventListener("mousemove", (e) => this.onMove(e));
    window.addEventListener("mouseup", (e) => this.onUp(e));
    this.canvas.addEventListener("mouseleave", () => {
      if (!this.drag) ctx.setBrushed(null);
    });
  }

  /** Redraws on the next animation frame. */
  draw(): void {
    if (this.frame) return;
    this.frame = requestAnimationFrame(() => {
      this.frame = 0;
      this.paint();
    });
  }

  /** Tiles still loading (0 when the view is complete). */
  get pending(): number {
    return this.loader.pending;
  }

  private tileUrl(t: TileRef): string {
    return this.ctx.api.url("tile", { ...mapQuery(this.ctx.state.draw), zx: t.zx, zy: t.zy, x: t.x, y: t.y, size: TILE_SIZE });
  }

  private paint(): void {
    const { state, grid } = this.ctx;
    const v = state.view;
    const g = this.canvas.getContext("2d")!;
    g.imageSmoothingEnabled = true;
    g.fillStyle = "#ffffff";
    g.fillRect(0, 0, this.width, this.height);
    const params = queryKey(mapQuery(state.draw));
    const tiles = tilesFor(grid, v, this.width, this.height);
    const wishes: { key: string; url: string }[] = [];
    for (const t of tiles) {
      const key = tileKey(params, t);
      const img = this.loader.get(key);
      if (img) {
        this.blit(g, img, t, t, v);
        continue;
      }
      wishes.push({ key, url: this.tileUrl(t) });
      // A coarser tile already loaded stands in.
      for (let up = 1; up <= 6; up++) {
        const p = parentTile(grid, t, up);
        if (!p) break;
        const coarse = this.loader.get(tileKey(params, p));
        if (coarse) {
          this.blit(g, coarse, p, t, v);
          break;
        }
      }
    }
    this.loader.want(wishes);
    this.el.dataset.pending = String(this.loader.pending);
    const xs = state.cursors.map((t) => xOf(v, this.width, t));
    drawCursors(g, xs, this.height, this.ctx.cursorStyle());
    if (state.brushed) this.outline(g, state.brushed, v);
    this.paintGutter(v);
  }

  /** Draws the part of `img` (the picture of tile `src`) that covers tile `dst`. */
  private blit(g: CanvasRenderingContext2D, img: ImageBitmap, src: TileRef, dst: TileRef, v: Extent): void {
    const sx = ((dst.t0 - src.t0) / (src.t1 - src.t0)) * img.width;
    const sw = ((dst.t1 - dst.t0) / (src.t1 - src.t0)) * img.width;
    // Image rows run from the tile's top (its highest address) down.
    const sy = ((src.a1 - dst.a1) / (src.a1 - src.a0)) * img.height;
    const sh = ((dst.a1 - dst.a0) / (src.a1 - src.a0)) * img.height;
    const x0 = xOf(v, this.width, dst.t0);
    const x1 = xOf(v, this.width, dst.t1);
    const y0 = yOf(v, this.height, dst.a1);
    const y1 = yOf(v, this.height, dst.a0);
    g.drawImage(img, sx, sy, sw, sh, x0, y0, x1 - x0, y1 - y0);
  }

  private outline(g: CanvasRenderingContext2D, b: BlockDetails, v: Extent): void {
    const x0 = Math.max(-2, xOf(v, this.width, b.t_alloc));
    const x1 = Math.min(this.width + 2, xOf(v, this.width, b.t_end));
    const y0 = Math.max(-2, yOf(v, this.height, b.y1));
    const y1 = Math.min(this.height + 2, yOf(v, this.height, b.y0));
    g.save();
    g.strokeStyle = "#111";
    g.lineWidth = 1.5;
    g.setLineDash([4, 2]);
    const pad = 2;
    g.strokeRect(x0 - pad, y0 - pad, Math.max(1, x1 - x0) + 2 * pad, Math.max(1, y1 - y0) + 2 * pad);
    g.restore();
  }

  private paintGutter(v: Extent): void {
    const g = this.gutter.getContext("2d")!;
    g.clearRect(0, 0, GUTTER, this.height);
    g.font = "11px system-ui, sans-serif";
    g.textBaseline = "middle";
    // The raw addresses at the top and bottom edges keep their rows; a bin's name goes
    // at its middle, only where it overlaps neither them nor the name above it.
    const edge = 14;
    let lastTop = this.height - edge;
    const bins = this.ctx.meta.bins;
    for (const b of bins) {
      if (b.axis_end <= v.a0 || b.axis_start >= v.a1) continue;
      const top = Math.max(0, yOf(v, this.height, b.axis_end));
      const bottom = Math.min(this.height, yOf(v, this.height, b.axis_start));
      g.fillStyle = b.id % 2 === 0 ? "#e9ecf2" : "#dde2ea";
      g.fillRect(GUTTER - 6, top, 6, Math.max(1, bottom - top));
      const mid = (top + bottom) / 2;
      if (bottom - top >= 13 && mid >= edge + 6 && mid + 6 <= lastTop) {
        g.fillStyle = "#444b5a";
        g.textAlign = "right";
        g.fillText(fit(g, b.name, GUTTER - 12), GUTTER - 10, mid);
        lastTop = mid - 6;
      }
    }
    g.fillStyle = "#6b7385";
    g.textAlign = "left";
    g.textBaseline = "top";
    g.fillText(fit(g, rawAddress(this.ctx, v.a1), GUTTER - 8), 2, 1);
    g.textBaseline = "bottom";
    g.fillText(fit(g, rawAddress(this.ctx, v.a0), GUTTER - 8), 2, this.height - 1);
  }

  /** The gutter's tooltip: the full name and range of the bin under the mouse. */
  private gutterTitle(e: MouseEvent): void {
    const r = this.gutter.getBoundingClientRect();
    const a = addressAt(this.ctx.state.view, this.height, e.clientY - r.top);
    const bin = this.ctx.meta.bins.find((b) => b.axis_start <= a && a < b.axis_end);
    this.gutter.title = bin ? `${bin.name}: ${bin.start_hex} – ${bin.end_hex}` : "";
  }

  private localPoint(e: MouseEvent): { x: number; y: number } {
    const r = this.canvas.getBoundingClientRect();
    return { x: e.clientX - r.left, y: e.clientY - r.top };
  }

  private onWheel(e: WheelEvent): void {
    e.preventDefault();
    const { x, y } = this.localPoint(e);
    const k = Math.exp(-e.deltaY * WHEEL_RATE * (e.deltaMode === 1 ? 16 : 1));
    const kx = e.altKey ? 1 : k;
    const ky = e.shiftKey ? 1 : k;
    const v = zoomAt(this.ctx.state.view, this.ctx.limits, kx, ky, x / this.width, 1 - y / this.height);
    this.ctx.setView(v);
  }

  private onDown(e: MouseEvent): void {
    if (e.button !== 0) return;
    e.preventDefault();
    const { x, y } = this.localPoint(e);
    this.drag = { x, y, start: this.ctx.state.view, moved: false };
  }

  private onMove(e: MouseEvent): void {
    const { x, y } = this.localPoint(e);
    if (this.drag) {
      const dx = x - this.drag.x;
      const dy = y - this.drag.y;
      if (Math.abs(dx) + Math.abs(dy) > 3) this.drag.moved = true;
      if (this.drag.moved) {
        this.ctx.setView(panBy(this.drag.start, this.ctx.limits, dx, dy, this.width, this.height));
      }
      return;
    }
    if (x < 0 || y < 0 || x >= this.width || y >= this.height) return;
    this.brush(x, y);
  }

  private onUp(e: MouseEvent): void {
    const drag = this.drag;
    this.drag = null;
    if (!drag || drag.moved) return;
    const { x } = this.localPoint(e);
    const v = this.ctx.state.view;
    this.ctx.toggleCursor(timeAt(v, this.width, x), (6 * (v.t1 - v.t0)) / this.width);
  }

  /** Asks for the block under (x, y), one request at a time (the latest point wins). */
  private brush(x: number, y: number): void {
    if (!this.ctx.api.canBrush) return;
    if (this.brushBusy) {
      this.brushNext = { x, y };
      return;
    }
    this.brushBusy = true;
    const seq = ++this.brushSeq;
    const v = this.ctx.state.view;
    const params = {
      ...mapQuery(this.ctx.state.draw),
      t: Math.max(0, Math.round(timeAt(v, this.width, x + 0.5))),
      y: Math.max(0, Math.floor(addressAt(v, this.height, y + 0.5))),
      dt: Math.round((v.t1 - v.t0) / this.width / 2),
      dy: Math.floor((v.a1 - v.a0) / this.height / 2),
    };
    this.ctx.api
      .json<{ block: BlockDetails | null }>("block", params)
      .then((answer) => {
        if (seq === this.brushSeq && !this.drag) this.ctx.setBrushed(answer.block);
      })
      .catch((err: unknown) => this.ctx.report(err instanceof Error ? err.message : String(err)))
      .finally(() => {
        this.brushBusy = false;
        const next = this.brushNext;
        this.brushNext = null;
        if (next) this.brush(next.x, next.y);
      });
  }
}

/** `text` cut with an ellipsis to fit `width` pixels (the gutter's title has it whole). */
export function fit(g: CanvasRenderingContext2D, text: string, width: number): string {
  return ellipsize(text, width, (s) => g.measureText(s).width);
}

/** The raw address at axis position `a`, as hex. */
export function rawAddress(ctx: AllocContext, a: number): string {
  const bin = ctx.meta.bins.find((b) => b.axis_start <= a && a <= b.axis_end);
  if (!bin) return "";
  const raw = BigInt(bin.start_hex) + BigInt(Math.max(0, Math.floor(a - bin.axis_start)));
  return `0x${raw.toString(16)}`;
}
