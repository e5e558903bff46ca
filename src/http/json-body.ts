import type { Context } from "hono";
import type { AppEnv } from "./app-env";
import { AppError } from "./errors";

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
