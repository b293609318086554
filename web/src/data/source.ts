// Where the page's data comes from: the live server's JSON API (`memlens view`), or
// the data a report embedded in the page (`memlens report`, opened from file://).
// Both answer the same questions; the report only knows its precomputed answers.

import { DataError, fetchOk } from "./http";
import type {
  GrowthDoc,
  Meta,
  Metric,
  ReportData,
  SortStrategy,
  TimeNs,
  TimelineDoc,
  TreeResponse,
} from "./types";

export interface TreeQuery {
  by: string[];
  /** Times to return; empty means every time the source holds. */
  times: TimeNs[];
  metric: Metric;
  sort: SortStrategy;
}

export interface DataSource {
  /** `live` talks to a server; `report` reads embedded data. */
  readonly kind: "live" | "report";
  /** Whether other classifier lists than the default can be asked for. */
  readonly canRegroup: boolean;
  /** Whether trees can be asked for at any time, not only at snapshot times. */
  readonly canPickAnyTime: boolean;
  meta(): Promise<Meta>;
  timeline(points: number): Promise<TimelineDoc>;
  trees(query: TreeQuery): Promise<TreeResponse>;
  growth(by: string[], top: number): Promise<GrowthDoc>;
}

export { DataError } from "./http";

/** The live server. URLs are relative to the page, which lives under the token. */
export class ApiSource implements DataSource {
  readonly kind = "live";
  readonly canRegroup = true;
  readonly canPickAnyTime = true;

  constructor(private readonly base: URL) {}

  private async get<T>(path: string, params: Record<string, string> = {}): Promise<T> {
    const url = new URL(path, this.base);
    for (const [k, v] of Object.entries(params)) url.searchParams.set(k, v);
    return (await (await fetchOk(url)).json()) as T;
  }

  meta(): Promise<Meta> {
    return this.get("api/meta");
  }

  timeline(points: number): Promise<TimelineDoc> {
    return this.get("api/timeline", { points: String(points) });
  }

  trees(q: TreeQuery): Promise<TreeResponse> {
    return this.get("api/tree", {
      by: q.by.join(","),
      times: q.times.join(","),
      metric: q.metric,
      sort: q.sort,
    });
  }

  growth(by: string[], top: number): Promise<GrowthDoc> {
    return this.get("api/growth", { by: by.join(","), top: String(top) });
  }
}

/** The data a report embedded: trees of one classifier list at its snapshot times. */
export class EmbeddedSource implements DataSource {
  readonly kind = "report";
  readonly canRegroup = false;
  readonly canPickAnyTime = false;

  constructor(private readonly data: ReportData) {}

  async meta(): Promise<Meta> {
    return this.data.meta;
  }

  async timeline(): Promise<TimelineDoc> {
    return this.data.timeline;
  }

  async trees(q: TreeQuery): Promise<TreeResponse> {
    const by = q.by.join(",");
    const entry = this.data.trees.find(
      (t) => t.by === by && t.metric === q.metric && t.sort === q.sort,
    );
    if (!entry) {
      throw new DataError(
        `This report holds trees grouped by ${this.data.trees[0]?.by ?? "nothing"} only; run \`memlens view\` to group by ${by}.`,
      );
    }
    if (q.times.length === 0) return entry.response;
    const wanted = new Set(q.times);
    const doc = entry.response.doc;
    const trees = doc.trees.filter((t) => wanted.has(t.time_ns));
    if (trees.length < wanted.size) {
      throw new DataError("This report holds trees at its snapshot times only.");
    }
    return {
      ...entry.response,
      doc: { ...doc, times_ns: trees.map((t) => t.time_ns), trees },
    };
  }

  async growth(by: string[]): Promise<GrowthDoc> {
    const wanted = by.join(",");
    const doc = this.data.growth.find((g) => g.by === wanted);
    if (!doc) throw new DataError(`This report ranks suspects grouped by ${this.data.growth[0]?.by ?? "nothing"} only.`);
    return doc;
  }
}

/** The embedded data of a report page, or the live API next to the page. */
export function pickSource(doc: Document, location: Location): DataSource {
  const text = doc.getElementById("memlens-data")?.textContent?.trim() ?? "";
  if (text && text !== "null") return new EmbeddedSource(JSON.parse(text) as ReportData);
  return new ApiSource(new URL(".", location.href));
}
