/**
 * Per-isolate cache of key lookups (SHA-256 -> credential), so the hot path
 * skips D1. Safe because the account's Durable Object, consulted on every
 * request, refuses revoked keys and holds the current request limit.
 */
import type { KeyCredential } from "../db/api-keys";

export const CREDENTIAL_CACHE_TTL_MS = 60_000;
const MAX_ENTRIES = 10_000;

interface Entry {
  credential: KeyCredential;
  expiresAt: number;
}

const entries = new Map<string, Entry>();

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
  if (entries.size >= MAX_ENTRIES) {
    // Maps iterate in insertion order: drop the oldest entry.
    const oldest = entries.keys().next().value;
    if (oldest !== undefined) entries.delete(oldest);
  }
  entries.set(hash, { credential, expiresAt: nowMs + CREDENTIAL_CACHE_TTL_MS });
}

/** Drops a key from this isolate's cache (other isolates learn from the Durable Object). */
export function forgetCredential(keyId: string): void {
  for (const [hash, entry] of entries) if (entry.credential.keyId === keyId) entries.delete(hash);
}
