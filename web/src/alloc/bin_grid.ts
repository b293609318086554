// The grid of bins (the paper's §4.1.4, Figures 8 and 9): one small map per bin, each
// with its occupancy bar. Correlated by time, the views are stacked on one shared time
// axis (the main view's window); correlated by address, they stand side by side, each
// bin's address range scaled to the same height, each with the paper's red bar at its
// right whose height is the bin's mean free memory over the window (Figure 8: the
// fullest bins have the shortest bar). Cushion cursors are drawn across every view, and
// a click in any of them places or removes one.

import { h, replaceChildren } from "../app/dom";
import { formatBytes } from "../format";
import { type AllocBin, type MetricsDoc, barQuery, mapQuery, modelQuery } from "./api";
import type { AllocContext } from "./context";
import { ImageStrip } from "./image_strip";
import { windowParams } from "./occupancy_bar";
import { TimeAxis } from "./time_axis";
import { timeAt } from "./viewport";

/** The most bins the grid shows (the largest by block count). */
export const GRID_BINS = 24;

/** Samples of the free-memory query, averaged over the window. */
const FREE_SAMPLES = 64;

interface Cell {
  bin: AllocBin;
  map: ImageStrip;
  bar: ImageStrip;
  /** The red free-memory bar (address mode only). */
  free: HTMLElement | null;
  /** The query the free bar shows (or is loading). */
  freeUrl: string;
  width: number;
  height: number;
  /** Its own time axis (address mode, where the views stand side by side). */
  axis: TimeAxis | null;
}

/**
 * The mean free fraction (1 − occupancy, clamped to 0…1) over the samples where the bin
 * has a capacity; `null` when it has none in the window.
 */
export function freeFraction(doc: Pick<MetricsDoc, "occupancy" | "capacity_bytes">): number | null {
  let sum = 0;
  let n = 0;
  doc.occupancy.forEach((o, i) => {
    if (!(doc.capacity_bytes[i] > 0)) return;
    sum += Math.min(1, Math.max(0, 1 - o));
    n++;
  });
  return n === 0 ? null : sum / n;
}

export class BinGrid {
  readonly el: HTMLElement;
  private readonly body: HTMLElement;
  private cells: Cell[] = [];
  private layoutKey = "";
  /** The shared time axis under the time-correlated grid. */
  private readonly axis: TimeAxis;

  /**
   * `width`: room for the address-correlated grid; `timeWidth` and `offset`: the width
   * and left offset of the main view, so time-correlated views line up under it.
   */
  constructor(
    private readonly ctx: AllocContext,
    private readonly width: number,
    private readonly timeWidth: number,
    private readonly offset: number,
  ) {
    this.body = h("div", { class: "alloc-grid-body" });
    this.axis = new TimeAxis(ctx, timeWidth, offset, "alloc-grid-axis");
    this.el = h("div", { class: "alloc-grid", "data-testid": "alloc-grid" }, this.body, this.axis.el);
  }

  /** The bins shown: the largest by block count, in axis order. */
  private shownBins(): AllocBin[] {
    const bins = [...this.ctx.meta.bins].filter((b) => b.blocks > 0 || b.kind === "pool" || b.kind === "heap");
    if (bins.length <= GRID_BINS) return bins;
    return bins
      .sort((a, b) => b.blocks - a.blocks)
      .slice(0, GRID_BINS)
      .sort((a, b) => a.id - b.id);
  }

  get settled(): boolean {
    return this.cells.every((c) => c.map.settled && c.bar.settled);
  }

  /** Lays the cells out again if the mode or the model changed, then updates images. */
  update(): void {
    const mode = this.ctx.state.gridMode;
    const bins = this.shownBins();
    const key = `${mode}|${this.ctx.meta.pool ?? ""}|${bins.map((b) => b.id).join(",")}`;
    if (key !== this.layoutKey) {
      this.layoutKey = key;
      this.layout(mode, bins);
    }
    const { state, api } = this.ctx;
    const v = state.view;
    const w = windowParams(v.t0, v.t1);
    this.axis.el.style.display = mode === "time" ? "" : "none";
    this.axis.paint();
    for (const c of this.cells) {
      const q = { ...mapQuery(state.draw, [c.bin.id]), ...w, a0: c.bin.axis_start, a1: Math.max(c.bin.axis_end, c.bin.axis_start + 1), w: c.width, h: c.height };
      c.map.update({ url: api.url("tile", q), ...w });
      c.axis?.paint();
      const bq = { ...modelQuery(state.draw), ...barQuery(state.bar), ...w, bin: c.bin.id, w: c.width, h: 8 };
      c.bar.update({ url: api.url("bar", bq), ...w });
      if (c.free) this.updateFree(c, { ...modelQuery(state.draw), ...w, bin: c.bin.id, samples: FREE_SAMPLES });
    }
  }

