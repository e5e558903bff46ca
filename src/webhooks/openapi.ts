/**
 * The webhooks routes' part of /api/v1/openapi.json, generated from their
 * @hono/zod-openapi declarations: paths under the mount point, component
 * schemas, and the rate-limit headers every authenticated answer carries.
 */
import { webhooks } from "./routes";

export const WEBHOOKS_MOUNT = "/api/v1/webhooks";

const RESPONSE_HEADERS = {
  "RateLimit-Policy": { description: 'e.g. "default";q=60;w=60', schema: { type: "string" } },
  RateLimit: { description: 'e.g. "default";r=59;t=60', schema: { type: "string" } },
  "Request-Id": { description: "Identifies the request in logs and problem documents", schema: { type: "string" } },
};

type JsonObject = Record<string, unknown>;

function withHeaders(operation: JsonObject): JsonObject {
  const responses = (operation.responses ?? {}) as Record<string, JsonObject>;
  const withRate = Object.fromEntries(
    Object.entries(responses).map(([status, response]) => [
      status,
      { ...response, headers: status === "429" ? { ...RESPONSE_HEADERS, "Retry-After": { schema: { type: "integer" } } } : RESPONSE_HEADERS },
    ]),
  );
  return { ...operation, responses: withRate };
}

function operationId(method: string, path: string): string {
  return `${method}${path.replace(/[{}]/g, "").replace(/[^A-Za-z0-9]+(.)?/g, (_m, ch: string | undefined) => (ch ?? "").toUpperCase())}`;
}

export function webhookOpenApi(): { paths: Record<string, JsonObject>; schemas: JsonObject } {
  const doc = webhooks.getOpenAPI31Document({ openapi: "3.1.0", info: { title: "webhooks", version: "1" } });
  const paths: Record<string, JsonObject> = {};
  for (const [relative, item] of Object.entries(doc.paths ?? {})) {
    const path = WEBHOOKS_MOUNT + (relative === "/" ? "" : relative);
    const operations: JsonObject = {};
    for (const [method, operation] of Object.entries(item as JsonObject)) {
      operations[method] = { operationId: operationId(method, path), ...withHeaders(operation as JsonObject) };
    }
    paths[path] = operations;
  }
  return { paths, schemas: (doc.components?.schemas ?? {}) as JsonObject };
}
