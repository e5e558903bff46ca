import { createMiddleware } from "hono/factory";
import { accountState } from "../account/stub";
import { WINDOW_SECONDS } from "../account/request-window";
import { jobReadTarget } from "../jobs/read-path";
import type { AppEnv } from "./app-env";
import { unauthorized } from "./auth";
import { AppError } from "./errors";

/**
 * Counts the request in the account's rolling window (its Durable Object,
 * which also refuses keys revoked since they were looked up) and sets the IETF
 * RateLimit headers before anything else can fail, so every authenticated
 * response carries them, errors included. The handler runs only once the
 * request is admitted, so a client over its limit costs no D1 work.
 */
export const rateLimit = createMiddleware<AppEnv>(async (c, next) => {
  const { accountId, keyId, plan } = c.get("auth");
  // A job read gets the job's view in the same call (src/jobs/read-path.ts).
  const readJobId = jobReadTarget(c.req.method, c.req.path);
  const read = readJobId === null ? undefined : { jobId: readJobId, cdnBase: c.env.CDN_URL };
  const result = await accountState(c.env, accountId).admit({ accountId, keyId, requestsPerMinute: plan.requestsPerMinute, read });
  if (result.revoked) throw unauthorized();
  c.header("RateLimit-Policy", `"default";q=${result.limit};w=${WINDOW_SECONDS}`);
  c.header("RateLimit", `"default";r=${result.remaining};t=${result.resetSeconds}`);
  if (!result.allowed) {
    throw new AppError("rate_limited", `Rate limit of ${result.limit} requests per ${WINDOW_SECONDS} seconds exceeded.`, {
      headers: { "Retry-After": String(result.retryAfterSeconds) },
      extra: { retry_after_seconds: result.retryAfterSeconds },
    });
  }
  if (result.job) c.set("liveJob", result.job);
  await next();
});
