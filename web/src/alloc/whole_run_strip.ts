// The whole-run strip above the allocation map, for the map of a window of a run too
// large for the map's memory (`meta.window` with `meta.whole_run`): the server's
// picture of the whole run's occupancy (`api/alloc/whole_run`: time → x, address rows
// → y with the highest on top, blue empty → red full, transparent where no block ever
// was), its time axis, a frame around the window the map holds, the time and address
// row under the mouse, and, in `memlens view`, a window dragged across it, read into
// the map on request (as window_choice.ts reads the heap timeline's). Hidden when the
// map holds the whole run, or when its picture cannot be had (a report without it).
// The pixel ↔ time and row mappings are pure functions, unit-tested.

import { drawXAxis } from "../canvas_axis";
import { h } from "../app/dom";
import { formatDuration, timeTicks } from "../format";
import type { RangeWire, WholeRunExtentWire, WholeRunWire } from "../generated/alloc";
import type { AllocApi, AllocMeta } from "./api";

/** The strip's height, CSS pixels. */
export const STRIP_HEIGHT = 100;
/** The time axis under it, CSS pixels. */
const AXIS_HEIGHT = 20;
/** A drag narrower than this (CSS pixels) is a click. */
export const MIN_DRAG_PX = 4;
/** The largest picture side the server draws. */
const MAX_SIDE = 4096;
/** How long a resized strip waits before asking for a picture of its new size, ms. */
const SETTLE_MS = 120;

/** Where time `t` (ns, model timeline) lies across a strip `width` wide showing `run`. */
export function stripX(run: RangeWire, width: number, t: number): number {
  const len = Math.max(1, run.end_ns - run.start_ns);
  return ((t - run.start_ns) / len) * width;
}

/** The time (ns) at `x` across a strip `width` wide showing `run`, clamped to the run. */
export function stripTime(run: RangeWire, width: number, x: number): number {
  const f = width > 0 ? Math.min(1, Math.max(0, x / width)) : 0;
  return run.start_ns + f * (run.end_ns - run.start_ns);
}

/**
 * The window `[from, to)` (whole ns, within the run) dragged from `x0` to `x1` across a
 * strip `width` wide, in either direction; null for a drag narrower than `minPx` (a
 * click) once clamped to the strip.
 */
export function dragWindow(run: RangeWire, width: number, x0: number, x1: number, minPx = MIN_DRAG_PX): [number, number] | null {
  const lo = Math.min(Math.max(Math.min(x0, x1), 0), width);
  const hi = Math.min(Math.max(Math.max(x0, x1), 0), width);
  if (hi - lo < minPx) return null;
  const from = Math.max(run.start_ns, Math.floor(stripTime(run, width, lo)));
  const to = Math.min(run.end_ns, Math.ceil(stripTime(run, width, hi)));
  return to > from ? [from, to] : null;
}

/**
 * The address row (0 = bottom) drawn at `y` CSS pixels from the top of a strip
 * `height` high showing `rows` rows, the highest on top; null outside it.
 */
export function rowAt(rows: number, height: number, y: number): number | null {
  if (rows <= 0 || height <= 0 || y < 0 || y >= height) return null;
  return Math.min(rows - 1, Math.floor((1 - y / height) * rows));
}

/** What the strip says of address row `row`: its extent and the row's own addresses. */
export interface RowPlace {
  extent: WholeRunExtentWire;
  /** The row's first address, hex. */
  start: string;
  /** The address after it, hex. */
  end: string;
}

/** Where address row `row` lies (its extent and addresses); null when no extent holds it. */
export function rowPlace(whole: Pick<WholeRunWire, "extents" | "row_bytes">, row: number): RowPlace | null {
  const extent = whole.extents.find((e) => e.first_row <= row && row < e.first_row + e.rows);
  if (!extent) return null;
  const start = BigInt(extent.start) + BigInt(row - extent.first_row) * BigInt(whole.row_bytes);
  const end = start + BigInt(whole.row_bytes);
  return { extent, start: `0x${start.toString(16)}`, end: `0x${end.toString(16)}` };
}

/** The picture's size in device pixels for a strip of `width` × `height` CSS pixels. */
export function pictureSize(width: number, height: number, ratio: number): { w: number; h: number } {
  const side = (css: number) => Math.min(MAX_SIDE, Math.max(1, Math.round(css * (ratio > 0 ? ratio : 1))));
  return { w: side(width), h: side(height) };
}

