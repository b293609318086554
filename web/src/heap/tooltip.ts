// The floating tooltip of the heap lens: absolute size, share of the parent and of the
// heap, and growth since the window's start, for the node under the pointer.

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
import { growthOf, valueOf } from "./layout";

export interface TooltipFacts {
  node: TreeNode;
  parentValue: number;
  heapValue: number;
  metric: Metric;
  windowStartNs: number;
  hint?: string;
}

export class Tooltip {
  readonly el = h("div", { class: "tooltip", role: "tooltip", "data-testid": "tooltip" });

  constructor() {
    document.body.append(this.el);
  }

  show(facts: TooltipFacts, event: MouseEvent): void {
    const { node, metric } = facts;
    const value = valueOf(node, metric);
    const growth = growthOf(node, metric);
    const path = node.full_key.length > 1 ? node.full_key.join(" › ") : "";
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
      facts.hint ? h("div", { class: "tt-hint" }, facts.hint) : null,
    );
    this.el.classList.add("visible");
    this.move(event);
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

  hide(): void {
    this.el.classList.remove("visible");
  }
}
