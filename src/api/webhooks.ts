/**
 * /api/v1/webhooks: endpoints, their delivery log, test events and
 * redelivery. Declared with @hono/zod-openapi so validation and the OpenAPI
 * document come from the same route definitions; mounted behind apiGuard.
 */
import { createRoute, OpenAPIHono, type z } from "@hono/zod-openapi";
import { decodeBase64Url } from "hono/utils/encode";
import { deleteEndpoint, findDelivery, findEndpointDelivery, listDeliveries, listEndpoints } from "../db/webhooks.ts";
import type { AppEnv } from "../http/app-env.ts";
import { AppError, ERROR_CODES, type ErrorCode } from "../http/errors.ts";
import { requireJsonBody } from "../http/json-body.ts";
import { fieldErrors } from "../http/validate.ts";
import { encodeCursor } from "../jobs/cursor.ts";
import { changeEndpoint, createEndpoint, redeliver, requireEndpoint, rotateSecret, sendTestEvent, webhookNotFound } from "../webhooks/manage.ts";
import { presentDelivery, presentEndpoint } from "../webhooks/present.ts";
import {
  CreateWebhookBody,
  Delivery,
  DeliveryList,
  DeliveryParams,
  DeliveryQuery,
  UpdateWebhookBody,
  Webhook,
  WebhookIdParam,
  WebhookList,
  WebhookWithSecret,
} from "../webhooks/schemas.ts";

const TAG = "Webhooks";
const PROBLEM_REF = { $ref: "#/components/schemas/Problem" } as const;
const BODY_ERRORS: ErrorCode[] = ["invalid_request", "payload_too_large", "unsupported_media_type"];
const AUTHENTICATED_ERRORS: ErrorCode[] = ["unauthorized", "rate_limited", "internal_error", "service_unavailable"];

/** The problem responses of an operation, one entry per status listing its codes. */
function problems(codes: ErrorCode[]) {
  const byStatus = new Map<number, ErrorCode[]>();
  for (const code of [...codes, ...AUTHENTICATED_ERRORS]) {
    const status = ERROR_CODES[code].status;
    byStatus.set(status, [...new Set([...(byStatus.get(status) ?? []), code])]);
  }
  return Object.fromEntries(
    [...byStatus].map(([status, statusCodes]) => [
      status,
      {
        description: `Problem: ${statusCodes.join(", ")}`,
        content: {
          "application/problem+json": { schema: { allOf: [PROBLEM_REF, { type: "object" as const, properties: { code: { type: "string" as const, enum: statusCodes } } }] } },
        },
      },
    ]),
  );
}

function json<T extends z.ZodType>(schema: T, description: string) {
  return { description, content: { "application/json": { schema } } };
}

/** Which problem code a failed validation maps to: the field decides. */
function validationError(issues: readonly z.core.$ZodIssue[], target: string): AppError {
  const errors = fieldErrors(issues);
  if (target === "json" && issues.some((issue) => issue.path[0] === "events")) {
    return new AppError("invalid_webhook_event", `events must be "*" or a list of known event types.`, { errors });
  }
  if (target === "json" && issues.some((issue) => issue.path[0] === "url")) {
    return new AppError("invalid_webhook_url", "url is required: an https URL of at most 2048 characters.", { errors });
  }
  return new AppError("invalid_request", target === "json" ? "The request body is invalid." : `The ${target} is invalid.`, { errors });
}

const listRoute = createRoute({
  operationId: "listWebhooks",
  method: "get",
  path: "/",
  tags: [TAG],
  summary: "List the account's webhook endpoints",
  responses: { 200: json(WebhookList, "Endpoints, oldest first"), ...problems([]) },
});

