/**
 * Webhook delivery through the real consumer: signatures checked with the
 * `standardwebhooks` verifier, secret rotation, the retry schedule, the
 * disable rules, redirects, deleted endpoints and private destinations.
 */
import { env } from "cloudflare:test";
import { Webhook } from "standardwebhooks";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { FAILING_DISABLE_SECONDS, MAX_ATTEMPTS, RETRY_DELAYS_SECONDS, retryDelaySeconds } from "../../src/webhooks/schedule.ts";
import { api, createAccount, expectProblem } from "./helpers.ts";
import {
  createWebhook,
  FakeReceiver,
  getWebhook,
  listDeliveries,
  queueTestEvent,
  RecordingQueue,
  runAttempts,
  apiWith,
  type ReceivedRequest,
} from "./webhooks-helpers.ts";

let receiver: FakeReceiver;
let queue: RecordingQueue;
beforeEach(() => {
  receiver = new FakeReceiver();
  receiver.install();
  queue = new RecordingQueue();
});
afterEach(() => receiver.uninstall());

function headersOf(request: ReceivedRequest) {
  return {
    "webhook-id": request.headers["webhook-id"]!,
    "webhook-timestamp": request.headers["webhook-timestamp"]!,
    "webhook-signature": request.headers["webhook-signature"]!,
  };
}

/** Our own reading of the specification: base64 HMAC-SHA256 of "id.timestamp.body" keyed with the decoded secret. */
async function expectedSignature(secret: string, request: ReceivedRequest): Promise<string> {
  const key = Uint8Array.from(atob(secret.slice("whsec_".length)), (ch) => ch.charCodeAt(0));
  const cryptoKey = await crypto.subtle.importKey("raw", key, { name: "HMAC", hash: "SHA-256" }, false, ["sign"]);
  const content = `${request.headers["webhook-id"]}.${request.headers["webhook-timestamp"]}.${request.body}`;
  const mac = new Uint8Array(await crypto.subtle.sign("HMAC", cryptoKey, new TextEncoder().encode(content)));
  return `v1,${btoa(String.fromCharCode(...mac))}`;
}

describe("signing", () => {
  it("signs every delivery so the standardwebhooks verifier accepts it, and only with the right secret", async () => {
    const account = await createAccount();
    const hook = await createWebhook(account);
    expect(hook.secret).toMatch(/^whsec_[A-Za-z0-9+/]+=*$/);
    expect(atob(hook.secret!.slice(6)).length).toBeGreaterThanOrEqual(24);
    const { delivery, message } = await queueTestEvent(queue, account, hook.webhook_id);
    await runAttempts(queue, [message]);

    expect(receiver.requests).toHaveLength(1);
    const request = receiver.requests[0]!;
    expect(request.method).toBe("POST");
    expect(request.url).toBe(hook.url);
    expect(request.redirect).toBe("manual");
    expect(request.headers["content-type"]).toBe("application/json");
    expect(request.headers["webhook-id"]).toBe(delivery.event_id);
    expect(Math.abs(Number(request.headers["webhook-timestamp"]) - Date.now() / 1000)).toBeLessThan(60);
    expect(request.headers["webhook-signature"]).toBe(await expectedSignature(hook.secret!, request));

    const verified = new Webhook(hook.secret!).verify(request.body, headersOf(request)) as { type: string; timestamp: string; data: { webhook_id: string } };
    expect(verified.type).toBe("webhook.test");
    expect(verified.data.webhook_id).toBe(hook.webhook_id);
    expect(Number.isNaN(Date.parse(verified.timestamp))).toBe(false);
    expect(Object.keys(verified).sort()).toEqual(["data", "timestamp", "type"]);

    const other = await createWebhook(account);
    expect(() => new Webhook(other.secret!).verify(request.body, headersOf(request))).toThrow();
    expect(() => new Webhook(hook.secret!).verify(request.body.replace("webhook.test", "webhook.tesT"), headersOf(request))).toThrow();

    const [logged] = await listDeliveries(account, hook.webhook_id);
    expect(logged).toMatchObject({ delivery_id: delivery.delivery_id, status: "succeeded", attempts: 1, last_status_code: 200, next_attempt_at: null });
    expect(logged!.latency_ms).toBeGreaterThanOrEqual(0);
  });

  it("after a rotation signs with both secrets for 24 hours, then with the new one only", async () => {
    const account = await createAccount();
    const hook = await createWebhook(account);
    const rotated = await api(account, `/api/v1/webhooks/${hook.webhook_id}/rotate-secret`, { method: "POST" });
    expect(rotated.status).toBe(200);
    const fresh = await rotated.json<{ secret: string; previous_secret_expires_at: string }>();
    expect(fresh.secret).not.toBe(hook.secret);
    const overlapHours = (Date.parse(fresh.previous_secret_expires_at) - Date.now()) / 3_600_000;
    expect(overlapHours).toBeGreaterThan(23.9);
    expect(overlapHours).toBeLessThanOrEqual(24);
    // The secret is never shown again.
    expect(await getWebhook(account, hook.webhook_id)).not.toHaveProperty("secret");

    const { message } = await queueTestEvent(queue, account, hook.webhook_id);
    await runAttempts(queue, [message]);
    const during = receiver.requests.at(-1)!;
    expect(during.headers["webhook-signature"]!.split(" ")).toHaveLength(2);
    expect(new Webhook(fresh.secret).verify(during.body, headersOf(during))).toBeTruthy();
    expect(new Webhook(hook.secret!).verify(during.body, headersOf(during))).toBeTruthy();

    // The overlap ends: move its end into the past, as 24 hours would.
    await env.DB.prepare(`UPDATE webhook_endpoints SET previous_secret_expires_at = ? WHERE id = ?`)
      .bind(new Date(Date.now() - 1000).toISOString(), hook.webhook_id)
      .run();
    const next = await queueTestEvent(queue, account, hook.webhook_id);
    await runAttempts(queue, [next.message]);
    const after = receiver.requests.at(-1)!;
    expect(after.headers["webhook-signature"]!.split(" ")).toHaveLength(1);
    expect(new Webhook(fresh.secret).verify(after.body, headersOf(after))).toBeTruthy();
    expect(() => new Webhook(hook.secret!).verify(after.body, headersOf(after))).toThrow();
    expect((await getWebhook(account, hook.webhook_id)).previous_secret_expires_at).toBeNull();
  });
});

