-- Tenant boundaries: the transactional event outbox, the redo of
-- what a job's end releases, and where a job's objects are published.

-- The id of the job's latest transition (also the id of its event, when one
-- is written): the outbox insert in the transition's batch is guarded by it,
-- so an event exists exactly when its transition happened.
ALTER TABLE jobs ADD COLUMN transition_id TEXT;

-- When everything a job's end releases (account slot, fleet capacity, uploaded
-- source, engine, staged objects) was released. NULL while the job is active,
-- and after its end until every release succeeded: the sweep (src/jobs/sweep.ts)
-- redoes the releases of ended jobs that are still NULL here.
ALTER TABLE jobs ADD COLUMN settled_at TEXT;
UPDATE jobs SET settled_at = COALESCE(completed_at, updated_at) WHERE status IN ('completed', 'failed', 'canceled');
CREATE INDEX jobs_unsettled ON jobs(updated_at) WHERE settled_at IS NULL AND status IN ('completed', 'failed', 'canceled');

-- Secret of the job's published keys (src/jobs/publication.ts): every public
-- key of the job is an HMAC of it, so no published URL leads to another.
-- Set by the first completion attempt; never leaves D1.
ALTER TABLE jobs ADD COLUMN publication_key TEXT;

-- A clip's published caption sidecars (NULL without sidecars, and for clips
-- published before this migration, whose sidecars sit next to the clip).
ALTER TABLE clips ADD COLUMN vtt_key TEXT;
ALTER TABLE clips ADD COLUMN srt_key TEXT;

-- The outbox: a job event is inserted in the same D1 batch as the job's
-- transition, with dispatched_at NULL; dispatching it creates its deliveries
-- and sets dispatched_at. Events from before this migration were dispatched
-- when they were written.
ALTER TABLE webhook_events ADD COLUMN job_id TEXT;
ALTER TABLE webhook_events ADD COLUMN dispatched_at TEXT;
UPDATE webhook_events SET dispatched_at = created_at;
CREATE INDEX webhook_events_undispatched ON webhook_events(created_at) WHERE dispatched_at IS NULL;
CREATE INDEX webhook_events_job ON webhook_events(job_id) WHERE job_id IS NOT NULL;
-- First attempts that were never queued (the queue failed after the commit) are queued again by the sweep.
CREATE INDEX webhook_deliveries_unsent ON webhook_deliveries(next_attempt_at) WHERE status = 'pending' AND attempts = 0;
