-- When the sweep last tried to settle an ended job (src/jobs/sweep.ts). The sweep takes the jobs it
-- tried least recently first (never tried before any), so jobs whose releases keep failing take
-- their turn with the others instead of holding every run's places.
ALTER TABLE jobs ADD COLUMN settle_attempted_at TEXT;
