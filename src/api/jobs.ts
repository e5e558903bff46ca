/** The jobs resource (SPEC section 4): submit, status, list, cancel, delete. */
import { Hono } from "hono";
import { z } from "zod";
import { accountState } from "../account/stub";
import { getUsage } from "../db/accounts";
import { deleteClipsOfJob, listClips, listClipsOfJobs } from "../db/clips";
import { getConfig } from "../db/configs";
import {
  claimIdempotencyKey,
  findIdempotencyRecord,
  PENDING_STATUS,
  releaseIdempotencyKey,
  storeIdempotentResponse,
} from "../db/idempotency";
import {
  ACTIVE_STATUSES,
  deleteFinishedJob,
  deleteQueuedJob,
  findAccountJob,
  insertJob,
  JOB_STATUSES,
  listJobs,
  type Job,
} from "../db/jobs";
import { DEFAULT_CLIP_CONFIG, VIDEO_TYPES, type VideoType } from "../engine/contract";
import type { AppEnv } from "../http/app-env";
import { AppError } from "../http/errors";
import { validate } from "../http/validate";
import { decodeCursor, encodeCursor } from "../jobs/cursor";
import { isJobId, newJobId } from "../jobs/ids";
import { cancelJob } from "../jobs/lifecycle";
import { presentJob, presentListItem } from "../jobs/present";
import { checkVideoUrl } from "../jobs/source-url";
import { deleteJobObjects } from "../jobs/storage";
import type { JobMessage } from "../queue/message";

export const IDEMPOTENCY_HEADER = "Idempotency-Key";
export const MAX_IDEMPOTENCY_KEY_LENGTH = 255;
const IDEMPOTENCY_WINDOW_MS = 24 * 60 * 60 * 1000;
/** A claim older than this belongs to a request that died before answering. */
const ABANDONED_CLAIM_MS = 60 * 1000;

/** Shape only; values get their own error codes (invalid_video_url, invalid_video_type). */
const SubmitBody = z.object({
  video_url: z.string(),
  video_type: z.string(),
  config_name: z.string().min(1).max(64).nullish(),
});

const ListQuery = z.object({
  status: z.enum([...JOB_STATUSES, "all"]).default("completed"),
  limit: z.coerce.number().int().min(1).max(100).default(50),
  cursor: z.string().optional(),
});

function checkVideoType(value: string): VideoType {
  const allowed: readonly string[] = VIDEO_TYPES;
  if (allowed.includes(value)) return value as VideoType;
  const detail = `video_type must be one of: ${VIDEO_TYPES.join(", ")}.`;
  throw new AppError("invalid_video_type", detail, {
    errors: [{ path: "video_type", message: detail }],
    extra: { allowed_values: VIDEO_TYPES },
  });
}

function jobNotFound(jobId: string): AppError {
  return new AppError("not_found", `No job ${jobId}.`);
}

async function loadOwnJob(db: D1Database, accountId: string, jobId: string): Promise<Job> {
  const job = isJobId(jobId) ? await findAccountJob(db, accountId, jobId) : null;
  if (!job) throw jobNotFound(jobId);
  return job;
}

async function sha256Hex(text: string): Promise<string> {
  const digest = await crypto.subtle.digest("SHA-256", new TextEncoder().encode(text));
  return [...new Uint8Array(digest)].map((b) => b.toString(16).padStart(2, "0")).join("");
}

interface Submission {
  accountId: string;
  maxActiveJobs: number;
  videoUrl: string;
  videoType: VideoType;
  configName: string | null;
}

/** Everything after validation: credits, configuration, slot, insert, enqueue. */
async function createJob(env: Env, submission: Submission): Promise<Job> {
  const usage = await getUsage(env.DB, submission.accountId);
  if (!usage || usage.creditsRemaining <= 0) {
    throw new AppError("insufficient_credits", "No credits left in this period.", {
      extra: { credits_remaining: 0 },
    });
  }
  let config = DEFAULT_CLIP_CONFIG;
  if (submission.configName !== null) {
    const saved = await getConfig(env.DB, submission.accountId, submission.configName);
    if (!saved) throw new AppError("config_not_found", `No saved configuration named "${submission.configName}".`);
    config = saved.config;
  }

  const jobId = newJobId();
  const account = accountState(env, submission.accountId);
  const slot = await account.acquireSlot(jobId, submission.maxActiveJobs);
  if (!slot.ok) {
    throw new AppError("active_job_limit", "The account already has an active job.", {
      extra: { active_job_id: slot.activeJobId },
    });
  }
  const now = new Date().toISOString();
  try {
    await insertJob(env.DB, {
      id: jobId,
      accountId: submission.accountId,
      videoUrl: submission.videoUrl,
      videoType: submission.videoType,
      configName: submission.configName,
      config,
      now,
    });
  } catch (err) {
    await account.releaseSlot(jobId);
    throw err;
  }
  const message: JobMessage = { job_id: jobId, account_id: submission.accountId };
  try {
    await env.JOBS.send(message);
  } catch (err) {
    console.error(`enqueueing ${jobId} failed`, err);
    await deleteQueuedJob(env.DB, jobId);
    await account.releaseSlot(jobId);
    throw new AppError("service_unavailable", "The job could not be queued; nothing was created. Retry shortly.", {
      headers: { "Retry-After": "5" },
    });
  }
  const job = await findAccountJob(env.DB, submission.accountId, jobId);
  if (!job) throw new Error(`job ${jobId} vanished right after insert`);
  return job;
}

function submitResponse(env: Env, job: Job) {
  return {
    ...presentJob(env.CDN_URL, job, []),
    message: "Job queued. Poll GET /api/v1/jobs/" + job.id + " for its status.",
  };
}