const createRouteDef = createRoute({
  operationId: "createWebhook",
  method: "post",
  path: "/",
  tags: [TAG],
  summary: "Create a webhook endpoint (at most 10 per account); the response shows its signing secret once",
  middleware: [requireJsonBody] as const,
  request: { body: { required: true, content: { "application/json": { schema: CreateWebhookBody } } } },
  responses: {
    201: json(WebhookWithSecret, "Created"),
    ...problems([...BODY_ERRORS, "invalid_webhook_url", "invalid_webhook_event", "webhook_limit_reached"]),
  },
});

const getRoute = createRoute({
  operationId: "getWebhook",
  method: "get",
  path: "/{webhook_id}",
  tags: [TAG],
  summary: "Get a webhook endpoint",
  request: { params: WebhookIdParam },
  responses: { 200: json(Webhook, "The endpoint"), ...problems(["invalid_request", "not_found"]) },
});

const updateRoute = createRoute({
  operationId: "updateWebhook",
  method: "patch",
  path: "/{webhook_id}",
  tags: [TAG],
  summary: "Change url, events, description or enabled (enabling clears a disabled flag)",
  middleware: [requireJsonBody] as const,
  request: { params: WebhookIdParam, body: { required: true, content: { "application/json": { schema: UpdateWebhookBody } } } },
  responses: {
    200: json(Webhook, "The changed endpoint"),
    ...problems([...BODY_ERRORS, "invalid_webhook_url", "invalid_webhook_event", "not_found"]),
  },
});

const deleteRoute = createRoute({
  operationId: "deleteWebhook",
  method: "delete",
  path: "/{webhook_id}",
  tags: [TAG],
  summary: "Delete a webhook endpoint; its pending retries stop",
  request: { params: WebhookIdParam },
  responses: { 204: { description: "Deleted" }, ...problems(["invalid_request", "not_found"]) },
});

const rotateRoute = createRoute({
  operationId: "rotateWebhookSecret",
  method: "post",
  path: "/{webhook_id}/rotate-secret",
  tags: [TAG],
  summary: "Issue a new signing secret; for 24 hours deliveries carry signatures of both",
  request: { params: WebhookIdParam },
  responses: { 200: json(WebhookWithSecret, "The endpoint with its new secret (shown once)"), ...problems([...BODY_ERRORS, "not_found"]) },
});

const deliveriesRoute = createRoute({
  operationId: "listWebhookDeliveries",
  method: "get",
  path: "/{webhook_id}/deliveries",
  tags: [TAG],
  summary: "The endpoint's delivery log, newest first (kept 30 days)",
  request: { params: WebhookIdParam, query: DeliveryQuery },
  responses: { 200: json(DeliveryList, "A page of deliveries"), ...problems(["invalid_request", "not_found"]) },
});

const redeliverRoute = createRoute({
  operationId: "redeliverWebhookDelivery",
  method: "post",
  path: "/{webhook_id}/deliveries/{delivery_id}/redeliver",
  tags: [TAG],
  summary: "Send a delivery's event again (same event id, a new delivery)",
  request: { params: DeliveryParams },
  responses: {
    202: json(Delivery, "The new delivery, queued"),
    ...problems([...BODY_ERRORS, "not_found", "webhook_disabled", "service_unavailable"]),
  },
});

const testRoute = createRoute({
  operationId: "sendWebhookTest",
  method: "post",
  path: "/{webhook_id}/test",
  tags: [TAG],
  summary: "Send a webhook.test event to this endpoint",
  request: { params: WebhookIdParam },
  responses: {
    202: json(Delivery, "The test delivery, queued"),
    ...problems([...BODY_ERRORS, "not_found", "webhook_disabled", "service_unavailable"]),
  },
});

const DELIVERY_CURSOR = /^(\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d{1,6})?Z)\|(whd_[A-Za-z0-9]{1,40})$/;

function decodeDeliveryCursor(cursor: string): { createdAt: string; id: string } {
  const invalid = new AppError("invalid_request", "cursor is not a next_cursor of this list.", { errors: [{ path: "cursor", message: "invalid" }] });
  if (!/^[A-Za-z0-9_-]{1,200}$/.test(cursor)) throw invalid;
  let text: string;
  try {
    text = new TextDecoder("utf-8", { fatal: true, ignoreBOM: false }).decode(decodeBase64Url(cursor));
  } catch {
    throw invalid;
  }
  const match = DELIVERY_CURSOR.exec(text);
  if (!match) throw invalid;
  return { createdAt: match[1]!, id: match[2]! };
}

