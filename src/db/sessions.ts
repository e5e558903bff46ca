/** Dashboard sessions: rows keyed by the SHA-256 of the token the cookie carries. */

export interface SessionAccount {
  tokenHash: string;
  accountId: string;
  email: string;
  expiresAt: string;
}

export async function insertSession(
  db: D1Database,
  session: { tokenHash: string; accountId: string; createdAt: string; expiresAt: string },
): Promise<void> {
  await db
    .prepare(`INSERT INTO sessions (token_hash, account_id, created_at, expires_at) VALUES (?, ?, ?, ?)`)
    .bind(session.tokenHash, session.accountId, session.createdAt, session.expiresAt)
    .run();
}

/** The live session with this token hash and its account; null when unknown or expired. */
export async function findLiveSession(db: D1Database, tokenHash: string, now: string): Promise<SessionAccount | null> {
  const row = await db
    .prepare(
      `SELECT s.token_hash, s.account_id, s.expires_at, a.email
       FROM sessions s JOIN accounts a ON a.id = s.account_id
       WHERE s.token_hash = ? AND s.expires_at > ?`,
    )
    .bind(tokenHash, now)
    .first<{ token_hash: string; account_id: string; expires_at: string; email: string }>();
  return row ? { tokenHash: row.token_hash, accountId: row.account_id, email: row.email, expiresAt: row.expires_at } : null;
}

export async function deleteSession(db: D1Database, tokenHash: string): Promise<void> {
  await db.prepare(`DELETE FROM sessions WHERE token_hash = ?`).bind(tokenHash).run();
}

/** Housekeeping at sign-in: the account's expired rows go. */
export async function deleteExpiredSessions(db: D1Database, accountId: string, now: string): Promise<void> {
  await db.prepare(`DELETE FROM sessions WHERE account_id = ? AND expires_at <= ?`).bind(accountId, now).run();
}
