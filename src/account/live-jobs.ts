/**
 * The hot state of the account's jobs, in the account's Durable Object
 * (SQLite storage). D1 stays the durable record and is written at the
 * transitions only; what changes between them (progress, step, the last
 * engine report) lives here, and so does what a job read needs to answer
 * without D1:
 *
 * - an active job (queued or processing): a snapshot of its D1 row taken at
 *   acceptance, patched at every transition, plus the live progress;
 * - an ended job: a marker (so a late or stale write cannot revive it), and
 *   once someone has read it, its presented JSON (a finished job no longer
 *   changes, so the cache never goes stale);
 * - a deleted job: a tombstone, so a read that raced the delete cannot put
 *   the deleted job back in the cache.
 *
 * Ended and deleted rows are pruned beyond MAX_SETTLED_ROWS per account.
 */
import { ACTIVE_STATUSES, type Job, type JobStatus } from "../db/jobs.ts";

/** Ended and deleted jobs remembered per account (the oldest are forgotten first). */
export const MAX_SETTLED_ROWS = 1000;

type LiveState = "queued" | "processing" | "ended" | "deleted";

interface LiveRow extends Record<string, SqlStorageValue> {
  job_id: string;
  state: LiveState;
  progress: number;
  step: string;
  last_report_ms: number | null;
  updated_at: string;
  /** The Job (active) or null. */
  job_json: string | null;
  /** The presented JSON of an ended job, once read. */
  view_json: string | null;
  /** The CDN_URL the view was presented with (a changed CDN_URL is a miss). */
  view_cdn: string | null;
  settled_ms: number | null;
}

/** What a job read gets from the Durable Object. */
export type LiveJobView =
  | { kind: "active"; job: Job }
  | { kind: "finished"; json: string }
  | { kind: "unknown" };

export function createLiveJobsTable(sql: SqlStorage): void {
  sql.exec(`CREATE TABLE IF NOT EXISTS live_jobs (
    job_id TEXT PRIMARY KEY,
    state TEXT NOT NULL,
    progress INTEGER NOT NULL DEFAULT 0,
    step TEXT NOT NULL DEFAULT '',
    last_report_ms INTEGER,
    updated_at TEXT NOT NULL,
    job_json TEXT,
    view_json TEXT,
    view_cdn TEXT,
    settled_ms INTEGER
  )`);
  sql.exec(`CREATE INDEX IF NOT EXISTS live_jobs_settled ON live_jobs (settled_ms) WHERE settled_ms IS NOT NULL`);
}

function rowOf(sql: SqlStorage, jobId: string): LiveRow | null {
  return sql.exec<LiveRow>(`SELECT * FROM live_jobs WHERE job_id = ?`, jobId).toArray()[0] ?? null;
}

function isActive(row: LiveRow | null): row is LiveRow & { state: "queued" | "processing" } {
  return row !== null && (row.state === "queued" || row.state === "processing");
}

/**
 * Records an active job's D1 row: at acceptance, or to repair a Durable
 * Object that missed a transition. Ignored for a job that ended or was
 * deleted, and for a snapshot older than what is held.
 */
export function trackJob(sql: SqlStorage, job: Job): void {
  if (!ACTIVE_STATUSES.includes(job.status)) return;
  const held = rowOf(sql, job.id);
  if (held && !isActive(held)) return;
  if (held && held.updated_at > job.updatedAt) return;
  const progress = Math.max(held?.progress ?? 0, job.progress);
  const lastReportMs = job.lastReportAt ? Date.parse(job.lastReportAt) : null;
  sql.exec(
    `INSERT INTO live_jobs (job_id, state, progress, step, last_report_ms, updated_at, job_json)
     VALUES (?, ?, ?, ?, ?, ?, ?)
     ON CONFLICT (job_id) DO UPDATE SET state = excluded.state, progress = excluded.progress, step = excluded.step,
       last_report_ms = MAX(COALESCE(last_report_ms, 0), COALESCE(excluded.last_report_ms, 0)),
       updated_at = excluded.updated_at, job_json = excluded.job_json`,
    job.id,
    job.status,
    progress,
    job.step,
    lastReportMs,
    job.updatedAt,
    JSON.stringify(job),
  );
}

