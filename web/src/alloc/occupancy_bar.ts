// The occupancy bar under the main view (the paper's Figure 5): the selected bin's (or
// every bin's) occupancy over the main view's time window, blue (empty) → red (full),
// with no-activity zones cushioned in the chosen style; and the time axis under it.
// A click on the bar places or removes a cushion cursor, as on the map.

import { scaleLinear } from "d3-scale";
import { h } from "../app/dom";
import { formatDuration } from "../format";
import { barQuery, modelQuery } from "./api";
import type { AllocContext } from "./context";
import { ImageStrip } from "./image_strip";
import { timeAt } from "./viewport";

export const BAR_HEIGHT = 26;
const AXIS_HEIGHT = 20;

/** Whole-ns bounds of a window, as the server takes them. */
export function windowParams(t0: number, t1: number): { t0: number; t1: number } {
  const a = Math.max(0, Math.floor(t0));
  return { t0: a, t1: Math.max(a + 1, Math.ceil(t1)) };
}

export class OccupancyBar {
  readonly el: HTMLElement;
  private readonly strip: ImageStrip;
  private readonly axis: HTMLCanvasElement;

  constructor(
    private readonly ctx: AllocContext,
    private readonly width: number,
  ) {
    const bar = h("canvas", { class: "alloc-bar", width, height: BAR_HEIGHT, "data-testid": "alloc-bar", title: "Occupancy: blue empty → red full; cushions mark no-activity zones" });
    this.axis = h("canvas", { class: "alloc-axis", width, height: AXIS_HEIGHT });
    this.strip = new ImageStrip(ctx, bar);
    this.el = h("div", { class: "alloc-bar-wrap" }, bar, this.axis);
    bar.addEventListener("click", (e) => {
      const r = bar.getBoundingClientRect();
      const v = ctx.state.view;
      ctx.toggleCursor(timeAt(v, width, e.clientX - r.left), (6 * (v.t1 - v.t0)) / width);
    });
  }

  get settled(): boolean {
    return this.strip.settled;
  }

  update(): void {
    const { state, api } = this.ctx;
    const v = state.view;
    const w = windowParams(v.t0, v.t1);
    const q: Record<string, string | number> = { ...modelQuery(state.draw), ...barQuery(state.bar), ...w, w: this.width, h: BAR_HEIGHT };
    if (state.draw.bin !== null) q.bin = state.draw.bin;
    this.strip.update({ url: api.url("bar", q), t0: w.t0, t1: w.t1 });
    this.paintAxis();
  }

  /** Repaints the cursors only. */
  paint(): void {
    this.strip.paint();
  }

  private paintAxis(): void {
    const g = this.axis.getContext("2d")!;
    g.clearRect(0, 0, this.width, AXIS_HEIGHT);
    const v = this.ctx.state.view;
    const start = this.ctx.meta.run.start_ns;
    const scale = scaleLinear().domain([v.t0 - start, v.t1 - start]).range([0, this.width]);
    g.fillStyle = "#6b7385";
    g.strokeStyle = "#b9bec7";
    g.font = "11px system-ui, sans-serif";
    g.textBaseline = "top";
    for (const t of scale.ticks(8)) {
      const x = Math.round(scale(t)) + 0.5;
      g.beginPath();
      g.moveTo(x, 0);
      g.lineTo(x, 4);
      g.stroke();
      const label = formatDuration(t);
      const w = g.measureText(label).width;
      g.fillText(label, Math.min(Math.max(x - w / 2, 0), this.width - w), 5);
    }
  }
}
