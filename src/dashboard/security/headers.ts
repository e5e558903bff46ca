import { createMiddleware } from "hono/factory";
import type { DashboardEnv } from "../env.ts";
import { randomToken } from "./tokens.ts";

function originOf(url: string): string | null {
  try {
    return new URL(url).origin;
  } catch {
    return null;
  }
}

/**
 * Headers of every dashboard response: a strict Content-Security-Policy (inline
 * style and scripts only with this response's nonce; media and thumbnails from
 * the Worker and {cdn_url}), no framing, no caching of account pages.
 */
export const dashboardHeaders = createMiddleware<DashboardEnv>(async (c, next) => {
  const nonce = randomToken();
  c.set("nonce", nonce);
  await next();
  const cdn = originOf(c.env.CDN_URL);
  const media = ["'self'", ...(cdn ? [cdn] : [])].join(" ");
  const policy = [
    "default-src 'none'",
    `style-src 'nonce-${nonce}'`,
    `script-src 'nonce-${nonce}'`,
    `img-src ${media}`,
    `media-src ${media}`,
    "connect-src 'self'",
    "form-action 'self'",
    "frame-ancestors 'none'",
    "base-uri 'none'",
  ].join("; ");
  c.res.headers.set("Content-Security-Policy", policy);
  c.res.headers.set("X-Content-Type-Options", "nosniff");
  c.res.headers.set("Referrer-Policy", "same-origin");
  if (!c.res.headers.has("Cache-Control")) c.res.headers.set("Cache-Control", "no-store");
});