/** A fraction of the strip's width as a CSS percentage. */
function percent(f: number): string {
  return `${(100 * Math.min(1, Math.max(0, f))).toFixed(4)}%`;
}

export class WholeRunStrip {
  readonly el: HTMLElement;
  private readonly box: HTMLElement;
  private readonly canvas: HTMLCanvasElement;
  private readonly frame: HTMLElement;
  private readonly selection: HTMLElement;
  private readonly hoverLine: HTMLElement;
  private readonly axis: HTMLCanvasElement;
  private readonly topAddress: HTMLElement;
  private readonly bottomAddress: HTMLElement;
  private readonly action: HTMLElement;
  private readonly readout: HTMLElement;
  private readonly observer: ResizeObserver;
  private meta: AllocMeta | null = null;
  private whole: WholeRunWire | null = null;
  /** The picture on the canvas, and the size it was asked at (`WxH`). */
  private shownKey = "";
  /** The picture asked for and not yet drawn (`""`: none). */
  private wantedKey = "";
  private timer = 0;
  private drag: { x0: number; x1: number } | null = null;
  private readonly onDragMove = (e: MouseEvent) => this.dragMove(e);
  private readonly onDragEnd = (e: MouseEvent) => this.dragEnd(e);

  /**
   * A strip `width` CSS pixels wide (the main view's width) after a gutter of `gutter`
   * pixels; `read(from, to)` reads that window of the run into the map.
   */
  constructor(
    private readonly api: AllocApi,
    private readonly width: number,
    gutter: number,
    private readonly read: (from: number, to: number) => void,
  ) {
    this.canvas = h("canvas", { class: "alloc-whole-run-image", "data-testid": "alloc-whole-run-image" });
    this.frame = h("div", { class: "alloc-whole-run-frame", "data-testid": "alloc-whole-run-frame", title: "The window the map holds" });
    this.selection = h("div", { class: "alloc-whole-run-selection", "data-testid": "alloc-whole-run-selection", hidden: true });
    this.hoverLine = h("div", { class: "alloc-whole-run-hover", hidden: true });
    this.box = h(
      "div",
      { class: `alloc-whole-run-box${this.canRead ? " can-read" : ""}`, style: `width:${width}px;height:${STRIP_HEIGHT}px` },
      this.canvas,
      this.frame,
      this.selection,
      this.hoverLine,
    );
    this.axis = h("canvas", { class: "alloc-whole-run-axis", "data-axis": "time" });
    this.topAddress = h("span", { class: "address top" });
    this.bottomAddress = h("span", { class: "address bottom" });
    this.action = h("span", { class: "alloc-whole-run-action" });
    this.readout = h("span", { class: "alloc-whole-run-readout", "data-testid": "alloc-whole-run-readout" });
    const side = (...children: (Node | string)[]) => h("div", { class: "alloc-whole-run-gutter", style: `width:${gutter}px` }, ...children);
    this.el = h(
      "div",
      { class: "alloc-whole-run", "data-testid": "alloc-whole-run", hidden: true },
      h(
        "div",
        { class: "alloc-whole-run-row" },
        side(h("span", { class: "title" }, "Whole run")),
        h(
          "div",
          { class: "alloc-whole-run-caption", style: `width:${width}px` },
          "Occupancy of every address row over the whole run, blue (empty) → red (full), highest addresses on top; the red frame is the window the map holds.",
        ),
      ),
      h("div", { class: "alloc-whole-run-row" }, side(this.topAddress, this.bottomAddress), this.box),
      h("div", { class: "alloc-whole-run-row" }, side(h("span", { class: "axis-title" }, "time →")), this.axis),
      h("div", { class: "alloc-whole-run-row" }, side(), h("div", { class: "alloc-whole-run-foot", style: `width:${width}px` }, this.action, this.readout)),
    );
    this.box.addEventListener("mousemove", (e) => this.hover(e));
    this.box.addEventListener("mouseleave", () => {
      if (!this.drag) this.hover(null);
    });
    if (this.canRead) this.box.addEventListener("mousedown", (e) => this.dragStart(e));
    // A new size (or pixel density) asks for a picture of that size once it settles.
    this.observer = new ResizeObserver(() => this.schedule(SETTLE_MS));
    try {
      this.observer.observe(this.box, { box: "device-pixel-content-box" });
    } catch {
      this.observer.observe(this.box);
    }
  }