  /** Fetches the bin's mean free memory over the window into its red bar. */
  private updateFree(c: Cell, q: Record<string, string | number>): void {
    const url = this.ctx.api.url("metrics", q);
    if (url === c.freeUrl) return;
    c.freeUrl = url;
    this.ctx.api
      .json<MetricsDoc>("metrics", q)
      .then((doc) => {
        if (c.freeUrl !== url || !c.free) return;
        const free = freeFraction(doc);
        const fill = c.free.firstElementChild as HTMLElement;
        fill.style.height = `${((free ?? 0) * 100).toFixed(1)}%`;
        c.free.dataset.free = free === null ? "" : free.toFixed(4);
        c.free.title = free === null ? "no capacity in this window" : `free memory, mean over the window: ${(free * 100).toFixed(1)} %`;
      })
      .catch((e: unknown) => this.ctx.report(e instanceof Error ? e.message : String(e)));
  }

  /** Repaints the cursors only. */
  paint(): void {
    for (const c of this.cells) {
      c.map.paint();
      c.bar.paint();
    }
  }

  private layout(mode: "time" | "address", bins: AllocBin[]): void {
    this.el.dataset.mode = mode;
    const cells: Cell[] = [];
    const nodes: HTMLElement[] = [];
    const perRow = Math.max(1, Math.floor((this.width + 12) / 232));
    // Address mode keeps 8 px of each cell for the free-memory bar.
    const cw = mode === "time" ? this.timeWidth : Math.floor((this.width - 12 * (perRow - 1)) / perRow) - 8;
    const ch = mode === "time" ? Math.max(40, Math.min(72, Math.floor(560 / Math.max(1, bins.length)))) : 130;
    for (const bin of bins) {
      const mapCanvas = h("canvas", { class: "alloc-cell-map", width: cw, height: ch, "data-bin": bin.id });
      const barCanvas = h("canvas", { class: "alloc-cell-bar", width: cw, height: 8 });
      const free = mode === "address" ? h("div", { class: "alloc-cell-free", "data-testid": "alloc-cell-free", style: `height:${ch}px` }, h("div", {})) : null;
      const axis = mode === "address" ? new TimeAxis(this.ctx, cw, 0, "alloc-cell-axis") : null;
      const cell: Cell = { bin, map: new ImageStrip(this.ctx, mapCanvas), bar: new ImageStrip(this.ctx, barCanvas), free, freeUrl: "", width: cw, height: ch, axis };
      for (const canvas of [mapCanvas, barCanvas]) {
        canvas.addEventListener("click", (e) => {
          const r = canvas.getBoundingClientRect();
          const v = this.ctx.state.view;
          this.ctx.toggleCursor(timeAt(v, cw, e.clientX - r.left), (6 * (v.t1 - v.t0)) / cw);
        });
      }
      cells.push(cell);
      const title = `${bin.name} · ${bin.blocks.toLocaleString("en-US")} blocks · ${formatBytes(bin.capacity)}`;
      // By address a cell is as wide as its view and free bar (its caption is cut to fit).
      const style = mode === "time" ? `margin-left:${this.offset}px` : `width:${cw + 8}px`;
      const map = free ? h("div", { class: "alloc-cell-row" }, mapCanvas, free) : mapCanvas;
      nodes.push(h("figure", { class: "alloc-cell", "data-testid": "alloc-cell", title, style }, h("figcaption", {}, title), map, barCanvas, axis?.el ?? ""));
    }
    this.cells = cells;
    this.body.className = `alloc-grid-body mode-${mode}`;
    replaceChildren(this.body, ...nodes);
  }
}
