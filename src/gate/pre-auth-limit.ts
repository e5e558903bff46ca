/**
 * The per-client-address limit in front of API key authentication. What it
 * protects is the work an unauthenticated caller can cause: a D1 lookup for
 * every well-formed but unknown key. A request whose key this isolate already
 * holds as valid (credential-cache.ts) passes without it; every other request
 * counts in its address's Durable Object (client-gate.ts), and over the limit
 * gets 429 rate_limited with the RateLimit headers of the account window.
 * An isolate remembers a refusal until its Retry-After, so an address that
 * keeps hammering costs no Durable Object call either.
 *
 * The address is the edge's CF-Connecting-IP. A request without one never
 * came through Cloudflare's edge (local development, tests) and is not gated.
 */
import type { Context } from "hono";
import { WINDOW_SECONDS } from "../account/request-window";
import type { AppEnv } from "../http/app-env";
import { AppError } from "../http/errors";
import { clientGate } from "./client-gate";
import { clientKey } from "./client-key";

/** Requests without a known-valid key, per client address per rolling minute (PRE_AUTH_REQUESTS_PER_MINUTE). */
export const DEFAULT_PRE_AUTH_REQUESTS_PER_MINUTE = 300;

export function preAuthLimit(env: Env): number {
  const parsed = Number(env.PRE_AUTH_REQUESTS_PER_MINUTE);
  return Number.isInteger(parsed) && parsed > 0 ? parsed : DEFAULT_PRE_AUTH_REQUESTS_PER_MINUTE;
}
export const PRE_AUTH_POLICY = "client";
const MAX_REMEMBERED = 10_000;

/** client key -> epoch ms until which this isolate refuses it without asking. */
const refusedUntil = new Map<string, number>();

function refusal(limit: number, retryAfterSeconds: number): AppError {
  return new AppError(
    "rate_limited",
    `Too many requests without a valid API key from this client address (limit ${limit} per ${WINDOW_SECONDS} seconds).`,
    { headers: { "Retry-After": String(retryAfterSeconds) }, extra: { retry_after_seconds: retryAfterSeconds } },
  );
}

function setHeaders(c: Context<AppEnv>, limit: number, remaining: number, resetSeconds: number): void {
  c.header("RateLimit-Policy", `"${PRE_AUTH_POLICY}";q=${limit};w=${WINDOW_SECONDS}`);
  c.header("RateLimit", `"${PRE_AUTH_POLICY}";r=${remaining};t=${resetSeconds}`);
}

/** Counts the request against its client address; throws 429 over the limit. */
export async function admitClientAddress(c: Context<AppEnv>): Promise<void> {
  const address = c.req.header("CF-Connecting-IP");
  if (!address) return;
  const key = clientKey(address);
  const limit = preAuthLimit(c.env);
  const now = Date.now();
  const until = refusedUntil.get(key);
  if (until !== undefined) {
    if (until > now) {
      const wait = Math.max(1, Math.ceil((until - now) / 1000));
      setHeaders(c, limit, 0, wait);
      throw refusal(limit, wait);
    }
    refusedUntil.delete(key);
  }
  const result = await clientGate(c.env, key).hit(limit);
  setHeaders(c, limit, result.remaining, result.resetSeconds);
  if (result.allowed) return;
  if (refusedUntil.size >= MAX_REMEMBERED) {
    // Refusals that are over go first; only then the oldest one still running.
    for (const [remembered, end] of refusedUntil) if (end <= now) refusedUntil.delete(remembered);
    const oldest = refusedUntil.size >= MAX_REMEMBERED ? refusedUntil.keys().next().value : undefined;
    if (oldest !== undefined) refusedUntil.delete(oldest);
  }
  refusedUntil.set(key, now + result.retryAfterSeconds * 1000);
  throw refusal(limit, result.retryAfterSeconds);
}
