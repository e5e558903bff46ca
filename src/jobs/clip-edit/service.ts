/**
 * Editing a completed job's clip and cutting new ones (docs/editing.md): the
 * one service behind the REST routes, the MCP tools and the dashboard. An
 * accepted edit is a `clip_edits` row (queued) with its credits reserved and
 * an active-job slot taken; the jobs queue sends it to the engine
 * (dispatch.ts), and the engine's completion publishes it (publish.ts).
 */
import { z } from "@hono/zod-openapi";
import { ClipConfig, MAX_CLIPS_PER_JOB, type ClipEdit, type EditWord, type Transcript } from "#contract";
import { ClipDetail } from "../clip-schema.ts";
import { findEdit, insertEditStatements, nextClipIndex, openEditOfClip, type ClipEditRow } from "../../db/clip-edits.ts";
import { listClips, type Clip, type StoredCorrection } from "../../db/clips.ts";
import { creditsForDuration } from "../../db/credits.ts";
import type { Job } from "../../db/jobs.ts";
import type { PlanLimits } from "../../db/plans.ts";
import { DomainError } from "../../domain/errors.ts";
import { newId } from "../../lib/random.ts";
import { uploadKey } from "../../uploads/ids.ts";
import { storedKeptUntil } from "../../uploads/kept-source.ts";
import { loadOwnJob } from "../account-jobs.ts";
import { presentClip } from "../present.ts";
import { loadTranscript } from "../transcript-store.ts";
import { ClipEditState, OVERRIDE_FIELDS, type ClipAddBody, type ClipEditBody } from "./contract.ts";
import { acquireEditSlot, enqueueEdit, releaseEditSlot } from "./dispatch.ts";
import { mergeCorrections, snapSpan, spanWords, untranscribedParts } from "./words.ts";

export const ClipWord = z
  .object({
    index: z.number().int().min(0).describe("The word's index in the clip's words (what a correction by index names)"),
    text: z.string(),
    start_seconds: z.number().describe("Source seconds"),
    end_seconds: z.number(),
  })
  .openapi("ClipWord");

export const ClipAnswer = ClipDetail.extend({
  url: z.url().nullable().describe("The published version's link; null for a new clip until its first render is published"),
  thumbnail_url: z.url().nullable(),
  index: z.number().int().min(0).describe("The clip's index in the job"),
  version: z.number().int().min(0).describe("The published version (1: the job's own render); 0 for a new clip not published yet"),
  edit: ClipEditState.nullable().describe("The clip's pending or failed edit; null when none"),
  words: z.array(ClipWord).describe("The clip's caption words with its corrections applied; [] without a transcript"),
}).openapi("ClipAnswer");
export type ClipAnswer = z.infer<typeof ClipAnswer>;

function editState(edit: ClipEditRow | null): ClipEditState | null {
  if (!edit) return null;
  return {
    status: edit.status === "published" ? "rendering" : edit.status,
    requested: edit.requested,
    ...(edit.status === "failed" ? { error: { code: edit.errorCode ?? "internal_error", message: edit.errorMessage ?? "The render failed." } } : {}),
  };
}

function numbered(words: readonly EditWord[]): ClipAnswer["words"] {
  return words.map((word, index) => ({ index, text: word.text, start_seconds: word.start, end_seconds: word.end }));
}

function answerOf(env: Env, clip: Clip, edit: ClipEditRow | null, words: readonly EditWord[]): ClipAnswer {
  return { ...presentClip(env.CDN_URL, clip), index: clip.index, version: clip.version, edit: editState(edit), words: numbered(words) };
}

/** A new clip whose first render is not published: what was asked, without links. */
function pendingAnswer(edit: ClipEditRow): ClipAnswer {
  const span = edit.clipEdit;
  return {
    url: null,
    thumbnail_url: null,
    start_seconds: span.start_seconds,
    end_seconds: span.end_seconds,
    duration_seconds: span.end_seconds - span.start_seconds,
    score: 0,
    reasons: ["chosen_by_user"],
    width: 0,
    height: 0,
    reframe: "center",
    faces_count: 0,
    text: span.words.length > 0 ? span.words.map((w) => w.text).join(" ") : null,
    title: span.title,
    captions: null,
    captions_burned: false,
    prompt_match: null,
    removed: [],
    zooms: [],
    scores: null,
    judged_by: "signals",
    description: null,
    hashtags: [],
    index: edit.index,
    version: 0,
    edit: editState(edit),
    words: numbered(span.words),
  };
}

