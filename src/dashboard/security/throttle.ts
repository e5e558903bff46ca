/**
 * Sign-in and sign-up throttling after OWASP's authentication guidance: slow
 * an attacker down without letting anyone lock an account's owner out.
 *
 * - per (e-mail, client address) pair: 5 failed sign-ins in 15 minutes, then
 *   that address is refused for that e-mail until the window ends;
 * - per client address: 30 failed sign-ins or sign-ups in 15 minutes, then the
 *   address is refused for every e-mail;
 * - per e-mail address, from anywhere: slowed, not locked: after 5 failures
 *   in 15 minutes each further attempt waits a delay that doubles up to 2 s,
 *   and the delays queue: concurrent attempts on one e-mail address take
 *   turns (each waits for the ones before it), so parallel requests cannot
 *   go faster than one per delay. An attempt that would have to wait more
 *   than MAX_QUEUED_WAIT_MS is refused with a Retry-After of seconds (the
 *   queue is only that full while someone is guessing right now);
 * - sign-ups per client address: at most 10 an hour, on top of the shared
 *   30 in 15 minutes.
 *
 * A client address is counted as the API gate counts it (src/gate/client-key.ts):
 * an IPv4 address, or the /64 of an IPv6 address, so one subscriber's prefix
 * cannot rotate through addresses. Counters are removed once their window is
 * over (a bounded number per attempt).
 *
 * Attempts are counted before the password is checked (concurrent guesses
 * cannot slip past a limit) and a successful sign-in takes its own attempt
 * back, so what remains counted are failures. An unknown e-mail address is
 * treated exactly like a known one, so nothing here reveals which have accounts.
 */
import { clearAttempts, countAttempt, purgeExpiredAttempts, reserveSlot, takeBackAttempt, windowEndOf } from "../../db/auth-throttle.ts";
import { clientKey } from "../../gate/client-key.ts";
import { sha256Url } from "./tokens.ts";

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

export const ATTEMPT_LIMITS: { perPair: AttemptLimit; perAddress: AttemptLimit; signUpsPerAddress: AttemptLimit; perAccount: DelayRule } = {
  perPair: { attempts: 5, windowSeconds: 15 * 60 },
  perAddress: { attempts: 30, windowSeconds: 15 * 60 },
  signUpsPerAddress: { attempts: 10, windowSeconds: 60 * 60 },
  perAccount: { freeFailures: 5, windowSeconds: 15 * 60, firstDelayMs: 250, maxDelayMs: 2000 },
};

/** Longest wait an attempt may queue for on one e-mail address before it is refused instead. */
export const MAX_QUEUED_WAIT_MS = 8000;
/** Expired counters removed per attempt: more than attempts create, so the table stays small. */
const PURGE_ROWS = 20;

/** Stand-in client address where the edge gives none (local development). */
export const LOCAL_CLIENT_ADDRESS = "local";

/** The counted client address: IPv4 as is, IPv6 as its /64 (the API gate's key). */
export function clientAddress(request: Request): string {
  const address = request.headers.get("CF-Connecting-IP")?.trim();
  return address ? clientKey(address) : LOCAL_CLIENT_ADDRESS;
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

async function signUpScope(address: string): Promise<string> {
  return `signup:${await sha256Url(`signup\u0000${address}`)}`;
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
  const scope = await accountScope(email);
  const onAccount = await countAttempt(db, scope, rule.windowSeconds, nowMs);
  const delay = progressiveDelayMs(onAccount, rule);
  await purgeQuietly(db, nowMs);
  if (delay === 0) return { allowed: true, delayMs: 0 };
  // Concurrent attempts take turns: this one's turn starts after the turns already given out.
  const turn = await reserveSlot(db, scope, delay, MAX_QUEUED_WAIT_MS, nowMs);
  if (!turn.reserved) return refusal(turn.retryAtMs, nowMs);
  return { allowed: true, delayMs: Math.max(0, turn.goAtMs - nowMs) };
}

/** Counts one sign-up against the client address (sign-ups are never limited per e-mail: that would reveal it). */
export async function admitSignUp(db: D1Database, address: string, nowMs = Date.now()): Promise<AttemptVerdict> {
  const retryAt = await countLimited(
    db,
    [
      [await addressScope(address), ATTEMPT_LIMITS.perAddress],
      [await signUpScope(address), ATTEMPT_LIMITS.signUpsPerAddress],
    ],
    nowMs,
  );
  await purgeQuietly(db, nowMs);
  return retryAt === 0 ? { allowed: true, delayMs: 0 } : refusal(retryAt, nowMs);
}

/** Removes a few counters whose window is over; a failure here never fails an attempt. */
async function purgeQuietly(db: D1Database, nowMs: number): Promise<void> {
  try {
    await purgeExpiredAttempts(db, nowMs, PURGE_ROWS);
  } catch (err) {
    console.error("purging expired sign-in counters failed", err);
  }
}

/** A successful sign-in: its pair and e-mail counts start over, and the client address gets its attempt back. */
export async function signInSucceeded(db: D1Database, email: string, address: string): Promise<void> {
  await clearAttempts(db, await pairScope(email, address));
  await clearAttempts(db, await accountScope(email));
  await takeBackAttempt(db, await addressScope(address));
}

/** Waits out a progressive delay or a queued turn (wall time only: a Worker waiting costs no CPU). */
export function waitDelay(ms: number): Promise<void> {
  return ms > 0 ? new Promise((resolve) => setTimeout(resolve, ms)) : Promise.resolve();
}
