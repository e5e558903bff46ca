/**
 * Webhook suites: a fake receiver (the internet is what cannot run here), a
 * queue that records what the Worker sends instead of delivering it, and a
 * way to run one attempt through the real consumer.
 */
import { createExecutionContext, createMessageBatch, env, getQueueResult, waitOnExecutionContext } from "cloudflare:test";
import { app } from "../../src/app.ts";
import { handleWebhookQueue, WEBHOOK_QUEUE } from "../../src/webhooks/consumer.ts";
import type { WebhookMessage } from "../../src/webhooks/message.ts";
import { api, BASE, type TestAccount } from "./helpers.ts";

export const RECEIVER_ORIGIN = "https://receiver.example.com";

export interface ReceivedRequest {
  url: string;
  method: string;
  headers: Record<string, string>;
  body: string;
  redirect: string;
}

/** What the receiver does with the next request: answer a status, or never answer. */
export type ReceiverAnswer = number | "hang";

/**
 * Answers requests to RECEIVER_ORIGIN like a customer's server would: the
 * scripted answers in order, then `fallback`. A hung request only ends when
 * the caller aborts it, as a real socket would. Every other fetch passes on.
 */
export class FakeReceiver {
  readonly requests: ReceivedRequest[] = [];
  private readonly script: ReceiverAnswer[] = [];
  fallback: ReceiverAnswer = 200;
  private original: typeof fetch | undefined;

  answer(...answers: ReceiverAnswer[]): this {
    this.script.push(...answers);
    return this;
  }

  install(): void {
    const passThrough = globalThis.fetch;
    this.original = passThrough;
    globalThis.fetch = async (input: RequestInfo | URL, init?: RequestInit): Promise<Response> => {
      const request = new Request(input, init);
      if (!request.url.startsWith(`${RECEIVER_ORIGIN}/`)) return passThrough(input, init);
      this.requests.push({
        url: request.url,
        method: request.method,
        headers: Object.fromEntries(request.headers),
        body: await request.text(),
        redirect: init?.redirect ?? request.redirect,
      });
      const answer = this.script.shift() ?? this.fallback;
      if (answer === "hang") {
        return new Promise<Response>((_resolve, reject) => {
          const signal = init?.signal;
          signal?.addEventListener("abort", () => reject(signal.reason ?? new DOMException("aborted", "AbortError")));
        });
      }
      const headers = answer >= 300 && answer < 400 ? { Location: `${RECEIVER_ORIGIN}/elsewhere` } : undefined;
      return new Response(answer === 204 ? null : "ok", { status: answer, headers });
    };
  }

  uninstall(): void {
    if (this.original) globalThis.fetch = this.original;
  }
}

/** A WEBHOOKS binding that keeps what is sent, so each attempt is run by the test. */
export class RecordingQueue {
  readonly sent: { body: WebhookMessage; delaySeconds: number | undefined }[] = [];

  async send(body: WebhookMessage, options?: QueueSendOptions): Promise<void> {
    this.sent.push({ body, delaySeconds: options?.delaySeconds });
  }

  async sendBatch(messages: Iterable<MessageSendRequest<WebhookMessage>>): Promise<void> {
    for (const message of messages) this.sent.push({ body: message.body, delaySeconds: message.delaySeconds });
  }

  take(): { body: WebhookMessage; delaySeconds: number | undefined }[] {
    return this.sent.splice(0, this.sent.length);
  }
}

export function envWith(queue: RecordingQueue, overrides: Partial<Env> = {}): Env {
  return { ...env, WEBHOOKS: queue as unknown as Queue, ...overrides };
}

/** A public API call handled by the app with the recording queue in place of WEBHOOKS. */
export async function apiWith(queue: RecordingQueue, account: TestAccount, path: string, init: RequestInit = {}): Promise<Response> {
  const headers = new Headers(init.headers);
  headers.set("Authorization", `Bearer ${account.apiKey}`);
  if (init.body !== undefined && !headers.has("Content-Type")) headers.set("Content-Type", "application/json");
  const ctx = createExecutionContext();
  const res = await app.fetch(new Request(`${BASE}${path}`, { ...init, headers }), envWith(queue), ctx);
  await waitOnExecutionContext(ctx);
  return res;
}

/** Runs queue messages through the real consumer, as the queue would deliver them. */
export async function runAttempts(queue: RecordingQueue, messages: WebhookMessage[], overrides: Partial<Env> = {}) {
  const batch = createMessageBatch<WebhookMessage>(
    WEBHOOK_QUEUE,
    messages.map((body, i) => ({ id: `whm-${i}-${crypto.randomUUID()}`, timestamp: new Date(), attempts: 1, body })),
  );
  const ctx = createExecutionContext();
  await handleWebhookQueue(batch, envWith(queue, overrides), ctx);
  return getQueueResult(batch, ctx);
}

export interface WebhookJson {
  webhook_id: string;
  url: string;
  description: string;
  events: string[] | "*";
  enabled: boolean;
  disabled_reason: "gone" | "failing" | null;
  failing_since: string | null;
  previous_secret_expires_at: string | null;
  secret?: string;
}

export interface DeliveryJson {
  delivery_id: string;
  webhook_id: string;
  event_id: string;
  event_type: string;
  status: string;
  attempts: number;
  last_status_code: number | null;
  last_error: string | null;
  latency_ms: number | null;
  next_attempt_at: string | null;
}

export async function createWebhook(account: TestAccount, body: Record<string, unknown> = {}, queue?: RecordingQueue): Promise<WebhookJson> {
  const init = { method: "POST", body: JSON.stringify({ url: `${RECEIVER_ORIGIN}/hooks/${crypto.randomUUID()}`, ...body }) };
  const res = queue ? await apiWith(queue, account, "/api/v1/webhooks", init) : await api(account, "/api/v1/webhooks", init);
  const text = await res.text();
  if (res.status !== 201) throw new Error(`creating a webhook answered ${res.status}: ${text}`);
  return JSON.parse(text) as WebhookJson;
}

export async function getWebhook(account: TestAccount, webhookId: string): Promise<WebhookJson> {
  const res = await api(account, `/api/v1/webhooks/${webhookId}`);
  if (res.status !== 200) throw new Error(`GET webhook answered ${res.status}: ${await res.text()}`);
  return res.json<WebhookJson>();
}

export async function listDeliveries(account: TestAccount, webhookId: string): Promise<DeliveryJson[]> {
  const res = await api(account, `/api/v1/webhooks/${webhookId}/deliveries`);
  if (res.status !== 200) throw new Error(`GET deliveries answered ${res.status}: ${await res.text()}`);
  return (await res.json<{ deliveries: DeliveryJson[] }>()).deliveries;
}

/** Queues a webhook.test event through the API (recording queue) and returns its first message. */
export async function queueTestEvent(queue: RecordingQueue, account: TestAccount, webhookId: string): Promise<{ delivery: DeliveryJson; message: WebhookMessage }> {
  const res = await apiWith(queue, account, `/api/v1/webhooks/${webhookId}/test`, { method: "POST" });
  const text = await res.text();
  if (res.status !== 202) throw new Error(`test event answered ${res.status}: ${text}`);
  const delivery = JSON.parse(text) as DeliveryJson;
  const message = queue.take().find((m) => m.body.delivery_id === delivery.delivery_id)?.body;
  if (!message) throw new Error("the test event queued no message");
  return { delivery, message };
}
