// Metric charts under the map, on the main view's time axis: occupancy, waste
// (reserved − requested), fragmentation (1 − largest free run / total free), event rate
// and, for traces recorded with `--latency`, mean allocator latency — for the selected
// bin or all bins. Each chart has a value axis with its unit in the gutter on its
// left, and a time axis runs under the last one; the occupancy chart is filled with the
// occupancy bar's colour scale (the same quantity: they agree). The mouse reads a
// value; cursors are drawn across the charts.

import { h, replaceChildren } from "../app/dom";
import { drawYAxis } from "../canvas_axis";
import { type Tick, byteTicks, countTicks, formatBytes, formatDuration, formatSi, percentTicks, timeTicks } from "../format";
import { type MetricsDoc, modelQuery } from "./api";
import type { AllocContext } from "./context";
import { drawCursors } from "./cursors";
import { GUTTER } from "./main_view";
import { windowParams } from "./occupancy_bar";
import { rampColor } from "./ramp";
import { TimeAxis } from "./time_axis";
import { timeAt, xOf } from "./viewport";

const CHART_HEIGHT = 64;
/** Room above and below the plot inside a chart's canvas (for the end labels). */
const PAD = 6;
const SETTLE_MS = 150;

interface Series {
  id: string;
  title: string;
  values: (doc: MetricsDoc) => (number | null)[][];
  format: (v: number) => string;
  /** The value axis's ticks up to `max`. */
  ticks: (max: number) => Tick[];
  fixedMax?: number;
  /** Fill under the line with the occupancy bar's colour scale. */
  ramp?: boolean;
}

const COLORS = ["#4e79a7", "#e15759"];

const SERIES: Series[] = [
  { id: "occupancy", title: "Occupancy (reserved / capacity, the occupancy bar's colours)", values: (d) => [d.occupancy], format: (v) => `${(100 * v).toFixed(1)} %`, ticks: () => percentTicks(2), fixedMax: 1, ramp: true },
  { id: "waste", title: "Waste (reserved − requested)", values: (d) => [d.waste_bytes], format: formatBytes, ticks: (m) => byteTicks(m, 2) },
  { id: "fragmentation", title: "Fragmentation (1 − largest free run / free)", values: (d) => [d.fragmentation], format: (v) => `${(100 * v).toFixed(1)} %`, ticks: () => percentTicks(2), fixedMax: 1 },
  { id: "events", title: "Event rate (allocations + frees per second)", values: (d) => [d.event_rate], format: (v) => `${formatSi(v)} /s`, ticks: (m) => countTicks(m, "/s", 2) },
  {
    id: "latency",
    title: "Allocator latency (malloc blue, free red)",
    values: (d) => [d.alloc_latency_ns ?? [], d.free_latency_ns ?? []],
    format: formatDuration,
    ticks: (m) => timeTicks(0, m, 2),
  },
];

interface Chart {
  series: Series;
  canvas: HTMLCanvasElement;
  axis: HTMLCanvasElement;
  readout: HTMLElement;
}

export class MetricCharts {
  readonly el: HTMLElement;
  private charts: Chart[] = [];
  private doc: MetricsDoc | null = null;
  private wanted = "";
  private timer = 0;
  private hoverX: number | null = null;
  private readonly timeAxis: TimeAxis;

  constructor(
    private readonly ctx: AllocContext,
    private readonly width: number,
  ) {
    this.el = h("div", { class: "alloc-metrics", "data-testid": "alloc-metrics" });
    this.timeAxis = new TimeAxis(ctx, width, GUTTER, "alloc-metrics-time-axis");
    this.build();
  }

  /** Rebuilds the charts (the latency chart only when the trace has latencies). */
  build(): void {
    const shown = SERIES.filter((s) => s.id !== "latency" || this.ctx.meta.has_latency);
    this.charts = shown.map((series) => {
      const canvas = h("canvas", { width: this.width, height: CHART_HEIGHT, "data-metric": series.id });
      const axis = h("canvas", { width: GUTTER, height: CHART_HEIGHT, "data-axis": series.id });
      const readout = h("span", { class: "readout" });
      canvas.addEventListener("mousemove", (e) => {
        this.hoverX = e.clientX - canvas.getBoundingClientRect().left;
        this.paint();
      });
      canvas.addEventListener("mouseleave", () => {
        this.hoverX = null;
        this.paint();
      });
      canvas.addEventListener("click", (e) => {
        const v = this.ctx.state.view;
        this.ctx.toggleCursor(timeAt(v, this.width, e.clientX - canvas.getBoundingClientRect().left), (6 * (v.t1 - v.t0)) / this.width);
      });
      return { series, canvas, axis, readout };
    });
    replaceChildren(
      this.el,
      ...this.charts.map((c) =>
        h(
          "div",
          { class: "alloc-chart", "data-testid": "alloc-chart" },
          h("div", { class: "alloc-chart-title", style: `margin-left:${GUTTER}px` }, c.series.title, c.readout),
          h("div", { class: "alloc-under" }, c.axis, c.canvas),
        ),
      ),
      this.timeAxis.el,
    );
  }

