// One sunburst-or-icicle chart of the heap lens (the local or the global view): SVG
// nodes joined on their full key paths, tweened to new sizes and positions when the
// time, the drill-down or an option changes, labels where they fit, hover and click.
// Trees with more than `SVG_LIMIT` nodes are drawn on a canvas instead (no tween).

import { select, type Selection } from "d3-selection";
import "d3-transition";
import type { NodeFill } from "./change_colors";
import {
  type ChartKind,
  type Coords,
  type Frame,
  labelBox,
  lerpCoords,
  nodePath,
  pointToCoords,
} from "./geometry";
import type { PlacedNode } from "./layout";
import { onBranch } from "./layout";
import { fitText } from "./text_fit";
import { formatBytes, formatCount } from "../format";
import { drawPartition } from "./canvas_chart";

/** Above this many nodes the chart is drawn on a canvas. */
export const SVG_LIMIT = 4000;
/** Length of a transition, in milliseconds. */
export const TWEEN_MS = 650;

export interface ChartView {
  kind: ChartKind;
  /** Laid-out nodes, parents first; the first is the chart's root. */
  placed: PlacedNode[];
  /** Level slots the chart is divided into (at least the tree's levels). */
  levels: number;
  colors: NodeFill;
  metric: "bytes" | "objects";
  /** In the global view: the drill-down path, whose branch stays opaque. */
  branch?: string[];
  /** Whether to tween from the previous view. */
  animate: boolean;
}

export interface ChartEvents {
  hover(node: PlacedNode | null, event: MouseEvent): void;
  click(node: PlacedNode, event: MouseEvent): void;
}

type NodeElement = SVGGElement & { __coords?: Coords; __placed?: PlacedNode };

export class PartitionChart {
  readonly el: HTMLDivElement;
  private readonly svg: Selection<SVGSVGElement, unknown, null, undefined>;
  private readonly plot: Selection<SVGGElement, unknown, null, undefined>;
  private readonly canvas: HTMLCanvasElement;
  private view: ChartView | null = null;
  private frame: Frame = { width: 0, height: 0, levels: 1 };
  private hovered: string | null = null;
  private marked: ReadonlySet<string> | null = null;
  private onCanvas = false;
  private settleTimer = 0;

  constructor(
    role: "local" | "global",
    private readonly events: ChartEvents,
  ) {
    this.el = document.createElement("div");
    this.el.className = `chart chart-${role}`;
    this.el.dataset.testid = `${role}-view`;
    this.svg = select(this.el)
      .append("svg")
      .attr("class", "chart-svg")
      .attr("role", "img")
      .attr("aria-label", role === "local" ? "local view" : "global view");
    this.plot = this.svg.append("g").attr("class", "plot");
    this.canvas = document.createElement("canvas");
    this.canvas.className = "chart-canvas";
    this.el.append(this.canvas);
    this.canvas.addEventListener("mousemove", (e) => this.canvasHover(e));
    this.canvas.addEventListener("mouseleave", (e) => this.events.hover(null, e));
    this.canvas.addEventListener("click", (e) => {
      const hit = this.canvasHit(e);
      if (hit) this.events.click(hit, e);
    });
    new ResizeObserver(() => {
      if (this.view) this.render({ ...this.view, animate: false });
    }).observe(this.el);
  }

