/** API keys: only the SHA-256 of a key is stored, with its visible prefix and last four. */
import { PLAN_COLUMNS, planFromRow, type PlanLimits, type PlanRow } from "./plans.ts";

export interface ApiKeyRecord {
  id: string;
  accountId: string;
  name: string;
  prefix: string;
  last4: string;
  createdAt: string;
  lastUsedAt: string | null;
  revokedAt: string | null;
}

interface ApiKeyRow {
  id: string;
  account_id: string;
  name: string;
  prefix: string;
  last4: string;
  created_at: string;
  last_used_at: string | null;
  revoked_at: string | null;
}

const KEY_COLUMNS = "id, account_id, name, prefix, last4, created_at, last_used_at, revoked_at";

function keyFromRow(row: ApiKeyRow): ApiKeyRecord {
  return {
    id: row.id,
    accountId: row.account_id,
    name: row.name,
    prefix: row.prefix,
    last4: row.last4,
    createdAt: row.created_at,
    lastUsedAt: row.last_used_at,
    revokedAt: row.revoked_at,
  };
}

/**
 * Inserts the key; with `maxActive`, only while the account has fewer active
 * (unrevoked) keys, checked in the INSERT itself so concurrent creations
 * cannot pass the limit together. False: the limit refused it.
 */
export async function insertApiKey(
  db: D1Database,
  key: { id: string; accountId: string; name: string; prefix: string; last4: string; hash: string; createdAt: string },
  maxActive?: number,
): Promise<boolean> {
  const result = await db
    .prepare(
      `INSERT INTO api_keys (id, account_id, name, prefix, last4, hash, created_at)
       SELECT ?1, ?2, ?3, ?4, ?5, ?6, ?7
       WHERE ?8 IS NULL OR (SELECT COUNT(*) FROM api_keys WHERE account_id = ?2 AND revoked_at IS NULL) < ?8`,
    )
    .bind(key.id, key.accountId, key.name, key.prefix, key.last4, key.hash, key.createdAt, maxActive ?? null)
    .run();
  return result.meta.changes > 0;
}

/** What authentication needs about a key, in one query. */
export interface KeyCredential {
  keyId: string;
  accountId: string;
  hash: string;
  revokedAt: string | null;
  lastUsedAt: string | null;
  plan: PlanLimits;
}

export async function findCredentialByHash(db: D1Database, hash: string): Promise<KeyCredential | null> {
  const row = await db
    .prepare(
      `SELECT k.id AS key_id, k.account_id, k.hash, k.revoked_at, k.last_used_at,
              ${PLAN_COLUMNS.split(", ").map((c) => `p.${c}`).join(", ")}
       FROM api_keys k JOIN accounts a ON a.id = k.account_id JOIN plans p ON p.name = a.plan
       WHERE k.hash = ?`,
    )
    .bind(hash)
    .first<PlanRow & { key_id: string; account_id: string; hash: string; revoked_at: string | null; last_used_at: string | null }>();
  if (!row) return null;
  return {
    keyId: row.key_id,
    accountId: row.account_id,
    hash: row.hash,
    revokedAt: row.revoked_at,
    lastUsedAt: row.last_used_at,
    plan: planFromRow(row),
  };
}

export async function getApiKey(db: D1Database, keyId: string): Promise<ApiKeyRecord | null> {
  const row = await db.prepare(`SELECT ${KEY_COLUMNS} FROM api_keys WHERE id = ?`).bind(keyId).first<ApiKeyRow>();
  return row ? keyFromRow(row) : null;
}

export async function listApiKeys(db: D1Database, accountId: string): Promise<ApiKeyRecord[]> {
  const { results } = await db
    .prepare(`SELECT ${KEY_COLUMNS} FROM api_keys WHERE account_id = ? ORDER BY created_at, id`)
    .bind(accountId)
    .all<ApiKeyRow>();
  return results.map(keyFromRow);
}

/** Revokes a key; revoking twice keeps the first revocation time. */
export async function revokeApiKey(db: D1Database, keyId: string, now = new Date()): Promise<ApiKeyRecord | null> {
  await db.prepare(`UPDATE api_keys SET revoked_at = ? WHERE id = ? AND revoked_at IS NULL`).bind(now.toISOString(), keyId).run();
  return getApiKey(db, keyId);
}

/** Records use, at most once per `minIntervalMs` per key (the condition makes races harmless). */
export async function touchApiKeyLastUsed(db: D1Database, keyId: string, now: Date, minIntervalMs: number): Promise<void> {
  const threshold = new Date(now.getTime() - minIntervalMs).toISOString();
  await db
    .prepare(`UPDATE api_keys SET last_used_at = ? WHERE id = ? AND (last_used_at IS NULL OR last_used_at < ?)`)
    .bind(now.toISOString(), keyId, threshold)
    .run();
}

export function apiKeyToJson(key: ApiKeyRecord) {
  return {
    key_id: key.id,
    account_id: key.accountId,
    name: key.name,
    prefix: key.prefix,
    last4: key.last4,
    created_at: key.createdAt,
    last_used_at: key.lastUsedAt,
    revoked_at: key.revokedAt,
    status: key.revokedAt ? "revoked" : "active",
  };
}
