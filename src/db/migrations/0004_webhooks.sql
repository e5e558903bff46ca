-- Webhooks: endpoints per account, the events they are sent, and
-- one delivery row per (endpoint, event) with its attempts.

-- Signing secrets are kept in clear: signing needs the key itself (HMAC), so a
-- hash would be of no use. previous_secret signs alongside secret until
-- previous_secret_expires_at (24 hours after a rotation).
-- disabled_reason: NULL while enabled or switched off by the owner; 'gone'
-- after a 410 answer; 'failing' after about three days of failed deliveries.
-- failing_since: the first failed attempt since the last success.
CREATE TABLE webhook_endpoints (
  id TEXT PRIMARY KEY,
  account_id TEXT NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
  url TEXT NOT NULL,
  description TEXT NOT NULL DEFAULT '',
  events TEXT NOT NULL,
  enabled INTEGER NOT NULL DEFAULT 1,
  disabled_reason TEXT,
  disabled_at TEXT,
  failing_since TEXT,
  secret TEXT NOT NULL,
  previous_secret TEXT,
  previous_secret_expires_at TEXT,
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL
);
CREATE INDEX webhook_endpoints_account ON webhook_endpoints(account_id, created_at);

-- The exact body sent for an event: every attempt and every endpoint sends
-- these bytes under the same webhook-id (the event id).
CREATE TABLE webhook_events (
  id TEXT PRIMARY KEY,
  account_id TEXT NOT NULL,
  type TEXT NOT NULL,
  body TEXT NOT NULL,
  created_at TEXT NOT NULL
);
CREATE INDEX webhook_events_created ON webhook_events(created_at);

-- status: pending (attempts left), succeeded, failed (given up or endpoint
-- disabled), canceled (endpoint switched off before it was sent).
CREATE TABLE webhook_deliveries (
  id TEXT PRIMARY KEY,
  endpoint_id TEXT NOT NULL,
  account_id TEXT NOT NULL,
  event_id TEXT NOT NULL,
  event_type TEXT NOT NULL,
  status TEXT NOT NULL,
  attempts INTEGER NOT NULL DEFAULT 0,
  last_status_code INTEGER,
  last_error TEXT,
  last_latency_ms INTEGER,
  first_attempt_at TEXT,
  last_attempt_at TEXT,
  next_attempt_at TEXT,
  created_at TEXT NOT NULL
);
CREATE INDEX webhook_deliveries_endpoint ON webhook_deliveries(endpoint_id, created_at, id);
CREATE INDEX webhook_deliveries_created ON webhook_deliveries(created_at);
CREATE INDEX webhook_deliveries_event ON webhook_deliveries(event_id);
