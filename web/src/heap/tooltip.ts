// The floating tooltip of the heap lens: absolute size, share of the parent and of the
// heap, growth since the window's start, and the heaviest call stack (with file:line)
// for the node under the pointer.

import { h, replaceChildren } from "../app/dom";
import type { Metric, TreeNode } from "../data/types";
import {
  formatBytes,
  formatCount,
  formatDuration,
  formatPercent,
  formatSignedBytes,
  formatSignedCount,
} from "../format";
import { growthOf, keyOf, valueOf } from "./layout";
import { frameList } from "./stacks";
import type { StacksDoc } from "../data/types";

/** Frames of the heaviest stack the tooltip lists. */
const TOOLTIP_FRAMES = 8;

export interface TooltipFacts {
  node: TreeNode;
  parentValue: number;
  heapValue: number;
  metric: Metric;
  windowStartNs: number;
  hint?: string;
  /** With a base run: the node's value there, the base's name and the instant. */
  base?: { value: number; name: string; timeNs: number };
}

export class Tooltip {
  readonly el = h("div", { class: "tooltip", role: "tooltip", "data-testid": "tooltip" });
  private readonly stack = h("div", { class: "tt-stack", "data-testid": "tooltip-stack" });
  /** The join key of the node shown, so a late stack answer for another is dropped. */
  private shown: string | null = null;

  constructor() {
    document.body.append(this.el);
  }

  show(facts: TooltipFacts, event: MouseEvent): void {
    const { node, metric } = facts;
    const value = valueOf(node, metric);
    const growth = growthOf(node, metric);
    const path = node.full_key.length > 1 ? node.full_key.join(" › ") : "";
    const key = keyOf(node.full_key);
    if (key !== this.shown) replaceChildren(this.stack);
    this.shown = key;
    replaceChildren(
      this.el,
      h("div", { class: "tt-title" }, node.full_key.length === 0 ? "Whole heap" : node.key),
      path ? h("div", { class: "tt-path" }, path) : null,
      h(
        "div",
        { class: "tt-grid" },
        h("span", {}, "Live"),
        h("b", {}, `${formatBytes(node.bytes)} · ${formatCount(node.objects)} objects`),
        h("span", {}, "Of parent"),
        h("b", {}, formatPercent(value, facts.parentValue)),
        h("span", {}, "Of heap"),
        h("b", {}, formatPercent(value, facts.heapValue)),
        h("span", {}, facts.windowStartNs === 0 ? "Growth since start" : `Growth since ${formatDuration(facts.windowStartNs)}`),
        h(
          "b",
          { class: growth > 0 ? "grow" : growth < 0 ? "shrink" : "" },
          metric === "bytes" ? formatSignedBytes(growth) : `${formatSignedCount(growth)} objects`,
        ),
      ),
      facts.base ? this.baseRow(value, facts.base, metric) : null,
      this.stack,
      facts.hint ? h("div", { class: "tt-hint" }, facts.hint) : null,
    );
    this.el.classList.add("visible");
    this.move(event);
  }

  /** The node against the base run: its value there and the change. */
  private baseRow(value: number, base: NonNullable<TooltipFacts["base"]>, metric: Metric): HTMLElement {
    const delta = value - base.value;
    const show = (v: number) => (metric === "bytes" ? formatBytes(v) : `${formatCount(v)} objects`);
    const signed = metric === "bytes" ? formatSignedBytes(delta) : `${formatSignedCount(delta)} objects`;
    const relative = base.value > 0 ? ` (${delta >= 0 ? "+" : "−"}${formatPercent(Math.abs(delta), base.value)})` : base.value === 0 && value > 0 ? " (new)" : "";
    return h(
      "div",
      { class: "tt-grid tt-base", "data-testid": "tooltip-base" },
      h("span", {}, `In ${base.name} at ${formatDuration(base.timeNs)}`),
      h("b", {}, show(base.value)),
      h("span", {}, "Change"),
      h("b", { class: delta > 0 ? "grow" : delta < 0 ? "shrink" : "" }, `${signed}${relative}`),
    );
  }

  move(event: MouseEvent): void {
    const pad = 14;
    const { innerWidth, innerHeight } = window;
    const rect = this.el.getBoundingClientRect();
    let x = event.clientX + pad;
    let y = event.clientY + pad;
    if (x + rect.width > innerWidth - 8) x = event.clientX - rect.width - pad;
    if (y + rect.height > innerHeight - 8) y = event.clientY - rect.height - pad;
    this.el.style.transform = `translate(${Math.max(4, x)}px, ${Math.max(4, y)}px)`;
  }

  /** Shows the heaviest stack of the node at `path`, if the tooltip still shows it. */
  showStacks(path: readonly string[], doc: StacksDoc | string): void {
    if (keyOf(path) !== this.shown) return;
    if (typeof doc === "string") {
      replaceChildren(this.stack, h("div", { class: "tt-note" }, doc));
      return;
    }
    const top = doc.stacks[0];
    if (!top) {
      replaceChildren(this.stack);
      return;
    }
    const share = doc.stack_count > 1 ? ` · heaviest of ${formatCount(doc.stack_count)} stacks` : "";
    replaceChildren(
      this.stack,
      h("div", { class: "tt-stack-head" }, `Allocated at (${formatBytes(top.bytes)}${share})`),
      frameList(top.frames, TOOLTIP_FRAMES),
    );
  }

  hide(): void {
    this.el.classList.remove("visible");
    this.shown = null;
  }
}
