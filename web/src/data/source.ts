// Where every lens's data comes from: the live server's API (`memlens view`), or the
// answers a report embedded in the page (`memlens report`, opened from file://). A lens
// asks for a route — `meta` (the viewer's), `heap/tree`, `alloc/tile`, … — with query
// parameters, and reads the answer as JSON, bytes or a Blob. A report answers what it
// holds, under the key the server wrote (crates/memlens-server/src/lens_api.rs,
// `ReportRequest::key`), and says in one sentence what it does not; each lens's API
// client decides how to fall back.

import { DataError, fetchOk } from "./http";
import type { EmbeddedAnswer, ReportData } from "./types";

export { DataError } from "./http";

/** Query parameters; numbers are written as JavaScript prints them. */
export type Params = Record<string, string | number>;

export interface Source {
  /** `live` talks to a server; `report` reads embedded answers. */
  readonly kind: "live" | "report";
  /** The answer of `route` as JSON. */
  json<T>(route: string, params?: Params): Promise<T>;
  /** The answer of `route` as bytes (binary columns). */
  bytes(route: string, params?: Params): Promise<ArrayBuffer>;
  /** The answer of `route` as a Blob (images). */
  blob(route: string, params?: Params): Promise<Blob>;
  /**
   * The query parameters of every answer the source holds for `route`: a report's
   * embedded ones, for lenses that fall back to a near answer; none live, where any
   * question gets its own answer.
   */
  held(route: string): Record<string, string>[];
}

/** The query of `params` with its names sorted, as `application/x-www-form-urlencoded`. */
export function canonicalQuery(params: Params): string {
  const names = Object.keys(params).sort();
  return new URLSearchParams(names.map((k) => [k, String(params[k])])).toString();
}

/** The key of an answer: `route`, then `?` and the canonical query when there is one. */
export function answerKey(route: string, params: Params = {}): string {
  const query = canonicalQuery(params);
  return query ? `${route}?${query}` : route;
}

/** The route and parameters of an answer key. */
export function parseKey(key: string): { route: string; params: Record<string, string> } {
  const at = key.indexOf("?");
  if (at < 0) return { route: key, params: {} };
  return { route: key.slice(0, at), params: Object.fromEntries(new URLSearchParams(key.slice(at + 1))) };
}

/** The live server. URLs are relative to the page, which lives under the token. */
export class LiveSource implements Source {
  readonly kind = "live";

  constructor(private readonly base: URL) {}

  private get(route: string, params: Params = {}): Promise<Response> {
    const url = new URL(`api/${route}`, this.base);
    for (const [k, v] of Object.entries(params)) url.searchParams.set(k, String(v));
    return fetchOk(url);
  }

  async json<T>(route: string, params?: Params): Promise<T> {
    return (await (await this.get(route, params)).json()) as T;
  }

  async bytes(route: string, params?: Params): Promise<ArrayBuffer> {
    return (await this.get(route, params)).arrayBuffer();
  }

  async blob(route: string, params?: Params): Promise<Blob> {
    return (await this.get(route, params)).blob();
  }

  held(): Record<string, string>[] {
    return [];
  }
}

/** The answers a report embedded, by key; `meta` is the viewer's meta document. */
export class EmbeddedSource implements Source {
  readonly kind = "report";
  private readonly decoded = new Map<string, Uint8Array<ArrayBuffer>>();
  private readonly byRoute = new Map<string, Record<string, string>[]>();

  constructor(private readonly data: ReportData) {}

  private answer(route: string, params?: Params): EmbeddedAnswer {
    const key = answerKey(route, params);
    const found = this.data.answers[key];
    if (!found) throw new DataError("This report does not hold that view; `memlens view` of the trace shows it.");
    return found;
  }

  private raw(route: string, params?: Params): { type: string; bytes: Uint8Array<ArrayBuffer> } {
    const key = answerKey(route, params);
    const answer = this.answer(route, params);
    let bytes = this.decoded.get(key);
    if (!bytes) {
      bytes = answer.base64 !== undefined ? decodeBase64(answer.base64) : new TextEncoder().encode(JSON.stringify(answer.json));
      this.decoded.set(key, bytes);
    }
    return { type: answer.type, bytes };
  }

  async json<T>(route: string, params?: Params): Promise<T> {
    if (route === "meta") return this.data.meta as T;
    const answer = this.answer(route, params);
    if (answer.json === undefined) throw new DataError(`The report's answer of ${route} is not a JSON document.`);
    return answer.json as T;
  }

  async bytes(route: string, params?: Params): Promise<ArrayBuffer> {
    const { bytes } = this.raw(route, params);
    return bytes.slice().buffer;
  }

  async blob(route: string, params?: Params): Promise<Blob> {
    const { type, bytes } = this.raw(route, params);
    return new Blob([bytes], { type });
  }

  held(route: string): Record<string, string>[] {
    let list = this.byRoute.get(route);
    if (!list) {
      list = [];
      for (const key of Object.keys(this.data.answers)) {
        const parsed = parseKey(key);
        if (parsed.route === route) list.push(parsed.params);
      }
      this.byRoute.set(route, list);
    }
    return list;
  }
}

/** Standard base64 (with padding) to bytes. */
export function decodeBase64(text: string): Uint8Array<ArrayBuffer> {
  const binary = atob(text);
  const bytes = new Uint8Array(binary.length);
  for (let i = 0; i < binary.length; i++) bytes[i] = binary.charCodeAt(i);
  return bytes;
}

/** The embedded answers of a report page, or the live API next to the page. */
export function pickSource(doc: Document, location: Location): Source {
  const text = doc.getElementById("memlens-data")?.textContent?.trim() ?? "";
  if (text && text !== "null") return new EmbeddedSource(JSON.parse(text) as ReportData);
  return new LiveSource(new URL(".", location.href));
}
