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

/** The account's usage as the API and MCP's get_usage answer it: credits of the period and kept-source storage. */
export async function readUsage(db: D1Database, accountId: string) {
  const current = await getUsage(db, accountId);
  // The key authenticated a moment ago; a missing account means it was just deleted.
  if (!current) throw new AppError("not_found", "Account not found.");
  const kept = await keptSourceBytes(db, accountId);
  return { ...usageToJson(current), kept_source_bytes: kept, max_kept_source_bytes: current.plan.maxKeptSourceBytes };
}

export const usage = apiApp().openapi(usageRoute, async (c) => c.json(await readUsage(c.env.DB, c.get("auth").accountId), 200));
