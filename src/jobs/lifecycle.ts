/**
 * Job state transitions: the one writer of a job's status after submission.
 * Each end state is reached by one D1 batch whose statements are all guarded
 * by the job's current status: the credit movement and the transition either
 * both apply or neither does. Whoever's batch matched (cancel, watchdog,
 * engine callback, queue consumer) runs the follow-up exactly once: the
 * account's slot and deadline, the fleet's capacity (in the same step), R2
 * cleanup, and stopping the job's engine instance.
 */
import { accountState } from "../account/stub";
import type { ClipReport, FailureCode, TranscriptSummary } from "#contract";
import { stopEngine } from "../fleet/engine-host";
import { maxQueueSeconds } from "../settings";
import { insertClipWhileProcessing } from "../db/clips";
import { chargeJobCredits, creditsForDuration, releaseJobCredits } from "../db/credits";
import {
  finishCompleted,
  finishUnsuccessful,
  findJob,
  recordTranscriptWhileProcessing,
  requeueInterrupted,
  RESTART_STEP,
  type JobStatus,
} from "../db/jobs";
import { releaseCapacity, requeueInFleet } from "../fleet/capacity";
import { engineGone, repairQueuedJob, waitingPastDeadline } from "../fleet/repair";
import { clipKey, deleteJobObjects, thumbnailKey } from "./storage";
import { emitJobEvent } from "../webhooks/emit";
import { releaseJobUpload } from "../uploads/job-source";

/** A job whose engine is stopped under it this many times (redeploys) fails with internal_error. */
export const MAX_ENGINE_RESTARTS = 3;

function wonTransition(result: D1Result | undefined): boolean {
  return (result?.results.length ?? 0) > 0;
}

/**
 * Frees everything an ended job held: the account's slot, deadline and live
 * state (its reports are refused from here on), and fleet capacity.
 */
async function releaseHolds(env: Env, accountId: string, jobId: string): Promise<void> {
  await accountState(env, accountId).jobEnded(jobId);
  await releaseCapacity(env, jobId);
  await releaseJobUpload(env, jobId); // an uploaded source is deleted when its job ends
}

export interface Completion {
  title: string;
  sourceDurationSeconds: number;
  clips: ClipReport[];
  transcript: TranscriptSummary | null;
  transcriptUnavailableReason: string | null;
}

/** processing -> completed: writes the clip rows and charges the reservation. False if no longer processing. */
export async function completeJob(env: Env, accountId: string, jobId: string, done: Completion): Promise<boolean> {
  const now = new Date().toISOString();
  const fallbackCharge = creditsForDuration(done.sourceDurationSeconds);
  const clipStatements = done.clips.map((clip) =>
    insertClipWhileProcessing(env.DB, {
      jobId,
      index: clip.index,
      objectKey: clipKey(jobId, clip.index),
      thumbnailKey: thumbnailKey(jobId, clip.index),
      startSeconds: clip.start_seconds,
      endSeconds: clip.end_seconds,
      score: clip.score,
      reasons: clip.reasons,
      width: clip.width,
      height: clip.height,
      reframe: clip.reframe,
      facesCount: clip.faces_count,
      text: clip.text,
      title: clip.title,
      captionsBurned: clip.captions_burned,
      sidecars: clip.sidecars,
    }),
  );
  const results = await env.DB.batch([
    chargeJobCredits(env.DB, jobId, fallbackCharge),
    ...clipStatements,
    recordTranscriptWhileProcessing(env.DB, jobId, done.transcript, done.transcriptUnavailableReason),
    finishCompleted(env.DB, jobId, done.title, done.sourceDurationSeconds, fallbackCharge, now),
  ]);
  if (!wonTransition(results.at(-1))) return false;
  await releaseHolds(env, accountId, jobId);
  await stopEngine(env, jobId, true);
  await emitJobEvent(env, accountId, jobId, "job.completed");
  return true;
}

interface EndOptions {
  /** The engine itself reported this end (fail, refused probe) or never got the job. */
  engineReported: boolean;
}

/**
 * Ends a job that did not complete (failed or canceled) from one of `from`:
 * releases its reserved credits, deletes partial clips, frees slot and
 * capacity, stops the engine. False when the job was not in `from` (someone
 * else ended it first).
 */
