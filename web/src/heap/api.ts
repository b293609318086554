// The heap lens's requests to `heap/…` (crates/memlens-server/src/heap/mod.rs) through
// the page's data source. A report holds the trees of one classifier list at its
// snapshot times (every metric and sort), asked for all at once; the trees of some
// times are picked out of them, and other groupings or times get one sentence.

import { DataError, type Source } from "../data/source";
import type {
  GrowthDoc,
  HeapMeta,
  Metric,
  SnapshotInfo,
  SortStrategy,
  StacksDoc,
  TimeNs,
  TimelineDoc,
  TreeResponse,
} from "../data/types";

/** A time window brushed on the timeline: `[from, to]` in ns since the process start. */
export type TimeWindowNs = readonly [TimeNs, TimeNs];

export interface TreeQuery {
  by: string[];
  /** Function-name prefixes for `closest-domain-site` (none when left out). */
  domain?: string[];
  /** Times to return; empty means every time the source holds. */
  times: TimeNs[];
  metric: Metric;
  sort: SortStrategy;
  /** The window growth and order are measured in (the whole run when left out). */
  window?: TimeWindowNs | null;
}

export class HeapApi {
  /** Whether other classifier lists than the default can be asked for. */
  readonly canRegroup: boolean;
  /** Whether trees can be asked for at any time, not only at snapshot times. */
  readonly canPickAnyTime: boolean;
  /** Whether the call stacks behind a node can be asked for (a report holds none). */
  readonly hasStacks: boolean;

  constructor(private readonly source: Source) {
    this.canRegroup = source.kind === "live";
    this.canPickAnyTime = source.kind === "live";
    this.hasStacks = source.kind === "live";
  }

  meta(): Promise<HeapMeta> {
    return this.source.json("heap/meta");
  }

  timeline(points: number): Promise<TimelineDoc> {
    return this.source.json("heap/timeline", { points });
  }

  async trees(q: TreeQuery): Promise<TreeResponse> {
    const by = q.by.join(",");
    if (this.source.kind === "live") {
      return this.source.json("heap/tree", {
        by,
        times: q.times.join(","),
        metric: q.metric,
        sort: q.sort,
        ...domainParam(q.domain ?? []),
        ...windowParams(q.window ?? null),
      });
    }
    let all: TreeResponse;
    try {
      all = await this.source.json("heap/tree", { by, times: "", metric: q.metric, sort: q.sort });
    } catch {
      const held = this.source.held("heap/tree")[0]?.by ?? "nothing";
      throw new DataError(`This report holds trees grouped by ${held} only; run \`memlens view\` to group by ${by}.`);
    }
    if (q.times.length === 0) return all;
    const wanted = new Set(q.times);
    const trees = all.doc.trees.filter((t) => wanted.has(t.time_ns));
    if (trees.length < wanted.size) throw new DataError("This report holds trees at its snapshot times only.");
    return { ...all, doc: { ...all.doc, times_ns: trees.map((t) => t.time_ns), trees } };
  }

  /** The heaviest call stacks of the node at `path` at time `time` (live sources only). */
  stacks(by: string[], domain: string[], path: readonly string[], time: TimeNs, top: number): Promise<StacksDoc> {
    if (!this.hasStacks) {
      return Promise.reject(new DataError("A report holds no call stacks; run `memlens view` to see them."));
    }
    return this.source.json("heap/stacks", { by: by.join(","), path: JSON.stringify(path), time, top, ...domainParam(domain) });
  }

  /** The snapshot times within `window` (live sources only: a report holds the run's). */
  snapshots(window: TimeWindowNs): Promise<SnapshotInfo[]> {
    return this.source.json("heap/snapshots", windowParams(window));
  }

  async growth(by: string[], top: number, domain: string[] = [], window: TimeWindowNs | null = null): Promise<GrowthDoc> {
    try {
      return await this.source.json("heap/growth", { by: by.join(","), top, ...domainParam(domain), ...windowParams(window) });
    } catch (e) {
      if (this.source.kind === "live") throw e;
      const held = this.source.held("heap/growth")[0]?.by ?? "nothing";
      throw new DataError(`This report ranks suspects grouped by ${held} only.`);
    }
  }
}

/** The `from`/`to` parameters of a window (none for the whole run). */
function windowParams(window: TimeWindowNs | null): { from?: number; to?: number } {
  return window ? { from: window[0], to: window[1] } : {};
}

/** The `domain` parameter: present only when there are prefixes (a report keys its
 * answers by their parameters, and holds none with a domain). */
function domainParam(domain: string[]): { domain?: string } {
  return domain.length > 0 ? { domain: domain.join(",") } : {};
}
