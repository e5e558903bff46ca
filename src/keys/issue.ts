import { insertApiKey, type ApiKeyRecord } from "../db/api-keys";
import { generateApiKey } from "./api-key";
import { newId } from "./random";

/** Creates a key for the account; the secret is returned once and never stored. */
export async function issueApiKey(
  db: D1Database,
  accountId: string,
  name: string,
  now = new Date(),
): Promise<{ key: ApiKeyRecord; secret: string }> {
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
  await insertApiKey(db, { ...key, hash: generated.hash });
  return { key, secret: generated.secret };
}
