/**
 * A fetch that waits out 429 (rate limited) and 503 (service unavailable)
 * answers and sends the request again, as the API asks: after `Retry-After`
 * (seconds or an HTTP date), or a growing pause when the header is missing.
 * Every attempt sends a clone of the same Request, so a submission keeps its
 * Idempotency-Key and can never create a second job.
 */

export interface RetryOptions {
  /** Attempts after the first; default 5. */
  maxRetries?: number;
  /** A Retry-After longer than this is not waited out: the 429/503 is returned. Default 60 s. */
  maxWaitMs?: number;
  /** Pause before retry n (1-based) when the answer has no Retry-After; default 1 s, 2 s, 4 s ... up to 30 s. */
  fallbackDelayMs?: (retry: number) => number;
  /** Injected in tests; default setTimeout. */
  sleep?: (ms: number, signal?: AbortSignal) => Promise<void>;
}

const RETRIED_STATUSES = new Set([429, 503]);

export function defaultFallbackDelayMs(retry: number): number {
  return Math.min(30_000, 1000 * 2 ** (retry - 1));
}

export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const timer = setTimeout(() => {
      signal?.removeEventListener("abort", onAbort);
      resolve();
    }, ms);
    const onAbort = (): void => {
      clearTimeout(timer);
      reject(signal?.reason);
    };
    signal?.addEventListener("abort", onAbort, { once: true });
  });
}

/** Milliseconds a Retry-After header asks for; null when it is absent or unreadable. */
export function retryAfterMs(value: string | null, now = Date.now()): number | null {
  if (value === null || value.trim() === "") return null;
  const text = value.trim();
  if (/^\d+$/.test(text)) return Number(text) * 1000;
  const date = Date.parse(text);
  return Number.isNaN(date) ? null : Math.max(0, date - now);
}

export function retryingFetch(inner: (request: Request) => Promise<Response>, options: RetryOptions = {}) {
  const maxRetries = options.maxRetries ?? 5;
  const maxWaitMs = options.maxWaitMs ?? 60_000;
  const fallback = options.fallbackDelayMs ?? defaultFallbackDelayMs;
  const wait = options.sleep ?? sleep;
  return async (request: Request): Promise<Response> => {
    for (let retry = 1; ; retry++) {
      const response = await inner(request.clone());
      if (!RETRIED_STATUSES.has(response.status) || retry > maxRetries) return response;
      const delay = retryAfterMs(response.headers.get("Retry-After")) ?? fallback(retry);
      if (delay > maxWaitMs) return response;
      await response.body?.cancel();
      await wait(delay, request.signal);
    }
  };
}
