// The view's state in the page's URL, so a copied URL opens the same view: the hash
// holds `key=value` pairs (`lens=heap&by=site,thread&t=…&drill=[…]`), each part of the
// page reading its own keys at start and replacing them as the user changes the view.
// The hash never reaches the server (the token lives in the path), and works in a
// report opened from `file://`.

/** The pairs of the page's hash. */
export function readUrlState(): URLSearchParams {
  return new URLSearchParams(window.location.hash.replace(/^#/, ""));
}

/** The time window the heap lens brushed (`w=FROM-TO`, ns), when the URL holds a non-empty one. */
export function urlWindow(): [number, number] | null {
  const m = /^(\d+)-(\d+)$/.exec(readUrlState().get("w") ?? "");
  if (!m) return null;
  const [from, to] = [Number(m[1]), Number(m[2])];
  return from < to ? [from, to] : null;
}

/** Sets (or, for `null`, removes) some pairs of the hash without a history entry. */
export function writeUrlState(patch: Record<string, string | null>): void {
  const state = readUrlState();
  for (const [key, value] of Object.entries(patch)) {
    if (value === null) state.delete(key);
    else state.set(key, value);
  }
  const hash = state.toString();
  const url = `${window.location.pathname}${window.location.search}${hash ? `#${hash}` : ""}`;
  window.history.replaceState(window.history.state, "", url);
}
