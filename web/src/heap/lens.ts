// The heap-evolution lens (paper 000): timeline with small multiples, time travel,
// local and global views with drill-down, options and leak suspects. This file holds
// the lens's state and keeps every part in step with it; the parts draw.

import { h } from "../app/dom";
import { DataError } from "../data/source";
import type { HeapMeta, SnapshotInfo, Suspect, TimeNs, TimelineDoc, TreeNode } from "../data/types";
import { formatDuration } from "../format";
import type { HeapApi } from "./api";
import { Breadcrumbs } from "./breadcrumbs";
import { ColorScheme } from "./colors";
import { GrowthPanel } from "./growth_panel";
import {
  findNode,
  layoutPartition,
  levelsOf,
  type PlacedNode,
  resolveDrill,
  scaleFactor,
  valueOf,
} from "./layout";
import { MultiplesStrip } from "./multiples";
import { Notice } from "./notice";
import { type Options, OptionsPanel } from "./options_panel";
import { PartitionChart } from "./partition_chart";
import { TimeControls } from "./time_controls";
import { TimelineChart } from "./timeline_chart";
import { Tooltip } from "./tooltip";
import { type Combo, comboKey, TreeStore } from "./tree_store";

/** Everything the lens shows follows from this. */
export interface HeapState extends Options {
  /** The current time (one of the lens's times). */
  time: TimeNs;
  /** The drill-down node the user asked for (its full key); kept across time. */
  drill: string[];
  /** Times whose small multiples the user added. */
  pinned: TimeNs[];
}

/** Levels the local view shows below its root. */
const LOCAL_DEPTH = 2;
/** Trees up to this many nodes make the page fetch every time of the series at once. */
const PREFETCH_ALL_NODES = 800;

export class HeapLens {
  private state: HeapState;
  private times: SnapshotInfo[];
  private readonly store: TreeStore;
  private readonly colors = new Map<string, ColorScheme>();
  private suspects: Suspect[] = [];
  private hovered: string | null = null;
  private lastChart: Options["chart"] | null = null;
  private sequence = 0;

  private readonly el: HTMLElement;
  private readonly timeline: TimelineChart;
  private readonly controls: TimeControls;
  private readonly multiples: MultiplesStrip;
  private readonly local: PartitionChart;
  private readonly global: PartitionChart;
  private readonly breadcrumbs: Breadcrumbs;
  private readonly notice = new Notice();
  private readonly options: OptionsPanel;
  private readonly growth: GrowthPanel;
  private readonly tooltip = new Tooltip();

  static async mount(container: HTMLElement, source: HeapApi, meta: HeapMeta): Promise<HeapLens> {
    const timeline = await source.timeline(600);
    return new HeapLens(container, source, meta, timeline);
  }

