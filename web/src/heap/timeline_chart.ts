// The timeline: live heap (bytes or objects) over the run as a line over its min–max
// envelope, the snapshot times as clickable points (a click toggles that time's small
// multiple), the program's marks, and the current time always shown. Dragging across
// it brushes a time window (growth and order are then measured within it), shaded
// until it is cleared.

import { scaleLinear } from "d3-scale";
import { select, type Selection } from "d3-selection";
import { area, curveStepAfter, line } from "d3-shape";
import type { Metric, SnapshotInfo, TimeNs, TimelineDoc } from "../data/types";
import { byteTicks, countTicks, formatBytes, formatCount, formatDuration, timeTicks } from "../format";

export interface TimelinePoint extends SnapshotInfo {
  /** The heap at this time under the metric, when known. */
  value: number | undefined;
}

export interface TimelineView {
  timeline: TimelineDoc;
  metric: Metric;
  points: TimelinePoint[];
  marks: { time_ns: TimeNs; name: string }[];
  current: TimeNs;
  pinned: ReadonlySet<TimeNs>;
  /** Whether a click on the curve may pick a time that is not a snapshot time, and a
   * drag may brush a window. */
  canPick: boolean;
  /** The brushed window, if any. */
  window: readonly [TimeNs, TimeNs] | null;
}

export interface TimelineEvents {
  togglePoint(time: TimeNs): void;
  pickTime(time: TimeNs): void;
  brush(window: [TimeNs, TimeNs]): void;
}

/** A drag shorter than this (px) is a click. */
const MIN_BRUSH_PX = 6;

const PAD = { left: 64, right: 16, top: 18, bottom: 24 };

export class TimelineChart {
  readonly el: HTMLDivElement;
  private readonly svg: Selection<SVGSVGElement, unknown, null, undefined>;
  private view: TimelineView | null = null;
  private shape = "";
  private x: ((t: number) => number) | null = null;

  constructor(private readonly events: TimelineEvents) {
    this.el = document.createElement("div");
    this.el.className = "timeline-chart";
    this.el.dataset.testid = "timeline";
    this.svg = select(this.el).append("svg").attr("class", "timeline-svg");
    new ResizeObserver(() => {
      this.shape = "";
      if (this.view) this.render(this.view);
    }).observe(this.el);
  }

  render(view: TimelineView): void {
    this.view = view;
    const width = this.el.clientWidth;
    const height = this.el.clientHeight;
    if (!width || !height) return;
    // A time step only moves the current-time marker and restyles points.
    const shape = `${width}x${height}|${view.metric}|${view.canPick}|${view.window?.join("-") ?? ""}|${view.points.map((p) => `${p.time_ns}:${p.value ?? ""}`).join(",")}`;
    if (shape !== this.shape) {
      this.shape = shape;
      this.draw(view, width, height);
    }
    this.mark(view);
  }

  /** The current time and the pinned points. */
  private mark(view: TimelineView): void {
    const x = this.x;
    if (!x) return;
    this.svg.select(".tl-now").attr("x1", x(view.current)).attr("x2", x(view.current));
    this.svg.selectAll<SVGGElement, TimelinePoint>(".tl-point").each(function (p) {
      this.classList.toggle("current", p.time_ns === view.current);
      this.classList.toggle("pinned", view.pinned.has(p.time_ns));
    });
  }

