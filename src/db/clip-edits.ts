/**
 * Every SQL statement on `clip_edits`, and the credit and clip-row movements
 * an edit makes (docs/editing.md). Each movement is guarded by the edit's
 * status in the same D1 batch as the status change, so it happens at most
 * once per edit.
 */
import type { ClipConfig, ClipEdit } from "#contract";
import type { StoredCorrection } from "./clips.ts";

export type EditStatus = "queued" | "rendering" | "published" | "failed";
export type EditKind = "edit" | "add";

export interface ClipEditRow {
  id: string;
  jobId: string;
  accountId: string;
  index: number;
  version: number;
  kind: EditKind;
  status: EditStatus;
  requested: Record<string, unknown>;
  clipEdit: ClipEdit;
  config: ClipConfig;
  overrides: Record<string, unknown>;
  corrections: StoredCorrection[];
  creditsReserved: number;
  errorCode: string | null;
  errorMessage: string | null;
  eventId: string | null;
  createdAt: string;
  updatedAt: string;
  startedAt: string | null;
}

interface Row {
  id: string;
  job_id: string;
  account_id: string;
  idx: number;
  version: number;
  kind: string;
  status: string;
  requested_json: string;
  clip_edit_json: string;
  config_json: string;
  overrides_json: string;
  corrections_json: string;
  credits_reserved: number;
  error_code: string | null;
  error_message: string | null;
  event_id: string | null;
  created_at: string;
  updated_at: string;
  started_at: string | null;
}

/** Every JSON column is written here from validated values. */
function toEdit(row: Row): ClipEditRow {
  return {
    id: row.id,
    jobId: row.job_id,
    accountId: row.account_id,
    index: row.idx,
    version: row.version,
    kind: row.kind as EditKind,
    status: row.status as EditStatus,
    requested: JSON.parse(row.requested_json) as Record<string, unknown>,
    clipEdit: JSON.parse(row.clip_edit_json) as ClipEdit,
    config: JSON.parse(row.config_json) as ClipConfig,
    overrides: JSON.parse(row.overrides_json) as Record<string, unknown>,
    corrections: JSON.parse(row.corrections_json) as StoredCorrection[],
    creditsReserved: row.credits_reserved,
    errorCode: row.error_code,
    errorMessage: row.error_message,
    eventId: row.event_id,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
    startedAt: row.started_at,
  };
}

/**
 * The new edit, queued, with its credits reserved on the account in the same
 * batch: the insert happens only while the account can cover them, and the
 * pending-edit index refuses a second pending edit of the clip (a constraint
 * error the caller turns into clip_edit_in_progress).
 */
export function insertEditStatements(db: D1Database, edit: ClipEditRow): D1PreparedStatement[] {
  const insert = db
    .prepare(
      `INSERT INTO clip_edits (id, job_id, account_id, idx, version, kind, status, requested_json, clip_edit_json, config_json,
         overrides_json, corrections_json, credits_reserved, created_at, updated_at)
       SELECT ?1, ?2, ?3, ?4, ?5, ?6, 'queued', ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?13
       WHERE (SELECT p.credits_per_period + a.credits_granted - a.credits_used - a.credits_reserved
              FROM accounts a JOIN plans p ON p.name = a.plan WHERE a.id = ?3) >= ?12`,
    )
    .bind(
      edit.id,
      edit.jobId,
      edit.accountId,
      edit.index,
      edit.version,
      edit.kind,
      JSON.stringify(edit.requested),
      JSON.stringify(edit.clipEdit),
      JSON.stringify(edit.config),
      JSON.stringify(edit.overrides),
      JSON.stringify(edit.corrections),
      edit.creditsReserved,
      edit.createdAt,
    );
  const reserve = db
    .prepare(`UPDATE accounts SET credits_reserved = credits_reserved + ?2 WHERE id = ?1 AND EXISTS (SELECT 1 FROM clip_edits WHERE id = ?3)`)
    .bind(edit.accountId, edit.creditsReserved, edit.id);
  return [insert, reserve];
}