describe("retry schedule", () => {
  it("follows the specification's example schedule with jitter, over about three days", () => {
    const nominal = [5, 300, 1800, 7200, 18000, 36000, 36000];
    expect(RETRY_DELAYS_SECONDS.slice(0, nominal.length)).toEqual(nominal);
    for (let attempt = 1; attempt < MAX_ATTEMPTS; attempt += 1) {
      const base = RETRY_DELAYS_SECONDS[attempt - 1]!;
      expect(retryDelaySeconds(attempt, 1, 0)).toBeGreaterThanOrEqual(Math.floor(base * 0.9));
      expect(retryDelaySeconds(attempt, 1, 0.999999)).toBeLessThanOrEqual(Math.ceil(base * 1.1));
      expect(retryDelaySeconds(attempt, 1, 0.5)).toBe(base);
      // Every gap fits the Queues delay limit (24 hours).
      expect(retryDelaySeconds(attempt, 1, 0.999999)!).toBeLessThanOrEqual(86_400);
    }
    expect(retryDelaySeconds(MAX_ATTEMPTS, 1, 0.5)).toBeNull();
    const totalHours = RETRY_DELAYS_SECONDS.reduce((a, b) => a + b, 0) / 3600;
    expect(totalHours).toBeGreaterThan(FAILING_DISABLE_SECONDS / 3600);
    expect(totalHours).toBeLessThan(4 * 24);
    // Jitter spreads endpoints that fail together.
    const spread = new Set(Array.from({ length: 20 }, () => retryDelaySeconds(6, 1)));
    expect(spread.size).toBeGreaterThan(5);
    // WEBHOOK_RETRY_SCALE shrinks the whole schedule (tests only).
    expect(retryDelaySeconds(5, 0.001, 0.5)).toBe(18);
  });

  it("retries a failing receiver with the same event id, once per attempt, then stops at the first 2xx", async () => {
    const account = await createAccount();
    const hook = await createWebhook(account);
    const { message } = await queueTestEvent(queue, account, hook.webhook_id);
    receiver.answer(500, 503).fallback = 200;

    // Attempt 1: 500 -> retried about 5 s later.
    await runAttempts(queue, [message]);
    let next = queue.take();
    expect(next).toHaveLength(1);
    expect(next[0]!.body).toEqual({ delivery_id: message.delivery_id, attempt: 2 });
    expect(next[0]!.delaySeconds).toBeGreaterThanOrEqual(4);
    expect(next[0]!.delaySeconds).toBeLessThanOrEqual(6);
    let [logged] = await listDeliveries(account, hook.webhook_id);
    expect(logged).toMatchObject({ status: "pending", attempts: 1, last_status_code: 500 });
    expect(Date.parse(logged!.next_attempt_at!) - Date.now()).toBeGreaterThan(3000);
    expect((await getWebhook(account, hook.webhook_id)).failing_since).not.toBeNull();

    // A repeated delivery of the same message (at least once) sends nothing more.
    await runAttempts(queue, [message]);
    expect(receiver.requests).toHaveLength(1);
    expect(queue.take()).toHaveLength(0);

    // Attempt 2: 503 -> about 5 minutes.
    await runAttempts(queue, [next[0]!.body]);
    next = queue.take();
    expect(next[0]!.body.attempt).toBe(3);
    expect(next[0]!.delaySeconds).toBeGreaterThanOrEqual(270);
    expect(next[0]!.delaySeconds).toBeLessThanOrEqual(330);

    // Attempt 3: 200.
    await runAttempts(queue, [next[0]!.body]);
    expect(queue.take()).toHaveLength(0);
    expect(receiver.requests.map((r) => r.headers["webhook-id"])).toEqual(Array(3).fill(receiver.requests[0]!.headers["webhook-id"]));
    [logged] = await listDeliveries(account, hook.webhook_id);
    expect(logged).toMatchObject({ status: "succeeded", attempts: 3, last_status_code: 200, next_attempt_at: null });
    expect((await getWebhook(account, hook.webhook_id)).failing_since).toBeNull();
  });
});

