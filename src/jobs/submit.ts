/**
 * Job submission rules shared by POST /api/v1/jobs and the dashboard's
 * submit form: video type check, credits, saved configuration, the
 * account's active-job slot (its Durable Object), insert and enqueue.
 */
import { accountState } from "../account/stub.ts";
import { getUsage } from "../db/accounts.ts";
import { editPending } from "../db/clip-edits.ts";
import { getConfig } from "../db/configs.ts";
import { claimHeldGuard, deleteIdempotencyRecord, holdsClaim, storeIdempotentResponseStatement } from "../db/idempotency.ts";
import { ACTIVE_STATUSES, deleteQueuedJob, findJob, insertJobStatement, queuedJob, type Job, type NewJob } from "../db/jobs.ts";
import { engineConfigProblem, engineLimits, maxQueueSeconds, misconfiguredVariable } from "../settings.ts";
import { DEFAULT_CLIP_CONFIG, VIDEO_TYPES, type ClipConfig, type VideoType } from "#contract";
import { findLogo } from "../db/logos.ts";
import { DomainError } from "../domain/errors.ts";
import type { JobMessage } from "../fleet/job-message.ts";
import { deleteUndispatchedJobEvents } from "../db/webhooks.ts";
import { dispatchJobEvents, eventWritten, jobEventStatement, newTransitionId } from "./outbox.ts";
import { claimUploadForJob, unclaimUpload, type ClaimedUpload } from "../uploads/job-source.ts";
import { newJobId } from "./ids.ts";
import { checkTimeRange, steeredConfig, type SteeringInput } from "./steering.ts";

export function checkVideoType(value: string): VideoType {
  const allowed: readonly string[] = VIDEO_TYPES;
  if (allowed.includes(value)) return value as VideoType;
  const detail = `video_type must be one of: ${VIDEO_TYPES.join(", ")}.`;
  throw new DomainError("invalid_video_type", detail, {
    errors: [{ path: "video_type", message: detail }],
    extra: { allowed_values: VIDEO_TYPES },
  });
}

export interface Submission {
  accountId: string;
  maxActiveJobs: number;
  /** Ignored when uploadId is set. */
  videoUrl: string;
  /** A direct upload as the source instead of videoUrl. */
  uploadId?: string | null;
  videoType: VideoType;
  configName: string | null;
  /** SRT/WebVTT file for the transcript, already checked like video_url. */
  captionsUrl: string | null;
  /** prompt, time_range and removal settings sent with the job. */
  steering?: SteeringInput;
  /** `language` / `caption_language` sent with the submission: they override the configuration's. */
  languages?: Partial<Pick<ClipConfig, "language" | "caption_language">>;
}

/**
 * A slot is taken just before its job's row is inserted: a holder missing
 * from D1 is only stale once this much older than that.
 */
const SLOT_INSERT_GRACE_MS = 60_000;

/**
 * Takes the account's active-job slot. A slot held by a job that D1 says has
 * ended (or that never made it into D1: a failed insert whose clean-up failed
 * too) is freed first, so an account can never stay stuck on 409
 * active_job_limit.
 */
async function acquireSlot(env: Env, accountId: string, jobId: string, maxActive: number): Promise<void> {
  const account = accountState(env, accountId);
  let slot = await account.acquireSlot(jobId, maxActive);
  if (!slot.ok) {
    let freed = false;
    for (const { jobId: holder, acquiredAtMs } of await account.heldSlots()) {
      // A clip edit holds a slot by its edit id (clip-edit/dispatch.ts): stale once it is no longer pending.
      const held = holder.startsWith("edit_") ? null : await findJob(env.DB, holder);
      const stale = holder.startsWith("edit_")
        ? Date.now() - acquiredAtMs > SLOT_INSERT_GRACE_MS && !(await editPending(env.DB, holder))
        : held
          ? !ACTIVE_STATUSES.includes(held.status)
          : Date.now() - acquiredAtMs > SLOT_INSERT_GRACE_MS;
      if (stale) {
        console.warn(`freeing the slot of ${holder}: ${held ? held.status : "missing or ended"} in D1`);
        await account.jobEnded(holder); // slot, deadline and live state
        freed = true;
      }
    }
    if (freed) slot = await account.acquireSlot(jobId, maxActive);
  }
  if (!slot.ok) {
    throw new DomainError("active_job_limit", "The account already has an active job.", {
      extra: { active_job_id: slot.activeJobId },
    });
  }
}

/** A clean-up Durable Object call, tried up to three times; a last failure is logged, not thrown. */
async function endWithRetries(call: () => Promise<void>, what: string): Promise<void> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await call();
    } catch (err) {
      if (attempt >= 3) return void console.error(`${what} failed ${attempt} times`, err);
    }
  }
}

/**
 * An Idempotency-Key this request has claimed: the answer is stored in the same
 * D1 batch as the job, so a retry finds the first job whatever fails afterwards.
 */
export interface IdempotentAnswer {
  key: string;
  /** This request's claim on the key: the job is only written while it still stands. */
  claimId: string;
  /** The 201 body for the new job. */
  present(job: Job): unknown;
}

