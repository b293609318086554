// The cache lens (paper 002): the organic ring view of a reference trace playing
// through a simulated cache hierarchy. This file holds the lens's state — which
// source and hierarchy, the position in the trace, play/pause/speed/time-lapse — and
// drives the parts: the scene on the canvas, the timeline, the panels. Batches of
// events are fetched ahead of the playhead so that playback never waits. In a report
// the lens plays the embedded prefix of one source under one hierarchy, and says so.

import { h, replaceChildren } from "../app/dom";
import type { LensContext } from "../app/lenses";
import type { Source } from "../data/source";
import { CacheApi } from "./api";
import type { Batch } from "./columns";
import { CacheModel, type Effects } from "./model";
import { HierarchyEditor, Legend, StatsPanel, channelLegend, sizeText } from "./panels";
import { Scene } from "./scene";
import { MissTimeline } from "./timeline";
import type { SessionDoc, SessionParams, SourcesDoc } from "./types";

const SPEEDS = [1, 2, 5, 10, 30, 60];
const FACTORS = [1, 2, 4, 8, 16, 32, 64, 256];
const KIND = ["load", "store", "modify", "fetch"];
/** The shortest step of a manual step, so its flash can be seen. */
const MANUAL_STEP_MS = 450;
/** The least time between updates of the position's texts while playing. */
const TEXT_INTERVAL_MS = 100;
/** Frame times kept for the figures. */
const FRAME_HISTORY = 2000;

function quantile(values: number[], q: number): number {
  if (values.length === 0) return 0;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))];
}

export class CacheLens {
  private readonly api: CacheApi;
  private sources: SourcesDoc = { default: "", sources: [] };
  private params: SessionParams = { source: "", n: null, levels: "", inclusion: "" };
  private session: SessionDoc | null = null;
  /** The references the lens can play: all of the session's, or a report's prefix. */
  private playable = 0;
  private model: CacheModel | null = null;
  private scene: Scene | null = null;
  private position = 0;
  private playing = false;
  private animating = false;
  private stepStart = 0;
  private stepDuration = 200;
  private stepsPerSecond = 5;
  private factor = 1;
  private batches: Batch[] = [];
  private fetching = false;
  private generation = 0;
  private statsBusy = false;
  private statsDirty = false;
  private lastStats = 0;
  private lastFrame = 0;
  /** The step progress of the last drawn frame (the hook reports positions there). */
  private lastT = 1;
  private readonly drawTimes: number[] = [];
  private readonly workTimes: number[] = [];
  private ctx: CanvasRenderingContext2D | null = null;
  /** The position whose statistics the panel shows, and the last one asked for. */
  private statsAt = -1;
  private statsAsked = -1;
  /** The position the reference text and position label show, and when they changed. */
  private shownAt = -1;
  private shownTime = 0;
  /** The reference whose source line the panel should show (the step's last). */
  private shownRef: { batch: Batch; i: number } | null = null;
  private readonly intervals: number[] = [];
  private width = 600;
  private height = 600;

