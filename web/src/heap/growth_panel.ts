// The growth panel: the engine's leak suspects for the current grouping, best first,
// each with its growth and a bar of its score; clicking one drills down to it.

import { h, replaceChildren } from "../app/dom";
import type { Suspect } from "../data/types";
import { formatBytes, formatDuration, formatSignedBytes } from "../format";

export class GrowthPanel {
  readonly el: HTMLElement;
  private readonly list = h("ol", { class: "suspects", "data-testid": "suspects" });
  private readonly status = h("p", { class: "hint" }, "Ranking…");
  private readonly scope = h("p", { class: "hint", "data-testid": "suspects-scope" }, "Over the whole run");

  constructor(private readonly pick: (path: string[]) => void) {
    this.el = h(
      "div",
      { class: "growth" },
      h("h3", { title: "Groups whose live memory grows steadily over the run, ranked by growth × monotonicity × fit × persistence" }, "Leak suspects"),
      this.scope,
      this.status,
      this.list,
    );
  }

  /** Ranking anew, over `window` (the whole run when `null`). */
  loading(window: readonly [number, number] | null = null): void {
    this.scope.textContent = window ? `Within ${formatDuration(window[0])} – ${formatDuration(window[1])}` : "Over the whole run";
    this.status.textContent = "Ranking…";
    this.status.hidden = false;
    replaceChildren(this.list);
  }

  failed(message: string): void {
    this.status.textContent = message;
    this.status.hidden = false;
  }

  render(suspects: Suspect[], selected: string[]): void {
    this.status.hidden = suspects.length > 0;
    this.status.textContent = "Nothing grows steadily here.";
    const top = Math.max(1, ...suspects.map((s) => s.score));
    const rows = suspects.map((s, i) => {
      const isSelected = s.full_key.join("\u001f") === selected.join("\u001f");
      const li = h(
        "li",
        {
          class: `suspect${isSelected ? " selected" : ""}`,
          "data-testid": "suspect",
          "data-path": JSON.stringify(s.full_key),
          title: `${s.full_key.join(" › ")}\n${formatBytes(s.start_bytes)} → ${formatBytes(s.end_bytes)}; monotonicity ${s.monotonicity.toFixed(2)}, R² ${s.r_squared.toFixed(2)}, persistence ${s.persistence.toFixed(2)}; ${formatBytes(s.live_at_exit_bytes)} never freed`,
        },
        h("span", { class: "rank" }, String(i + 1)),
        h(
          "div",
          { class: "suspect-body" },
          h(
            "div",
            { class: "suspect-key" },
            ...s.full_key.slice(0, -1).map((k) => h("span", { class: "suspect-parent" }, `${k} › `)),
            h("b", {}, s.key),
          ),
          h("div", { class: "score-bar" }, h("i", { style: `width:${((100 * s.score) / top).toFixed(1)}%` })),
        ),
        h("span", { class: "suspect-growth" }, formatSignedBytes(s.growth_bytes)),
      );
      li.addEventListener("click", () => this.pick(s.full_key));
      return li;
    });
    replaceChildren(this.list, ...rows);
  }
}