/** Everything after validation: credits, configuration, slot, insert, enqueue. */
export async function createJob(env: Env, submission: Submission, idempotent?: IdempotentAnswer): Promise<Job> {
  const problem = engineConfigProblem(env);
  if (problem) {
    console.error(`refusing submissions: ${problem}`);
    throw new DomainError("service_misconfigured", "The service cannot run jobs until its operator fixes its configuration.", {
      headers: { "Retry-After": "300" },
      extra: { configuration_error: misconfiguredVariable(problem) },
    });
  }
  const usage = await getUsage(env.DB, submission.accountId);
  if (!usage || usage.creditsRemaining <= 0) {
    throw new DomainError("insufficient_credits", "No credits left in this period.", {
      extra: { credits_remaining: 0 },
    });
  }
  let config = DEFAULT_CLIP_CONFIG;
  if (submission.configName !== null) {
    const saved = await getConfig(env.DB, submission.accountId, submission.configName);
    if (!saved) throw new DomainError("config_not_found", `No saved configuration named "${submission.configName}".`);
    config = saved.config;
  }
  config = { ...config, ...submission.languages };
  config = steeredConfig(config, submission.steering ?? {});
  const timeRange = checkTimeRange(submission.steering?.timeRange, config, engineLimits(env).max_source_seconds);
  if (config.logo_position !== "off" && !(await findLogo(env.DB, submission.accountId))) {
    throw new DomainError(
      "logo_not_uploaded",
      `The configuration places a logo (logo_position ${config.logo_position}) but this account has none: upload it with PUT /api/v1/logo.`,
    );
  }

  const jobId = newJobId();
  // The upload first: a second job on the same upload is refused as upload_in_use, whatever the slot says.
  const upload: ClaimedUpload | null = submission.uploadId
    ? await claimUploadForJob(env, submission.accountId, submission.uploadId, jobId)
    : null;
  const giveUploadBack = async () => {
    if (upload) await unclaimUpload(env, upload.uploadId, jobId);
  };
  const account = accountState(env, submission.accountId);
  try {
    await acquireSlot(env, submission.accountId, jobId, submission.maxActiveJobs);
  } catch (err) {
    await giveUploadBack();
    throw err;
  }
  const row: NewJob = {
    id: jobId,
    accountId: submission.accountId,
    videoUrl: upload?.videoUrl ?? submission.videoUrl,
    videoType: submission.videoType,
    configName: submission.configName,
    config,
    now: new Date().toISOString(),
    uploadId: upload?.uploadId ?? null,
    title: upload?.title ?? null,
    captionsUrl: submission.captionsUrl ?? null,
    timeRange,
  };
  const job = queuedJob(row);
  // The job and its job.queued event in one batch (the outbox); the event goes out once the job is queued.
  const transitionId = newTransitionId();
  const event = jobEventStatement(env, { id: transitionId, type: "job.queued", job, at: row.now });
  const writes = [insertJobStatement(env.DB, row, transitionId), event];
  if (idempotent) {
    const answer = JSON.stringify(idempotent.present(job));
    // First: the batch rolls back whole unless this request still holds the key.
    writes.unshift(claimHeldGuard(env.DB, submission.accountId, idempotent.key, idempotent.claimId));
    writes.push(storeIdempotentResponseStatement(env.DB, submission.accountId, idempotent.key, idempotent.claimId, 201, answer));
  }
  let written: boolean;
  try {
    written = eventWritten((await env.DB.batch(writes))[writes.indexOf(event)]);
  } catch (err) {
    await account.releaseSlot(jobId);
    await giveUploadBack();
    if (idempotent && !(await holdsClaim(env.DB, submission.accountId, idempotent.key, idempotent.claimId).catch(() => true))) {
      throw new DomainError("conflict", "Another request with this Idempotency-Key took it over while this one was in progress; retry to get its answer.", {
        headers: { "Retry-After": "1" },
      });
    }
    throw err;
  }
  const message: JobMessage = { job_id: jobId, account_id: submission.accountId };
  try {
    // Its live state (what reads answer from) starts in the account's Durable
    // Object before the consumer can move it, with a deadline: queue_timeout
    // if no engine frees up in time.
    await account.jobAccepted(job, maxQueueSeconds(env));
    await env.JOBS.send(message);
  } catch (err) {
    console.error(`enqueueing ${jobId} failed`, err);
    // Its event goes with it, undispatched: a job that was never created has no events.
    await env.DB.batch([deleteUndispatchedJobEvents(env.DB, jobId), deleteQueuedJob(env.DB, jobId)]);
    // The job is gone, so its stored answer must go too: the client may retry the key.
    if (idempotent) await deleteIdempotencyRecord(env.DB, submission.accountId, idempotent.key, idempotent.claimId);
    // Slot, deadline and live state go together. The failure above may be the
    // account's object resetting (a deploy): its errors are retryable, so a
    // few tries; if all fail the slot's holder is missing from D1 and the next
    // submission frees it (acquireSlot). Either way the answer stays the 503.
    await endWithRetries(() => account.jobEnded(jobId), `releasing the slot of unqueued ${jobId}`);
    await giveUploadBack();
    throw new DomainError("service_unavailable", "The job could not be queued; nothing was created. Retry shortly.", {
      headers: { "Retry-After": "5" },
    });
  }
  if (written) await dispatchJobEvents(env, jobId);
  return job;
}
