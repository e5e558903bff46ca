/**
 * The dashboard's cookies. Over https they carry the `__Host-` prefix and
 * `Secure` (the browser then refuses them from any other origin or path);
 * over plain http, which only local development uses, neither can apply.
 */
import type { Context } from "hono";
import { deleteCookie, getCookie, setCookie } from "hono/cookie";
import type { DashboardEnv } from "../env.ts";

export const SESSION_COOKIE = "clipjobs_session";
/** The sign-in and sign-up forms' double-submit token (no session exists yet). */
export const VISITOR_CSRF_COOKIE = "clipjobs_csrf";

/** Decided by the request URL's scheme: the Worker sees https in production, http on loopback. */
export function isSecureRequest(c: Context<DashboardEnv>): boolean {
  return new URL(c.req.url).protocol === "https:";
}

export function readCookie(c: Context<DashboardEnv>, name: string): string | undefined {
  return isSecureRequest(c) ? getCookie(c, name, "host") : getCookie(c, name);
}

export function writeCookie(c: Context<DashboardEnv>, name: string, value: string, maxAgeSeconds: number): void {
  const options = { path: "/", httpOnly: true, sameSite: "Lax" as const, maxAge: maxAgeSeconds };
  if (isSecureRequest(c)) setCookie(c, name, value, { ...options, secure: true, prefix: "host" });
  else setCookie(c, name, value, options);
}

export function clearCookie(c: Context<DashboardEnv>, name: string): void {
  if (isSecureRequest(c)) deleteCookie(c, name, { path: "/", secure: true, prefix: "host" });
  else deleteCookie(c, name, { path: "/" });
}
