/** The sign-in side of `accounts`: password hashes by e-mail address. */

export interface LoginRecord {
  accountId: string;
  email: string;
  /** Null for accounts made by an operator, which have no dashboard password. */
  passwordHash: string | null;
}

export async function findLoginByEmail(db: D1Database, email: string): Promise<LoginRecord | null> {
  const row = await db
    .prepare(`SELECT id, email, password_hash FROM accounts WHERE email = ?`)
    .bind(email)
    .first<{ id: string; email: string; password_hash: string | null }>();
  return row ? { accountId: row.id, email: row.email, passwordHash: row.password_hash } : null;
}

export async function setPasswordHash(db: D1Database, accountId: string, passwordHash: string): Promise<void> {
  await db.prepare(`UPDATE accounts SET password_hash = ? WHERE id = ?`).bind(passwordHash, accountId).run();
}
