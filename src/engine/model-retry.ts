/**
 * The retry rule of the Worker's Workers AI calls on the engine channel
 * (speech-to-text in whisper.ts, translation in translate.ts): each attempt
 * gets its own timeout, attempts are spaced (0.5 s, then doubled), and no
 * attempt starts past a time budget that ends before the engine's own 30 s
 * callback timeout, so the engine sees one answer per call, never a
 * duplicate model run caused by its own retry. Plain TypeScript (no Workers
 * types), so the engine's Node suites can run the modules built on it.
 */

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

/**
 * Runs `attempt` (given its timeout) under the policy, timed from `began`.
 * An error `fatal` recognises ends the retries at once (it throws what it
 * returns); otherwise the last failure's message goes to `exhausted`.
 */
export async function withModelRetries<T>(
  policy: RetryPolicy,
  attempt: (timeoutMs: number) => Promise<T>,
  fatal: (err: unknown) => Error | null,
  exhausted: (count: number, lastMessage: string) => Error,
  began = Date.now(),
): Promise<T> {
  const failures: string[] = [];
  for (let n = 1; n <= policy.attempts; n += 1) {
    if (n > 1) {
      const delay = policy.baseDelayMs * 2 ** (n - 2);
      if (Date.now() - began + delay > policy.budgetMs) break;
      await sleep(delay);
    }
    const timeoutMs = Math.min(policy.attemptTimeoutMs, Math.max(1, policy.budgetMs - (Date.now() - began)));
    try {
      return await attempt(timeoutMs);
    } catch (err) {
      const stop = fatal(err);
      if (stop) throw stop;
      failures.push(err instanceof Error ? err.message : String(err));
    }
  }
  throw exhausted(failures.length, failures.at(-1) ?? "no attempt fit the time budget");
}

/** Races a model call against its own timeout (a binding that ignores its signal still cannot hang the caller). */
export async function withTimeout<T>(run: (signal: AbortSignal) => Promise<T>, timeoutMs: number): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer within ${timeoutMs} ms`)), timeoutMs);
  });
  try {
    return await Promise.race([run(AbortSignal.timeout(timeoutMs)), timeout]);
  } finally {
    if (timer !== undefined) clearTimeout(timer);
  }
}