function notFoundClip(jobId: string, index: number): DomainError {
  return new DomainError("not_found", `Job ${jobId} has no clip ${index}.`);
}

async function completedJob(env: Env, accountId: string, jobId: string): Promise<Job> {
  const job = await loadOwnJob(env.DB, accountId, jobId);
  if (job.status !== "completed") {
    throw new DomainError("job_not_completed", `Job ${job.id} is ${job.status}; only a completed job's clips can be read or edited.`);
  }
  return job;
}

/** GET /api/v1/jobs/{job_id}/clips/{index}. */
export async function readClip(env: Env, accountId: string, jobId: string, index: number): Promise<ClipAnswer> {
  const job = await completedJob(env, accountId, jobId);
  const [clips, edit] = await Promise.all([listClips(env.DB, job.id), openEditOfClip(env.DB, job.id, index)]);
  const clip = clips.find((c) => c.index === index);
  if (!clip) {
    if (edit?.kind === "add") return pendingAnswer(edit);
    throw notFoundClip(jobId, index);
  }
  const transcript = await loadTranscript(env, job);
  return answerOf(env, clip, edit, spanWords(transcript, clip.startSeconds, clip.endSeconds, clip.corrections));
}

/** 400 invalid_clip_span unless start < end, inside the source, and the length is within the job's bounds. */
function checkSpan(job: Job, start: number, end: number): void {
  const fail = (detail: string) => new DomainError("invalid_clip_span", detail, { errors: [{ path: "end_seconds", message: detail }] });
  if (!(end > start)) throw fail(`The span ends at ${end} s, not after its start at ${start} s.`);
  if (job.sourceDurationSeconds !== null && end > job.sourceDurationSeconds + 0.05) {
    throw fail(`The span ends at ${end} s, after the end of the ${job.sourceDurationSeconds.toFixed(2)} s source.`);
  }
  const length = end - start;
  const { min_clip_seconds: min, max_clip_seconds: max } = job.config;
  if (length < min || length > max) throw fail(`The span is ${length.toFixed(2)} s long; the job's clips are ${min}-${max} s.`);
}

function overridesOf(body: ClipEditBody | ClipAddBody): Record<string, unknown> {
  const picked: Record<string, unknown> = {};
  for (const field of OVERRIDE_FIELDS) if (body[field] !== undefined) picked[field] = body[field];
  return picked;
}

/** The job's configuration with the clip's overrides, validated as a configuration is. */
function effectiveConfig(job: Job, overrides: Record<string, unknown>): ClipConfig {
  const parsed = ClipConfig.safeParse({ ...job.config, ...overrides });
  if (!parsed.success) {
    throw new DomainError("invalid_request", "The overrides do not make a valid configuration with the job's.", {
      errors: parsed.error.issues.map((issue) => ({ path: issue.path.join("."), message: issue.message })),
    });
  }
  return parsed.data;
}

/** 410 source_expired for an upload job whose upload is gone; a URL job's source is fetched again from video_url. */
async function checkSource(env: Env, job: Job): Promise<void> {
  if (job.uploadId === null) return;
  const keptUntil = await storedKeptUntil(env.DB, job.id);
  if (keptUntil === null || keptUntil <= Date.now() || !(await env.UPLOADS.head(uploadKey(job.uploadId)))) {
    throw new DomainError("source_expired", `The uploaded source of job ${job.id} is no longer kept; an upload cannot be fetched again.`);
  }
}

interface Accepting {
  job: Job;
  auth: { accountId: string; plan: PlanLimits };
  index: number;
  version: number;
  kind: "edit" | "add";
  requested: Record<string, unknown>;
  start: number;
  end: number;
  title: string | null;
  overrides: Record<string, unknown>;
  corrections: StoredCorrection[];
  transcript: Transcript | null;
}