  private readonly root: HTMLElement;
  private readonly canvas = h("canvas", { class: "cl-canvas", "data-testid": "cache-canvas" });
  private readonly picker = h("select", { "data-testid": "cache-source" });
  private readonly sizeInput = h("input", { type: "number", min: 1, class: "cl-n", "data-testid": "cache-n", title: "problem size N" });
  private readonly title = h("span", { class: "cl-title" });
  private readonly playButton = h("button", { class: "btn", "data-testid": "cache-play" }, "Play");
  private readonly stepButton = h("button", { class: "btn", "data-testid": "cache-step", title: "one step (→)" }, "Step");
  private readonly restartButton = h("button", { class: "btn", "data-testid": "cache-restart", title: "back to the first reference" }, "Restart");
  private readonly speed = h("select", { "data-testid": "cache-speed", title: "animation steps per second" });
  private readonly lapse = h("select", { "data-testid": "cache-factor", title: "references per step (time-lapse)" });
  private readonly tail = h("input", { type: "range", min: 0, max: 64, value: 0, "data-testid": "cache-tail", title: "pathline tail length, in steps" });
  private readonly tailLabel = h("span", { class: "cl-small" }, "tail 0");
  private readonly scrub = h("input", { type: "range", min: 0, max: 0, value: 0, class: "cl-scrub", "data-testid": "cache-scrub" });
  private readonly positionLabel = h("span", { class: "cl-position", "data-testid": "cache-position" });
  private readonly current = h("div", { class: "cl-current", "data-testid": "cache-current" });
  private readonly error = h("p", { class: "error", "data-testid": "cache-error" });
  private readonly reportNote = h("p", { class: "cl-report-note", "data-testid": "cache-report-note" });
  private readonly hint = h("div", { class: "cl-hint-box", "data-testid": "cache-fit-hint" });
  /** The kernel's title while a kernel plays (the header names it), else null. */
  private kernelTitle: string | null = null;
  /** The header's own text, restored when the lens is hidden or plays a trace. */
  private headerProgram: string | null = null;
  private readonly timeline = new MissTimeline((i) => void this.jump(i));
  private readonly legend = new Legend((hidden) => {
    if (this.scene) this.scene.hidden = hidden;
  });
  private readonly stats = new StatsPanel();
  private readonly editor = new HierarchyEditor((choice) => void this.loadSession({ ...this.params, ...choice }));

  static async mount(el: HTMLElement, { source }: LensContext): Promise<CacheLens> {
    const lens = new CacheLens(el, source);
    await lens.start();
    return lens;
  }

  private constructor(el: HTMLElement, source: Source) {
    this.api = new CacheApi(source);
    for (const s of SPEEDS) this.speed.append(h("option", { value: s }, `${s} steps/s`));
    this.speed.value = String(this.stepsPerSecond);
    for (const f of FACTORS) this.lapse.append(h("option", { value: f }, f === 1 ? "time-lapse off" : `time-lapse ${f}×`));
    this.root = h(
      "div",
      { class: "cache-lens", "data-testid": "cache-lens" },
      h(
        "div",
        { class: "cl-top" },
        h("label", {}, "Source ", this.picker),
        h("label", {}, "N ", this.sizeInput),
        this.title,
      ),
      this.reportNote,
      this.error,
      this.hint,
      h(
        "div",
        { class: "cl-body" },
        h(
          "div",
          { class: "cl-main" },
          h("div", { class: "cl-stage" }, this.canvas),
          this.current,
          h(
            "div",
            { class: "cl-controls" },
            this.restartButton,
            this.playButton,
            this.stepButton,
            this.speed,
            this.lapse,
            this.tail,
            this.tailLabel,
          ),
          h("div", { class: "cl-scrubber" }, this.scrub, this.positionLabel),
          this.timeline.canvas,
        ),
        h("div", { class: "cl-side" }, this.legend.el, channelLegend(), this.stats.el, this.editor.el),
      ),
    );
    replaceChildren(el, this.root);
    this.playButton.addEventListener("click", () => this.setPlaying(!this.playing));
    this.stepButton.addEventListener("click", () => void this.stepOnce());
    this.restartButton.addEventListener("click", () => void this.jump(0));
    this.speed.addEventListener("change", () => (this.stepsPerSecond = Number(this.speed.value)));
    this.lapse.addEventListener("change", () => {
      this.factor = Number(this.lapse.value);
      if (this.factor > 1 && Number(this.tail.value) === 0) this.setTail(16);
      if (this.factor === 1) this.setTail(0);
    });
    this.tail.addEventListener("input", () => this.setTail(Number(this.tail.value)));
    let scrubTimer = 0;
    this.scrub.addEventListener("input", () => {
      window.clearTimeout(scrubTimer);
      scrubTimer = window.setTimeout(() => void this.jump(Number(this.scrub.value)), 80);
    });
    this.picker.addEventListener("change", () => {
      const info = this.sources.sources.find((s) => s.id === this.picker.value);
      void this.loadSession({ source: this.picker.value, n: info?.default_n ?? null, levels: "", inclusion: "", twindow: this.params.twindow, tweights: "" });
    });
    this.sizeInput.addEventListener("change", () => {
      const n = Math.round(Number(this.sizeInput.value));
      if (n > 0) void this.loadSession({ ...this.params, n });
    });
    document.addEventListener("keydown", (e) => {
      if (this.root.offsetParent === null || (e.target as HTMLElement)?.tagName === "INPUT") return;
      if (e.key === " ") {
        e.preventDefault();
        this.setPlaying(!this.playing);
      } else if (e.key === "ArrowRight") void this.stepOnce();
    });
    new ResizeObserver(() => this.resize()).observe(this.canvas.parentElement!);
    this.installHook();
  }

