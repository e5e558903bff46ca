import { app } from "./app";
import { handleQueue } from "./queue/consumer";
import type { JobMessage } from "./queue/message";
import { handleWebhookQueue, WEBHOOK_QUEUE } from "./webhooks/consumer";

export { AccountState } from "./account/account-state";
export { ClipEngine } from "./engine/container";
// The Container's outbound interception (engine callbacks to clipjobs.internal) runs through this entrypoint.
export { ContainerProxy } from "@cloudflare/containers";

export default {
  fetch: app.fetch,
  queue: (batch, env, ctx) => (batch.queue === WEBHOOK_QUEUE ? handleWebhookQueue(batch, env, ctx) : handleQueue(batch, env, ctx)),
} satisfies ExportedHandler<Env, JobMessage>;
