/**
 * Job state transitions: the one writer of a job's status after submission.
 * Each transition is one D1 batch whose statements are all guarded by the
 * job's current status: the credit movement, the transition and its webhook
 * event (the outbox, src/jobs/outbox.ts) either all apply or none does.
 * Whoever's batch matched (cancel, watchdog, engine callback, queue consumer)
 * then releases what the job held (settle.ts) and dispatches the event; both
 * are idempotent and never throw, and whatever they leave undone is redone
 * by the next attempt or the sweep (sweep.ts). No failure after the commit
 * can lose the event or keep a hold for good.
 */
import { accountState } from "../account/stub.ts";
import type { Chapter, ClipReport, FailureCode, JobJudgement, TranscriptSummary, TranslationOutcome } from "#contract";
import { maxQueueSeconds } from "../settings.ts";
import { insertClipWhileProcessing, type Clip } from "../db/clips.ts";
import { chargeJobCredits, creditsForDuration, releaseJobCredits } from "../db/credits.ts";
import {
  claimPublicationKey,
  endStep,
  finishCompleted,
  finishUnsuccessful,
  findJob,
  recordTranscriptWhileProcessing,
  requeueInterrupted,
  RESTART_STEP,
  type Job,
  type JobStatus,
  recordJudgementWhileProcessing,
} from "../db/jobs.ts";
import { requeueInFleet } from "../fleet/capacity.ts";
import { engineGone, repairQueuedJob, waitingPastDeadline } from "../fleet/repair.ts";
import { newPublicationKey, publishedKeys, publishStaged, type PublishedClip } from "./publication.ts";
import { dropUnclaimedPublication } from "./unclaimed-publication.ts";
import { dispatchJobEvents, eventWritten, jobEventStatement, newTransitionId } from "./outbox.ts";
import { settleEndedJob, type SettleOptions } from "./settle.ts";


/** A job whose engine is stopped under it this many times (redeploys) fails with internal_error. */
export const MAX_ENGINE_RESTARTS = 3;

function wonTransition(result: D1Result | undefined): boolean {
  return (result?.results.length ?? 0) > 0;
}

/** After a committed end: release what the job held, then send its event (the holds first: a receiver may submit again at once). */
async function afterEnd(env: Env, ended: Job, written: boolean, options: SettleOptions): Promise<void> {
  await settleEndedJob(env, ended, options);
  if (written) await dispatchJobEvents(env, ended.id);
}

export interface Completion {
  title: string;
  sourceDurationSeconds: number;
  clips: ClipReport[];
  transcript: TranscriptSummary | null;
  transcriptUnavailableReason: string | null;
  /** Seconds the job is charged for when nothing was reserved (a time_range's length); default the source's. */
  chargedSeconds?: number;
  translation?: TranslationOutcome | null;
  /** What judged the clips (null from an engine that does not say) and the source's chapters. */
  judgement?: JobJudgement | null;
  chapters?: Chapter[];
}

function clipRow(jobId: string, clip: ClipReport, published: PublishedClip): Clip {
  return {
    jobId,
    index: clip.index,
    objectKey: published.clip,
    thumbnailKey: published.thumbnail,
    vttKey: published.vtt,
    srtKey: published.srt,
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
    promptMatch: clip.prompt_match,
    removed: clip.removed,
    zooms: clip.zooms,
    durationSeconds: clip.duration_seconds ?? null,
    framing: clip.framing ?? null,
    scores: clip.scores,
    judgedBy: clip.judged_by,
    description: clip.description,
    hashtags: clip.hashtags,
    version: 1,
    overrides: {},
    corrections: [],
  };
}

/**
 * What a completion attempt came to: the job completed by this attempt;
 * another attempt completed it (an earlier one whose answer was lost, or a
 * retry that overtook this one); it ended otherwise or is gone; or its clips
 * are still being published (the engine calls again, and the next attempt
 * goes on where this one stopped).
 */
export type CompletionOutcome = "completed" | "completed_by_another" | "inactive" | "publishing";

/** What an attempt that did not commit answers, by the job's status once it cleaned up (unclaimed-publication.ts). */
function unfinishedOutcome(status: JobStatus | null, stillProcessing: CompletionOutcome): CompletionOutcome {
  if (status === "completed") return "completed_by_another";
  return status === "processing" ? stillProcessing : "inactive";
}

