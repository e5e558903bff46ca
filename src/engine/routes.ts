/**
 * Direction 2 of the engine channel (#contract): the routes the engine calls
 * under /internal/v1/jobs/:job_id. Only a per-job token signed by this Worker
 * opens them; API keys and the admin token never do. Once the job is no
 * longer processing every route answers 409 job_not_active, which tells the
 * engine to stop.
 */
import { Hono } from "hono";
import { createMiddleware } from "hono/factory";
import { z } from "zod";
import { accountState } from "../account/stub.ts";
import { chargeableSeconds, creditsForDuration, reserveJobCredits } from "../db/credits.ts";
import { claimPublicationKey, findJob, recordProbe, type Job } from "../db/jobs.ts";
import type { Report } from "../account/live-jobs.ts";
import type { AppEnv } from "../http/app-env.ts";
import { bearerToken } from "../http/auth.ts";
import { AppError } from "../http/errors.ts";
import { validate } from "../http/validate.ts";
import { completeJob, failJob, requeueAfterInterruption, resettle, type CompletionOutcome } from "../jobs/lifecycle.ts";
import { dropStagedClip, stageClip } from "../jobs/clip-staging.ts";
import { newPublicationKey, publishedKey, StagedObjectMissing } from "../jobs/publication.ts";
import { privateBucket, stagedKey, THUMBNAIL_CONTENT_TYPE } from "../jobs/storage.ts";
import {
  CALLBACK_PREFIX,
  CompleteReport,
  FailReport,
  InterruptedReport,
  MAX_CLIP_UPLOAD_BYTES,
  MAX_ENGINE_REPORT_BYTES,
  ProgressReport,
  ProbeReport,
  type CallbackAck,
  type ProbeAck,
} from "#contract";
import { keepEngineAwake } from "../fleet/engine-host.ts";
import { silenceTimeoutSeconds } from "../settings.ts";
import { jobNotActive as notActive, liveProcessingJob, processingJobInD1 } from "./live-job.ts";
import { similarityChannel } from "./similarity-channel.ts";
import { rememberJobAccount } from "./job-accounts.ts";
import { brandChannel } from "./brand-channel.ts";
import { judgeChannel } from "./judge-channel.ts";
import { speechChannel, speechUploadKeys } from "./speech-channel.ts";
import { scopeOf } from "./scopes.ts";
import { readBodyCapped } from "../http/capped-body.ts";
import { completionTimes } from "./stage-timings.ts";
import { verifyEngineToken } from "./token.ts";
import { editCallback } from "./edit-channel.ts";
import { uploadSource } from "./source-channel.ts";

interface CallbackEnv {
  Bindings: Env;
  Variables: AppEnv["Variables"] & { job: Job };
}

const ACK: CallbackAck = { ok: true };

function insufficientCredits(needed: number) {
  return {
    code: "insufficient_credits" as const,
    message: `The source needs ${needed} credits, more than the account has left.`,
  };
}

/**
 * A time_range that leaves less than a clip of the source: known
 * only once the source's length is, so the job fails after the probe,
 * before anything is reserved.
 */
function rangeOutsideSource(job: Job, durationSeconds: number) {
  const range = job.timeRange ?? null;
  if (!range) return null;
  const inside = chargeableSeconds(durationSeconds, range);
  if (inside >= job.config.min_clip_seconds) return null;
  const source = `The video is ${durationSeconds.toFixed(1)} s long`;
  const message =
    inside <= 0
      ? `${source}; time_range starts at ${range.start_seconds} s, after its end.`
      : `${source}; time_range leaves ${inside.toFixed(1)} s of it, less than the ${job.config.min_clip_seconds} s minimum clip length.`;
  return { code: "time_range_outside_source" as const, message };
}

function uploadsMissing(keys: readonly string[]): AppError {
  return new AppError("invalid_request", `Uploads missing before completion: ${keys.join(", ")}.`, {
    errors: keys.map((key) => ({ path: "clips", message: `${key} was not uploaded` })),
  });
}

function badToken(): AppError {
  return new AppError("unauthorized", "A valid engine token for this job is required.", {
    headers: { "WWW-Authenticate": 'Bearer realm="clipjobs-engine"' },
  });
}

/**
 * Token first: a 401 comes before anything about the job leaks. The token
 * must be this job's, unexpired, and carry the scope of the route called
 * (scopes.ts); a route in no scope is opened by no token.
 */
