/**
 * Turning an event into deliveries: the event's body is stored once, one
 * delivery row per endpoint, and one queue message per delivery for its
 * first attempt. Every attempt and every endpoint then send the same bytes
 * under the same webhook-id.
 */
import { closeDelivery, insertDelivery, insertEvent, type WebhookEndpoint } from "../db/webhooks.ts";
import { newId } from "../lib/random.ts";
import type { EventBody } from "./events.ts";
import type { WebhookMessage } from "./message.ts";

export interface QueuedDelivery {
  deliveryId: string;
  endpointId: string;
  eventId: string;
}

function newEventId(): string {
  return newId("evt");
}

export function newDeliveryId(): string {
  return newId("whd");
}

/** Queues attempt 1 of each delivery; a delivery whose message could not be queued is closed as failed. */
export async function enqueueFirstAttempts(env: Env, deliveries: readonly QueuedDelivery[]): Promise<void> {
  if (deliveries.length === 0) return;
  const messages = deliveries.map((d) => ({ body: { delivery_id: d.deliveryId, attempt: 1 } satisfies WebhookMessage }));
  try {
    await env.WEBHOOKS.sendBatch(messages);
  } catch (err) {
    console.error(`queueing ${deliveries.length} webhook deliveries failed`, err);
    await Promise.all(deliveries.map((d) => closeDelivery(env.DB, d.deliveryId, "failed", "The delivery could not be queued.")));
    throw err;
  }
}

/** Stores the event and a pending delivery per endpoint, then queues them. */
export async function publishEvent(
  env: Env,
  accountId: string,
  body: EventBody,
  endpoints: readonly WebhookEndpoint[],
): Promise<QueuedDelivery[]> {
  // Never send one account's event to another's endpoint, whatever the caller passed.
  const targets = endpoints.filter((endpoint) => endpoint.accountId === accountId);
  if (targets.length === 0) return [];
  const eventId = newEventId();
  const now = new Date().toISOString();
  const deliveries = targets.map((endpoint) => ({ deliveryId: newDeliveryId(), endpointId: endpoint.id, eventId }));
  await env.DB.batch([
    insertEvent(env.DB, { id: eventId, accountId, type: body.type, body: JSON.stringify(body), createdAt: now }),
    ...deliveries.map((d) =>
      insertDelivery(env.DB, { id: d.deliveryId, endpointId: d.endpointId, accountId, eventId, eventType: body.type, now }),
    ),
  ]);
  await enqueueFirstAttempts(env, deliveries);
  return deliveries;
}
