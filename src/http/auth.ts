import { createMiddleware } from "hono/factory";
import { findCredentialByHash, touchApiKeyLastUsed } from "../db/api-keys.ts";
import { looksLikeApiKey, sha256Hex, timingSafeEqualText } from "../keys/api-key.ts";
import type { AppEnv } from "./app-env.ts";
import { admitClientAddress } from "./pre-auth-limit.ts";
import { cacheCredential, cachedCredential, isKnownUnknown, rememberUnknown } from "../keys/credential-cache.ts";
import { AppError } from "./errors.ts";

/** last_used_at is a hint for key owners: written at most this often per key. */
export const LAST_USED_WRITE_INTERVAL_MS = 60_000;

/** One answer for every way a key can be wrong, so callers learn nothing about keys. */
export function unauthorized(): AppError {
  return new AppError("unauthorized", "A valid API key is required: Authorization: Bearer <API_KEY>.", {
    headers: { "WWW-Authenticate": 'Bearer realm="clipjobs"' },
  });
}

export function bearerToken(header: string | undefined): string | null {
  if (!header) return null;
  const match = /^Bearer +(\S+) *$/i.exec(header);
  return match?.[1] ?? null;
}

/** When this isolate last wrote last_used_at per key (the cached credential's copy goes stale). */
const lastUsedWrites = new Map<string, number>();

/**
 * Authenticates `Authorization: Bearer <API_KEY>`: looks the key up by its
 * SHA-256, compares the hash in constant time, refuses revoked keys, and puts
 * { accountId, keyId, plan } in the context. Lookups are cached per isolate
 * (unknown keys briefly too); the rate-limit middleware then asks the
 * account's Durable Object, which refuses a key revoked since (see
 * AccountState.admit). Any request without a key already cached as valid is
 * first counted against its client address (gate/pre-auth-limit.ts).
 */
export const authenticate = createMiddleware<AppEnv>(async (c, next) => {
  const key = bearerToken(c.req.header("Authorization"));
  const hash = key && looksLikeApiKey(key) ? await sha256Hex(key) : null;
  const now = new Date();
  let credential = hash === null ? null : cachedCredential(hash, now.getTime());
  if (!credential) {
    await admitClientAddress(c);
    if (hash === null || isKnownUnknown(hash, now.getTime())) throw unauthorized();
    credential = await findCredentialByHash(c.env.DB, hash);
    if (!credential) rememberUnknown(hash, now.getTime());
    else if (credential.revokedAt === null) cacheCredential(hash, credential, now.getTime());
  }
  if (!credential || hash === null || !timingSafeEqualText(credential.hash, hash) || credential.revokedAt !== null) {
    throw unauthorized();
  }
  c.set("auth", { accountId: credential.accountId, keyId: credential.keyId, plan: credential.plan });

  const lastUsed = lastUsedWrites.get(credential.keyId) ?? (credential.lastUsedAt ? Date.parse(credential.lastUsedAt) : 0);
  if (now.getTime() - lastUsed >= LAST_USED_WRITE_INTERVAL_MS) {
    lastUsedWrites.set(credential.keyId, now.getTime());
    c.executionCtx.waitUntil(
      touchApiKeyLastUsed(c.env.DB, credential.keyId, now, LAST_USED_WRITE_INTERVAL_MS).catch((err: unknown) => {
        console.error(`[${c.get("requestId")}] last_used_at update failed`, err);
      }),
    );
  }
  await next();
});
