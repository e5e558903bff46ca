import { app } from "./app.ts";
import { countsD1Queries, fetchCountingD1, withD1Totals } from "./http/d1-query-header.ts";
import { handleQueue } from "./queue/consumer.ts";
import { handleDeadLetters, JOBS_DEAD_LETTER_QUEUE } from "./queue/dead-letter.ts";
import { handleWebhookQueue, WEBHOOK_QUEUE } from "./webhooks/consumer.ts";
import { handleWebhookDeadLetters, WEBHOOK_DEAD_LETTER_QUEUE } from "./webhooks/dead-letter.ts";
import { runSweep } from "./jobs/sweep.ts";

export { AccountState } from "./jobs/account-state.ts";
export { ClipEngine } from "./engine/clip-engine.ts";
export { FleetScheduler } from "./fleet/fleet-scheduler.ts";
export { UploadState } from "./uploads/upload-state.ts";
export { ClientGate } from "./gate/client-gate.ts";
export { AiBudget } from "./ai/budget.ts";
// The Container's outbound interception (engine callbacks to clipjobs.internal) runs through this entrypoint.
export { ContainerProxy } from "@cloudflare/containers";

export default {
  fetch(request, env, ctx) {
    if (countsD1Queries(env)) return fetchCountingD1(app.fetch, request, env, ctx);
    return app.fetch(request, env, ctx);
  },
  async queue(batch, unwrapped, ctx) {
    const env = countsD1Queries(unwrapped) ? withD1Totals(unwrapped) : unwrapped;
    if (batch.queue === WEBHOOK_QUEUE) return handleWebhookQueue(batch, env, ctx);
    if (batch.queue === WEBHOOK_DEAD_LETTER_QUEUE) return handleWebhookDeadLetters(batch, env);
    if (batch.queue === JOBS_DEAD_LETTER_QUEUE) return handleDeadLetters(batch, env);
    return handleQueue(batch, env, ctx);
  },
  // The sweep (wrangler.toml [triggers]): what a crash left after a committed transition.
  async scheduled(_controller, env, ctx) {
    ctx.waitUntil(runSweep(env));
  },
} satisfies ExportedHandler<Env, unknown>;
