/** The one message type on the webhooks queue: send attempt `attempt` of a delivery. */
export interface WebhookMessage {
  delivery_id: string;
  attempt: number;
}

export function isWebhookMessage(body: unknown): body is WebhookMessage {
  if (typeof body !== "object" || body === null) return false;
  const { delivery_id, attempt } = body as Record<string, unknown>;
  return typeof delivery_id === "string" && typeof attempt === "number" && Number.isInteger(attempt) && attempt >= 1;
}