/**
 * processing -> completed, in the step that charges: publishes the staged
 * clips (publication.ts) under keys nothing has revealed, then one D1 batch
 * charges the reservation, writes the clip rows with those keys (which
 * reveals them) and the transition with its event. `job` is the processing
 * job as last read, its reservation included. An attempt that does not
 * commit (it lost its transition, ran out of budget or found an upload gone)
 * removes only what the job, as D1 has it after the attempt's last write, does
 * not name (unclaimed-publication.ts): never what a winning completion
 * published. Throws StagedObjectMissing when an upload the report names is
 * not staged.
 */
export async function completeJob(env: Env, job: Job, done: Completion): Promise<CompletionOutcome> {
  const publicationKey = await claimPublicationKey(env.DB, job.id, newPublicationKey());
  if (publicationKey === null) return unfinishedOutcome((await findJob(env.DB, job.id))?.status ?? null, "inactive");
  const published = await publishedKeys(publicationKey, done.clips);
  let progress: "done" | "more";
  try {
    progress = await publishStaged(env, job.id, published);
  } catch (err) {
    // Every copy has settled (publishStaged waits for all of them before it throws).
    await dropUnclaimedPublication(env, job.id, published);
    throw err;
  }
  if (progress === "more") return unfinishedOutcome(await dropUnclaimedPublication(env, job.id, published), "publishing");

  const now = new Date().toISOString();
  const transitionId = newTransitionId();
  const fallbackCharge = creditsForDuration(done.chargedSeconds ?? done.sourceDurationSeconds);
  const clips = done.clips.map((clip, i) => clipRow(job.id, clip, published[i]!));
  const completed: Job = {
    ...job,
    status: "completed",
    progress: 100,
    step: "Completed",
    title: done.title,
    sourceDurationSeconds: done.sourceDurationSeconds,
    // As finishCompleted charges: the reservation, else the fallback.
    creditsCharged: job.creditsReserved > 0 ? job.creditsReserved : fallbackCharge,
    creditsReserved: 0,
    lastReportAt: now,
    updatedAt: now,
    completedAt: now,
    transcript: done.transcript,
    transcriptUnavailableReason: done.transcript ? null : done.transcriptUnavailableReason,
    translation: done.translation ?? null,
    judgement: done.judgement ?? null,
    chapters: done.chapters ?? [],
  };
  const results = await env.DB.batch([
    chargeJobCredits(env.DB, job.id, fallbackCharge),
    ...clips.map((clip) => insertClipWhileProcessing(env.DB, clip)),
    recordTranscriptWhileProcessing(env.DB, job.id, done.transcript, done.transcriptUnavailableReason, done.translation ?? null),
    recordJudgementWhileProcessing(env.DB, job.id, done.judgement ?? null, done.chapters ?? []),
    finishCompleted(env.DB, job.id, done.title, done.sourceDurationSeconds, fallbackCharge, now, transitionId),
    jobEventStatement(env, { id: transitionId, type: "job.completed", job: completed, clips, at: now }),
  ]);
  if (!wonTransition(results.at(-2))) return unfinishedOutcome(await dropUnclaimedPublication(env, job.id, published), "inactive");
  await afterEnd(env, completed, eventWritten(results.at(-1)), { engineReported: true });
  return "completed";
}

/**
 * Ends a job that did not complete (failed or canceled) from one of `from`:
 * releases its reserved credits, then its holds and objects (settle.ts).
 * False when the job was not in `from` (someone else ended it first).
 */
async function endUnsuccessfully(
  env: Env,
  job: Job,
  from: readonly JobStatus[],
  to: "failed" | "canceled",
  error: { code: FailureCode; message: string } | null,
  options: SettleOptions,
): Promise<boolean> {
  const now = new Date().toISOString();
  const transitionId = newTransitionId();
  const ended: Job = {
    ...job,
    status: to,
    step: endStep(to),
    errorCode: error?.code ?? null,
    errorMessage: error?.message ?? null,
    creditsReserved: 0,
    updatedAt: now,
    completedAt: now,
  };
  const results = await env.DB.batch([
    releaseJobCredits(env.DB, job.id, from),
    finishUnsuccessful(env.DB, job.id, from, to, error, now, transitionId),
    jobEventStatement(env, { id: transitionId, type: to === "failed" ? "job.failed" : "job.canceled", job: ended, at: now }),
  ]);
  if (!wonTransition(results.at(-2))) return false;
  await afterEnd(env, ended, eventWritten(results.at(-1)), options);
  return true;
}

