/** Webhook endpoints, events and deliveries: every SQL statement on those tables. */

/** The job event types an endpoint subscribes to (the `events` column); src/webhooks/events.ts lists them for the API. */
export const JOB_EVENT_TYPES = ["job.queued", "job.processing", "job.completed", "job.failed", "job.canceled", "clip.updated", "clip.created"] as const;
export type JobEventType = (typeof JOB_EVENT_TYPES)[number];

export type DisabledReason = "gone" | "failing";
export type DeliveryStatus = "pending" | "succeeded" | "failed" | "canceled";

export interface WebhookEndpoint {
  id: string;
  accountId: string;
  url: string;
  description: string;
  /** Event types it receives, or "*" for all. */
  events: JobEventType[] | "*";
  enabled: boolean;
  disabledReason: DisabledReason | null;
  disabledAt: string | null;
  failingSince: string | null;
  secret: string;
  previousSecret: string | null;
  previousSecretExpiresAt: string | null;
  createdAt: string;
  updatedAt: string;
}

interface EndpointRow {
  id: string;
  account_id: string;
  url: string;
  description: string;
  events: string;
  enabled: number;
  disabled_reason: string | null;
  disabled_at: string | null;
  failing_since: string | null;
  secret: string;
  previous_secret: string | null;
  previous_secret_expires_at: string | null;
  created_at: string;
  updated_at: string;
}

const ENDPOINT_COLUMNS =
  "id, account_id, url, description, events, enabled, disabled_reason, disabled_at, failing_since, secret, previous_secret, previous_secret_expires_at, created_at, updated_at";

function encodeEvents(events: JobEventType[] | "*"): string {
  return events === "*" ? "*" : JSON.stringify(events);
}

// Rows are only written from validated input: events is "*" or a JSON list of strings.
function endpointFromRow(row: EndpointRow): WebhookEndpoint {
  return {
    id: row.id,
    accountId: row.account_id,
    url: row.url,
    description: row.description,
    events: row.events === "*" ? "*" : (JSON.parse(row.events) as JobEventType[]),
    enabled: row.enabled === 1,
    disabledReason: row.disabled_reason as DisabledReason | null,
    disabledAt: row.disabled_at,
    failingSince: row.failing_since,
    secret: row.secret,
    previousSecret: row.previous_secret,
    previousSecretExpiresAt: row.previous_secret_expires_at,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  };
}

export interface NewEndpoint {
  id: string;
  accountId: string;
  url: string;
  description: string;
  events: JobEventType[] | "*";
  enabled: boolean;
  secret: string;
  now: string;
}

/**
 * Inserts unless the account already has `limit` endpoints, in one statement
 * so two concurrent creations cannot both pass the count. False: at the limit.
 */
export async function insertEndpointWithinLimit(db: D1Database, endpoint: NewEndpoint, limit: number): Promise<boolean> {
  const result = await db
    .prepare(
      `INSERT INTO webhook_endpoints (id, account_id, url, description, events, enabled, secret, created_at, updated_at)
       SELECT ?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?8
       WHERE (SELECT COUNT(*) FROM webhook_endpoints WHERE account_id = ?2) < ?9`,
    )
    .bind(
      endpoint.id,
      endpoint.accountId,
      endpoint.url,
      endpoint.description,
      encodeEvents(endpoint.events),
      endpoint.enabled ? 1 : 0,
      endpoint.secret,
      endpoint.now,
      limit,
    )
    .run();
  return result.meta.changes > 0;
}

export async function findEndpoint(db: D1Database, endpointId: string): Promise<WebhookEndpoint | null> {
  const row = await db.prepare(`SELECT ${ENDPOINT_COLUMNS} FROM webhook_endpoints WHERE id = ?`).bind(endpointId).first<EndpointRow>();
  return row ? endpointFromRow(row) : null;
}

export async function findAccountEndpoint(db: D1Database, accountId: string, endpointId: string): Promise<WebhookEndpoint | null> {
  const row = await db
    .prepare(`SELECT ${ENDPOINT_COLUMNS} FROM webhook_endpoints WHERE id = ? AND account_id = ?`)
    .bind(endpointId, accountId)
    .first<EndpointRow>();
  return row ? endpointFromRow(row) : null;
}

