/**
 * The jobs queue consumer: moves a queued job to processing and starts it on
 * the engine. Delivery is at least once, so every step tolerates repeats: the
 * queued -> processing transition is conditional, StartJob is idempotent on
 * the engine, and credits move only on the engine's probe/complete callbacks.
 */
import { findJob, markProcessing } from "../db/jobs";
import { EngineUnavailableError, silenceTimeoutSeconds, startOnEngine } from "../engine/dispatch";
import { accountState } from "../account/stub";
import { failJob } from "../jobs/lifecycle";
import type { JobMessage } from "./message";
import { emitJobEvent } from "../webhooks/emit";

/** Must match `max_retries` of the consumer in wrangler.toml. */
export const QUEUE_MAX_RETRIES = 5;

/** Exponential backoff between deliveries: 10 s, 20 s, 40 s ... capped at 5 minutes. */
export function retryDelaySeconds(attempts: number): number {
  return Math.min(300, 10 * 2 ** Math.max(0, attempts - 1));
}

function isJobMessage(body: unknown): body is JobMessage {
  if (typeof body !== "object" || body === null) return false;
  const { job_id, account_id } = body as Record<string, unknown>;
  return typeof job_id === "string" && typeof account_id === "string";
}

async function handleMessage(message: Message<unknown>, env: Env): Promise<void> {
  if (!isJobMessage(message.body)) {
    console.error(`dropping malformed jobs message ${message.id}`);
    message.ack();
    return;
  }
  const { job_id: jobId, account_id: accountId } = message.body;
  const job = await findJob(env.DB, jobId);
  if (!job || job.accountId !== accountId) {
    message.ack();
    return;
  }
  if (job.status === "queued") {
    const now = new Date().toISOString();
    if (await markProcessing(env.DB, jobId, now)) await emitJobEvent(env, accountId, jobId, "job.processing");
    else {
      // Canceled (or picked up by a parallel delivery) in between: re-read below.
      const current = await findJob(env.DB, jobId);
      if (!current || current.status !== "processing") {
        message.ack();
        return;
      }
    }
  } else if (job.status !== "processing") {
    message.ack();
    return;
  }

  await accountState(env, accountId).touchWatchdog(jobId, silenceTimeoutSeconds(env));
  try {
    await startOnEngine(env, { ...job, status: "processing" });
    message.ack();
  } catch (err) {
    if (!(err instanceof EngineUnavailableError)) throw err;
    if (message.attempts >= QUEUE_MAX_RETRIES) {
      console.error(`giving up on ${jobId} after ${message.attempts} attempts: ${err.message}`);
      await failJob(
        env,
        accountId,
        jobId,
        ["queued", "processing"],
        { code: "internal_error", message: "The clip engine could not be started." },
        { stopEngine: false },
      );
      message.ack();
      return;
    }
    console.warn(`retrying ${jobId} (attempt ${message.attempts}): ${err.message}`);
    message.retry({ delaySeconds: retryDelaySeconds(message.attempts) });
  }
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
