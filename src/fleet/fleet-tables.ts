/**
 * All SQL of the fleet's own state (SQLite storage of the FleetScheduler
 * Durable Object): the waiting line, the jobs holding an engine, the
 * instances still stopping, counters and the per-minute log operators see.
 * Every statement the scheduler runs per call is an indexed lookup or an
 * indexed range bounded by one account's jobs or by the capacity, never a
 * scan of the line.
 */
import type { LineEntry } from "./ranked-line.ts";

export interface WaitingRow extends Record<string, SqlStorageValue> {
  job_id: string;
  account_id: string;
  round: number;
  seq: number;
  since_ms: number;
}

export interface HoldingRow extends Record<string, SqlStorageValue> {
  job_id: string;
  account_id: string;
  round: number;
  granted_ms: number;
  /** 1 once an engine accepted the job. */
  started: number;
  /** 1 once a StartJob was sent for this grant (an instance may exist from then on). */
  attempted: number;
  /** 1 when the platform reported the instance's exit while the job still held it. */
  exited: number;
  /** The live dispatch chain: messages carrying another number are stale. 0: the admitting delivery. */
  dispatch: number;
  /** When the chain's next message is due; past due by DISPATCH_OVERDUE_MS it was lost. */
  due_ms: number;
  /** First start failure of the current run of failures (the start budget counts from here). */
  failing_since_ms: number | null;
  failures: number;
  /** When reconciling first saw D1 disagree with this grant. */
  suspect_ms: number | null;
}

const SCHEMA_VERSION = 2;

export function createFleetTables(sql: SqlStorage): void {
  sql.exec(`CREATE TABLE IF NOT EXISTS fleet_meta (key TEXT PRIMARY KEY, value INTEGER NOT NULL)`);
  const version = metaValue(sql, "schema") ?? 0;
  if (version < SCHEMA_VERSION) {
    // Version 1 (the first scheduler) kept `waiting` without rounds and `holding` without its chain;
    // its rows are carried over: waiting jobs keep their order (round 0), grants keep their state.
    const oldWaiting = tableExists(sql, "waiting") && !columnExists(sql, "waiting", "round");
    const oldHolding = tableExists(sql, "holding") && !columnExists(sql, "holding", "dispatch");
    if (oldWaiting) sql.exec(`ALTER TABLE waiting RENAME TO waiting_v1`);
    if (oldHolding) sql.exec(`ALTER TABLE holding RENAME TO holding_v1`);
    sql.exec(`DROP TABLE IF EXISTS served`);
    createCurrent(sql);
    if (oldWaiting) {
      sql.exec(`INSERT OR IGNORE INTO waiting (job_id, account_id, round, seq, since_ms) SELECT job_id, account_id, 0, seq, 0 FROM waiting_v1`);
      sql.exec(`DROP TABLE waiting_v1`);
    }
    if (oldHolding) {
      sql.exec(
        `INSERT OR IGNORE INTO holding (job_id, account_id, round, granted_ms, started, attempted, dispatch, due_ms)
         SELECT job_id, account_id, 0, granted_ms, started, started, 1, granted_ms FROM holding_v1`,
      );
      sql.exec(`DROP TABLE holding_v1`);
    }
    setMeta(sql, "schema", SCHEMA_VERSION);
  }
}

function createCurrent(sql: SqlStorage): void {
  sql.exec(`CREATE TABLE IF NOT EXISTS waiting (
    job_id TEXT PRIMARY KEY, account_id TEXT NOT NULL, round INTEGER NOT NULL, seq INTEGER NOT NULL, since_ms INTEGER NOT NULL)`);
  sql.exec(`CREATE INDEX IF NOT EXISTS waiting_line ON waiting (round, seq)`);
  sql.exec(`CREATE INDEX IF NOT EXISTS waiting_account ON waiting (account_id, round)`);
  sql.exec(`CREATE INDEX IF NOT EXISTS waiting_since ON waiting (since_ms)`);
  sql.exec(`CREATE TABLE IF NOT EXISTS holding (
    job_id TEXT PRIMARY KEY, account_id TEXT NOT NULL, round INTEGER NOT NULL, granted_ms INTEGER NOT NULL,
    started INTEGER NOT NULL DEFAULT 0, attempted INTEGER NOT NULL DEFAULT 0, exited INTEGER NOT NULL DEFAULT 0,
    dispatch INTEGER NOT NULL DEFAULT 0, due_ms INTEGER NOT NULL DEFAULT 0,
    failing_since_ms INTEGER, failures INTEGER NOT NULL DEFAULT 0, suspect_ms INTEGER)`);
  sql.exec(`CREATE INDEX IF NOT EXISTS holding_account ON holding (account_id)`);
  sql.exec(`CREATE TABLE IF NOT EXISTS stopping (job_id TEXT PRIMARY KEY, since_ms INTEGER NOT NULL, until_ms INTEGER NOT NULL)`);
  sql.exec(`CREATE INDEX IF NOT EXISTS stopping_until ON stopping (until_ms)`);
  // Each account's latest round, kept past its job's end (fair-rule.ts: an account joins at most once a round).
  sql.exec(`CREATE TABLE IF NOT EXISTS account_rounds (account_id TEXT PRIMARY KEY, round INTEGER NOT NULL)`);
  sql.exec(`CREATE TABLE IF NOT EXISTS fleet_minutes (minute INTEGER NOT NULL, kind TEXT NOT NULL, n INTEGER NOT NULL, PRIMARY KEY (minute, kind))`);
}