  private async start(): Promise<void> {
    this.sources = await this.api.sources();
    for (const s of this.sources.sources) this.picker.append(h("option", { value: s.id }, s.title));
    if (!this.api.canSimulate) {
      this.picker.disabled = true;
      this.editor.lock();
    }
    const first = this.sources.sources.find((s) => s.id === this.sources.default) ?? this.sources.sources[0];
    await this.loadSession({ source: first.id, n: first.default_n, levels: "", inclusion: "" });
    requestAnimationFrame((t) => this.frame(t));
  }

  private busy(on: boolean): void {
    this.root.dataset.busy = on ? "1" : "0";
  }

  /** Opens a source under a hierarchy: fetches its description, starts at reference 0. */
  private async loadSession(params: SessionParams): Promise<void> {
    this.busy(true);
    this.error.textContent = "";
    const generation = ++this.generation;
    try {
      const doc = await this.api.session(params);
      if (generation !== this.generation) return;
      this.params = { source: doc.source, n: doc.n, levels: levelsOf(doc), inclusion: doc.inclusion, twindow: params.twindow ?? "", tweights: params.tweights ?? "" };
      this.session = doc;
      this.model = new CacheModel(
        doc.levels.map((l) => ({ name: l.name, sets: l.sets, ways: l.ways, lineSize: l.line_size })),
      );
      const hidden = this.scene?.hidden;
      this.scene = new Scene(this.model, doc.regions, this.width, this.height);
      this.scene.tail = Number(this.tail.value);
      if (hidden && params.source === this.params.source) this.scene.hidden = hidden;
      else this.legend.set(doc.regions);
      this.picker.value = doc.source;
      const info = this.sources.sources.find((s) => s.id === doc.source);
      this.sizeInput.disabled = !info?.kernel || !this.api.canSimulate;
      this.sizeInput.value = doc.n === null ? "" : String(doc.n);
      if (info?.max_n) this.sizeInput.max = String(info.max_n);
      this.title.textContent = `${doc.title} · ${doc.references.toLocaleString("en-US")} references · ${doc.levels
        .map((l) => `${l.name} ${l.sets} ${l.sets === 1 ? "set" : "sets"} × ${l.ways} ${l.ways === 1 ? "way" : "ways"}`)
        .join(", ")}`;
      this.kernelTitle = info?.kernel ? doc.title : null;
      this.playable = this.api.playable(this.params, doc.references);
      this.scrub.max = String(this.playable);
      this.reportNote.textContent = this.api.canSimulate
        ? ""
        : this.playable < doc.references
          ? `This report plays the first ${this.playable.toLocaleString("en-US")} of these references under this hierarchy; \`memlens view\` plays them all, re-simulates other hierarchies and runs the other kernels.`
          : "This report plays these references under this hierarchy only; `memlens view` re-simulates other hierarchies and runs the other kernels.";
      this.editor.set(doc.levels, doc.inclusion, doc.temperature);
      this.showFitHint(doc);
      this.timeline.set(doc);
      this.batches = [];
      this.position = 0;
      this.animating = false;
      this.shownRef = null;
      this.shownAt = -1;
      this.statsAt = -1;
      this.showPosition();
      this.requestStats();
      this.root.dataset.source = doc.source;
      this.root.dataset.levels = this.params.levels;
    } catch (e) {
      const message = e instanceof Error ? e.message : String(e);
      if (params.levels) this.editor.error(message);
      else this.error.textContent = message;
    } finally {
      if (generation === this.generation) this.busy(false);
    }
  }

