-- Dashboard sign-in. accounts.password_hash (0001) holds
-- "pbkdf2-sha256$<iterations>$<salt b64>$<hash b64>" for accounts that sign in.

-- Browser sessions. Only the SHA-256 of the session token is stored, so a copy
-- of this table cannot be replayed as cookies. Logging out deletes the row;
-- a row past expires_at is refused and removed at the next sign-in.
CREATE TABLE sessions (
  token_hash TEXT PRIMARY KEY,
  account_id TEXT NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
  created_at TEXT NOT NULL,
  expires_at TEXT NOT NULL
);
CREATE INDEX sessions_account ON sessions(account_id, expires_at);

-- Sign-in and sign-up attempts per scope in fixed windows: one scope per
-- e-mail address (hashed, so unknown addresses are never stored in clear)
-- and one per client address. Counting happens in one UPSERT ... RETURNING,
-- so concurrent attempts cannot overshoot a limit.
CREATE TABLE auth_throttle (
  scope TEXT PRIMARY KEY,
  window_start INTEGER NOT NULL,
  attempts INTEGER NOT NULL
);
