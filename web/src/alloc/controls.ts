// The allocation map's controls: colour-by, the bias α of formula (1), the cushion
// profile, the occupancy bars' style, cushion-cursor softness, which bin the main view
// shows, a requested-size filter, the grid's correlation, and the pool-allocator replay
// (a bin configuration to replay the trace through, with its report).

import { h, replaceChildren } from "../app/dom";
import { formatBytes, formatDuration } from "../format";
import type { AllocMeta, BarParams, DrawParams } from "./api";
import type { AllocState } from "./context";

export interface ControlActions {
  setDraw(p: Partial<DrawParams>): void;
  setBar(p: Partial<BarParams>): void;
  setSoftness(s: number): void;
  clearCursors(): void;
  setGridMode(m: AllocState["gridMode"]): void;
  selectBin(id: number | null): void;
  resetView(): void;
  /** Replays through `pool` (null: back to the real run); resolves to an error sentence or null. */
  replay(pool: string | null, overflow: DrawParams["overflow"]): Promise<string | null>;
}

/** α on the slider: 0..100 maps logarithmically to 0.05..2. */
export function alphaFromSlider(s: number): number {
  return Number((0.05 * 40 ** (s / 100)).toPrecision(2));
}

/** The slider position of α. */
export function sliderFromAlpha(a: number): number {
  return Math.round((100 * Math.log(a / 0.05)) / Math.log(40));
}

function select(testid: string, options: [string, string, boolean?][], value: string, onChange: (v: string) => void): HTMLSelectElement {
  const el = h("select", { "data-testid": testid }, ...options.map(([v, label, disabled]) => h("option", { value: v, disabled: disabled === true }, label)));
  el.value = value;
  el.addEventListener("change", () => onChange(el.value));
  return el;
}

function field(label: string, ...control: (Node | string)[]): HTMLElement {
  return h("label", { class: "alloc-field" }, h("span", {}, label), ...control);
}

export class Controls {
  readonly el: HTMLElement;
  private readonly colorBox = h("span", {});
  private readonly binBox = h("span", {});
  private readonly classBox = h("span", {});
  private readonly smin: HTMLInputElement;
  private readonly smax: HTMLInputElement;
  private readonly replayReport = h("div", { class: "alloc-replay-report", "data-testid": "alloc-replay-report" });
  private readonly replayError = h("span", { class: "error", "data-testid": "alloc-replay-error" });

  /** `reportPool`: in a report, the one pool configuration it replayed (offered). */
  constructor(
    private readonly actions: ControlActions,
    state: AllocState,
    reportPool: string | null = null,
  ) {
    const alpha = h("input", { type: "range", min: 0, max: 100, value: sliderFromAlpha(state.draw.alpha), "data-testid": "alloc-alpha" });
    const alphaText = h("b", { class: "value" }, String(state.draw.alpha));
    alpha.addEventListener("input", () => (alphaText.textContent = String(alphaFromSlider(Number(alpha.value)))));
    alpha.addEventListener("change", () => {
      const a = alphaFromSlider(Number(alpha.value));
      actions.setDraw({ alpha: a });
      actions.setBar({ alpha: a });
    });
    const cushion = select("alloc-cushion", [["plateau", "plateau"], ["parabolic", "parabolic"], ["none", "none (flat)"]], state.draw.cushion, (v) => {
      actions.setDraw({ cushion: v as DrawParams["cushion"] });
      if (v !== "none") actions.setBar({ profile: v as BarParams["profile"] });
    });
    const bar = select(
      "alloc-bar-style",
      [["antialiased", "antialiased cushions"], ["cushioned", "cushioned quiet zones"], ["outlined", "outlined quiet zones"], ["flat", "flat"]],
      state.bar.style,
      (v) => actions.setBar({ style: v as BarParams["style"] }),
    );
    const soft = h("input", { type: "range", min: 0, max: 100, value: Math.round(state.softness * 100), "data-testid": "alloc-softness" });
    soft.addEventListener("input", () => actions.setSoftness(Number(soft.value) / 100));
    const clear = h("button", { type: "button", "data-testid": "alloc-clear-cursors" }, "Clear cursors");
    clear.addEventListener("click", () => actions.clearCursors());
    const grid = select("alloc-grid-mode", [["time", "by time (shared time axis)"], ["address", "by address (same height)"]], state.gridMode, (v) =>
      actions.setGridMode(v as AllocState["gridMode"]),
    );
    const reset = h("button", { type: "button", "data-testid": "alloc-reset" }, "Whole run");
    reset.addEventListener("click", () => actions.resetView());
    const smin = h("input", { type: "text", size: 6, placeholder: "0", value: state.draw.smin, "data-testid": "alloc-smin" });
    const smax = h("input", { type: "text", size: 6, placeholder: "∞", value: state.draw.smax, "data-testid": "alloc-smax" });
    const sizes = () => actions.setDraw({ smin: smin.value, smax: smax.value });
    smin.addEventListener("change", sizes);
    smax.addEventListener("change", sizes);
    this.smin = smin;
    this.smax = smax;
    const pool = h("input", { type: "text", size: 30, placeholder: "16:512,32:512,64:256,128:128", value: state.draw.pool ?? reportPool ?? "", "data-testid": "alloc-pool" });
    const overflow = select("alloc-overflow", [["first-fit", "heap first-fit"], ["best-fit", "heap best-fit"]], state.draw.overflow, () => undefined);
    const run = h("button", { type: "button", "data-testid": "alloc-replay" }, "Replay");
    const real = h("button", { type: "button", "data-testid": "alloc-real" }, "Real run");
    const doReplay = async (spec: string | null) => {
      this.replayError.textContent = "";
      const error = await actions.replay(spec, overflow.value as DrawParams["overflow"]);
      if (error) this.replayError.textContent = error;
    };
    run.addEventListener("click", () => void doReplay(pool.value.trim() || null));
    real.addEventListener("click", () => {
      pool.value = "";
      void doReplay(null);
    });
    this.el = h(
      "div",
      { class: "alloc-controls" },
      h(
        "div",
        { class: "alloc-row" },
        field("Colour by", this.colorBox),
        field("Bias α", alpha, alphaText),
        field("Cushions", cushion),
        field("Occupancy bar", bar),
        field("Cursor softness", soft),
        clear,
      ),
      h("div", { class: "alloc-row" }, field("Bin", this.binBox), field("Size class", this.classBox), field("Requested size", smin, "to", smax), field("Grid of bins", grid), reset),
      h("div", { class: "alloc-row" }, field("Pool replay (SIZE:COUNT,…)", pool, overflow), run, real, this.replayError),
      this.replayReport,
    );
  }