function tableExists(sql: SqlStorage, name: string): boolean {
  return sql.exec(`SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?`, name).toArray().length > 0;
}

function columnExists(sql: SqlStorage, table: string, column: string): boolean {
  return sql.exec<{ name: string }>(`SELECT name FROM pragma_table_info(?)`, table).toArray().some((c) => c.name === column);
}

export function metaValue(sql: SqlStorage, key: string): number | null {
  return sql.exec<{ value: number }>(`SELECT value FROM fleet_meta WHERE key = ?`, key).toArray()[0]?.value ?? null;
}

export function setMeta(sql: SqlStorage, key: string, value: number): void {
  sql.exec(`INSERT INTO fleet_meta (key, value) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value`, key, value);
}

export function nextCounter(sql: SqlStorage, key: "seq" | "head"): number {
  return sql
    .exec<{ value: number }>(
      `INSERT INTO fleet_meta (key, value) VALUES (?, 1) ON CONFLICT (key) DO UPDATE SET value = value + 1 RETURNING value`,
      key,
    )
    .one().value;
}

// ---- the line ----

export function lineEntries(sql: SqlStorage): LineEntry[] {
  return sql.exec<{ job_id: string; round: number; seq: number }>(`SELECT job_id, round, seq FROM waiting`).toArray().map((r) => ({ jobId: r.job_id, round: r.round, seq: r.seq }));
}

export function firstWaiting(sql: SqlStorage): WaitingRow | null {
  return sql.exec<WaitingRow>(`SELECT job_id, account_id, round, seq, since_ms FROM waiting ORDER BY round, seq LIMIT 1`).toArray()[0] ?? null;
}

export function findWaiting(sql: SqlStorage, jobId: string): WaitingRow | null {
  return sql.exec<WaitingRow>(`SELECT job_id, account_id, round, seq, since_ms FROM waiting WHERE job_id = ?`, jobId).toArray()[0] ?? null;
}

export function addWaiting(sql: SqlStorage, row: WaitingRow): void {
  sql.exec(`INSERT OR IGNORE INTO waiting (job_id, account_id, round, seq, since_ms) VALUES (?, ?, ?, ?, ?)`, row.job_id, row.account_id, row.round, row.seq, row.since_ms);
}

export function removeWaiting(sql: SqlStorage, jobId: string): boolean {
  return sql.exec(`DELETE FROM waiting WHERE job_id = ? RETURNING job_id`, jobId).toArray().length > 0;
}

export function waitingCount(sql: SqlStorage): number {
  return sql.exec<{ n: number }>(`SELECT COUNT(*) AS n FROM waiting`).one().n;
}

/** Round of the account's latest waiting job (index waiting_account), or null. */
export function lastWaitingRound(sql: SqlStorage, accountId: string): number | null {
  return sql.exec<{ r: number | null }>(`SELECT MAX(round) AS r FROM waiting WHERE account_id = ?`, accountId).one().r;
}

/** The round of the account's latest job to join, waiting or not (null: none since it fell behind the current round). */
export function lastJoinedRound(sql: SqlStorage, accountId: string): number | null {
  return sql.exec<{ round: number }>(`SELECT round FROM account_rounds WHERE account_id = ?`, accountId).toArray()[0]?.round ?? null;
}

export function rememberJoinedRound(sql: SqlStorage, accountId: string, round: number): void {
  sql.exec(
    `INSERT INTO account_rounds (account_id, round) VALUES (?, ?) ON CONFLICT (account_id) DO UPDATE SET round = MAX(round, excluded.round)`,
    accountId,
    round,
  );
}

/** Rounds behind the current one no longer matter (an account joins at the current round or later anyway). */
export function pruneJoinedRounds(sql: SqlStorage, currentRound: number): void {
  sql.exec(`DELETE FROM account_rounds WHERE round < ?`, currentRound);
}

export function oldestWaitingSince(sql: SqlStorage): number | null {
  return sql.exec<{ since_ms: number }>(`SELECT since_ms FROM waiting ORDER BY since_ms LIMIT 1`).toArray()[0]?.since_ms ?? null;
}

// ---- grants ----

export function findHolding(sql: SqlStorage, jobId: string): HoldingRow | null {
  return sql.exec<HoldingRow>(`SELECT * FROM holding WHERE job_id = ?`, jobId).toArray()[0] ?? null;
}