const engineToken = createMiddleware<CallbackEnv>(async (c, next) => {
  const jobId = c.req.param("job_id") ?? "";
  const token = bearerToken(c.req.header("Authorization"));
  const subpath = c.req.path.slice(`${CALLBACK_PREFIX}/${jobId}/`.length);
  const scope = scopeOf(c.req.method, subpath);
  const claims = token && scope !== null ? await verifyEngineToken(c.env.CALLBACK_TOKEN_SECRET, token, jobId, scope) : null;
  if (!claims) throw badToken();
  // A clip edit's token opens that edit's routes only (jobs/clip-edit/channel.ts), never the job's.
  if (claims.edit_id !== undefined) return editCallback(c.env, c.req.raw, jobId, claims.edit_id, subpath);
  await next();
});

/**
 * A report's body, read (counting) up to MAX_ENGINE_REPORT_BYTES before
 * anything else looks at it, with or without Content-Length; the validator
 * after it reads the bytes that passed.
 */
const reportBody = createMiddleware<CallbackEnv>(async (c, next) => {
  c.req.raw = new Request(c.req.raw, { body: await readBodyCapped(c.req.raw, MAX_ENGINE_REPORT_BYTES) });
  await next();
});

/** Transitions (probe, complete, fail, interrupted) check the job against D1, the durable record. */
const processingInD1 = createMiddleware<CallbackEnv>(async (c, next) => {
  c.set("job", await processingJobInD1(c.env, c.req.param("job_id") ?? ""));
  await next();
});

/**
 * Completion is idempotent: a retried /complete whose first answer was lost
 * (the engine timed out) finds the job completed, redoes what the end
 * released (anything the first attempt left undone) and is answered as the
 * first would have been.
 */
const processingOrCompletedInD1 = createMiddleware<CallbackEnv>(async (c, next) => {
  const jobId = c.req.param("job_id") ?? "";
  const job = await findJob(c.env.DB, jobId);
  if (job?.status === "completed") {
    await resettle(c.env, job);
    return c.json(ACK);
  }
  if (job?.status !== "processing") throw notActive(jobId);
  rememberJobAccount(job.id, job.accountId);
  c.set("job", job);
  await next();
});

/**
 * Every report is a sign of life, kept in the account's Durable Object only
 * (live-job.ts): it re-arms the watchdog; it also keeps the engine's
 * container awake.
 */
async function noteSignOfLife(env: Env, jobId: string, report: Report = {}): Promise<void> {
  await liveProcessingJob(env, jobId, report);
  await keepEngineAwake(env, jobId);
}

const ClipIndexParam = z.object({
  job_id: z.string(),
  // Decimal digits only: coercion alone would read " " or "0x1" as an index.
  index: z.string().regex(/^\d{1,2}$/).transform(Number).pipe(z.number().int().min(0).max(19)),
});

/**
 * An engine upload's body and declared length. R2 needs the length up front,
 * so Content-Length is required (and capped).
 */
function uploadBody(request: Request): { body: ReadableStream<Uint8Array>; length: number } {
  const declared = request.headers.get("content-length");
  const length = declared === null ? Number.NaN : Number(declared);
  if (!Number.isInteger(length) || length <= 0) {
    throw new AppError("invalid_request", "Uploads need a positive Content-Length.");
  }
  if (length > MAX_CLIP_UPLOAD_BYTES) {
    throw new AppError("payload_too_large", `Uploads are limited to ${MAX_CLIP_UPLOAD_BYTES} bytes.`);
  }
  if (!request.body) throw new AppError("invalid_request", "The upload has no body.");
  return { body: request.body, length };
}

/**
 * Streams a thumbnail into the private bucket at its staging key (storage.ts):
 * nothing the engine uploads is public before completion publishes it. An
 * upload that raced a cancel is removed again, so no object outlives its job.
 */
async function storeUpload(env: Env, jobId: string, request: Request, key: string, contentType: string): Promise<void> {
  const { body, length } = uploadBody(request);
  await liveProcessingJob(env, jobId, null);
  const sized = new FixedLengthStream(length);
  const [, stored] = await Promise.all([
    body.pipeTo(sized.writable),
    privateBucket(env).put(key, sized.readable, {
      httpMetadata: { contentType },
      customMetadata: { job_id: jobId },
    }),
  ]);
  if (!stored) throw new AppError("internal_error", `Storing ${key} failed.`);
  // The job may have ended while the body streamed; its clean-up may have missed this object.
  try {
    await liveProcessingJob(env, jobId, {});
  } catch (err) {
    await privateBucket(env).delete(key);
    throw err;
  }
}

