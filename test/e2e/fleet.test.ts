/**
 * The fleet on the real local stack: one engine process and
 * ENGINE_MAX_INSTANCES=1, as `.dev.vars.example` sets it. A second account's
 * job waits with its position and runs when the first is done; an engine
 * stopped with SIGTERM (what a redeploy sends) hands its job back to the
 * queue, and the job completes on the restarted engine, charged once.
 *
 * Runs on a stack of its own: it stops the engine.
 */
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { startSourceServer, type SourceServer } from "../../scripts/local-stack/source-server.ts";
import { startLocalStack, type LocalStack } from "../../scripts/local-stack/stack.ts";
import type { JobView } from "../../scripts/local-stack/api-types.ts";
import { newAccount } from "./harness/accounts.ts";
import { TALK_20S, TALK_75S, talkSource } from "./harness/media.ts";
import { stackOptions } from "./harness/shared-stack-config.ts";

const TEST_TIMEOUT = { timeout: 480_000 };
/** The cheapest job that completes: one short square clip at 720. */
const ONE_CLIP = { aspect_ratio: "1:1", resolution: 720, min_clip_seconds: 5, max_clip_seconds: 10, max_clips: 1 };

let stack: LocalStack;
let sources: SourceServer;
let shortUrl: string;
let longUrl: string;

beforeAll(async () => {
  const [started, server, short, long] = await Promise.all([
    startLocalStack(stackOptions("fleet", { ENGINE_MAX_INSTANCES: "1" })),
    startSourceServer(),
    talkSource(TALK_20S),
    talkSource(TALK_75S),
  ]);
  stack = started;
  sources = server;
  shortUrl = sources.addFile("short-talk.mp4", short.path);
  longUrl = sources.addFile("long-talk.mp4", long.path);
});

afterAll(async () => {
  await Promise.all([stack?.stop(), sources?.close()]);
});

describe("one engine, two accounts", TEST_TIMEOUT, () => {
  test("the second account's job waits with its position, then completes", async () => {
    const [a, b] = await Promise.all([newAccount(stack, "free"), newAccount(stack, "free")]);
    for (const { client } of [a, b]) {
      expect([200, 201]).toContain((await client.request("PUT", "/api/v1/configs/one", { body: ONE_CLIP })).status);
    }
    const body = { video_url: shortUrl, video_type: "vlog", config_name: "one" };
    const [first, second] = await Promise.all([a.client.submit(body), b.client.submit(body)]);
    // Whichever got the engine, the other one shows where it stands.
    const steps: string[] = [];
    const onUpdate = (job: JobView) => {
      if (job.status === "queued" && job.step) steps.push(job.step);
    };
    const seen = await Promise.all([
      a.client.waitForJob(first.job_id, { timeoutMs: 300_000, intervalMs: 250, onUpdate }),
      b.client.waitForJob(second.job_id, { timeoutMs: 300_000, intervalMs: 250, onUpdate }),
    ]);
    for (const job of seen) expect(job.status, JSON.stringify(job.error)).toBe("completed");
    expect(steps).toContain("Waiting for a free engine (position 1)");
  });
});

describe("a redeploy", TEST_TIMEOUT, () => {
  test("an engine stopped with SIGTERM mid-job: the job goes back to the queue and completes, charged once", async () => {
    const { client } = await newAccount(stack, "free");
    expect([200, 201]).toContain((await client.request("PUT", "/api/v1/configs/one", { body: ONE_CLIP })).status);
    const before = await client.usage();
    const submitted = await client.submit({ video_url: longUrl, video_type: "podcast", config_name: "one" });
    // Any moment of its work will do: stop the engine as soon as it has the job.
    const running = await client.waitForJob(submitted.job_id, { timeoutMs: 120_000, intervalMs: 200, until: (job) => job.status !== "queued" });
    expect(running.status).toBe("processing");

    await stack.stopEngine();
    const requeued = await client.waitForJob(submitted.job_id, { timeoutMs: 30_000, until: (job) => job.status !== "processing" });
    expect(requeued.status).toBe("queued");
    // Whatever was reserved (if the probe had happened) stays reserved; nothing is charged twice.
    expect([before.credits_remaining, before.credits_remaining - 2]).toContain((await client.usage()).credits_remaining);

    await stack.restartEngine();
    const completed = await client.waitForJob(submitted.job_id, { timeoutMs: 300_000 });
    expect(completed.status, JSON.stringify(completed.error)).toBe("completed");
    expect(completed.credits_charged).toBe(2);
    expect((await client.usage()).credits_remaining).toBe(before.credits_remaining - 2);
  });
});