export interface Transition {
  status: "queued" | "processing";
  step: string;
  at: string;
  /** The transition counts as an engine report (the job's start). */
  report?: boolean;
  /** Back in line after the engine was stopped under the job (counts a restart). */
  restarted?: boolean;
}

/** queued <-> processing for an active job; false when the job is not active here. */
export function moveJob(sql: SqlStorage, jobId: string, transition: Transition): boolean {
  const held = rowOf(sql, jobId);
  if (!isActive(held)) return false;
  const job = JSON.parse(held.job_json ?? "null") as Job | null;
  if (!job) return false;
  const updated: Job = {
    ...job,
    status: transition.status,
    step: transition.step,
    updatedAt: transition.at,
    restarts: transition.restarted ? job.restarts + 1 : job.restarts,
    lastReportAt: transition.report ? transition.at : job.lastReportAt,
  };
  sql.exec(
    `UPDATE live_jobs SET state = ?, step = ?, updated_at = ?, job_json = ?,
       last_report_ms = CASE WHEN ? THEN ? ELSE last_report_ms END
     WHERE job_id = ?`,
    transition.status,
    transition.step,
    transition.at,
    JSON.stringify(updated),
    transition.report ? 1 : 0,
    Date.parse(transition.at),
    jobId,
  );
  return true;
}

/** The engine's probe: title and duration join the snapshot; false when not processing here. */
export function probeJob(sql: SqlStorage, jobId: string, title: string, durationSeconds: number, nowMs: number): boolean {
  const held = rowOf(sql, jobId);
  if (!held || held.state !== "processing") return false;
  const job = JSON.parse(held.job_json ?? "null") as Job | null;
  if (!job) return false;
  const at = new Date(nowMs).toISOString();
  const updated: Job = { ...job, title, sourceDurationSeconds: durationSeconds, updatedAt: at };
  sql.exec(
    `UPDATE live_jobs SET job_json = ?, updated_at = ?, last_report_ms = ? WHERE job_id = ?`,
    JSON.stringify(updated),
    at,
    nowMs,
    jobId,
  );
  return true;
}

export interface Report {
  progress?: number;
  step?: string;
}

/**
 * An engine report (progress, heartbeat, upload): progress never decreases.
 * False when the job is not processing here.
 */
export function recordReport(sql: SqlStorage, jobId: string, report: Report, nowMs: number): boolean {
  const held = rowOf(sql, jobId);
  if (!held || held.state !== "processing") return false;
  sql.exec(
    `UPDATE live_jobs SET progress = MAX(progress, ?), step = ?, last_report_ms = ?, updated_at = ? WHERE job_id = ?`,
    report.progress ?? 0,
    report.step ?? held.step,
    nowMs,
    new Date(nowMs).toISOString(),
    jobId,
  );
  return true;
}

/** When the engine last reported for a processing job here, or null. */
export function lastReportMs(sql: SqlStorage, jobId: string): number | null {
  const held = rowOf(sql, jobId);
  return held && held.state === "processing" ? held.last_report_ms : null;
}

function prune(sql: SqlStorage): void {
  sql.exec(
    `DELETE FROM live_jobs WHERE settled_ms IS NOT NULL AND job_id NOT IN
       (SELECT job_id FROM live_jobs WHERE settled_ms IS NOT NULL ORDER BY settled_ms DESC LIMIT ?)`,
    MAX_SETTLED_ROWS,
  );
}

/** The job reached an end state in D1: no more reports are taken for it. */
export function endJob(sql: SqlStorage, jobId: string, nowMs: number): void {
  const held = rowOf(sql, jobId);
  if (held && !isActive(held)) return;
  sql.exec(
    `INSERT INTO live_jobs (job_id, state, updated_at, settled_ms) VALUES (?, 'ended', ?, ?)
     ON CONFLICT (job_id) DO UPDATE SET state = 'ended', job_json = NULL, settled_ms = excluded.settled_ms`,
    jobId,
    new Date(nowMs).toISOString(),
    nowMs,
  );
  prune(sql);
}

