/**
 * A completed upload job's source is kept for clip edits (docs/editing.md
 * "The source stays for edits"): free plan 7 days, paid plans 30 days from
 * completion. The period is fixed once, in D1 (jobs.source_kept_until), by
 * whichever comes first: the job's settling or the upload's own alarm.
 */

/** The job's keep-until time in epoch ms, fixed now when it is not yet; null when the job is not a completed one. */
export async function sourceKeptUntil(db: D1Database, jobId: string, nowMs: number = Date.now()): Promise<number | null> {
  const row = await db
    .prepare(
      `UPDATE jobs SET source_kept_until = COALESCE(source_kept_until,
         strftime('%Y-%m-%dT%H:%M:%fZ', ?2 / 1000.0, 'unixepoch',
           '+' || (CASE (SELECT plan FROM accounts WHERE id = jobs.account_id) WHEN 'free' THEN 7 ELSE 30 END) || ' days'))
       WHERE id = ?1 AND status = 'completed' RETURNING source_kept_until`,
    )
    .bind(jobId, nowMs)
    .first<{ source_kept_until: string }>();
  return row ? Date.parse(row.source_kept_until) : null;
}

/** The keep-until time as stored (null: not kept), without fixing it. */
export async function storedKeptUntil(db: D1Database, jobId: string): Promise<number | null> {
  const row = await db.prepare(`SELECT source_kept_until FROM jobs WHERE id = ?`).bind(jobId).first<{ source_kept_until: string | null }>();
  return row?.source_kept_until ? Date.parse(row.source_kept_until) : null;
}
