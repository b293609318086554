// Colours by change from a base run (`memlens view NEW --base OLD`): each node of a
// tree is filled by how much its group grew (red) or shrank (blue) against the same
// group of the base run at the matching instant, on a square-root scale of the tree's
// largest change, with near-white for no change; a group the base does not have is
// all growth. The same `fill(node)` as the group colours, so every chart takes either.

import { interpolateRgb } from "d3-interpolate";
import type { BaseTreeWire } from "../generated/viewer";
import type { Metric, TreeNode } from "../data/types";
import { ROOT_FILL } from "./colors";
import { keyOf } from "./layout";

/** What a chart needs to fill a node. */
export interface NodeFill {
  fill(node: TreeNode): string;
}

export const GREW = "#c4342d";
export const SHRANK = "#2f6db0";
export const SAME = "#eceef2";

/** A node's live memory in the base run. */
export interface BaseValue {
  bytes: number;
  objects: number;
}

/** The base values of one tree's nodes, by the node's join key. */
export class BaseTree {
  readonly values = new Map<string, BaseValue>();

  constructor(readonly wire: BaseTreeWire) {
    for (const n of wire.nodes) this.values.set(keyOf(n.full_key), { bytes: n.bytes, objects: n.objects });
  }

  /** The base value of `node` (zero when the base has no such group). */
  of(node: TreeNode, metric: Metric): number {
    const v = this.values.get(keyOf(node.full_key));
    return v ? (metric === "bytes" ? v.bytes : v.objects) : 0;
  }
}

/** The change of `node` from the base under `metric`. */
export function changeOf(node: TreeNode, base: BaseTree, metric: Metric): number {
  return (metric === "bytes" ? node.bytes : node.objects) - base.of(node, metric);
}

/** The colour of a change `delta` on a scale whose ends are ±`largest`. */
export function changeColor(delta: number, largest: number): string {
  if (delta === 0 || largest <= 0) return SAME;
  const t = Math.sqrt(Math.min(1, Math.abs(delta) / largest));
  return interpolateRgb(SAME, delta > 0 ? GREW : SHRANK)(0.15 + 0.85 * t);
}

export class ChangeColors implements NodeFill {
  /** The largest |change| of any node below the root. */
  readonly largest: number;

  constructor(
    root: TreeNode,
    private readonly base: BaseTree,
    private readonly metric: Metric,
  ) {
    let largest = 0;
    const visit = (n: TreeNode) => {
      for (const c of n.children ?? []) {
        largest = Math.max(largest, Math.abs(changeOf(c, base, metric)));
        visit(c);
      }
    };
    visit(root);
    this.largest = largest;
  }

  fill(node: TreeNode): string {
    if (node.full_key.length === 0) return ROOT_FILL;
    return changeColor(changeOf(node, this.base, this.metric), this.largest);
  }
}