  /** Fills the model-dependent choices (attributes, bins) and the replay's report. */
  refresh(meta: AllocMeta, state: AllocState): void {
    replaceChildren(
      this.colorBox,
      select(
        "alloc-color",
        meta.color_by.map((c) => {
          if (c.id === "thread" && meta.threads.length <= 1) return [c.id, "thread (one thread: one flat colour, so by site)", true];
          return [c.id, c.available ? c.id : `${c.id} (record with --latency)`, !c.available];
        }),
        state.draw.color,
        (v) => this.actions.setDraw({ color: v }),
      ),
    );
    replaceChildren(
      this.binBox,
      select(
        "alloc-bin",
        [["all", "all bins"], ...meta.bins.map((b): [string, string] => [String(b.id), b.name])],
        state.draw.bin === null ? "all" : String(state.draw.bin),
        (v) => this.actions.selectBin(v === "all" ? null : Number(v)),
      ),
    );
    this.refreshClasses(meta, state);
    const r = meta.replay;
    if (!r) {
      replaceChildren(this.replayReport);
      return;
    }
    const rows = r.bins.map((b, i) =>
      h(
        "tr",
        {},
        // The engine names pool bins from 1, as the grid and the Bin menu show them.
        h("td", {}, meta.bins.filter((bin) => bin.kind === "pool")[i]?.name ?? `bin ${i + 1}`),
        h("td", {}, formatBytes(b.block_size)),
        h("td", {}, b.slots.toLocaleString("en-US")),
        h("td", {}, b.served.toLocaleString("en-US")),
        h("td", {}, b.overflowed.toLocaleString("en-US")),
        h("td", {}, `${b.high_water.toLocaleString("en-US")} (${((100 * b.high_water) / Math.max(1, b.slots)).toFixed(0)} %)`),
        h("td", {}, formatBytes(b.waste_bytes)),
      ),
    );
    const first = r.overflows.slice(0, 5).map((o) => `${formatBytes(o.size)} at ${formatDuration(o.t_ns - meta.time_origin_ns)}${o.failed ? " (failed)" : ""}`);
    replaceChildren(
      this.replayReport,
      h(
        "p",
        {},
        `Replayed ${r.requests.toLocaleString("en-US")} requests: ${r.overflow_count.toLocaleString("en-US")} overflowed their bin, ${r.too_large.toLocaleString("en-US")} were larger than every bin, ${r.heap_served.toLocaleString("en-US")} went to the heap (high-water ${formatBytes(r.heap_high_water_bytes)}), ${r.failed.toLocaleString("en-US")} failed.`,
        first.length > 0 ? ` First overflows: ${first.join(", ")}.` : "",
      ),
      h(
        "table",
        {},
        h("thead", {}, h("tr", {}, ...["bin", "block size", "blocks", "served", "overflowed", "high-water", "waste"].map((t) => h("th", {}, t)))),
        h("tbody", {}, ...rows),
      ),
    );
  }

  /**
   * The real run's bins by size (glibc's allocation paths, computed by the engine from
   * the recorded sizes): picking one sets the requested-size range to its sizes.
   */
  private refreshClasses(meta: AllocMeta, state: AllocState): void {
    const classes = meta.size_classes;
    const current = classes.findIndex((c) => String(c.min) === state.draw.smin.trim() && (c.max === null ? state.draw.smax.trim() === "" : String(c.max) === state.draw.smax.trim()));
    const none = !state.draw.smin.trim() && !state.draw.smax.trim();
    const options: [string, string, boolean?][] = [
      ["all", classes.length ? "all sizes" : "(real run only)"],
      ...classes.map((c, i): [string, string, boolean] => [String(i), `${c.name} ${c.max === null ? `≥ ${formatBytes(c.min)}` : `${formatBytes(c.min)}–${formatBytes(c.max)}`} (${c.blocks.toLocaleString("en-US")})`, c.blocks === 0]),
    ];
    if (!none && current < 0) options.push(["custom", "the sizes typed", true]);
    const box = select("alloc-size-class", options, none ? "all" : current >= 0 ? String(current) : "custom", (v) => {
      const c = v === "all" ? null : classes[Number(v)];
      this.smin.value = c ? String(c.min) : "";
      this.smax.value = c && c.max !== null ? String(c.max) : "";
      this.actions.setDraw({ smin: this.smin.value, smax: this.smax.value });
    });
    box.disabled = classes.length === 0;
    box.title = classes.map((c) => `${c.name}: ${c.description}`).join("\n");
    replaceChildren(this.classBox, box);
  }
}
