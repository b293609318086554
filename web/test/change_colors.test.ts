// Colours by change from a base run: the base values are looked up by full key, a group
// the base lacks is all growth, the scale is symmetric around "no change" and its ends
// are the tree's largest change.

import { describe, expect, it } from "vitest";
import { BaseTree, ChangeColors, GREW, SAME, SHRANK, changeColor, changeOf } from "../src/heap/change_colors";
import { tree } from "./tree_fixture";

const base = new BaseTree({
  time_ns: 30,
  base_time_ns: 15,
  nodes: [
    { full_key: [], bytes: 80, objects: 8 },
    { full_key: ["a"], bytes: 20, objects: 2 },
    { full_key: ["b"], bytes: 50, objects: 5 },
  ],
});

describe("change colours", () => {
  it("compares each node with the same group of the base run", () => {
    const root = tree();
    const [a, b, other] = root.children;
    expect(changeOf(a, base, "bytes")).toBe(40);
    expect(changeOf(b, base, "bytes")).toBe(-20);
    expect(changeOf(other, base, "bytes")).toBe(10);
    expect(base.of(a.children[0], "objects")).toBe(0);
  });

  it("fills growth red, shrinkage blue, no change near-white, the largest change fully", () => {
    expect(changeColor(0, 40)).toBe(SAME);
    expect(changeColor(40, 40)).toBe(changeColor(400, 40));
    const red = changeColor(40, 40);
    const blue = changeColor(-40, 40);
    expect(red).not.toBe(blue);
    expect(red).toBe(changeColor(40, 40));
    const rgb = (c: string) => c.match(/\d+/g)!.map(Number);
    expect(rgb(red)[0]).toBeGreaterThan(rgb(red)[2]);
    expect(rgb(blue)[2]).toBeGreaterThan(rgb(blue)[0]);
    // Smaller changes are lighter.
    expect(rgb(changeColor(10, 40))[1]).toBeGreaterThan(rgb(red)[1]);
    expect([GREW, SHRANK]).not.toContain(SAME);
  });

  it("scales a tree's colours by its largest change below the root", () => {
    const root = tree();
    const colors = new ChangeColors(root, base, "bytes");
    expect(colors.largest).toBe(60);
    expect(colors.fill(root.children[0].children[0])).toBe(changeColor(60, 60));
  });
});
