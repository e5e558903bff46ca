/**
 * Job reads held until their job ends (GET /api/v1/jobs/:job_id with
 * `Prefer: wait=N`), kept in the account's Durable Object's memory: nothing
 * is stored, so a restart of the object simply drops them and the Worker
 * answers the job as it is (src/jobs/held-read.ts). Each waiter is released
 * by the job's end or by its own timer, whichever comes first, so a client
 * that went away leaves nothing behind past its timeout; the number held at
 * once is capped, and a read over the cap is answered without waiting.
 */

/** The longest a held read waits (the API's cap on `Prefer: wait`). */
export const MAX_WAIT_MS = 60_000;

/**
 * Held reads per account at once. The request window bounds them anyway (each
 * held read counted once, for at most MAX_WAIT_MS: 60 with the default plan);
 * this bounds the memory of a plan with a large window.
 */
export const MAX_WAITERS = 1000;

/** How a wait ended: the job ended, or the time ran out. */
export type WaitOutcome = "ended" | "timeout";

interface Waiter {
  resolve: (outcome: WaitOutcome) => void;
  timer: ReturnType<typeof setTimeout>;
}

export class JobWaiters {
  private readonly byJob = new Map<string, Set<Waiter>>();
  private count = 0;

  /**
   * Resolves when `wake(jobId)` is called or after `timeoutMs` (capped at
   * MAX_WAIT_MS); null, at once, when MAX_WAITERS are already held.
   */
  wait(jobId: string, timeoutMs: number): Promise<WaitOutcome> | null {
    if (this.count >= MAX_WAITERS) return null;
    return new Promise<WaitOutcome>((resolve) => {
      const waiters = this.byJob.get(jobId) ?? new Set<Waiter>();
      const waiter: Waiter = {
        resolve,
        timer: setTimeout(() => {
          this.remove(jobId, waiter);
          resolve("timeout");
        }, Math.max(0, Math.min(timeoutMs, MAX_WAIT_MS))),
      };
      waiters.add(waiter);
      this.byJob.set(jobId, waiters);
      this.count += 1;
    });
  }

  /** The job ended (or was deleted): every read held on it answers now. */
  wake(jobId: string): void {
    const waiters = this.byJob.get(jobId);
    if (!waiters) return;
    this.byJob.delete(jobId);
    this.count -= waiters.size;
    for (const waiter of waiters) {
      clearTimeout(waiter.timer);
      waiter.resolve("ended");
    }
  }

  /** Reads held on the job now (tests and operators). */
  waiting(jobId: string): number {
    return this.byJob.get(jobId)?.size ?? 0;
  }

  private remove(jobId: string, waiter: Waiter): void {
    const waiters = this.byJob.get(jobId);
    if (!waiters?.delete(waiter)) return;
    this.count -= 1;
    if (waiters.size === 0) this.byJob.delete(jobId);
  }
}
