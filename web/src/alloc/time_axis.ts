// The time axis under the allocation map's strips (occupancy bar, metric charts, grid
// of bins, stacked bars): the main view's window, times from the run's start in s, ms
// or µs on 1-2-5 steps, "0 s" at the origin (the run's time 0 for the map of a window
// of a run), its title in the gutter on its left.

import { h } from "../app/dom";
import { drawXAxis } from "../canvas_axis";
import { timeTicks } from "../format";
import type { AllocContext } from "./context";
import { xOf } from "./viewport";

const HEIGHT = 20;

export class TimeAxis {
  readonly el: HTMLCanvasElement;

  /** `width` pixels of time after `gutter` pixels of room for the title. */
  constructor(
    private readonly ctx: AllocContext,
    private readonly width: number,
    private readonly gutter: number,
    testid: string,
  ) {
    this.el = h("canvas", { class: "alloc-axis", width: gutter + width, height: HEIGHT, "data-testid": testid, "data-axis": "time" });
  }

  paint(): void {
    const g = this.el.getContext("2d")!;
    g.clearRect(0, 0, this.el.width, HEIGHT);
    const v = this.ctx.state.view;
    const start = this.ctx.meta.time_origin_ns;
    const ticks = timeTicks(v.t0 - start, v.t1 - start, Math.max(2, Math.floor(this.width / 110)));
    drawXAxis(g, ticks, (t) => xOf(v, this.width, t + start), this.gutter, 0, this.width);
    if (this.gutter < 40) return;
    g.font = "10.5px system-ui, sans-serif";
    g.fillStyle = "#5d6575";
    g.textAlign = "right";
    g.textBaseline = "top";
    g.fillText("time →", this.gutter - 6, 5);
  }
}
