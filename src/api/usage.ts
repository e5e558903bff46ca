import { getUsage, usageToJson } from "../db/accounts.ts";
import { apiApp, apiRoute } from "../http/api-app.ts";
import { AppError } from "../http/errors.ts";
import { keptSourceBytes } from "../uploads/kept-source-limit.ts";
import { Usage } from "./openapi-schemas.ts";

const usageRoute = apiRoute({
  method: "get",
  path: "/",
  summary: "Credit balance of the current period and storage of kept sources",
  operationId: "getUsage",
  responses: { 200: { description: "Usage", content: { "application/json": { schema: Usage } } } },
}, {
  errors: ["not_found"],
});

export const usage = apiApp().openapi(usageRoute, async (c) => {
  const current = await getUsage(c.env.DB, c.get("auth").accountId);
  // The key authenticated a moment ago; a missing account means it was just deleted.
  if (!current) throw new AppError("not_found", "Account not found.");
  const kept = await keptSourceBytes(c.env.DB, c.get("auth").accountId);
  return c.json({ ...usageToJson(current), kept_source_bytes: kept, max_kept_source_bytes: current.plan.maxKeptSourceBytes }, 200);
});
