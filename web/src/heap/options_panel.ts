// The options panel of the heap lens: the classifier list (add, remove, reorder), the
// metric, the sort strategy, scaled or unscaled trees and sunburst or icicle. Every
// change keeps the drill-down and the time.

import { h, replaceChildren } from "../app/dom";
import type { ClassifierInfo, Metric, SortStrategy } from "../data/types";
import type { ChartKind } from "./geometry";

export interface Options {
  by: string[];
  /** Function-name prefixes of the application's own code, for `closest-domain-site`. */
  domain: string[];
  metric: Metric;
  sort: SortStrategy;
  scaled: boolean;
  chart: ChartKind;
  /** Fill by first-level group, or by change from the base run (with a base run). */
  color: "groups" | "change";
}

type Choice<T extends string> = { value: T; label: string; title: string };

export class OptionsPanel {
  readonly el: HTMLElement;
  private readonly list = h("ol", { class: "classifier-list", "data-testid": "classifier-list" });
  private readonly add = h("select", { class: "classifier-add", "data-testid": "classifier-add", "aria-label": "add a classifier" });
  private readonly groups: { name: keyof Options; buttons: HTMLButtonElement[] }[] = [];
  private options: Options | null = null;
  /** The domain prefixes, shown while `closest-domain-site` is a level. */
  private readonly domain = h("input", {
    type: "text",
    class: "domain-input",
    placeholder: "e.g. myapp:: or com.example.",
    "aria-label": "domain prefixes, comma-separated",
    "data-testid": "domain-input",
  });
  private readonly domainRow = h(
    "label",
    { class: "option-row domain-row", title: "The closest domain call site is the innermost frame whose function starts with one of these prefixes (comma-separated)" },
    h("span", { class: "option-label" }, "Domain"),
    this.domain,
  );

  constructor(
    private readonly classifiers: ClassifierInfo[],
    private readonly canRegroup: boolean,
    private readonly change: (patch: Partial<Options>) => void,
    baseName: string | null = null,
  ) {
    this.domain.addEventListener("change", () => {
      const domain = this.domain.value.split(",").map((d) => d.trim()).filter((d) => d.length > 0);
      this.change({ domain });
    });
    this.add.addEventListener("change", () => {
      const name = this.add.value;
      if (name && this.options) this.change({ by: [...this.options.by, name] });
      // Its keys need the application's prefixes: ask for them at once.
      if (name === "closest-domain-site") window.setTimeout(() => this.domain.focus());
    });
    this.el = h(
      "div",
      { class: "options" },
      h("h3", {}, "Group by"),
      this.list,
      this.canRegroup
        ? this.add
        : h("p", { class: "hint" }, "This report holds one grouping; run memlens view to regroup."),
      this.domainRow,
      this.segmented<Metric>("metric", "Size", [
        { value: "bytes", label: "Bytes", title: "Size nodes by live bytes" },
        { value: "objects", label: "Objects", title: "Size nodes by live blocks" },
      ]),
      this.segmented<SortStrategy>("sort", "Order", [
        { value: "growth", label: "Growth", title: "Order siblings by absolute growth over the window (leak hunting)" },
        { value: "start", label: "Start", title: "Order siblings by size at the window's start" },
        { value: "end", label: "End", title: "Order siblings by size at the window's end" },
      ]),
      this.segmented<"scaled" | "unscaled">("scaled", "Scale", [
        { value: "scaled", label: "Scaled", title: "Draw each tree in proportion to the largest heap of the window" },
        { value: "unscaled", label: "Unscaled", title: "Let every tree use the whole space" },
      ]),
      this.segmented<ChartKind>("chart", "Chart", [
        { value: "sunburst", label: "Sunburst", title: "Rings around the whole heap" },
        { value: "icicle", label: "Icicle", title: "Columns from the whole heap to the right" },
      ]),
      baseName === null
        ? null
        : this.segmented<"groups" | "change">("color", "Colour", [
            { value: "groups", label: "Groups", title: "A hue per first-level group" },
            { value: "change", label: "Change", title: `Red where a group grew, blue where it shrank, against the base run ${baseName} at the same point of its run` },
          ]),
    );
  }

  render(options: Options): void {
    this.options = options;
    const title = (name: string) => this.classifiers.find((c) => c.name === name);
    const rows = options.by.map((name, i) => {
      const info = title(name);
      const button = (label: string, action: string, enabled: boolean, onClick: () => void) => {
        const b = h("button", { class: "btn tiny", title: action, "aria-label": `${action} ${name}`, "data-testid": `classifier-${action}-${name}` }, label);
        b.disabled = !enabled || !this.canRegroup;
        b.addEventListener("click", onClick);
        return b;
      };
      const move = (to: number) => {
        const by = [...options.by];
        [by[i], by[to]] = [by[to], by[i]];
        this.change({ by });
      };
      return h(
        "li",
        { "data-name": name },
        h("span", { class: "level" }, String(i + 1)),
        h("span", { class: "classifier-name", title: info?.summary ?? "" }, info?.title ?? name),
        button("↑", "up", i > 0, () => move(i - 1)),
        button("↓", "down", i < options.by.length - 1, () => move(i + 1)),
        button("×", "remove", options.by.length > 1, () => this.change({ by: options.by.filter((_, j) => j !== i) })),
      );
    });
    replaceChildren(this.list, ...rows);
    this.domainRow.hidden = !options.by.includes("closest-domain-site");
    if (document.activeElement !== this.domain) this.domain.value = options.domain.join(", ");
    const unused = this.classifiers.filter((c) => !options.by.includes(c.name));
    replaceChildren(
      this.add,
      h("option", { value: "" }, "Add a level…"),
      ...unused.map((c) => h("option", { value: c.name, title: c.summary }, c.title)),
    );
    this.add.value = "";
    this.add.disabled = unused.length === 0 || options.by.length >= 8;
    const current: Record<string, string> = {
      metric: options.metric,
      sort: options.sort,
      scaled: options.scaled ? "scaled" : "unscaled",
      chart: options.chart,
      color: options.color,
    };
    for (const group of this.groups) {
      for (const b of group.buttons) {
        const on = b.dataset.value === current[group.name];
        b.classList.toggle("on", on);
        b.setAttribute("aria-pressed", String(on));
      }
    }
  }

  private segmented<T extends string>(name: keyof Options, label: string, choices: Choice<T>[]): HTMLElement {
    const buttons = choices.map((c) => {
      const b = h("button", { class: "seg", title: c.title, "data-value": c.value, "data-testid": `${String(name)}-${c.value}` }, c.label);
      b.addEventListener("click", () => {
        if (name === "scaled") this.change({ scaled: c.value === "scaled" });
        else this.change({ [name]: c.value } as Partial<Options>);
      });
      return b;
    });
    this.groups.push({ name, buttons });
    return h("div", { class: "option-row" }, h("span", { class: "option-label" }, label), h("div", { class: "segmented", role: "group", "aria-label": label }, ...buttons));
  }
}
