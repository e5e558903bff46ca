/**
 * The plan's storage limit for kept sources (docs/editing.md "The source
 * stays for edits"): a completed upload job records the bytes of the source
 * it keeps, and an account's kept-source bytes are the sum over its jobs
 * whose keeping period has not passed. When keeping one more source takes
 * the sum over the plan's max_kept_source_bytes, the account's oldest kept
 * sources are released first; never the source being kept, nor one with an
 * edit queued or rendering (those alone may keep the account over).
 */
import { uploadState } from "./stub.ts";

/** Records the kept source's size on its job (a job whose source is not kept is left alone). */
export async function recordKeptSourceBytes(db: D1Database, jobId: string, bytes: number): Promise<void> {
  await db.prepare(`UPDATE jobs SET kept_source_bytes = ?2 WHERE id = ?1 AND source_kept_until IS NOT NULL`).bind(jobId, bytes).run();
}

/** The account's kept-source bytes now. */
export async function keptSourceBytes(db: D1Database, accountId: string, nowMs: number = Date.now()): Promise<number> {
  const row = await db
    .prepare(`SELECT COALESCE(SUM(kept_source_bytes), 0) AS bytes FROM jobs WHERE account_id = ?1 AND kept_source_bytes IS NOT NULL AND source_kept_until > ?2`)
    .bind(accountId, new Date(nowMs).toISOString())
    .first<{ bytes: number }>();
  return row?.bytes ?? 0;
}

/**
 * Releases what takes the account over its plan's limit now that `keepingJobId`
 * keeps its source. One statement picks and marks the sources (their keeping
 * period ends now, so an edit answers 410 source_expired): the held ones count
 * first, then the others newest first, and every unheld one past the limit in
 * that order goes. Then each released upload is deleted, as its expiry alarm
 * would (best effort: if its object cannot be reached, that alarm still does).
 */
export async function releaseOverLimit(env: Env, accountId: string, keepingJobId: string, nowMs: number = Date.now()): Promise<string[]> {
  const { results } = await env.DB.prepare(
    `WITH kept AS (
       SELECT j.id, j.rowid AS seq, j.kept_source_bytes AS bytes, j.source_kept_until,
         (j.id = ?2 OR EXISTS (SELECT 1 FROM clip_edits e WHERE e.job_id = j.id AND e.status IN ('queued', 'rendering'))) AS held
       FROM jobs j
       WHERE j.account_id = ?1 AND j.kept_source_bytes IS NOT NULL AND j.source_kept_until > ?3
     ),
     ranked AS (
       SELECT id, held, SUM(bytes) OVER (ORDER BY held DESC, source_kept_until DESC, seq DESC ROWS UNBOUNDED PRECEDING) AS running
       FROM kept
     )
     UPDATE jobs SET source_kept_until = ?3
     WHERE id IN (
       SELECT id FROM ranked
       WHERE held = 0 AND running > (SELECT p.max_kept_source_bytes FROM accounts a JOIN plans p ON p.name = a.plan WHERE a.id = ?1)
     )
     RETURNING id, upload_id`,
  )
    .bind(accountId, keepingJobId, new Date(nowMs).toISOString())
    .all<{ id: string; upload_id: string | null }>();
  for (const { id, upload_id: uploadId } of results) {
    if (uploadId === null) continue;
    try {
      await uploadState(env, uploadId).release(id);
    } catch (err) {
      console.error(`releasing the kept source ${uploadId} of job ${id} over the plan's limit failed`, err);
    }
  }
  return results.map((r) => r.id);
}
