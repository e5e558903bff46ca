import type { Context } from "hono";
import { createMiddleware } from "hono/factory";
import { accountState } from "../account/stub.ts";
import { WINDOW_SECONDS } from "../account/request-window.ts";
import { jobReadTarget } from "../jobs/read-path.ts";
import type { AppEnv } from "./app-env.ts";
import { unauthorized } from "./auth.ts";
import { AppError } from "./errors.ts";

/** The window's refusal: 429 rate_limited with when to retry. */
export function rateLimited(limit: number, retryAfterSeconds: number, detail = `Rate limit of ${limit} requests per ${WINDOW_SECONDS} seconds exceeded.`): AppError {
  return new AppError("rate_limited", detail, {
    headers: { "Retry-After": String(retryAfterSeconds) },
    extra: { retry_after_seconds: retryAfterSeconds },
  });
}

/** What a counted request was granted: `granted` of the `cost` it asked for (at least 1). */
export interface Admission {
  granted: number;
  limit: number;
  /** Seconds until one more request would be accepted; 0 when everything asked for was granted. */
  retryAfterSeconds: number;
}

/**
 * Counts the request in the account's rolling window (its Durable Object,
 * which also refuses keys revoked since they were looked up) as `cost`
 * requests, and sets the IETF RateLimit headers before anything else can
 * fail, so every authenticated response carries them, errors included.
 * Throws rate_limited when nothing could be granted; a request that asked for
 * more than one (an MCP batch) may be granted fewer.
 */
export async function admitRequest(c: Context<AppEnv>, cost = 1): Promise<Admission> {
  const { accountId, keyId, plan } = c.get("auth");
  // A job read gets the job's view in the same call (src/jobs/read-path.ts).
  const readJobId = jobReadTarget(c.req.method, c.req.path);
  const read = readJobId === null ? undefined : { jobId: readJobId, cdnBase: c.env.CDN_URL };
  const result = await accountState(c.env, accountId).admit({ accountId, keyId, requestsPerMinute: plan.requestsPerMinute, read, cost });
  if (result.revoked) throw unauthorized();
  c.header("RateLimit-Policy", `"default";q=${result.limit};w=${WINDOW_SECONDS}`);
  c.header("RateLimit", `"default";r=${result.remaining};t=${result.resetSeconds}`);
  if (!result.allowed) throw rateLimited(result.limit, result.retryAfterSeconds);
  if (result.job) c.set("liveJob", result.job);
  return { granted: result.granted, limit: result.limit, retryAfterSeconds: result.retryAfterSeconds };
}

/**
 * Counts the request (admitRequest, as one). The handler runs only once the
 * request is admitted, so a client over its limit costs no D1 work.
 */
export const rateLimit = createMiddleware<AppEnv>(async (c, next) => {
  await admitRequest(c);
  await next();
});