export const webhooks = new OpenAPIHono<AppEnv>({
  defaultHook: (result) => {
    if (!result.success) throw validationError(result.error.issues, result.target);
  },
})
  .openapi(listRoute, async (c) => {
    const endpoints = await listEndpoints(c.env.DB, c.get("auth").accountId);
    return c.json({ webhooks: endpoints.map((e) => presentEndpoint(e)), count: endpoints.length }, 200);
  })
  .openapi(createRouteDef, async (c) => {
    const endpoint = await createEndpoint(c.env, c.get("auth").accountId, c.req.valid("json"));
    return c.json({ ...presentEndpoint(endpoint), secret: endpoint.secret }, 201);
  })
  .openapi(getRoute, async (c) => {
    const endpoint = await requireEndpoint(c.env, c.get("auth").accountId, c.req.valid("param").webhook_id);
    return c.json(presentEndpoint(endpoint), 200);
  })
  .openapi(updateRoute, async (c) => {
    const endpoint = await changeEndpoint(c.env, c.get("auth").accountId, c.req.valid("param").webhook_id, c.req.valid("json"));
    return c.json(presentEndpoint(endpoint), 200);
  })
  .openapi(deleteRoute, async (c) => {
    const { webhook_id } = c.req.valid("param");
    if (!(await deleteEndpoint(c.env.DB, c.get("auth").accountId, webhook_id))) throw webhookNotFound(webhook_id);
    return c.body(null, 204);
  })
  .openapi(rotateRoute, async (c) => {
    const endpoint = await rotateSecret(c.env, c.get("auth").accountId, c.req.valid("param").webhook_id);
    return c.json({ ...presentEndpoint(endpoint), secret: endpoint.secret }, 200);
  })
  .openapi(deliveriesRoute, async (c) => {
    const endpoint = await requireEndpoint(c.env, c.get("auth").accountId, c.req.valid("param").webhook_id);
    const { limit, cursor } = c.req.valid("query");
    const after = cursor !== undefined ? decodeDeliveryCursor(cursor) : null;
    const page = await listDeliveries(c.env.DB, { endpointId: endpoint.id, limit: limit + 1, after });
    const items = page.slice(0, limit);
    const last = items.at(-1);
    const nextCursor = page.length > limit && last ? encodeCursor({ createdAt: last.createdAt, id: last.id }) : null;
    return c.json({ deliveries: items.map(presentDelivery), next_cursor: nextCursor }, 200);
  })
  .openapi(redeliverRoute, async (c) => {
    const { webhook_id, delivery_id } = c.req.valid("param");
    const { accountId } = c.get("auth");
    const endpoint = await requireEndpoint(c.env, accountId, webhook_id);
    const original = await findEndpointDelivery(c.env.DB, endpoint.id, delivery_id);
    if (!original) throw new AppError("not_found", `No delivery ${JSON.stringify(delivery_id)} for this endpoint.`);
    const queued = await redeliver(c.env, accountId, endpoint, original);
    const delivery = await findDelivery(c.env.DB, queued.deliveryId);
    if (!delivery) throw new Error(`delivery ${queued.deliveryId} vanished right after insert`);
    return c.json(presentDelivery(delivery), 202);
  })
  .openapi(testRoute, async (c) => {
    const { webhook_id } = c.req.valid("param");
    const queued = await sendTestEvent(c.env, c.get("auth").accountId, webhook_id);
    const delivery = await findDelivery(c.env.DB, queued.deliveryId);
    if (!delivery) throw new Error(`delivery ${queued.deliveryId} vanished right after insert`);
    return c.json(presentDelivery(delivery), 202);
  });
