import { apiApp, apiRoute } from "../http/api-app.ts";
import { Health } from "./openapi-schemas.ts";

const healthRoute = apiRoute({
  method: "get",
  path: "/",
  summary: "Liveness",
  description:
    "Answers 200 while the Worker runs; it reads no storage. The local stack (npm run dev, the demo, the e2e harness) opens its port only after the database migrations have been applied, so a 200 there also means the API is ready.",
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
