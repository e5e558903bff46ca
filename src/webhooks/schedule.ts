/**
 * When to try a delivery again: the Standard Webhooks example schedule
 * (immediately, 5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 10 h), continued with
 * 10-hour gaps until about three days have passed since the first attempt.
 * Each gap gets +-10 % jitter so endpoints that fail together do not get
 * retried in lock step.
 */

/** Gap after failed attempt n+1 (index n): 13 attempts spread over about 77.6 hours before jitter. */
export const RETRY_DELAYS_SECONDS: readonly number[] = [
  5, 5 * 60, 30 * 60, 2 * 3600, 5 * 3600, 10 * 3600, 10 * 3600, 10 * 3600, 10 * 3600, 10 * 3600, 10 * 3600, 10 * 3600,
];
export const MAX_ATTEMPTS = RETRY_DELAYS_SECONDS.length + 1;

/** An endpoint that has failed without a single success for this long is disabled and flagged. */
export const FAILING_DISABLE_SECONDS = 3 * 24 * 3600;

export const JITTER = 0.1;

/**
 * WEBHOOK_RETRY_SCALE multiplies every gap and the disable window: 1 in
 * production, e.g. 0.001 in end-to-end tests so the schedule runs in seconds.
 */
export function retryScale(env: Pick<Env, "WEBHOOK_RETRY_SCALE">): number {
  const value = Number(env.WEBHOOK_RETRY_SCALE ?? "1");
  return Number.isFinite(value) && value > 0 ? value : 1;
}

/**
 * Seconds to wait after failed attempt `attempt` (1-based) before the next,
 * or null when that was the last. `random` is in [0, 1).
 */
export function retryDelaySeconds(attempt: number, scale: number, random: number = Math.random()): number | null {
  const base = RETRY_DELAYS_SECONDS[attempt - 1];
  if (base === undefined) return null;
  const jittered = base * (1 - JITTER + 2 * JITTER * random) * scale;
  return Math.round(jittered);
}

/** Whether an endpoint failing since `failingSince` has now failed long enough to be disabled. */
export function failedTooLong(failingSince: string, now: Date, scale: number): boolean {
  return now.getTime() - Date.parse(failingSince) >= FAILING_DISABLE_SECONDS * scale * 1000;
}
