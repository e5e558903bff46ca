/** The event types a webhook endpoint can subscribe to, and the body every event is sent as. */

import { JOB_EVENT_TYPES, type JobEventType } from "../db/webhooks.ts";

export { JOB_EVENT_TYPES, type JobEventType };

/** Sent by POST /api/v1/webhooks/:webhook_id/test, whatever the endpoint subscribed to. */
export const TEST_EVENT_TYPE = "webhook.test";
export type EventType = JobEventType | typeof TEST_EVENT_TYPE;

/** What an endpoint receives: the Standard Webhooks payload shape. */
export interface EventBody {
  type: EventType;
  /** RFC 3339, when the event happened. */
  timestamp: string;
  data: Record<string, unknown>;
}

export function isJobEventType(value: string): value is JobEventType {
  return (JOB_EVENT_TYPES as readonly string[]).includes(value);
}

/** Whether an endpoint's subscription covers the event (the test event always goes). */
export function subscribes(events: readonly string[] | "*", type: EventType): boolean {
  return type === TEST_EVENT_TYPE || events === "*" || events.includes(type);
}