export function failJob(
  env: Env,
  job: Job,
  from: readonly JobStatus[],
  error: { code: FailureCode; message: string },
  options: SettleOptions,
): Promise<boolean> {
  return endUnsuccessfully(env, job, from, "failed", error, options);
}

export function cancelJob(env: Env, job: Job): Promise<boolean> {
  return endUnsuccessfully(env, job, ["queued", "processing"], "canceled", null, { engineReported: false });
}

/**
 * An ended job whose releases may not all have happened (a retried callback,
 * an alarm or a dead letter for a job that already ended): releases them
 * again. Idempotent; cheap when the job is settled already.
 */
export async function resettle(env: Env, job: Job): Promise<void> {
  await settleEndedJob(env, job, { engineReported: false });
}

/**
 * Called by the account's Durable Object alarm for a job past its deadline:
 * a queued job waited MAX_QUEUE_SECONDS (queue_timeout), a processing job's
 * engine was silent ENGINE_SILENCE_TIMEOUT_SECONDS (processing_timeout). A
 * job that already ended is left alone, but what it held is released anyway
 * so nothing stays held.
 *
 * Two deadlines are not what they seem (fleet/repair.ts): a queued job whose
 * own queue deadline has not passed met a stale one (the account's object
 * missed its move back to the queue), and a processing job whose engine no
 * longer serves it was interrupted, not silent (its report was lost). Both
 * live on: "repaired", and the caller keeps their slot.
 */
export async function expireOverdueJob(env: Env, accountId: string, jobId: string): Promise<"ended" | "repaired"> {
  const job = await findJob(env.DB, jobId);
  if (!job || job.accountId !== accountId) {
    // Deleted (or never created): only the account's own hold can be left.
    await accountState(env, accountId).jobEnded(jobId);
    return "ended";
  }
  if (job.status === "queued") {
    if (!(await waitingPastDeadline(env, job))) {
      await repairQueuedJob(env, job);
      return "repaired";
    }
    await failJob(
      env,
      job,
      ["queued"],
      { code: "queue_timeout", message: `No engine became free within ${maxQueueSeconds(env)} seconds; nothing was charged.` },
      { engineReported: false },
    );
  } else if (job.status === "processing") {
    if (await engineGone(env, jobId)) {
      if ((await requeueAfterInterruption(env, job)) === "requeued") return "repaired";
    } else {
      await failJob(
        env,
        job,
        ["processing"],
        { code: "processing_timeout", message: "The clip engine stopped reporting progress." },
        { engineReported: false },
      );
    }
  } else {
    // Ended already (whoever lost a race above, the winner settles): release what it may still hold.
    await resettle(env, job);
  }
  return "ended";
}

/**
 * The job's engine was stopped under it (SIGTERM on a redeploy): the job goes
 * back to the head of the line and starts again, with its credits as they
 * were, at most MAX_ENGINE_RESTARTS times; after that it fails. Going back
 * to the queue is a transition of its own, with its job.queued event.
 */
export async function requeueAfterInterruption(env: Env, job: Job): Promise<"requeued" | "failed" | "inactive"> {
  const now = new Date().toISOString();
  const transitionId = newTransitionId();
  const requeued: Job = { ...job, status: "queued", step: RESTART_STEP, restarts: job.restarts + 1, updatedAt: now };
  const [transition, event] = await env.DB.batch([
    requeueInterrupted(env.DB, job.id, MAX_ENGINE_RESTARTS, now, transitionId),
    jobEventStatement(env, { id: transitionId, type: "job.queued", job: requeued, at: now }),
  ]);
  if (wonTransition(transition)) {
    try {
      await accountState(env, job.accountId).jobMoved(job.id, { status: "queued", step: RESTART_STEP, at: now, restarted: true }, maxQueueSeconds(env));
    } catch (err) {
      // The object is repaired from D1 by the job's next report; its old deadline still guards the job.
      console.error(`recording the requeue of ${job.id} in its account's object failed`, err);
    }
    if (eventWritten(event)) await dispatchJobEvents(env, job.id);
    // If this throws, the fleet learns the requeue from D1 (FleetScheduler reconcile, fleet/repair.ts).
    await requeueInFleet(env, job.id, job.accountId);
    return "requeued";
  }
  const failed = await failJob(
    env,
    job,
    ["processing"],
    { code: "internal_error", message: `The clip engine was stopped ${MAX_ENGINE_RESTARTS} times while working on this job.` },
    { engineReported: true },
  );
  return failed ? "failed" : "inactive";
}