  private constructor(
    container: HTMLElement,
    private readonly source: HeapApi,
    private readonly meta: HeapMeta,
    private readonly timelineDoc: TimelineDoc,
  ) {
    this.store = new TreeStore(source);
    this.times = [...meta.snapshots];
    const last = this.times[this.times.length - 1]?.time_ns ?? meta.run.end_ns;
    this.state = {
      by: [...meta.default_classifiers],
      metric: "bytes",
      sort: "growth",
      scaled: true,
      chart: "sunburst",
      time: last,
      drill: [],
      pinned: [],
    };
    this.timeline = new TimelineChart({
      togglePoint: (t) => this.togglePinned(t),
      pickTime: (t) => this.pickTime(t),
    });
    this.controls = new TimeControls({
      step: (d) => this.step(d),
      seek: (i) => this.times[i] && this.set({ time: this.times[i].time_ns }),
    });
    this.multiples = new MultiplesStrip({
      select: (t) => this.set({ time: t }),
      unpin: (t) => this.set({ pinned: this.state.pinned.filter((p) => p !== t) }),
    });
    const chartEvents = (role: "local" | "global") => ({
      hover: (node: PlacedNode | null, event: MouseEvent) => this.hover(node, event),
      click: (node: PlacedNode) => this.clickNode(role, node),
    });
    this.local = new PartitionChart("local", chartEvents("local"));
    this.global = new PartitionChart("global", chartEvents("global"));
    this.breadcrumbs = new Breadcrumbs((path) => this.set({ drill: path }));
    this.options = new OptionsPanel(meta.classifiers, source.canRegroup, (patch) => this.set(patch));
    this.growth = new GrowthPanel((path) => this.set({ drill: path }));

    const card = (title: string, extra: Node | null, ...body: Node[]) =>
      h("section", { class: "card" }, h("header", { class: "card-head" }, h("h2", {}, title), extra), ...body);
    // What the heap engine repaired in the trace, above everything else.
    const notes = meta.notes.length > 0 ? h("div", { class: "notes hl-notes" }, ...meta.notes.map((n) => h("p", {}, n))) : null;
    this.el = h(
      "div",
      { class: "heap-lens", "data-testid": "heap-lens" },
      notes,
      h(
        "div",
        { class: "hl-main" },
        card(
          "Heap over time",
          h("span", { class: "hint" }, "Click a point to add its tree below · ← → to travel"),
          this.timeline.el,
          this.controls.el,
        ),
        card("Trees over time", h("span", { class: "hint" }, "scaled to the largest heap"), this.multiples.el),
        h(
          "div",
          { class: "views" },
          card("Local view", this.breadcrumbs.el, this.notice.el, this.local.el),
          card("Global view", h("span", { class: "hint" }, "whole hierarchy · drill-down branch highlighted"), this.global.el),
        ),
      ),
      h("aside", { class: "hl-side" }, card("Options", null, this.options.el), card("Growth", null, this.growth.el)),
    );
    container.append(this.el);
    document.addEventListener("keydown", (e) => this.key(e));
    this.loadSuspects();
    void this.sync(false);
  }

  /** Changes the state and brings every part in step. */
  set(patch: Partial<HeapState>): void {
    const before = this.state;
    this.state = { ...before, ...patch };
    if (patch.by && patch.by.join(",") !== before.by.join(",")) this.loadSuspects();
    void this.sync(true);
  }

  private combo(): Combo {
    return { by: this.state.by, metric: this.state.metric, sort: this.state.sort };
  }

  private timeIndex(): number {
    const i = this.times.findIndex((s) => s.time_ns === this.state.time);
    return i < 0 ? this.times.length - 1 : i;
  }

  private step(delta: number): void {
    const i = Math.max(0, Math.min(this.times.length - 1, this.timeIndex() + delta));
    if (this.times[i] && this.times[i].time_ns !== this.state.time) this.set({ time: this.times[i].time_ns });
  }

  private togglePinned(t: TimeNs): void {
    const pinned = this.state.pinned.includes(t)
      ? this.state.pinned.filter((p) => p !== t)
      : [...this.state.pinned, t].sort((a, b) => a - b);
    this.set({ pinned });
  }

  private pickTime(t: TimeNs): void {
    if (!this.times.some((s) => s.time_ns === t)) {
      const picked: SnapshotInfo = { time_ns: t, kind: "picked", label: "picked" };
      this.times = [...this.times, picked].sort(
        (a, b) => a.time_ns - b.time_ns,
      );
    }
    this.set({ time: t });
  }

  private key(e: KeyboardEvent): void {
    const target = e.target as HTMLElement | null;
    if (target && ["INPUT", "SELECT", "TEXTAREA"].includes(target.tagName)) return;
    if (!this.el.isConnected || this.el.offsetParent === null) return;
    if (e.key === "ArrowLeft") this.step(-1);
    else if (e.key === "ArrowRight") this.step(1);
    else if (e.key === "ArrowUp" || e.key === "Backspace") this.drillUp();
    else return;
    e.preventDefault();
  }