export async function findEdit(db: D1Database, editId: string): Promise<ClipEditRow | null> {
  const row = await db.prepare(`SELECT * FROM clip_edits WHERE id = ?`).bind(editId).first<Row>();
  return row ? toEdit(row) : null;
}

/** The clip's latest edit that is not published (queued, rendering or failed), unless a later one was published. */
export async function openEditOfClip(db: D1Database, jobId: string, index: number): Promise<ClipEditRow | null> {
  const row = await db
    .prepare(`SELECT * FROM clip_edits WHERE job_id = ? AND idx = ? ORDER BY created_at DESC, rowid DESC LIMIT 1`)
    .bind(jobId, index)
    .first<Row>();
  return row && row.status !== "published" ? toEdit(row) : null;
}

/** The next free index of a job: after its clips and its pending new clips. */
export async function nextClipIndex(db: D1Database, jobId: string): Promise<number> {
  const row = await db
    .prepare(
      `SELECT MAX(m) AS top FROM (
         SELECT MAX(idx) AS m FROM clips WHERE job_id = ?1
         UNION ALL SELECT MAX(idx) AS m FROM clip_edits WHERE job_id = ?1 AND kind = 'add' AND status IN ('queued', 'rendering'))`,
    )
    .bind(jobId)
    .first<{ top: number | null }>();
  return row?.top === null || row?.top === undefined ? 0 : row.top + 1;
}

/** queued -> rendering, only when no other edit of the job renders (edits of one job run one after another). */
export async function markRendering(db: D1Database, editId: string, now: string): Promise<boolean> {
  const result = await db
    .prepare(
      `UPDATE clip_edits SET status = 'rendering', started_at = ?2, updated_at = ?2
       WHERE id = ?1 AND status = 'queued'
         AND NOT EXISTS (SELECT 1 FROM clip_edits o WHERE o.job_id = clip_edits.job_id AND o.status = 'rendering')`,
    )
    .bind(editId, now)
    .run();
  return result.meta.changes > 0;
}

/** rendering -> queued again (no engine took it). */
export async function revertToQueued(db: D1Database, editId: string, now: string): Promise<void> {
  await db.prepare(`UPDATE clip_edits SET status = 'queued', started_at = NULL, updated_at = ?2 WHERE id = ?1 AND status = 'rendering'`).bind(editId, now).run();
}

/** The edit fails with its credits given back; nothing else changes. False when it was not pending any more. */
export async function failEdit(db: D1Database, edit: Pick<ClipEditRow, "id" | "accountId" | "creditsReserved">, error: { code: string; message: string }, now: string): Promise<boolean> {
  const [, failed] = await db.batch([
    db
      .prepare(
        `UPDATE accounts SET credits_reserved = MAX(0, credits_reserved - ?2)
         WHERE id = ?1 AND EXISTS (SELECT 1 FROM clip_edits WHERE id = ?3 AND status IN ('queued', 'rendering'))`,
      )
      .bind(edit.accountId, edit.creditsReserved, edit.id),
    db
      .prepare(`UPDATE clip_edits SET status = 'failed', error_code = ?2, error_message = ?3, updated_at = ?4 WHERE id = ?1 AND status IN ('queued', 'rendering')`)
      .bind(edit.id, error.code, error.message.slice(0, 500), now),
  ]);
  return (failed?.meta.changes ?? 0) > 0;
}

/**
 * The publication's statements, before the clip row's own write in the same
 * batch: the reservation becomes a charge (also on the job's credits_charged)
 * and the edit is published with its event id, all only while it renders.
 */