/**
 * Keeps the presented JSON of a job D1 says has ended, for the next reads.
 * Never over a tombstone (the job was deleted since it was read).
 */
export function cacheFinished(sql: SqlStorage, jobId: string, cdnBase: string, json: string, nowMs: number): void {
  const held = rowOf(sql, jobId);
  if (held?.state === "deleted") return;
  sql.exec(
    `INSERT INTO live_jobs (job_id, state, updated_at, view_json, view_cdn, settled_ms) VALUES (?, 'ended', ?, ?, ?, ?)
     ON CONFLICT (job_id) DO UPDATE SET state = 'ended', job_json = NULL, view_json = excluded.view_json,
       view_cdn = excluded.view_cdn, settled_ms = COALESCE(settled_ms, excluded.settled_ms)`,
    jobId,
    new Date(nowMs).toISOString(),
    json,
    cdnBase,
    nowMs,
  );
  prune(sql);
}

/** The finished job's clips changed (a published clip edit): the cached view goes, the next read builds it from D1. */
export function dropFinishedView(sql: SqlStorage, jobId: string): void {
  sql.exec(`UPDATE live_jobs SET view_json = NULL, view_cdn = NULL WHERE job_id = ? AND state = 'ended'`, jobId);
}

/** The job is being deleted: forget its view, and refuse to cache it again. */
export function forgetJob(sql: SqlStorage, jobId: string, nowMs: number): void {
  sql.exec(
    `INSERT INTO live_jobs (job_id, state, updated_at, settled_ms) VALUES (?, 'deleted', ?, ?)
     ON CONFLICT (job_id) DO UPDATE SET state = 'deleted', job_json = NULL, view_json = NULL, view_cdn = NULL,
       settled_ms = excluded.settled_ms`,
    jobId,
    new Date(nowMs).toISOString(),
    nowMs,
  );
  prune(sql);
}

/** The active job with its live fields, from a row that holds one. */
function liveJobOf(held: LiveRow): Job | null {
  if (!isActive(held) || !held.job_json) return null;
  const job = JSON.parse(held.job_json) as Job;
  const lastReport = held.last_report_ms === null ? job.lastReportAt : new Date(held.last_report_ms).toISOString();
  return {
    ...job,
    status: held.state as JobStatus,
    progress: held.progress,
    step: held.step,
    lastReportAt: lastReport,
    updatedAt: held.updated_at,
  };
}

/** The job when it is processing here (what the engine's routes need), else null. */
export function processingJob(sql: SqlStorage, jobId: string): Job | null {
  const held = rowOf(sql, jobId);
  return held?.state === "processing" ? liveJobOf(held) : null;
}

/** The live jobs among `jobIds` that are active here (lists overlay them on their D1 rows). */
export function activeJobs(sql: SqlStorage, jobIds: readonly string[]): Job[] {
  const found: Job[] = [];
  for (const jobId of jobIds) {
    const held = rowOf(sql, jobId);
    const job = held === null ? null : liveJobOf(held);
    if (job) found.push(job);
  }
  return found;
}

/** Whether the job has ended (or was deleted) as far as this object knows. */
export function hasEnded(sql: SqlStorage, jobId: string): boolean {
  const state = rowOf(sql, jobId)?.state;
  return state === "ended" || state === "deleted";
}

/** What a job read can answer from here: the live job, a cached finished view, or nothing. */
export function viewJob(sql: SqlStorage, jobId: string, cdnBase: string): LiveJobView {
  const held = rowOf(sql, jobId);
  const active = held === null ? null : liveJobOf(held);
  if (active) return { kind: "active", job: active };
  if (held?.state === "ended" && held.view_json !== null && held.view_cdn === cdnBase) {
    return { kind: "finished", json: held.view_json };
  }
  return { kind: "unknown" };
}
