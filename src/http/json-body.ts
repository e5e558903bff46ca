import type { Context } from "hono";
import { createMiddleware } from "hono/factory";
import type { AppEnv } from "./app-env.ts";
import { AppError } from "./errors.ts";
import { isBlankJson } from "./body-guard.ts";

/**
 * The request body parsed as JSON, for handlers that read it without a
 * schema; malformed JSON is a 400 invalid_request (never a 500). Size and
 * Content-Type are the body guard's job, which runs before every handler.
 */
export async function readJsonBody(c: Context<AppEnv>): Promise<unknown> {
  const text = await c.req.text();
  try {
    return JSON.parse(text) as unknown;
  } catch {
    throw new AppError("invalid_request", "The request body is not valid JSON.");
  }
}

/**
 * For routes whose body is required (PUT of a configuration): a request
 * without a JSON body is a 400, not an empty object. Hono's json validator
 * reads a request without a JSON Content-Type as {}, which would silently
 * reset a configuration to its defaults. Runs after the body guard, so a
 * body that is present already is JSON.
 */
export const requireJsonBody = createMiddleware<AppEnv>(async (c, next) => {
  const mediaType = (c.req.header("Content-Type") ?? "").split(";", 1)[0]!.trim().toLowerCase();
  if (mediaType !== "application/json" || isBlankJson(await c.req.raw.clone().text())) {
    throw new AppError("invalid_request", "A JSON request body is required.", {
      errors: [{ path: "(body)", message: "required" }],
    });
  }
  await next();
});
