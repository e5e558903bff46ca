import { accountState } from "../account/stub.ts";
import { getApiKey, revokeApiKey, type ApiKeyRecord } from "../db/api-keys.ts";
import { forgetCredential } from "./credential-cache.ts";

/**
 * Revokes a key for good: first in the account's Durable Object (which every
 * request passes, so the next request is refused even where the key lookup is
 * cached), then in D1. Returns null for an unknown key.
 */
export async function revokeKey(env: Env, keyId: string): Promise<ApiKeyRecord | null> {
  const key = await getApiKey(env.DB, keyId);
  if (!key) return null;
  await accountState(env, key.accountId).revokeKey(key.id);
  forgetCredential(key.id);
  return revokeApiKey(env.DB, key.id);
}