export async function listEndpoints(db: D1Database, accountId: string): Promise<WebhookEndpoint[]> {
  const { results } = await db
    .prepare(`SELECT ${ENDPOINT_COLUMNS} FROM webhook_endpoints WHERE account_id = ? ORDER BY created_at, id`)
    .bind(accountId)
    .all<EndpointRow>();
  return results.map(endpointFromRow);
}

/** The account's enabled endpoints (the event filter is applied by the caller). */
export async function listEnabledEndpoints(db: D1Database, accountId: string): Promise<WebhookEndpoint[]> {
  const { results } = await db
    .prepare(`SELECT ${ENDPOINT_COLUMNS} FROM webhook_endpoints WHERE account_id = ? AND enabled = 1`)
    .bind(accountId)
    .all<EndpointRow>();
  return results.map(endpointFromRow);
}

export interface EndpointChanges {
  url?: string;
  description?: string;
  events?: JobEventType[] | "*";
  enabled?: boolean;
}

/** Applies the owner's changes; enabling again clears the disabled flag and the failure clock. */
export async function updateEndpoint(
  db: D1Database,
  accountId: string,
  endpointId: string,
  changes: EndpointChanges,
  now: string,
): Promise<boolean> {
  const sets: string[] = ["updated_at = ?"];
  const values: (string | number | null)[] = [now];
  if (changes.url !== undefined) {
    sets.push("url = ?");
    values.push(changes.url);
  }
  if (changes.description !== undefined) {
    sets.push("description = ?");
    values.push(changes.description);
  }
  if (changes.events !== undefined) {
    sets.push("events = ?");
    values.push(encodeEvents(changes.events));
  }
  if (changes.enabled === true) {
    sets.push("enabled = 1, disabled_reason = NULL, disabled_at = NULL, failing_since = NULL");
  } else if (changes.enabled === false) {
    sets.push("enabled = 0, disabled_reason = NULL, disabled_at = ?");
    values.push(now);
  }
  const result = await db
    .prepare(`UPDATE webhook_endpoints SET ${sets.join(", ")} WHERE id = ? AND account_id = ?`)
    .bind(...values, endpointId, accountId)
    .run();
  return result.meta.changes > 0;
}

/** Deletes the endpoint and its delivery log; its queued attempts then find nothing to send. */
export async function deleteEndpoint(db: D1Database, accountId: string, endpointId: string): Promise<boolean> {
  const [removed] = await db.batch([
    db.prepare(`DELETE FROM webhook_endpoints WHERE id = ? AND account_id = ?`).bind(endpointId, accountId),
    db.prepare(`DELETE FROM webhook_deliveries WHERE endpoint_id = ? AND account_id = ?`).bind(endpointId, accountId),
  ]);
  return (removed?.meta.changes ?? 0) > 0;
}

/** The new secret signs from now on; the old one keeps signing until `previousExpiresAt`. */
export async function rotateEndpointSecret(
  db: D1Database,
  accountId: string,
  endpointId: string,
  secret: string,
  previousExpiresAt: string,
  now: string,
): Promise<boolean> {
  const result = await db
    .prepare(
      `UPDATE webhook_endpoints SET previous_secret = secret, previous_secret_expires_at = ?, secret = ?, updated_at = ?
       WHERE id = ? AND account_id = ?`,
    )
    .bind(previousExpiresAt, secret, now, endpointId, accountId)
    .run();
  return result.meta.changes > 0;
}

/** A 2xx answer: the endpoint is healthy again. */
export async function markEndpointHealthy(db: D1Database, endpointId: string): Promise<void> {
  await db.prepare(`UPDATE webhook_endpoints SET failing_since = NULL WHERE id = ? AND failing_since IS NOT NULL`).bind(endpointId).run();
}

/** A failed attempt: starts the failure clock if it is not running; returns when it started. */
export async function markEndpointFailing(db: D1Database, endpointId: string, now: string): Promise<string | null> {
  const row = await db
    .prepare(`UPDATE webhook_endpoints SET failing_since = COALESCE(failing_since, ?) WHERE id = ? RETURNING failing_since`)
    .bind(now, endpointId)
    .first<{ failing_since: string | null }>();
  return row?.failing_since ?? null;
}

/** Disables the endpoint and flags why; its pending deliveries are given up. */
export async function disableEndpoint(db: D1Database, endpointId: string, reason: DisabledReason, now: string): Promise<void> {
  await db.batch([
    db
      .prepare(`UPDATE webhook_endpoints SET enabled = 0, disabled_reason = ?, disabled_at = ?, updated_at = ? WHERE id = ?`)
      .bind(reason, now, now, endpointId),
    db
      .prepare(`UPDATE webhook_deliveries SET status = 'failed', next_attempt_at = NULL WHERE endpoint_id = ? AND status = 'pending'`)
      .bind(endpointId),
  ]);
}

