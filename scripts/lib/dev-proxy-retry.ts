/**
 * `wrangler dev` answers through a proxy Worker that forwards each request to
 * the Worker under development. When that forward fails on the connection (a
 * reload, or, with no reload in the Worker's log, the first POST after a burst
 * of requests on a heavily loaded machine), the proxy sends GET and HEAD again
 * itself, but answers any other method
 * `503 text/plain` "Your worker restarted mid-request. Please try sending the
 * request again." The Worker never answered such a request, so the local
 * stack's clients (the demo, the admin command, the end-to-end tests) do what
 * the proxy asks, a few times, and every other answer passes through as it is.
 * A deployed Worker has no such proxy; this never matches its answers.
 */
const PROXY_RESTART_TEXT = "Your worker restarted mid-request";
const ATTEMPTS = 3;
const PAUSE_MS = 250;

function fromDevProxy(response: Response, text: string): boolean {
  return response.status === 503 && (response.headers.get("content-type") ?? "").startsWith("text/plain") && text.startsWith(PROXY_RESTART_TEXT);
}

/** fetch, with the body read as text, sending the request again while `wrangler dev`'s proxy asks for it. `init.body` must be re-sendable (a string). */
export async function fetchThroughDevProxy(url: string, init: RequestInit & { body?: string }): Promise<{ response: Response; text: string }> {
  for (let attempt = 1; ; attempt++) {
    const response = await fetch(url, init);
    const text = await response.text();
    if (attempt >= ATTEMPTS || !fromDevProxy(response, text)) return { response, text };
    await new Promise((resolve) => setTimeout(resolve, PAUSE_MS * attempt));
  }
}
