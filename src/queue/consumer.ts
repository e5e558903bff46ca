/**
 * The jobs queue consumer: the dispatch path. Each message is one job's
 * request for an engine, on one dispatch chain (fleet-scheduler.ts):
 *
 * 1. The job is read from D1. Ended: whatever the fleet still holds for it is
 *    given back (its end may have released before this job was admitted).
 * 2. fleet.claim: the job joins the line, or holds its grant. Waiting: D1
 *    is read again (a cancel may have released before the job joined) and
 *    the message acknowledged. A duplicate of a started job, or a message of
 *    a chain that is no longer the job's: acknowledged, nothing else.
 * 3. Granted: queued -> processing in D1 (so the engine's first report finds
 *    it live) and StartJob to the job's own engine instance.
 * 4. Accepted: fleet.confirmStarted. Not accepted for a reason that is not
 *    the job's own (no instance, rate limits, a port that did not open, an
 *    instance still stopping, an unreachable engine): the job goes back to
 *    queued with its original queue deadline and its chain's next message is
 *    sent with the fleet's delay; after the start budget (twice a rollout's
 *    grace) it fails. Refused by the engine itself (4xx): it fails now.
 *
 * Delivery is at least once, so every step tolerates repeats: claim is
 * idempotent per chain, queued -> processing is conditional, StartJob is
 * idempotent on the engine. Dispatch latency is measured from here.
 */
import { accountState } from "../account/stub.ts";
import { findJob, markProcessing, QUEUED_STEP, revertToQueued, type Job } from "../db/jobs.ts";
import { withdrawProcessingEvent } from "../db/webhooks.ts";
import { EngineStartError, startOnEngine } from "../engine/dispatch.ts";
import { releaseCapacity } from "../fleet/capacity.ts";
import { stopEngine } from "../fleet/engine-host.ts";
import { sendDispatches, type StartProblem } from "../fleet/fleet-scheduler.ts";
import { fleetLimits } from "../fleet/limits.ts";
import { queueSecondsLeft } from "../fleet/repair.ts";
import { fleetScheduler } from "../fleet/stub.ts";
import { failJob } from "../jobs/lifecycle.ts";
import { EngineMisconfiguredError, silenceTimeoutSeconds } from "../settings.ts";
import { dispatchJobEvents, eventWritten, jobEventStatement, newTransitionId } from "../jobs/outbox.ts";
import { handleEditMessage } from "../engine/edit-dispatch.ts";
import type { JobMessage } from "../fleet/job-message.ts";

/** Must match `max_retries` of the consumer in wrangler.toml (only unexpected errors use the queue's retries). */
export const QUEUE_MAX_RETRIES = 5;

/** Backoff of the queue's own retries (an unexpected error: D1 or a Durable Object unavailable): 10 s, 20 s ... capped at 5 minutes. */
export function retryDelaySeconds(attempts: number): number {
  return Math.min(300, 10 * 2 ** Math.max(0, attempts - 1));
}

export function isJobMessage(body: unknown): body is JobMessage {
  if (typeof body !== "object" || body === null) return false;
  const { job_id, account_id, dispatch } = body as Record<string, unknown>;
  const { edit_id } = body as Record<string, unknown>;
  return (
    typeof job_id === "string" &&
    typeof account_id === "string" &&
    (dispatch === undefined || (typeof dispatch === "number" && Number.isInteger(dispatch))) &&
    (edit_id === undefined || typeof edit_id === "string")
  );
}

const ENDED = new Set(["completed", "failed", "canceled"]);

