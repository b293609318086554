// Unit tests of the heap lens's layout helpers: stable ordering, the partition and its
// scaling, key joins across times, and the drill-down's closest-ancestor fallback.

import { describe, expect, it } from "vitest";
import {
  findNode,
  joinByKey,
  keyOf,
  layoutPartition,
  levelsOf,
  onBranch,
  orderedChildren,
  resolveDrill,
  scaleFactor,
} from "../src/heap/layout";
import { node, tree } from "./tree_fixture";

describe("stable ordering", () => {
  it("orders children by sort position, Other last, ties in arrival order", () => {
    const parent = node([], 10, [
      node(["Other"], 1, [], 0),
      node(["c"], 1, [], 2),
      node(["a"], 5, [], 0),
      node(["b"], 3, [], 0),
    ]);
    expect(orderedChildren(parent).map((c) => c.key)).toEqual(["a", "b", "c", "Other"]);
  });

  it("keeps the order when sizes change, so positions do not jump over time", () => {
    const small = layoutPartition(tree(30), { metric: "bytes" });
    const large = layoutPartition(tree(300), { metric: "bytes" });
    const order = (placed: typeof small) => placed.filter((p) => p.depth === 1).map((p) => p.node.key);
    expect(order(small)).toEqual(["a", "b", "Other"]);
    expect(order(large)).toEqual(order(small));
  });
});

describe("partition", () => {
  it("splits a parent's extent in proportion to its children, leaving its own share empty", () => {
    const placed = layoutPartition(tree(), { metric: "bytes" });
    const at = (path: string[]) => placed.find((p) => p.key === keyOf(path))!;
    expect(at([]).x0).toBe(0);
    expect(at([]).x1).toBe(1);
    expect(at(["a"]).x1 - at(["a"]).x0).toBeCloseTo(0.6);
    expect(at(["b"]).x0).toBeCloseTo(0.6);
    // b holds 30: y and z take 10 each, the last third is b's own.
    expect(at(["b", "z"]).x1).toBeCloseTo(0.6 + 0.2);
    expect(at(["b", "y"]).y0).toBe(2);
    expect(at(["b", "y"]).y1).toBe(3);
    expect(placed[0].key).toBe("");
  });

  it("cuts the tree at a depth and measures levels", () => {
    expect(levelsOf(tree())).toBe(3);
    const placed = layoutPartition(tree(), { metric: "bytes", depth: 1 });
    expect(Math.max(...placed.map((p) => p.depth))).toBe(1);
    expect(placed.find((p) => p.key === "a")!.hasChildren).toBe(true);
  });

  it("lays out a drilled-down subtree with absolute keys", () => {
    const b = findNode(tree(), ["b"])!;
    const placed = layoutPartition(b, { metric: "bytes", depth: 2 });
    expect(placed.map((p) => p.key)).toEqual([keyOf(["b"]), keyOf(["b", "y"]), keyOf(["b", "z"])]);
    expect(placed[1].x1 - placed[1].x0).toBeCloseTo(1 / 3);
  });

  it("scales a tree by its heap relative to the largest", () => {
    expect(scaleFactor(50, 200, true)).toBe(0.25);
    expect(scaleFactor(50, 200, false)).toBe(1);
    expect(scaleFactor(0, 0, true)).toBe(0);
    expect(scaleFactor(300, 200, true)).toBe(1);
    const placed = layoutPartition(tree(), { metric: "bytes", scale: 0.25 });
    expect(placed[0].x1).toBeCloseTo(0.25);
    expect(placed.find((p) => p.key === "a")!.x1).toBeCloseTo(0.15);
  });

  it("sizes by objects when asked", () => {
    const placed = layoutPartition(tree(), { metric: "objects" });
    expect(placed[0].value).toBe(10);
  });
});

describe("key joins", () => {
  it("joins two times on full key paths", () => {
    const before = layoutPartition(tree(30), { metric: "bytes" });
    const after = layoutPartition(tree(0), { metric: "bytes" });
    const join = joinByKey(before, after);
    expect(join.exit.map((n) => n.key).sort()).toEqual([keyOf(["b", "y"]), keyOf(["b", "z"])]);
    expect(join.enter).toEqual([]);
    expect(join.update.map(([a, b]) => [a.key, b.key])).toContainEqual(["a", "a"]);
    const back = joinByKey(after, before);
    expect(back.enter.map((n) => n.key)).toHaveLength(2);
  });

  it("keeps keys distinct for paths that share text", () => {
    expect(keyOf(["a", "b"])).not.toBe(keyOf(["a b"]));
    expect(keyOf([])).toBe("");
  });
});

describe("drill-down", () => {
  it("keeps a node that exists and holds memory", () => {
    const r = resolveDrill(tree(), ["b", "y"], "bytes");
    expect(r.path).toEqual(["b", "y"]);
    expect(r.fellBack).toBe(false);
    expect(r.node.key).toBe("y");
  });

  it("falls back to the closest ancestor when the node vanished or is empty", () => {
    const gone = resolveDrill(tree(0), ["b", "y"], "bytes");
    expect(gone.path).toEqual([]);
    expect(gone.fellBack).toBe(true);
    expect(gone.node.full_key).toEqual([]);
    const missing = resolveDrill(tree(), ["a", "nope"], "bytes");
    expect(missing.path).toEqual(["a"]);
    expect(missing.fellBack).toBe(true);
  });

  it("knows the drill-down branch", () => {
    expect(onBranch(["a"], ["a", "x"])).toBe(true);
    expect(onBranch(["a", "x", "deep"], ["a", "x"])).toBe(true);
    expect(onBranch(["b"], ["a", "x"])).toBe(false);
    expect(onBranch([], ["a"])).toBe(true);
  });
});