// ---- events and deliveries ----

export interface WebhookEvent {
  id: string;
  accountId: string;
  type: string;
  body: string;
  createdAt: string;
}

export interface Delivery {
  id: string;
  endpointId: string;
  accountId: string;
  eventId: string;
  eventType: string;
  status: DeliveryStatus;
  attempts: number;
  lastStatusCode: number | null;
  lastError: string | null;
  lastLatencyMs: number | null;
  firstAttemptAt: string | null;
  lastAttemptAt: string | null;
  nextAttemptAt: string | null;
  createdAt: string;
}

interface DeliveryRow {
  id: string;
  endpoint_id: string;
  account_id: string;
  event_id: string;
  event_type: string;
  status: string;
  attempts: number;
  last_status_code: number | null;
  last_error: string | null;
  last_latency_ms: number | null;
  first_attempt_at: string | null;
  last_attempt_at: string | null;
  next_attempt_at: string | null;
  created_at: string;
}

const DELIVERY_COLUMNS =
  "id, endpoint_id, account_id, event_id, event_type, status, attempts, last_status_code, last_error, last_latency_ms, first_attempt_at, last_attempt_at, next_attempt_at, created_at";

function deliveryFromRow(row: DeliveryRow): Delivery {
  return {
    id: row.id,
    endpointId: row.endpoint_id,
    accountId: row.account_id,
    eventId: row.event_id,
    eventType: row.event_type,
    status: row.status as DeliveryStatus,
    attempts: row.attempts,
    lastStatusCode: row.last_status_code,
    lastError: row.last_error,
    lastLatencyMs: row.last_latency_ms,
    firstAttemptAt: row.first_attempt_at,
    lastAttemptAt: row.last_attempt_at,
    nextAttemptAt: row.next_attempt_at,
    createdAt: row.created_at,
  };
}

/** An event whose deliveries are created in the same batch (the test event): dispatched as it is written. */
export function insertEvent(db: D1Database, event: WebhookEvent): D1PreparedStatement {
  return db
    .prepare(`INSERT INTO webhook_events (id, account_id, type, body, created_at, dispatched_at) VALUES (?1, ?2, ?3, ?4, ?5, ?5)`)
    .bind(event.id, event.accountId, event.type, event.body, event.createdAt);
}

// ---- the job event outbox (src/jobs/outbox.ts) ----

export interface OutboxEvent extends WebhookEvent {
  jobId: string;
}

/**
 * A job event, undispatched, for the outbox. Meant for the batch of the job's
 * transition, after the transition's UPDATE (or INSERT): it is written only
 * if that statement made `event.id` the job's transition_id, so a transition
 * that did not happen writes no event. It is also skipped when the account
 * has no enabled endpoint (nobody to send it to): most accounts pay nothing.
 */
export function insertJobEvent(db: D1Database, event: OutboxEvent): D1PreparedStatement {
  return db
    .prepare(
      `INSERT INTO webhook_events (id, account_id, job_id, type, body, created_at, dispatched_at)
       SELECT ?1, ?2, ?3, ?4, ?5, ?6, NULL
       WHERE EXISTS (SELECT 1 FROM jobs WHERE id = ?3 AND account_id = ?2 AND transition_id = ?1)
         AND EXISTS (SELECT 1 FROM webhook_endpoints WHERE account_id = ?2 AND enabled = 1)`,
    )
    .bind(event.id, event.accountId, event.jobId, event.type, event.body, event.createdAt);
}

/**
 * Withdraws the job.processing event of a processing transition that is being
 * undone (the engine did not take the job), if it was not dispatched yet.
 * Meant for the undoing batch, before its UPDATE.
 */
export function withdrawProcessingEvent(db: D1Database, jobId: string): D1PreparedStatement {
  return db
    .prepare(
      `DELETE FROM webhook_events WHERE dispatched_at IS NULL AND type = 'job.processing'
         AND id = (SELECT transition_id FROM jobs WHERE id = ?1 AND status = 'processing') AND job_id = ?1`,
    )
    .bind(jobId);
}

