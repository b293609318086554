// The cache lens's requests to `api/cache/…`, relative to the page (which lives under
// the viewer's token). Every request but `sources` names its session (source and
// hierarchy), so answers never depend on what another tab asked.

import { fetchOk } from "../data/http";
import { type Batch, type CacheState, decodeBatch, decodeState } from "./columns";
import type { OccupancyDoc, SessionDoc, SessionParams, SourcesDoc, StatsDoc } from "./types";

export class CacheApi {
  constructor(private readonly base: URL) {}

  private url(route: string, session: SessionParams | null, extra: Record<string, string | number> = {}): URL {
    const url = new URL(`api/cache/${route}`, this.base);
    if (session) {
      url.searchParams.set("source", session.source);
      if (session.n !== null) url.searchParams.set("n", String(session.n));
      if (session.levels) url.searchParams.set("levels", session.levels);
      if (session.inclusion) url.searchParams.set("inclusion", session.inclusion);
    }
    for (const [k, v] of Object.entries(extra)) url.searchParams.set(k, String(v));
    return url;
  }

  async sources(): Promise<SourcesDoc> {
    return (await (await fetchOk(this.url("sources", null))).json()) as SourcesDoc;
  }

  async session(s: SessionParams): Promise<SessionDoc> {
    return (await (await fetchOk(this.url("session", s))).json()) as SessionDoc;
  }

  async batch(s: SessionParams, start: number, count: number): Promise<Batch> {
    return decodeBatch(await (await fetchOk(this.url("batch", s, { start, count }))).arrayBuffer());
  }

  async state(s: SessionParams, at: number): Promise<CacheState> {
    return decodeState(await (await fetchOk(this.url("state", s, { at }))).arrayBuffer());
  }

  async stats(s: SessionParams, at: number): Promise<StatsDoc> {
    return (await (await fetchOk(this.url("stats", s, { at }))).json()) as StatsDoc;
  }

  async occupancy(s: SessionParams, at: number): Promise<OccupancyDoc> {
    return (await (await fetchOk(this.url("occupancy", s, { at }))).json()) as OccupancyDoc;
  }
}
