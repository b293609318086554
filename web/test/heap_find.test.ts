// Unit tests of the heap lens's search and of the drill-down kept across a regrouping
// (the regression of a stale path naming a group the new grouping cannot have).

import { describe, expect, it } from "vitest";
import { drillAfterRegroup, drillToMatch, searchTree } from "../src/heap/layout";
import { node, tree } from "./tree_fixture";

describe("search", () => {
  it("finds keys containing the text in any case, largest first, never Other", () => {
    const root = tree();
    expect(searchTree(root, "Y", "bytes").map((n) => n.full_key)).toEqual([["b", "y"]]);
    expect(searchTree(root, "", "bytes")).toEqual([]);
    const many = node([], 30, [node(["load_a"], 5), node(["other"], 1), node(["load_b"], 20)]);
    expect(searchTree(many, "load", "bytes").map((n) => n.key)).toEqual(["load_b", "load_a"]);
    expect(searchTree(root, "other", "bytes")).toEqual([]);
  });

  it("drills to a match that opens, else to its parent", () => {
    const root = tree();
    expect(drillToMatch(root.children![0])).toEqual(["a"]);
    expect(drillToMatch(root.children![1].children![0])).toEqual(["b"]);
  });
});

describe("regrouping keeps only the drill-down that still means the same", () => {
  it("drops a thread key when the thread level moves (the stale-path bug)", () => {
    // Drilled into a thread under thread,site, then regrouped to site,thread: the
    // thread's name is no site, so the whole heap is shown, not "no live memory".
    expect(drillAfterRegroup(["thread", "site"], ["site", "thread"], ["leakprog (tid 7)"])).toEqual([]);
  });

  it("keeps the levels both groupings share from the start", () => {
    expect(drillAfterRegroup(["site", "thread"], ["site", "size-class"], ["f", "main (tid 1)"])).toEqual(["f"]);
    expect(drillAfterRegroup(["site"], ["site", "thread"], ["f"])).toEqual(["f"]);
  });

  it("stops at a call path, whose keys span several levels", () => {
    expect(drillAfterRegroup(["call-path", "thread"], ["call-path"], ["main", "f"])).toEqual([]);
  });
});
