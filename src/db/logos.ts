/** Each account's logo (migration 0029): what it is and where its bytes are. */
import type { LogoContentType } from "#contract";

export interface Logo {
  accountId: string;
  /** Key in the private bucket (src/logos/storage.ts). */
  objectKey: string;
  contentType: LogoContentType;
  width: number;
  height: number;
  sizeBytes: number;
  sha256: string;
  createdAt: string;
  updatedAt: string;
}

interface LogoRow {
  account_id: string;
  object_key: string;
  content_type: string;
  width: number;
  height: number;
  size_bytes: number;
  sha256: string;
  created_at: string;
  updated_at: string;
}

function logoFromRow(row: LogoRow): Logo {
  return {
    accountId: row.account_id,
    objectKey: row.object_key,
    // The table's CHECK keeps it to the two types.
    contentType: row.content_type as LogoContentType,
    width: row.width,
    height: row.height,
    sizeBytes: row.size_bytes,
    sha256: row.sha256,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  };
}

export async function findLogo(db: D1Database, accountId: string): Promise<Logo | null> {
  const row = await db.prepare(`SELECT * FROM logos WHERE account_id = ?`).bind(accountId).first<LogoRow>();
  return row ? logoFromRow(row) : null;
}

/**
 * Creates or replaces the account's logo record; `created` tells which, and
 * `previousKey` names the object the record named until now (the caller's to
 * delete). One D1 batch, so the previous key read is the one this write
 * replaced, whatever other writes of the same account run meanwhile.
 */
export async function putLogo(
  db: D1Database,
  logo: Omit<Logo, "createdAt" | "updatedAt">,
  now = new Date(),
): Promise<{ created: boolean; logo: Logo; previousKey: string | null }> {
  const at = now.toISOString();
  const [previous, written] = await db.batch<{ object_key: string } | LogoRow>([
    db.prepare(`SELECT object_key FROM logos WHERE account_id = ?`).bind(logo.accountId),
    db
      .prepare(
        `INSERT INTO logos (account_id, object_key, content_type, width, height, size_bytes, sha256, created_at, updated_at)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
         ON CONFLICT (account_id) DO UPDATE SET object_key = excluded.object_key, content_type = excluded.content_type, width = excluded.width,
           height = excluded.height, size_bytes = excluded.size_bytes, sha256 = excluded.sha256, updated_at = excluded.updated_at
         RETURNING *`,
      )
      .bind(logo.accountId, logo.objectKey, logo.contentType, logo.width, logo.height, logo.sizeBytes, logo.sha256, at, at),
  ]);
  const before = (previous?.results[0] as { object_key: string } | undefined) ?? null;
  const row = written?.results[0] as LogoRow | undefined;
  if (!row) throw new Error(`the logo of ${logo.accountId} was not written`);
  return { created: before === null, logo: logoFromRow(row), previousKey: before?.object_key ?? null };
}

/** The deleted record (its object is the caller's to delete), or null when there was none. */
export async function deleteLogo(db: D1Database, accountId: string): Promise<Logo | null> {
  const row = await db.prepare(`DELETE FROM logos WHERE account_id = ? RETURNING *`).bind(accountId).first<LogoRow>();
  return row ? logoFromRow(row) : null;
}
