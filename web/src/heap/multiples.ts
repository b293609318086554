// The timeline's small multiples: the whole tree at each pinned time and at the
// current time, side by side, drawn on canvases and scaled by heap size relative to
// the largest heap of the window (unscaled on request).

import { h, replaceChildren } from "../app/dom";
import type { Metric, TimeNs, TreeNode } from "../data/types";
import { formatBytes, formatCount, formatDuration } from "../format";
import { drawPartition } from "./canvas_chart";
import type { NodeFill } from "./change_colors";
import type { ColorScheme } from "./colors";
import type { ChartKind } from "./geometry";
import { layoutPartition, levelsOf, scaleFactor, valueOf } from "./layout";

export interface MultipleEntry {
  time: TimeNs;
  root: TreeNode | undefined;
  label: string;
  isCurrent: boolean;
  pinned: boolean;
  /** This tree's own fill (colours by change from a base run), else the view's. */
  colors?: NodeFill;
}

export interface MultiplesView {
  entries: MultipleEntry[];
  kind: ChartKind;
  metric: Metric;
  colors: ColorScheme;
  scaled: boolean;
  /** The largest heap of the window under the metric. */
  largest: number;
}

export interface MultiplesEvents {
  select(time: TimeNs): void;
  unpin(time: TimeNs): void;
}

const SIZE = 118;

export class MultiplesStrip {
  readonly el = h("div", { class: "multiples", "data-testid": "multiples" });

  constructor(private readonly events: MultiplesEvents) {}

  /** Cards drawn so far, by what their drawing depends on; reused across steps. */
  private cards = new Map<string, HTMLElement>();
  /** The colours the cards were drawn with (one scheme per grouping, metric and sort). */
  private colors: ColorScheme | null = null;

  render(view: MultiplesView): void {
    if (view.colors !== this.colors) {
      this.colors = view.colors;
      this.cards.clear();
    }
    const next = new Map<string, HTMLElement>();
    const cards = view.entries.map((entry) => {
      const key = [entry.time, entry.root ? "tree" : "none", entry.label, entry.pinned, view.kind, view.metric, view.scaled, view.largest, entry.colors ? "change" : "groups"].join("|");
      const card = next.get(key) ?? this.cards.get(key) ?? this.card(entry, view);
      card.classList.toggle("current", entry.isCurrent);
      next.set(key, card);
      return card;
    });
    this.cards = next;
    replaceChildren(this.el, ...cards);
  }

  private card(entry: MultipleEntry, view: MultiplesView): HTMLElement {
    const canvas = h("canvas", { class: "multiple-canvas" });
    const total = entry.root ? valueOf(entry.root, view.metric) : 0;
    const card = h(
      "div",
      {
        class: `multiple${entry.pinned ? " pinned" : ""}`,
        "data-testid": "multiple",
        "data-time": entry.time,
        title: `Tree at ${formatDuration(entry.time)} — click to travel there`,
      },
      canvas,
      h(
        "div",
        { class: "multiple-caption" },
        h("b", {}, formatDuration(entry.time)),
        entry.label ? h("span", { class: "multiple-tag" }, entry.label) : null,
      ),
      h(
        "div",
        { class: "multiple-size" },
        view.metric === "bytes" ? formatBytes(total) : `${formatCount(total)} objects`,
      ),
      entry.pinned
        ? h("button", { class: "multiple-remove", title: "Remove this tree", "aria-label": "remove" }, "×")
        : null,
    );
    card.addEventListener("click", (e) => {
      if ((e.target as HTMLElement).classList.contains("multiple-remove")) this.events.unpin(entry.time);
      else this.events.select(entry.time);
    });
    if (entry.root) {
      const scale = scaleFactor(total, view.largest, view.scaled);
      const placed = layoutPartition(entry.root, { metric: view.metric, scale });
      if (view.kind === "sunburst" && placed.length > 0) placed[0] = { ...placed[0], x0: 0, x1: 1 };
      drawPartition(canvas, { kind: view.kind, placed, colors: entry.colors ?? view.colors }, {
        width: SIZE,
        height: SIZE,
        levels: levelsOf(entry.root),
      });
    } else {
      canvas.width = SIZE;
      canvas.height = SIZE;
      canvas.style.width = `${SIZE}px`;
      canvas.style.height = `${SIZE}px`;
    }
    return card;
  }
}
