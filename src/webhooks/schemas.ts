/** Request and response bodies of /api/v1/webhooks, declared once for validation and the OpenAPI document. */
import { z } from "@hono/zod-openapi";
import { JOB_EVENT_TYPES } from "./events.ts";
import { MAX_WEBHOOK_URL_LENGTH } from "./destination.ts";

export const MAX_WEBHOOKS_PER_ACCOUNT = 10;
export const MAX_DESCRIPTION_LENGTH = 500;

const Timestamp = z.string().openapi({ format: "date-time", description: "RFC 3339 timestamp, UTC" });

export const WebhookIdParam = z.object({
  webhook_id: z.string().max(64).openapi({ param: { name: "webhook_id", in: "path" } }),
});
export const DeliveryParams = WebhookIdParam.extend({
  delivery_id: z.string().max(64).openapi({ param: { name: "delivery_id", in: "path" } }),
});

export const WebhookEvents = z
  .union([z.literal("*"), z.array(z.enum(JOB_EVENT_TYPES)).min(1).max(JOB_EVENT_TYPES.length)])
  .openapi("WebhookEvents", {
    description: '"*" for every event (the default), or a list of event types. webhook.test is always sent.',
  });

const Url = z.string().max(MAX_WEBHOOK_URL_LENGTH).openapi({
  description: "https URL that receives POSTed events; private, loopback and metadata hosts are refused",
});
const Description = z.string().max(MAX_DESCRIPTION_LENGTH).openapi({ description: `At most ${MAX_DESCRIPTION_LENGTH} characters` });

export const CreateWebhookBody = z
  .object({ url: Url, events: WebhookEvents.optional(), description: Description.optional(), enabled: z.boolean().optional() })
  .openapi("CreateWebhookBody");

export const UpdateWebhookBody = z
  .object({ url: Url.optional(), events: WebhookEvents.optional(), description: Description.optional(), enabled: z.boolean().optional() })
  .refine((body) => Object.values(body).some((value) => value !== undefined), { message: "give at least one of url, events, description, enabled" })
  .openapi("UpdateWebhookBody");

export const Webhook = z
  .object({
    webhook_id: z.string(),
    url: z.string(),
    description: z.string(),
    events: WebhookEvents,
    enabled: z.boolean(),
    disabled_reason: z
      .enum(["gone", "failing"])
      .nullable()
      .openapi({ description: "Why the service disabled it: the endpoint answered 410 (gone) or failed for about three days (failing)." }),
    disabled_at: Timestamp.nullable(),
    failing_since: Timestamp.nullable().openapi({ description: "First failed attempt since the last success" }),
    previous_secret_expires_at: Timestamp.nullable().openapi({ description: "Until then the previous secret signs too (after a rotation)" }),
    created_at: Timestamp,
    updated_at: Timestamp,
  })
  .openapi("Webhook");

export const WebhookWithSecret = Webhook.extend({
  secret: z.string().openapi({ description: "whsec_ + base64 key. Shown only in this response." }),
}).openapi("WebhookWithSecret");

export const WebhookList = z.object({ webhooks: z.array(Webhook), count: z.number().int() }).openapi("WebhookList");

export const Delivery = z
  .object({
    delivery_id: z.string(),
    webhook_id: z.string(),
    event_id: z.string().openapi({ description: "The webhook-id header: the same for every attempt and redelivery" }),
    event_type: z.string(),
    status: z.enum(["pending", "succeeded", "failed", "canceled"]),
    attempts: z.number().int(),
    last_status_code: z.number().int().nullable(),
    last_error: z.string().nullable(),
    latency_ms: z.number().int().nullable(),
    last_attempt_at: Timestamp.nullable(),
    next_attempt_at: Timestamp.nullable(),
    created_at: Timestamp,
  })
  .openapi("WebhookDelivery");

export const DeliveryList = z
  .object({ deliveries: z.array(Delivery), next_cursor: z.string().nullable() })
  .openapi("WebhookDeliveryList");

export const DeliveryQuery = z.object({
  limit: z.coerce.number().int().min(1).max(100).default(50).openapi({ param: { name: "limit", in: "query" } }),
  cursor: z.string().max(200).optional().openapi({ param: { name: "cursor", in: "query" }, description: "next_cursor of the previous page" }),
});