async function endUnsuccessfully(
  env: Env,
  accountId: string,
  jobId: string,
  from: readonly JobStatus[],
  to: "failed" | "canceled",
  error: { code: FailureCode; message: string } | null,
  options: EndOptions,
): Promise<boolean> {
  const now = new Date().toISOString();
  const results = await env.DB.batch([
    releaseJobCredits(env.DB, jobId, from),
    finishUnsuccessful(env.DB, jobId, from, to, error, now),
  ]);
  if (!wonTransition(results.at(-1))) return false;
  await releaseHolds(env, accountId, jobId);
  await stopEngine(env, jobId, options.engineReported);
  await deleteJobObjects(env.CLIPS, jobId);
  await emitJobEvent(env, accountId, jobId, to === "failed" ? "job.failed" : "job.canceled");
  return true;
}

export function failJob(
  env: Env,
  accountId: string,
  jobId: string,
  from: readonly JobStatus[],
  error: { code: FailureCode; message: string },
  options: EndOptions,
): Promise<boolean> {
  return endUnsuccessfully(env, accountId, jobId, from, "failed", error, options);
}

export function cancelJob(env: Env, accountId: string, jobId: string): Promise<boolean> {
  return endUnsuccessfully(env, accountId, jobId, ["queued", "processing"], "canceled", null, { engineReported: false });
}

/**
 * Called by the account's Durable Object alarm for a job past its deadline:
 * a queued job waited MAX_QUEUE_SECONDS (queue_timeout), a processing job's
 * engine was silent ENGINE_SILENCE_TIMEOUT_SECONDS (processing_timeout). A
 * job that already ended is left alone, but what it held is released anyway
 * so nothing stays held.
 *
 * Two deadlines are not what they seem (fleet/repair.ts): a queued job whose
 * own queue deadline has not passed met a stale deadline (the account's
 * object missed its move back to the queue), and a processing job whose
 * engine instance is gone was interrupted, not silent. Both live on
 * ("repaired"); the caller keeps their slot.
 */
export async function expireOverdueJob(env: Env, accountId: string, jobId: string): Promise<"ended" | "repaired"> {
  const job = await findJob(env.DB, jobId);
  let expired = false;
  if (job?.status === "queued") {
    if (!(await waitingPastDeadline(env, job))) {
      await repairQueuedJob(env, job);
      return "repaired";
    }
    expired = await failJob(
      env,
      accountId,
      jobId,
      ["queued"],
      { code: "queue_timeout", message: `No engine became free within ${maxQueueSeconds(env)} seconds; nothing was charged.` },
      { engineReported: false },
    );
  } else if (job?.status === "processing") {
    if (await engineGone(env, jobId)) {
      const outcome = await requeueAfterInterruption(env, accountId, jobId);
      if (outcome === "requeued") return "repaired";
      expired = outcome === "failed";
    } else {
      expired = await failJob(
        env,
        accountId,
        jobId,
        ["processing"],
        { code: "processing_timeout", message: "The clip engine stopped reporting progress." },
        { engineReported: false },
      );
    }
  }
  if (!expired) await releaseHolds(env, accountId, jobId);
  return "ended";
}

/**
 * The job's engine was stopped under it (SIGTERM on a redeploy): the job goes
 * back to the head of the line and starts again, with its credits as they
 * were, at most MAX_ENGINE_RESTARTS times; after that it fails.
 */
export async function requeueAfterInterruption(env: Env, accountId: string, jobId: string): Promise<"requeued" | "failed" | "inactive"> {
  const now = new Date().toISOString();
  if (await requeueInterrupted(env.DB, jobId, MAX_ENGINE_RESTARTS, now)) {
    await accountState(env, accountId).jobMoved(jobId, { status: "queued", step: RESTART_STEP, at: now, restarted: true }, maxQueueSeconds(env));
    await requeueInFleet(env, jobId, accountId);
    return "requeued";
  }
  const failed = await failJob(
    env,
    accountId,
    jobId,
    ["processing"],
    { code: "internal_error", message: `The clip engine was stopped ${MAX_ENGINE_RESTARTS} times while working on this job.` },
    { engineReported: true },
  );
  return failed ? "failed" : "inactive";
}
