/**
 * Every SQL statement on the `jobs` table. State changes are conditional
 * UPDATEs (guarded by the current status) so concurrent actors (cancel, the
 * watchdog, the engine's callbacks, duplicate queue deliveries) resolve to one
 * outcome: the statement that matched a row won, the others changed nothing.
 */
import { z } from "zod";
import { Chapter, ClipConfig, JobJudgement, TranslationOutcome, type FailureCode, type TimeRange, type TranscriptSource, type TranscriptSummary, type VideoType } from "#contract";

export const JOB_STATUSES = ["queued", "processing", "completed", "failed", "canceled"] as const;
export type JobStatus = (typeof JOB_STATUSES)[number];
export const ACTIVE_STATUSES: readonly JobStatus[] = ["queued", "processing"];
export const FINISHED_STATUSES: readonly JobStatus[] = ["completed", "failed", "canceled"];

export interface Job {
  id: string;
  accountId: string;
  status: JobStatus;
  progress: number;
  step: string;
  videoUrl: string;
  videoType: VideoType;
  configName: string | null;
  config: ClipConfig;
  title: string | null;
  sourceDurationSeconds: number | null;
  creditsReserved: number;
  creditsCharged: number;
  errorCode: FailureCode | null;
  errorMessage: string | null;
  lastReportAt: string | null;
  /** Times the job went back to the queue because its engine was stopped under it. */
  restarts: number;
  createdAt: string;
  updatedAt: string;
  completedAt: string | null;
  /** The direct upload the job was made from (its source), or null for a video_url job. */
  uploadId: string | null;
  /** SRT/WebVTT file named at submission. */
  captionsUrl: string | null;
  /** The part of the source to analyse and clip; null: all of it. */
  timeRange: TimeRange | null;
  /** Set at completion when the engine had a transcript. */
  transcript: TranscriptSummary | null;
  transcriptUnavailableReason: string | null;
  /** Set at completion when the job asked for caption_language. */
  translation: TranslationOutcome | null;
  /** The Workers AI usage the job caused (src/ai/usage.ts); absent on a job read from its Durable Object. */
  aiUsage?: AiUsageTotals;
  /** Set at completion: what judged the clips (null for jobs completed before judgement existed) and the chapters. */
  judgement: JobJudgement | null;
  chapters: Chapter[];
}

/** What a job spent on Workers AI, summed over its model calls. */
export interface AiUsageTotals {
  calls: number;
  tokensIn: number;
  tokensOut: number;
  audioSeconds: number;
  neurons: number;
}

interface JobRow {
  id: string;
  account_id: string;
  status: string;
  progress: number;
  step: string;
  video_url: string;
  video_type: string;
  config_name: string | null;
  config_json: string;
  title: string | null;
  source_duration_seconds: number | null;
  credits_reserved: number;
  credits_charged: number;
  error_code: string | null;
  error_message: string | null;
  last_report_at: string | null;
  restarts: number;
  created_at: string;
  updated_at: string;
  completed_at: string | null;
  upload_id: string | null;
  captions_url: string | null;
  transcript_source: string | null;
  transcript_language: string | null;
  transcript_word_count: number | null;
  transcript_unavailable_reason: string | null;
  time_range_start: number | null;
  time_range_end: number | null;
  translation_language?: string | null;
  translation_status?: string | null;
  translation_detail?: string | null;
  ai_calls?: number | null;
  ai_tokens_in?: number | null;
  ai_tokens_out?: number | null;
  ai_audio_seconds?: number | null;
  ai_neurons?: number | null;
  judged_by?: string | null;
  judge_model?: string | null;
  judge_fallback_reason?: string | null;
  chapters_json?: string | null;
}

/** Written only from a CompleteReport that passed the contract schema; a row from before the judgement migration has none. */
function judgementOf(row: JobRow): JobJudgement | null {
  const parsed = JobJudgement.safeParse({ judged_by: row.judged_by, model: row.judge_model ?? null, fallback_reason: row.judge_fallback_reason ?? null });
  return parsed.success ? parsed.data : null;
}

function chaptersOf(row: JobRow): Chapter[] {
  const parsed = z.array(Chapter).safeParse(JSON.parse(row.chapters_json ?? "[]"));
  return parsed.success ? parsed.data : [];
}

