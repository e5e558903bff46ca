/**
 * Sign-in and sign-up throttling after OWASP's authentication guidance: slow
 * an attacker down without letting anyone lock an account's owner out.
 *
 * - per (e-mail, client address) pair: 5 failed sign-ins in 15 minutes, then
 *   that address is refused for that e-mail until the window ends;
 * - per client address: 30 failed sign-ins or sign-ups in 15 minutes, then the
 *   address is refused for every e-mail;
 * - per e-mail address, from anywhere: never refused, only slowed: after 5
 *   failures in 15 minutes each further attempt waits a delay that doubles up
 *   to 2 s (a distributed guesser is slowed, the owner still gets in).
 *
 * Attempts are counted before the password is checked (concurrent guesses
 * cannot slip past a limit) and a successful sign-in takes its own attempt
 * back, so what remains counted are failures. An unknown e-mail address is
 * treated exactly like a known one, so nothing here reveals which have accounts.
 */
import { clearAttempts, countAttempt, takeBackAttempt, windowEndOf } from "../../db/auth-throttle";
import { sha256Url } from "./tokens";

export interface AttemptLimit {
  attempts: number;
  windowSeconds: number;
}

export interface DelayRule {
  /** Failures on one e-mail address that cost nothing. */
  freeFailures: number;
  windowSeconds: number;
  firstDelayMs: number;
  maxDelayMs: number;
}

export const ATTEMPT_LIMITS: { perPair: AttemptLimit; perAddress: AttemptLimit; perAccount: DelayRule } = {
  perPair: { attempts: 5, windowSeconds: 15 * 60 },
  perAddress: { attempts: 30, windowSeconds: 15 * 60 },
  perAccount: { freeFailures: 5, windowSeconds: 15 * 60, firstDelayMs: 250, maxDelayMs: 2000 },
};

/** Stand-in client address where the edge gives none (local development). */
export const LOCAL_CLIENT_ADDRESS = "local";

export function clientAddress(request: Request): string {
  return request.headers.get("CF-Connecting-IP")?.trim() || LOCAL_CLIENT_ADDRESS;
}

function normalEmail(email: string): string {
  return email.trim().toLowerCase();
}

async function accountScope(email: string): Promise<string> {
  return `email:${await sha256Url(`email\u0000${normalEmail(email)}`)}`;
}

async function pairScope(email: string, address: string): Promise<string> {
  return `pair:${await sha256Url(`pair\u0000${normalEmail(email)}\u0000${address}`)}`;
}

async function addressScope(address: string): Promise<string> {
  return `address:${await sha256Url(`address\u0000${address}`)}`;
}

/** The wait before checking a password, given the e-mail address's attempts in the window (this one included). */
export function progressiveDelayMs(attempts: number, rule: DelayRule = ATTEMPT_LIMITS.perAccount): number {
  const over = attempts - rule.freeFailures;
  if (over <= 0) return 0;
  return Math.min(rule.maxDelayMs, rule.firstDelayMs * 2 ** Math.min(over - 1, 16));
}

export type AttemptVerdict = { allowed: true; delayMs: number } | { allowed: false; retryAfterSeconds: number };

async function countLimited(db: D1Database, checks: [string, AttemptLimit][], nowMs: number): Promise<number> {
  let retryAt = 0;
  for (const [scope, limit] of checks) {
    const count = await countAttempt(db, scope, limit.windowSeconds, nowMs);
    if (count > limit.attempts) retryAt = Math.max(retryAt, (await windowEndOf(db, scope, limit.windowSeconds)) ?? nowMs);
  }
  return retryAt;
}

function refusal(retryAt: number, nowMs: number): AttemptVerdict {
  return { allowed: false, retryAfterSeconds: Math.max(1, Math.ceil((retryAt - nowMs) / 1000)) };
}

/** Counts one sign-in attempt; refused when the pair or the client address is over its limit. */
export async function admitSignIn(db: D1Database, email: string, address: string, nowMs = Date.now()): Promise<AttemptVerdict> {
  const retryAt = await countLimited(
    db,
    [
      [await pairScope(email, address), ATTEMPT_LIMITS.perPair],
      [await addressScope(address), ATTEMPT_LIMITS.perAddress],
    ],
    nowMs,
  );
  if (retryAt !== 0) return refusal(retryAt, nowMs);
  const rule = ATTEMPT_LIMITS.perAccount;
  const onAccount = await countAttempt(db, await accountScope(email), rule.windowSeconds, nowMs);
  return { allowed: true, delayMs: progressiveDelayMs(onAccount, rule) };
}

/** Counts one sign-up against the client address (sign-ups are never limited per e-mail: that would reveal it). */
export async function admitSignUp(db: D1Database, address: string, nowMs = Date.now()): Promise<AttemptVerdict> {
  const retryAt = await countLimited(db, [[await addressScope(address), ATTEMPT_LIMITS.perAddress]], nowMs);
  return retryAt === 0 ? { allowed: true, delayMs: 0 } : refusal(retryAt, nowMs);
}

/** A successful sign-in: its pair and e-mail counts start over, and the client address gets its attempt back. */
export async function signInSucceeded(db: D1Database, email: string, address: string): Promise<void> {
  await clearAttempts(db, await pairScope(email, address));
  await clearAttempts(db, await accountScope(email));
  await takeBackAttempt(db, await addressScope(address));
}

/** Waits out a progressive delay (wall time only: a Worker waiting costs no CPU). */
export function waitDelay(ms: number): Promise<void> {
  return ms > 0 ? new Promise((resolve) => setTimeout(resolve, ms)) : Promise.resolve();
}
