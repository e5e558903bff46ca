/**
 * CSRF defences for every dashboard form:
 * - Origin: a POST whose Origin (or, without one, Sec-Fetch-Site) says it
 *   came from another site is refused before anything else.
 * - Token: signed-in forms carry the session's synchronizer token; the
 *   sign-in and sign-up forms (no session yet) carry a double-submit token
 *   that must equal the HttpOnly `clipjobs_csrf` cookie.
 */
import type { Context } from "hono";
import { createMiddleware } from "hono/factory";
import { timingSafeEqualText } from "../../keys/api-key.ts";
import type { DashboardEnv } from "../env.ts";
import { readCookie, VISITOR_CSRF_COOKIE, writeCookie } from "./cookies.ts";
import { randomToken } from "./tokens.ts";

/** Name of the hidden form field. */
export const CSRF_FIELD = "csrf_token";
const VISITOR_CSRF_TTL_SECONDS = 2 * 60 * 60;

export type CsrfRefusal = "cross_origin" | "bad_token";

/** True when the request plausibly came from the dashboard's own pages. */
export function isSameOriginRequest(c: Context<DashboardEnv>): boolean {
  const origin = c.req.header("Origin");
  if (origin !== undefined) return origin === new URL(c.req.url).origin;
  // Browsers that omit Origin still send Sec-Fetch-Site; a non-browser client sends neither.
  const site = c.req.header("Sec-Fetch-Site");
  return site === undefined || site === "same-origin" || site === "none";
}

async function submittedToken(c: Context<DashboardEnv>): Promise<string> {
  const body = await c.req.parseBody();
  const value = body[CSRF_FIELD];
  return typeof value === "string" ? value : "";
}

function refuse(c: Context<DashboardEnv>, reason: CsrfRefusal): Response {
  const text =
    reason === "cross_origin"
      ? "This form was sent from another site, so it was refused."
      : "This form has expired or was not sent from this dashboard. Go back, reload the page and try again.";
  return c.text(text, 403, { "Cache-Control": "no-store" });
}

/** Refuses a cross-origin POST; every dashboard route passes this first. */
export const originCheck = createMiddleware<DashboardEnv>(async (c, next) => {
  if (c.req.method === "POST" && !isSameOriginRequest(c)) return refuse(c, "cross_origin");
  await next();
});

/** POSTs of signed-in pages: the session's synchronizer token. */
export const sessionCsrf = createMiddleware<DashboardEnv>(async (c, next) => {
  if (c.req.method !== "POST") return next();
  const expected = c.get("session")?.csrfToken;
  const sent = await submittedToken(c);
  if (!expected || !timingSafeEqualText(sent, expected)) return refuse(c, "bad_token");
  await next();
});

/** The double-submit token for the sign-in and sign-up forms, set in a cookie when missing. */
export function visitorCsrfToken(c: Context<DashboardEnv>): string {
  const existing = readCookie(c, VISITOR_CSRF_COOKIE);
  if (existing && /^[A-Za-z0-9_-]{43}$/.test(existing)) return existing;
  const token = randomToken();
  writeCookie(c, VISITOR_CSRF_COOKIE, token, VISITOR_CSRF_TTL_SECONDS);
  return token;
}

/** POSTs of the sign-in and sign-up forms: field and cookie must match. */
export const visitorCsrf = createMiddleware<DashboardEnv>(async (c, next) => {
  if (c.req.method !== "POST") return next();
  const cookie = readCookie(c, VISITOR_CSRF_COOKIE) ?? "";
  const sent = await submittedToken(c);
  if (cookie.length === 0 || !timingSafeEqualText(sent, cookie)) return refuse(c, "bad_token");
  await next();
});
