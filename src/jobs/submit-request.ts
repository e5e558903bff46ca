/**
 * submitJob, the one door of a job submission: POST /api/v1/jobs, the MCP
 * tool submit_job and the dashboard's form all call it with input their
 * surface read through the one schema (submit-contract.ts). It runs the URL
 * and type checks, then createJob, optionally under an idempotency key (same
 * key and same request within 24 hours: the first answer again, never a
 * second job).
 */
import type { Job } from "../db/jobs.ts";
import { claimIdempotencyKey, findIdempotencyRecord, PENDING_STATUS, releaseIdempotencyKey } from "../db/idempotency.ts";
import type { PlanLimits } from "../db/plans.ts";
import { DomainError } from "../domain/errors.ts";
import { presentJob } from "./present.ts";
import { checkCaptionsUrl, checkVideoUrl } from "../domain/source-url.ts";
import { checkVideoType, createJob, type Submission } from "./submit.ts";
import type { SubmitJobInput } from "./submit-contract.ts";

/** The answer to a submission (the API's SubmitJobResponse). */
export interface SubmitJobAnswer {
  job_id: string;
  status: "queued";
  message: string;
  created_at?: string;
}

const IDEMPOTENCY_WINDOW_MS = 24 * 60 * 60 * 1000;
/** A claim older than this belongs to a request that died before answering. */
const ABANDONED_CLAIM_MS = 60 * 1000;

async function sha256Hex(text: string): Promise<string> {
  const digest = await crypto.subtle.digest("SHA-256", new TextEncoder().encode(text));
  return [...new Uint8Array(digest)].map((b) => b.toString(16).padStart(2, "0")).join("");
}

function submitAnswer(env: Env, job: Job): SubmitJobAnswer {
  const shaped = presentJob(env.CDN_URL, job, []);
  // createJob inserts the job queued; anything else would be a bug worth a 500.
  if (shaped.status !== "queued") throw new DomainError("internal_error", `A new job is ${shaped.status}, not queued.`);
  return { ...shaped, status: shaped.status, message: "Job queued. Poll GET /api/v1/jobs/" + job.id + " for its status." };
}

/** The steering fields as sent, for the request hash; nothing when none was sent. */
function steeringHashPart(body: SubmitJobInput): unknown[] {
  const sent = {
    prompt: body.prompt,
    time_range: body.time_range,
    remove_silence: body.remove_silence,
    remove_fillers: body.remove_fillers,
  };
  return Object.values(sent).every((v) => v === undefined) ? [] : [{ steering: sent }];
}

/** The request as submitted (before normalisation), so "same request" means what the client sent. */
function requestHash(body: SubmitJobInput): Promise<string> {
  return sha256Hex(
    // captions_url joins the hash only when sent, so keys stored before it existed still match.
    JSON.stringify([
      ...(body.upload_id === undefined
        ? [body.video_url, body.video_type, body.config_name ?? null]
        : [null, body.video_type, body.config_name ?? null, body.upload_id]),
      ...(body.captions_url == null ? [] : [body.captions_url]),
      // The steering fields join it only when sent, for the same reason.
      ...steeringHashPart(body),
      // Likewise the language fields, only when sent.
      ...(body.language === undefined && body.caption_language === undefined ? [] : [{ l: body.language, c: body.caption_language }]),
    ]),
  );
}

/** Submits validated input for the caller; `replayed` when an idempotency key returned an earlier answer. */
export async function submitJob(
  env: Env,
  auth: { accountId: string; plan: PlanLimits },
  body: SubmitJobInput,
  idempotencyKey: string | undefined,
): Promise<{ answer: SubmitJobAnswer; replayed: boolean }> {
  const { accountId, plan } = auth;
  const allowPrivate = env.ALLOW_PRIVATE_SOURCES === "true";
  const submission: Submission = {
    accountId,
    maxActiveJobs: plan.maxActiveJobs,
    videoUrl: body.video_url === undefined ? "" : checkVideoUrl(body.video_url, allowPrivate),
    uploadId: body.upload_id ?? null,
    videoType: checkVideoType(body.video_type),
    configName: body.config_name ?? null,
    captionsUrl: body.captions_url == null ? null : checkCaptionsUrl(body.captions_url, allowPrivate),
    steering: {
      prompt: body.prompt,
      timeRange: body.time_range,
      removeSilence: body.remove_silence,
      removeFillers: body.remove_fillers,
    },
    // Omitted: the configuration's; null: none (detected / as spoken).
    languages: {
      ...(body.language !== undefined ? { language: body.language } : {}),
      ...(body.caption_language !== undefined ? { caption_language: body.caption_language } : {}),
    },
  };
  if (idempotencyKey === undefined) {
    return { answer: submitAnswer(env, await createJob(env, submission)), replayed: false };
  }

  const hash = await requestHash(body);
  const now = new Date();
  const expiredBefore = new Date(now.getTime() - IDEMPOTENCY_WINDOW_MS).toISOString();
  const abandonedBefore = new Date(now.getTime() - ABANDONED_CLAIM_MS).toISOString();
  const claimId = crypto.randomUUID();
  const claimed = await claimIdempotencyKey(env.DB, accountId, idempotencyKey, hash, claimId, now.toISOString(), expiredBefore, abandonedBefore);
  if (!claimed) {
    const record = await findIdempotencyRecord(env.DB, accountId, idempotencyKey);
    if (!record || record.requestHash !== hash) {
      throw new DomainError("idempotency_key_reused", "This idempotency key was already used with a different request body.");
    }
    if (record.status === PENDING_STATUS) {
      throw new DomainError("conflict", "A request with this idempotency key is still in progress; retry shortly.", {
        headers: { "Retry-After": "1" },
      });
    }
    // Stored below from a SubmitJobAnswer; re-serialising yields the same bytes.
    return { answer: JSON.parse(record.responseJson) as SubmitJobAnswer, replayed: true };
  }
  try {
    const job = await createJob(env, submission, { key: idempotencyKey, claimId, present: (created) => submitAnswer(env, created) });
    return { answer: submitAnswer(env, job), replayed: false };
  } catch (err) {
    // Failures are not remembered: the client may retry the same key. A stored
    // answer (the job's batch committed) is kept: only a pending claim is dropped.
    await releaseIdempotencyKey(env.DB, accountId, idempotencyKey, claimId);
    throw err;
  }
}
