/**
 * Every SQL statement on the `idempotency_keys` table. A row with status 0 is
 * a claim: a request with that key is being handled right now. Each claim
 * has its own claim_id, so a request whose claim was taken over (it looked
 * abandoned) can tell, and its writes are refused: see claimHeldGuard.
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
  claimId: string,
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
        `INSERT INTO idempotency_keys (account_id, key, request_hash, status, response_json, created_at, claim_id)
         VALUES (?, ?, ?, ?, '', ?, ?) ON CONFLICT (account_id, key) DO NOTHING`,
      )
      .bind(accountId, key, requestHash, PENDING_STATUS, now, claimId),
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
  claimId: string,
  status: number,
  responseJson: string,
): D1PreparedStatement {
  return db
    .prepare(`UPDATE idempotency_keys SET status = ?, response_json = ? WHERE account_id = ? AND key = ? AND claim_id = ?`)
    .bind(status, responseJson, accountId, key, claimId);
}

/**
 * A statement that fails, and so rolls back the whole D1 batch it is in,
 * unless this request's claim still stands (pending, with its claim_id).
 * Placed first in the batch that creates the job: a request whose claim was
 * taken over by a retry (it looked abandoned after ABANDONED_CLAIM_MS) writes
 * nothing, so one key never creates two jobs. When the claim stands it
 * inserts nothing; otherwise it tries to insert a row without a request hash,
 * which the NOT NULL constraint refuses.
 */
export function claimHeldGuard(db: D1Database, accountId: string, key: string, claimId: string): D1PreparedStatement {
  return db
    .prepare(
      `INSERT INTO idempotency_keys (account_id, key, request_hash, status, response_json, created_at, claim_id)
       SELECT ?1, ?2, NULL, ?4, '', '', ?3
       WHERE NOT EXISTS (SELECT 1 FROM idempotency_keys WHERE account_id = ?1 AND key = ?2 AND claim_id = ?3 AND status = ?4)`,
    )
    .bind(accountId, key, claimId, PENDING_STATUS);
}

/** Whether `claimId` still holds the key (pending). */
export async function holdsClaim(db: D1Database, accountId: string, key: string, claimId: string): Promise<boolean> {
  const row = await db
    .prepare(`SELECT 1 AS held FROM idempotency_keys WHERE account_id = ? AND key = ? AND claim_id = ? AND status = ?`)
    .bind(accountId, key, claimId, PENDING_STATUS)
    .first<{ held: number }>();
  return row !== null;
}

/** Removes this claim's record whatever its state (its job was undone: enqueueing failed). */
export async function deleteIdempotencyRecord(db: D1Database, accountId: string, key: string, claimId: string): Promise<void> {
  await db.prepare(`DELETE FROM idempotency_keys WHERE account_id = ? AND key = ? AND claim_id = ?`).bind(accountId, key, claimId).run();
}

/** Drops this request's unfinished claim so the client can retry the key after an error (never another request's). */
export async function releaseIdempotencyKey(db: D1Database, accountId: string, key: string, claimId: string): Promise<void> {
  await db
    .prepare(`DELETE FROM idempotency_keys WHERE account_id = ? AND key = ? AND status = ? AND claim_id = ?`)
    .bind(accountId, key, PENDING_STATUS, claimId)
    .run();
}
