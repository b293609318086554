// The page's cache of memory trees: per grouping, metric and sort strategy, the tree
// at each time fetched so far, the heap totals at every time of the series, and its
// first-level groups over those times (the stacked chart's layers), and with a base run
// the base's values of each tree's nodes.
// Concurrent requests for the same trees are made once.

import type { HeapApi, TimeWindowNs } from "./api";
import type { HeapPoint, Metric, SortStrategy, TimeNs, TreeNode } from "../data/types";
import type { LayerWire } from "../generated/viewer";
import { BaseTree } from "./change_colors";

/** The first-level groups at the series' times. */
export interface Layers {
  times: TimeNs[];
  layers: LayerWire[];
}

/** What a memory tree depends on besides its time. */
export interface Combo {
  by: string[];
  /** Function-name prefixes for `closest-domain-site` (empty: none). */
  domain: string[];
  metric: Metric;
  sort: SortStrategy;
  /** The brushed window (`null`: the whole run): growth and order are measured in it. */
  window: TimeWindowNs | null;
}

export function comboKey(c: Combo): string {
  return `${c.by.join(",")}|${c.domain.join(",")}|${c.metric}|${c.sort}|${c.window?.join("-") ?? ""}`;
}

export class TreeStore {
  private readonly trees = new Map<string, TreeNode>();
  private readonly totals = new Map<string, Map<TimeNs, HeapPoint>>();
  private readonly pending = new Map<string, Promise<void>>();
  private readonly layers = new Map<string, Layers>();
  private readonly bases = new Map<string, BaseTree>();

  constructor(private readonly source: HeapApi) {}

  get(combo: Combo, time: TimeNs): TreeNode | undefined {
    return this.trees.get(`${comboKey(combo)}@${time}`);
  }

  /** Forgets every tree (the model changed: a followed trace grew). */
  clear(): void {
    for (const map of [this.trees, this.totals, this.layers, this.bases]) map.clear();
  }

  /** The base run's values of the tree at `time` (with a base run). */
  baseOf(combo: Combo, time: TimeNs): BaseTree | undefined {
    return this.bases.get(`${comboKey(combo)}@${time}`);
  }

  /** The heap at every time of the series, as far as known. */
  totalsOf(combo: Combo): Map<TimeNs, HeapPoint> {
    return this.totals.get(comboKey(combo)) ?? new Map();
  }

  /** The first-level groups over the series' times, once any tree was loaded. */
  layersOf(combo: Combo): Layers | undefined {
    return this.layers.get(comboKey(combo));
  }

  /** The times of `times` whose trees are not loaded or loading. */
  missing(combo: Combo, times: TimeNs[]): TimeNs[] {
    const key = comboKey(combo);
    return times.filter((t) => !this.trees.has(`${key}@${t}`) && !this.pending.has(`${key}@${t}`));
  }

  /** Loads the trees of `times`; with `all`, asks for every time of the series at once. */
  async load(combo: Combo, times: TimeNs[], all = false): Promise<void> {
    const key = comboKey(combo);
    const wanted = this.missing(combo, times);
    const waits = times.map((t) => this.pending.get(`${key}@${t}`)).filter((p): p is Promise<void> => !!p);
    if (wanted.length > 0) {
      const request = this.source
        .trees({ ...combo, times: all ? [] : wanted })
        .then((response) => {
          for (const tree of response.doc.trees) this.trees.set(`${key}@${tree.time_ns}`, tree.root);
          for (const base of response.base ?? []) this.bases.set(`${key}@${base.time_ns}`, new BaseTree(base));
          const totals = this.totals.get(key) ?? new Map<TimeNs, HeapPoint>();
          for (const point of response.totals) totals.set(point.time_ns, point);
          this.totals.set(key, totals);
          this.layers.set(key, { times: response.totals.map((p) => p.time_ns), layers: response.layers ?? [] });
        })
        .finally(() => {
          for (const t of wanted) this.pending.delete(`${key}@${t}`);
        });
      for (const t of wanted) this.pending.set(`${key}@${t}`, request);
      waits.push(request);
    }
    await Promise.all(waits);
  }
}