/** Runs the test event's attempts until the consumer stops queueing new ones; returns how many ran. */
async function runUntilSettled(message: { delivery_id: string; attempt: number }, limit = 20): Promise<number> {
  let pending = [message];
  let runs = 0;
  while (pending.length > 0 && runs < limit) {
    await runAttempts(queue, pending);
    runs += 1;
    pending = queue.take().map((m) => m.body);
  }
  return runs;
}

async function setEndpointColumn(webhookId: string, column: "failing_since" | "url", value: string): Promise<void> {
  await env.DB.prepare(`UPDATE webhook_endpoints SET ${column} = ? WHERE id = ?`).bind(value, webhookId).run();
}

describe("disable rules", () => {
  it("a 410 disables the endpoint at once, flagged gone, and no more is sent to it", async () => {
    const account = await createAccount();
    const hook = await createWebhook(account);
    receiver.answer(410);
    const { message } = await queueTestEvent(queue, account, hook.webhook_id);
    expect(await runUntilSettled(message)).toBe(1);
    const after = await getWebhook(account, hook.webhook_id);
    expect(after).toMatchObject({ enabled: false, disabled_reason: "gone" });
    const [logged] = await listDeliveries(account, hook.webhook_id);
    expect(logged).toMatchObject({ status: "failed", attempts: 1, last_status_code: 410, next_attempt_at: null });
    // Test events and redeliveries are refused while disabled...
    await expectProblem(await apiWith(queue, account, `/api/v1/webhooks/${hook.webhook_id}/test`, { method: "POST" }), 409, "webhook_disabled");
    // ...until the owner enables it again, which clears the flag.
    const enabled = await api(account, `/api/v1/webhooks/${hook.webhook_id}`, { method: "PATCH", body: JSON.stringify({ enabled: true }) });
    expect(await enabled.json()).toMatchObject({ enabled: true, disabled_reason: null, failing_since: null });
  });

  it("an endpoint failing for three days is disabled and flagged failing, and its other pending deliveries stop", async () => {
    const account = await createAccount();
    const hook = await createWebhook(account);
    receiver.fallback = 500;
    const first = await queueTestEvent(queue, account, hook.webhook_id);
    const second = await queueTestEvent(queue, account, hook.webhook_id);
    await runAttempts(queue, [first.message]);
    queue.take();
    expect((await getWebhook(account, hook.webhook_id)).enabled).toBe(true);
    // Three days pass without a success.
    await setEndpointColumn(hook.webhook_id, "failing_since", new Date(Date.now() - FAILING_DISABLE_SECONDS * 1000 - 1000).toISOString());
    await runAttempts(queue, [second.message]);
    expect(queue.take()).toHaveLength(0);
    expect(await getWebhook(account, hook.webhook_id)).toMatchObject({ enabled: false, disabled_reason: "failing" });
    const deliveries = await listDeliveries(account, hook.webhook_id);
    expect(deliveries.map((d) => d.status)).toEqual(["failed", "failed"]);
    // The first delivery's queued retry finds nothing to do.
    const sent = receiver.requests.length;
    await runAttempts(queue, [{ delivery_id: first.delivery.delivery_id, attempt: 2 }]);
    expect(receiver.requests).toHaveLength(sent);
  });

  it("one event failing through the whole schedule disables the endpoint; a success in between resets the clock", async () => {
    const account = await createAccount();
    const hook = await createWebhook(account);
    receiver.fallback = 500;
    const { message } = await queueTestEvent(queue, account, hook.webhook_id);
    expect(await runUntilSettled(message)).toBe(MAX_ATTEMPTS);
    expect(receiver.requests).toHaveLength(MAX_ATTEMPTS);
    expect(await getWebhook(account, hook.webhook_id)).toMatchObject({ enabled: false, disabled_reason: "failing" });
    const [logged] = await listDeliveries(account, hook.webhook_id);
    expect(logged).toMatchObject({ status: "failed", attempts: MAX_ATTEMPTS, next_attempt_at: null });

    const healthy = await createWebhook(account);
    const failing = await queueTestEvent(queue, account, healthy.webhook_id);
    await runAttempts(queue, [failing.message]);
    const retry = queue.take()[0]!.body;
    // Another event succeeds meanwhile: the endpoint is healthy again.
    receiver.answer(200);
    const ok = await queueTestEvent(queue, account, healthy.webhook_id);
    await runAttempts(queue, [ok.message]);
    expect((await getWebhook(account, healthy.webhook_id)).failing_since).toBeNull();
    await runUntilSettled(retry);
    // The first event gave up, but the endpoint had succeeded since it started failing: it stays enabled.
    expect(await getWebhook(account, healthy.webhook_id)).toMatchObject({ enabled: true, disabled_reason: null });
  });
});

