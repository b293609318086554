// The allocation-map lens (paper 001, Moreta & Telea): the main view of time ×
// address with its context view and occupancy bar, brushing details, the controls, the
// metric charts, the grid of bins with cushion cursors, and the stacked occupancy bars;
// above the main view, for the map of a window of a run, the whole run at a glance.
// It holds the shared state (context.ts) and tells every view when it changed. The
// view (zoom), colouring, bin and cursors live in the page's URL (`av`, `ac`, `ab`,
// `acur`), so a copied URL reopens the same map.

import { h, replaceChildren } from "../app/dom";
import { readUrlState, writeUrlState } from "../app/url_state";
import type { LensContext } from "../app/lenses";
import { AllocApi, type AllocMeta, type BarParams, type BlockDetails, type DrawParams } from "./api";
import { BinGrid } from "./bin_grid";
import type { AllocContext, AllocState } from "./context";
import { ContextView, CONTEXT_WIDTH } from "./context_view";
import { Controls } from "./controls";
import { type CursorStyle, cursorStyle } from "./cursors";
import { DetailsPanel } from "./details";
import { GUTTER, MainView } from "./main_view";
import { MetricCharts } from "./metric_charts";
import { OccupancyBar, occupancyLegend } from "./occupancy_bar";
import { StackedBars } from "./stacked_bars";
import type { Grid } from "./tiles";
import { type Extent, type Limits, clampExtent, limitsOf, wholeExtent } from "./viewport";
import { windowChoice } from "./window_choice";
import { WholeRunStrip } from "./whole_run_strip";
import "./alloc.css";

const SIDE_WIDTH = 300;
/** How long the URL waits for the view to stop moving before it follows, ms. */
const URL_DELAY_MS = 150;

/** Numbers from a comma list in the URL (`n` of them when given), else `null`. */
function numbersOf(text: string | null, n?: number): number[] | null {
  if (!text) return null;
  const values = text.split(",").map(Number);
  return values.every(Number.isFinite) && (n === undefined || values.length === n) ? values : null;
}
const MAIN_HEIGHT = 420;

function gridOf(meta: AllocMeta): Grid {
  return { tStart: meta.run.start_ns, tLen: meta.run.end_ns - meta.run.start_ns, aLen: meta.axis_len, maxLevel: meta.max_level };
}

function limitsFor(meta: AllocMeta): Limits {
  return limitsOf(meta.run.start_ns, meta.run.end_ns, meta.axis_len);
}

/** True when the run has one thread (colour by thread would be one flat colour). */
export function singleThreaded(meta: AllocMeta): boolean {
  return meta.threads.length <= 1;
}

/** The first colouring: by thread, or by site for a single-threaded run. */
function defaultColor(meta: AllocMeta): string {
  return singleThreaded(meta) ? "site" : "thread";
}

/** Resolves once `el` has a width (its panel is not hidden). */
function shown(el: HTMLElement): Promise<void> {
  if (el.clientWidth > 0) return Promise.resolve();
  return new Promise((done) => {
    const watch = new ResizeObserver(() => {
      if (el.clientWidth === 0) return;
      watch.disconnect();
      done();
    });
    watch.observe(el);
  });
}

export class AllocLens implements AllocContext {
  meta: AllocMeta;
  limits: Limits;
  grid: Grid;
  readonly state: AllocState;
  private readonly root: HTMLElement;
  private readonly main: MainView;
  private readonly contextView: ContextView;
  private readonly bar: OccupancyBar;
  private readonly details: DetailsPanel;
  private readonly controls: Controls;
  private readonly charts: MetricCharts;
  private readonly binGrid: BinGrid;
  private readonly stacked: StackedBars;
  private readonly wholeRun: WholeRunStrip;
  private readonly status: HTMLElement;
  private readonly notes: HTMLElement;
  private statusTimer = 0;
  private urlTimer = 0;
  private followers = 0;
  /** The lens built again for another window of the run, which this one handed over to. */
  private successor: AllocLens | null = null;