/** Reserves, records and queues the edit; the answer is the clip as it now reads. */
async function accept(env: Env, a: Accepting): Promise<ClipEditRow> {
  const config = effectiveConfig(a.job, a.overrides);
  await checkSource(env, a.job);
  const editId = newId("edit");
  const clipEdit: ClipEdit = {
    edit_id: editId,
    index: a.index,
    version: a.version,
    start_seconds: a.start,
    end_seconds: a.end,
    words: spanWords(a.transcript, a.start, a.end, a.corrections),
    transcribe: untranscribedParts(a.job.timeRange, a.start, a.end),
    title: a.title,
  };
  const now = new Date().toISOString();
  const edit: ClipEditRow = {
    id: editId,
    jobId: a.job.id,
    accountId: a.auth.accountId,
    index: a.index,
    version: a.version,
    kind: a.kind,
    status: "queued",
    requested: a.requested,
    clipEdit,
    config,
    overrides: a.overrides,
    corrections: a.corrections,
    creditsReserved: creditsForDuration(a.end - a.start),
    errorCode: null,
    errorMessage: null,
    eventId: null,
    createdAt: now,
    updatedAt: now,
    startedAt: null,
  };
  await acquireEditSlot(env, a.auth.accountId, editId, a.auth.plan.maxActiveJobs);
  let inserted: boolean;
  try {
    const [insert] = await env.DB.batch(insertEditStatements(env.DB, edit));
    inserted = (insert?.meta.changes ?? 0) > 0;
  } catch (err) {
    await releaseEditSlot(env, a.auth.accountId, editId);
    if (err instanceof Error && /UNIQUE|constraint/i.test(err.message)) throw inProgress(a.job.id, a.index);
    throw err;
  }
  if (!inserted) {
    await releaseEditSlot(env, a.auth.accountId, editId);
    throw new DomainError("insufficient_credits", `The edit needs ${edit.creditsReserved} credits, more than the account has left.`, {
      extra: { credits_needed: edit.creditsReserved },
    });
  }
  await enqueueEdit(env, edit);
  return edit;
}

function inProgress(jobId: string, index: number): DomainError {
  return new DomainError("clip_edit_in_progress", `Clip ${index} of job ${jobId} has an edit queued or rendering; wait until its edit is null or failed.`);
}

/** PATCH /api/v1/jobs/{job_id}/clips/{index}: 202 with the clip and its queued edit. */
export async function editClip(env: Env, auth: { accountId: string; plan: PlanLimits }, jobId: string, index: number, body: ClipEditBody): Promise<ClipAnswer> {
  if (Object.values(body).every((value) => value === undefined)) {
    throw new DomainError("invalid_request", "An edit changes at least one member.", { errors: [{ path: "(body)", message: "an edit changes at least one member" }] });
  }
  const job = await completedJob(env, auth.accountId, jobId);
  const [clips, open] = await Promise.all([listClips(env.DB, job.id), openEditOfClip(env.DB, job.id, index)]);
  const clip = clips.find((c) => c.index === index);
  if (!clip) throw notFoundClip(jobId, index);
  if (open && open.status !== "failed") throw inProgress(job.id, index);
  const start = body.start_seconds ?? clip.startSeconds;
  const end = body.end_seconds ?? clip.endSeconds;
  checkSpan(job, start, end);
  const transcript = await loadTranscript(env, job);
  const current = spanWords(transcript, clip.startSeconds, clip.endSeconds, clip.corrections);
  const corrections = body.words ? mergeCorrections(clip.corrections, body.words, current, transcript) : clip.corrections;
  const edit = await accept(env, {
    job,
    auth,
    index,
    version: clip.version + 1,
    kind: "edit",
    requested: { ...body },
    start,
    end,
    title: body.title ?? clip.title,
    overrides: { ...clip.overrides, ...overridesOf(body) },
    corrections,
    transcript,
  });
  return answerOf(env, clip, edit, current);
}

/** POST /api/v1/jobs/{job_id}/clips: 202 with the new clip (version 0 until published). */
export async function addClip(env: Env, auth: { accountId: string; plan: PlanLimits }, jobId: string, body: ClipAddBody): Promise<ClipAnswer> {
  const job = await completedJob(env, auth.accountId, jobId);
  const index = await nextClipIndex(env.DB, job.id);
  if (index >= MAX_CLIPS_PER_JOB) throw new DomainError("clip_limit", `Job ${job.id} has its maximum of ${MAX_CLIPS_PER_JOB} clips.`);
  const transcript = await loadTranscript(env, job);
  const span = body.snap && transcript ? snapSpan(transcript.sentences, body.start_seconds, body.end_seconds) : { start: body.start_seconds, end: body.end_seconds };
  checkSpan(job, span.start, span.end);
  const edit = await accept(env, {
    job,
    auth,
    index,
    version: 1,
    kind: "add",
    requested: { ...body },
    start: span.start,
    end: span.end,
    title: body.title ?? null,
    overrides: overridesOf(body),
    corrections: [],
    transcript,
  });
  return pendingAnswer((await findEdit(env.DB, edit.id)) ?? edit);
}
