import { Hono } from "hono";
import { getUsage, usageToJson } from "../db/accounts";
import type { AppEnv } from "../http/app-env";
import { AppError } from "../http/errors";

export const usage = new Hono<AppEnv>().get("/", async (c) => {
  const current = await getUsage(c.env.DB, c.get("auth").accountId);
  // The key authenticated a moment ago; a missing account means it was just deleted.
  if (!current) throw new AppError("not_found", "Account not found.");
  return c.json(usageToJson(current));
});
