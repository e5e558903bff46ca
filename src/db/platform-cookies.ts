/** Each account's sealed cookies files (migration 0032), one per platform. */
import type { PlatformId } from "#contract";

/** A cookies file sealed by src/cookies/crypto.ts: AES-GCM, both parts base64. */
export interface Sealed {
  iv: string;
  ciphertext: string;
}

export interface StoredCookies {
  accountId: string;
  platform: PlatformId;
  sealed: Sealed;
  cookieCount: number;
  sizeBytes: number;
  expiresAt: number | null;
  createdAt: string;
  updatedAt: string;
}

interface CookiesRow {
  account_id: string;
  platform: string;
  iv: string;
  ciphertext: string;
  cookie_count: number;
  size_bytes: number;
  expires_at: number | null;
  created_at: string;
  updated_at: string;
}

function fromRow(row: CookiesRow): StoredCookies {
  return {
    accountId: row.account_id,
    // Rows are written only through putCookies with a checked PlatformId.
    platform: row.platform as PlatformId,
    sealed: { iv: row.iv, ciphertext: row.ciphertext },
    cookieCount: row.cookie_count,
    sizeBytes: row.size_bytes,
    expiresAt: row.expires_at,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  };
}

export async function findCookies(db: D1Database, accountId: string, platform: PlatformId): Promise<StoredCookies | null> {
  const row = await db.prepare(`SELECT * FROM platform_cookies WHERE account_id = ? AND platform = ?`).bind(accountId, platform).first<CookiesRow>();
  return row ? fromRow(row) : null;
}

export async function listCookies(db: D1Database, accountId: string): Promise<StoredCookies[]> {
  const { results } = await db.prepare(`SELECT * FROM platform_cookies WHERE account_id = ? ORDER BY platform`).bind(accountId).all<CookiesRow>();
  return results.map(fromRow);
}

/** Creates or replaces; `created` says which. */
export async function putCookies(
  db: D1Database,
  input: { accountId: string; platform: PlatformId; sealed: Sealed; cookieCount: number; sizeBytes: number; expiresAt: number | null },
): Promise<{ created: boolean; cookies: StoredCookies }> {
  const now = new Date().toISOString();
  const existed = (await db.prepare(`SELECT 1 FROM platform_cookies WHERE account_id = ? AND platform = ?`).bind(input.accountId, input.platform).first()) !== null;
  const row = await db
    .prepare(
      `INSERT INTO platform_cookies (account_id, platform, iv, ciphertext, cookie_count, size_bytes, expires_at, created_at, updated_at)
       VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?8)
       ON CONFLICT (account_id, platform) DO UPDATE SET iv = excluded.iv, ciphertext = excluded.ciphertext,
         cookie_count = excluded.cookie_count, size_bytes = excluded.size_bytes, expires_at = excluded.expires_at, updated_at = excluded.updated_at
       RETURNING *`,
    )
    .bind(input.accountId, input.platform, input.sealed.iv, input.sealed.ciphertext, input.cookieCount, input.sizeBytes, input.expiresAt, now)
    .first<CookiesRow>();
  if (!row) throw new Error("platform_cookies upsert returned no row");
  return { created: !existed, cookies: fromRow(row) };
}

export async function deleteCookies(db: D1Database, accountId: string, platform: PlatformId): Promise<boolean> {
  const result = await db.prepare(`DELETE FROM platform_cookies WHERE account_id = ? AND platform = ?`).bind(accountId, platform).run();
  return result.meta.changes > 0;
}
