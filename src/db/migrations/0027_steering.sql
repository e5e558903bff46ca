-- Steering: a prompt and silence/filler removal in saved
-- configurations, a job's time range, and per clip its prompt match, what was
-- cut out of it and its real length.

-- Existing configurations keep what they did: no prompt, nothing removed.
ALTER TABLE configs ADD COLUMN prompt TEXT;
ALTER TABLE configs ADD COLUMN remove_silence TEXT NOT NULL DEFAULT 'off';
ALTER TABLE configs ADD COLUMN remove_fillers INTEGER NOT NULL DEFAULT 0;

-- The part of the source to analyse and clip (source seconds); both NULL: all of it.
-- The prompt and removal settings of a job live in its frozen config_json.
ALTER TABLE jobs ADD COLUMN time_range_start REAL;
ALTER TABLE jobs ADD COLUMN time_range_end REAL;

-- 0-1, NULL when the job had no prompt.
ALTER TABLE clips ADD COLUMN prompt_match REAL;
-- [{start_seconds, end_seconds, kind}] in source seconds.
ALTER TABLE clips ADD COLUMN removed_json TEXT NOT NULL DEFAULT '[]';
-- The rendered clip's length; NULL: end_seconds - start_seconds.
ALTER TABLE clips ADD COLUMN duration_seconds REAL;
