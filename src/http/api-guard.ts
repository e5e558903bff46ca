import { every } from "hono/combine";
import { createMiddleware } from "hono/factory";
import type { AppEnv } from "./app-env.ts";
import { authenticate } from "./auth.ts";
import { jsonBodyGuard } from "./body-guard.ts";
import { rateLimit } from "./rate-limit.ts";

/** Paths under /api/v1 that answer without a key (SPEC section 4). */
export const PUBLIC_API_PATHS: ReadonlySet<string> = new Set(["/api/v1/openapi.json"]);

/** The tus upload routes: raw bytes (or no body), never JSON; they check their own bodies. */
export const UPLOADS_PATH = "/api/v1/uploads";

/** The logo routes: PUT takes the image's bytes (at most 1 MiB), checked by the route. */
export const LOGO_PATH = "/api/v1/logo";

/** The platform cookies routes: PUT takes the cookies file as text (at most 100 KiB), checked by the route. */
export const COOKIES_PATH = "/api/v1/cookies";

const guarded = every(authenticate, rateLimit, jsonBodyGuard);
const guardedRawBody = every(authenticate, rateLimit);

function isUploadPath(path: string): boolean {
  return path === UPLOADS_PATH || path.startsWith(`${UPLOADS_PATH}/`);
}

function isLogoPath(path: string): boolean {
  return path === LOGO_PATH || path.startsWith(`${LOGO_PATH}/`) || path === COOKIES_PATH || path.startsWith(`${COOKIES_PATH}/`);
}

/**
 * auth -> rate limit -> body guard, for every /api/v1 route except the public
 * ones. tus discovery (OPTIONS on the upload routes) needs no key, as tus
 * clients and browsers send it without credentials.
 */
export const apiGuard = createMiddleware<AppEnv>(async (c, next) => {
  if (PUBLIC_API_PATHS.has(c.req.path)) return next();
  if (isUploadPath(c.req.path)) {
    if (c.req.method === "OPTIONS") return next();
    return guardedRawBody(c, next);
  }
  if (isLogoPath(c.req.path)) return guardedRawBody(c, next);
  await guarded(c, next);
});
