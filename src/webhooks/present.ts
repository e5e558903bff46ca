/** Webhook endpoints and deliveries as the API answers them. The secret appears only where a route adds it. */
import type { Delivery, WebhookEndpoint } from "../db/webhooks.ts";

export function presentEndpoint(endpoint: WebhookEndpoint, now: Date = new Date()) {
  const overlap =
    endpoint.previousSecretExpiresAt !== null && Date.parse(endpoint.previousSecretExpiresAt) > now.getTime()
      ? endpoint.previousSecretExpiresAt
      : null;
  return {
    webhook_id: endpoint.id,
    url: endpoint.url,
    description: endpoint.description,
    events: endpoint.events,
    enabled: endpoint.enabled,
    disabled_reason: endpoint.disabledReason,
    disabled_at: endpoint.disabledAt,
    failing_since: endpoint.failingSince,
    previous_secret_expires_at: overlap,
    created_at: endpoint.createdAt,
    updated_at: endpoint.updatedAt,
  };
}

export function presentDelivery(delivery: Delivery) {
  return {
    delivery_id: delivery.id,
    webhook_id: delivery.endpointId,
    event_id: delivery.eventId,
    event_type: delivery.eventType,
    status: delivery.status,
    attempts: delivery.attempts,
    last_status_code: delivery.lastStatusCode,
    last_error: delivery.lastError,
    latency_ms: delivery.lastLatencyMs,
    last_attempt_at: delivery.lastAttemptAt,
    next_attempt_at: delivery.nextAttemptAt,
    created_at: delivery.createdAt,
  };
}
