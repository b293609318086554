// Waiting for the allocation map: `memlens view` opens at once and reads the map in the
// background (crates/memlens-server/src/pending.rs). Until it is read, every
// `api/alloc/…` request answers 503 and a sentence saying how far the reading is; when
// there will be no map, 404 and a sentence saying why. The lens asks again about once a
// second, showing each sentence, and starts with the first real answer.

import { DataError } from "../data/source";

/** Milliseconds between two questions while the map is being read. */
export const RETRY_MS = 1000;

/** Shows the server's sentence: `final` when the map will not come (404). */
export type ShowPending = (message: string, final: boolean) => void;

/**
 * Asks `ask` until it does not fail with a 503, showing each 503's sentence. Resolves to
 * its answer, or to null after a 404, whose sentence stays shown; any other failure is
 * the caller's, as before.
 */
export async function whenReady<T>(
  ask: () => Promise<T>,
  show: ShowPending,
  sleep: (ms: number) => Promise<void> = (ms) => new Promise((done) => setTimeout(done, ms)),
): Promise<T | null> {
  for (;;) {
    try {
      return await ask();
    } catch (e) {
      if (!(e instanceof DataError) || (e.status !== 503 && e.status !== 404)) throw e;
      show(e.message.charAt(0).toUpperCase() + e.message.slice(1), e.status === 404);
      if (e.status === 404) return null;
    }
    await sleep(RETRY_MS);
  }
}
