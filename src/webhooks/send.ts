/**
 * One HTTP attempt at an endpoint: POST the signed body, 15 seconds at most,
 * no redirects followed (a 3xx counts as a failure: the receiver must give
 * its final URL), the response body discarded.
 */
import type { SignedHeaders } from "./signing.ts";

export const ATTEMPT_TIMEOUT_MS = 15_000;
export const USER_AGENT = "clipjobs-webhooks/1";

export type AttemptOutcome =
  | { kind: "succeeded"; statusCode: number; latencyMs: number }
  | { kind: "gone"; statusCode: 410; latencyMs: number }
  | { kind: "failed"; statusCode: number | null; error: string; latencyMs: number };

function describeError(err: unknown, timedOut: boolean): string {
  if (timedOut) return `No answer within ${ATTEMPT_TIMEOUT_MS / 1000} s.`;
  const message = err instanceof Error ? err.message : String(err);
  return `Connection failed: ${message}`.slice(0, 500);
}

export async function sendAttempt(url: string, headers: SignedHeaders, body: string, timeoutMs = ATTEMPT_TIMEOUT_MS): Promise<AttemptOutcome> {
  const started = Date.now();
  const controller = new AbortController();
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    controller.abort();
  }, timeoutMs);
  try {
    const response = await fetch(url, {
      method: "POST",
      headers: { ...headers, "Content-Type": "application/json", "User-Agent": USER_AGENT },
      body,
      redirect: "manual",
      signal: controller.signal,
    });
    // The body is never read: only the status matters, and it must not hold the connection.
    await response.body?.cancel().catch(() => undefined);
    const latencyMs = Date.now() - started;
    const statusCode = response.status;
    if (statusCode >= 200 && statusCode < 300) return { kind: "succeeded", statusCode, latencyMs };
    if (statusCode === 410) return { kind: "gone", statusCode, latencyMs };
    const error =
      statusCode >= 300 && statusCode < 400 ? `Redirect (${statusCode}) not followed.` : `Answered HTTP ${statusCode}.`;
    return { kind: "failed", statusCode, error, latencyMs };
  } catch (err) {
    return { kind: "failed", statusCode: null, error: describeError(err, timedOut), latencyMs: Date.now() - started };
  } finally {
    clearTimeout(timer);
  }
}