describe("what is never sent", () => {
  it("a redirect is not followed and counts as a failure", async () => {
    const account = await createAccount();
    const hook = await createWebhook(account);
    receiver.answer(302);
    const { message } = await queueTestEvent(queue, account, hook.webhook_id);
    await runAttempts(queue, [message]);
    expect(receiver.requests.map((r) => r.url)).toEqual([hook.url]);
    const [logged] = await listDeliveries(account, hook.webhook_id);
    expect(logged).toMatchObject({ status: "pending", last_status_code: 302 });
    expect(logged!.last_error).toContain("Redirect");
  });

  it("deleting an endpoint stops its pending retries", async () => {
    const account = await createAccount();
    const hook = await createWebhook(account);
    receiver.answer(500);
    const { message } = await queueTestEvent(queue, account, hook.webhook_id);
    await runAttempts(queue, [message]);
    const retry = queue.take()[0]!.body;
    expect((await api(account, `/api/v1/webhooks/${hook.webhook_id}`, { method: "DELETE" })).status).toBe(204);
    await runAttempts(queue, [retry]);
    expect(receiver.requests).toHaveLength(1);
    expect(queue.take()).toHaveLength(0);
    await expectProblem(await api(account, `/api/v1/webhooks/${hook.webhook_id}/deliveries`), 404, "not_found");
  });

  it("a destination that became private is refused again at delivery, without a request", async () => {
    const account = await createAccount();
    const hook = await createWebhook(account);
    const { message } = await queueTestEvent(queue, account, hook.webhook_id);
    await setEndpointColumn(hook.webhook_id, "url", "https://169.254.169.254/latest/meta-data");
    const requestsBefore = receiver.requests.length;
    await runAttempts(queue, [message]);
    expect(receiver.requests).toHaveLength(requestsBefore);
    const [logged] = await listDeliveries(account, hook.webhook_id);
    expect(logged).toMatchObject({ attempts: 1, last_status_code: null });
    expect(logged!.last_error).toContain("private");
  });

  it("a receiver that never answers is cut at 15 seconds", { timeout: 30_000 }, async () => {
    const account = await createAccount();
    const hook = await createWebhook(account);
    receiver.answer("hang");
    const { message } = await queueTestEvent(queue, account, hook.webhook_id);
    const started = Date.now();
    await runAttempts(queue, [message]);
    const elapsed = Date.now() - started;
    expect(elapsed).toBeGreaterThanOrEqual(14_900);
    expect(elapsed).toBeLessThan(20_000);
    const [logged] = await listDeliveries(account, hook.webhook_id);
    expect(logged).toMatchObject({ status: "pending", attempts: 1, last_status_code: null });
    expect(logged!.last_error).toContain("15 s");
  });
});
