-- Kept sources count against a per-plan storage limit (docs/editing.md "The
-- source stays for edits"): a completed upload job records the bytes of the
-- source it keeps, and the account's kept-source bytes are the sum over its
-- jobs whose source_kept_until has not passed. Keeping one more source that
-- would take the sum over the plan's max_kept_source_bytes releases the
-- account's oldest kept sources first.
ALTER TABLE jobs ADD COLUMN kept_source_bytes INTEGER;
ALTER TABLE plans ADD COLUMN max_kept_source_bytes INTEGER NOT NULL DEFAULT 53687091200 CHECK (max_kept_source_bytes > 0);
UPDATE plans SET max_kept_source_bytes = 5368709120 WHERE name = 'free';
CREATE INDEX jobs_kept_sources ON jobs(account_id, source_kept_until) WHERE kept_source_bytes IS NOT NULL;