  private drillUp(): void {
    const root = this.store.get(this.combo(), this.state.time);
    if (!root) return;
    const shown = resolveDrill(root, this.state.drill, this.state.metric).path;
    if (shown.length > 0) this.set({ drill: shown.slice(0, -1) });
  }

  private clickNode(role: "local" | "global", node: PlacedNode): void {
    const path = node.node.full_key;
    if (role === "local" && node.depth === 0) {
      this.drillUp();
    } else if (node.hasChildren) {
      this.set({ drill: path });
    } else if (role === "global") {
      this.set({ drill: path.slice(0, -1) });
    }
  }

  private hover(node: PlacedNode | null, event: MouseEvent): void {
    const key = node?.key ?? null;
    if (key !== this.hovered) {
      this.hovered = key;
      this.local.highlight(key);
      this.global.highlight(key);
    }
    const root = this.store.get(this.combo(), this.state.time);
    if (!node || !root) {
      this.tooltip.hide();
      return;
    }
    const parent = findNode(root, node.node.full_key.slice(0, -1)) ?? node.node;
    this.tooltip.show(
      {
        node: node.node,
        parentValue: valueOf(parent, this.state.metric),
        heapValue: valueOf(root, this.state.metric),
        metric: this.state.metric,
        windowStartNs: this.meta.run.start_ns,
        hint: node.hasChildren ? "Click to drill down" : undefined,
      },
      event,
    );
  }

  private loadSuspects(): void {
    const by = this.state.by;
    this.growth.loading();
    this.source
      .growth(by, 20)
      .then((doc) => {
        if (by.join(",") !== this.state.by.join(",")) return;
        this.suspects = doc.doc.suspects;
        this.render(false);
      })
      .catch((e: unknown) => this.growth.failed(message(e)));
  }

  /** Loads what the state needs, then draws it (dropping answers that came too late). */
  private async sync(animate: boolean): Promise<void> {
    const sequence = ++this.sequence;
    const combo = this.combo();
    const needed = [this.state.time, ...this.state.pinned];
    this.render(animate);
    if (this.store.missing(combo, needed).length === 0 && this.store.get(combo, this.state.time)) {
      this.prefetch(combo);
      return;
    }
    this.el.dataset.busy = "1";
    try {
      await this.store.load(combo, needed);
    } catch (e) {
      if (sequence === this.sequence) {
        this.notice.show(message(e), "error");
        this.el.dataset.busy = "0";
      }
      return;
    }
    if (sequence !== this.sequence) return;
    this.el.dataset.busy = "0";
    if (this.notice.el.dataset.kind === "error") this.notice.clear();
    this.render(animate);
    this.prefetch(combo);
  }

  /** Small trees: fetch every time of the series once; large ones: the neighbours. */
  private prefetch(combo: Combo): void {
    const root = this.store.get(combo, this.state.time);
    if (!root) return;
    let nodes = 0;
    const count = (n: TreeNode) => {
      nodes += 1;
      n.children?.forEach(count);
    };
    count(root);
    const allTimes = this.times.map((s) => s.time_ns);
    const i = this.timeIndex();
    const wanted = nodes <= PREFETCH_ALL_NODES ? allTimes : allTimes.slice(Math.max(0, i - 1), i + 2);
    if (this.store.missing(combo, wanted).length === 0) return;
    const all = nodes <= PREFETCH_ALL_NODES;
    this.store
      .load(combo, wanted, all)
      .then(() => {
        if (comboKey(combo) === comboKey(this.combo())) this.render(false);
      })
      .catch(() => {
        // A failed prefetch is retried when the time is actually visited.
      });
  }

  private colorsFor(combo: Combo, root: TreeNode): ColorScheme {
    const key = comboKey(combo);
    let scheme = this.colors.get(key);
    if (!scheme) {
      scheme = new ColorScheme(root);
      this.colors.set(key, scheme);
    }
    return scheme;
  }

