import { every } from "hono/combine";
import { createMiddleware } from "hono/factory";
import type { AppEnv } from "./app-env";
import { authenticate } from "./auth";
import { jsonBodyGuard } from "./body-guard";
import { rateLimit } from "./rate-limit";

/** Paths under /api/v1 that answer without a key (SPEC section 4). */
export const PUBLIC_API_PATHS: ReadonlySet<string> = new Set(["/api/v1/openapi.json"]);

const guarded = every(authenticate, rateLimit, jsonBodyGuard);

/** auth -> rate limit -> body guard, for every /api/v1 route except the public ones. */
export const apiGuard = createMiddleware<AppEnv>(async (c, next) => {
  if (PUBLIC_API_PATHS.has(c.req.path)) return next();
  await guarded(c, next);
});