export function publishEditStatements(db: D1Database, edit: Pick<ClipEditRow, "id" | "accountId" | "jobId" | "creditsReserved">, eventId: string, now: string): D1PreparedStatement[] {
  const rendering = `EXISTS (SELECT 1 FROM clip_edits WHERE id = ?3 AND status = 'rendering')`;
  return [
    db
      .prepare(`UPDATE accounts SET credits_used = credits_used + ?2, credits_reserved = MAX(0, credits_reserved - ?2) WHERE id = ?1 AND ${rendering}`)
      .bind(edit.accountId, edit.creditsReserved, edit.id),
    db.prepare(`UPDATE jobs SET credits_charged = credits_charged + ?2 WHERE id = ?1 AND ${rendering}`).bind(edit.jobId, edit.creditsReserved, edit.id),
    db
      .prepare(`UPDATE clip_edits SET status = 'published', event_id = ?2, updated_at = ?3 WHERE id = ?1 AND status = 'rendering'`)
      .bind(edit.id, eventId, now),
  ];
}

/** Pending edits last moved before `before` (the sweep fails those past the job timeout). */
export async function listStaleEdits(db: D1Database, before: string, limit: number): Promise<ClipEditRow[]> {
  const { results } = await db
    .prepare(`SELECT * FROM clip_edits WHERE status IN ('queued', 'rendering') AND updated_at < ? ORDER BY updated_at LIMIT ?`)
    .bind(before, limit)
    .all<Row>();
  return results.map(toEdit);
}

/** The job's queued edits, oldest first (the next one starts when one ends). */
export async function queuedEditsOfJob(db: D1Database, jobId: string): Promise<ClipEditRow[]> {
  const { results } = await db.prepare(`SELECT * FROM clip_edits WHERE job_id = ? AND status = 'queued' ORDER BY created_at`).bind(jobId).all<Row>();
  return results.map(toEdit);
}

/** Whether the edit is still pending (a held active-job slot of that id is not stale). */
export async function editPending(db: D1Database, editId: string): Promise<boolean> {
  const row = await db.prepare(`SELECT status FROM clip_edits WHERE id = ?`).bind(editId).first<{ status: string }>();
  return row?.status === "queued" || row?.status === "rendering";
}

/**
 * The clip.updated / clip.created event of a publication, for the same batch
 * after publishEditStatements: written only when that batch published the
 * edit (its event id is on the row) and the account has an enabled endpoint.
 */
export function clipEventStatement(
  db: D1Database,
  event: { id: string; accountId: string; jobId: string; editId: string; type: "clip.updated" | "clip.created"; body: string; at: string },
): D1PreparedStatement {
  return db
    .prepare(
      `INSERT INTO webhook_events (id, account_id, job_id, type, body, created_at, dispatched_at)
       SELECT ?1, ?2, ?3, ?4, ?5, ?6, NULL
       WHERE EXISTS (SELECT 1 FROM clip_edits WHERE id = ?7 AND status = 'published' AND event_id = ?1)
         AND EXISTS (SELECT 1 FROM webhook_endpoints WHERE account_id = ?2 AND enabled = 1)`,
    )
    .bind(event.id, event.accountId, event.jobId, event.type, event.body, event.at, event.editId);
}

/** A completed job without a publication key (it completed with no clip) gets one for its first new clip. */
export async function ensurePublicationKey(db: D1Database, jobId: string, candidate: string): Promise<string | null> {
  const row = await db
    .prepare(`UPDATE jobs SET publication_key = COALESCE(publication_key, ?) WHERE id = ? AND status = 'completed' RETURNING publication_key`)
    .bind(candidate, jobId)
    .first<{ publication_key: string }>();
  return row?.publication_key ?? null;
}

/** Touches a rendering edit (a sign of life from its engine), so the sweep leaves it. */
export async function touchEdit(db: D1Database, editId: string, now: string): Promise<void> {
  await db.prepare(`UPDATE clip_edits SET updated_at = ? WHERE id = ? AND status = 'rendering'`).bind(now, editId).run();
}
