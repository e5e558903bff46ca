/** The jobs resource (SPEC section 4): submit, status, list, cancel, delete. */
import { Hono } from "hono";
import { z } from "zod";
import { accountState } from "../account/stub";
import { deleteClipsOfJob, listClipsOfJobs } from "../db/clips";
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
  findAccountJob,
  JOB_STATUSES,
  listJobs,
  type Job,
} from "../db/jobs";
import type { AppEnv } from "../http/app-env";
import { AppError } from "../http/errors";
import { validate } from "../http/validate";
import { decodeCursor, encodeCursor } from "../jobs/cursor";
import { isJobId } from "../jobs/ids";
import { cancelJob } from "../jobs/lifecycle";
import { presentJob, presentListItem } from "../jobs/present";
import { answerJobRead } from "../jobs/read-path";
import { checkVideoUrl } from "../jobs/source-url";
import { deleteJobObjects } from "../jobs/storage";
import { checkVideoType, createJob, type Submission } from "../jobs/submit";

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
  .get("/:job_id", (c) => answerJobRead(c, c.req.param("job_id")))
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
    // The cached view goes first, and no read may cache it again (src/jobs/read-path.ts).
    await accountState(c.env, accountId).forgetJob(job.id);
    // Objects first: if anything fails, the job still exists and DELETE can be retried.
    await deleteJobObjects(c.env.CLIPS, job.id);
    const [, deleted] = await c.env.DB.batch([deleteClipsOfJob(c.env.DB, job.id), deleteFinishedJob(c.env.DB, accountId, job.id)]);
    if ((deleted?.results.length ?? 0) === 0) throw jobNotFound(job.id);
    return c.body(null, 204);
  });
