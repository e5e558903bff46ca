/**
 * A delivery attempt the consumer keeps crashing on ends in the webhooks
 * dead-letter queue (wrangler.toml; container/test/deploy-config.test.ts
 * checks the binding), and the Worker drains that queue into the delivery
 * log as a failure instead of dropping it.
 */
import { createExecutionContext, createMessageBatch, env, getQueueResult } from "cloudflare:test";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import worker from "../../src/index.ts";
import { DEAD_LETTER_ERROR, WEBHOOK_DEAD_LETTER_QUEUE } from "../../src/webhooks/dead-letter.ts";
import type { WebhookMessage } from "../../src/webhooks/message.ts";
import { createAccount } from "./helpers.ts";
import { createWebhook, FakeReceiver, listDeliveries, queueTestEvent, RecordingQueue, runAttempts } from "./webhooks-helpers.ts";

let receiver: FakeReceiver;
let queue: RecordingQueue;
beforeEach(() => {
  receiver = new FakeReceiver();
  receiver.install();
  queue = new RecordingQueue();
});
afterEach(() => receiver.uninstall());

/** D1 that fails every statement after the first `okReads`, as an outage in the middle of an attempt would. */
function failingDb(okReads: number): D1Database {
  let calls = 0;
  return new Proxy(env.DB, {
    get(target, prop, receiverObj) {
      if (prop !== "prepare") return Reflect.get(target, prop, receiverObj) as unknown;
      return (sql: string) => {
        calls += 1;
        if (calls > okReads) throw new Error(`D1 is unavailable (${sql.slice(0, 30)}...)`);
        return target.prepare(sql);
      };
    },
  });
}

async function deadLetter(messages: WebhookMessage[]) {
  const batch = createMessageBatch<WebhookMessage>(
    WEBHOOK_DEAD_LETTER_QUEUE,
    messages.map((body, i) => ({ id: `dlq-${i}-${crypto.randomUUID()}`, timestamp: new Date(), attempts: 1, body })),
  );
  const ctx = createExecutionContext();
  await worker.queue(batch, env, ctx);
  return getQueueResult(batch, ctx);
}

describe("the webhooks dead-letter queue", () => {
  it("an attempt the consumer crashes on is retried by the queue; once dead-lettered it is recorded as a failed attempt in the delivery log", async () => {
    const account = await createAccount();
    const hook = await createWebhook(account, {}, queue);
    const { delivery, message } = await queueTestEvent(queue, account, hook.webhook_id);

    // The consumer fails part-way (reads the delivery, then D1 goes away): the queue must retry, nothing is sent.
    const crashed = await runAttempts(queue, [message], { DB: failingDb(1) });
    expect(crashed.retryMessages).toHaveLength(1);
    expect(receiver.requests).toHaveLength(0);
    expect((await listDeliveries(account, hook.webhook_id))[0]).toMatchObject({ status: "pending", attempts: 0 });

    // After max_retries the queue moves it to the dead-letter queue, which the Worker drains.
    const drained = await deadLetter([message]);
    expect(drained.explicitAcks).toHaveLength(1);
    const [logged] = await listDeliveries(account, hook.webhook_id);
    expect(logged).toMatchObject({ delivery_id: delivery.delivery_id, status: "failed", attempts: 1, last_error: DEAD_LETTER_ERROR, next_attempt_at: null });
    expect(receiver.requests).toHaveLength(0);

    // A repeated dead letter changes nothing.
    await deadLetter([message]);
    expect((await listDeliveries(account, hook.webhook_id))[0]).toEqual(logged);
  });

  it("a dead letter for an attempt that did happen after all leaves the delivery as it is", async () => {
    const account = await createAccount();
    const hook = await createWebhook(account, {}, queue);
    const { message } = await queueTestEvent(queue, account, hook.webhook_id);
    await runAttempts(queue, [message]);
    const [succeeded] = await listDeliveries(account, hook.webhook_id);
    expect(succeeded).toMatchObject({ status: "succeeded", attempts: 1 });
    await deadLetter([message, { delivery_id: "whd_doesnotexist", attempt: 1 }]);
    expect((await listDeliveries(account, hook.webhook_id))[0]).toEqual(succeeded);
  });
});