/**
 * Publication keys this isolate has claimed: a key never changes once set, so
 * a job's later clip uploads cost no D1 round trip (the first one per isolate
 * claims it). Bounded; a forgotten key is claimed again, which returns it.
 */
const claimedKeys = new Map<string, string>();

async function publicationKeyOf(env: Env, jobId: string): Promise<string> {
  const known = claimedKeys.get(jobId);
  if (known) return known;
  // The key is the job's from now on; claiming it fails once the job is no longer processing.
  const claimed = await claimPublicationKey(env.DB, jobId, newPublicationKey());
  if (claimed === null) throw notActive(jobId);
  if (claimedKeys.size >= 1000) claimedKeys.clear();
  claimedKeys.set(jobId, claimed);
  return claimed;
}

/**
 * A clip's video, staged as an incomplete upload at its published key
 * (jobs/clip-staging.ts), so that completion publishes it without a copy.
 */
async function storeClip(env: Env, jobId: string, index: number, request: Request): Promise<void> {
  const { body, length } = uploadBody(request);
  await liveProcessingJob(env, jobId, null);
  const publicationKey = await publicationKeyOf(env, jobId);
  await stageClip(env, jobId, index, await publishedKey(publicationKey, index, "clip"), body, length);
  // The job may have ended while the body streamed; its clean-up may have missed this upload.
  try {
    await liveProcessingJob(env, jobId, {});
  } catch (err) {
    await dropStagedClip(env, jobId, index);
    throw err;
  }
}

