/** The account's active-job slots (queued or processing jobs), in DO SQLite storage. */
interface SlotRow extends Record<string, SqlStorageValue> {
  job_id: string;
}

export function createActiveSlotsTable(sql: SqlStorage): void {
  sql.exec(`CREATE TABLE IF NOT EXISTS active_jobs (job_id TEXT PRIMARY KEY, acquired_at INTEGER NOT NULL)`);
}

export type AcquireResult = { ok: true } | { ok: false; activeJobId: string };

/** Takes a slot for the job; taking it again for the same job succeeds (retries are safe). */
export function acquireSlot(sql: SqlStorage, jobId: string, maxActive: number, nowMs: number): AcquireResult {
  const held = sql.exec<SlotRow>(`SELECT job_id FROM active_jobs ORDER BY acquired_at, job_id`).toArray();
  if (held.some((slot) => slot.job_id === jobId)) return { ok: true };
  const first = held[0];
  if (first && held.length >= maxActive) return { ok: false, activeJobId: first.job_id };
  sql.exec(`INSERT INTO active_jobs (job_id, acquired_at) VALUES (?, ?)`, jobId, nowMs);
  return { ok: true };
}

export function releaseSlot(sql: SqlStorage, jobId: string): void {
  sql.exec(`DELETE FROM active_jobs WHERE job_id = ?`, jobId);
}

export function activeJobs(sql: SqlStorage): string[] {
  return sql.exec<SlotRow>(`SELECT job_id FROM active_jobs ORDER BY acquired_at, job_id`).toArray().map((slot) => slot.job_id);
}

export interface HeldSlot {
  jobId: string;
  acquiredAtMs: number;
}

export function heldSlots(sql: SqlStorage): HeldSlot[] {
  return sql
    .exec<{ job_id: string; acquired_at: number }>(`SELECT job_id, acquired_at FROM active_jobs ORDER BY acquired_at, job_id`)
    .toArray()
    .map((row) => ({ jobId: row.job_id, acquiredAtMs: row.acquired_at }));
}