  /** Draws the state with the data at hand. */
  private render(animate: boolean): void {
    const s = this.state;
    const combo = this.combo();
    const index = this.timeIndex();
    const root = this.store.get(combo, s.time);
    const totals = this.store.totalsOf(combo);
    const pinned = new Set(s.pinned);
    this.options.render(s);
    this.controls.render(this.times, index);
    this.timeline.render({
      timeline: this.timelineDoc,
      metric: s.metric,
      points: this.times.map((p) => {
        const total = totals.get(p.time_ns);
        const tree = this.store.get(combo, p.time_ns);
        const value = total
          ? s.metric === "bytes"
            ? total.bytes
            : total.objects
          : tree
            ? valueOf(tree, s.metric)
            : undefined;
        return { ...p, value };
      }),
      marks: this.meta.marks,
      current: s.time,
      pinned,
      canPick: this.source.canPickAnyTime,
    });
    this.el.dataset.time = String(s.time);
    this.el.dataset.chart = s.chart;
    this.el.dataset.drill = JSON.stringify(s.drill);
    if (!root) {
      this.el.dataset.shown = "";
      return;
    }
    const colors = this.colorsFor(combo, root);
    let largest = valueOf(root, s.metric);
    for (const t of totals.values()) largest = Math.max(largest, s.metric === "bytes" ? t.bytes : t.objects);

    const shownTimes = [...new Set([s.time, ...s.pinned])].sort((a, b) => a - b);
    this.multiples.render({
      entries: shownTimes.map((t) => ({
        time: t,
        root: this.store.get(combo, t),
        label: this.times.find((p) => p.time_ns === t)?.label ?? "",
        isCurrent: t === s.time,
        pinned: pinned.has(t),
      })),
      kind: s.chart,
      metric: s.metric,
      colors,
      scaled: s.scaled,
      largest,
    });

    const drill = resolveDrill(root, s.drill, s.metric);
    if (drill.fellBack) {
      const wanted = s.drill[s.drill.length - 1];
      const shown = drill.path.length ? drill.path[drill.path.length - 1] : "the whole heap";
      this.notice.show(
        `“${wanted}” has no live memory at ${formatDuration(s.time)}; showing its closest ancestor, ${shown === "the whole heap" ? shown : `“${shown}”`}.`,
      );
    } else if (this.notice.el.dataset.kind === "info") {
      this.notice.clear();
    }
    // Switching chart kind or drilling redraws; stepping through time tweens.
    const chartChanged = this.lastChart !== s.chart;
    this.lastChart = s.chart;
    const tween = animate && !chartChanged;
    const localPlaced = layoutPartition(drill.node, { metric: s.metric, depth: LOCAL_DEPTH });
    this.local.render({
      kind: s.chart,
      placed: localPlaced,
      // The levels present (the same at every time: all trees share their nodes).
      levels: Math.max(2, ...localPlaced.map((p) => p.depth + 1)),
      colors,
      metric: s.metric,
      animate: tween,
    });
    const globalPlaced = layoutPartition(root, {
      metric: s.metric,
      scale: scaleFactor(valueOf(root, s.metric), largest, s.scaled),
    });
    // A scaled sunburst sweeps less than a full turn, but its hub stays a whole disc.
    if (s.chart === "sunburst") globalPlaced[0] = { ...globalPlaced[0], x0: 0, x1: 1 };
    this.global.render({
      kind: s.chart,
      placed: globalPlaced,
      levels: levelsOf(root),
      colors,
      metric: s.metric,
      branch: drill.path,
      animate: tween,
    });
    this.breadcrumbs.render(drill.path);
    this.growth.render(this.suspects, drill.path);
    this.el.dataset.shown = JSON.stringify(drill.path);
  }
}

function message(e: unknown): string {
  return e instanceof DataError ? e.message : e instanceof Error ? e.message : String(e);
}