  get settled(): boolean {
    return this.doc !== null && this.wanted === "";
  }

  update(): void {
    const { state, api } = this.ctx;
    const win = windowParams(state.view.t0, state.view.t1);
    const q: Record<string, string | number> = { ...modelQuery(state.draw), ...win, samples: Math.max(50, Math.floor(this.width / 3)) };
    if (state.draw.bin !== null) q.bin = state.draw.bin;
    const url = api.url("metrics", q);
    if (url !== this.wanted) {
      this.wanted = url;
      window.clearTimeout(this.timer);
      this.timer = window.setTimeout(() => {
        api
          .json<MetricsDoc>("metrics", q)
          .then((doc) => {
            if (this.wanted !== url) return;
            this.wanted = "";
            this.doc = doc;
            this.paint();
          })
          .catch((e: unknown) => this.ctx.report(e instanceof Error ? e.message : String(e)));
      }, this.doc ? SETTLE_MS : 0);
    }
    this.paint();
  }

  paint(): void {
    const v = this.ctx.state.view;
    this.timeAxis.paint();
    for (const c of this.charts) {
      const g = c.canvas.getContext("2d")!;
      g.fillStyle = "#fff";
      g.fillRect(0, 0, this.width, CHART_HEIGHT);
      g.strokeStyle = "#e3e6ec";
      g.strokeRect(0.5, 0.5, this.width - 1, CHART_HEIGHT - 1);
      const doc = this.doc;
      if (doc) {
        const lines = c.series.values(doc);
        let max = c.series.fixedMax ?? 0;
        if (c.series.fixedMax === undefined) for (const l of lines) for (const x of l) if (x !== null && x > max) max = x;
        if (!(max > 0)) max = 1;
        const ticks = c.series.ticks(max);
        // Headroom: the top of the plot is a little above the largest value.
        if (c.series.fixedMax === undefined) max *= 1.08;
        const plot = CHART_HEIGHT - 2 * PAD;
        const yOf = (val: number) => PAD + plot - (val / max) * plot;
        const ag = c.axis.getContext("2d")!;
        ag.clearRect(0, 0, GUTTER, CHART_HEIGHT);
        drawYAxis(ag, ticks, (val) => yOf(val) - PAD, GUTTER, PAD, plot, { ctx: g, width: this.width });
        if (c.series.ramp) {
          const values = lines[0];
          values.forEach((val, i) => {
            if (val === null) return;
            const x0 = xOf(v, this.width, doc.t_ns[i] - (doc.t_ns[1] - doc.t_ns[0] || 0) / 2);
            const x1 = xOf(v, this.width, doc.t_ns[i] + (doc.t_ns[1] - doc.t_ns[0] || 0) / 2);
            g.fillStyle = rampColor(val);
            g.fillRect(x0, yOf(val), Math.max(1, x1 - x0 + 0.5), PAD + plot - yOf(val));
          });
        }
        lines.forEach((values, k) => {
          g.strokeStyle = c.series.ramp ? "#333a48" : COLORS[k % COLORS.length];
          g.lineWidth = 1.5;
          g.beginPath();
          let open = false;
          values.forEach((val, i) => {
            if (val === null) {
              open = false;
              return;
            }
            const x = xOf(v, this.width, doc.t_ns[i]);
            const y = yOf(val);
            if (open) g.lineTo(x, y);
            else g.moveTo(x, y);
            open = true;
          });
          g.stroke();
        });
        c.readout.textContent = "";
        if (this.hoverX !== null && doc.t_ns.length > 0) {
          const t = timeAt(v, this.width, this.hoverX);
          let best = 0;
          doc.t_ns.forEach((tt, i) => {
            if (Math.abs(tt - t) < Math.abs(doc.t_ns[best] - t)) best = i;
          });
          const parts = lines.map((l) => l[best]).filter((x): x is number => x !== null && x !== undefined).map(c.series.format);
          c.readout.textContent = ` · at ${formatDuration(doc.t_ns[best] - this.ctx.meta.time_origin_ns)}: ${parts.join(" / ") || "–"}`;
          g.strokeStyle = "rgba(0,0,0,0.25)";
          g.beginPath();
          g.moveTo(Math.round(this.hoverX) + 0.5, 0);
          g.lineTo(Math.round(this.hoverX) + 0.5, CHART_HEIGHT);
          g.stroke();
        }
      }
      drawCursors(g, this.ctx.state.cursors.map((t) => xOf(v, this.width, t)), CHART_HEIGHT, this.ctx.cursorStyle());
    }
  }
}
