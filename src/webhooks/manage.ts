/**
 * Endpoint management rules shared by the API and the dashboard: URL and
 * event checks, the per-account limit, secret rotation, test events and
 * redelivery.
 */
import {
  findAccountEndpoint,
  findEvent,
  insertDelivery,
  insertEndpointWithinLimit,
  rotateEndpointSecret,
  updateEndpoint,
  type Delivery,
  type EndpointChanges,
  type WebhookEndpoint,
} from "../db/webhooks.ts";
import { DomainError } from "../domain/errors.ts";
import { newId } from "../lib/random.ts";
import { allowPrivateDestinations, checkWebhookUrl } from "./destination.ts";
import { isJobEventType, TEST_EVENT_TYPE, type JobEventType } from "./events.ts";
import { enqueueFirstAttempts, newDeliveryId, publishEvent, type QueuedDelivery } from "./publish.ts";
import { MAX_DESCRIPTION_LENGTH, MAX_WEBHOOKS_PER_ACCOUNT } from "./schemas.ts";
import { newSecret } from "./secret.ts";

/** The previous secret keeps signing this long after a rotation. */
export const ROTATION_OVERLAP_SECONDS = 24 * 3600;

export interface EndpointInput {
  url?: string;
  events?: readonly string[] | "*";
  description?: string;
  enabled?: boolean;
}

function checkEvents(events: readonly string[] | "*"): JobEventType[] | "*" {
  if (events === "*") return "*";
  const known = events.filter(isJobEventType);
  const unknown = events.filter((event) => !isJobEventType(event));
  if (events.length === 0 || unknown.length > 0) {
    const detail =
      events.length === 0 ? "events must list at least one event type, or be \"*\"." : `Unknown event type: ${unknown.join(", ")}.`;
    throw new DomainError("invalid_webhook_event", detail, { errors: [{ path: "events", message: detail }] });
  }
  return [...new Set(known)];
}

function checkDescription(description: string): string {
  if (description.length > MAX_DESCRIPTION_LENGTH) {
    const detail = `description is longer than ${MAX_DESCRIPTION_LENGTH} characters.`;
    throw new DomainError("invalid_request", detail, { errors: [{ path: "description", message: detail }] });
  }
  return description;
}

/** Validated changes: every rule checked before anything is written. */
export function checkInput(env: Env, input: EndpointInput): EndpointChanges {
  return {
    ...(input.url !== undefined ? { url: checkWebhookUrl(input.url, allowPrivateDestinations(env)) } : {}),
    ...(input.events !== undefined ? { events: checkEvents(input.events) } : {}),
    ...(input.description !== undefined ? { description: checkDescription(input.description) } : {}),
    ...(input.enabled !== undefined ? { enabled: input.enabled } : {}),
  };
}

export function webhookNotFound(endpointId: string): DomainError {
  return new DomainError("not_found", `No webhook endpoint ${JSON.stringify(endpointId)}.`);
}

export async function requireEndpoint(env: Env, accountId: string, endpointId: string): Promise<WebhookEndpoint> {
  const endpoint = await findAccountEndpoint(env.DB, accountId, endpointId);
  if (!endpoint) throw webhookNotFound(endpointId);
  return endpoint;
}

/** Creates an endpoint; returns it with its secret, which is shown only now. */
export async function createEndpoint(env: Env, accountId: string, input: EndpointInput & { url: string }): Promise<WebhookEndpoint> {
  const changes = checkInput(env, input);
  const id = newId("wh");
  const inserted = await insertEndpointWithinLimit(
    env.DB,
    {
      id,
      accountId,
      url: changes.url!,
      description: changes.description ?? "",
      events: changes.events ?? "*",
      enabled: changes.enabled ?? true,
      secret: newSecret(),
      now: new Date().toISOString(),
    },
    MAX_WEBHOOKS_PER_ACCOUNT,
  );
  if (!inserted) {
    throw new DomainError("webhook_limit_reached", `An account can have at most ${MAX_WEBHOOKS_PER_ACCOUNT} webhook endpoints.`, {
      extra: { limit: MAX_WEBHOOKS_PER_ACCOUNT },
    });
  }
  return requireEndpoint(env, accountId, id);
}

export async function changeEndpoint(env: Env, accountId: string, endpointId: string, input: EndpointInput): Promise<WebhookEndpoint> {
  const changes = checkInput(env, input);
  if (!(await updateEndpoint(env.DB, accountId, endpointId, changes, new Date().toISOString()))) throw webhookNotFound(endpointId);
  return requireEndpoint(env, accountId, endpointId);
}

/** Issues a new secret; the old one signs alongside it for ROTATION_OVERLAP_SECONDS. */
export async function rotateSecret(env: Env, accountId: string, endpointId: string): Promise<WebhookEndpoint> {
  const now = new Date();
  const expires = new Date(now.getTime() + ROTATION_OVERLAP_SECONDS * 1000).toISOString();
  if (!(await rotateEndpointSecret(env.DB, accountId, endpointId, newSecret(), expires, now.toISOString()))) {
    throw webhookNotFound(endpointId);
  }
  return requireEndpoint(env, accountId, endpointId);
}

/** A queue outage is a 503 the caller can retry, not an internal error. */
async function queueing<T>(send: () => Promise<T>): Promise<T> {
  try {
    return await send();
  } catch (err) {
    console.error("queueing a webhook delivery failed", err);
    throw new DomainError("service_unavailable", "The delivery could not be queued. Retry shortly.", { headers: { "Retry-After": "5" } });
  }
}

function refuseDisabled(endpoint: WebhookEndpoint): void {
  if (!endpoint.enabled) {
    throw new DomainError("webhook_disabled", "The webhook endpoint is disabled; enable it (PATCH enabled: true) first.", {
      extra: { disabled_reason: endpoint.disabledReason },
    });
  }
}

/** Queues a webhook.test event to this endpoint only. */
export async function sendTestEvent(env: Env, accountId: string, endpointId: string): Promise<QueuedDelivery> {
  const endpoint = await requireEndpoint(env, accountId, endpointId);
  refuseDisabled(endpoint);
  const body = {
    type: TEST_EVENT_TYPE,
    timestamp: new Date().toISOString(),
    data: { webhook_id: endpoint.id, message: "A test event from clipjobs." },
  } as const;
  const [delivery] = await queueing(() => publishEvent(env, accountId, body, [endpoint]));
  if (!delivery) throw new Error("publishing a test event produced no delivery");
  return delivery;
}

/** Sends an earlier delivery's event again, as a new delivery under the same event id. */
export async function redeliver(env: Env, accountId: string, endpoint: WebhookEndpoint, original: Delivery): Promise<QueuedDelivery> {
  refuseDisabled(endpoint);
  const event = await findEvent(env.DB, original.eventId);
  if (!event || event.accountId !== accountId) throw new DomainError("not_found", "The event of this delivery is no longer kept.");
  const queued = { deliveryId: newDeliveryId(), endpointId: endpoint.id, eventId: event.id };
  await insertDelivery(env.DB, {
    id: queued.deliveryId,
    endpointId: endpoint.id,
    accountId,
    eventId: event.id,
    eventType: event.type,
    now: new Date().toISOString(),
  }).run();
  await queueing(() => enqueueFirstAttempts(env, [queued]));
  return queued;
}
