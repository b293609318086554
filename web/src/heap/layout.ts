// Layout helpers of the heap lens, free of the DOM so they can be unit-tested: node
// keys for joins, the stable child order, drill-down resolution with the closest-
// ancestor fallback, scaling, and the d3-hierarchy partition both charts share.

import { hierarchy, partition } from "d3-hierarchy";
import type { Metric, TreeNode } from "../data/types";

/** The separator of a key path in a join key (never part of a symbol name). */
const KEY_SEPARATOR = "\u001f";

/** The join key of a node: its full key path. The root's key is the empty string. */
export function keyOf(path: readonly string[]): string {
  return path.join(KEY_SEPARATOR);
}

/** A node's size under `metric`. */
export function valueOf(node: TreeNode, metric: Metric): number {
  return metric === "bytes" ? node.bytes : node.objects;
}

/** A node's growth since the window's start under `metric`. */
export function growthOf(node: TreeNode, metric: Metric): number {
  return metric === "bytes" ? node.growth_bytes : node.growth_objects;
}

/**
 * The children in their stable order: by the server's `sort_position` (fixed across
 * all times), `Other` last. A stable sort, so equal positions keep their order.
 */
export function orderedChildren(node: TreeNode): TreeNode[] {
  const children = node.children ?? [];
  return children
    .map((child, index) => ({ child, index }))
    .sort(
      (a, b) =>
        Number(a.child.is_other) - Number(b.child.is_other) ||
        a.child.sort_position - b.child.sort_position ||
        a.index - b.index,
    )
    .map((entry) => entry.child);
}

/** The node at the absolute full key `path` under `root`, or undefined. */
export function findNode(root: TreeNode, path: readonly string[]): TreeNode | undefined {
  let node: TreeNode | undefined = root;
  for (let depth = root.full_key.length; depth < path.length && node; depth++) {
    node = node.children?.find((c) => c.key === path[depth]);
  }
  return node;
}

export interface DrillResolution {
  /** The path actually shown: the requested one or its closest live ancestor. */
  path: string[];
  node: TreeNode;
  /** Whether the requested node was missing or empty at this time. */
  fellBack: boolean;
}

/**
 * Resolves a drill-down path in one tree: the requested node when it exists and holds
 * memory (under `metric`), otherwise its closest ancestor that does (at worst the root).
 */
export function resolveDrill(
  root: TreeNode,
  path: readonly string[],
  metric: Metric,
): DrillResolution {
  let node = root;
  let depth = root.full_key.length;
  for (; depth < path.length; depth++) {
    const child = node.children?.find((c) => c.key === path[depth]);
    if (!child || valueOf(child, metric) <= 0) break;
    node = child;
  }
  return { path: path.slice(0, depth), node, fellBack: depth < path.length };
}

/**
 * How large a tree is drawn: its size relative to the largest tree of the window when
 * `scaled` (the paper's absolute-growth view), else 1.
 */
export function scaleFactor(total: number, largest: number, scaled: boolean): number {
  if (!scaled) return 1;
  if (largest <= 0) return total > 0 ? 1 : 0;
  return Math.max(0, Math.min(1, total / largest));
}

/** The number of levels of a tree (a lone root has 1). */
export function levelsOf(node: TreeNode): number {
  let deepest = 0;
  for (const child of node.children ?? []) deepest = Math.max(deepest, levelsOf(child));
  return deepest + 1;
}

/** One node placed by the partition: `x` along the size axis, `y` in levels. */
export interface PlacedNode {
  key: string;
  node: TreeNode;
  /** Depth below the laid-out root (0 for the root). */
  depth: number;
  /** Extent along the size axis, in [0, scale]. */
  x0: number;
  x1: number;
  /** Extent along the level axis, in levels: [depth, depth + 1]. */
  y0: number;
  y1: number;
  value: number;
  /** The laid-out parent's value (the node's own value for the root). */
  parentValue: number;
  /** Whether the node has children in the full tree (it can be drilled into). */
  hasChildren: boolean;
}