  /** Moves the playhead to before reference `at`, loading the contents there. */
  private async jump(at: number): Promise<void> {
    if (!this.session || !this.model || !this.scene) return;
    const generation = ++this.generation;
    this.busy(true);
    try {
      const state = await this.api.state(this.params, at);
      if (generation !== this.generation) return;
      this.model.load(state);
      this.position = state.at;
      this.batches = [];
      this.fetching = false;
      this.animating = false;
      this.scene.temperature = state.temperature;
      this.scene.reset();
      this.shownRef = null;
      this.shownAt = -1;
      this.statsAt = -1;
      this.showPosition();
      this.requestStats();
    } catch (e) {
      this.error.textContent = e instanceof Error ? e.message : String(e);
    } finally {
      if (generation === this.generation) this.busy(false);
    }
  }

  private setPlaying(on: boolean): void {
    this.playing = on;
    this.playButton.textContent = on ? "Pause" : "Play";
    this.root.dataset.playing = on ? "1" : "0";
    if (!on) this.requestStats();
  }

  private setTail(steps: number): void {
    this.tail.value = String(steps);
    this.tailLabel.textContent = `tail ${steps}`;
    if (this.scene) this.scene.tail = steps;
  }

  private async stepOnce(): Promise<void> {
    this.setPlaying(false);
    if (!this.session) return;
    if (this.animating) this.animating = false;
    if (!this.loaded(this.position, Math.min(this.factor, this.playable - this.position))) {
      await this.fetchAhead(true);
    }
    this.advance(performance.now(), Math.max(MANUAL_STEP_MS, 1000 / this.stepsPerSecond));
    this.requestStats();
  }

  /** Whether references [from, from + count) are in the loaded batches. */
  private loaded(from: number, count: number): boolean {
    let at = from;
    for (const b of this.batches) {
      if (b.start <= at && at < b.start + b.count) at = b.start + b.count;
    }
    return at >= from + count;
  }

  private batchOf(i: number): Batch | undefined {
    return this.batches.find((b) => b.start <= i && i < b.start + b.count);
  }

  /** Fetches the next batch when less than two seconds of animation are loaded. */
  private async fetchAhead(force = false): Promise<void> {
    if (!this.session || (this.fetching && !force)) return;
    const total = this.playable;
    const perSecond = this.factor * this.stepsPerSecond;
    const need = Math.max(256, perSecond * 2);
    this.batches = this.batches.filter((b) => b.start + b.count > this.position);
    let end = this.position;
    for (const b of this.batches) if (b.start <= end && end < b.start + b.count) end = b.start + b.count;
    if (end >= total || end - this.position >= need) return;
    const count = Math.min(65_536, Math.max(256, perSecond * 2), total - end);
    const generation = this.generation;
    this.fetching = true;
    try {
      const batch = await this.api.batch(this.params, end, count);
      if (generation === this.generation) this.batches.push(batch);
    } catch (e) {
      this.error.textContent = e instanceof Error ? e.message : String(e);
      this.setPlaying(false);
    } finally {
      if (generation === this.generation) this.fetching = false;
    }
  }

  /** Applies the next step's references (one, or `factor` in time-lapse). */
  private advance(now: number, duration: number): boolean {
    if (!this.session || !this.model || !this.scene) return false;
    const total = this.playable;
    const count = Math.min(this.factor, total - this.position);
    if (count <= 0 || !this.loaded(this.position, count)) return false;
    const effects: Effects[] = [];
    let last: { batch: Batch; i: number } | null = null;
    for (let k = 0; k < count; k++) {
      const batch = this.batchOf(this.position + k)!;
      const i = this.position + k - batch.start;
      effects.push(this.model.apply(batch, i));
      last = { batch, i };
    }
    this.position += count;
    this.scene.begin(effects);
    if (last) {
      const { batch, i } = last;
      this.scene.temperature = Array.from(batch.temp.subarray(i * batch.levels, (i + 1) * batch.levels), (t) => t / 127);
      this.shownRef = { batch, i };
    }
    this.stepStart = now;
    this.stepDuration = duration;
    this.animating = true;
    this.showPosition();
    return true;
  }

