// The cache lens's JSON documents, generated from the server's `cache/wire.rs` (see
// ../generated/README.md), under the names the lens uses; and what the page asks for.

import type {
  CountsWire,
  LevelWire,
  OccupancyWire,
  RegionWire,
  SessionWire,
  SourcesWire,
  SourceWire,
  StatsWire,
} from "../generated/cache";

export type SourceInfo = SourceWire;
export type SourcesDoc = SourcesWire;
export type LevelInfo = LevelWire;
export type RegionInfo = RegionWire;
export type SessionDoc = SessionWire;
export type Counts = CountsWire;
export type StatsDoc = StatsWire;
export type OccupancyDoc = OccupancyWire;

/** What the page asks the server for: a source under a hierarchy. */
export interface SessionParams {
  source: string;
  n: number | null;
  /** `NAME:SIZE:WAYS:LINE:POLICY,…`, or empty for the source's default. */
  levels: string;
  inclusion: string;
  /** The temperature window (`twindow`), or empty for the engine's standard one. */
  twindow?: string;
  /** Per-level `HIT:MISS,…` temperature weights (`tweights`), or empty for the standard ones. */
  tweights?: string;
}
