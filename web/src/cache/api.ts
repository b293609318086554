// The cache lens's requests to `cache/…` (crates/memlens-server/src/cache/mod.rs)
// through the page's data source. Every request but `sources` names its session
// (source and hierarchy), so answers never depend on what another tab asked.
//
// A report holds one session: its events for a prefix of the references in batches,
// the set contents at each batch's start and the statistics at evenly spaced
// positions. A batch request gets the embedded batch that holds its first reference
// (batches may overlap what the lens has; it keeps what it needs), a jump lands on the
// nearest earlier batch start, and statistics are the nearest earlier ones.

import { DataError, type Params, type Source } from "../data/source";
import { type Batch, type CacheState, decodeBatch, decodeState } from "./columns";
import type { OccupancyDoc, SessionDoc, SessionParams, SourcesDoc, StatsDoc } from "./types";

/** The query parameters that name a session. */
function sessionQuery(session: SessionParams): Record<string, string> {
  const q: Record<string, string> = { source: session.source };
  if (session.n !== null) q.n = String(session.n);
  if (session.levels) q.levels = session.levels;
  if (session.inclusion) q.inclusion = session.inclusion;
  if (session.twindow) q.twindow = session.twindow;
  if (session.tweights) q.tweights = session.tweights;
  return q;
}

/** Whether `held` names the session `q` names. */
function sameSession(held: Record<string, string>, q: Record<string, string>): boolean {
  return ["source", "n", "levels", "inclusion", "twindow", "tweights"].every((k) => held[k] === q[k]);
}

export class CacheApi {
  /** Whether other sources, sizes and hierarchies can be simulated (not in a report). */
  readonly canSimulate: boolean;

  constructor(private readonly source: Source) {
    this.canSimulate = source.kind === "live";
  }

  private params(session: SessionParams | null, extra: Params = {}): Params {
    return { ...(session ? sessionQuery(session) : {}), ...extra };
  }

  async sources(): Promise<SourcesDoc> {
    return this.source.json("cache/sources");
  }

  async session(s: SessionParams): Promise<SessionDoc> {
    try {
      return await this.source.json("cache/session", this.params(s));
    } catch (e) {
      if (this.canSimulate) throw e;
      throw new DataError("This report holds one source under one hierarchy; `memlens view` simulates the others.");
    }
  }

  /**
   * The references a report holds events for in session `s` (all of them live): the
   * end of its last embedded batch.
   */
  playable(s: SessionParams, references: number): number {
    if (this.canSimulate) return references;
    const q = sessionQuery(s);
    let end = 0;
    for (const held of this.source.held("cache/batch")) {
      if (sameSession(held, q)) end = Math.max(end, Number(held.start) + Number(held.count));
    }
    return Math.min(end, references);
  }

  /** The held answer of `route` in session `s` at the largest `name` at most `at`. */
  private nearestBefore(route: string, s: SessionParams, name: string, at: number): Record<string, string> | null {
    const q = sessionQuery(s);
    let best: Record<string, string> | null = null;
    for (const held of this.source.held(`cache/${route}`)) {
      const value = Number(held[name]);
      if (sameSession(held, q) && value <= at && (!best || value > Number(best[name]))) best = held;
    }
    return best;
  }

  async batch(s: SessionParams, start: number, count: number): Promise<Batch> {
    if (this.canSimulate) return decodeBatch(await this.source.bytes("cache/batch", this.params(s, { start, count })));
    const q = sessionQuery(s);
    const held = this.source
      .held("cache/batch")
      .find((b) => sameSession(b, q) && Number(b.start) <= start && start < Number(b.start) + Number(b.count));
    if (!held) {
      throw new DataError(
        `This report holds the first ${this.playable(s, Infinity).toLocaleString("en-US")} references; \`memlens view\` plays them all.`,
      );
    }
    return decodeBatch(await this.source.bytes("cache/batch", held));
  }

  async state(s: SessionParams, at: number): Promise<CacheState> {
    const held = this.canSimulate ? null : this.nearestBefore("state", s, "at", at);
    const params = held ?? this.params(s, { at });
    return decodeState(await this.source.bytes("cache/state", params));
  }

  async stats(s: SessionParams, at: number): Promise<StatsDoc> {
    const held = this.canSimulate ? null : this.nearestBefore("stats", s, "at", at);
    return this.source.json("cache/stats", held ?? this.params(s, { at }));
  }

  async occupancy(s: SessionParams, at: number): Promise<OccupancyDoc> {
    return this.source.json("cache/occupancy", this.params(s, { at }));
  }
}
