/**
 * The local CDN exists only where CDN_URL points at this Worker's own /cdn
 * (local development, tests). In production CDN_URL is the R2 bucket's custom
 * domain, and the Worker answers /cdn/* as any unknown path: 404, no bucket
 * reads, no second public copy of the clips with its own caching.
 */
import { createMiddleware } from "hono/factory";
import type { AppEnv } from "../http/app-env.ts";
import { AppError } from "../http/errors.ts";

export const CDN_MOUNT = "/cdn";

/** True when CDN_URL names `{origin}/cdn` of the request's own origin. */
export function cdnServedHere(cdnUrl: string, requestUrl: string): boolean {
  let base: URL;
  try {
    base = new URL(cdnUrl);
  } catch {
    return false;
  }
  const own = new URL(requestUrl);
  return base.origin === own.origin && base.pathname.replace(/\/+$/, "") === CDN_MOUNT;
}

export const localCdnOnly = createMiddleware<AppEnv>(async (c, next) => {
  if (!cdnServedHere(c.env.CDN_URL, c.req.url)) throw new AppError("not_found", `No route for ${c.req.method} ${c.req.path}.`);
  await next();
});
