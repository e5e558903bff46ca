-- Fleet: when a job last went back to the queue after its engine
-- was stopped under it. Its queue deadline counts from here (else from its
-- submission); a start that failed and put it back in the queue does not move it.
ALTER TABLE jobs ADD COLUMN requeued_at TEXT;
-- Operators' view of the fleet: failures by code over the last hour.
CREATE INDEX jobs_status_completed ON jobs(status, completed_at);
