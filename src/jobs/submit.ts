/**
 * Job submission rules shared by POST /api/v1/jobs and the dashboard's
 * submit form: video type check, credits, saved configuration, the
 * account's active-job slot (its Durable Object), insert and enqueue.
 */
import { accountState } from "../account/stub";
import { getUsage } from "../db/accounts";
import { getConfig } from "../db/configs";
import { deleteQueuedJob, findAccountJob, insertJob, type Job } from "../db/jobs";
import { DEFAULT_CLIP_CONFIG, VIDEO_TYPES, type VideoType } from "../engine/contract";
import { AppError } from "../http/errors";
import type { JobMessage } from "../queue/message";
import { newJobId } from "./ids";

export function checkVideoType(value: string): VideoType {
  const allowed: readonly string[] = VIDEO_TYPES;
  if (allowed.includes(value)) return value as VideoType;
  const detail = `video_type must be one of: ${VIDEO_TYPES.join(", ")}.`;
  throw new AppError("invalid_video_type", detail, {
    errors: [{ path: "video_type", message: detail }],
    extra: { allowed_values: VIDEO_TYPES },
  });
}

export interface Submission {
  accountId: string;
  maxActiveJobs: number;
  videoUrl: string;
  videoType: VideoType;
  configName: string | null;
  /** SRT/WebVTT file for the transcript, already checked like video_url. */
  captionsUrl: string | null;
}

/** Everything after validation: credits, configuration, slot, insert, enqueue. */
export async function createJob(env: Env, submission: Submission): Promise<Job> {
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
      captionsUrl: submission.captionsUrl,
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
