// Choosing which window of a run the allocation map holds, when the whole run is too
// large for the memory the map may use (the server says so with `meta.window`, and
// its notes say which window it read): the window brushed in the heap lens's timeline
// (`w=FROM-TO` in the page's URL, ns) is offered, and `memlens view` reads it
// (`api/alloc/window`). A report holds one window and cannot read another.

import { h } from "../app/dom";
import { urlWindow } from "../app/url_state";
import { formatDuration } from "../format";
import type { AllocMeta } from "./api";

/**
 * What the notes offer under the window sentence: a button reading the heap lens's
 * brushed window (`read(from, to)`), or how to brush one; nothing when the map holds
 * the whole run or cannot read another window.
 */
export function windowChoice(meta: AllocMeta, canRead: boolean, read: (from: number, to: number) => void): HTMLElement[] {
  if (!meta.window || !canRead) return [];
  const brushed = urlWindow();
  if (!brushed) {
    return [h("p", { "data-testid": "alloc-window-hint" }, "Brush a window in the timeline of the Heap evolution tab to read it here instead.")];
  }
  const [from, to] = brushed;
  const button = h(
    "button",
    { type: "button", class: "alloc-window-read", "data-testid": "alloc-read-window" },
    `Read the heap timeline's window, ${formatDuration(from)} – ${formatDuration(to)}`,
  );
  button.addEventListener("click", () => read(from, to));
  return [h("p", {}, button)];
}
