/** The jobs resource (SPEC section 4): submit, status, list, cancel, delete. */
import { z } from "@hono/zod-openapi";
import { accountState } from "../account/stub";
import { deleteClipsOfJob, listClipsOfJobs } from "../db/clips";
import {
  claimIdempotencyKey,
  findIdempotencyRecord,
  PENDING_STATUS,
  releaseIdempotencyKey,
} from "../db/idempotency";
import {
  ACTIVE_STATUSES,
  deleteFinishedJob,
  findAccountJob,
  JOB_STATUSES,
  listJobs,
  type Job,
} from "../db/jobs";
import { apiApp, apiRoute, BODY_ERRORS, jsonContent } from "../http/api-app";
import { AppError } from "../http/errors";
import { decodeCursor, encodeCursor } from "../jobs/cursor";
import { isJobId } from "../jobs/ids";
import { cancelJob } from "../jobs/lifecycle";
import { presentJob, presentListItem } from "../jobs/present";
import { readJob, withLiveStates } from "../jobs/read-path";
import { checkCaptionsUrl, checkVideoUrl } from "../jobs/source-url";
import { deleteAllJobObjects } from "../jobs/job-objects";
import { checkVideoType, createJob, type Submission } from "../jobs/submit";
import { Job as JobSchema, JobList, SubmitJobBody, SubmitJobResponse } from "./openapi-schemas";

export const IDEMPOTENCY_HEADER = "Idempotency-Key";
export const MAX_IDEMPOTENCY_KEY_LENGTH = 255;
const IDEMPOTENCY_WINDOW_MS = 24 * 60 * 60 * 1000;
/** A claim older than this belongs to a request that died before answering. */
const ABANDONED_CLAIM_MS = 60 * 1000;

const ListQuery = z.object({
  status: z
    .enum(["all", ...JOB_STATUSES])
    .default("completed")
    .openapi({ description: "Default `completed`; `all` for every status." }),
  // The generator cannot see through z.coerce, so the bounds are restated for the document.
  limit: z.coerce.number().int().min(1).max(100).default(50).openapi({ type: "integer", minimum: 1, maximum: 100, default: 50 }),
  cursor: z.string().optional().openapi({ description: "next_cursor of the previous page" }),
});

/** Any string: an id that is not a job id is simply a job that does not exist (404). */
const JobIdParam = z.object({
  job_id: z.string().openapi({ param: { name: "job_id", in: "path" }, example: "job_7mQ2x9KfT4vLp8sRz3Wc" }),
});

/** @hono/zod-validator matches header names case-insensitively, so the documented spelling is the key. */
const IdempotencyHeaders = z.object({
  [IDEMPOTENCY_HEADER]: z
    .string()
    .min(1)
    .max(MAX_IDEMPOTENCY_KEY_LENGTH)
    .optional()
    .openapi({ description: "Same key and body within 24 hours returns the first response without a new job." }),
});

const submitRoute = apiRoute({
  method: "post",
  path: "/",
  summary: "Submit a video for clipping",
  operationId: "submitJob",
  request: { headers: IdempotencyHeaders, body: { required: true, content: jsonContent(SubmitJobBody) } },
  responses: { 201: { description: "Job queued", content: jsonContent(SubmitJobResponse) } },
}, {
  errors: [
    ...BODY_ERRORS,
    "invalid_video_url",
    "invalid_captions_url",
    "invalid_video_type",
    "invalid_time_range",
    "insufficient_credits",
    "not_found",
    "active_job_limit",
    "conflict",
    "upload_incomplete",
    "upload_in_use",
    "upload_expired",
    "unsupported_language",
    "config_not_found",
    "logo_not_uploaded",
    "idempotency_key_reused",
    "service_unavailable",
    "service_misconfigured",
  ],
});

const listRoute = apiRoute({
  method: "get",
  path: "/",
  summary: "List jobs, newest first",
  operationId: "listJobs",
  request: { query: ListQuery },
  responses: { 200: { description: "A page of jobs", content: jsonContent(JobList) } },
}, {
  errors: ["invalid_request"],
});

const getRoute = apiRoute({
  method: "get",
  path: "/{job_id}",
  summary: "Get a job, shaped by its status",
  operationId: "getJob",
  request: { params: JobIdParam },
  responses: { 200: { description: "The job", content: jsonContent(JobSchema) } },
}, {
  errors: ["not_found"],
});

const cancelRoute = apiRoute({
  method: "post",
  path: "/{job_id}/cancel",
  summary: "Cancel a queued or processing job",
  operationId: "cancelJob",
  request: { params: JobIdParam },
  responses: { 200: { description: "The canceled job", content: jsonContent(JobSchema) } },
}, {
  // No body is needed, but one that is sent passes the same JSON body guard as every POST.
  errors: [...BODY_ERRORS, "not_found", "job_not_cancelable"],
});

