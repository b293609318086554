// Unit tests of the report's embedded data source and the number formats.

import { describe, expect, it } from "vitest";
import { EmbeddedSource } from "../src/data/source";
import type { ReportData } from "../src/data/types";
import { formatBytes, formatDuration, formatPercent, formatSignedBytes } from "../src/format";
import { tree } from "./tree_fixture";

function report(): ReportData {
  const trees = [10, 20, 30].map((t) => ({ time_ns: t, root: tree(t) }));
  return {
    version: 1,
    meta: {} as ReportData["meta"],
    timeline: {} as ReportData["timeline"],
    growth: [{ by: "site,thread", doc: { suspects: [] } }],
    trees: [
      {
        by: "site,thread",
        metric: "bytes",
        sort: "growth",
        response: {
          doc: { classifiers: ["site", "thread"], times_ns: [10, 20, 30], metric: "bytes", sort: "growth", trees },
          totals: trees.map((t) => ({ time_ns: t.time_ns, bytes: t.root.bytes, objects: t.root.objects })),
        },
      },
    ],
  };
}

describe("embedded source", () => {
  it("answers trees at its snapshot times", async () => {
    const source = new EmbeddedSource(report());
    const answer = await source.trees({ by: ["site", "thread"], times: [30, 10], metric: "bytes", sort: "growth" });
    expect(answer.doc.times_ns).toEqual([10, 30]);
    expect(answer.totals).toHaveLength(3);
    const all = await source.trees({ by: ["site", "thread"], times: [], metric: "bytes", sort: "growth" });
    expect(all.doc.trees).toHaveLength(3);
  });

  it("says what it cannot answer", async () => {
    const source = new EmbeddedSource(report());
    await expect(source.trees({ by: ["thread"], times: [], metric: "bytes", sort: "growth" })).rejects.toThrow(
      /grouped by site,thread only/,
    );
    await expect(source.trees({ by: ["site", "thread"], times: [15], metric: "bytes", sort: "growth" })).rejects.toThrow(
      /snapshot times only/,
    );
    expect(source.canRegroup).toBe(false);
  });
});

describe("formats", () => {
  it("prints bytes, durations and shares like the CLI", () => {
    expect(formatBytes(512)).toBe("512 B");
    expect(formatBytes(1536)).toBe("1.50 KiB");
    expect(formatBytes(5 * 1024 * 1024)).toBe("5.00 MiB");
    expect(formatSignedBytes(-2048)).toBe("-2.00 KiB");
    expect(formatDuration(1_500_000)).toBe("1.5 ms");
    expect(formatDuration(2_000_000_000)).toBe("2 s");
    expect(formatPercent(1, 3)).toBe("33 %");
    expect(formatPercent(0, 0)).toBe("–");
  });
});
