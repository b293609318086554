// Stacked occupancy bars of all bins (the paper's Figure 6): one bar per bin over the
// main view's time window, so occupancy evolutions compare at a glance; flat stretches
// are bursts of activity, cushions are quiet stretches. Cursors are drawn across them.

import { h, replaceChildren } from "../app/dom";
import { barQuery, modelQuery } from "./api";
import type { AllocContext } from "./context";
import { ImageStrip } from "./image_strip";
import { windowParams } from "./occupancy_bar";
import { TimeAxis } from "./time_axis";
import { timeAt } from "./viewport";

const BAR_H = 14;
const GAP = 3;
const LABEL_GAP = 8;
const MAX_BARS = 48;

export class StackedBars {
  readonly el: HTMLElement;
  private readonly labels: HTMLElement;
  private readonly row: HTMLElement;
  private readonly axis: TimeAxis;
  private strip: ImageStrip | null = null;
  private canvas: HTMLCanvasElement | null = null;
  private binsKey = "";
  private ids: number[] = [];

  /** `width` and `offset`: the main view's width and left offset, so the bars line up
   * under it; bin names fill the offset. */
  constructor(
    private readonly ctx: AllocContext,
    private readonly width: number,
    offset: number,
  ) {
    this.labels = h("div", { class: "alloc-stack-labels", style: `width:${offset - LABEL_GAP}px;margin-right:${LABEL_GAP}px` });
    this.row = h("div", { class: "alloc-stack" }, this.labels);
    this.axis = new TimeAxis(ctx, width, offset, "alloc-stacked-axis");
    this.el = h("div", { "data-testid": "alloc-stacked" }, this.row, this.axis.el);
  }

  get settled(): boolean {
    return this.strip?.settled ?? true;
  }

  update(): void {
    const bins = this.ctx.meta.bins.filter((b) => b.blocks > 0).slice(0, MAX_BARS);
    const key = `${this.ctx.meta.pool ?? ""}|${bins.map((b) => b.id).join(",")}`;
    const w = this.width;
    if (key !== this.binsKey) {
      this.binsKey = key;
      this.ids = bins.map((b) => b.id);
      const height = Math.max(1, bins.length * BAR_H + (bins.length - 1) * GAP);
      const canvas = h("canvas", { class: "alloc-stack-bars", width: w, height });
      canvas.addEventListener("click", (e) => {
        const r = canvas.getBoundingClientRect();
        const v = this.ctx.state.view;
        this.ctx.toggleCursor(timeAt(v, w, e.clientX - r.left), (6 * (v.t1 - v.t0)) / w);
      });
      this.canvas?.remove();
      this.canvas = canvas;
      this.strip = new ImageStrip(this.ctx, canvas);
      replaceChildren(this.labels, ...bins.map((b) => h("div", { class: "alloc-stack-label", style: `height:${BAR_H}px;margin-bottom:${GAP}px`, title: b.name }, b.name)));
      this.row.append(canvas);
    }
    this.axis.paint();
    if (!this.strip || this.ids.length === 0) return;
    const { state, api } = this.ctx;
    const win = windowParams(state.view.t0, state.view.t1);
    const q = { ...modelQuery(state.draw), ...barQuery(state.bar), ...win, bins: this.ids.join(","), w, bar_h: BAR_H, gap: GAP };
    this.strip.update({ url: api.url("bars", q), ...win });
  }

  paint(): void {
    this.strip?.paint();
  }
}