/** The undispatched events of a job that is removed as if never created. */
export function deleteUndispatchedJobEvents(db: D1Database, jobId: string): D1PreparedStatement {
  return db.prepare(`DELETE FROM webhook_events WHERE job_id = ? AND dispatched_at IS NULL`).bind(jobId);
}

interface OutboxRow {
  id: string;
  account_id: string;
  job_id: string;
  type: string;
  body: string;
  created_at: string;
}

function outboxFromRow(row: OutboxRow): OutboxEvent {
  return { id: row.id, accountId: row.account_id, jobId: row.job_id, type: row.type, body: row.body, createdAt: row.created_at };
}

/** A job's undispatched events, in the order they happened. */
export async function listUndispatchedJobEvents(db: D1Database, jobId: string): Promise<OutboxEvent[]> {
  const { results } = await db
    .prepare(`SELECT id, account_id, job_id, type, body, created_at FROM webhook_events WHERE job_id = ? AND dispatched_at IS NULL ORDER BY created_at, rowid`)
    .bind(jobId)
    .all<OutboxRow>();
  return results.map(outboxFromRow);
}

/** Undispatched events written before `before`, oldest first (the sweep). */
export async function listStaleUndispatchedEvents(db: D1Database, before: string, limit: number): Promise<OutboxEvent[]> {
  const { results } = await db
    .prepare(
      `SELECT id, account_id, job_id, type, body, created_at FROM webhook_events
       WHERE dispatched_at IS NULL AND created_at < ? ORDER BY created_at, rowid LIMIT ?`,
    )
    .bind(before, limit)
    .all<OutboxRow>();
  return results.map(outboxFromRow);
}

/**
 * A delivery created by dispatching an event. Its id is derived from the event
 * and the endpoint, so dispatching the same event again (a retry, the sweep,
 * both at once) inserts nothing: the result has a row only when this call
 * inserted it.
 */
export function insertDeliveryIfAbsent(db: D1Database, delivery: NewDelivery): D1PreparedStatement {
  return db
    .prepare(
      `INSERT OR IGNORE INTO webhook_deliveries (id, endpoint_id, account_id, event_id, event_type, status, attempts, next_attempt_at, created_at)
       VALUES (?, ?, ?, ?, ?, 'pending', 0, ?, ?)
       RETURNING id`,
    )
    .bind(delivery.id, delivery.endpointId, delivery.accountId, delivery.eventId, delivery.eventType, delivery.now, delivery.now);
}

export function markEventDispatched(db: D1Database, eventId: string, now: string): D1PreparedStatement {
  return db.prepare(`UPDATE webhook_events SET dispatched_at = ? WHERE id = ? AND dispatched_at IS NULL`).bind(now, eventId);
}

/**
 * Pending deliveries whose first attempt never happened although it was due
 * before `before` (its message was lost); each is due again at `retryAt`,
 * so a stuck queue is not flooded with copies.
 */
export async function takeUnsentDeliveries(db: D1Database, before: string, retryAt: string, limit: number): Promise<string[]> {
  const { results } = await db
    .prepare(
      `UPDATE webhook_deliveries SET next_attempt_at = ?1
       WHERE id IN (SELECT id FROM webhook_deliveries WHERE status = 'pending' AND attempts = 0 AND next_attempt_at < ?2
                    ORDER BY next_attempt_at LIMIT ?3)
       RETURNING id`,
    )
    .bind(retryAt, before, limit)
    .all<{ id: string }>();
  return results.map((row) => row.id);
}

export interface NewDelivery {
  id: string;
  endpointId: string;
  accountId: string;
  eventId: string;
  eventType: string;
  now: string;
}

export function insertDelivery(db: D1Database, delivery: NewDelivery): D1PreparedStatement {
  return db
    .prepare(
      `INSERT INTO webhook_deliveries (id, endpoint_id, account_id, event_id, event_type, status, attempts, next_attempt_at, created_at)
       VALUES (?, ?, ?, ?, ?, 'pending', 0, ?, ?)`,
    )
    .bind(delivery.id, delivery.endpointId, delivery.accountId, delivery.eventId, delivery.eventType, delivery.now, delivery.now);
}

export async function findEvent(db: D1Database, eventId: string): Promise<WebhookEvent | null> {
  const row = await db
    .prepare(`SELECT id, account_id, type, body, created_at FROM webhook_events WHERE id = ?`)
    .bind(eventId)
    .first<{ id: string; account_id: string; type: string; body: string; created_at: string }>();
  return row ? { id: row.id, accountId: row.account_id, type: row.type, body: row.body, createdAt: row.created_at } : null;
}

