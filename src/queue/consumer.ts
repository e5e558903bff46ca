/**
 * The jobs queue consumer: a queued job asks the fleet for an engine; with
 * one granted, it is started on the engine and becomes processing. Without
 * one, the message is done: the job waits in the fleet, which sends a new
 * message when its turn comes. Delivery is at least once, so every step
 * tolerates repeats: admission is idempotent, the queued -> processing
 * transition is conditional, StartJob is idempotent on the engine.
 */
import { accountState } from "../account/stub";
import { findJob, markProcessing, QUEUED_STEP, revertToQueued, type Job } from "../db/jobs";
import { withdrawProcessingEvent } from "../db/webhooks";
import { EngineBusyError, EngineUnavailableError, startOnEngine } from "../engine/dispatch";
import { EngineMisconfiguredError, maxQueueSeconds, silenceTimeoutSeconds } from "../settings";
import { sendDispatches } from "../fleet/fleet-scheduler";
import { fleetCapacity, fleetScheduler } from "../fleet/stub";
import { failJob } from "../jobs/lifecycle";
import type { JobMessage } from "./message";
import { dispatchJobEvents, eventWritten, jobEventStatement, newTransitionId } from "../webhooks/outbox";

/** Must match `max_retries` of the consumer in wrangler.toml. */
export const QUEUE_MAX_RETRIES = 5;

/** How long a job whose start found no free instance waits before its next try. */
export const BUSY_RETRY_SECONDS = 15;

/** Exponential backoff between deliveries: 10 s, 20 s, 40 s ... capped at 5 minutes. */
export function retryDelaySeconds(attempts: number): number {
  return Math.min(300, 10 * 2 ** Math.max(0, attempts - 1));
}

export function isJobMessage(body: unknown): body is JobMessage {
  if (typeof body !== "object" || body === null) return false;
  const { job_id, account_id } = body as Record<string, unknown>;
  return typeof job_id === "string" && typeof account_id === "string";
}

/**
 * The engine did not take the job: back to queued (it keeps its place in the
 * fleet as the caller decides). The processing transition is undone, so its
 * job.processing event is withdrawn before anyone was sent it.
 */
async function notStarted(env: Env, accountId: string, jobId: string): Promise<void> {
  const now = new Date().toISOString();
  const [, reverted] = await env.DB.batch([withdrawProcessingEvent(env.DB, jobId), revertToQueued(env.DB, jobId, now)]);
  if ((reverted?.results.length ?? 0) > 0) {
    await accountState(env, accountId).jobMoved(jobId, { status: "queued", step: QUEUED_STEP, at: now }, maxQueueSeconds(env));
  }
}

async function handleMessage(message: Message<unknown>, env: Env): Promise<void> {
  if (!isJobMessage(message.body)) {
    console.error(`dropping malformed jobs message ${message.id}`);
    message.ack();
    return;
  }
  const { job_id: jobId, account_id: accountId } = message.body;
  const job = await findJob(env.DB, jobId);
  // Processing: a duplicate delivery (the engine has it); ended: nothing to do.
  if (!job || job.accountId !== accountId || job.status !== "queued") {
    message.ack();
    return;
  }
  const fleet = fleetScheduler(env);
  const capacity = fleetCapacity(env);
  const admission = await fleet.admit({ jobId, accountId }, capacity);
  await sendDispatches(env, admission.grants);
  if (admission.state === "waiting") {
    message.ack();
    return;
  }

  // Processing from here, so the engine's first report finds the job live.
  // The transition and its job.processing event are one batch (the outbox);
  // the event is dispatched once the engine took the job.
  const startedAt = new Date().toISOString();
  const transitionId = newTransitionId();
  const processing: Job = { ...job, status: "processing", step: "Starting", lastReportAt: startedAt, updatedAt: startedAt };
  const [moved, event] = await env.DB.batch([
    markProcessing(env.DB, jobId, startedAt, transitionId),
    jobEventStatement(env, { id: transitionId, type: "job.processing", job: processing, at: startedAt }),
  ]);
  if ((moved?.results.length ?? 0) === 0) {
    message.ack(); // canceled in between: the cancel released the capacity
    return;
  }
  try {
    await accountState(env, accountId).jobMoved(
      jobId,
      { status: "processing", step: "Starting", at: startedAt, report: true },
      silenceTimeoutSeconds(env),
    );
  } catch (err) {
    // Committed: the job starts anyway. The object is repaired from D1 by the engine's first report.
    console.error(`recording ${jobId} as processing in its account's object failed`, err);
  }
  try {
    await startOnEngine(env, processing);
  } catch (err) {
    if (err instanceof EngineBusyError) {
      // The platform has no instance free yet (an ended job's instance is
      // still stopping): not a failure. The job keeps its grant and tries
      // again shortly, with a fresh message so the retry budget is untouched.
      console.warn(`no engine instance for ${jobId} yet: ${err.message}`);
      await notStarted(env, accountId, jobId);
      await env.JOBS.send({ job_id: jobId, account_id: accountId } satisfies JobMessage, { delaySeconds: BUSY_RETRY_SECONDS });
      message.ack();
      return;
    }
    if (err instanceof EngineMisconfiguredError) {
      // Operator error: keep the job queued (it times out with queue_timeout if never fixed).
      console.error(`not dispatching ${jobId}: ${err.message}`);
      await notStarted(env, accountId, jobId);
      message.retry({ delaySeconds: 300 });
      return;
    }
    if (!(err instanceof EngineUnavailableError)) throw err;
    if (message.attempts >= QUEUE_MAX_RETRIES) {
      console.error(`giving up on ${jobId} after ${message.attempts} attempts: ${err.message}`);
      // The engine never took it: its processing transition is withdrawn as a revert would (the job fails instead).
      await withdrawProcessingEvent(env.DB, jobId).run();
      await failJob(
        env,
        processing,
        ["queued", "processing"],
        { code: "internal_error", message: "The clip engine could not be started." },
        { engineReported: true },
      );
      message.ack();
      return;
    }
    console.warn(`retrying ${jobId} (attempt ${message.attempts}): ${err.message}`);
    await notStarted(env, accountId, jobId);
    message.retry({ delaySeconds: retryDelaySeconds(message.attempts) });
    return;
  }
  if (eventWritten(event)) await dispatchJobEvents(env, jobId);
  try {
    await fleet.confirmStarted(jobId);
  } catch (err) {
    // The grant stays unconfirmed: the fleet re-sends it later, and this consumer finds the job processing and acks.
    console.error(`confirming the start of ${jobId} to the fleet failed`, err);
  }
  message.ack();
}

export async function handleQueue(batch: MessageBatch<unknown>, env: Env, _ctx: ExecutionContext): Promise<void> {
  for (const message of batch.messages) {
    try {
      await handleMessage(message, env);
    } catch (err) {
      // Unexpected (e.g. D1 unavailable): let the queue redeliver later.
      console.error(`jobs message ${message.id} failed`, err);
      message.retry({ delaySeconds: retryDelaySeconds(message.attempts) });
    }
  }
}
