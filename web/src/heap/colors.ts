// Colours of the heap lens: each first-level group gets a hue of its own (by its
// stable sort position, so colours never change over time), deeper levels are lighter
// tints of it, and `Other` always has the reserved grey.

import { interpolateRgb } from "d3-interpolate";
import type { TreeNode } from "../data/types";
import { orderedChildren } from "./layout";

/** Eighteen hues: the union of the groups each time keeps holds at most 18 first-level
 * groups besides `Other` (pruning.rs's `max_union`), so no two share a hue. The first
 * nine are Tableau 10's (without its grey), the rest their darker companions. */
export const PALETTE = [
  "#4e79a7",
  "#f28e2b",
  "#59a14f",
  "#e15759",
  "#76b7b2",
  "#edc948",
  "#b07aa1",
  "#ff9da7",
  "#9c755f",
  "#2c5580",
  "#b35f12",
  "#357a2f",
  "#a8323a",
  "#3f8a84",
  "#a88a14",
  "#7a4f70",
  "#c9606b",
  "#6b4e38",
];
/** Reserved for `Other` nodes. */
export const OTHER_GREY = "#b9bec7";
/** The root (the whole heap). */
export const ROOT_FILL = "#e7eaf0";

/** Maps first-level keys to hues, from the whole tree's first level. */
export class ColorScheme {
  private readonly hues = new Map<string, string>();

  constructor(root: TreeNode | undefined) {
    if (!root) return;
    let i = 0;
    for (const child of orderedChildren(root)) {
      if (child.is_other) continue;
      this.hues.set(child.key, PALETTE[i % PALETTE.length]);
      i += 1;
    }
  }

  /** The fill of a node at absolute depth `path.length`. */
  fill(node: TreeNode): string {
    const path = node.full_key;
    if (path.length === 0) return ROOT_FILL;
    if (node.is_other) return OTHER_GREY;
    const hue = this.hues.get(path[0]) ?? OTHER_GREY;
    const tint = Math.min(0.55, (path.length - 1) * 0.17);
    return tint === 0 ? hue : interpolateRgb(hue, "#ffffff")(tint);
  }
}
