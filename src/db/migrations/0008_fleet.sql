-- Fleet: how many times a job was put back in the queue because its engine
-- was stopped under it (a redeploy); bounded by MAX_ENGINE_RESTARTS.
ALTER TABLE jobs ADD COLUMN restarts INTEGER NOT NULL DEFAULT 0;