  /** Whether the page can read another window (`memlens view`, not a report). */
  get canRead(): boolean {
    return this.api.canBrush;
  }

  /** True when no picture is on its way. */
  get settled(): boolean {
    return this.wantedKey === "";
  }

  /** Shows the strip for `meta`'s model: only the map of a window of a run that carries the whole run. */
  update(meta: AllocMeta): void {
    this.meta = meta;
    const whole = meta.window ? meta.whole_run : null;
    if (this.whole && whole && (this.whole.run.start_ns !== whole.run.start_ns || this.whole.run.end_ns !== whole.run.end_ns)) this.shownKey = "";
    this.whole = whole;
    this.setPicked(null);
    this.hover(null);
    if (!whole) {
      this.el.hidden = true;
      window.clearTimeout(this.timer);
      this.wantedKey = "";
      return;
    }
    this.el.hidden = false;
    delete this.el.dataset.failed;
    const first = whole.extents[0];
    const last = whole.extents[whole.extents.length - 1];
    this.topAddress.textContent = last?.end ?? "";
    this.bottomAddress.textContent = first?.start ?? "";
    const frame = [meta.run.start_ns, meta.run.end_ns].map((t) => stripX(whole.run, 1, t));
    this.frame.style.left = percent(frame[0]);
    this.frame.style.width = percent(frame[1] - frame[0]);
    this.frame.title = `The window the map holds: ${this.since(meta.run.start_ns)} – ${this.since(meta.run.end_ns)}`;
    this.paintAxis();
    this.schedule(0);
  }

  /** Stops listening (the lens is built again). */
  dispose(): void {
    this.observer.disconnect();
    window.clearTimeout(this.timer);
    window.removeEventListener("mousemove", this.onDragMove);
    window.removeEventListener("mouseup", this.onDragEnd);
  }

  /** `t` (ns, model timeline) as the tab shows times: from the run's time 0. */
  private since(t: number): string {
    return formatDuration(Math.max(0, t - (this.meta?.time_origin_ns ?? 0)));
  }

  /** The strip's size on screen, CSS pixels. */
  private cssSize(): { width: number; height: number } {
    return { width: this.box.clientWidth || this.width, height: this.box.clientHeight || STRIP_HEIGHT };
  }

  /** Asks for the picture at the strip's size after `delay` ms, unless it is shown. */
  private schedule(delay: number): void {
    if (!this.whole || this.el.dataset.failed) return;
    const { width, height } = this.cssSize();
    const { w, h: ht } = pictureSize(width, height, window.devicePixelRatio || 1);
    const key = `${w}x${ht}`;
    if (key === this.shownKey) {
      window.clearTimeout(this.timer);
      this.wantedKey = "";
      this.paintAxis();
      return;
    }
    if (key === this.wantedKey && delay > 0) return;
    this.wantedKey = key;
    window.clearTimeout(this.timer);
    this.timer = window.setTimeout(() => this.load(key, w, ht), delay);
  }

  private load(key: string, w: number, ht: number): void {
    this.api
      .image(this.api.url("whole_run", { w, h: ht }))
      .then((img) => {
        if (key !== this.wantedKey) return img.close();
        this.canvas.width = w;
        this.canvas.height = ht;
        const g = this.canvas.getContext("2d")!;
        g.clearRect(0, 0, w, ht);
        g.drawImage(img, 0, 0, w, ht);
        img.close();
        this.shownKey = key;
        this.wantedKey = "";
        this.canvas.dataset.loaded = "1";
        this.paintAxis();
      })
      .catch(() => {
        // No picture (a report that did not embed it): no strip rather than an empty one.
        if (key !== this.wantedKey) return;
        this.wantedKey = "";
        this.el.dataset.failed = "1";
        this.el.hidden = true;
      });
  }

