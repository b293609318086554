// Metric charts under the map, on the main view's time axis: occupancy, waste
// (reserved − requested), fragmentation (1 − largest free run / total free), event rate
// and, for traces recorded with `--latency`, mean allocator latency — for the selected
// bin or all bins. The mouse reads a value; cursors are drawn across the charts.

import { h, replaceChildren } from "../app/dom";
import { formatBytes, formatDuration } from "../format";
import { type MetricsDoc, modelQuery } from "./api";
import type { AllocContext } from "./context";
import { drawCursors } from "./cursors";
import { windowParams } from "./occupancy_bar";
import { timeAt, xOf } from "./viewport";

const CHART_HEIGHT = 64;
const SETTLE_MS = 150;

interface Series {
  id: string;
  title: string;
  values: (doc: MetricsDoc) => (number | null)[][];
  format: (v: number) => string;
  fixedMax?: number;
}

const COLORS = ["#4e79a7", "#e15759"];

const SERIES: Series[] = [
  { id: "occupancy", title: "Occupancy", values: (d) => [d.occupancy], format: (v) => `${(100 * v).toFixed(1)} %`, fixedMax: 1 },
  { id: "waste", title: "Waste (reserved − requested)", values: (d) => [d.waste_bytes], format: formatBytes },
  { id: "fragmentation", title: "Fragmentation (1 − largest free run / free)", values: (d) => [d.fragmentation], format: (v) => v.toFixed(3), fixedMax: 1 },
  { id: "events", title: "Event rate (allocations + frees)", values: (d) => [d.event_rate], format: (v) => `${v.toExponential(2)} /s` },
  {
    id: "latency",
    title: "Allocator latency (malloc blue, free red)",
    values: (d) => [d.alloc_latency_ns ?? [], d.free_latency_ns ?? []],
    format: formatDuration,
  },
];

interface Chart {
  series: Series;
  canvas: HTMLCanvasElement;
  readout: HTMLElement;
}

export class MetricCharts {
  readonly el: HTMLElement;
  private charts: Chart[] = [];
  private doc: MetricsDoc | null = null;
  private wanted = "";
  private timer = 0;
  private hoverX: number | null = null;

  constructor(
    private readonly ctx: AllocContext,
    private readonly width: number,
  ) {
    this.el = h("div", { class: "alloc-metrics", "data-testid": "alloc-metrics" });
    this.build();
  }

  /** Rebuilds the charts (the latency chart only when the trace has latencies). */
  build(): void {
    const shown = SERIES.filter((s) => s.id !== "latency" || this.ctx.meta.has_latency);
    this.charts = shown.map((series) => {
      const canvas = h("canvas", { width: this.width, height: CHART_HEIGHT, "data-metric": series.id });
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
      return { series, canvas, readout };
    });
    replaceChildren(this.el, ...this.charts.map((c) => h("div", { class: "alloc-chart" }, h("div", { class: "alloc-chart-title" }, c.series.title, c.readout), c.canvas)));
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
        lines.forEach((values, k) => {
          g.strokeStyle = COLORS[k % COLORS.length];
          g.lineWidth = 1.5;
          g.beginPath();
          let open = false;
          values.forEach((val, i) => {
            if (val === null) {
              open = false;
              return;
            }
            const x = xOf(v, this.width, doc.t_ns[i]);
            const y = CHART_HEIGHT - 3 - (val / max) * (CHART_HEIGHT - 8);
            if (open) g.lineTo(x, y);
            else g.moveTo(x, y);
            open = true;
          });
          g.stroke();
        });
        g.fillStyle = "#9aa1b0";
        g.font = "10px system-ui, sans-serif";
        g.textBaseline = "top";
        g.fillText(c.series.format(max), 4, 3);
        c.readout.textContent = "";
        if (this.hoverX !== null && doc.t_ns.length > 0) {
          const t = timeAt(v, this.width, this.hoverX);
          let best = 0;
          doc.t_ns.forEach((tt, i) => {
            if (Math.abs(tt - t) < Math.abs(doc.t_ns[best] - t)) best = i;
          });
          const parts = lines.map((l) => l[best]).filter((x): x is number => x !== null && x !== undefined).map(c.series.format);
          c.readout.textContent = ` · at ${formatDuration(doc.t_ns[best] - this.ctx.meta.run.start_ns)}: ${parts.join(" / ") || "–"}`;
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