  private constructor(
    private readonly el: HTMLElement,
    private readonly context: LensContext,
    readonly api: AllocApi,
    meta: AllocMeta,
  ) {
    this.meta = meta;
    this.limits = limitsFor(meta);
    this.grid = gridOf(meta);
    this.state = {
      view: wholeExtent(this.limits),
      draw: { color: defaultColor(meta), alpha: 0.5, cushion: "plateau", bin: null, smin: "", smax: "", pool: null, overflow: "first-fit" },
      bar: { style: "antialiased", profile: "plateau", alpha: 0.5 },
      softness: 0.35,
      cursors: [],
      gridMode: "time",
      brushed: null,
    };
    this.fromUrl();
    const total = Math.max(1040, el.clientWidth || 1300);
    // The lens's padding (2 × 16), the side panel and the gap before it, the main
    // column's right padding and border (10 + 2), the gutter, the context view and its
    // gap (10), and 4 px to spare: the page is never wider than the window.
    const mainWidth = total - 32 - SIDE_WIDTH - 20 - 12 - GUTTER - 10 - CONTEXT_WIDTH - 4;
    this.main = new MainView(this, mainWidth, MAIN_HEIGHT);
    this.contextView = new ContextView(this, MAIN_HEIGHT);
    this.bar = new OccupancyBar(this, mainWidth);
    this.details = new DetailsPanel(api.canBrush);
    this.controls = new Controls(
      {
        setDraw: (p) => this.setDraw(p),
        setBar: (p) => this.setBar(p),
        setSoftness: (s) => {
          this.state.softness = s;
          this.repaintCursors();
        },
        clearCursors: () => {
          this.state.cursors = [];
          this.repaintCursors();
        },
        setGridMode: (m) => {
          this.state.gridMode = m;
          this.binGrid.update();
          this.publish();
        },
        selectBin: (id) => this.selectBin(id),
        resetView: () => this.setView(wholeExtent(this.limits)),
        replay: (pool, overflow) => this.replay(pool, overflow),
      },
      this.state,
      api.reportPool(),
    );
    this.charts = new MetricCharts(this, mainWidth);
    // Sections have 12 px of padding; the main view starts GUTTER px into its column.
    const offset = GUTTER - 12;
    this.binGrid = new BinGrid(this, total - 60, mainWidth, offset);
    this.stacked = new StackedBars(this, mainWidth, offset);
    this.wholeRun = new WholeRunStrip(api, mainWidth, GUTTER, (from, to) => void this.readWindow(from, to));
    this.status = h("div", { class: "alloc-status", "data-testid": "alloc-status", role: "status" });
    this.notes = h("div", { class: "alloc-notes" });
    this.root = h(
      "div",
      { class: "alloc-lens", "data-testid": "alloc-lens" },
      this.controls.el,
      this.status,
      this.notes,
      h(
        "div",
        { class: "alloc-top" },
        h(
          "div",
          { class: "alloc-main-col" },
          this.wholeRun.el,
          h("div", { class: "alloc-main-row" }, this.main.el, this.contextView.el),
          h("div", { class: "alloc-under" }, h("div", { class: "alloc-bar-label", style: `width:${GUTTER}px` }, "Occupancy bar"), this.bar.el),
          this.charts.el,
        ),
        this.details.el,
      ),
      h("section", { class: "alloc-section" }, h("h3", {}, "Grid of bins"), occupancyLegend("alloc-grid-legend"), this.binGrid.el),
      h("section", { class: "alloc-section" }, h("h3", {}, "Occupancy of every bin"), occupancyLegend("alloc-stacked-legend"), this.stacked.el),
    );
    replaceChildren(el, this.root);
    this.modelChanged();
    this.followers = window.setInterval(() => {
      this.root.dataset.busy = this.settled() ? "0" : "1";
    }, 100);
  }

  /**
   * Builds the lens into `el`; while the server reads the map, shows its sentence there
   * (null, the sentence kept, when there will be no map). A panel hidden meanwhile (the
   * user switched tabs) is built once shown again, at its width.
   */
  static async mount(el: HTMLElement, context: LensContext): Promise<AllocLens | null> {
    const api = new AllocApi(context.source);
    const meta = await api.firstMeta((message, final) =>
      replaceChildren(
        el,
        h("div", { class: final ? "notes" : "alloc-pending", "data-testid": "alloc-pending", "data-final": String(final), role: "status" }, h("p", {}, message)),
      ),
    );
    if (!meta) return null;
    await shown(el);
    return new AllocLens(el, context, api, meta);
  }

  /** True when every view shows what the state asks for. */
  settled(): boolean {
    return this.main.pending === 0 && this.bar.settled && this.charts.settled && this.binGrid.settled && this.stacked.settled && this.wholeRun.settled;
  }

  cursorStyle(): CursorStyle {
    return cursorStyle(this.state.softness);
  }

  report(message: string): void {
    this.status.textContent = message;
    this.status.classList.add("on");
    window.clearTimeout(this.statusTimer);
    this.statusTimer = window.setTimeout(() => this.status.classList.remove("on"), 8000);
  }

  setView(v: Extent): void {
    this.state.view = clampExtent(v, this.limits);
    this.refreshAll();
  }

  toggleCursor(t: number, tolNs: number): void {
    const near = this.state.cursors.findIndex((c) => Math.abs(c - t) <= tolNs);
    if (near >= 0) this.state.cursors.splice(near, 1);
    else this.state.cursors.push(Math.round(t));
    this.repaintCursors();
  }

  setBrushed(b: BlockDetails | null): void {
    if (this.state.brushed?.id === b?.id) return;
    this.state.brushed = b;
    this.details.show(b, this.meta.time_origin_ns);
    this.main.draw();
  }

  private setDraw(p: Partial<DrawParams>): void {
    Object.assign(this.state.draw, p);
    if (p.color) this.details.showLegend(this.meta, p.color);
    if (p.smin !== undefined || p.smax !== undefined) this.controls.refresh(this.meta, this.state);
    this.refreshAll();
  }

  private setBar(p: Partial<BarParams>): void {
    Object.assign(this.state.bar, p);
    this.refreshAll();
  }

