/**
 * Sessions: a random token in an HttpOnly cookie, a server-side row keyed by
 * the token's SHA-256. Logging out deletes the row, so the cookie is dead
 * even if a copy of it survives somewhere.
 */
import type { Context } from "hono";
import { createMiddleware } from "hono/factory";
import { deleteExpiredSessions, deleteSession, findLiveSession, insertSession } from "../../db/sessions.ts";
import type { DashboardEnv, DashboardSession } from "../env.ts";
import { clearCookie, readCookie, SESSION_COOKIE, writeCookie } from "./cookies.ts";
import { randomToken, sha256Url } from "./tokens.ts";

export const SESSION_TTL_SECONDS = 7 * 24 * 60 * 60;

/** The session's CSRF token: derived from the secret token, so only its holder can know it. */
function csrfTokenFor(sessionToken: string): Promise<string> {
  return sha256Url(`csrf\u0000${sessionToken}`);
}

export async function startSession(c: Context<DashboardEnv>, accountId: string, now = new Date()): Promise<void> {
  const token = randomToken();
  await deleteExpiredSessions(c.env.DB, accountId, now.toISOString());
  await insertSession(c.env.DB, {
    tokenHash: await sha256Url(token),
    accountId,
    createdAt: now.toISOString(),
    expiresAt: new Date(now.getTime() + SESSION_TTL_SECONDS * 1000).toISOString(),
  });
  writeCookie(c, SESSION_COOKIE, token, SESSION_TTL_SECONDS);
}

export async function endSession(c: Context<DashboardEnv>): Promise<void> {
  const session = c.get("session");
  if (session) await deleteSession(c.env.DB, session.tokenHash);
  clearCookie(c, SESSION_COOKIE);
  c.set("session", null);
}

/** Sets c.var.session from the cookie (null when absent, unknown or expired). */
export const loadSession = createMiddleware<DashboardEnv>(async (c, next) => {
  c.set("session", null);
  const token = readCookie(c, SESSION_COOKIE);
  if (token && token.length <= 100) {
    const found = await findLiveSession(c.env.DB, await sha256Url(token), new Date().toISOString());
    if (found) {
      const session: DashboardSession = {
        tokenHash: found.tokenHash,
        accountId: found.accountId,
        email: found.email,
        csrfToken: await csrfTokenFor(token),
      };
      c.set("session", session);
    }
  }
  await next();
});

/** Where a visitor may be sent back to after signing in: dashboard paths only. */
export function safeNextPath(next: string | undefined): string {
  if (!next || !next.startsWith("/dashboard") || next.startsWith("//") || /[\\\s]/.test(next)) return "/dashboard";
  return next;
}

/** Pages behind sign-in: a visitor without a session goes to the sign-in page (JSON callers get 401). */
export const requireSession = createMiddleware<DashboardEnv>(async (c, next) => {
  if (c.get("session")) return next();
  if (c.req.path.endsWith(".json")) {
    return c.json({ error: "signed_out", message: "Sign in again." }, 401, { "Cache-Control": "no-store" });
  }
  const url = new URL(c.req.url);
  const back = c.req.method === "GET" ? url.pathname + url.search : "/dashboard";
  return c.redirect(`/dashboard/login?next=${encodeURIComponent(back)}`, 303);
});

/** The session of a route behind requireSession. */
export function sessionOf(c: Context<DashboardEnv>): DashboardSession {
  const session = c.get("session");
  if (!session) throw new Error("route is missing requireSession");
  return session;
}
