/**
 * Keys revoked for this account, in DO SQLite storage and mirrored in memory.
 * The Worker caches key lookups per isolate; the account's Durable Object,
 * consulted on every request anyway, is what makes a revocation take effect
 * on the next request.
 */
interface RevokedRow extends Record<string, SqlStorageValue> {
  key_id: string;
}

export class KeyRevocations {
  private readonly revoked: Set<string>;

  constructor(private readonly sql: SqlStorage) {
    sql.exec(`CREATE TABLE IF NOT EXISTS revoked_keys (key_id TEXT PRIMARY KEY, revoked_at INTEGER NOT NULL)`);
    this.revoked = new Set(sql.exec<RevokedRow>(`SELECT key_id FROM revoked_keys`).toArray().map((row) => row.key_id));
  }

  revoke(keyId: string, nowMs: number): void {
    this.sql.exec(`INSERT OR IGNORE INTO revoked_keys (key_id, revoked_at) VALUES (?, ?)`, keyId, nowMs);
    this.revoked.add(keyId);
  }

  isRevoked(keyId: string): boolean {
    return this.revoked.has(keyId);
  }
}