  private selectBin(id: number | null): void {
    this.state.draw.bin = id;
    const bin = id === null ? null : this.meta.bins.find((b) => b.id === id);
    const v = bin ? { ...this.state.view, a0: bin.axis_start, a1: Math.max(bin.axis_end, bin.axis_start + 1) } : { ...this.state.view, a0: this.limits.aStart, a1: this.limits.aEnd };
    this.setView(v);
  }

  private async replay(pool: string | null, overflow: DrawParams["overflow"]): Promise<string | null> {
    let meta: AllocMeta;
    try {
      meta = await this.api.meta({ pool, overflow });
    } catch (e) {
      return e instanceof Error ? e.message : String(e);
    }
    this.meta = meta;
    this.limits = limitsFor(meta);
    this.grid = gridOf(meta);
    Object.assign(this.state.draw, { pool, overflow, bin: null });
    this.state.view = wholeExtent(this.limits);
    this.state.brushed = null;
    this.details.show(null, meta.time_origin_ns);
    this.charts.build();
    this.modelChanged();
    return null;
  }

  /** Everything that depends on the model (real run or replay). */
  private modelChanged(): void {
    if (!this.meta.color_by.some((c) => c.id === this.state.draw.color && c.available)) this.state.draw.color = defaultColor(this.meta);
    // One thread would paint every block the same colour: the allocating site tells
    // blocks apart, so a single-threaded run is coloured by site (the menu says why).
    if (this.state.draw.color === "thread" && singleThreaded(this.meta)) this.state.draw.color = "site";
    this.controls.refresh(this.meta, this.state);
    this.details.showLegend(this.meta, this.state.draw.color);
    const choice = windowChoice(this.meta, this.api.canBrush, (from, to) => void this.readWindow(from, to));
    replaceChildren(this.notes, ...this.meta.notes.map((n) => h("p", {}, n)), ...choice);
    this.wholeRun.update(this.meta);
    this.root.dataset.pool = this.meta.pool ?? "";
    this.refreshAll();
  }

  private refreshAll(): void {
    this.main.draw();
    this.contextView.draw();
    this.bar.update();
    this.charts.update();
    this.binGrid.update();
    this.stacked.update();
    this.publish();
  }

  private repaintCursors(): void {
    this.main.draw();
    this.bar.paint();
    this.charts.paint();
    this.binGrid.paint();
    this.stacked.paint();
    this.publish();
  }

  /** The view, colouring, bin and cursors of a copied URL (what does not fit is ignored). */
  private fromUrl(): void {
    const url = readUrlState();
    const view = numbersOf(url.get("av"), 4);
    if (view) this.state.view = clampExtent({ t0: view[0], t1: view[1], a0: view[2], a1: view[3] }, this.limits);
    const color = url.get("ac");
    if (color && this.meta.color_by.some((c) => c.id === color && c.available)) this.state.draw.color = color;
    const bin = Number(url.get("ab"));
    if (url.has("ab") && this.meta.bins.some((b) => b.id === bin)) this.state.draw.bin = bin;
    const cursors = numbersOf(url.get("acur"));
    if (cursors) this.state.cursors = cursors.filter((t) => t >= this.limits.tStart && t <= this.limits.tEnd);
  }

  /** Writes the state into the URL once the view stops moving. */
  private toUrl(): void {
    window.clearTimeout(this.urlTimer);
    this.urlTimer = window.setTimeout(() => {
      const { view: v, draw, cursors } = this.state;
      const whole = wholeExtent(this.limits);
      const zoomed = v.t0 !== whole.t0 || v.t1 !== whole.t1 || v.a0 !== whole.a0 || v.a1 !== whole.a1;
      writeUrlState({
        av: zoomed ? [v.t0, v.t1, v.a0, v.a1].map((x) => Math.round(x)).join(",") : null,
        ac: draw.color,
        ab: draw.bin === null ? null : String(draw.bin),
        acur: cursors.length > 0 ? cursors.join(",") : null,
      });
    }, URL_DELAY_MS);
  }

  /** The state as data attributes, for tests and for the curious; and in the URL. */
  private publish(): void {
    const d = this.root.dataset;
    const v = this.state.view;
    d.view = JSON.stringify([v.t0, v.t1, v.a0, v.a1]);
    d.color = this.state.draw.color;
    d.cursors = JSON.stringify(this.state.cursors);
    d.gridMode = this.state.gridMode;
    d.bin = this.state.draw.bin === null ? "" : String(this.state.draw.bin);
    // A replay's view belongs to the replayed pool, which the URL does not hold.
    if (this.state.draw.pool === null) this.toUrl();
  }

  /** Has the server read the window `[from, to)` of the run, then builds the lens again. */
  private async readWindow(from: number, to: number): Promise<void> {
    try {
      await this.api.readWindow(from, to);
    } catch (e) {
      this.report(e instanceof Error ? e.message : String(e));
      return;
    }
    this.dispose();
    this.successor = await AllocLens.mount(this.el, this.context);
  }

  /** Stops the lens's timer (tests), and its successor's. */
  dispose(): void {
    window.clearInterval(this.followers);
    window.clearTimeout(this.urlTimer);
    this.wholeRun.dispose();
    this.successor?.dispose();
  }
}
