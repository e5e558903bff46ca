-- Direct uploads (tus). The upload's bytes and state live in R2 and its
-- UploadState Durable Object; D1 only needs the per-plan size cap and, on a
-- job made from an upload, which upload it consumed.
ALTER TABLE plans ADD COLUMN max_upload_bytes INTEGER NOT NULL DEFAULT 4294967296 CHECK (max_upload_bytes > 0);
UPDATE plans SET max_upload_bytes = 1073741824 WHERE name = 'free';
ALTER TABLE jobs ADD COLUMN upload_id TEXT;
