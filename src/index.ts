import { app } from "./app";
import { handleQueue } from "./queue/consumer";
import type { JobMessage } from "./queue/message";

export { AccountState } from "./account/account-state";
export { ClipEngine } from "./engine/container";
export { ClientGate } from "./gate/client-gate";
// The Container's outbound interception (engine callbacks to clipjobs.internal) runs through this entrypoint.
export { ContainerProxy } from "@cloudflare/containers";

export default {
  fetch: app.fetch,
  queue: handleQueue,
} satisfies ExportedHandler<Env, JobMessage>;