  /** The time axis under the strip, over the whole run, at the screen's pixel density. */
  private paintAxis(): void {
    const whole = this.whole;
    if (!whole) return;
    const width = this.cssSize().width;
    const ratio = window.devicePixelRatio || 1;
    const [w, ht] = [Math.round(width * ratio), Math.round(AXIS_HEIGHT * ratio)];
    if (this.axis.width !== w || this.axis.height !== ht) {
      this.axis.width = w;
      this.axis.height = ht;
      this.axis.style.width = `${width}px`;
      this.axis.style.height = `${AXIS_HEIGHT}px`;
    }
    const g = this.axis.getContext("2d")!;
    g.setTransform(ratio, 0, 0, ratio, 0, 0);
    g.clearRect(0, 0, width, AXIS_HEIGHT);
    const origin = this.meta?.time_origin_ns ?? 0;
    const ticks = timeTicks(whole.run.start_ns - origin, whole.run.end_ns - origin, Math.max(2, Math.floor(width / 110)));
    drawXAxis(g, ticks, (t) => stripX(whole.run, width, t + origin), 0, 0, width);
  }

  /** The mouse's position over the strip, CSS pixels from its top left. */
  private local(e: MouseEvent): { x: number; y: number; width: number; height: number } {
    const r = this.box.getBoundingClientRect();
    return { x: e.clientX - r.left, y: e.clientY - r.top, width: r.width, height: r.height };
  }

  /** The time and address row under the mouse (null: the mouse left). */
  private hover(e: MouseEvent | null): void {
    const whole = this.whole;
    if (!e || !whole) {
      this.hoverLine.hidden = true;
      this.readout.textContent = "";
      return;
    }
    const { x, y, width, height } = this.local(e);
    if (x < 0 || x > width) return;
    this.hoverLine.hidden = false;
    this.hoverLine.style.left = `${Math.round(x)}px`;
    let text = this.since(stripTime(whole.run, width, x));
    const row = rowAt(whole.rows, height, y);
    const place = row === null ? null : rowPlace(whole, row);
    if (place) {
      const process = this.meta?.processes[place.extent.process];
      const who = process ? ` (${process.name} ${process.pid})` : "";
      text += ` · ${place.start} – ${place.end}, in ${place.extent.start} – ${place.extent.end}${who}`;
    }
    this.readout.textContent = text;
  }

  private dragStart(e: MouseEvent): void {
    if (e.button !== 0 || !this.whole) return;
    e.preventDefault();
    const { x } = this.local(e);
    this.drag = { x0: x, x1: x };
    window.addEventListener("mousemove", this.onDragMove);
    window.addEventListener("mouseup", this.onDragEnd);
  }

  private dragMove(e: MouseEvent): void {
    const drag = this.drag;
    if (!drag || !this.whole) return;
    const { x, width } = this.local(e);
    drag.x1 = Math.min(Math.max(x, 0), width);
    const span = dragWindow(this.whole.run, width, drag.x0, drag.x1);
    if (span) this.showSelection(span);
    else this.selection.hidden = true;
    this.hover(e);
  }

  private dragEnd(e: MouseEvent): void {
    window.removeEventListener("mousemove", this.onDragMove);
    window.removeEventListener("mouseup", this.onDragEnd);
    const drag = this.drag;
    this.drag = null;
    if (!drag || !this.whole) return;
    const { x, width } = this.local(e);
    // A click (no drag) lets go of the window picked before, and nothing else.
    this.setPicked(dragWindow(this.whole.run, width, drag.x0, Math.min(Math.max(x, 0), width)));
  }

  /** Shades `[from, to)` over the strip. */
  private showSelection([from, to]: [number, number]): void {
    const run = this.whole!.run;
    this.selection.hidden = false;
    this.selection.style.left = percent(stripX(run, 1, from));
    this.selection.style.width = percent(stripX(run, 1, to) - stripX(run, 1, from));
  }

  /** The window picked by a drag (null: none), its shading and its button. */
  private setPicked(span: [number, number] | null): void {
    this.action.replaceChildren();
    if (!span) {
      this.selection.hidden = true;
      if (this.canRead) this.action.append(h("span", { class: "hint" }, "Drag across the strip to choose another window of the run."));
      return;
    }
    this.showSelection(span);
    const [from, to] = span;
    this.selection.dataset.from = String(from);
    this.selection.dataset.to = String(to);
    const button = h(
      "button",
      { type: "button", class: "alloc-window-read", "data-testid": "alloc-whole-run-read" },
      `Read ${this.since(from)} – ${this.since(to)} into the map`,
    );
    button.addEventListener("click", () => this.read(from, to));
    this.action.append(button);
  }
}
