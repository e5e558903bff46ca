/** The jobs resource (SPEC section 4): submit, status, list, cancel, delete. */
import { z } from "@hono/zod-openapi";
import { accountState } from "../account/stub.ts";
import { deleteClipsOfJob } from "../db/clips.ts";
import { rememberDeletedPublication } from "../db/deleted-publications.ts";
import { ACTIVE_STATUSES, deleteFinishedJob, JOB_STATUSES } from "../db/jobs.ts";
import { apiApp, apiRoute, BODY_ERRORS, jsonContent } from "../http/api-app.ts";
import { AppError } from "../http/errors.ts";
import { MAX_WAIT_SECONDS, preferredWaitSeconds } from "../http/prefer.ts";
import { cancelOwnJob, jobNotFound, listJobPage, loadOwnJob } from "../jobs/account-jobs.ts";
import { readJobHeld } from "../jobs/held-read.ts";
import { readJob } from "../jobs/read-path.ts";
import { deleteAllJobObjects } from "../jobs/job-objects.ts";
import { releaseJobUpload } from "../uploads/job-source.ts";
import { IdempotencyKey, SubmitJobBody } from "../jobs/submit-contract.ts";
import { submitJob } from "../jobs/submit-request.ts";
import { Job as JobSchema, JobList, SubmitJobResponse } from "./openapi-schemas.ts";

export const IDEMPOTENCY_HEADER = "Idempotency-Key";

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
  [IDEMPOTENCY_HEADER]: IdempotencyKey.optional(),
});

/**
 * RFC 7240. Only a string: a preference the service cannot use is ignored,
 * never refused, so validation must not fail on it (src/http/prefer.ts reads it).
 */
const PreferHeaders = z.object({
  Prefer: z
    .string()
    .optional()
    .openapi({
      description:
        `\`wait=N\` (seconds, 1-${MAX_WAIT_SECONDS}; more is cut to ${MAX_WAIT_SECONDS}): unless the job is already completed, failed or canceled, ` +
        "the answer waits until it is, or N seconds pass, and then shows the job as it is at that moment. " +
        "The held request counts once in the request window. Anything else is ignored.",
      example: "wait=60",
    }),
});

const PREFERENCE_APPLIED_DOC = {
  "Preference-Applied": {
    description: "`wait=N` when the request's wait preference was honoured, with the N used; absent when the request was answered without it.",
    schema: { type: "string" as const },
  },
};

const submitRoute = apiRoute({
  method: "post",
  path: "/",
  summary: "Submit a video for clipping",
  description:
    "The one submission contract: the MCP tool submit_job takes the same members (with idempotency_key as an argument) and the dashboard's form is read into it, with the same checks and the same problem codes on every surface. A member it does not know is refused (400 invalid_request), as in a saved configuration.",
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
  description: "With `Prefer: wait=N`, a long poll: the answer comes as soon as the job ends, or after N seconds.",
  operationId: "getJob",
  request: { params: JobIdParam, headers: PreferHeaders },
  responses: { 200: { description: "The job", headers: PREFERENCE_APPLIED_DOC, content: jsonContent(JobSchema) } },
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

export const jobs = apiApp()
  .openapi(submitRoute, async (c) => {
    const { answer, replayed } = await submitJob(c.env, c.get("auth"), c.req.valid("json"), c.req.valid("header")[IDEMPOTENCY_HEADER]);
    if (replayed) c.header("Idempotent-Replayed", "true");
    return c.json(answer, 201);
  })
  .openapi(listRoute, async (c) => {
    const { status, limit, cursor } = c.req.valid("query");
    const page = await listJobPage(c.env, c.get("auth").accountId, { status: status === "all" ? null : status, limit, ...(cursor === undefined ? {} : { cursor }) });
    return c.json(page);
  })
  // Answered from the account's Durable Object where it can be (src/jobs/read-path.ts), held there with Prefer: wait (src/jobs/held-read.ts).
  .openapi(getRoute, async (c) => {
    const scope = { env: c.env, accountId: c.get("auth").accountId, waitUntil: (work: Promise<unknown>) => c.executionCtx.waitUntil(work) };
    const jobId = c.req.valid("param").job_id;
    const waitSeconds = preferredWaitSeconds(c.req.valid("header").Prefer);
    if (waitSeconds === null) return c.json(await readJob(scope, jobId, c.get("liveJob")));
    const { job, appliedSeconds } = await readJobHeld(scope, jobId, c.get("liveJob"), waitSeconds);
    if (appliedSeconds !== null) c.header("Preference-Applied", `wait=${appliedSeconds}`);
    return c.json(job);
  })
  .openapi(cancelRoute, async (c) => c.json(await cancelOwnJob(c.env, c.get("auth").accountId, c.req.valid("param").job_id)))
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
    // A completed upload job's kept source goes with it (docs/editing.md).
    if (job.uploadId !== null) await releaseJobUpload(c.env, job.id, job.uploadId);
    // The publication key outlives the row, for the sweep (src/jobs/deleted-publications.ts): a completion attempt
    // still writing may add objects after the clean-up above.
    const [, , deleted] = await c.env.DB.batch([
      rememberDeletedPublication(c.env.DB, accountId, job.id, new Date().toISOString()),
      deleteClipsOfJob(c.env.DB, job.id),
      deleteFinishedJob(c.env.DB, accountId, job.id),
    ]);
    if ((deleted?.results.length ?? 0) === 0) throw jobNotFound(job.id);
    return c.body(null, 204);
  });
