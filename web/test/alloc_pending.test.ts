// Unit tests of the allocation-map lens's first request while `memlens view` still
// reads the map: it asks again once a second on 503, showing each sentence, and starts
// with the first real answer; a 404's sentence stays, with no further question; any
// other failure and a report behave as before.

import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { AllocApi, type AllocMeta } from "../src/alloc/api";
import { RETRY_MS } from "../src/alloc/pending";
import { DataError, type Params, type Source } from "../src/data/source";

const META = { axis_len: 4096, notes: [] } as unknown as AllocMeta;

/** A source of `kind` whose `json` answers `answers` in turn (the last from then on): META, or a failure. */
function source(kind: Source["kind"], ...answers: (DataError | "meta")[]) {
  const json = vi.fn(async (_route: string, _params?: Params): Promise<unknown> => {
    const answer = answers[Math.min(json.mock.calls.length - 1, answers.length - 1)];
    if (answer instanceof DataError) throw answer;
    return META;
  });
  const src: Source = { kind, json: json as Source["json"], bytes: vi.fn(), blob: vi.fn(), held: () => [] };
  return { src, json };
}

describe("the allocation map's first request", () => {
  beforeEach(() => vi.useFakeTimers());
  afterEach(() => vi.useRealTimers());

  it("asks again once a second while the map is read, then starts once", async () => {
    const { src, json } = source(
      "live",
      new DataError("the allocation map is still being read (12 %); it appears here when done", 503),
      new DataError("the allocation map is still being read (43 %); it appears here when done", 503),
      "meta",
    );
    const shown: [string, boolean][] = [];
    const started = vi.fn();
    void new AllocApi(src).firstMeta((m, final) => shown.push([m, final])).then((meta) => meta && started(meta));

    await vi.advanceTimersByTimeAsync(0);
    expect(json).toHaveBeenCalledTimes(1);
    expect(json).toHaveBeenCalledWith("alloc/meta", {});
    expect(shown).toEqual([["The allocation map is still being read (12 %); it appears here when done", false]]);
    await vi.advanceTimersByTimeAsync(RETRY_MS - 1);
    expect(json).toHaveBeenCalledTimes(1);
    await vi.advanceTimersByTimeAsync(1);
    expect(json).toHaveBeenCalledTimes(2);
    expect(shown[1]).toEqual(["The allocation map is still being read (43 %); it appears here when done", false]);
    expect(started).not.toHaveBeenCalled();
    await vi.advanceTimersByTimeAsync(RETRY_MS);
    expect(started).toHaveBeenCalledTimes(1);
    expect(started).toHaveBeenCalledWith(META);

    // Started: no more questions, nothing more shown.
    await vi.advanceTimersByTimeAsync(5 * RETRY_MS);
    expect(json).toHaveBeenCalledTimes(3);
    expect(started).toHaveBeenCalledTimes(1);
    expect(shown).toHaveLength(2);
  });

  it("keeps a 404's sentence and asks no more", async () => {
    const { src, json } = source("live", new DataError("the allocation map would not fit in memory", 404));
    const shown: [string, boolean][] = [];
    const meta = new AllocApi(src).firstMeta((m, final) => shown.push([m, final]));
    await vi.advanceTimersByTimeAsync(5 * RETRY_MS);
    expect(json).toHaveBeenCalledTimes(1);
    expect(shown).toEqual([["The allocation map would not fit in memory", true]]);
    await expect(meta).resolves.toBeNull();
  });

  it("leaves other failures to the caller, as before", async () => {
    const show = vi.fn();
    const broke = source("live", new DataError("the server broke", 500));
    await expect(new AllocApi(broke.src).firstMeta(show)).rejects.toThrow("the server broke");
    const gone = source("live", new DataError("The memlens server does not answer: is `memlens view` still running?"));
    await expect(new AllocApi(gone.src).firstMeta(show)).rejects.toThrow("does not answer");
    expect(show).not.toHaveBeenCalled();
    expect(broke.json).toHaveBeenCalledTimes(1);
  });

  it("reads a report's embedded answer", async () => {
    const { src, json } = source("report", "meta");
    await expect(new AllocApi(src).firstMeta(() => {})).resolves.toBe(META);
    expect(json).toHaveBeenCalledTimes(1);
  });
});
