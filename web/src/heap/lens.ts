// The heap-evolution lens (paper 000): timeline with small multiples, time travel,
// local and global views with drill-down, options and leak suspects. This file holds
// the lens's state and keeps every part in step with it; the parts draw.

import { h, replaceChildren } from "../app/dom";
import { DataError } from "../data/source";
import type { HeapMeta, SnapshotInfo, Suspect, TimeNs, TimelineDoc, TreeNode } from "../data/types";
import { formatBytes, formatCount, formatDuration } from "../format";
import type { HeapApi, TimeWindowNs } from "./api";
import { Breadcrumbs } from "./breadcrumbs";
import { ChangeColors, changeColor, type NodeFill } from "./change_colors";
import { ColorScheme } from "./colors";
import { GrowthPanel } from "./growth_panel";
import {
  drillAfterRegroup,
  drillToMatch,
  findNode,
  keyOf,
  layoutPartition,
  levelsOf,
  type PlacedNode,
  resolveDrill,
  scaleFactor,
  searchTree,
  valueOf,
} from "./layout";
import { readUrlState, urlWindow, writeUrlState } from "../app/url_state";
import { StackStore, stacksDetails } from "./stacks";
import { StackedChart } from "./stacked_chart";
import { MultiplesStrip } from "./multiples";
import { Notice } from "./notice";
import { type Options, OptionsPanel } from "./options_panel";
import { PartitionChart } from "./partition_chart";
import { TimeControls } from "./time_controls";
import { TimelineChart } from "./timeline_chart";
import { Tooltip, type TooltipFacts } from "./tooltip";
import { type Combo, comboKey, TreeStore } from "./tree_store";

/** Everything the lens shows follows from this. */
export interface HeapState extends Options {
  /** The current time (one of the lens's times). */
  time: TimeNs;
  /** The drill-down node the user asked for (its full key); kept across time. */
  drill: string[];
  /** Times whose small multiples the user added. */
  pinned: TimeNs[];
  /** The window brushed on the timeline (`null`: the whole run): its snapshot times are
   * the lens's times, and growth and the stable order are measured between its ends. */
  window: TimeWindowNs | null;
}