export interface PartitionOptions {
  metric: Metric;
  /** Levels drawn below the root; deeper nodes are left out. Default: all. */
  depth?: number;
  /** The size-axis extent of the root, in [0, 1] (see `scaleFactor`). Default 1. */
  scale?: number;
}

/**
 * Lays `root` out with d3's partition: children split their parent's extent in
 * proportion to their own sizes, in stable order. Sizes are the nodes' own values, not
 * sums of children, so a parent holding blocks of its own keeps a gap after its
 * children. Returns the nodes parents first.
 */
export function layoutPartition(root: TreeNode, options: PartitionOptions): PlacedNode[] {
  const maxDepth = options.depth ?? Infinity;
  const scale = options.scale ?? 1;
  const h = hierarchy(root, (node) => {
    const depth = node.full_key.length - root.full_key.length;
    return depth < maxDepth ? orderedChildren(node) : [];
  });
  // Explicit values: d3's partition lays children out proportionally to `value`.
  h.each((n) => {
    (n as { value?: number }).value = valueOf(n.data, options.metric);
  });
  const levels = h.height + 1;
  partition<TreeNode>().size([scale, levels])(h);
  const placed: PlacedNode[] = [];
  h.each((n) => {
    const p = n as typeof n & { x0: number; x1: number; y0: number; y1: number };
    placed.push({
      key: keyOf(n.data.full_key),
      node: n.data,
      depth: n.depth,
      x0: p.x0,
      x1: p.x1,
      y0: p.y0,
      y1: p.y1,
      value: n.value ?? 0,
      parentValue: n.parent ? (n.parent.value ?? 0) : (n.value ?? 0),
      hasChildren: (n.data.children?.length ?? 0) > 0,
    });
  });
  return placed;
}

export interface KeyJoin<T> {
  enter: T[];
  update: [T, T][];
  exit: T[];
}

/** Joins two placements on their keys: what appears, what moves, what disappears. */
export function joinByKey<T extends { key: string }>(before: T[], after: T[]): KeyJoin<T> {
  const old = new Map(before.map((n) => [n.key, n]));
  const fresh = new Set(after.map((n) => n.key));
  return {
    enter: after.filter((n) => !old.has(n.key)),
    update: after.filter((n) => old.has(n.key)).map((n) => [old.get(n.key)!, n]),
    exit: before.filter((n) => !fresh.has(n.key)),
  };
}

/** Whether `path` lies on the drill-down branch `drill` (an ancestor, it, or below). */
export function onBranch(path: readonly string[], drill: readonly string[]): boolean {
  const n = Math.min(path.length, drill.length);
  for (let i = 0; i < n; i++) if (path[i] !== drill[i]) return false;
  return true;
}

/**
 * The drill-down path to keep when the classifier list changes from `before` to
 * `after`: the keys of the levels both lists share from the start (a key is a label of
 * its level's classifier, so it means the same only under the same classifier), and
 * none past a `call-path`, whose keys span several levels. A stale path would name a
 * group the new tree cannot have.
 */
export function drillAfterRegroup(before: readonly string[], after: readonly string[], drill: readonly string[]): string[] {
  let shared = 0;
  while (shared < before.length && shared < after.length && before[shared] === after[shared] && before[shared] !== "call-path") {
    shared++;
  }
  return drill.slice(0, shared);
}

/** Nodes under `root` whose key contains `query` (any case), largest first. */
export function searchTree(root: TreeNode, query: string, metric: Metric): TreeNode[] {
  const needle = query.trim().toLowerCase();
  if (!needle) return [];
  const found: TreeNode[] = [];
  const visit = (node: TreeNode) => {
    for (const child of node.children ?? []) {
      if (!child.is_other && child.key.toLowerCase().includes(needle)) found.push(child);
      visit(child);
    }
  };
  visit(root);
  return found.sort((a, b) => valueOf(b, metric) - valueOf(a, metric));
}

/** Where drilling to a search match goes: the match when it opens, else its parent. */
export function drillToMatch(match: TreeNode): string[] {
  return match.children && match.children.length > 0 ? [...match.full_key] : match.full_key.slice(0, -1);
}
