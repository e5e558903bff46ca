/** Per-job silence deadlines of the account, in DO SQLite storage; the DO alarm enforces them. */
interface DeadlineRow extends Record<string, SqlStorageValue> {
  job_id: string;
  deadline_ms: number;
}

export function createWatchdogTable(sql: SqlStorage): void {
  sql.exec(`CREATE TABLE IF NOT EXISTS watchdog (job_id TEXT PRIMARY KEY, deadline_ms INTEGER NOT NULL)`);
}

export function setDeadline(sql: SqlStorage, jobId: string, deadlineMs: number): void {
  sql.exec(
    `INSERT INTO watchdog (job_id, deadline_ms) VALUES (?, ?)
     ON CONFLICT (job_id) DO UPDATE SET deadline_ms = excluded.deadline_ms`,
    jobId,
    deadlineMs,
  );
}

export function clearDeadline(sql: SqlStorage, jobId: string): void {
  sql.exec(`DELETE FROM watchdog WHERE job_id = ?`, jobId);
}

export function dueJobs(sql: SqlStorage, nowMs: number): string[] {
  return sql
    .exec<DeadlineRow>(`SELECT job_id, deadline_ms FROM watchdog WHERE deadline_ms <= ? ORDER BY deadline_ms`, nowMs)
    .toArray()
    .map((row) => row.job_id);
}

export function earliestDeadline(sql: SqlStorage): number | null {
  const row = sql.exec<{ deadline_ms: number | null }>(`SELECT MIN(deadline_ms) AS deadline_ms FROM watchdog`).one();
  return row.deadline_ms;
}

export function deadlineOf(sql: SqlStorage, jobId: string): number | null {
  const rows = sql.exec<DeadlineRow>(`SELECT job_id, deadline_ms FROM watchdog WHERE job_id = ?`, jobId).toArray();
  return rows[0]?.deadline_ms ?? null;
}
