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
 * The operator API (/admin/v1) counts every request the same way, at the same
 * limit, in a window of its own per address (ADMIN_ADDRESS_POLICY), so
 * guessing at the admin token is throttled like guessing at API keys.
 *
 * The address is the edge's CF-Connecting-IP. A request without one never
 * came through Cloudflare's edge (local development, tests) and is not gated.
 */
import type { Context } from "hono";
import { WINDOW_SECONDS } from "../account/request-window.ts";
import type { AppEnv } from "./app-env.ts";
import { AppError } from "./errors.ts";
import { clientGate } from "../gate/client-gate.ts";
import { clientKey } from "../gate/client-key.ts";

/** Requests without a known-valid key, per client address per rolling minute (PRE_AUTH_REQUESTS_PER_MINUTE). */
export const DEFAULT_PRE_AUTH_REQUESTS_PER_MINUTE = 300;

export function preAuthLimit(env: Env): number {
  const parsed = Number(env.PRE_AUTH_REQUESTS_PER_MINUTE);
  return Number.isInteger(parsed) && parsed > 0 ? parsed : DEFAULT_PRE_AUTH_REQUESTS_PER_MINUTE;
}
export const PRE_AUTH_POLICY = "client";
const MAX_REMEMBERED = 10_000;

/** One per-address window: its RateLimit policy name, its Durable Object names' prefix, what its refusal says is counted. */
export interface AddressPolicy {
  name: string;
  keyPrefix: string;
  counted: string;
}

const API_ADDRESS_POLICY: AddressPolicy = { name: PRE_AUTH_POLICY, keyPrefix: "", counted: "requests without a valid API key" };
/** The operator API's window: every /admin/v1 request, per address, at the pre-authentication limit. */
export const ADMIN_ADDRESS_POLICY: AddressPolicy = { name: "admin", keyPrefix: "admin:", counted: "operator API requests" };

/** client key -> epoch ms until which this isolate refuses it without asking. */
const refusedUntil = new Map<string, number>();

function refusal(policy: AddressPolicy, limit: number, retryAfterSeconds: number): AppError {
  return new AppError(
    "rate_limited",
    `Too many ${policy.counted} from this client address (limit ${limit} per ${WINDOW_SECONDS} seconds).`,
    { headers: { "Retry-After": String(retryAfterSeconds) }, extra: { retry_after_seconds: retryAfterSeconds } },
  );
}

function setHeaders(c: Context<AppEnv>, policy: AddressPolicy, limit: number, remaining: number, resetSeconds: number): void {
  c.header("RateLimit-Policy", `"${policy.name}";q=${limit};w=${WINDOW_SECONDS}`);
  c.header("RateLimit", `"${policy.name}";r=${remaining};t=${resetSeconds}`);
}

/** Counts the request against its client address in `policy`'s window; throws 429 over the limit. */
export async function admitClientAddress(c: Context<AppEnv>, policy: AddressPolicy = API_ADDRESS_POLICY): Promise<void> {
  const address = c.req.header("CF-Connecting-IP");
  if (!address) return;
  const key = `${policy.keyPrefix}${clientKey(address)}`;
  const limit = preAuthLimit(c.env);
  const now = Date.now();
  const until = refusedUntil.get(key);
  if (until !== undefined) {
    if (until > now) {
      const wait = Math.max(1, Math.ceil((until - now) / 1000));
      setHeaders(c, policy, limit, 0, wait);
      throw refusal(policy, limit, wait);
    }
    refusedUntil.delete(key);
  }
  const result = await clientGate(c.env, key).hit(limit);
  setHeaders(c, policy, limit, result.remaining, result.resetSeconds);
  if (result.allowed) return;
  if (refusedUntil.size >= MAX_REMEMBERED) {
    // Refusals that are over go first; only then the oldest one still running.
    for (const [remembered, end] of refusedUntil) if (end <= now) refusedUntil.delete(remembered);
    const oldest = refusedUntil.size >= MAX_REMEMBERED ? refusedUntil.keys().next().value : undefined;
    if (oldest !== undefined) refusedUntil.delete(oldest);
  }
  refusedUntil.set(key, now + result.retryAfterSeconds * 1000);
  throw refusal(policy, limit, result.retryAfterSeconds);
}
