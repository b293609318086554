// A small memory tree for the unit tests: a heap of 100 bytes with two sites, the
// second of which holds blocks of its own besides its children.

import type { TreeNode } from "../src/data/types";

export function node(path: string[], bytes: number, children: TreeNode[] = [], position = 0): TreeNode {
  return {
    key: path.length ? path[path.length - 1] : "Overall",
    full_key: path,
    bytes,
    objects: Math.round(bytes / 10),
    growth_bytes: bytes / 2,
    growth_objects: 0,
    sort_position: position,
    is_other: path[path.length - 1] === "Other",
    classifier: path.length ? path.length - 1 : null,
    children,
  };
}

/** Overall 100 = a 60 (a/x 60) + b 30 (b/y 10, b/z 10, 10 of its own) + Other 10. */
export function tree(bBytes = 30): TreeNode {
  return node([], 70 + bBytes, [
    node(["a"], 60, [node(["a", "x"], 60)], 0),
    node(["b"], bBytes, bBytes ? [node(["b", "y"], 10, [], 0), node(["b", "z"], 10, [], 1)] : [], 1),
    node(["Other"], 10, [], 2),
  ]);
}
