/**
 * Sign-in and sign-up throttling, per e-mail address and per client address.
 * Attempts are counted before the password is checked (so concurrent guesses
 * cannot slip past a limit) and the address's own count is kept when a
 * sign-in succeeds. An unknown e-mail address is throttled exactly like a
 * known one, so the limits reveal nothing about which addresses have accounts.
 */
import { clearAttempts, countAttempt, windowEndOf } from "../../db/auth-throttle";
import { sha256Url } from "./tokens";

export interface AttemptLimit {
  attempts: number;
  windowSeconds: number;
}

export const ATTEMPT_LIMITS: { perAccount: AttemptLimit; perAddress: AttemptLimit } = {
  perAccount: { attempts: 5, windowSeconds: 15 * 60 },
  perAddress: { attempts: 30, windowSeconds: 15 * 60 },
};

/** Stand-in client address where the edge gives none (local development). */
export const LOCAL_CLIENT_ADDRESS = "local";

export function clientAddress(request: Request): string {
  return request.headers.get("CF-Connecting-IP")?.trim() || LOCAL_CLIENT_ADDRESS;
}

function accountScope(email: string): Promise<string> {
  return sha256Url(`email\u0000${email.trim().toLowerCase()}`).then((hash) => `email:${hash}`);
}

function addressScope(address: string): Promise<string> {
  return sha256Url(`address\u0000${address}`).then((hash) => `address:${hash}`);
}

export type AttemptVerdict = { allowed: true } | { allowed: false; retryAfterSeconds: number };

/** Counts one attempt for the e-mail address and the client address; refused when either is over its limit. */
export async function admitAttempt(db: D1Database, email: string, address: string, nowMs = Date.now()): Promise<AttemptVerdict> {
  const checks: [string, AttemptLimit][] = [
    [await accountScope(email), ATTEMPT_LIMITS.perAccount],
    [await addressScope(address), ATTEMPT_LIMITS.perAddress],
  ];
  let retryAt = 0;
  for (const [scope, limit] of checks) {
    const count = await countAttempt(db, scope, limit.windowSeconds, nowMs);
    if (count > limit.attempts) retryAt = Math.max(retryAt, (await windowEndOf(db, scope, limit.windowSeconds)) ?? nowMs);
  }
  if (retryAt === 0) return { allowed: true };
  return { allowed: false, retryAfterSeconds: Math.max(1, Math.ceil((retryAt - nowMs) / 1000)) };
}

/** A successful sign-in clears the e-mail address's count (not the client address's). */
export async function forgetAccountAttempts(db: D1Database, email: string): Promise<void> {
  await clearAttempts(db, await accountScope(email));
}
