/**
 * A fresh local stack never answers over a half-migrated database: the moment
 * its /health first answers 200, the operator API, a configuration save and a
 * job submission all work (no 500 from a table or column not yet created).
 * The client here knows nothing of the launcher's internals: it only polls the
 * port, as a script or a health check would.
 */
import { randomBytes } from "node:crypto";
import { afterAll, expect, test } from "vitest";
import { AdminClient } from "../../scripts/lib/admin-client.ts";
import { ApiClient } from "../../scripts/local-stack/api-client.ts";
import { delay } from "../../scripts/local-stack/poll.ts";
import { freePort } from "../../scripts/local-stack/ports.ts";
import { startLocalStack, type LocalStack } from "../../scripts/local-stack/stack.ts";
import { stackOptions } from "./harness/shared-stack-config.ts";

const started: LocalStack[] = [];
afterAll(async () => {
  await Promise.all(started.map((stack) => stack.stop()));
});

/** Polls /health as fast as a client reasonably would, until the first 200; gives up once `done` settles. */
async function firstHealthy(url: string, done: Promise<unknown>): Promise<boolean> {
  let over = false;
  void done.finally(() => (over = true)).catch(() => undefined);
  for (;;) {
    const answered = await fetch(`${url}/health`).then((r) => (void r.body?.cancel(), r.status), () => 0);
    if (answered === 200) return true;
    if (over) return false;
    await delay(10);
  }
}

test("API calls fired the moment /health first answers 200 on a fresh state are served, never 500", { timeout: 240_000 }, async () => {
  const workerPort = await freePort();
  const url = `http://127.0.0.1:${workerPort}`;
  // The operator token is chosen here, so the first call needs nothing from the launcher.
  const adminToken = `ready-admin-${randomBytes(18).toString("hex")}`;
  const starting = startLocalStack({ ...stackOptions("ready", { ADMIN_TOKEN: adminToken }), engine: false, workerPort });
  void starting.then((stack) => started.push(stack), () => undefined);
  // The watcher starts before the stack does, so it sees the very first answer the port gives.
  const sawHealthy = await firstHealthy(url, starting);
  expect(sawHealthy).toBe(true);

  // Right away, without waiting for the launcher to say it is ready.
  const created = await new AdminClient(url, adminToken).createAccount(`ready-${workerPort}@example.test`, "pro");
  const client = new ApiClient(url, created.api_key);
  const [config, job] = await Promise.all([
    client.request("PUT", "/api/v1/configs/first", { body: { aspect_ratio: "9:16", max_clips: 2, prompt: "the best bits" } }),
    client.request("POST", "/api/v1/jobs", { body: { video_url: "https://example.com/talk.mp4", video_type: "podcast" } }),
  ]);
  expect(config.status, JSON.stringify(config.body)).toBe(201);
  expect(job.status, JSON.stringify(job.body)).toBe(201);
  await starting;
});