async function handleMessage(message: Message<unknown>, env: Env): Promise<void> {
  // The dispatch stage of the completion log line starts here (engine/stage-timings.ts).
  const received = Date.now();
  if (!isJobMessage(message.body)) {
    console.error(`dropping malformed jobs message ${message.id}`);
    message.ack();
    return;
  }
  const { job_id: jobId, account_id: accountId } = message.body;
  if (typeof message.body.edit_id === "string") {
    await handleEditMessage(env, message.body.edit_id);
    message.ack();
    return;
  }
  const dispatch = message.body.dispatch ?? 0;
  const job = await findJob(env.DB, jobId);
  if (!job || job.accountId !== accountId) {
    message.ack();
    return;
  }
  if (ENDED.has(job.status)) {
    // Idempotent: nothing held, nothing to do; a grant or place in line of an ended job goes back.
    await releaseCapacity(env, jobId);
    message.ack();
    return;
  }
  const claim = await fleetScheduler(env).claim({ jobId, accountId, dispatch }, fleetLimits(env));
  const granted = Date.now();
  await sendDispatches(env, claim.grants);
  if (claim.state === "waiting") {
    // A cancel whose release reached the fleet before this claim put the job in line would leave it there
    // (interleaving C): the cancel committed in D1 before it released, so D1 read after the claim tells.
    const now = await findJob(env.DB, jobId);
    if (!now || ENDED.has(now.status)) await releaseCapacity(env, jobId);
  }
  if (claim.state !== "granted") {
    message.ack();
    return;
  }
  // Processing from here, so the engine's first report finds the job live. The transition and its
  // job.processing event are one batch (the outbox); the event goes out once an engine took the job.
  // A job already processing was marked by a delivery of this chain that died before StartJob.
  let processing: Job = job;
  let eventPending = job.status === "processing";
  if (job.status === "queued") {
    const startedAt = new Date().toISOString();
    const transitionId = newTransitionId();
    processing = { ...job, status: "processing", step: "Starting", lastReportAt: startedAt, updatedAt: startedAt };
    const [moved, event] = await env.DB.batch([
      markProcessing(env.DB, jobId, startedAt, transitionId),
      jobEventStatement(env, { id: transitionId, type: "job.processing", job: processing, at: startedAt }),
    ]);
    if ((moved?.results.length ?? 0) === 0) {
      const now = await findJob(env.DB, jobId);
      // Ended between our read and the grant (a cancel whose release came first): give the grant back.
      if (!now || ENDED.has(now.status)) await releaseCapacity(env, jobId, { noInstance: true });
      message.ack();
      return;
    }
    eventPending = eventWritten(event);
  }
  try {
    await accountState(env, accountId).jobMoved(
      jobId,
      { status: "processing", step: "Starting", at: processing.updatedAt, report: true },
      silenceTimeoutSeconds(env),
    );
  } catch (err) {
    // Committed: the job starts anyway. The object is repaired from D1 by the engine's first report.
    console.error(`recording ${jobId} as processing in its account's object failed`, err);
  }
  try {
    await startOnEngine(env, processing, { dispatchedAt: received, grantedAt: granted });
  } catch (err) {
    await startFailed(env, processing, claim.dispatch, err);
    message.ack();
    return;
  }
  if (!(await fleetScheduler(env).confirmStarted(jobId))) {
    // Released while it started (canceled): the instance just started has nobody to work for.
    await stopEngine(env, jobId, false);
    message.ack();
    return;
  }
  if (eventPending) await dispatchJobEvents(env, jobId);
  message.ack();
}

/** A StartJob that no engine accepted: retry on the chain, or fail the job when it is the job's fault or the budget is spent. */
async function startFailed(env: Env, job: Job, dispatch: number, err: unknown): Promise<void> {
  let kind: StartProblem;
  if (err instanceof EngineMisconfiguredError) kind = "misconfigured";
  else if (err instanceof EngineStartError) kind = err.kind;
  else throw err;
  const reason = err instanceof Error ? err.message : String(err);
  const outcome = await fleetScheduler(env).startFailed(job.id, dispatch, kind, fleetLimits(env));
  if (outcome.action === "stale") {
    // Not ours any more: started by another delivery (leave it), or released (stop what may be booting).
    if (!outcome.started) await stopEngine(env, job.id, false);
    return;
  }
  if (outcome.action === "give_up") {
    console.error(`no engine accepted ${job.id} (${kind}, ${outcome.triedSeconds} s): ${reason}`);
    const message =
      kind === "refused"
        ? "The clip engine refused the job; nothing was charged."
        : `No clip engine could be started for ${Math.round(outcome.triedSeconds / 60)} minutes; nothing was charged.`;
    // The engine never took it: its processing transition's event is withdrawn as a revert would (the job fails instead).
    await withdrawProcessingEvent(env.DB, job.id).run();
    await failJob(env, job, ["queued", "processing"], { code: "internal_error", message }, { engineReported: false });
    return;
  }
  console.warn(`starting ${job.id} failed (${kind}), retrying in ${outcome.delaySeconds} s: ${reason}`);
  // Back to queued with the deadline it had (a refused start is not a new wait); its job.processing event,
  // not sent yet, goes with the transition it announced.
  const at = new Date().toISOString();
  const [, reverted] = await env.DB.batch([withdrawProcessingEvent(env.DB, job.id), revertToQueued(env.DB, job.id, at)]);
  if ((reverted?.results.length ?? 0) > 0) {
    try {
      await accountState(env, job.accountId).jobMoved(job.id, { status: "queued", step: QUEUED_STEP, at }, await queueSecondsLeft(env, job.id));
    } catch (err) {
      // Its processing deadline stays; when it passes, the repair (fleet/repair.ts) finds the job queued and fixes the object.
      console.error(`recording ${job.id} as queued again in its account's object failed`, err);
    }
  }
  await env.JOBS.send({ job_id: job.id, account_id: job.accountId, dispatch: outcome.dispatch } satisfies JobMessage, { delaySeconds: outcome.delaySeconds });
}

export async function handleQueue(batch: MessageBatch<unknown>, env: Env, _ctx: ExecutionContext): Promise<void> {
  for (const message of batch.messages) {
    try {
      await handleMessage(message, env);
    } catch (err) {
      // Unexpected (e.g. D1 or a Durable Object unavailable): let the queue redeliver later.
      console.error(`jobs message ${message.id} failed`, err);
      message.retry({ delaySeconds: retryDelaySeconds(message.attempts) });
    }
  }
}
