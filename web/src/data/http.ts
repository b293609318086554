// One GET against the memlens server, shared by every lens's API client: no caching,
// and every failure turned into a DataError whose message is one sentence for the
// page (the server's own `{"error": …}` sentence when it sent one).

/** A failure the page shows as it is: one sentence for the user, with the server's status when it answered. */
export class DataError extends Error {
  constructor(
    message: string,
    readonly status?: number,
  ) {
    super(message);
  }
}

/** Fetches `url`; resolves only for a 2xx answer. */
export async function fetchOk(url: URL | string): Promise<Response> {
  let response: Response;
  try {
    response = await fetch(url, { cache: "no-store" });
  } catch {
    throw new DataError("The memlens server does not answer: is `memlens view` still running?");
  }
  if (!response.ok) {
    let message = `The server answered ${response.status}.`;
    try {
      const body = (await response.json()) as { error?: string };
      if (body.error) message = body.error;
    } catch {
      // Not JSON: keep the status sentence.
    }
    throw new DataError(message, response.status);
  }
  return response;
}
