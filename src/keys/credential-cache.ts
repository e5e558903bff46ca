/**
 * Per-isolate cache of key lookups (SHA-256 -> credential), so the hot path
 * skips D1. Safe because the account's Durable Object, consulted on every
 * request, refuses revoked keys and holds the current plan limits.
 *
 * Unknown keys are remembered too, briefly: a client repeating a key that does
 * not exist costs one D1 read per UNKNOWN_KEY_TTL_MS per isolate, not one per
 * request. Nothing legitimate is delayed by it: keys are random, so nobody
 * can try a key before it is issued.
 */
import type { KeyCredential } from "../db/api-keys.ts";

export const CREDENTIAL_CACHE_TTL_MS = 60_000;
const MAX_ENTRIES = 10_000;

interface Entry {
  credential: KeyCredential;
  expiresAt: number;
}

const entries = new Map<string, Entry>();

export const UNKNOWN_KEY_TTL_MS = 30_000;
/** SHA-256 of a key D1 does not know -> when this isolate asks again. */
const unknown = new Map<string, number>();

function evictOldest<V>(map: Map<string, V>): void {
  if (map.size < MAX_ENTRIES) return;
  // Maps iterate in insertion order: drop the oldest entry.
  const oldest = map.keys().next().value;
  if (oldest !== undefined) map.delete(oldest);
}

export function isKnownUnknown(hash: string, nowMs: number): boolean {
  const until = unknown.get(hash);
  if (until === undefined) return false;
  if (until > nowMs) return true;
  unknown.delete(hash);
  return false;
}

export function rememberUnknown(hash: string, nowMs: number): void {
  evictOldest(unknown);
  unknown.set(hash, nowMs + UNKNOWN_KEY_TTL_MS);
}

export function cachedCredential(hash: string, nowMs: number): KeyCredential | null {
  const entry = entries.get(hash);
  if (!entry) return null;
  if (entry.expiresAt <= nowMs) {
    entries.delete(hash);
    return null;
  }
  return entry.credential;
}

export function cacheCredential(hash: string, credential: KeyCredential, nowMs: number): void {
  evictOldest(entries);
  entries.set(hash, { credential, expiresAt: nowMs + CREDENTIAL_CACHE_TTL_MS });
}

/** Drops a key from this isolate's cache (other isolates learn from the Durable Object). */
export function forgetCredential(keyId: string): void {
  for (const [hash, entry] of entries) if (entry.credential.keyId === keyId) entries.delete(hash);
}