const deleteRoute = apiRoute({
  method: "delete",
  path: "/{job_id}",
  summary: "Delete a finished job and its clips",
  operationId: "deleteJob",
  request: { params: JobIdParam },
  responses: { 204: { description: "Deleted" } },
}, {
  errors: ["not_found", "job_not_deletable"],
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

/** The steering fields as sent, for the request hash; nothing when none was sent. */
function steeringHashPart(body: z.output<typeof SubmitJobBody>): unknown[] {
  const sent = {
    prompt: body.prompt,
    time_range: body.time_range,
    remove_silence: body.remove_silence,
    remove_fillers: body.remove_fillers,
  };
  return Object.values(sent).every((v) => v === undefined) ? [] : [{ steering: sent }];
}

function submitResponse(env: Env, job: Job) {
  const shaped = presentJob(env.CDN_URL, job, []);
  // createJob inserts the job queued; anything else would be a bug worth a 500.
  if (shaped.status !== "queued") throw new AppError("internal_error", `A new job is ${shaped.status}, not queued.`);
  return { ...shaped, status: shaped.status, message: "Job queued. Poll GET /api/v1/jobs/" + job.id + " for its status." };
}

export const jobs = apiApp()
  .openapi(submitRoute, async (c) => {
    const body = c.req.valid("json");
    const { accountId, plan } = c.get("auth");
    const submission: Submission = {
      accountId,
      maxActiveJobs: plan.maxActiveJobs,
      videoUrl: body.video_url === undefined ? "" : checkVideoUrl(body.video_url, c.env.ALLOW_PRIVATE_SOURCES === "true"),
      uploadId: body.upload_id ?? null,
      videoType: checkVideoType(body.video_type),
      configName: body.config_name ?? null,
      captionsUrl: body.captions_url == null ? null : checkCaptionsUrl(body.captions_url, c.env.ALLOW_PRIVATE_SOURCES === "true"),
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

    const key = c.req.valid("header")[IDEMPOTENCY_HEADER];
    if (key === undefined) {
      const job = await createJob(c.env, submission);
      return c.json(submitResponse(c.env, job), 201);
    }
    // The request as submitted (before normalisation), so "same body" means what the client sent.
    const requestHash = await sha256Hex(
      // captions_url joins the hash only when sent, so keys stored before it existed still match.
      JSON.stringify([
        ...(body.upload_id === undefined
          ? [body.video_url, body.video_type, body.config_name ?? null]
          : [null, body.video_type, body.config_name ?? null, body.upload_id]),
        ...(body.captions_url == null ? [] : [body.captions_url]),
        // The steering fields join it only when sent, for the same reason (issue 27).
        ...steeringHashPart(body),
        // Likewise the language fields (issue 29), only when sent.
        ...(body.language === undefined && body.caption_language === undefined ? [] : [{ l: body.language, c: body.caption_language }]),
      ]),
    );
    const now = new Date();
    const expiredBefore = new Date(now.getTime() - IDEMPOTENCY_WINDOW_MS).toISOString();
    const abandonedBefore = new Date(now.getTime() - ABANDONED_CLAIM_MS).toISOString();
    const claimId = crypto.randomUUID();
    const claimed = await claimIdempotencyKey(c.env.DB, accountId, key, requestHash, claimId, now.toISOString(), expiredBefore, abandonedBefore);
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
      // Stored by this handler from a SubmitJobResponse; re-serialising yields the same bytes.
      return c.json(JSON.parse(record.responseJson) as z.output<typeof SubmitJobResponse>, 201);
    }
    try {
      const job = await createJob(c.env, submission, { key, claimId, present: (created) => submitResponse(c.env, created) });
      return c.json(submitResponse(c.env, job), 201);
    } catch (err) {
      // Failures are not remembered: the client may retry the same key. A stored
      // answer (the job's batch committed) is kept: only a pending claim is dropped.
      await releaseIdempotencyKey(c.env.DB, accountId, key, claimId);
      throw err;
    }
  })
  .openapi(listRoute, async (c) => {
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
    const page = await withLiveStates(c.env, accountId, rows.slice(0, query.limit));
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
  // Answered from the account's Durable Object where it can be (src/jobs/read-path.ts).
  .openapi(getRoute, async (c) => c.json(await readJob(c, c.req.valid("param").job_id)))
  .openapi(cancelRoute, async (c) => {
    const { accountId } = c.get("auth");
    const job = await loadOwnJob(c.env.DB, accountId, c.req.valid("param").job_id);
    if (!ACTIVE_STATUSES.includes(job.status)) {
      throw new AppError("job_not_cancelable", `Job ${job.id} is ${job.status}; only queued or processing jobs can be canceled.`);
    }
    await cancelJob(c.env, job);
    // Whoever won the race, answer with the job as it now stands.
    const current = await loadOwnJob(c.env.DB, accountId, job.id);
    if (current.status !== "canceled") {
      throw new AppError("job_not_cancelable", `Job ${job.id} is ${current.status}; it finished before the cancel.`);
    }
    return c.json(presentJob(c.env.CDN_URL, current, []));
  })
  .openapi(deleteRoute, async (c) => {
    const { accountId } = c.get("auth");
    const job = await loadOwnJob(c.env.DB, accountId, c.req.valid("param").job_id);
    if (ACTIVE_STATUSES.includes(job.status)) {
      throw new AppError("job_not_deletable", `Job ${job.id} is ${job.status}; cancel it first or wait until it finishes.`);
    }
    // The cached view goes first, and no read may cache it again (src/jobs/read-path.ts).
    await accountState(c.env, accountId).forgetJob(job.id);
    // Objects first (the published ones stop being served at once, up to the CDN's cache time):
    // if anything fails, the job still exists and DELETE can be retried.
    await deleteAllJobObjects(c.env, job.id);
    const [, deleted] = await c.env.DB.batch([deleteClipsOfJob(c.env.DB, job.id), deleteFinishedJob(c.env.DB, accountId, job.id)]);
    if ((deleted?.results.length ?? 0) === 0) throw jobNotFound(job.id);
    return c.body(null, 204);
  });
