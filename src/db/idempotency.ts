/**
 * Every SQL statement on the `idempotency_keys` table. A row with status 0 is
 * a claim: a request with that key is being handled right now.
 */

export interface IdempotencyRecord {
  requestHash: string;
  /** 0 while the first request is still in flight. */
  status: number;
  responseJson: string;
  createdAt: string;
}

interface IdempotencyRow {
  request_hash: string;
  status: number;
  response_json: string;
  created_at: string;
}

function toRecord(row: IdempotencyRow): IdempotencyRecord {
  return { requestHash: row.request_hash, status: row.status, responseJson: row.response_json, createdAt: row.created_at };
}

export const PENDING_STATUS = 0;

/**
 * Claims `key` for this request. Returns true when this request owns it; false
 * when a live (not yet expired) record exists, which the caller then reads.
 * An expired record, or a claim abandoned by a request that died mid-way, is
 * removed in the same transaction, so its key is reusable.
 */
export async function claimIdempotencyKey(
  db: D1Database,
  accountId: string,
  key: string,
  requestHash: string,
  now: string,
  expiredBefore: string,
  abandonedBefore: string,
): Promise<boolean> {
  const [, insert] = await db.batch([
    db
      .prepare(
        `DELETE FROM idempotency_keys WHERE account_id = ? AND key = ?
           AND (created_at < ? OR (status = ? AND created_at < ?))`,
      )
      .bind(accountId, key, expiredBefore, PENDING_STATUS, abandonedBefore),
    db
      .prepare(
        `INSERT INTO idempotency_keys (account_id, key, request_hash, status, response_json, created_at)
         VALUES (?, ?, ?, ?, '', ?) ON CONFLICT (account_id, key) DO NOTHING`,
      )
      .bind(accountId, key, requestHash, PENDING_STATUS, now),
  ]);
  return insert?.meta.changes === 1;
}

export async function findIdempotencyRecord(
  db: D1Database,
  accountId: string,
  key: string,
): Promise<IdempotencyRecord | null> {
  const row = await db
    .prepare(`SELECT request_hash, status, response_json, created_at FROM idempotency_keys WHERE account_id = ? AND key = ?`)
    .bind(accountId, key)
    .first<IdempotencyRow>();
  return row ? toRecord(row) : null;
}

/**
 * Records the answer of a claimed key, as a statement: the caller runs it in
 * the same batch as the write it answers for, so the two commit together.
 */
export function storeIdempotentResponseStatement(
  db: D1Database,
  accountId: string,
  key: string,
  status: number,
  responseJson: string,
): D1PreparedStatement {
  return db
    .prepare(`UPDATE idempotency_keys SET status = ?, response_json = ? WHERE account_id = ? AND key = ?`)
    .bind(status, responseJson, accountId, key);
}

/** Removes a key's record whatever its state (its job was undone: enqueueing failed). */
export async function deleteIdempotencyRecord(db: D1Database, accountId: string, key: string): Promise<void> {
  await db.prepare(`DELETE FROM idempotency_keys WHERE account_id = ? AND key = ?`).bind(accountId, key).run();
}

/** Drops an unfinished claim so the client can retry the key after an error. */
export async function releaseIdempotencyKey(db: D1Database, accountId: string, key: string): Promise<void> {
  await db
    .prepare(`DELETE FROM idempotency_keys WHERE account_id = ? AND key = ? AND status = ?`)
    .bind(accountId, key, PENDING_STATUS)
    .run();
}
