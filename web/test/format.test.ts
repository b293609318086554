// Unit tests of the axis ticks in format.ts: 1-2-5 steps in binary units for bytes,
// s/ms/µs for times with "0 s" at the origin, shares in percent, and the ellipsis.

import { describe, expect, it } from "vitest";
import { byteTicks, countTicks, ellipsize, formatSi, niceStep, percentTicks, timeTicks } from "../src/format";

const labels = (ticks: { label: string }[]) => ticks.map((t) => t.label);
const MiB = 1024 * 1024;

describe("axis ticks", () => {
  it("steps by 1, 2 or 5 times a power of ten", () => {
    expect(niceStep(3.6)).toBe(5);
    expect(niceStep(1.2)).toBe(1);
    expect(niceStep(2.25)).toBe(2);
    expect(niceStep(0.3)).toBeCloseTo(0.2);
    expect(niceStep(1000)).toBe(1000);
    expect(niceStep(0)).toBe(1);
  });

  it("writes bytes in one binary unit with round steps, never 4.77 MiB", () => {
    expect(labels(byteTicks(14.3 * MiB, 4))).toEqual(["0", "5 MiB", "10 MiB"]);
    expect(labels(byteTicks(9 * MiB, 4))).toEqual(["0", "2 MiB", "4 MiB", "6 MiB", "8 MiB"]);
    expect(labels(byteTicks(1.5 * MiB, 3))).toEqual(["0", "0.5 MiB", "1 MiB", "1.5 MiB"]);
    expect(labels(byteTicks(24.4 * 1024, 4))).toEqual(["0", "5 KiB", "10 KiB", "15 KiB", "20 KiB"]);
    expect(labels(byteTicks(700, 4))).toEqual(["0", "200 B", "400 B", "600 B"]);
    expect(byteTicks(9 * MiB, 4)[2].value).toBe(4 * MiB);
    for (const t of byteTicks(14.3 * MiB)) expect(t.label).not.toMatch(/\.\d\d/);
  });

  it("writes times in s, ms or µs with 0 s at the origin", () => {
    expect(labels(timeTicks(0, 62.6e6, 6))).toEqual(["0 s", "10 ms", "20 ms", "30 ms", "40 ms", "50 ms", "60 ms"]);
    expect(labels(timeTicks(0, 3.2e9, 4))).toEqual(["0 s", "1 s", "2 s", "3 s"]);
    expect(labels(timeTicks(0, 800e3, 4))).toEqual(["0 s", "200 µs", "400 µs", "600 µs", "800 µs"]);
    expect(labels(timeTicks(0, 1.2e9, 6))).toEqual(["0 s", "0.2 s", "0.4 s", "0.6 s", "0.8 s", "1 s", "1.2 s"]);
    expect(labels(timeTicks(12e6, 17e6, 5))).toEqual(["12 ms", "13 ms", "14 ms", "15 ms", "16 ms", "17 ms"]);
    for (const t of timeTicks(0, 5e6)) expect(t.label).not.toBe("0 ns");
  });

  it("writes counts and shares with their unit", () => {
    expect(labels(countTicks(3.99e6, "/s", 4))).toEqual(["0", "1 M /s", "2 M /s", "3 M /s"]);
    expect(labels(countTicks(1, "", 4))).toEqual(["0", "0.2", "0.4", "0.6", "0.8", "1"]);
    expect(labels(percentTicks(4))).toEqual(["0 %", "25 %", "50 %", "75 %", "100 %"]);
    expect(labels(percentTicks(2))).toEqual(["0 %", "50 %", "100 %"]);
    expect(formatSi(8704)).toBe("8.7 k");
  });

  it("cuts long labels with an ellipsis", () => {
    const measure = (s: string) => s.length * 7;
    expect(ellipsize("main heap", 100, measure)).toBe("main heap");
    expect(ellipsize("arena 0x7fbc2c000000", 70, measure)).toBe("arena 0x7…");
  });
});
