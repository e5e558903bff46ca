/**
 * The transactional outbox of job events. Every job transition writes its
 * event in its own D1 batch (`jobEventStatement`, guarded by the transition's
 * id), so an event exists exactly when its transition happened and no failure
 * after the commit can lose it. Dispatching turns an event into one delivery
 * per subscribed endpoint and queues the first attempts; delivery ids are
 * derived from (event, endpoint), so dispatching twice (a retry, the sweep,
 * both at once) adds nothing. What a crash left undispatched or unqueued, the
 * sweep (src/jobs/sweep.ts) dispatches and queues.
 */
import type { Clip } from "../db/clips.ts";
import type { Job } from "../db/jobs.ts";
import {
  insertDeliveryIfAbsent,
  insertJobEvent,
  listEnabledEndpoints,
  listStaleUndispatchedEvents,
  listUndispatchedJobEvents,
  markEventDispatched,
  takeUnsentDeliveries,
  type OutboxEvent,
} from "../db/webhooks.ts";
import { presentJob } from "./present.ts";
import { base62, newId } from "../lib/random.ts";
import { subscribes, type EventBody, type JobEventType } from "../webhooks/events.ts";
import type { WebhookMessage } from "../webhooks/message.ts";

/** A transition's id, which is also the id of its event (and the event's webhook-id). */
export function newTransitionId(): string {
  return newId("evt");
}

export interface JobTransition {
  /** From newTransitionId(); the transition's UPDATE sets it as the job's transition_id. */
  id: string;
  type: JobEventType;
  /** The job as the transition leaves it: the event's data. */
  job: Job;
  clips?: readonly Clip[];
  /** When the transition happened (the event's timestamp). */
  at: string;
}

/** The event insert for a transition's batch: after the transition's own statement. */
export function jobEventStatement(env: Env, transition: JobTransition): D1PreparedStatement {
  const body: EventBody = {
    type: transition.type,
    timestamp: transition.at,
    data: presentJob(env.CDN_URL, transition.job, [...(transition.clips ?? [])]),
  };
  return insertJobEvent(env.DB, {
    id: transition.id,
    accountId: transition.job.accountId,
    jobId: transition.job.id,
    type: transition.type,
    body: JSON.stringify(body),
    createdAt: transition.at,
  });
}

/** Whether the event statement of a batch wrote its event (false: no endpoint, or no transition). */
export function eventWritten(result: D1Result | undefined): boolean {
  return (result?.meta.changes ?? 0) > 0;
}

/** `whd_` and 96 bits of SHA-256(event id, endpoint id): the same delivery whoever dispatches. */
async function deliveryIdFor(eventId: string, endpointId: string): Promise<string> {
  const digest = await crypto.subtle.digest("SHA-256", new TextEncoder().encode(`${eventId}\n${endpointId}`));
  return `whd_${base62(new Uint8Array(digest).subarray(0, 12))}`;
}

/** Queues attempt 1 of each delivery. A failure is only logged: the sweep queues unsent deliveries again. */
async function queueFirstAttempts(env: Env, deliveryIds: readonly string[]): Promise<void> {
  for (let i = 0; i < deliveryIds.length; i += 100) {
    const messages = deliveryIds.slice(i, i + 100).map((id) => ({ body: { delivery_id: id, attempt: 1 } satisfies WebhookMessage }));
    try {
      await env.WEBHOOKS.sendBatch(messages);
    } catch (err) {
      console.error(`queueing ${messages.length} webhook deliveries failed; the sweep queues them again`, err);
    }
  }
}

/** One event: its deliveries to the endpoints subscribed now, marked dispatched, first attempts queued. */
async function dispatchEvent(env: Env, event: OutboxEvent): Promise<void> {
  const endpoints = (await listEnabledEndpoints(env.DB, event.accountId)).filter((endpoint) =>
    subscribes(endpoint.events, event.type as JobEventType),
  );
  const now = new Date().toISOString();
  const deliveries = await Promise.all(
    endpoints.map(async (endpoint) => ({
      id: await deliveryIdFor(event.id, endpoint.id),
      endpointId: endpoint.id,
      accountId: event.accountId,
      eventId: event.id,
      eventType: event.type,
      now,
    })),
  );
  const results = await env.DB.batch([
    ...deliveries.map((delivery) => insertDeliveryIfAbsent(env.DB, delivery)),
    markEventDispatched(env.DB, event.id, now),
  ]);
  const inserted = deliveries.filter((_, i) => (results[i]?.results.length ?? 0) > 0).map((d) => d.id);
  await queueFirstAttempts(env, inserted);
}

/**
 * Dispatches the job's undispatched events, oldest first (an event a crash
 * left behind goes out before the newer one). Never throws: what fails here
 * is the sweep's to finish.
 */
export async function dispatchJobEvents(env: Env, jobId: string): Promise<void> {
  try {
    for (const event of await listUndispatchedJobEvents(env.DB, jobId)) await dispatchEvent(env, event);
  } catch (err) {
    console.error(`dispatching the events of ${jobId} failed; the sweep dispatches them`, err);
  }
}

/** The sweep: events undispatched since before `before` (their transition's own dispatch failed or crashed). */
export async function dispatchStaleEvents(env: Env, before: string, limit: number): Promise<number> {
  const events = await listStaleUndispatchedEvents(env.DB, before, limit);
  const jobs = [...new Set(events.map((event) => event.jobId))];
  for (const jobId of jobs) await dispatchJobEvents(env, jobId);
  return events.length;
}

/** The sweep: first attempts due since before `before` that never ran (their message was lost); due again at `retryAt`. */
export async function requeueUnsentDeliveries(env: Env, before: string, retryAt: string, limit: number): Promise<number> {
  const ids = await takeUnsentDeliveries(env.DB, before, retryAt, limit);
  await queueFirstAttempts(env, ids);
  return ids.length;
}