  private draw(view: TimelineView, width: number, height: number): void {
    const { timeline, metric } = view;
    const b = timeline.buckets;
    const [lo, hi, last] =
      metric === "bytes"
        ? [b.min_bytes, b.max_bytes, b.last_bytes]
        : [b.min_objects, b.max_objects, b.last_objects];
    const top = Math.max(1, ...hi, ...view.points.map((p) => p.value ?? 0));
    const x = scaleLinear()
      .domain([timeline.window.start_ns, Math.max(timeline.window.end_ns, timeline.window.start_ns + 1)])
      .range([PAD.left, width - PAD.right]);
    this.x = x;
    const y = scaleLinear()
      .domain([0, top * 1.08])
      .range([height - PAD.bottom, PAD.top]);
    const fmt = metric === "bytes" ? formatBytes : formatCount;
    const yTicks = metric === "bytes" ? byteTicks(top * 1.08, 3) : countTicks(top * 1.08, "objects", 3);
    const svg = this.svg.attr("width", width).attr("height", height);
    svg.selectAll("*").remove();

    // Background: a click picks a time (live) or the nearest snapshot time (report); a
    // drag brushes a window (live).
    const hit = svg
      .append("rect")
      .attr("class", "tl-hit")
      .attr("data-testid", "timeline-hit")
      .attr("x", PAD.left)
      .attr("y", PAD.top)
      .attr("width", Math.max(0, width - PAD.left - PAD.right))
      .attr("height", Math.max(0, height - PAD.top - PAD.bottom));
    const clickAt = (mx: number) => {
      const t = Math.round(x.invert(mx));
      if (view.canPick) this.events.pickTime(clampTime(t, timeline));
      else {
        const nearest = view.points.reduce((best, p) => (Math.abs(p.time_ns - t) < Math.abs(best.time_ns - t) ? p : best));
        this.events.pickTime(nearest.time_ns);
      }
    };
    hit.on("pointerdown", (down: PointerEvent) => {
      const [x0] = pointer(down, this.el);
      const left = PAD.left;
      const right = width - PAD.right;
      const clampX = (v: number) => Math.max(left, Math.min(right, v));
      const ghost = view.canPick
        ? svg.append("rect").attr("class", "tl-brush").attr("y", PAD.top).attr("height", Math.max(0, height - PAD.top - PAD.bottom)).attr("x", x0).attr("width", 0)
        : null;
      const move = (e: PointerEvent) => {
        const [x1] = pointer(e, this.el);
        const [a, b] = [clampX(Math.min(x0, x1)), clampX(Math.max(x0, x1))];
        ghost?.attr("x", a).attr("width", b - a);
      };
      const up = (e: PointerEvent) => {
        window.removeEventListener("pointermove", move);
        window.removeEventListener("pointerup", up);
        ghost?.remove();
        const [x1] = pointer(e, this.el);
        if (!view.canPick || Math.abs(x1 - x0) < MIN_BRUSH_PX) {
          clickAt(x0);
          return;
        }
        const [a, b] = [clampX(Math.min(x0, x1)), clampX(Math.max(x0, x1))];
        const from = clampTime(Math.round(x.invert(a)), timeline);
        const to = clampTime(Math.round(x.invert(b)), timeline);
        if (to > from) this.events.brush([from, to]);
      };
      window.addEventListener("pointermove", move);
      window.addEventListener("pointerup", up);
    });
    if (view.window) {
      const [a, b] = view.window.map((t) => x(t));
      svg
        .append("rect")
        .attr("class", "tl-window")
        .attr("data-testid", "timeline-window")
        .attr("x", a)
        .attr("y", PAD.top)
        .attr("width", Math.max(1, b - a))
        .attr("height", Math.max(0, height - PAD.top - PAD.bottom));
    }

    const grid = svg.append("g").attr("class", "tl-grid");
    for (const { value: v, label } of yTicks) {
      grid
        .append("line")
        .attr("x1", PAD.left)
        .attr("x2", width - PAD.right)
        .attr("y1", y(v))
        .attr("y2", y(v));
      grid
        .append("text")
        .attr("x", PAD.left - 8)
        .attr("y", y(v))
        .attr("dy", "0.32em")
        .attr("text-anchor", "end")
        .text(metric === "bytes" && v === 0 ? "0 B" : label);
    }
    const axis = svg.append("g").attr("class", "tl-axis");
    const [t0, t1] = x.domain();
    for (const { value: t, label } of timeTicks(t0, t1, Math.max(2, Math.floor(width / 110)))) {
      axis
        .append("text")
        .attr("x", x(t))
        .attr("y", height - 6)
        .attr("text-anchor", "middle")
        .text(label);
    }

    const index = b.start_ns.map((_, i) => i);
    svg
      .append("path")
      .attr("class", "tl-envelope")
      .attr(
        "d",
        area<number>()
          .x((i) => x(b.start_ns[i]))
          .y0((i) => y(lo[i]))
          .y1((i) => y(hi[i]))
          .curve(curveStepAfter)(index) ?? "",
      );
    svg
      .append("path")
      .attr("class", "tl-line")
      .attr(
        "d",
        line<number>()
          .x((i) => x(b.end_ns[i]))
          .y((i) => y(last[i]))(index) ?? "",
      );

    const marks = svg.append("g").attr("class", "tl-marks");
    // Marks are labelled where a label fits before the next one (the full name on hover).
    const markX = view.marks.map((m) => x(m.time_ns));
    view.marks.forEach((m, i) => {
      const g = marks.append("g").attr("transform", `translate(${markX[i]},${PAD.top - 6})`);
      g.append("path").attr("d", "M-4,-5L4,-5L0,1Z");
      g.append("title").text(`mark “${m.name}” at ${formatDuration(m.time_ns)}`);
      const room = (i + 1 < markX.length ? markX[i + 1] : width - PAD.right) - markX[i] - 10;
      const chars = Math.floor(room / 6.2);
      if (chars >= 3) {
        const name = m.name.length > chars ? `${m.name.slice(0, chars - 1)}…` : m.name;
        g.append("text").attr("class", "tl-mark-label").attr("x", 6).attr("y", -2).text(name);
      }
    });

    svg
      .append("line")
      .attr("class", "tl-now")
      .attr("data-testid", "timeline-now")
      .attr("x1", x(view.current))
      .attr("x2", x(view.current))
      .attr("y1", PAD.top)
      .attr("y2", height - PAD.bottom);

    const points = svg
      .append("g")
      .attr("class", "tl-points")
      .selectAll("g")
      .data(view.points)
      .enter()
      .append("g")
      .attr("class", "tl-point")
      .attr("data-testid", "snapshot-point")
      .attr("data-time", (p) => p.time_ns)
      .attr("data-kind", (p) => p.kind)
      .attr("transform", (p) => `translate(${x(p.time_ns)},${y(p.value ?? valueAt(timeline, metric, p.time_ns))})`)
      .on("click", (event: MouseEvent, p) => {
        event.stopPropagation();
        this.events.togglePoint(p.time_ns);
      });
    points.append("circle").attr("class", "tl-point-hit").attr("r", 9);
    points
      .append("circle")
      .attr("class", "tl-point-dot")
      .attr("r", (p) => (p.kind === "point" || p.kind === "start" ? 3.5 : 4.5));
    points
      .append("title")
      .text(
        (p) =>
          `${formatDuration(p.time_ns)}${p.label ? ` (${p.label})` : ""}: ${fmt(p.value ?? valueAt(timeline, metric, p.time_ns))} — click to add or remove its tree`,
      );
  }
}

/** The live value at `t` from the bucket holding it (the value at its end). */
export function valueAt(timeline: TimelineDoc, metric: Metric, t: TimeNs): number {
  const b = timeline.buckets;
  const last = metric === "bytes" ? b.last_bytes : b.last_objects;
  let i = 0;
  while (i + 1 < b.start_ns.length && b.start_ns[i + 1] <= t) i++;
  return last[i] ?? 0;
}

function clampTime(t: TimeNs, timeline: TimelineDoc): TimeNs {
  return Math.max(timeline.window.start_ns, Math.min(timeline.window.end_ns, t));
}

function pointer(event: MouseEvent, el: Element): [number, number] {
  const r = el.getBoundingClientRect();
  return [event.clientX - r.left, event.clientY - r.top];
}
