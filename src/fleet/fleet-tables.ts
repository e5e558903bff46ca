/**
 * All SQL of the fleet's own state (SQLite storage of the FleetScheduler
 * Durable Object): jobs waiting for an engine, jobs holding one, and when
 * each account was last served.
 */
export interface WaitingRow extends Record<string, SqlStorageValue> {
  job_id: string;
  account_id: string;
  seq: number;
}

export interface HoldingRow extends Record<string, SqlStorageValue> {
  job_id: string;
  account_id: string;
  granted_ms: number;
  /** 1 once an engine accepted the job. */
  started: number;
}

export function createFleetTables(sql: SqlStorage): void {
  sql.exec(`CREATE TABLE IF NOT EXISTS waiting (
    job_id TEXT PRIMARY KEY, account_id TEXT NOT NULL, seq INTEGER NOT NULL)`);
  sql.exec(`CREATE TABLE IF NOT EXISTS holding (
    job_id TEXT PRIMARY KEY, account_id TEXT NOT NULL, granted_ms INTEGER NOT NULL, started INTEGER NOT NULL DEFAULT 0)`);
  sql.exec(`CREATE TABLE IF NOT EXISTS served (account_id TEXT PRIMARY KEY, turn INTEGER NOT NULL)`);
  sql.exec(`CREATE TABLE IF NOT EXISTS fleet_meta (key TEXT PRIMARY KEY, value INTEGER NOT NULL)`);
}

export function nextCounter(sql: SqlStorage, key: "seq" | "turn"): number {
  const row = sql
    .exec<{ value: number }>(
      `INSERT INTO fleet_meta (key, value) VALUES (?, 1)
       ON CONFLICT (key) DO UPDATE SET value = value + 1 RETURNING value`,
      key,
    )
    .one();
  return row.value;
}

export function waitingRows(sql: SqlStorage): WaitingRow[] {
  return sql.exec<WaitingRow>(`SELECT job_id, account_id, seq FROM waiting ORDER BY seq`).toArray();
}

export function holdingRows(sql: SqlStorage): HoldingRow[] {
  return sql.exec<HoldingRow>(`SELECT job_id, account_id, granted_ms, started FROM holding ORDER BY granted_ms`).toArray();
}

export function holdingCount(sql: SqlStorage): number {
  return sql.exec<{ n: number }>(`SELECT COUNT(*) AS n FROM holding`).one().n;
}

export function findHolding(sql: SqlStorage, jobId: string): HoldingRow | null {
  return sql.exec<HoldingRow>(`SELECT job_id, account_id, granted_ms, started FROM holding WHERE job_id = ?`, jobId).toArray()[0] ?? null;
}

export function isWaiting(sql: SqlStorage, jobId: string): boolean {
  return sql.exec(`SELECT 1 FROM waiting WHERE job_id = ?`, jobId).toArray().length > 0;
}

export function addWaiting(sql: SqlStorage, jobId: string, accountId: string, seq: number): void {
  sql.exec(`INSERT OR IGNORE INTO waiting (job_id, account_id, seq) VALUES (?, ?, ?)`, jobId, accountId, seq);
}

/** Puts the job first in line (it already waited its turn once). */
export function addWaitingAtHead(sql: SqlStorage, jobId: string, accountId: string): void {
  const first = sql.exec<{ seq: number | null }>(`SELECT MIN(seq) AS seq FROM waiting`).one().seq ?? 1;
  addWaiting(sql, jobId, accountId, first - 1);
}

/** Moves a waiting job to holding (one engine granted to it). */
export function grant(sql: SqlStorage, row: { job_id: string; account_id: string }, nowMs: number, turn: number): void {
  sql.exec(`DELETE FROM waiting WHERE job_id = ?`, row.job_id);
  sql.exec(`INSERT OR IGNORE INTO holding (job_id, account_id, granted_ms, started) VALUES (?, ?, ?, 0)`, row.job_id, row.account_id, nowMs);
  sql.exec(
    `INSERT INTO served (account_id, turn) VALUES (?, ?) ON CONFLICT (account_id) DO UPDATE SET turn = excluded.turn`,
    row.account_id,
    turn,
  );
}

export function markStarted(sql: SqlStorage, jobId: string): boolean {
  return sql.exec(`UPDATE holding SET started = 1 WHERE job_id = ? RETURNING job_id`, jobId).toArray().length > 0;
}

/** Removes the job from the fleet entirely; true if it held an engine. */
export function forget(sql: SqlStorage, jobId: string): boolean {
  sql.exec(`DELETE FROM waiting WHERE job_id = ?`, jobId);
  return sql.exec(`DELETE FROM holding WHERE job_id = ? RETURNING job_id`, jobId).toArray().length > 0;
}

/** Gives a granted job's engine back and puts the job at the head of its account's waiting line. */
export function ungrant(sql: SqlStorage, jobId: string): boolean {
  const held = findHolding(sql, jobId);
  if (!held) return false;
  sql.exec(`DELETE FROM holding WHERE job_id = ?`, jobId);
  addWaitingAtHead(sql, jobId, held.account_id);
  return true;
}

export function runningPerAccount(sql: SqlStorage): Map<string, number> {
  const rows = sql.exec<{ account_id: string; n: number }>(`SELECT account_id, COUNT(*) AS n FROM holding GROUP BY account_id`).toArray();
  return new Map(rows.map((r) => [r.account_id, r.n]));
}

export function lastServed(sql: SqlStorage): Map<string, number> {
  const rows = sql.exec<{ account_id: string; turn: number }>(`SELECT account_id, turn FROM served`).toArray();
  return new Map(rows.map((r) => [r.account_id, r.turn]));
}

/** Drops the turn record of accounts with nothing waiting or running (keeps the table small). */
export function pruneServed(sql: SqlStorage): void {
  sql.exec(`DELETE FROM served WHERE account_id NOT IN (SELECT account_id FROM waiting UNION SELECT account_id FROM holding)`);
}
