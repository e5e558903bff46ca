/**
 * Job state transitions. Each end state is reached by one D1 batch whose
 * statements are all guarded by the job's current status: the credit movement
 * and the transition either both apply or neither does. Whoever's batch
 * matched (cancel, watchdog, engine callback, queue consumer) runs the
 * follow-up (slot, watchdog, R2 cleanup, engine stop) exactly once.
 */
import { accountState } from "../account/stub";
import type { ClipReport, FailureCode, TranscriptSummary } from "../engine/contract";
import { cancelOnEngine } from "../engine/dispatch";
import { insertClipWhileProcessing } from "../db/clips";
import { chargeJobCredits, creditsForDuration, releaseJobCredits } from "../db/credits";
import { finishCompleted, finishUnsuccessful, recordTranscriptWhileProcessing, type JobStatus } from "../db/jobs";
import { clipKey, deleteJobObjects, thumbnailKey } from "./storage";

function wonTransition(result: D1Result | undefined): boolean {
  return (result?.results.length ?? 0) > 0;
}

/** Frees what an ended job held in the account's Durable Object. */
async function releaseAccountHold(env: Env, accountId: string, jobId: string): Promise<void> {
  const account = accountState(env, accountId);
  await account.releaseSlot(jobId);
  await account.clearWatchdog(jobId);
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
  await releaseAccountHold(env, accountId, jobId);
  return true;
}

interface EndOptions {
  /** Tell the engine to stop (not needed when the engine itself reported the end). */
  stopEngine: boolean;
}

/**
 * Ends a job that did not complete (failed or canceled) from one of `from`:
 * releases its reserved credits, deletes partial clips, frees the slot.
 * False when the job was not in `from` (someone else ended it first).
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
  await releaseAccountHold(env, accountId, jobId);
  await deleteJobObjects(env.CLIPS, jobId);
  if (options.stopEngine) await cancelOnEngine(env, jobId);
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
  return endUnsuccessfully(env, accountId, jobId, ["queued", "processing"], "canceled", null, { stopEngine: true });
}

/**
 * Called by the account's Durable Object alarm when the engine has been
 * silent for ENGINE_SILENCE_TIMEOUT_SECONDS. A job that already ended is left
 * alone, but the slot and watchdog are released anyway so nothing stays held.
 */
export async function expireSilentJob(env: Env, accountId: string, jobId: string): Promise<void> {
  const expired = await failJob(
    env,
    accountId,
    jobId,
    ["queued", "processing"],
    { code: "processing_timeout", message: "The clip engine stopped reporting progress." },
    { stopEngine: true },
  );
  if (!expired) await releaseAccountHold(env, accountId, jobId);
}
