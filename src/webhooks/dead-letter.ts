/**
 * Consumer of the webhooks dead-letter queue: a message lands there when the
 * webhooks consumer kept crashing on it (max_retries in wrangler.toml), so the
 * attempt it stood for never ran to an outcome. Each one ends its delivery as
 * a failure in the delivery log, saying why, instead of being dropped: the
 * customer sees it (and can send a test or wait for the next event), and
 * nothing stays "pending" forever.
 */
import { closeDelivery, findDelivery, recordAttempt } from "../db/webhooks.ts";
import { isWebhookMessage } from "./message.ts";

/** The webhooks dead-letter queue's name, as in wrangler.toml (the Worker consumes it too). */
export const WEBHOOK_DEAD_LETTER_QUEUE = "clipjobs-webhooks-dlq";

export const DEAD_LETTER_ERROR = "Not delivered: this attempt could not be processed (the delivery worker failed on it repeatedly).";

export async function handleWebhookDeadLetters(batch: MessageBatch<unknown>, env: Env): Promise<void> {
  for (const message of batch.messages) {
    if (!isWebhookMessage(message.body)) {
      console.error(`dropping malformed dead-lettered webhooks message ${message.id}`);
      message.ack();
      continue;
    }
    const { delivery_id: deliveryId, attempt } = message.body;
    try {
      const delivery = await findDelivery(env.DB, deliveryId);
      if (delivery?.status === "pending") {
        console.error(`webhook delivery ${deliveryId}: attempt ${attempt} was dead-lettered; recording it as failed`);
        // The attempt itself, when it is the next one; otherwise the delivery as a whole.
        const recorded = await recordAttempt(env.DB, deliveryId, attempt, {
          status: "failed",
          statusCode: null,
          error: DEAD_LETTER_ERROR,
          latencyMs: 0,
          at: new Date().toISOString(),
          nextAttemptAt: null,
        });
        if (!recorded) await closeDelivery(env.DB, deliveryId, "failed", DEAD_LETTER_ERROR);
      }
      message.ack();
    } catch (err) {
      console.error(`dead-lettered webhooks message ${message.id} failed`, err);
      message.retry({ delaySeconds: 60 });
    }
  }
}
