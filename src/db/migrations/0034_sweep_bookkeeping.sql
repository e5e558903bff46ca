-- When the sweep last tried to settle an ended job (src/jobs/sweep.ts). The sweep takes the jobs it
-- tried least recently first (never tried before any), so jobs whose releases keep failing take
-- their turn with the others instead of holding every run's places.
ALTER TABLE jobs ADD COLUMN settle_attempted_at TEXT;

-- The publication keys of deleted jobs (DELETE /api/v1/jobs/:id), kept until every completion attempt
-- that may still have been writing when the job was deleted is over: the sweep then deletes every key
-- the publication key derives (src/jobs/deleted-publications.ts) and the row.
CREATE TABLE deleted_publications (
  publication_key TEXT PRIMARY KEY,
  job_id TEXT NOT NULL,
  deleted_at TEXT NOT NULL
);
CREATE INDEX deleted_publications_deleted_at ON deleted_publications(deleted_at);