/** The stored outcome; a row written before migration 0029, or without a translation asked for, has none. */
function translationOf(row: JobRow): TranslationOutcome | null {
  const parsed = TranslationOutcome.safeParse({ language: row.translation_language, status: row.translation_status, detail: row.translation_detail ?? null });
  return parsed.success ? parsed.data : null;
}

function toJob(row: JobRow): Job {
  return {
    id: row.id,
    accountId: row.account_id,
    status: row.status as JobStatus,
    progress: row.progress,
    step: row.step,
    videoUrl: row.video_url,
    videoType: row.video_type as VideoType,
    configName: row.config_name,
    config: ClipConfig.parse(JSON.parse(row.config_json)),
    title: row.title,
    sourceDurationSeconds: row.source_duration_seconds,
    creditsReserved: row.credits_reserved,
    creditsCharged: row.credits_charged,
    errorCode: row.error_code as FailureCode | null,
    errorMessage: row.error_message,
    lastReportAt: row.last_report_at,
    restarts: row.restarts ?? 0,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
    completedAt: row.completed_at,
    uploadId: row.upload_id ?? null,
    captionsUrl: row.captions_url,
    transcript:
      row.transcript_source === null
        ? null
        : {
            source: row.transcript_source as TranscriptSource,
            language: row.transcript_language,
            word_count: row.transcript_word_count ?? 0,
          },
    transcriptUnavailableReason: row.transcript_unavailable_reason,
    timeRange:
      row.time_range_start == null || row.time_range_end == null
        ? null
        : { start_seconds: row.time_range_start, end_seconds: row.time_range_end },
    translation: translationOf(row),
    aiUsage: {
      calls: row.ai_calls ?? 0,
      tokensIn: row.ai_tokens_in ?? 0,
      tokensOut: row.ai_tokens_out ?? 0,
      audioSeconds: row.ai_audio_seconds ?? 0,
      neurons: row.ai_neurons ?? 0,
    },
    judgement: judgementOf(row),
    chapters: chaptersOf(row),
  };
}

export interface NewJob {
  id: string;
  accountId: string;
  videoUrl: string;
  videoType: VideoType;
  configName: string | null;
  config: ClipConfig;
  captionsUrl: string | null;
  /** The part of the source to analyse and clip; absent or null: the whole source. */
  timeRange?: TimeRange | null;
  now: string;
  /** Upload jobs: the upload, and the title it starts with (the file name). */
  uploadId?: string | null;
  title?: string | null;
}

export const QUEUED_STEP = "Waiting in queue";

/** The row insertJobStatement writes, as a Job: lets a caller answer without reading it back. */
export function queuedJob(job: NewJob): Job {
  return {
    id: job.id,
    accountId: job.accountId,
    status: "queued",
    progress: 0,
    step: QUEUED_STEP,
    videoUrl: job.videoUrl,
    videoType: job.videoType,
    configName: job.configName,
    config: job.config,
    title: job.title ?? null,
    sourceDurationSeconds: null,
    creditsReserved: 0,
    creditsCharged: 0,
    errorCode: null,
    errorMessage: null,
    lastReportAt: null,
    restarts: 0,
    createdAt: job.now,
    updatedAt: job.now,
    completedAt: null,
    uploadId: job.uploadId ?? null,
    captionsUrl: job.captionsUrl ?? null,
    timeRange: job.timeRange ?? null,
    transcript: null,
    transcriptUnavailableReason: null,
    translation: null,
    judgement: null,
    chapters: [],
  };
}

/**
 * The insert as a statement, so it can share a D1 batch (one transaction) with
 * other writes. `transitionId` names this first transition (its outbox event).
 */