  /**
   * Shows the position (the `data-position` attribute at once; the texts, scrubber and
   * timeline cursor at most ten times a second while playing, so that playback does no
   * layout work in most frames).
   */
  private showPosition(): void {
    this.root.dataset.position = String(this.position);
    if (!this.playing || performance.now() - this.shownTime >= TEXT_INTERVAL_MS) this.showReferenceText();
  }

  /** Updates the texts that follow the position: the current reference, scrubber, label, timeline. */
  private showReferenceText(): void {
    this.shownAt = this.position;
    this.shownTime = performance.now();
    const total = this.session?.references ?? 0;
    this.scrub.value = String(this.position);
    this.positionLabel.textContent = `${this.position.toLocaleString("en-US")} / ${total.toLocaleString("en-US")}`;
    this.timeline.at(this.position);
    const ref = this.shownRef;
    if (ref && ref.batch.start + ref.i + 1 === this.position) this.showReference(ref.batch, ref.i);
    else this.showNoReference();
  }

  /** The current-reference line when no step led here (a new session, a jump). */
  private showNoReference(): void {
    const at = this.position;
    const next = at >= (this.session?.references ?? 0) ? "After the last reference" : at === 0 ? "Before the first reference" : `Before reference #${at.toLocaleString("en-US")}`;
    replaceChildren(
      this.current,
      h("span", { class: "cl-ref-label", "data-testid": "cache-label" }, at === 0 ? "(nothing played yet)" : "(jumped here)"),
      h("span", { class: "cl-ref-facts" }, `${next}: Play or Step shows each reference.`),
    );
    this.current.dataset.position = String(at);
    this.current.dataset.served = "";
  }

  /**
   * When nothing leaves L1 over the whole source (every miss is a first touch, a
   * compulsory miss), the rings stand still after warm-up: a hint offers a hierarchy a
   * quarter of the footprint (the lines touched), which the user applies with one click.
   * A hint, not an automatic change: the hierarchy shown is the one asked for (the
   * command line's, or the user's), and changing it silently would misreport it.
   */
  private showFitHint(doc: SessionDoc): void {
    const l1 = doc.totals[0];
    const levels = doc.levels;
    if (!l1 || l1.evictions > 0 || l1.misses === 0 || !this.api.canSimulate) {
      replaceChildren(this.hint);
      return;
    }
    const line = levels[0].line_size;
    const footprint = l1.misses * line;
    const pow2 = (x: number) => 2 ** Math.floor(Math.log2(Math.max(1, x)));
    const ways1 = Math.min(levels[0].ways, 4);
    const l1Size = Math.max(line * ways1, pow2(footprint / 4));
    const l2Size = Math.max(4 * l1Size, pow2(footprint));
    const smaller = `L1:${sizeText(l1Size)}:${ways1}:${line}:lru,L2:${sizeText(l2Size)}:8:${line}:lru`;
    const apply = h("button", { class: "btn tiny", "data-testid": "cache-fit-apply" }, `Try L1 ${sizeText(l1Size)}, L2 ${sizeText(l2Size)}`);
    apply.addEventListener("click", () => void this.loadSession({ ...this.params, levels: smaller, tweights: "" }));
    replaceChildren(
      this.hint,
      h(
        "p",
        {},
        `All ${doc.references.toLocaleString("en-US")} references fit in ${levels[0].name}: its ${l1.misses.toLocaleString("en-US")} misses are first touches (compulsory) and nothing is evicted, so after warm-up nothing moves. A smaller hierarchy shows the cache at work: `,
        apply,
      ),
    );
  }

  /** The page's header names the kernel being played while this lens is shown. */
  private nameInHeader(): void {
    const program = document.querySelector<HTMLElement>("header.top .program");
    if (!program) return;
    if (this.headerProgram === null) this.headerProgram = program.textContent ?? "";
    const wanted = this.root.offsetParent !== null && this.kernelTitle ? this.kernelTitle : this.headerProgram;
    if (program.textContent !== wanted) {
      program.textContent = wanted;
      program.title = wanted;
      program.dataset.testid = "run-program";
    }
  }

