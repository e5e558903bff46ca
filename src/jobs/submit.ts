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
import { claimUploadForJob, unclaimUpload, type ClaimedUpload } from "../uploads/job-source";
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
  /** Ignored when uploadId is set. */
  videoUrl: string;
  /** A direct upload as the source instead of videoUrl. */
  uploadId?: string | null;
  videoType: VideoType;
  configName: string | null;
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
  // The upload first: a second job on the same upload is refused as upload_in_use, whatever the slot says.
  const upload: ClaimedUpload | null = submission.uploadId
    ? await claimUploadForJob(env, submission.accountId, submission.uploadId, jobId)
    : null;
  const giveUploadBack = async () => {
    if (upload) await unclaimUpload(env, upload.uploadId, jobId);
  };
  const account = accountState(env, submission.accountId);
  const slot = await account.acquireSlot(jobId, submission.maxActiveJobs);
  if (!slot.ok) {
    await giveUploadBack();
    throw new AppError("active_job_limit", "The account already has an active job.", {
      extra: { active_job_id: slot.activeJobId },
    });
  }
  const now = new Date().toISOString();
  try {
    await insertJob(env.DB, {
      id: jobId,
      accountId: submission.accountId,
      videoUrl: upload?.videoUrl ?? submission.videoUrl,
      videoType: submission.videoType,
      configName: submission.configName,
      config,
      now,
      uploadId: upload?.uploadId ?? null,
      title: upload?.title ?? null,
    });
  } catch (err) {
    await account.releaseSlot(jobId);
    await giveUploadBack();
    throw err;
  }
  const message: JobMessage = { job_id: jobId, account_id: submission.accountId };
  try {
    await env.JOBS.send(message);
  } catch (err) {
    console.error(`enqueueing ${jobId} failed`, err);
    await deleteQueuedJob(env.DB, jobId);
    await account.releaseSlot(jobId);
    await giveUploadBack();
    throw new AppError("service_unavailable", "The job could not be queued; nothing was created. Retry shortly.", {
      headers: { "Retry-After": "5" },
    });
  }
  const job = await findAccountJob(env.DB, submission.accountId, jobId);
  if (!job) throw new Error(`job ${jobId} vanished right after insert`);
  return job;
}
