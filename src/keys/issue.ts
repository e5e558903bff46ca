import { insertApiKey, type ApiKeyRecord } from "../db/api-keys.ts";
import { generateApiKey } from "./api-key.ts";
import { newId } from "../lib/random.ts";

/**
 * Creates a key for the account; the secret is returned once and never
 * stored. With `maxActive`, null when the account already has that many
 * active keys (checked atomically with the insert).
 */
export async function issueApiKey(
  db: D1Database,
  accountId: string,
  name: string,
  now?: Date,
): Promise<{ key: ApiKeyRecord; secret: string }>;
export async function issueApiKey(
  db: D1Database,
  accountId: string,
  name: string,
  now: Date,
  maxActive: number,
): Promise<{ key: ApiKeyRecord; secret: string } | null>;
export async function issueApiKey(
  db: D1Database,
  accountId: string,
  name: string,
  now = new Date(),
  maxActive?: number,
): Promise<{ key: ApiKeyRecord; secret: string } | null> {
  const generated = await generateApiKey();
  const key: ApiKeyRecord = {
    id: newId("key"),
    accountId,
    name,
    prefix: generated.prefix,
    last4: generated.last4,
    createdAt: now.toISOString(),
    lastUsedAt: null,
    revokedAt: null,
  };
  if (!(await insertApiKey(db, { ...key, hash: generated.hash }, maxActive))) return null;
  return { key, secret: generated.secret };
}