  private showReference(batch: Batch, i: number): void {
    const doc = this.session!;
    const served = batch.served[i];
    const label = doc.labels[batch.label[i]] || "(no source line)";
    const region = doc.regions.find((r) => r.id === batch.region[i])?.name ?? "(other)";
    replaceChildren(
      this.current,
      h("span", { class: "cl-ref-label", "data-testid": "cache-label" }, label),
      h(
        "span",
        { class: "cl-ref-facts" },
        `#${(batch.start + i).toLocaleString("en-US")} ${KIND[batch.kind[i]] ?? ""} 0x${batch.addr[i].toString(16)} in ${region} · `,
        h("b", {}, served >= doc.levels.length ? "from memory" : `hit in ${doc.levels[served].name}`),
      ),
    );
    this.current.dataset.served = String(served);
    this.current.dataset.position = String(batch.start + i + 1);
  }

  private requestStats(): void {
    if (this.statsBusy) {
      this.statsDirty = true;
      return;
    }
    if (!this.session) return;
    this.statsBusy = true;
    this.lastStats = performance.now();
    const generation = this.generation;
    const at = this.position;
    this.statsAsked = at;
    const regions = new Map(this.session.regions.map((r) => [r.id, r.name]));
    this.api
      .stats(this.params, at)
      .then((doc) => {
        if (generation !== this.generation) return;
        this.stats.set(doc, regions, this.playing);
        this.statsAt = doc.at;
      })
      .catch((e) => (this.error.textContent = e instanceof Error ? e.message : String(e)))
      .finally(() => {
        this.statsBusy = false;
        if (this.statsDirty) {
          this.statsDirty = false;
          this.requestStats();
        }
      });
  }

  private resize(): void {
    const stage = this.canvas.parentElement!;
    const width = Math.max(200, stage.clientWidth);
    const height = Math.max(200, stage.clientHeight);
    const dpr = window.devicePixelRatio || 1;
    this.canvas.width = Math.round(width * dpr);
    this.canvas.height = Math.round(height * dpr);
    this.canvas.style.width = `${width}px`;
    this.canvas.style.height = `${height}px`;
    this.width = width;
    this.height = height;
    this.scene?.resize(width, height);
    this.timeline.draw();
  }

  private frame(now: number): void {
    requestAnimationFrame((t) => this.frame(t));
    this.nameInHeader();
    if (this.root.offsetParent === null || !this.scene || !this.session) return;
    const began = performance.now();
    const dpr = window.devicePixelRatio || 1;
    if (this.canvas.width !== Math.round(this.width * dpr) || this.canvas.height !== Math.round(this.height * dpr)) this.resize();
    if (this.animating && now - this.stepStart >= this.stepDuration) this.animating = false;
    if (!this.animating && this.playing) {
      if (this.position >= this.playable) this.setPlaying(false);
      else this.advance(now, 1000 / this.stepsPerSecond);
    }
    if (this.playing && now - this.lastStats > 800) this.requestStats();
    // At rest, the statistics are those of the current position (one request per rest).
    if (!this.playing && !this.animating && this.statsAt !== this.position && this.statsAsked !== this.position) this.requestStats();
    if (!this.playing && this.shownAt !== this.position) this.showReferenceText();
    void this.fetchAhead();
    const ctx = this.context();
    ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
    const t = this.animating ? (now - this.stepStart) / this.stepDuration : 1;
    this.lastT = t;
    const started = performance.now();
    const counts = this.scene.draw(ctx, this.width, this.height, t);
    const finished = performance.now();
    // What the user sees is the interval between frames; the draw and the whole
    // callback (stepping, drawing) are what the script spends of it.
    if (this.lastFrame > 0) this.intervals.push(now - this.lastFrame);
    this.lastFrame = now;
    this.drawTimes.push(finished - started);
    this.workTimes.push(finished - began);
    for (const list of [this.drawTimes, this.workTimes, this.intervals]) if (list.length > FRAME_HISTORY) list.shift();
    const glyphs = String(counts.perRing.reduce((a, b) => a + b, 0));
    if (this.root.dataset.glyphs !== glyphs) this.root.dataset.glyphs = glyphs;
  }