/** Levels the local view shows below its root. */
const LOCAL_DEPTH = 2;
/** Trees up to this many nodes make the page fetch every time of the series at once. */
const PREFETCH_ALL_NODES = 800;
/** How long the pointer rests on a node before its stack is asked for, ms. */
const STACK_DELAY_MS = 120;

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
  private readonly stacked = new StackedChart();
  private readonly stacks: StackStore;
  private stackTimer = 0;
  private readonly details = h("div", { class: "hl-details", "data-testid": "hl-details" });
  /** The node, grouping and time the details panel shows. */
  private detailsKey = "";
  /** A leaf the user clicked (it cannot be drilled into): the details panel shows it. */
  private selected: string[] | null = null;
  private readonly search = h("input", {
    type: "search",
    class: "hl-search",
    placeholder: "Find a function…",
    "aria-label": "find a group by name",
    "data-testid": "hl-search",
  });
  private readonly searchCount = h("span", { class: "hint", "data-testid": "hl-search-count" });
  private readonly windowText = h("span", { "data-testid": "hl-window-text" });
  /** The scale of colours by change from the base run, while they are shown. */
  private readonly changeLegend = h("div", { class: "change-legend", "data-testid": "change-legend", hidden: true });
  private readonly windowClear = h("button", { type: "button", "data-testid": "hl-window-clear" }, "Whole run");
  private readonly windowBar = h("div", { class: "hl-window", "data-testid": "hl-window", hidden: true }, this.windowText, this.windowClear);

  static async mount(container: HTMLElement, source: HeapApi, meta: HeapMeta): Promise<HeapLens> {
    const timeline = await source.timeline(600);
    // A window from the URL: its snapshot times first (a report holds the run's only).
    const window = source.canPickAnyTime ? windowFromUrl(meta) : null;
    const times = window ? await source.snapshots(window).catch(() => null) : null;
    return new HeapLens(container, source, meta, timeline, times && window ? { window, times } : null);
  }

  private constructor(
    container: HTMLElement,
    private readonly source: HeapApi,
    private meta: HeapMeta,
    private timelineDoc: TimelineDoc,
    brushed: { window: TimeWindowNs; times: SnapshotInfo[] } | null,
  ) {
    this.store = new TreeStore(source);
    this.stacks = new StackStore(source);
    this.times = [...(brushed?.times ?? meta.snapshots)];
    const last = this.times[this.times.length - 1]?.time_ns ?? meta.run.end_ns;
    this.state = this.fromUrl({
      by: [...meta.default_classifiers],
      metric: "bytes",
      sort: "growth",
      scaled: true,
      chart: "sunburst",
      color: meta.base ? "change" : "groups",
      time: last,
      drill: [],
      pinned: [],
      domain: [],
      window: brushed?.window ?? null,
    });
    this.timeline = new TimelineChart({
      togglePoint: (t) => this.togglePinned(t),
      pickTime: (t) => this.pickTime(t),
      brush: (w) => void this.setWindow(w),
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
    this.options = new OptionsPanel(meta.classifiers, source.canRegroup, (patch) => this.set(patch), meta.base?.name ?? null);
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
          h("span", { class: "hint" }, source.canPickAnyTime ? "Click a point to add its tree below · drag to measure growth within a window · ← → to travel" : "Click a point to add its tree below · ← → to travel"),
          this.windowBar,
          this.timeline.el,
          this.controls.el,
          h("h3", { class: "hl-sub" }, "By group"),
          this.stacked.el,
        ),
        card("Trees over time", h("span", { class: "hint" }, "scaled to the largest heap"), this.multiples.el),
        h(
          "div",
          { class: "views" },
          card(
            "Local view",
            h("div", { class: "hl-find" }, this.search, this.searchCount),
            this.changeLegend,
            this.breadcrumbs.el,
            this.notice.el,
            this.local.el,
          ),
          card("Global view", h("span", { class: "hint" }, "whole hierarchy · drill-down branch highlighted"), this.global.el),
        ),
      ),
      h(
        "aside",
        { class: "hl-side" },
        card("Options", null, this.options.el),
        card("Details", null, this.details),
        card("Growth", null, this.growth.el),
      ),
    );
    container.append(this.el);
    document.addEventListener("keydown", (e) => this.key(e));
    this.search.addEventListener("input", () => this.render(false));
    this.windowClear.addEventListener("click", () => void this.setWindow(null));
    this.search.addEventListener("keydown", (e) => {
      if (e.key === "Enter") this.goToMatch();
    });
    this.loadSuspects();
    this.toUrl();
    void this.sync(false);
  }

  /** Takes the model of a new read of a followed trace (`meta`), keeping the grouping,
   * drill-down, window and options; the time stays, or follows the end when it was the
   * last one. */
  async refresh(meta: HeapMeta): Promise<void> {
    const timeline = await this.source.timeline(600);
    const s = this.state;
    const wasLast = s.time === this.times[this.times.length - 1]?.time_ns;
    const times = s.window ? await this.source.snapshots(s.window).catch(() => null) : null;
    this.meta = meta;
    this.timelineDoc = timeline;
    this.times = times ?? [...meta.snapshots];
    this.store.clear();
    this.stacks.clear();
    this.colors.clear();
    this.detailsKey = "";
    const last = this.times[this.times.length - 1]?.time_ns ?? meta.run.end_ns;
    if (!wasLast && !this.times.some((p) => p.time_ns === s.time)) this.addTime(s.time);
    this.state = { ...s, time: wasLast ? last : s.time };
    this.loadSuspects();
    this.toUrl();
    await this.sync(false);
  }

  /** Changes the state and brings every part in step. */
  set(patch: Partial<HeapState>): void {
    const before = this.state;
    if (patch.drill !== undefined || patch.by !== undefined) this.selected = null;
    const regrouped =
      (patch.by !== undefined && patch.by.join(",") !== before.by.join(",")) ||
      (patch.domain !== undefined && patch.domain.join(",") !== before.domain.join(","));
    // A drill path names groups of the old grouping: keep only what still means the same.
    if (regrouped && patch.drill === undefined) {
      // A new domain changes what the domain level's keys are: the path stops before it.
      const after = patch.domain === undefined ? (patch.by ?? before.by) : (patch.by ?? before.by).map((n) => (n === "closest-domain-site" ? "" : n));
      patch = { ...patch, drill: drillAfterRegroup(before.by, after, before.drill) };
    }
    this.state = { ...before, ...patch };
    const rewindowed = patch.window !== undefined && patch.window?.join("-") !== before.window?.join("-");
    if (regrouped || rewindowed) this.loadSuspects();
    this.toUrl();
    void this.sync(true);
  }

  /** `state` with what the page's URL says of the heap lens (bad values are ignored). */
  private fromUrl(state: HeapState): HeapState {
    const url = readUrlState();
    const known = new Set(this.meta.classifiers.map((c) => c.name));
    const by = url.get("by")?.split(",").filter((n) => known.has(n));
    const time = Number(url.get("t"));
    const drill = parseKeys(url.get("drill"));
    const domain = url.get("domain")?.split(",").filter((d) => d.length > 0);
    const pick = <T extends string>(key: string, values: readonly T[]): T | undefined =>
      values.find((v) => v === url.get(key));
    const [lo, hi] = state.window ?? [this.meta.run.start_ns, this.meta.run.end_ns];
    if (Number.isFinite(time) && url.has("t") && time >= lo && time <= hi) {
      if (this.source.canPickAnyTime) this.addTime(time);
      if (this.times.some((s) => s.time_ns === time)) state = { ...state, time };
    }
    return {
      ...state,
      by: by && by.length > 0 && this.source.canRegroup ? by : state.by,
      drill: drill ?? state.drill,
      domain: domain ?? state.domain,
      metric: pick("metric", ["bytes", "objects"] as const) ?? state.metric,
      sort: pick("sort", ["growth", "start", "end"] as const) ?? state.sort,
      chart: pick("chart", ["sunburst", "icicle"] as const) ?? state.chart,
      color: this.meta.base ? (pick("color", ["groups", "change"] as const) ?? state.color) : "groups",
      scaled: url.get("scaled") === "0" ? false : state.scaled,
    };
  }

  /** Writes the state into the page's URL. */
  private toUrl(): void {
    const s = this.state;
    writeUrlState({
      by: s.by.join(","),
      domain: s.domain.length > 0 ? s.domain.join(",") : null,
      t: String(s.time),
      drill: s.drill.length > 0 ? JSON.stringify(s.drill) : null,
      metric: s.metric,
      sort: s.sort,
      chart: s.chart,
      scaled: s.scaled ? null : "0",
      w: s.window ? s.window.join("-") : null,
      color: this.meta.base ? s.color : null,
    });
  }

  /** Brushes a window (its snapshot times become the lens's times), or with `null`
   * goes back to the whole run. */
  private async setWindow(window: TimeWindowNs | null): Promise<void> {
    let times: SnapshotInfo[];
    try {
      times = window ? await this.source.snapshots(window) : [...this.meta.snapshots];
    } catch (e) {
      this.notice.show(message(e), "error");
      return;
    }
    this.times = times;
    const s = this.state;
    // Keep the current time when it is still one of the times, else the window's end.
    const held = times.some((p) => p.time_ns === s.time);
    if (!held && !window && this.source.canPickAnyTime) this.addTime(s.time);
    const time = held || !window ? s.time : times[times.length - 1].time_ns;
    const [lo, hi] = window ?? [this.meta.run.start_ns, this.meta.run.end_ns];
    this.set({ window, time, pinned: s.pinned.filter((t) => t >= lo && t <= hi) });
  }

  /** Drills to the largest search match. */
  private goToMatch(): void {
    const root = this.store.get(this.combo(), this.state.time);
    const best = root ? searchTree(root, this.search.value, this.state.metric)[0] : undefined;
    if (best) this.set({ drill: drillToMatch(best) });
  }

  private combo(): Combo {
    const { by, domain, metric, sort, window } = this.state;
    return { by, domain, metric, sort, window };
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
    // Inside a window, a click picks a time within it.
    const w = this.state.window;
    if (w) t = Math.max(w[0], Math.min(w[1], t));
    this.addTime(t);
    this.set({ time: t });
  }

  /** Makes `t` one of the lens's times (a time the user picked), if it is not yet. */
  private addTime(t: TimeNs): void {
    if (!this.times.some((s) => s.time_ns === t)) {
      const picked: SnapshotInfo = { time_ns: t, kind: "picked", label: "picked" };
      this.times = [...this.times, picked].sort((a, b) => a.time_ns - b.time_ns);
    }
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
      this.selected = null;
      this.set({ drill: path });
    } else if (role === "global") {
      this.set({ drill: path.slice(0, -1) });
      this.selected = path;
      this.render(false);
    } else {
      this.selected = path;
      this.render(false);
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
        windowStartNs: this.state.window?.[0] ?? this.meta.run.start_ns,
        hint: node.hasChildren ? "Click to drill down" : undefined,
        base: this.baseFacts(node.node),
      },
      event,
    );
    // The heaviest stack, once the pointer rests (a report holds no stacks).
    window.clearTimeout(this.stackTimer);
    const path = node.node.full_key;
    if (path.length === 0 || node.node.is_other || !this.source.hasStacks) return;
    const { by, domain, time } = this.state;
    this.stackTimer = window.setTimeout(() => {
      this.stacks
        .get(by, domain, path, time)
        .then((doc) => this.tooltip.showStacks(path, doc))
        .catch((e: unknown) => this.tooltip.showStacks(path, message(e)));
    }, STACK_DELAY_MS);
  }

  /** The node's value in the base run, when there is one and its values are loaded. */
  private baseFacts(node: TreeNode): TooltipFacts["base"] {
    const base = this.meta.base && this.store.baseOf(this.combo(), this.state.time);
    if (!base || !this.meta.base) return undefined;
    return { value: base.of(node, this.state.metric), name: this.meta.base.name, timeNs: base.wire.base_time_ns };
  }

  /** The fill of the tree at `time`: by change from the base run, or by group. */
  private fillAt(combo: Combo, time: TimeNs, groups: ColorScheme): NodeFill {
    const base = this.state.color === "change" ? this.store.baseOf(combo, time) : undefined;
    const root = this.store.get(combo, time);
    return base && root ? new ChangeColors(root, base, this.state.metric) : groups;
  }

  /** The change legend: shown while nodes are coloured by change from the base run. */
  private renderChangeLegend(fill: NodeFill): void {
    const base = this.meta.base;
    this.changeLegend.hidden = !(fill instanceof ChangeColors) || !base;
    if (!(fill instanceof ChangeColors) || !base) return;
    const metric = this.state.metric;
    const show = (v: number) => (metric === "bytes" ? formatBytes(v) : `${formatCount(v)} objects`);
    const ramp = changeRamp(fill.largest, 9);
    replaceChildren(
      this.changeLegend,
      h("span", {}, `−${show(fill.largest)} shrank`),
      h("span", { class: "change-ramp", style: `background: linear-gradient(to right, ${ramp.join(", ")})` }),
      h("span", {}, `grew +${show(fill.largest)}`),
      h("span", { class: "hint", title: `compared with ${base.name} at the same point of its run` }, `vs ${base.name}`),
    );
  }

  /** The details panel: the drill-down node and its heaviest stacks at this time. */
  private renderDetails(node: TreeNode, path: string[]): void {
    const s = this.state;
    const key = `${s.by.join(",")}|${s.domain.join(",")}|${s.time}|${keyOf(path)}`;
    if (key === this.detailsKey) return;
    this.detailsKey = key;
    const title = path.length === 0 ? "Whole heap" : path.join(" › ");
    const head = h(
      "div",
      { class: "details-head" },
      h("div", { class: "details-title", title }, title),
      h("div", { class: "hint" }, `${formatBytes(node.bytes)} in ${formatCount(node.objects)} blocks at ${formatDuration(s.time)}`),
    );
    if (path.length === 0 || node.is_other || !this.source.hasStacks) {
      const why = path.length === 0 ? "Drill into a group to see its call stacks." : node.is_other ? "“Other” merges several groups: open it to see each." : "A report holds no call stacks; run `memlens view` to see them.";
      replaceChildren(this.details, head, h("p", { class: "hint" }, why));
      return;
    }
    replaceChildren(this.details, head, h("p", { class: "hint" }, "Loading its call stacks…"));
    this.stacks
      .get(s.by, s.domain, path, s.time)
      .then((doc) => {
        if (key === this.detailsKey) replaceChildren(this.details, head, stacksDetails(doc));
      })
      .catch((e: unknown) => {
        if (key === this.detailsKey) replaceChildren(this.details, head, h("p", { class: "error" }, message(e)));
      });
  }

  /** Whether `closest-domain-site` is a level while no prefix is given yet. */
  private awaitsDomain(): boolean {
    return this.state.by.includes("closest-domain-site") && this.state.domain.length === 0;
  }

  private loadSuspects(): void {
    const { by, domain, window } = this.state;
    if (this.awaitsDomain()) return;
    this.growth.loading(window);
    this.source
      .growth(by, 20, domain, window)
      .then((doc) => {
        const same = (a: readonly unknown[] | null, b: readonly unknown[] | null) => (a ?? []).join(",") === (b ?? []).join(",");
        if (!same(by, this.state.by) || !same(domain, this.state.domain) || !same(window, this.state.window)) return;
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
    if (this.awaitsDomain()) {
      this.notice.show("Type the domain prefixes beside “Closest Domain Call Site” (e.g. myapp:: or com.example.) to group by it.");
      return;
    }
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
      window: s.window,
    });
    this.windowBar.hidden = !s.window;
    if (s.window) {
      const [from, to] = s.window;
      this.windowText.textContent = `Window ${formatDuration(from)} – ${formatDuration(to)} (${formatDuration(to - from)}): growth and order measured within it`;
    }
    this.el.dataset.time = String(s.time);
    this.el.dataset.chart = s.chart;
    this.el.dataset.drill = JSON.stringify(s.drill);
    if (!root) {
      this.el.dataset.shown = "";
      return;
    }
    const colors = this.colorsFor(combo, root);
    const layers = this.store.layersOf(combo);
    if (layers && layers.layers.length > 0) {
      const shown = s.window ? { start_ns: s.window[0], end_ns: s.window[1] } : this.timelineDoc.window;
      this.stacked.render({ data: layers, metric: s.metric, colors, current: s.time, window: shown });
    }
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
        colors: s.color === "change" ? this.fillAt(combo, t, colors) : undefined,
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
    const fill = this.fillAt(combo, s.time, colors);
    this.renderChangeLegend(fill);
    const localPlaced = layoutPartition(drill.node, { metric: s.metric, depth: LOCAL_DEPTH });
    this.local.render({
      kind: s.chart,
      placed: localPlaced,
      // The levels present (the same at every time: all trees share their nodes).
      levels: Math.max(2, ...localPlaced.map((p) => p.depth + 1)),
      colors: fill,
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
      colors: fill,
      metric: s.metric,
      branch: drill.path,
      animate: tween,
    });
    this.breadcrumbs.render(drill.path);
    this.growth.render(this.suspects, drill.path);
    const picked = this.selected && findNode(root, this.selected);
    if (picked && this.selected) this.renderDetails(picked, this.selected);
    else this.renderDetails(drill.node, drill.path);
    const matches = searchTree(root, this.search.value, s.metric);
    const marked = this.search.value.trim() ? new Set(matches.map((m) => keyOf(m.full_key))) : null;
    this.local.mark(marked);
    this.global.mark(marked);
    this.searchCount.textContent = marked ? `${matches.length} match${matches.length === 1 ? "" : "es"}${matches.length ? " · Enter to go" : ""}` : "";
    this.el.dataset.shown = JSON.stringify(drill.path);
  }
}

/** A sample of the change scale: `n` colours from the largest shrink to the largest growth. */
function changeRamp(largest: number, n: number): string[] {
  return Array.from({ length: n }, (_, i) => changeColor(largest * ((2 * i) / (n - 1) - 1), largest));
}

/** The window in the page's URL (`w=FROM-TO`, ns), when it lies inside the run. */
function windowFromUrl(meta: HeapMeta): TimeWindowNs | null {
  const window = urlWindow();
  return window && window[0] >= meta.run.start_ns && window[1] <= meta.run.end_ns ? window : null;
}

/** A drill path from the URL: a JSON array of strings, else `undefined`. */
function parseKeys(text: string | null): string[] | undefined {
  if (!text) return undefined;
  try {
    const keys: unknown = JSON.parse(text);
    return Array.isArray(keys) && keys.every((k) => typeof k === "string") ? keys : undefined;
  } catch {
    return undefined;
  }
}

function message(e: unknown): string {
  return e instanceof DataError ? e.message : e instanceof Error ? e.message : String(e);
}
