import { apiApp, apiRoute } from "../http/api-app";
import { Health } from "./openapi-schemas";

const healthRoute = apiRoute({
  method: "get",
  path: "/",
  summary: "Liveness",
  operationId: "getHealth",
  responses: { 200: { description: "Service is up", content: { "application/json": { schema: Health } } } },
}, {
  authenticated: false,
  errors: [],
});

/** Liveness only: no D1, no Durable Object, so it stays cheap under load. */
export const health = apiApp().openapi(healthRoute, (c) => {
  c.header("Cache-Control", "no-store");
  return c.json({ ok: true as const, service: "clipjobs" }, 200);
});