  /** The canvas's context: opaque, since the scene paints every pixel. */
  private context(): CanvasRenderingContext2D {
    if (!this.ctx) this.ctx = this.canvas.getContext("2d", { alpha: false })!;
    return this.ctx;
  }

  /** The test hook: what the page shows, in numbers (see e2e/cache.test.mjs). */
  private installHook(): void {
    (window as unknown as { __memlensCache: unknown }).__memlensCache = {
      snapshot: () => ({
        position: this.position,
        references: this.session?.references ?? 0,
        playing: this.playing,
        animating: this.animating,
        busy: this.root.dataset.busy === "1",
        factor: this.factor,
        tail: Number(this.tail.value),
        levels: this.session?.levels.map((l) => l.name) ?? [],
        /** The names written on the rings (cache levels, then memory) and where. */
        ringLabels: this.scene?.ringLabels() ?? [],
        /** The position the current-reference line speaks of. */
        currentAt: Number(this.current.dataset.position ?? -1),
        perRing: this.scene?.last.perRing ?? [],
        occupancy: this.model?.occupancy() ?? [],
        trails: this.scene?.last.trails ?? 0,
        flashing: this.scene?.last.flashing ?? 0,
        params: this.params,
      }),
      /**
       * Frame figures: the interval between animation frames (what the user sees:
       * 16.7 ms is 60 fps), the script's whole frame callback, and the scene's draw.
       */
      frames: () => ({
        count: this.intervals.length,
        intervalP50: quantile(this.intervals, 0.5),
        intervalP95: quantile(this.intervals, 0.95),
        fps: this.intervals.length ? 1000 / quantile(this.intervals, 0.5) : 0,
        workP50: quantile(this.workTimes, 0.5),
        workP95: quantile(this.workTimes, 0.95),
        drawP50: quantile(this.drawTimes, 0.5),
        drawP95: quantile(this.drawTimes, 0.95),
        structureDraws: this.scene?.structureDraws ?? 0,
      }),
      resetFrames: () => {
        this.drawTimes.length = 0;
        this.workTimes.length = 0;
        this.intervals.length = 0;
        this.lastFrame = 0;
      },
      /** Where the glyph of `line` in `level` was in the last frame, in canvas CSS pixels. */
      glyph: (level: number, line: number) => {
        if (!this.model || !this.scene) return null;
        const slot = this.model.slotOf(level, line);
        if (slot < 0) return null;
        const p = this.scene.position(level, slot, this.lastT);
        return { x: p.x, y: p.y, t: this.lastT, flashing: this.scene.isFlashing(level, slot) };
      },
      /** The colour of the canvas at a CSS pixel, as [r, g, b, a]. */
      pixel: (x: number, y: number) => {
        const ctx = this.context();
        const dpr = window.devicePixelRatio || 1;
        return ctx ? Array.from(ctx.getImageData(Math.round(x * dpr), Math.round(y * dpr), 1, 1).data) : null;
      },
      /** Lines of the accessed reference's last batch event list: for finding misses. */
      lastMissLine: () => {
        const b = this.batchOf(this.position - 1);
        if (!b) return null;
        const i = this.position - 1 - b.start;
        const from = i === 0 ? 0 : b.eventsEnd[i - 1];
        for (let e = from; e < b.eventsEnd[i]; e++) if (b.evType[e] === 2 && b.evLevel[e] === 0) return b.evLine[e];
        return null;
      },
    };
  }
}

/** The `levels` parameter that names a session's hierarchy. */
function levelsOf(doc: SessionDoc): string {
  return doc.levels.map((l) => `${l.name}:${l.size}:${l.ways}:${l.line_size}:${l.policy}`).join(",");
}
