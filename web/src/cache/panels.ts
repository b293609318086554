// The side panels of the cache lens: the region legend that is also the region
// filter, the current reference (source line, address, which level served it), the
// statistics per level and per region at the current position, and the hierarchy
// editor (levels, sizes, ways, line size, policy, inclusion, and the temperature's
// window and per-level weights) that re-simulates, and the legend of every other
// visual channel of the rings (ghosts, glow, pulses, flashes, pathlines).

import { h, replaceChildren } from "../app/dom";
import type { TemperatureWire } from "../generated/cache";
import { FLASH, regionColor, temperatureRgb } from "./colors";
import type { Counts, LevelInfo, RegionInfo, StatsDoc } from "./types";

/** The legend of the rings' channels other than the region colours. */
export function channelLegend(): HTMLElement {
  const css = (t: number) => `rgb(${temperatureRgb(t).join(",")})`;
  const glow = `linear-gradient(to right, ${css(-1)}, ${css(0)}, ${css(1)})`;
  const row = (testid: string, mark: HTMLElement, text: string) => h("li", { "data-channel": testid }, mark, h("span", {}, text));
  return h(
    "div",
    { class: "cl-channels", "data-testid": "cache-channels" },
    h("h3", {}, "What moves"),
    h(
      "ul",
      {},
      row("glyph", h("span", { class: "cl-mark", style: `background:${regionColor(1)}` }), "a glyph: one cache line, coloured by its region (above); rings from the CPU out: L1, L2, …, memory; along a set's arm, nearer the centre is more recently used"),
      row("ghost", h("span", { class: "cl-mark", style: `background:${regionColor(1)};opacity:0.33` }), "faded: a ghost, a copy of a line a faster level also holds"),
      row("glow", h("span", { class: "cl-mark wide", style: `background:${glow}` }), "glow behind a ring: its temperature over the last references — blue misses, white neutral, red hits (reuse)"),
      row("pulse", h("span", { class: "cl-mark ring" }), "pulse: the line was accessed (a hit where it is)"),
      row("flash", h("span", { class: "cl-mark", style: `background:rgb(${FLASH.join(",")})` }), "red flash: a miss; the line flies in straight from below, an evicted one leaves on a wide arc"),
      row("pathline", h("span", { class: "cl-mark line" }), "time-lapse: pathlines trace the last moves (tail length)"),
    ),
  );
}

export class Legend {
  readonly el = h("div", { class: "cl-legend", "data-testid": "cache-legend" });

  constructor(private readonly onChange: (hidden: Set<number>) => void) {}

  set(regions: RegionInfo[]): void {
    const hidden = new Set<number>();
    const all = [...regions, { id: 0, name: "(other)", start: 0, len: 0 }];
    replaceChildren(
      this.el,
      h("h3", {}, "Regions"),
      ...all.map((r) => {
        const box = h("input", { type: "checkbox", checked: true, "data-region": r.id });
        box.addEventListener("change", () => {
          if (box.checked) hidden.delete(r.id);
          else hidden.add(r.id);
          this.onChange(new Set(hidden));
        });
        return h(
          "label",
          { class: "cl-region" },
          box,
          h("span", { class: "cl-swatch", style: `background:${regionColor(r.id)}` }),
          r.name,
        );
      }),
    );
  }
}

function percent(x: number): string {
  return `${(x * 100).toFixed(1)}%`;
}

function countsRow(c: Counts): HTMLElement {
  return h(
    "tr",
    {},
    h("th", {}, c.name),
    h("td", {}, c.accesses.toLocaleString("en-US")),
    h("td", {}, c.hits.toLocaleString("en-US")),
    h("td", { "data-stat": `misses-${c.name}` }, c.misses.toLocaleString("en-US")),
    h("td", {}, c.accesses ? percent(c.miss_rate) : "–"),
    h("td", {}, c.evictions.toLocaleString("en-US")),
  );
}

export class StatsPanel {
  readonly el = h("div", { class: "cl-stats", "data-testid": "cache-stats" });

