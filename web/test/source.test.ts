// Unit tests of the data sources — the report's answer keys (the server's spelling),
// the embedded answers, and the lenses' fallbacks in a report (heap trees picked out
// of the snapshot series, the cache's nearest batch, state and statistics) — and of
// the number formats.

import { describe, expect, it } from "vitest";
import { CacheApi } from "../src/cache/api";
import { EmbeddedSource, answerKey, parseKey } from "../src/data/source";
import type { EmbeddedAnswer, ReportData } from "../src/data/types";
import { formatBytes, formatDuration, formatPercent, formatSignedBytes } from "../src/format";
import { HeapApi } from "../src/heap/api";
import { tree } from "./tree_fixture";

const json = (value: unknown): EmbeddedAnswer => ({ type: "application/json; charset=utf-8", json: value });
const binary = (bytes: number[]): EmbeddedAnswer => ({ type: "application/octet-stream", base64: btoa(String.fromCharCode(...bytes)) });

function report(answers: Record<string, EmbeddedAnswer>): ReportData {
  const meta = { version: 2, program: "./prog", pid: 7, trace: "prog.mlens", lenses: [], notes: [], sampling: null, mid_run: null, live: false };
  return { meta, answers };
}

function heapReport(): EmbeddedSource {
  const trees = [10, 20, 30].map((t) => ({ time_ns: t, root: tree(t) }));
  const response = {
    doc: { classifiers: ["site", "thread"], times_ns: [10, 20, 30], metric: "bytes", sort: "growth", trees },
    totals: trees.map((t) => ({ time_ns: t.time_ns, bytes: t.root.bytes, objects: t.root.objects })),
  };
  return new EmbeddedSource(
    report({
      [answerKey("heap/tree", { by: "site,thread", metric: "bytes", sort: "growth", times: "" })]: json(response),
      [answerKey("heap/growth", { by: "site,thread", top: 20 })]: json({ by: "site,thread", doc: { suspects: [] } }),
    }),
  );
}

describe("answer keys", () => {
  it("sort and encode the query as the server does", () => {
    expect(answerKey("heap/meta")).toBe("heap/meta");
    expect(answerKey("heap/tree", { times: "", sort: "growth", by: "site,thread" })).toBe("heap/tree?by=site%2Cthread&sort=growth&times=");
    expect(answerKey("cache/batch", { n: "a b", levels: "L1:1024:2:64:lru", start: 0 })).toBe(
      "cache/batch?levels=L1%3A1024%3A2%3A64%3Alru&n=a+b&start=0",
    );
    expect(answerKey("alloc/tile", { alpha: 0.5, size: 256 })).toBe("alloc/tile?alpha=0.5&size=256");
    expect(parseKey("cache/batch?levels=L1%3A1024&start=0")).toEqual({ route: "cache/batch", params: { levels: "L1:1024", start: "0" } });
  });
});

describe("embedded source", () => {
  it("answers the viewer's meta, JSON, bytes and what it holds", async () => {
    const source = new EmbeddedSource(
      report({ "alloc/meta": json({ blocks: 3 }), "cache/state?at=0": binary([1, 2, 255]), "cache/state?at=16": binary([4]) }),
    );
    expect(source.kind).toBe("report");
    expect((await source.json<{ program: string }>("meta")).program).toBe("./prog");
    expect(await source.json("alloc/meta")).toEqual({ blocks: 3 });
    expect([...new Uint8Array(await source.bytes("cache/state", { at: 0 }))]).toEqual([1, 2, 255]);
    expect((await source.blob("cache/state", { at: 0 })).size).toBe(3);
    expect(source.held("cache/state")).toEqual([{ at: "0" }, { at: "16" }]);
    await expect(source.json("alloc/block", { t: 1 })).rejects.toThrow(/memlens view/);
  });
});

describe("heap lens in a report", () => {
  it("answers trees at its snapshot times", async () => {
    const api = new HeapApi(heapReport());
    const answer = await api.trees({ by: ["site", "thread"], times: [30, 10], metric: "bytes", sort: "growth" });
    expect(answer.doc.times_ns).toEqual([10, 30]);
    expect(answer.totals).toHaveLength(3);
    const all = await api.trees({ by: ["site", "thread"], times: [], metric: "bytes", sort: "growth" });
    expect(all.doc.trees).toHaveLength(3);
    expect((await api.growth(["site", "thread"], 20)).by).toBe("site,thread");
  });

  it("says what it cannot answer", async () => {
    const api = new HeapApi(heapReport());
    await expect(api.trees({ by: ["thread"], times: [], metric: "bytes", sort: "growth" })).rejects.toThrow(/grouped by site,thread only/);
    await expect(api.trees({ by: ["site", "thread"], times: [15], metric: "bytes", sort: "growth" })).rejects.toThrow(/snapshot times only/);
    await expect(api.growth(["thread"], 20)).rejects.toThrow(/grouped by site,thread only/);
    expect(api.canRegroup).toBe(false);
    expect(api.canPickAnyTime).toBe(false);
  });
});

describe("cache lens in a report", () => {
  const session = { source: "trace", n: null, levels: "L1:32768:8:64:lru", inclusion: "non-inclusive" };
  const named = { source: session.source, levels: session.levels, inclusion: session.inclusion };
  const source = new EmbeddedSource(
    report({
      [answerKey("cache/batch", { ...named, start: 0, count: 100 })]: binary([]),
      [answerKey("cache/batch", { ...named, start: 100, count: 50 })]: binary([]),
      [answerKey("cache/stats", { ...named, at: 0 })]: json({ at: 0 }),
      [answerKey("cache/stats", { ...named, at: 64 })]: json({ at: 64 }),
      [answerKey("cache/stats", { ...named, at: 150 })]: json({ at: 150 }),
    }),
  );

  it("plays the embedded prefix and shows the nearest earlier statistics", async () => {
    const api = new CacheApi(source);
    expect(api.canSimulate).toBe(false);
    expect(api.playable(session, 1000)).toBe(150);
    expect(api.playable(session, 120)).toBe(120);
    expect((await api.stats(session, 63)).at).toBe(0);
    expect((await api.stats(session, 64)).at).toBe(64);
    expect((await api.stats(session, 10_000)).at).toBe(150);
    await expect(api.batch(session, 150, 256)).rejects.toThrow(/first 150 references/);
    await expect(api.session({ ...session, levels: "L1:1024:2:64:lru" })).rejects.toThrow(/memlens view/);
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