export function insertJobStatement(db: D1Database, job: NewJob, transitionId: string): D1PreparedStatement {
  return db
    .prepare(
      `INSERT INTO jobs (id, account_id, status, progress, step, video_url, video_type, config_name, config_json, captions_url, created_at, updated_at, upload_id, title, transition_id,
         time_range_start, time_range_end)
       VALUES (?, ?, 'queued', 0, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    )
    .bind(
      job.id,
      job.accountId,
      QUEUED_STEP,
      job.videoUrl,
      job.videoType,
      job.configName,
      JSON.stringify(job.config),
      job.captionsUrl ?? null,
      job.now,
      job.now,
      job.uploadId ?? null,
      job.title ?? null,
      transitionId,
      job.timeRange?.start_seconds ?? null,
      job.timeRange?.end_seconds ?? null,
    );
}

/** Removes a job that never ran (enqueueing failed right after the insert). */
export function deleteQueuedJob(db: D1Database, jobId: string): D1PreparedStatement {
  return db.prepare(`DELETE FROM jobs WHERE id = ? AND status = 'queued'`).bind(jobId);
}

/** A job by id alone: for the queue consumer, callbacks and the watchdog. */
export async function findJob(db: D1Database, jobId: string): Promise<Job | null> {
  const row = await db.prepare(`SELECT * FROM jobs WHERE id = ?`).bind(jobId).first<JobRow>();
  return row ? toJob(row) : null;
}

/** A job as one account sees it: another account's job is simply absent. */
export async function findAccountJob(db: D1Database, accountId: string, jobId: string): Promise<Job | null> {
  const row = await db
    .prepare(`SELECT * FROM jobs WHERE id = ? AND account_id = ?`)
    .bind(jobId, accountId)
    .first<JobRow>();
  return row ? toJob(row) : null;
}

export interface JobPageQuery {
  accountId: string;
  /** null: every status. */
  status: JobStatus | null;
  limit: number;
  /** Keyset position: rows strictly after (older than) this one. */
  after: { createdAt: string; id: string } | null;
}

/** Newest first, ties broken by id, so the order is total and pages never overlap. */
export async function listJobs(db: D1Database, query: JobPageQuery): Promise<Job[]> {
  const where = ["account_id = ?"];
  const params: (string | number)[] = [query.accountId];
  if (query.status) {
    where.push("status = ?");
    params.push(query.status);
  }
  if (query.after) {
    where.push("(created_at < ? OR (created_at = ? AND id < ?))");
    params.push(query.after.createdAt, query.after.createdAt, query.after.id);
  }
  params.push(query.limit);
  const { results } = await db
    .prepare(`SELECT * FROM jobs WHERE ${where.join(" AND ")} ORDER BY created_at DESC, id DESC LIMIT ?`)
    .bind(...params)
    .all<JobRow>();
  return results.map(toJob);
}

/**
 * queued -> processing, as transition `transitionId`; its result has a row
 * only when the job was still queued (not canceled meanwhile).
 */
export function markProcessing(db: D1Database, jobId: string, now: string, transitionId: string): D1PreparedStatement {
  return db
    .prepare(
      `UPDATE jobs SET status = 'processing', step = 'Starting', last_report_at = ?, updated_at = ?, transition_id = ?
       WHERE id = ? AND status = 'queued'
       RETURNING id`,
    )
    .bind(now, now, transitionId, jobId);
}

/**
 * processing -> queued when the engine did not accept the job after all (the
 * processing transition is undone, so transition_id is left as it was); no
 * row in its result if the job is no longer processing.
 */
export function revertToQueued(db: D1Database, jobId: string, now: string): D1PreparedStatement {
  return db
    .prepare(`UPDATE jobs SET status = 'queued', step = ?, updated_at = ? WHERE id = ? AND status = 'processing' RETURNING id`)
    .bind(QUEUED_STEP, now, jobId);
}

/**
 * processing -> queued after the engine was stopped under the job (a
 * redeploy): progress, reservation and uploads stay; no row in its result
 * when the job was not processing or has used its restarts.
 */
export function requeueInterrupted(db: D1Database, jobId: string, maxRestarts: number, now: string, transitionId: string): D1PreparedStatement {
  return db
    .prepare(
      `UPDATE jobs SET status = 'queued', step = ?, restarts = restarts + 1, updated_at = ?, requeued_at = ?, transition_id = ?
       WHERE id = ? AND status = 'processing' AND restarts < ?
       RETURNING id`,
    )
    .bind(RESTART_STEP, now, now, transitionId, jobId, maxRestarts);
}

export const RESTART_STEP = "Engine restarted; waiting to resume";

/**
 * When the job's current wait for an engine began: its last requeue after an
 * interruption, else its submission. Its queue deadline counts from here; a
 * start that failed and put it back in the queue does not move it.
 */
export async function queuedSince(db: D1Database, jobId: string): Promise<string | null> {
  return db.prepare(`SELECT COALESCE(requeued_at, created_at) AS since FROM jobs WHERE id = ?`).bind(jobId).first<string>("since");
}

// Progress, heartbeats and uploads are not written here: they live in the
// account's Durable Object (src/account/live-jobs.ts) between transitions.

export async function recordProbe(
  db: D1Database,
  jobId: string,
  title: string,
  durationSeconds: number,
  now: string,
): Promise<boolean> {
  const result = await db
    .prepare(
      `UPDATE jobs SET title = ?, source_duration_seconds = ?, last_report_at = ?, updated_at = ?
       WHERE id = ? AND status = 'processing'`,
    )
    .bind(title, durationSeconds, now, now, jobId)
    .run();
  return result.meta.changes === 1;
}

/**
 * Sets `credits_reserved` on a processing job that has none yet, only if the
 * account can cover it. Written as a negative marker first so the account
 * statement that follows in the same batch can tell "reserved by this call"
 * from "reserved earlier"; `confirmReservation` flips it positive.
 */
export function claimReservation(db: D1Database, jobId: string, credits: number): D1PreparedStatement {
  return db
    .prepare(
      `UPDATE jobs SET credits_reserved = -?1
       WHERE id = ?2 AND status = 'processing' AND credits_reserved = 0 AND credits_charged = 0
         AND (SELECT p.credits_per_period + a.credits_granted - a.credits_used - a.credits_reserved
              FROM accounts a JOIN plans p ON p.name = a.plan WHERE a.id = jobs.account_id) >= ?1`,
    )
    .bind(credits, jobId);
}

export function confirmReservation(db: D1Database, jobId: string, credits: number): D1PreparedStatement {
  return db.prepare(`UPDATE jobs SET credits_reserved = ?1 WHERE id = ?2 AND credits_reserved = -?1`).bind(credits, jobId);
}

export function finishCompleted(
  db: D1Database,
  jobId: string,
  title: string,
  durationSeconds: number,
  fallbackCharge: number,
  now: string,
  transitionId: string,
): D1PreparedStatement {
  // The charge is what was reserved at probe time; `fallbackCharge` only
  // applies when the engine completed without probing first.
  return db
    .prepare(
      `UPDATE jobs SET status = 'completed', progress = 100, step = 'Completed', title = ?, source_duration_seconds = ?,
         credits_charged = CASE WHEN credits_reserved > 0 THEN credits_reserved ELSE ? END, credits_reserved = 0,
         last_report_at = ?, updated_at = ?, completed_at = ?, transition_id = ?
       WHERE id = ? AND status = 'processing'
       RETURNING id`,
    )
    .bind(title, durationSeconds, fallbackCharge, now, now, now, transitionId, jobId);
}

/**
 * The transcript summary (or why there is none) of a job that is completing;
 * meant for the completion batch, before the job's own guarded transition.
 */
export function recordTranscriptWhileProcessing(
  db: D1Database,
  jobId: string,
  transcript: TranscriptSummary | null,
  unavailableReason: string | null,
  translation: TranslationOutcome | null = null,
): D1PreparedStatement {
  return db
    .prepare(
      `UPDATE jobs SET transcript_source = ?, transcript_language = ?, transcript_word_count = ?, transcript_unavailable_reason = ?,
         translation_language = ?, translation_status = ?, translation_detail = ?
       WHERE id = ? AND status = 'processing'`,
    )
    .bind(
      transcript?.source ?? null,
      transcript?.language ?? null,
      transcript?.word_count ?? null,
      transcript ? null : unavailableReason,
      translation?.language ?? null,
      translation?.status ?? null,
      translation?.detail ?? null,
      jobId,
    );
}

/** What judged a completing job's clips, and its chapters; for the completion batch, like the transcript's. */
export function recordJudgementWhileProcessing(db: D1Database, jobId: string, judgement: JobJudgement | null, chapters: Chapter[]): D1PreparedStatement {
  return db
    .prepare(`UPDATE jobs SET judged_by = ?, judge_model = ?, judge_fallback_reason = ?, chapters_json = ? WHERE id = ? AND status = 'processing'`)
    .bind(judgement?.judged_by ?? null, judgement?.model ?? null, judgement?.fallback_reason ?? null, chapters.length > 0 ? JSON.stringify(chapters) : null, jobId);
}

/** The step text of a job that ended without completing. */
export function endStep(status: "failed" | "canceled"): string {
  return status === "failed" ? "Failed" : "Canceled";
}

/** The guarded end of a job that did not complete (failed or canceled), from any of `from`. */
export function finishUnsuccessful(
  db: D1Database,
  jobId: string,
  from: readonly JobStatus[],
  to: "failed" | "canceled",
  error: { code: FailureCode; message: string } | null,
  now: string,
  transitionId: string,
): D1PreparedStatement {
  return db
    .prepare(
      `UPDATE jobs SET status = ?, step = ?, error_code = ?, error_message = ?, credits_reserved = 0,
         updated_at = ?, completed_at = ?, transition_id = ?
       WHERE id = ? AND status IN (${from.map(() => "?").join(", ")})
       RETURNING id`,
    )
    .bind(to, endStep(to), error?.code ?? null, error?.message ?? null, now, now, transitionId, jobId, ...from);
}

/** Deletes a finished job (clips first, then the row); false when it was not finished. */
export function deleteFinishedJob(db: D1Database, accountId: string, jobId: string): D1PreparedStatement {
  return db
    .prepare(`DELETE FROM jobs WHERE id = ? AND account_id = ? AND status IN ('completed', 'failed', 'canceled') RETURNING id`)
    .bind(jobId, accountId);
}

/**
 * Everything the job's end released was released (src/jobs/settle.ts): the
 * sweep stops looking at it.
 */
export async function markSettled(db: D1Database, jobId: string, now: string): Promise<void> {
  await db.prepare(`UPDATE jobs SET settled_at = ? WHERE id = ? AND settled_at IS NULL AND status IN ('completed', 'failed', 'canceled')`).bind(now, jobId).run();
}

/**
 * Ended jobs whose releases are not all done, that ended between `after` and
 * `before`: those the sweep has not tried yet first (oldest end first), then
 * those it tried least recently. A job whose releases keep failing goes to
 * the back once tried, so it never holds a place a newer job needs.
 */
export async function listUnsettledJobs(db: D1Database, after: string, before: string, limit: number): Promise<Job[]> {
  const { results } = await db
    .prepare(
      `SELECT * FROM jobs WHERE settled_at IS NULL AND status IN ('completed', 'failed', 'canceled') AND updated_at > ? AND updated_at < ?
       ORDER BY settle_attempted_at IS NOT NULL, settle_attempted_at, updated_at LIMIT ?`,
    )
    .bind(after, before, limit)
    .all<JobRow>();
  return results.map(toJob);
}

/** Records that the sweep is trying to settle these jobs now (one statement for the whole run). */
export async function markSettleAttempted(db: D1Database, jobIds: readonly string[], now: string): Promise<void> {
  if (jobIds.length === 0) return;
  await db
    .prepare(`UPDATE jobs SET settle_attempted_at = ? WHERE id IN (${jobIds.map(() => "?").join(", ")})`)
    .bind(now, ...jobIds)
    .run();
}

/**
 * The job's publication key (src/jobs/publication.ts), set by the first clip
 * upload (its staged upload sits at a key derived from it) or completion
 * attempt and the same for every later one; null when the job is no longer
 * processing.
 */
export async function claimPublicationKey(db: D1Database, jobId: string, candidate: string): Promise<string | null> {
  const row = await db
    .prepare(`UPDATE jobs SET publication_key = COALESCE(publication_key, ?) WHERE id = ? AND status = 'processing' RETURNING publication_key`)
    .bind(candidate, jobId)
    .first<{ publication_key: string }>();
  return row?.publication_key ?? null;
}

/** The job's publication key, if a clip upload or completion attempt ever set one. */
export async function findPublicationKey(db: D1Database, jobId: string): Promise<string | null> {
  const row = await db.prepare(`SELECT publication_key FROM jobs WHERE id = ?`).bind(jobId).first<{ publication_key: string | null }>();
  return row?.publication_key ?? null;
}

/** Failed jobs by error code since `sinceIso` (index jobs_status_completed): what operators see of the fleet. */
export async function failuresByCodeSince(db: D1Database, sinceIso: string): Promise<Record<string, number>> {
  const { results } = await db
    .prepare(`SELECT COALESCE(error_code, 'unknown') AS code, COUNT(*) AS n FROM jobs WHERE status = 'failed' AND completed_at >= ? GROUP BY code`)
    .bind(sinceIso)
    .all<{ code: string; n: number }>();
  return Object.fromEntries(results.map((r) => [r.code, r.n]));
}