  /**
   * Shows the statistics of `doc` (those before reference `doc.at`); `playing` says
   * that the playhead has moved on since, so the heading says they are being updated.
   */
  set(doc: StatsDoc, regions: Map<number, string>, playing = false): void {
    const levelTable = h(
      "table",
      { class: "cl-table" },
      h("thead", {}, h("tr", {}, h("th", {}, "level"), h("th", {}, "accesses"), h("th", {}, "hits"), h("th", {}, "misses"), h("th", {}, "miss rate"), h("th", {}, "evictions"))),
      h("tbody", {}, ...doc.levels.map(countsRow)),
    );
    const regionTable = h(
      "table",
      { class: "cl-table" },
      h(
        "thead",
        {},
        h("tr", {}, h("th", {}, "region"), h("th", {}, "refs"), ...doc.levels.map((l) => h("th", {}, `${l.name} miss rate`))),
      ),
      h(
        "tbody",
        {},
        ...doc.regions.map((r) =>
          h(
            "tr",
            {},
            h("th", {}, h("span", { class: "cl-swatch", style: `background:${regionColor(r.id)}` }), regions.get(r.id) ?? r.name),
            h("td", {}, r.references.toLocaleString("en-US")),
            ...r.levels.map((c) => h("td", {}, c.accesses ? percent(c.miss_rate) : "–")),
          ),
        ),
      ),
    );
    replaceChildren(
      this.el,
      h(
        "h3",
        { "data-testid": "cache-stats-heading" },
        `Statistics after ${doc.at.toLocaleString("en-US")} references`,
        playing ? h("span", { class: "cl-note" }, " · updated every second while playing") : "",
      ),
      levelTable,
      h("h3", {}, "Per region"),
      regionTable,
    );
    this.el.dataset.at = String(doc.at);
    this.el.dataset.l1Misses = String(doc.levels[0]?.misses ?? 0);
  }
}

const POLICIES = ["lru", "fifo", "plru", "random"];

export interface HierarchyChoice {
  levels: string;
  inclusion: string;
  twindow: string;
  tweights: string;
}

/** Sizes as the server's parser reads them, shown compactly. */
export function sizeText(bytes: number): string {
  if (bytes >= 1 << 20 && bytes % (1 << 20) === 0) return `${bytes / (1 << 20)}M`;
  if (bytes >= 1024 && bytes % 1024 === 0) return `${bytes / 1024}K`;
  return String(bytes);
}

/** The `levels` parameter for a list of levels. */
export function levelsParam(levels: { name: string; size: string; ways: string; line: string; policy: string }[]): string {
  return levels.map((l) => `${l.name.trim()}:${l.size.trim()}:${l.ways.trim()}:${l.line.trim()}:${l.policy}`).join(",");
}

export class HierarchyEditor {
  readonly el = h("div", { class: "cl-editor", "data-testid": "cache-editor" });
  private rows: { name: HTMLInputElement; size: HTMLInputElement; ways: HTMLInputElement; line: HTMLInputElement; policy: HTMLSelectElement; hit: HTMLInputElement; miss: HTMLInputElement }[] = [];
  private readonly window = h("input", { type: "number", min: 1, class: "cl-window", "data-testid": "cache-twindow", title: "references the temperature averages over" });
  private inclusion = h("select", { "data-testid": "cache-inclusion" });
  private readonly message = h("p", { class: "cl-error", "data-testid": "cache-editor-error" });
  /** Whether re-simulation is off (a report), with the editor showing the hierarchy only. */
  private locked = false;

  constructor(private readonly onApply: (choice: HierarchyChoice) => void) {
    for (const mode of ["non-inclusive", "inclusive", "exclusive"]) this.inclusion.append(h("option", { value: mode }, mode));
  }

