/**
 * The retry policy of the Worker's Workers AI calls on the engine channel
 * (speech-to-text, text embeddings, translation): model errors, timeouts and answers of
 * the wrong shape are retried inside a time budget that ends before the
 * engine's own callback timeout (30 s), so the engine sees one answer per
 * request, never a duplicate model run caused by its own retry. A failure
 * no retry can cure (the REST API refusing the token, an unknown model: see
 * WorkersAiError.retryable) ends the attempts at once.
 */
import { isPermanentAiError } from "../ai/errors.ts";

export interface RetryPolicy {
  attempts: number;
  /** Wait before the second attempt; doubled for each further one. */
  baseDelayMs: number;
  attemptTimeoutMs: number;
  /** No attempt starts later than this after the first. */
  budgetMs: number;
}

export const DEFAULT_RETRY_POLICY: RetryPolicy = { attempts: 3, baseDelayMs: 500, attemptTimeoutMs: 15_000, budgetMs: 25_000 };

/** What `wrangler dev --local` (and miniflare) put in place of an AI binding throws on every call. */
export function isLocalPlaceholderError(err: unknown): boolean {
  return err instanceof Error && /needs to be run remotely/i.test(err.message);
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

export type RetryOutcome<T> = { ok: true; value: T } | { ok: false; local: boolean; failures: string[] };

/**
 * Runs `attempt` under the policy. Stops at once on the local placeholder's
 * error (`local: true`): retrying cannot help there.
 */
export async function retrying<T>(policy: RetryPolicy, attempt: (timeoutMs: number) => Promise<T>): Promise<RetryOutcome<T>> {
  const began = Date.now();
  const failures: string[] = [];
  for (let n = 1; n <= policy.attempts; n += 1) {
    if (n > 1) {
      const delay = policy.baseDelayMs * 2 ** (n - 2);
      if (Date.now() - began + delay > policy.budgetMs) break;
      await sleep(delay);
    }
    const timeoutMs = Math.min(policy.attemptTimeoutMs, Math.max(1, policy.budgetMs - (Date.now() - began)));
    try {
      return { ok: true, value: await attempt(timeoutMs) };
    } catch (err) {
      if (isLocalPlaceholderError(err)) return { ok: false, local: true, failures };
      failures.push(err instanceof Error ? err.message : String(err));
      if (isPermanentAiError(err)) break;
    }
  }
  return { ok: false, local: false, failures };
}
