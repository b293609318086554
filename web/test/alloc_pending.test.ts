// Unit tests of the allocation-map lens's first request while `memlens view` still
// reads the map: it asks again once a second on 503, showing each sentence, and starts
// with the first real answer; a 404's sentence stays, with no further question; any
// other answer and a report go through the data source as before.

import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { AllocApi, type AllocMeta } from "../src/alloc/api";
import { RETRY_MS } from "../src/alloc/pending";
import { DataError, type Params, type Source } from "../src/data/source";

const META = { axis_len: 4096, notes: [] } as unknown as AllocMeta;

const answer = (status: number, body: unknown) =>
  new Response(JSON.stringify(body), { status, headers: { "content-type": "application/json" } });

/** A source of `kind` whose own requests fail as the live one does, or answer META; and its `json`. */
function source(kind: Source["kind"], fails = kind === "live") {
  const json = vi.fn(async (_route: string, _params?: Params): Promise<unknown> => {
    if (fails) throw new DataError("the server broke");
    return META;
  });
  const src: Source = { kind, json: json as Source["json"], bytes: vi.fn(), blob: vi.fn(), held: () => [] };
  return { src, json };
}

/** `fetch` answering `answers` in turn (the last one from then on). */
function serve(...answers: (() => Response)[]) {
  const fetch = vi.fn(async (_url: URL) => answers[Math.min(fetch.mock.calls.length - 1, answers.length - 1)]());
  vi.stubGlobal("fetch", fetch);
  return fetch;
}

describe("the allocation map's first request", () => {
  beforeEach(() => {
    vi.useFakeTimers();
    vi.stubGlobal("location", { href: "http://127.0.0.1:1234/token/" });
  });
  afterEach(() => {
    vi.useRealTimers();
    vi.unstubAllGlobals();
  });

  it("asks again once a second while the map is read, then starts once", async () => {
    const fetch = serve(
      () => answer(503, { error: "the allocation map is still being read (12 %); it appears here when done" }),
      () => answer(503, { error: "the allocation map is still being read (43 %); it appears here when done" }),
      () => answer(200, META),
    );
    const shown: [string, boolean][] = [];
    const started = vi.fn();
    const { src, json } = source("live");
    void new AllocApi(src).firstMeta((m, final) => shown.push([m, final])).then((meta) => meta && started(meta));

    await vi.advanceTimersByTimeAsync(0);
    expect(fetch).toHaveBeenCalledTimes(1);
    expect(String(fetch.mock.calls[0][0])).toBe("http://127.0.0.1:1234/token/api/alloc/meta");
    expect(shown).toEqual([["The allocation map is still being read (12 %); it appears here when done", false]]);
    await vi.advanceTimersByTimeAsync(RETRY_MS - 1);
    expect(fetch).toHaveBeenCalledTimes(1);
    await vi.advanceTimersByTimeAsync(1);
    expect(fetch).toHaveBeenCalledTimes(2);
    expect(shown[1]).toEqual(["The allocation map is still being read (43 %); it appears here when done", false]);
    expect(started).not.toHaveBeenCalled();
    await vi.advanceTimersByTimeAsync(RETRY_MS);
    expect(started).toHaveBeenCalledTimes(1);
    expect(started).toHaveBeenCalledWith(META);

    // Started: no more questions, nothing more shown, the source not asked.
    await vi.advanceTimersByTimeAsync(5 * RETRY_MS);
    expect(fetch).toHaveBeenCalledTimes(3);
    expect(started).toHaveBeenCalledTimes(1);
    expect(shown).toHaveLength(2);
    expect(json).not.toHaveBeenCalled();
  });

  it("keeps a 404's sentence and asks no more", async () => {
    const fetch = serve(() => answer(404, { error: "the allocation map would not fit in memory" }));
    const shown: [string, boolean][] = [];
    const meta = new AllocApi(source("live").src).firstMeta((m, final) => shown.push([m, final]));
    await vi.advanceTimersByTimeAsync(5 * RETRY_MS);
    expect(fetch).toHaveBeenCalledTimes(1);
    expect(shown).toEqual([["The allocation map would not fit in memory", true]]);
    await expect(meta).resolves.toBeNull();
  });

  it("leaves other failures to the data source, as before", async () => {
    const show = vi.fn();
    serve(() => answer(500, { error: "the server broke" }));
    const { src, json } = source("live");
    await expect(new AllocApi(src).firstMeta(show)).rejects.toThrow("the server broke");
    expect(json).toHaveBeenCalledWith("alloc/meta", {});

    vi.stubGlobal("fetch", vi.fn(async () => Promise.reject(new TypeError("Failed to fetch"))));
    await expect(new AllocApi(source("live").src).firstMeta(show)).rejects.toThrow("the server broke");
    expect(show).not.toHaveBeenCalled();
  });

  it("reads a report's embedded answer, without the network", async () => {
    const fetch = serve(() => answer(503, { error: "not here" }));
    const { src, json } = source("report");
    await expect(new AllocApi(src).firstMeta(() => {})).resolves.toBe(META);
    expect(fetch).not.toHaveBeenCalled();
    expect(json).toHaveBeenCalledWith("alloc/meta", {});
  });
});