  /** Draws `view`, tweening from what is shown when `view.animate`. */
  render(view: ChartView): void {
    this.view = view;
    const width = this.el.clientWidth;
    const height = this.el.clientHeight;
    if (width === 0 || height === 0) return;
    this.frame = { width, height, levels: view.levels };
    this.onCanvas = view.placed.length > SVG_LIMIT;
    this.el.classList.toggle("on-canvas", this.onCanvas);
    this.el.dataset.kind = view.kind;
    this.el.dataset.nodes = String(view.placed.length);
    if (this.onCanvas) {
      this.plot.selectAll("g.node").remove();
      this.drawCanvas();
      return;
    }
    this.svg.attr("width", width).attr("height", height);
    this.plot.attr(
      "transform",
      view.kind === "sunburst" ? `translate(${width / 2},${height / 2})` : "translate(0,0)",
    );
    const rootKey = view.placed[0]?.key;
    const join = this.plot
      .selectAll<NodeElement, PlacedNode>("g.node")
      .data(view.placed, (d) => d.key);
    const entered = join
      .enter()
      .append("g")
      .attr("class", "node")
      .each(function (d) {
        // New nodes grow from a zero extent at their final start.
        (this as NodeElement).__coords = { x0: d.x0, x1: d.x0, y0: d.y0, y1: d.y1 };
      });
    entered.append("path");
    entered.append("text").attr("dy", "0.35em");
    entered
      .on("mouseenter", (event: MouseEvent, d) => this.events.hover(d, event))
      .on("mousemove", (event: MouseEvent, d) => this.events.hover(d, event))
      .on("mouseleave", (event: MouseEvent) => this.events.hover(null, event))
      .on("click", (event: MouseEvent, d) => this.events.click(d, event));
    const nodes = entered.merge(join);
    nodes.order();
    const frame = this.frame;
    const kind = view.kind;
    const hovered = this.hovered;
    const marked = this.marked;
    const branch = view.branch;
    const size = (d: PlacedNode) =>
      view.metric === "bytes" ? formatBytes(d.node.bytes) : `${formatCount(d.node.objects)} objects`;
    // One pass per node, touching the DOM only where something changed.
    nodes.each(function (d) {
      const el = this as NodeElement;
      el.__placed = d;
      const isRoot = d.key === rootKey;
      setData(el, "key", d.key);
      setData(el, "depth", String(d.depth));
      setData(el, "label", d.node.key);
      const classes = el.classList;
      classes.toggle("root", isRoot);
      classes.toggle("other", d.node.is_other);
      classes.toggle("leaf", !d.hasChildren);
      const onIt = branch === undefined || onBranch(d.node.full_key, branch);
      classes.toggle("dimmed", !onIt);
      classes.toggle("drill", branch !== undefined && onIt && d.node.full_key.length === branch.length);
      classes.toggle("hovered", d.key === hovered);
      classes.toggle("match", marked !== null && marked.has(d.key));
      const path = el.firstChild as SVGPathElement;
      const fill = view.colors.fill(d.node);
      if (path.getAttribute("fill") !== fill) path.setAttribute("fill", fill);
      // Labels go to their final place at once; while nodes move they are hidden
      // (moving text is what would cost frames) and fade in when the nodes arrive.
      const text = el.lastChild as SVGTextElement;
      const box = labelBox(kind, d, frame, isRoot);
      const shown = visibleLabel(box);
      if (!shown) {
        if (text.textContent !== "") text.textContent = "";
        if (text.style.opacity !== "0") text.style.opacity = "0";
        return;
      }
      text.setAttribute("transform", box.transform);
      if (text.getAttribute("text-anchor") !== box.anchor) text.setAttribute("text-anchor", box.anchor);
      if (text.style.opacity !== "1") text.style.opacity = "1";
      if (isRoot) {
        // The root names the whole group and its size, on two lines in a sunburst.
        const name = d.node.full_key.length === 0 ? "Whole heap" : d.node.key;
        const t = select(text).text(null);
        if (kind === "sunburst") {
          t.append("tspan").attr("x", 0).attr("dy", "-0.25em").text(fitText(name, box.width));
          t.append("tspan").attr("x", 0).attr("dy", "1.3em").attr("class", "sub").text(size(d));
        } else {
          t.text(fitText(`${name} · ${size(d)}`, box.width));
        }
      } else {
        const label = fitText(d.node.key, box.width);
        if (text.textContent !== label) text.textContent = label;
      }
    });

    const exiting = join.exit<PlacedNode>();
    window.clearTimeout(this.settleTimer);
    if (view.animate) {
      this.el.classList.add("moving");
      this.settleTimer = window.setTimeout(() => this.el.classList.remove("moving"), TWEEN_MS);
      nodes
        .transition()
        .duration(TWEEN_MS)
        .tween("layout", function (d) {
          const el = this as NodeElement;
          const from = el.__coords ?? d;
          const path = el.firstChild as SVGPathElement;
          return (t: number) => {
            const c = lerpCoords(from, d, t);
            el.__coords = c;
            path.setAttribute("d", nodePath(kind, c, frame));
          };
        });
      exiting
        .transition()
        .duration(TWEEN_MS)
        .tween("layout", function () {
          const el = this as NodeElement;
          const from = el.__coords ?? { x0: 0, x1: 0, y0: 0, y1: 0 };
          const to = { ...from, x1: from.x0 };
          const path = el.firstChild as SVGPathElement;
          return (t: number) => {
            const c = lerpCoords(from, to, t);
            el.__coords = c;
            path.setAttribute("d", nodePath(kind, c, frame));
          };
        })
        .remove();
    } else {
      this.el.classList.remove("moving");
      nodes.interrupt().each(function (d) {
        const el = this as NodeElement;
        el.__coords = { x0: d.x0, x1: d.x1, y0: d.y0, y1: d.y1 };
        (el.firstChild as SVGPathElement).setAttribute("d", nodePath(kind, d, frame));
      });
      exiting.interrupt().remove();
    }
  }

  /** Marks the node with `key` as hovered (from this or the other view). */
  /** Marks the nodes whose join keys are in `keys` (search matches); `null` clears. */
  mark(keys: ReadonlySet<string> | null): void {
    this.marked = keys;
    this.plot
      .selectAll<NodeElement, PlacedNode>("g.node")
      .classed("match", (d) => d !== undefined && keys !== null && keys.has(d.key));
  }

  highlight(key: string | null): void {
    this.hovered = key;
    if (this.onCanvas) {
      this.drawCanvas();
      return;
    }
    this.plot
      .selectAll<NodeElement, PlacedNode>("g.node")
      .classed("hovered", (d) => d !== undefined && d.key === key);
  }

  private drawCanvas(): void {
    const view = this.view;
    if (!view) return;
    drawPartition(this.canvas, view, this.frame, this.hovered);
  }

  private canvasHit(event: MouseEvent): PlacedNode | null {
    const view = this.view;
    if (!view || !this.onCanvas) return null;
    const rect = this.canvas.getBoundingClientRect();
    let px = event.clientX - rect.left;
    let py = event.clientY - rect.top;
    if (view.kind === "sunburst") {
      px -= this.frame.width / 2;
      py -= this.frame.height / 2;
    }
    const { x, y } = pointToCoords(view.kind, px, py, this.frame);
    let hit: PlacedNode | null = null;
    for (const n of view.placed) {
      if (x >= n.x0 && x < n.x1 && y >= n.y0 && y < n.y1) hit = n;
    }
    return hit;
  }

  private canvasHover(event: MouseEvent): void {
    this.events.hover(this.canvasHit(event), event);
  }
}

function visibleLabel(box: { width: number; height: number }): boolean {
  return box.height >= 12 && box.width >= 18;
}

function setData(el: SVGElement, name: string, value: string): void {
  if (el.dataset[name] !== value) el.dataset[name] = value;
}
