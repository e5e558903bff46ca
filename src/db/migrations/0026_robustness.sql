-- Robustness.

-- Sign-in counters end: each row knows when its window is over (expires_ms), and
-- a bounded number of ended rows is removed at every attempt (index below). An
-- e-mail address being slowed hands out turns: next_slot_ms is when the turns
-- already given out end, so concurrent attempts wait one after the other.
ALTER TABLE auth_throttle ADD COLUMN expires_ms INTEGER NOT NULL DEFAULT 0;
ALTER TABLE auth_throttle ADD COLUMN next_slot_ms INTEGER NOT NULL DEFAULT 0;
UPDATE auth_throttle SET expires_ms = window_start + 3600000;
CREATE INDEX auth_throttle_expiry ON auth_throttle(expires_ms);

-- Each Idempotency-Key claim carries an id of its own: the batch that creates
-- the job commits only while that claim still stands, so a request whose claim
-- a retry took over (after 60 s) creates nothing. Rows from before have none.
ALTER TABLE idempotency_keys ADD COLUMN claim_id TEXT;

-- Open direct uploads per account (created, not yet deleted: uploading,
-- complete, or the source of a running job), by count and by their declared
-- Upload-Length together. Counted exactly in the account's Durable Object.
ALTER TABLE plans ADD COLUMN max_open_uploads INTEGER NOT NULL DEFAULT 10 CHECK (max_open_uploads > 0);
ALTER TABLE plans ADD COLUMN max_open_upload_bytes INTEGER NOT NULL DEFAULT 42949672960 CHECK (max_open_upload_bytes > 0);
UPDATE plans SET max_open_uploads = 3, max_open_upload_bytes = 3221225472 WHERE name = 'free';
UPDATE plans SET max_open_uploads = 100, max_open_upload_bytes = 1099511627776 WHERE name = 'unmetered';