export const callbacks = new Hono<CallbackEnv>()
  .use("/:job_id/*", engineToken)
  .post("/:job_id/progress", reportBody, validate("json", ProgressReport), async (c) => {
    const jobId = c.req.param("job_id");
    const report = c.req.valid("json");
    await noteSignOfLife(c.env, jobId, { progress: report.progress, step: report.step });
    return c.json(ACK);
  })
  .post("/:job_id/probe", reportBody, processingInD1, validate("json", ProbeReport), async (c) => {
    const job = c.get("job");
    const report = c.req.valid("json");
    if (!(await recordProbe(c.env.DB, job.id, report.title, report.duration_seconds, new Date().toISOString()))) {
      throw notActive(job.id);
    }
    const account = accountState(c.env, job.accountId);
    if (!(await account.jobProbed(job.id, report.title, report.duration_seconds, silenceTimeoutSeconds(c.env)))) {
      // The Durable Object missed a transition: D1 has just said processing.
      await account.seedJob({ ...job, title: report.title, sourceDurationSeconds: report.duration_seconds });
      await account.engineReport(job.id, {}, silenceTimeoutSeconds(c.env));
    }
    await keepEngineAwake(c.env, job.id);
    const outside = rangeOutsideSource(job, report.duration_seconds);
    if (outside) {
      await failJob(c.env, { ...job, title: report.title, sourceDurationSeconds: report.duration_seconds }, ["processing"], outside, { engineReported: true });
      return c.json({ proceed: false, credits_reserved: 0, error: outside } satisfies ProbeAck);
    }
    // With a time_range, only its length inside the source is charged.
    const needed = creditsForDuration(chargeableSeconds(report.duration_seconds, job.timeRange ?? null));
    const reservation = await reserveJobCredits(c.env.DB, job.id, needed);
    if (reservation.ok) {
      return c.json({ proceed: true, credits_reserved: reservation.credits } satisfies ProbeAck);
    }
    const error = insufficientCredits(needed);
    await failJob(c.env, { ...job, title: report.title, sourceDurationSeconds: report.duration_seconds }, ["processing"], error, {
      engineReported: true,
    });
    return c.json({ proceed: false, credits_reserved: 0, error } satisfies ProbeAck);
  })
  .route("/", speechChannel)
  .route("/", similarityChannel)
  .route("/", brandChannel) // POST /:job_id/translate, GET /:job_id/logo
  .route("/", judgeChannel) // POST /:job_id/judge (docs/judgement.md)
  .put("/:job_id/clips/:index", validate("param", ClipIndexParam), async (c) => {
    const { job_id: jobId, index } = c.req.valid("param");
    await storeClip(c.env, jobId, index, c.req.raw);
    await keepEngineAwake(c.env, jobId);
    return c.json(ACK);
  })
  .put("/:job_id/clips/:index/thumbnail", validate("param", ClipIndexParam), async (c) => {
    const { job_id: jobId, index } = c.req.valid("param");
    await storeUpload(c.env, jobId, c.req.raw, stagedKey(jobId, index, "thumbnail"), THUMBNAIL_CONTENT_TYPE);
    await keepEngineAwake(c.env, jobId);
    return c.json(ACK);
  })
  .post("/:job_id/complete", reportBody, processingOrCompletedInD1, validate("json", CompleteReport), async (c) => {
    const arrived = Date.now();
    const job = c.get("job");
    const report = c.req.valid("json");
    const indexes = report.clips.map((clip) => clip.index);
    if (new Set(indexes).size !== indexes.length) {
      throw new AppError("invalid_request", "Clip indexes must be unique.");
    }
    const keys = report.clips.flatMap((clip) => [stagedKey(job.id, clip.index, "clip"), stagedKey(job.id, clip.index, "thumbnail")]);
    keys.push(...speechUploadKeys(job.id, report));
    const heads = await Promise.all(keys.map((key) => privateBucket(c.env).head(key)));
    const missing = keys.filter((_, i) => heads[i] === null);
    if (missing.length > 0) throw uploadsMissing(missing);
    // Completing without a probe: the charge is checked against the balance exactly as a
    // probe's reservation is (reserveJobCredits finds an existing reservation and keeps it).
    const chargedSeconds = chargeableSeconds(report.source_duration_seconds, job.timeRange ?? null);
    let reserved = job.creditsReserved;
    if (reserved <= 0) {
      const needed = creditsForDuration(chargedSeconds);
      const reservation = await reserveJobCredits(c.env.DB, job.id, needed);
      if (!reservation.ok) {
        await failJob(c.env, job, ["processing"], insufficientCredits(needed), { engineReported: true });
        throw notActive(job.id);
      }
      reserved = reservation.credits;
    }
    const clips = [...report.clips].sort((a, b) => a.index - b.index);
    let outcome: CompletionOutcome;
    try {
      outcome = await completeJob(c.env, { ...job, creditsReserved: reserved }, {
        title: report.title,
        sourceDurationSeconds: report.source_duration_seconds,
        clips,
        transcript: report.transcript,
        transcriptUnavailableReason: report.transcript_unavailable_reason,
        translation: report.translation,
        judgement: report.judgement,
        chapters: report.chapters,
        chargedSeconds,
      });
    } catch (err) {
      if (!(err instanceof StagedObjectMissing)) throw err;
      // Deleted between the check above and the copy: by the clean-up of another attempt's completion
      // (answered as that completion), of a cancel (409), or never stored (400).
      const status = (await findJob(c.env.DB, job.id))?.status;
      if (status === "completed") return c.json(ACK);
      if (status !== "processing") throw notActive(job.id);
      throw uploadsMissing([err.message]);
    }
    if (outcome === "inactive") throw notActive(job.id);
    // Overtaken by another attempt of the same completion (the engine's retry): answered as that one was.
    if (outcome === "completed_by_another") return c.json(ACK);
    if (outcome === "completed") {
      // Where the job's time went, one line per completed job (container/README.md "Where a job's time goes").
      const times = completionTimes(Date.parse(job.createdAt), report.timings, { start: arrived, end: Date.now() });
      console.log(JSON.stringify({ event: "job_completed", job_id: job.id, account_id: job.accountId, clips: clips.length, ...times }));
    }
    if (outcome === "publishing") {
      // Large clips: publishing goes on with the engine's next call. A sign of life meanwhile.
      await noteSignOfLife(c.env, job.id);
      throw new AppError("completion_in_progress", "The clips are still being published; send the same completion again.", {
        headers: { "Retry-After": "1" },
      });
    }
    return c.json(ACK);
  })
  .post("/:job_id/fail", reportBody, processingInD1, validate("json", FailReport), async (c) => {
    const job = c.get("job");
    const report = c.req.valid("json");
    const failed = await failJob(c.env, job, ["processing"], report, { engineReported: true });
    if (!failed) throw notActive(job.id);
    return c.json(ACK);
  })
  // The engine is being stopped (a redeploy): the job goes back to the queue instead of failing.
  .post("/:job_id/interrupted", reportBody, processingInD1, validate("json", InterruptedReport), async (c) => {
    const job = c.get("job");
    const outcome = await requeueAfterInterruption(c.env, job);
    if (outcome === "inactive") throw notActive(job.id);
    return c.json(ACK);
  })
  .route("/", uploadSource); // GET /:job_id/source: an upload job's source (behind engineToken above)
