// The occupancy bar under the main view (the paper's Figure 5): the selected bin's (or
// every bin's) occupancy over the main view's time window, blue (0 %) → red (100 %),
// the occupancy chart's quantity and colours, with no-activity zones cushioned in the
// chosen style; its legend, and the time axis under it. A click on the bar places or
// removes a cushion cursor, as on the map.

import { h } from "../app/dom";
import { barQuery, modelQuery } from "./api";
import type { AllocContext } from "./context";
import { ImageStrip } from "./image_strip";
import { rampLegend } from "./ramp";
import { TimeAxis } from "./time_axis";
import { timeAt } from "./viewport";

export const BAR_HEIGHT = 26;

/** The legend of every occupancy bar (this one, the grid's and the stacked ones). */
export function occupancyLegend(testid: string): HTMLElement {
  return rampLegend(testid, "Occupancy (reserved / capacity)", "0 %", "100 %", "· shading: cushions over quiet stretches, flat where busy");
}

/** Whole-ns bounds of a window, as the server takes them. */
export function windowParams(t0: number, t1: number): { t0: number; t1: number } {
  const a = Math.max(0, Math.floor(t0));
  return { t0: a, t1: Math.max(a + 1, Math.ceil(t1)) };
}

export class OccupancyBar {
  readonly el: HTMLElement;
  private readonly strip: ImageStrip;
  private readonly axis: TimeAxis;

  constructor(
    private readonly ctx: AllocContext,
    private readonly width: number,
  ) {
    const bar = h("canvas", { class: "alloc-bar", width, height: BAR_HEIGHT, "data-testid": "alloc-bar", title: "Occupancy (reserved / capacity): blue 0 % → red 100 %; cushions mark no-activity zones" });
    this.axis = new TimeAxis(ctx, width, 0, "alloc-bar-axis");
    this.strip = new ImageStrip(ctx, bar);
    this.el = h("div", { class: "alloc-bar-wrap" }, bar, this.axis.el, occupancyLegend("alloc-bar-legend"));
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
    this.axis.paint();
  }

  /** Repaints the cursors only. */
  paint(): void {
    this.strip.paint();
  }
}
