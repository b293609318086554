// Waiting for the allocation map: `memlens view` opens at once and reads the map in the
// background (crates/memlens-server/src/pending.rs). Until it is read, every
// `api/alloc/…` request answers 503 and a sentence saying how far the reading is; when
// there will be no map, 404 and a sentence saying why. The lens asks again about once a
// second, showing each sentence, and starts with the first real answer.

/** Milliseconds between two questions while the map is being read. */
export const RETRY_MS = 1000;

/** Shows the server's sentence: `final` when the map will not come (404). */
export type ShowPending = (message: string, final: boolean) => void;

/** The sentence of a refused answer (`{"error": …}`), with its first letter capitalised. */
async function sentence(answer: Response): Promise<string> {
  let message = `The server answered ${answer.status}.`;
  try {
    const body = (await answer.json()) as { error?: string };
    if (body.error) message = body.error;
  } catch {
    // Not JSON: keep the status sentence.
  }
  return message.charAt(0).toUpperCase() + message.slice(1);
}

/**
 * Asks `ask` until its answer is not a 503, showing each 503's sentence. Resolves to
 * that answer (the caller reads it, or handles its failure as usual), or to null after
 * a 404, whose sentence stays shown.
 */
export async function whenReady(
  ask: () => Promise<Response>,
  show: ShowPending,
  sleep: (ms: number) => Promise<void> = (ms) => new Promise((done) => setTimeout(done, ms)),
): Promise<Response | null> {
  for (;;) {
    const answer = await ask();
    if (answer.status !== 503 && answer.status !== 404) return answer;
    show(await sentence(answer), answer.status === 404);
    if (answer.status === 404) return null;
    await sleep(RETRY_MS);
  }
}
