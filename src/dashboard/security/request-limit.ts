/**
 * The dashboard's request limits: every dashboard request (pages, forms,
 * status polling, sign-in and sign-up) counts in the rolling window of its
 * client address (an IPv4 address or an IPv6 /64: the API gate's client key)
 * and, when it carries a session cookie, in the window of that session.
 * Both windows are ClientGate Durable Objects (the API gate's class, under
 * names of their own), exact under concurrency. Every answer carries the
 * IETF RateLimit headers the API sends, one item per window; over a limit
 * the answer is 429 with Retry-After and nothing behind the limit runs (no
 * session lookup, no D1 read, no call into the fleet).
 *
 * Like the API gate, a request without CF-Connecting-IP never came through
 * Cloudflare's edge (local development, tests) and has no address window;
 * its session window still applies.
 */
import type { Context } from "hono";
import { createMiddleware } from "hono/factory";
import { WINDOW_SECONDS } from "../../account/request-window.ts";
import { clientGate } from "../../gate/client-gate.ts";
import { clientKey } from "../../gate/client-key.ts";
import type { DashboardEnv } from "../env.ts";
import { readCookie, SESSION_COOKIE } from "./cookies.ts";
import { sha256Url } from "./tokens.ts";

/** Requests per client address per rolling minute (office networks share one IPv4 address). */
export const DASHBOARD_REQUESTS_PER_ADDRESS = 300;
/** Requests per session per rolling minute: a job page polls its status once a second. */
export const DASHBOARD_REQUESTS_PER_SESSION = 180;

export const ADDRESS_POLICY = "dashboard-address";
export const SESSION_POLICY = "dashboard-session";

interface Counted {
  policy: string;
  limit: number;
  remaining: number;
  resetSeconds: number;
  retryAfterSeconds: number;
  allowed: boolean;
}

function setHeaders(c: Context<DashboardEnv>, counted: Counted[]): void {
  if (counted.length === 0) return;
  c.header("RateLimit-Policy", counted.map((w) => `"${w.policy}";q=${w.limit};w=${WINDOW_SECONDS}`).join(", "));
  c.header("RateLimit", counted.map((w) => `"${w.policy}";r=${w.remaining};t=${w.resetSeconds}`).join(", "));
}

async function count(env: Env, policy: string, name: string, limit: number): Promise<Counted> {
  const result = await clientGate(env, `${policy}:${name}`).hit(limit);
  return { ...result, policy, limit };
}

function refused(c: Context<DashboardEnv>, retryAfterSeconds: number): Response {
  c.header("Retry-After", String(retryAfterSeconds));
  if (c.req.path.endsWith(".json")) return c.json({ error: "rate_limited", retry_after_seconds: retryAfterSeconds }, 429);
  return c.text(`Too many requests. Try again in ${retryAfterSeconds} second${retryAfterSeconds === 1 ? "" : "s"}.`, 429);
}

export const dashboardRequestLimit = createMiddleware<DashboardEnv>(async (c, next) => {
  const counted: Counted[] = [];
  const address = c.req.header("CF-Connecting-IP");
  if (address) {
    const byAddress = await count(c.env, ADDRESS_POLICY, clientKey(address), DASHBOARD_REQUESTS_PER_ADDRESS);
    counted.push(byAddress);
    if (!byAddress.allowed) {
      setHeaders(c, counted);
      return refused(c, byAddress.retryAfterSeconds);
    }
  }
  const token = readCookie(c, SESSION_COOKIE);
  // Any cookie value counts under its own name (an unknown one is no cheaper to send); the address window bounds how many.
  if (token && token.length <= 100) {
    const bySession = await count(c.env, SESSION_POLICY, await sha256Url(`session\u0000${token}`), DASHBOARD_REQUESTS_PER_SESSION);
    counted.unshift(bySession);
    if (!bySession.allowed) {
      setHeaders(c, counted);
      return refused(c, bySession.retryAfterSeconds);
    }
  }
  setHeaders(c, counted);
  await next();
});
