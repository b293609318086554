// Registers the heap-evolution lens with the page's lens registry. The lens reads its
// own meta document (`heap/meta`), once per data source (and again after each read of a
// followed trace), for its view and for the run's key numbers in the page's header.

import { type Fact, registerLens } from "../app/lenses";
import type { Source } from "../data/source";
import type { HeapMeta } from "../data/types";
import { formatBytes, formatDuration } from "../format";
import { HeapApi } from "./api";
import { HeapLens } from "./lens";

const opened = new WeakMap<Source, { api: HeapApi; meta: Promise<HeapMeta> }>();

function heapOf(source: Source): { api: HeapApi; meta: Promise<HeapMeta> } {
  let found = opened.get(source);
  if (!found) {
    const api = new HeapApi(source);
    found = { api, meta: api.meta() };
    opened.set(source, found);
  }
  return found;
}

registerLens({
  id: "heap",
  mount: async (el, { source }) => {
    const { api, meta } = heapOf(source);
    const lens = await HeapLens.mount(el, api, await meta);
    return {
      // A followed trace grew: read its meta again and update in place.
      refresh: async () => {
        await lens.refresh(await heapOf(source).meta);
      },
    };
  },
  reread: (source) => {
    opened.delete(source);
  },
  facts: async ({ source }): Promise<Fact[]> => {
    const meta = await heapOf(source).meta;
    // A trace without allocations has no figures: zeros would read as measurements.
    if (meta.stats.allocations === 0) return [];
    return [
      { label: "Run", value: formatDuration(meta.run.end_ns - meta.run.start_ns) },
      { label: "Peak", value: formatBytes(meta.stats.peak_bytes) },
      { label: "Allocations", value: meta.stats.allocations.toLocaleString("en-US") },
      { label: "Never freed", value: formatBytes(meta.stats.live_at_exit_bytes) },
    ];
  },
});
