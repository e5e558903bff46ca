/**
 * The webhooks queue consumer: one message = one attempt of one delivery.
 * Before each attempt it re-reads the delivery and its endpoint, so a
 * deleted or disabled endpoint gets nothing more, and a repeated message
 * (the queue delivers at least once) finds its attempt already recorded.
 * The retry schedule is kept here (a new message with a delay), not in the
 * queue's own retries, which only cover unexpected errors.
 */
import {
  closeDelivery,
  disableEndpoint,
  findDelivery,
  findEndpoint,
  findEvent,
  markEndpointFailing,
  markEndpointHealthy,
  purgeDeliveriesBefore,
  recordAttempt,
  type Delivery,
} from "../db/webhooks.ts";
import { allowPrivateDestinations, destinationProblem } from "./destination.ts";
import { isWebhookMessage, type WebhookMessage } from "./message.ts";
import { failedTooLong, retryDelaySeconds, retryScale } from "./schedule.ts";
import { sendAttempt, type AttemptOutcome } from "./send.ts";
import { signedHeaders } from "./signing.ts";

/** Must match the queue name in wrangler.toml: src/index.ts routes its batches here. */
export const WEBHOOK_QUEUE = "clipjobs-webhooks";

/** Deliveries (and events no delivery needs) are kept this long. */
export const DELIVERY_RETENTION_DAYS = 30;
const PURGE_BATCH_ROWS = 500;

/** Secrets that sign now: the current one, and the previous one within its overlap. */
export function activeSecrets(
  endpoint: { secret: string; previousSecret: string | null; previousSecretExpiresAt: string | null },
  now: Date,
): string[] {
  const previousValid =
    endpoint.previousSecret !== null &&
    endpoint.previousSecretExpiresAt !== null &&
    Date.parse(endpoint.previousSecretExpiresAt) > now.getTime();
  return previousValid ? [endpoint.secret, endpoint.previousSecret!] : [endpoint.secret];
}

async function scheduleNext(env: Env, delivery: Delivery, attempt: number, delaySeconds: number): Promise<void> {
  const next: WebhookMessage = { delivery_id: delivery.id, attempt: attempt + 1 };
  try {
    await env.WEBHOOKS.send(next, { delaySeconds });
  } catch (err) {
    console.error(`queueing attempt ${attempt + 1} of ${delivery.id} failed`, err);
    await closeDelivery(env.DB, delivery.id, "failed", "The next attempt could not be queued.");
  }
}

/** Records a failed attempt, then retries, gives up, or disables the endpoint after about three days. */
async function handleFailure(env: Env, delivery: Delivery, attempt: number, outcome: Extract<AttemptOutcome, { kind: "failed" }>): Promise<void> {
  const now = new Date();
  const at = now.toISOString();
  const scale = retryScale(env);
  const failingSince = (await markEndpointFailing(env.DB, delivery.endpointId, at)) ?? at;
  const delay = retryDelaySeconds(attempt, scale);
  // Exhausting the schedule means about three days of failures, unless something succeeded since this delivery's first attempt.
  const exhaustedWhileFailing = delay === null && failingSince <= (delivery.firstAttemptAt ?? at);
  const disable = failedTooLong(failingSince, now, scale) || exhaustedWhileFailing;
  const retrying = delay !== null && !disable;
  const recorded = await recordAttempt(env.DB, delivery.id, attempt, {
    status: retrying ? "pending" : "failed",
    statusCode: outcome.statusCode,
    error: outcome.error,
    latencyMs: outcome.latencyMs,
    at,
    nextAttemptAt: retrying ? new Date(now.getTime() + delay * 1000).toISOString() : null,
  });
  if (!recorded) return;
  if (disable) {
    console.warn(`disabling webhook endpoint ${delivery.endpointId}: failing since ${failingSince}`);
    await disableEndpoint(env.DB, delivery.endpointId, "failing", at);
  } else if (retrying) {
    await scheduleNext(env, delivery, attempt, delay);
  }
}