export function holdingRows(sql: SqlStorage): HoldingRow[] {
  return sql.exec<HoldingRow>(`SELECT * FROM holding ORDER BY granted_ms`).toArray();
}

export function holdingCount(sql: SqlStorage): number {
  return sql.exec<{ n: number }>(`SELECT COUNT(*) AS n FROM holding`).one().n;
}

/** Engines the account holds (index holding_account; at most the capacity). */
export function heldBy(sql: SqlStorage, accountId: string): number {
  return sql.exec<{ n: number }>(`SELECT COUNT(*) AS n FROM holding WHERE account_id = ?`, accountId).one().n;
}

export function addHolding(sql: SqlStorage, row: Pick<HoldingRow, "job_id" | "account_id" | "round" | "granted_ms" | "dispatch" | "due_ms">): void {
  sql.exec(
    `INSERT OR IGNORE INTO holding (job_id, account_id, round, granted_ms, dispatch, due_ms) VALUES (?, ?, ?, ?, ?, ?)`,
    row.job_id,
    row.account_id,
    row.round,
    row.granted_ms,
    row.dispatch,
    row.due_ms,
  );
}

export function removeHolding(sql: SqlStorage, jobId: string): HoldingRow | null {
  return sql.exec<HoldingRow>(`DELETE FROM holding WHERE job_id = ? RETURNING *`, jobId).toArray()[0] ?? null;
}

export function updateHolding(sql: SqlStorage, jobId: string, set: Partial<Omit<HoldingRow, "job_id" | "account_id">>): void {
  const keys = Object.keys(set) as (keyof typeof set)[];
  if (keys.length === 0) return;
  sql.exec(`UPDATE holding SET ${keys.map((k) => `${k} = ?`).join(", ")} WHERE job_id = ?`, ...keys.map((k) => set[k] ?? null), jobId);
}

export function startedCount(sql: SqlStorage): number {
  return sql.exec<{ n: number }>(`SELECT COUNT(*) AS n FROM holding WHERE started = 1`).one().n;
}

// ---- instances still stopping ----

export function addStopping(sql: SqlStorage, jobId: string, sinceMs: number, untilMs: number): void {
  sql.exec(
    `INSERT INTO stopping (job_id, since_ms, until_ms) VALUES (?, ?, ?)
     ON CONFLICT (job_id) DO UPDATE SET until_ms = MAX(until_ms, excluded.until_ms)`,
    jobId,
    sinceMs,
    untilMs,
  );
}

export function removeStopping(sql: SqlStorage, jobId: string): boolean {
  return sql.exec(`DELETE FROM stopping WHERE job_id = ? RETURNING job_id`, jobId).toArray().length > 0;
}

/** Drops stopping instances whose grace is over (the platform has killed them by then); returns how many. */
export function expireStopping(sql: SqlStorage, nowMs: number): number {
  return sql.exec(`DELETE FROM stopping WHERE until_ms <= ? RETURNING job_id`, nowMs).toArray().length;
}

export function stoppingCount(sql: SqlStorage): number {
  return sql.exec<{ n: number }>(`SELECT COUNT(*) AS n FROM stopping`).one().n;
}

/**
 * Stopping instances whose exit has not been reported since `sinceBeforeMs`,
 * oldest first, leaving out jobs that hold an engine again (their instance,
 * of the same name, may be the new one).
 */
export function overdueStopping(sql: SqlStorage, sinceBeforeMs: number, limit: number): string[] {
  return sql
    .exec<{ job_id: string }>(
      `SELECT job_id FROM stopping WHERE since_ms <= ? AND job_id NOT IN (SELECT job_id FROM holding) ORDER BY since_ms LIMIT ?`,
      sinceBeforeMs,
      limit,
    )
    .toArray()
    .map((r) => r.job_id);
}

export function nextStoppingExpiry(sql: SqlStorage): number | null {
  return sql.exec<{ until_ms: number }>(`SELECT until_ms FROM stopping ORDER BY until_ms LIMIT 1`).toArray()[0]?.until_ms ?? null;
}

// ---- what operators see ----

export function countMinute(sql: SqlStorage, nowMs: number, kind: string, n = 1): void {
  sql.exec(
    `INSERT INTO fleet_minutes (minute, kind, n) VALUES (?, ?, ?) ON CONFLICT (minute, kind) DO UPDATE SET n = n + excluded.n`,
    Math.floor(nowMs / 60_000),
    kind,
    n,
  );
}

export function minuteCounts(sql: SqlStorage, sinceMs: number): { minute: number; kind: string; n: number }[] {
  return sql.exec<{ minute: number; kind: string; n: number }>(`SELECT minute, kind, n FROM fleet_minutes WHERE minute >= ?`, Math.floor(sinceMs / 60_000)).toArray();
}

export function pruneMinutes(sql: SqlStorage, beforeMs: number): void {
  sql.exec(`DELETE FROM fleet_minutes WHERE minute < ?`, Math.floor(beforeMs / 60_000));
}
