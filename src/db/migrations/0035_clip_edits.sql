-- Editing a clip of a completed job and cutting new ones (docs/editing.md).
-- A clip's version (1: the job's own render), the overrides it was rendered
-- with and the caption corrections it carries (by the word's source start
-- time, so they survive a later change of span).
ALTER TABLE clips ADD COLUMN version INTEGER NOT NULL DEFAULT 1;
ALTER TABLE clips ADD COLUMN overrides_json TEXT NOT NULL DEFAULT '{}';
ALTER TABLE clips ADD COLUMN corrections_json TEXT NOT NULL DEFAULT '[]';

-- One row per accepted edit or new clip. status: queued -> rendering ->
-- published | failed. clip_edit_json is the ClipEdit sent to the engine,
-- config_json the effective configuration; credits_reserved is held on the
-- account from acceptance until publication (charged) or failure (released).
-- event_id guards the clip.updated / clip.created event in the outbox.
CREATE TABLE clip_edits (
  id TEXT PRIMARY KEY,
  job_id TEXT NOT NULL REFERENCES jobs(id) ON DELETE CASCADE,
  account_id TEXT NOT NULL,
  idx INTEGER NOT NULL,
  version INTEGER NOT NULL,
  kind TEXT NOT NULL CHECK (kind IN ('edit', 'add')),
  status TEXT NOT NULL CHECK (status IN ('queued', 'rendering', 'published', 'failed')),
  requested_json TEXT NOT NULL,
  clip_edit_json TEXT NOT NULL,
  config_json TEXT NOT NULL,
  overrides_json TEXT NOT NULL,
  corrections_json TEXT NOT NULL,
  credits_reserved INTEGER NOT NULL,
  error_code TEXT,
  error_message TEXT,
  event_id TEXT,
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL,
  started_at TEXT
);
-- At most one pending edit per clip: a second is refused (409 clip_edit_in_progress) by this index.
CREATE UNIQUE INDEX clip_edits_pending ON clip_edits (job_id, idx) WHERE status IN ('queued', 'rendering');
CREATE INDEX clip_edits_by_job ON clip_edits (job_id, created_at);
CREATE INDEX clip_edits_active ON clip_edits (status, updated_at) WHERE status IN ('queued', 'rendering');

-- A completed upload job keeps its source for edits until this time (free 7
-- days, paid plans 30 days from completion); the upload's Durable Object
-- deletes it then. NULL: not kept (URL jobs, jobs that did not complete).
ALTER TABLE jobs ADD COLUMN source_kept_until TEXT;
