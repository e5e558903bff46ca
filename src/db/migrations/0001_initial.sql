-- Plans: credits per period, request window and active-job limit (SPEC section 3).
CREATE TABLE plans (
  name TEXT PRIMARY KEY,
  credits_per_period INTEGER NOT NULL CHECK (credits_per_period >= 0),
  requests_per_minute INTEGER NOT NULL CHECK (requests_per_minute > 0),
  max_active_jobs INTEGER NOT NULL CHECK (max_active_jobs > 0)
);
INSERT INTO plans (name, credits_per_period, requests_per_minute, max_active_jobs) VALUES
  ('free', 60, 60, 1),
  ('pro', 600, 60, 1),
  ('unmetered', 1000000, 1000000, 1);

-- Credits: remaining = plan credits + granted - used - reserved, for the current
-- period (a calendar month, UTC, starting at period_start).
CREATE TABLE accounts (
  id TEXT PRIMARY KEY,
  email TEXT NOT NULL UNIQUE COLLATE NOCASE,
  plan TEXT NOT NULL REFERENCES plans(name),
  password_hash TEXT,
  credits_granted INTEGER NOT NULL DEFAULT 0 CHECK (credits_granted >= 0),
  credits_used INTEGER NOT NULL DEFAULT 0 CHECK (credits_used >= 0),
  credits_reserved INTEGER NOT NULL DEFAULT 0 CHECK (credits_reserved >= 0),
  period_start TEXT NOT NULL,
  created_at TEXT NOT NULL
);

CREATE TABLE api_keys (
  id TEXT PRIMARY KEY,
  account_id TEXT NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
  name TEXT NOT NULL,
  prefix TEXT NOT NULL,
  last4 TEXT NOT NULL,
  hash TEXT NOT NULL UNIQUE,
  created_at TEXT NOT NULL,
  last_used_at TEXT,
  revoked_at TEXT
);
CREATE INDEX api_keys_account ON api_keys(account_id, created_at);

CREATE TABLE configs (
  account_id TEXT NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
  name TEXT NOT NULL,
  aspect_ratio TEXT NOT NULL,
  resolution INTEGER NOT NULL,
  min_clip_seconds INTEGER NOT NULL,
  max_clip_seconds INTEGER NOT NULL,
  max_clips INTEGER NOT NULL,
  reframe TEXT NOT NULL,
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL,
  PRIMARY KEY (account_id, name)
);

CREATE TABLE jobs (
  id TEXT PRIMARY KEY,
  account_id TEXT NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
  status TEXT NOT NULL CHECK (status IN ('queued', 'processing', 'completed', 'failed', 'canceled')),
  progress INTEGER NOT NULL DEFAULT 0,
  step TEXT NOT NULL,
  video_url TEXT NOT NULL,
  video_type TEXT NOT NULL,
  config_name TEXT,
  -- The configuration frozen at submission, so later edits do not change the job.
  config_json TEXT NOT NULL,
  title TEXT,
  source_duration_seconds REAL,
  credits_reserved INTEGER NOT NULL DEFAULT 0,
  credits_charged INTEGER NOT NULL DEFAULT 0,
  error_code TEXT,
  error_message TEXT,
  -- Last time the engine reported; the watchdog compares against it.
  last_report_at TEXT,
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL,
  completed_at TEXT
);
CREATE INDEX jobs_account_status_created ON jobs(account_id, status, created_at DESC, id DESC);
CREATE INDEX jobs_account_created ON jobs(account_id, created_at DESC, id DESC);

CREATE TABLE clips (
  job_id TEXT NOT NULL REFERENCES jobs(id) ON DELETE CASCADE,
  idx INTEGER NOT NULL,
  object_key TEXT NOT NULL,
  thumbnail_key TEXT NOT NULL,
  start_seconds REAL NOT NULL,
  end_seconds REAL NOT NULL,
  score REAL NOT NULL,
  reasons_json TEXT NOT NULL,
  width INTEGER NOT NULL,
  height INTEGER NOT NULL,
  PRIMARY KEY (job_id, idx)
);

CREATE TABLE idempotency_keys (
  account_id TEXT NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
  key TEXT NOT NULL,
  request_hash TEXT NOT NULL,
  status INTEGER NOT NULL,
  response_json TEXT NOT NULL,
  created_at TEXT NOT NULL,
  PRIMARY KEY (account_id, key)
);
