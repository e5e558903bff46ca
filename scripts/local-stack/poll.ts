/** Waiting with a deadline instead of fixed sleeps. */

export function delay(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

export interface PollOptions {
  timeoutMs: number;
  intervalMs?: number;
  /** Named in the timeout error, e.g. "job job_x to finish". */
  description: string;
}

/**
 * Calls `check` until it returns a value other than undefined, or throws once
 * the deadline passes. The last error `check` threw (if any) is kept in the
 * timeout message, so a failing wait says what it last saw.
 */
export async function pollUntil<T>(check: () => Promise<T | undefined>, options: PollOptions): Promise<T> {
  const deadline = Date.now() + options.timeoutMs;
  const interval = options.intervalMs ?? 500;
  let lastError: unknown;
  for (;;) {
    try {
      const value = await check();
      if (value !== undefined) return value;
      lastError = undefined;
    } catch (error) {
      if (error instanceof PollAborted) throw error;
      lastError = error;
    }
    if (Date.now() >= deadline) {
      const cause = lastError instanceof Error ? `: ${lastError.message}` : "";
      throw new Error(`Timed out after ${Math.round(options.timeoutMs / 1000)} s waiting for ${options.description}${cause}`);
    }
    await delay(Math.min(interval, Math.max(0, deadline - Date.now())));
  }
}

/** Resolves once GET `url` answers 200, or rejects when `alive()` turns false or the deadline passes. */
export async function waitForHttpOk(url: string, timeoutMs: number, alive: () => boolean, name: string): Promise<Response> {
  return pollUntil(
    async () => {
      if (!alive()) throw new StackProcessExited(name);
      try {
        const response = await fetch(url, { signal: AbortSignal.timeout(3000) });
        if (response.ok) return response;
        await response.body?.cancel();
      } catch {
        // Not listening yet.
      }
      return undefined;
    },
    { timeoutMs, intervalMs: 300, description: `${name} at ${url}` },
  );
}

/** Thrown from a poll check to stop waiting at once (waiting longer cannot help). */
export class PollAborted extends Error {}

export class StackProcessExited extends PollAborted {
  constructor(name: string) {
    super(`${name} exited before it became ready`);
    this.name = "StackProcessExited";
  }
}
