/**
 * Credit bookkeeping on the `accounts` columns, always tied to one job:
 * remaining = plan.credits_per_period + credits_granted - credits_used - credits_reserved.
 * Each movement runs in one D1 batch (a transaction) together with the job
 * statement that guards it, so it happens at most once per job.
 */
import type { TimeRange } from "#contract";
import { claimReservation, confirmReservation, type JobStatus } from "./jobs.ts";

/** One credit per started minute of source video. */
export function creditsForDuration(durationSeconds: number): number {
  return Math.max(1, Math.ceil(durationSeconds / 60));
}

/**
 * Seconds of the source a job is charged for: its time_range's length inside
 * the source, or the whole source without one. 0 when the range
 * starts at or after the end of the source.
 */
export function chargeableSeconds(durationSeconds: number, range: TimeRange | null): number {
  if (!range) return durationSeconds;
  return Math.max(0, Math.min(range.end_seconds, durationSeconds) - range.start_seconds);
}

export type ReservationResult = { ok: true; credits: number } | { ok: false };

/**
 * Reserves `credits` for a processing job, once: a repeated call (duplicate
 * delivery, engine retry) finds the job already holding its reservation and
 * reports it without touching the account again. Refused when the account
 * cannot cover it; the balance never goes below zero.
 */
export async function reserveJobCredits(db: D1Database, jobId: string, credits: number): Promise<ReservationResult> {
  const addToAccount = db
    .prepare(
      `UPDATE accounts SET credits_reserved = credits_reserved + ?1
       WHERE id = (SELECT account_id FROM jobs WHERE id = ?2 AND credits_reserved = -?1)`,
    )
    .bind(credits, jobId);
  await db.batch([claimReservation(db, jobId, credits), addToAccount, confirmReservation(db, jobId, credits)]);
  const row = await db
    .prepare(`SELECT credits_reserved FROM jobs WHERE id = ? AND status = 'processing'`)
    .bind(jobId)
    .first<{ credits_reserved: number }>();
  return row && row.credits_reserved > 0 ? { ok: true, credits: row.credits_reserved } : { ok: false };
}

/**
 * Moves the job's reservation into `credits_used` (or charges `fallbackCharge`
 * when nothing was reserved). Must precede the job's guarded completion in the
 * same batch: it applies only while the job is still processing.
 */
export function chargeJobCredits(db: D1Database, jobId: string, fallbackCharge: number): D1PreparedStatement {
  return db
    .prepare(
      `UPDATE accounts SET
         credits_used = credits_used + (SELECT CASE WHEN credits_reserved > 0 THEN credits_reserved ELSE ?2 END FROM jobs WHERE id = ?1),
         credits_reserved = MAX(0, credits_reserved - (SELECT MAX(0, credits_reserved) FROM jobs WHERE id = ?1))
       WHERE id = (SELECT account_id FROM jobs WHERE id = ?1 AND status = 'processing')`,
    )
    .bind(jobId, fallbackCharge);
}

/**
 * Gives the job's reservation back to the account. Must precede the job's
 * guarded transition (failed/canceled) in the same batch: it applies only
 * while the job is still in one of `from`.
 */
export function releaseJobCredits(db: D1Database, jobId: string, from: readonly JobStatus[]): D1PreparedStatement {
  const placeholders = from.map((_, i) => `?${i + 2}`).join(", ");
  return db
    .prepare(
      `UPDATE accounts SET credits_reserved = MAX(0, credits_reserved - (SELECT MAX(0, credits_reserved) FROM jobs WHERE id = ?1))
       WHERE id = (SELECT account_id FROM jobs WHERE id = ?1 AND status IN (${placeholders}))`,
    )
    .bind(jobId, ...from);
}