  set(levels: LevelInfo[], inclusion: string, temperature: TemperatureWire): void {
    this.rows = [];
    this.window.value = String(temperature.window);
    const body = h("tbody", {});
    const addRow = (l: { name: string; size: number; ways: number; line_size: number; policy: string }, weights = { hit: 1, miss: 1 }) => {
      const policy = h("select", { "data-field": "policy" });
      for (const p of POLICIES) policy.append(h("option", { value: p }, p));
      policy.value = POLICIES.includes(l.policy.split("=")[0]) ? l.policy.split("=")[0] : "lru";
      const row = {
        name: h("input", { value: l.name, size: 3, "data-field": "name" }),
        size: h("input", { value: sizeText(l.size), size: 5, "data-field": "size" }),
        ways: h("input", { value: String(l.ways), size: 2, "data-field": "ways" }),
        line: h("input", { value: String(l.line_size), size: 3, "data-field": "line" }),
        policy,
        hit: h("input", { value: String(weights.hit), size: 2, "data-field": "hit", title: "temperature score of a hit" }),
        miss: h("input", { value: String(weights.miss), size: 2, "data-field": "miss", title: "temperature penalty of a miss" }),
      };
      this.rows.push(row);
      const remove = h("button", { class: "btn tiny", title: "Remove this level" }, "×");
      const tr = h("tr", { "data-level": this.rows.length - 1 }, h("td", {}, row.name), h("td", {}, row.size), h("td", {}, row.ways), h("td", {}, row.line), h("td", {}, row.policy), h("td", {}, row.hit), h("td", {}, row.miss), h("td", {}, remove));
      remove.addEventListener("click", () => {
        if (this.rows.length <= 1) return;
        this.rows.splice(this.rows.indexOf(row), 1);
        tr.remove();
      });
      body.append(tr);
    };
    levels.forEach((l, i) => addRow(l, temperature.weights[i]));
    this.inclusion.value = inclusion;
    const add = h("button", { class: "btn tiny", "data-testid": "cache-add-level" }, "+ level");
    add.addEventListener("click", () => {
      const last = this.rows[this.rows.length - 1];
      addRow({ name: `L${this.rows.length + 1}`, size: 4 * parseSize(last?.size.value ?? "4K"), ways: 8, line_size: Number(last?.line.value ?? 64), policy: "lru" });
    });
    const apply = h("button", { class: "btn", "data-testid": "cache-apply" }, "Re-simulate");
    apply.addEventListener("click", () => {
      this.message.textContent = "";
      this.onApply({
        levels: levelsParam(this.rows.map((r) => ({ name: r.name.value, size: r.size.value, ways: r.ways.value, line: r.line.value, policy: r.policy.value }))),
        inclusion: this.inclusion.value,
        twindow: this.window.value.trim(),
        tweights: this.rows.map((r) => `${r.hit.value.trim() || "1"}:${r.miss.value.trim() || "1"}`).join(","),
      });
    });
    replaceChildren(
      this.el,
      h("h3", {}, "Hierarchy"),
      h(
        "table",
        { class: "cl-table cl-levels" },
        h(
          "thead",
          {},
          h("tr", {}, h("th", {}), h("th", {}), h("th", {}), h("th", {}), h("th", {}), h("th", { colspan: 2, class: "cl-group" }, "temperature"), h("th", {})),
          h("tr", {}, h("th", {}, "name"), h("th", {}, "size"), h("th", {}, "ways"), h("th", {}, "line"), h("th", {}, "policy"), h("th", { title: "score of a hit" }, "hit +"), h("th", { title: "penalty of a miss" }, "miss −"), h("th", {})),
        ),
        body,
      ),
      h("div", { class: "cl-editor-foot" }, add, h("label", {}, "inclusion ", this.inclusion), h("label", {}, "temperature over ", this.window, " refs"), apply),
      this.message,
    );
    this.disable();
  }

  error(message: string): void {
    this.message.textContent = message;
  }

  /** Shows the hierarchy without editing it (a report cannot re-simulate). */
  lock(): void {
    this.locked = true;
    this.disable();
  }

  private disable(): void {
    if (!this.locked) return;
    for (const control of this.el.querySelectorAll<HTMLInputElement | HTMLSelectElement | HTMLButtonElement>("input, select, button")) control.disabled = true;
    this.message.className = "cl-hint";
    this.message.textContent = "`memlens view` re-simulates other hierarchies.";
  }
}

/** Reads `32K`, `1M` or plain bytes. */
export function parseSize(text: string): number {
  const m = /^\s*(\d+)\s*([kKmM]?)/.exec(text);
  if (!m) return 0;
  const n = Number(m[1]);
  return m[2].toLowerCase() === "k" ? n * 1024 : m[2].toLowerCase() === "m" ? n * 1024 * 1024 : n;
}