export const jobs = new Hono<AppEnv>()
  .post("/", validate("json", SubmitBody), async (c) => {
    const body = c.req.valid("json");
    const { accountId, plan } = c.get("auth");
    const submission: Submission = {
      accountId,
      maxActiveJobs: plan.maxActiveJobs,
      videoUrl: checkVideoUrl(body.video_url, c.env.ALLOW_PRIVATE_SOURCES === "true"),
      videoType: checkVideoType(body.video_type),
      configName: body.config_name ?? null,
    };

    const key = c.req.header(IDEMPOTENCY_HEADER);
    if (key === undefined) {
      const job = await createJob(c.env, submission);
      return c.json(submitResponse(c.env, job), 201);
    }
    if (key.length === 0 || key.length > MAX_IDEMPOTENCY_KEY_LENGTH) {
      throw new AppError("invalid_request", `${IDEMPOTENCY_HEADER} must be 1-${MAX_IDEMPOTENCY_KEY_LENGTH} characters.`);
    }
    // The request as submitted (before normalisation), so "same body" means what the client sent.
    const requestHash = await sha256Hex(
      JSON.stringify([body.video_url, body.video_type, body.config_name ?? null]),
    );
    const now = new Date();
    const expiredBefore = new Date(now.getTime() - IDEMPOTENCY_WINDOW_MS).toISOString();
    const abandonedBefore = new Date(now.getTime() - ABANDONED_CLAIM_MS).toISOString();
    const claimed = await claimIdempotencyKey(c.env.DB, accountId, key, requestHash, now.toISOString(), expiredBefore, abandonedBefore);
    if (!claimed) {
      const record = await findIdempotencyRecord(c.env.DB, accountId, key);
      if (!record || record.requestHash !== requestHash) {
        throw new AppError("idempotency_key_reused", `${IDEMPOTENCY_HEADER} was already used with a different request body.`);
      }
      if (record.status === PENDING_STATUS) {
        throw new AppError("conflict", `A request with this ${IDEMPOTENCY_HEADER} is still in progress; retry shortly.`, {
          headers: { "Retry-After": "1" },
        });
      }
      c.header("Idempotent-Replayed", "true");
      return c.body(record.responseJson, record.status as 201, { "Content-Type": "application/json" });
    }
    try {
      const job = await createJob(c.env, submission);
      const response = submitResponse(c.env, job);
      await storeIdempotentResponse(c.env.DB, accountId, key, 201, JSON.stringify(response));
      return c.json(response, 201);
    } catch (err) {
      // Failures are not remembered: the client may retry the same key.
      await releaseIdempotencyKey(c.env.DB, accountId, key);
      throw err;
    }
  })
  .get("/", validate("query", ListQuery), async (c) => {
    const query = c.req.valid("query");
    const { accountId } = c.get("auth");
    const after = query.cursor === undefined ? null : decodeCursor(query.cursor);
    if (query.cursor !== undefined && after === null) {
      throw new AppError("invalid_request", "cursor is not a cursor this API issued.", {
        errors: [{ path: "cursor", message: "unrecognised cursor" }],
      });
    }
    const rows = await listJobs(c.env.DB, {
      accountId,
      status: query.status === "all" ? null : query.status,
      limit: query.limit + 1,
      after,
    });
    const page = rows.slice(0, query.limit);
    const last = page.at(-1);
    const clipsByJob = await listClipsOfJobs(
      c.env.DB,
      page.filter((job) => job.status === "completed").map((job) => job.id),
    );
    const items = page.map((job) => presentListItem(c.env.CDN_URL, job, clipsByJob.get(job.id) ?? []));
    return c.json({
      jobs: items,
      count: items.length,
      next_cursor: rows.length > query.limit && last ? encodeCursor({ createdAt: last.createdAt, id: last.id }) : null,
    });
  })
  .get("/:job_id", async (c) => {
    const job = await loadOwnJob(c.env.DB, c.get("auth").accountId, c.req.param("job_id"));
    const clips = job.status === "completed" ? await listClips(c.env.DB, job.id) : [];
    return c.json(presentJob(c.env.CDN_URL, job, clips));
  })
  .post("/:job_id/cancel", async (c) => {
    const { accountId } = c.get("auth");
    const job = await loadOwnJob(c.env.DB, accountId, c.req.param("job_id"));
    if (!ACTIVE_STATUSES.includes(job.status)) {
      throw new AppError("job_not_cancelable", `Job ${job.id} is ${job.status}; only queued or processing jobs can be canceled.`);
    }
    await cancelJob(c.env, accountId, job.id);
    // Whoever won the race, answer with the job as it now stands.
    const current = await loadOwnJob(c.env.DB, accountId, job.id);
    if (current.status !== "canceled") {
      throw new AppError("job_not_cancelable", `Job ${job.id} is ${current.status}; it finished before the cancel.`);
    }
    return c.json(presentJob(c.env.CDN_URL, current, []));
  })
  .delete("/:job_id", async (c) => {
    const { accountId } = c.get("auth");
    const job = await loadOwnJob(c.env.DB, accountId, c.req.param("job_id"));
    if (ACTIVE_STATUSES.includes(job.status)) {
      throw new AppError("job_not_deletable", `Job ${job.id} is ${job.status}; cancel it first or wait until it finishes.`);
    }
    // Objects first: if anything fails, the job still exists and DELETE can be retried.
    await deleteJobObjects(c.env.CLIPS, job.id);
    const [, deleted] = await c.env.DB.batch([deleteClipsOfJob(c.env.DB, job.id), deleteFinishedJob(c.env.DB, accountId, job.id)]);
    if ((deleted?.results.length ?? 0) === 0) throw jobNotFound(job.id);
    return c.body(null, 204);
  });
