// Following a trace still being written (`memlens record --view`): the page asks
// `api/live` twice a second how far the server has read; after each new read it calls
// `changed` (the header's facts and the open lenses update), and it says in the header
// whether the program still runs, how much of the run is recorded and how fresh the
// view is, until the program has ended.

import type { Source } from "../data/source";
import type { LiveWire } from "../generated/viewer";
import { formatDuration } from "../format";

/** How often the page asks, ms. */
const POLL_MS = 500;

/** Follows the server's reads; `badge` shows the state. */
export function followLive(source: Source, badge: HTMLElement, changed: () => Promise<void>): void {
  let generation = 0;
  const show = (live: LiveWire) => {
    badge.dataset.running = live.running ? "1" : "0";
    badge.dataset.generation = String(live.generation);
    badge.dataset.recordedNs = String(live.recorded_ns);
    if (live.running) {
      const age = Math.max(0, (Date.now() - live.updated_unix_ms) / 1000);
      badge.textContent = `● recording · ${formatDuration(live.recorded_ns)} so far · updated ${age.toFixed(1)} s ago`;
      badge.title = `The view reads what the program recorded since its last read (the last read took ${live.read_ms} ms); it shows the run up to half a second before the latest event.`;
    } else {
      badge.textContent = `program ended · ${formatDuration(live.recorded_ns)} recorded`;
      badge.title = "The program has ended: this is its whole run.";
    }
  };
  const tick = async () => {
    let live: LiveWire;
    try {
      live = await source.json<LiveWire>("live");
    } catch {
      badge.textContent = "the viewer stopped answering";
      badge.dataset.running = "0";
      return;
    }
    if (live.generation !== generation) {
      generation = live.generation;
      try {
        await changed();
      } catch {
        // The next read brings the next chance.
      }
    }
    show(live);
    if (live.running) window.setTimeout(() => void tick(), POLL_MS);
  };
  void tick();
}