export async function findDelivery(db: D1Database, deliveryId: string): Promise<Delivery | null> {
  const row = await db.prepare(`SELECT ${DELIVERY_COLUMNS} FROM webhook_deliveries WHERE id = ?`).bind(deliveryId).first<DeliveryRow>();
  return row ? deliveryFromRow(row) : null;
}

export async function findEndpointDelivery(db: D1Database, endpointId: string, deliveryId: string): Promise<Delivery | null> {
  const row = await db
    .prepare(`SELECT ${DELIVERY_COLUMNS} FROM webhook_deliveries WHERE id = ? AND endpoint_id = ?`)
    .bind(deliveryId, endpointId)
    .first<DeliveryRow>();
  return row ? deliveryFromRow(row) : null;
}

export interface DeliveryPageQuery {
  endpointId: string;
  limit: number;
  /** Continue after this (created_at, id), newest first. */
  after: { createdAt: string; id: string } | null;
}

export async function listDeliveries(db: D1Database, query: DeliveryPageQuery): Promise<Delivery[]> {
  const after = query.after;
  const statement = after
    ? db
        .prepare(
          `SELECT ${DELIVERY_COLUMNS} FROM webhook_deliveries WHERE endpoint_id = ? AND (created_at < ? OR (created_at = ? AND id < ?))
           ORDER BY created_at DESC, id DESC LIMIT ?`,
        )
        .bind(query.endpointId, after.createdAt, after.createdAt, after.id, query.limit)
    : db
        .prepare(`SELECT ${DELIVERY_COLUMNS} FROM webhook_deliveries WHERE endpoint_id = ? ORDER BY created_at DESC, id DESC LIMIT ?`)
        .bind(query.endpointId, query.limit);
  const { results } = await statement.all<DeliveryRow>();
  return results.map(deliveryFromRow);
}

export interface AttemptRecord {
  status: DeliveryStatus;
  statusCode: number | null;
  error: string | null;
  latencyMs: number;
  at: string;
  nextAttemptAt: string | null;
}

/** Records attempt number `attempt`, only if it is still the next one and the delivery is pending (repeats are no-ops). */
export async function recordAttempt(db: D1Database, deliveryId: string, attempt: number, record: AttemptRecord): Promise<boolean> {
  const result = await db
    .prepare(
      `UPDATE webhook_deliveries SET status = ?1, attempts = ?2, last_status_code = ?3, last_error = ?4, last_latency_ms = ?5,
         first_attempt_at = COALESCE(first_attempt_at, ?6), last_attempt_at = ?6, next_attempt_at = ?7
       WHERE id = ?8 AND status = 'pending' AND attempts = ?9`,
    )
    .bind(record.status, attempt, record.statusCode, record.error, record.latencyMs, record.at, record.nextAttemptAt, deliveryId, attempt - 1)
    .run();
  return result.meta.changes > 0;
}

/** A delivery that will not be attempted (endpoint gone or switched off). */
export async function closeDelivery(db: D1Database, deliveryId: string, status: "failed" | "canceled", reason: string): Promise<void> {
  await db
    .prepare(`UPDATE webhook_deliveries SET status = ?, last_error = COALESCE(last_error, ?), next_attempt_at = NULL WHERE id = ? AND status = 'pending'`)
    .bind(status, reason, deliveryId)
    .run();
}

/**
 * Removes deliveries older than `before` and the events no delivery refers to
 * any more, a bounded number per call so one call stays short.
 */
export async function purgeDeliveriesBefore(db: D1Database, before: string, maxRows: number): Promise<void> {
  await db.batch([
    db
      .prepare(`DELETE FROM webhook_deliveries WHERE id IN (SELECT id FROM webhook_deliveries WHERE created_at < ? LIMIT ?)`)
      .bind(before, maxRows),
    db
      .prepare(
        `DELETE FROM webhook_events WHERE id IN (
           SELECT e.id FROM webhook_events e WHERE e.created_at < ? AND e.dispatched_at IS NOT NULL
             AND NOT EXISTS (SELECT 1 FROM webhook_deliveries d WHERE d.event_id = e.id) LIMIT ?)`,
      )
      .bind(before, maxRows),
  ]);
}
