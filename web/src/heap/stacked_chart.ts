// "Memory over time by group" under the heap lens's timeline (heaptrack_gui's consumed
// chart): the first-level groups of the trees at every time of the series as stacked
// areas, in their stable order with their sunburst colours, `Other` on top in grey,
// labelled axes, and a legend with each group's share at the current time.

import { scaleLinear } from "d3-scale";
import { select } from "d3-selection";
import { area, curveMonotoneX } from "d3-shape";
import { h, replaceChildren } from "../app/dom";
import type { Metric, TimeNs, TreeNode } from "../data/types";
import { byteTicks, countTicks, formatBytes, formatCount, timeTicks } from "../format";
import type { ColorScheme } from "./colors";
import type { Layers } from "./tree_store";

/** The same margins as the timeline above, so the two time axes line up. */
const PAD = { left: 64, right: 16, top: 8, bottom: 22 };
const HEIGHT = 130;

export interface StackedView {
  data: Layers;
  metric: Metric;
  colors: ColorScheme;
  current: TimeNs;
  window: { start_ns: number; end_ns: number };
}

export class StackedChart {
  readonly el = h("div", { class: "hl-stacked", "data-testid": "stacked-chart" });
  private readonly plot = h("div", { class: "hl-stacked-plot" });
  private readonly legend = h("ul", { class: "hl-stacked-legend", "data-testid": "stacked-legend" });

  constructor() {
    this.el.append(this.plot, this.legend);
  }

  render(view: StackedView): void {
    const { data, metric } = view;
    const width = Math.max(240, this.plot.clientWidth || 600);
    const values = (i: number) => (metric === "bytes" ? data.layers[i].bytes : data.layers[i].objects);
    // Stable order from the bottom, Other on top.
    const order = data.layers.map((_, i) => i).sort((a, b) => Number(data.layers[a].is_other) - Number(data.layers[b].is_other) || a - b);
    const n = data.times.length;
    const tops = new Array<number>(n).fill(0);
    const bands = order.map((i) => {
      const v = values(i);
      const low = tops.slice();
      for (let k = 0; k < n; k++) tops[k] += v[k] ?? 0;
      return { i, low, high: tops.slice() };
    });
    const top = Math.max(1, ...tops);
    const x = scaleLinear()
      .domain([view.window.start_ns, Math.max(view.window.end_ns, view.window.start_ns + 1)])
      .range([PAD.left, width - PAD.right]);
    const y = scaleLinear().domain([0, top * 1.05]).range([HEIGHT - PAD.bottom, PAD.top]);
    const svg = select(this.plot).selectAll("svg").data([0]).join("svg").attr("width", width).attr("height", HEIGHT);
    svg.selectAll("*").remove();
    const fill = (i: number) => view.colors.fill(pseudoNode(data.layers[i].key, data.layers[i].is_other));
    for (const band of bands) {
      const shape = area<number>()
        .x((k) => x(data.times[k]))
        .y0((k) => y(band.low[k]))
        .y1((k) => y(band.high[k]))
        .curve(curveMonotoneX);
      svg
        .append("path")
        .attr("class", "hl-layer")
        .attr("data-key", data.layers[band.i].key)
        .attr("fill", fill(band.i))
        .attr("d", shape(data.times.map((_, k) => k)) ?? "")
        .append("title")
        .text(data.layers[band.i].key);
    }
    const ticks = metric === "bytes" ? byteTicks(top * 1.05, 2) : countTicks(top * 1.05, "objects", 2);
    const axes = svg.append("g").attr("class", "tl-grid");
    for (const t of ticks) {
      axes.append("line").attr("x1", PAD.left).attr("x2", width - PAD.right).attr("y1", y(t.value)).attr("y2", y(t.value));
      axes
        .append("text")
        .attr("x", PAD.left - 8)
        .attr("y", y(t.value))
        .attr("dy", "0.32em")
        .attr("text-anchor", "end")
        .text(metric === "bytes" && t.value === 0 ? "0 B" : t.label);
    }
    const [t0, t1] = x.domain();
    const timeAxis = svg.append("g").attr("class", "tl-axis");
    for (const t of timeTicks(t0, t1, Math.max(2, Math.floor(width / 110)))) {
      timeAxis.append("text").attr("x", x(t.value)).attr("y", HEIGHT - 6).attr("text-anchor", "middle").text(t.label);
    }
    svg
      .append("line")
      .attr("class", "tl-now")
      .attr("x1", x(view.current))
      .attr("x2", x(view.current))
      .attr("y1", PAD.top)
      .attr("y2", HEIGHT - PAD.bottom);
    // The legend: each group's value at the current time (the nearest series time).
    let k = 0;
    for (let j = 0; j < n; j++) if (Math.abs(data.times[j] - view.current) < Math.abs(data.times[k] - view.current)) k = j;
    const fmt = metric === "bytes" ? formatBytes : (v: number) => `${formatCount(v)} objects`;
    replaceChildren(
      this.legend,
      ...[...order].reverse().map((i) =>
        h(
          "li",
          { title: data.layers[i].key },
          h("span", { class: "swatch", style: `background:${fill(i)}` }),
          h("span", { class: "name" }, data.layers[i].key),
          h("b", {}, fmt(values(i)[k] ?? 0)),
        ),
      ),
    );
  }
}

/** A first-level node as the colour scheme needs it. */
function pseudoNode(key: string, isOther: boolean): TreeNode {
  return {
    key,
    full_key: [key],
    bytes: 0,
    objects: 0,
    growth_bytes: 0,
    growth_objects: 0,
    sort_position: 0,
    is_other: isOther,
    classifier: 0,
    children: [],
  };
}