async function attemptDelivery(env: Env, message: WebhookMessage): Promise<void> {
  const attempt = message.attempt;
  // Read again here, not when the batch arrived: an earlier message of the batch may have moved it on.
  const delivery = await findDelivery(env.DB, message.delivery_id);
  // Gone, finished, or this attempt already happened (a repeated message).
  if (!delivery || delivery.status !== "pending" || delivery.attempts !== attempt - 1) return;
  const endpoint = await findEndpoint(env.DB, delivery.endpointId);
  if (!endpoint || endpoint.accountId !== delivery.accountId) {
    await closeDelivery(env.DB, delivery.id, "canceled", "The endpoint was deleted.");
    return;
  }
  if (!endpoint.enabled) {
    await closeDelivery(env.DB, delivery.id, "canceled", "The endpoint is disabled.");
    return;
  }
  const event = await findEvent(env.DB, delivery.eventId);
  if (!event || event.accountId !== endpoint.accountId) {
    await closeDelivery(env.DB, delivery.id, "failed", "The event is no longer available.");
    return;
  }

  const now = new Date();
  const refused = destinationProblem(endpoint.url, allowPrivateDestinations(env));
  let outcome: AttemptOutcome;
  if (refused !== null) {
    outcome = { kind: "failed", statusCode: null, error: `Not sent: ${refused}`, latencyMs: 0 };
  } else {
    const headers = await signedHeaders(activeSecrets(endpoint, now), event.id, Math.floor(now.getTime() / 1000), event.body);
    outcome = await sendAttempt(endpoint.url, headers, event.body);
  }

  if (outcome.kind === "failed") {
    await handleFailure(env, delivery, attempt, outcome);
    return;
  }
  const at = new Date().toISOString();
  const recorded = await recordAttempt(env.DB, delivery.id, attempt, {
    status: outcome.kind === "succeeded" ? "succeeded" : "failed",
    statusCode: outcome.statusCode,
    error: outcome.kind === "gone" ? "410 Gone: the endpoint was disabled." : null,
    latencyMs: outcome.latencyMs,
    at,
    nextAttemptAt: null,
  });
  if (!recorded) return;
  if (outcome.kind === "succeeded") await markEndpointHealthy(env.DB, endpoint.id);
  else await disableEndpoint(env.DB, endpoint.id, "gone", at);
}

async function purgeOldDeliveries(env: Env): Promise<void> {
  const before = new Date(Date.now() - DELIVERY_RETENTION_DAYS * 86_400_000).toISOString();
  try {
    await purgeDeliveriesBefore(env.DB, before, PURGE_BATCH_ROWS);
  } catch (err) {
    console.error("purging old webhook deliveries failed", err);
  }
}

interface Pending {
  message: Message<unknown>;
  body: WebhookMessage;
}

async function runInOrder(env: Env, items: readonly Pending[]): Promise<void> {
  for (const { message, body } of items) {
    try {
      await attemptDelivery(env, body);
      message.ack();
    } catch (err) {
      // Unexpected (e.g. D1 unavailable): the queue redelivers the same attempt.
      console.error(`webhook message ${message.id} failed`, err);
      message.retry({ delaySeconds: 30 });
    }
  }
}

/**
 * Attempts to different endpoints run in parallel (one slow receiver must not
 * hold up the others); attempts to the same endpoint run in the order the
 * queue gave them, so a job's events keep their order.
 */
export async function handleWebhookQueue(batch: MessageBatch<unknown>, env: Env, _ctx: ExecutionContext): Promise<void> {
  const groups = new Map<string, Pending[]>();
  for (const message of batch.messages) {
    if (!isWebhookMessage(message.body)) {
      console.error(`dropping malformed webhooks message ${message.id}`);
      message.ack();
      continue;
    }
    let delivery: Delivery | null;
    try {
      delivery = await findDelivery(env.DB, message.body.delivery_id);
    } catch (err) {
      console.error(`webhook message ${message.id}: reading its delivery failed`, err);
      message.retry({ delaySeconds: 30 });
      continue;
    }
    const key = delivery?.endpointId ?? message.id;
    const group = groups.get(key) ?? [];
    group.push({ message, body: message.body });
    groups.set(key, group);
  }
  await Promise.all([...groups.values()].map((items) => runInOrder(env, items)));
  await purgeOldDeliveries(env);
}
