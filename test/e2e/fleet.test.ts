/**
 * The fleet on the real local stack: one engine process and
 * ENGINE_MAX_INSTANCES=1, as `.dev.vars.example` sets it. A second account's
 * job waits with its position and runs when the first is done; an engine
 * stopped with SIGTERM (what a redeploy sends) hands its job back to the
 * queue, and the job completes on the restarted engine, charged once.
 *
 * Runs on a stack of its own: it stops the engine.
 *
 * Every step waits on an event, never on timing: the sources are held
 * downloads (the source server sends the first bytes, then nothing until the
 * test releases it), so a job is known to be mid-work, and stays so, for as
 * long as the test needs; the test then waits for the state it expects.
 */
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { startSourceServer, type SourceServer } from "../../scripts/local-stack/source-server.ts";
import type { HeldFile } from "../../scripts/local-stack/source-server.ts";
import { pollUntil } from "../../scripts/local-stack/poll.ts";
import { startLocalStack, type LocalStack } from "../../scripts/local-stack/stack.ts";
import type { JobView } from "../../scripts/local-stack/api-client.ts";
import { newAccount } from "./harness/accounts.ts";
import { TALK_20S, TALK_75S, talkSource } from "./harness/media.ts";
import { stackOptions } from "./harness/shared-stack-config.ts";

const TEST_TIMEOUT = { timeout: 480_000 };
/** The cheapest job that completes: one short square clip at 720. */
const ONE_CLIP = { aspect_ratio: "1:1", resolution: 720, min_clip_seconds: 5, max_clip_seconds: 10, max_clips: 1 };

/** Bytes a held download sends before it waits: the engine is then downloading, whatever the machine's speed. */
const HOLD_AFTER = 64 * 1024;

let stack: LocalStack;
let sources: SourceServer;
let shortPath: string;
let longPath: string;

beforeAll(async () => {
  const options = stackOptions("fleet", { ENGINE_MAX_INSTANCES: "1" });
  // A held download must outlast the engine's stall limit for as long as the test holds it.
  options.engineEnv = { ...options.engineEnv, DOWNLOAD_STALL_TIMEOUT_SECONDS: "900" };
  const [started, server, short, long] = await Promise.all([startLocalStack(options), startSourceServer(), talkSource(TALK_20S), talkSource(TALK_75S)]);
  stack = started;
  sources = server;
  shortPath = short.path;
  longPath = long.path;
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
    const held: HeldFile = sources.addHeldFile("short-talk-held.mp4", shortPath, HOLD_AFTER);
    const body = { video_url: held.url, video_type: "vlog", config_name: "one" };
    const [first, second] = await Promise.all([a.client.submit(body), b.client.submit(body)]);
    // Whichever got the engine is now downloading, and stays so until released.
    await held.reached;
    // The other one shows where it stands, for as long as the first one is held.
    const isWaiting = (job: JobView) => job.status === "queued" && job.step === "Waiting for a free engine (position 1)";
    const waiting = await pollUntil(
      async () => {
        const jobs = await Promise.all([a.client.getJob(first.job_id), b.client.getJob(second.job_id)]);
        return jobs.find(isWaiting);
      },
      { timeoutMs: 120_000, intervalMs: 250, description: "one of the two jobs to wait for the engine at position 1" },
    );
    expect(waiting.step).toBe("Waiting for a free engine (position 1)");
    held.release();
    const seen = await Promise.all([
      a.client.waitForJob(first.job_id, { timeoutMs: 300_000 }),
      b.client.waitForJob(second.job_id, { timeoutMs: 300_000 }),
    ]);
    for (const job of seen) expect(job.status, JSON.stringify(job.error)).toBe("completed");
  });
});

describe("a redeploy", TEST_TIMEOUT, () => {
  test("an engine stopped with SIGTERM mid-job: the job goes back to the queue and completes, charged once", async () => {
    const { client } = await newAccount(stack, "free");
    expect([200, 201]).toContain((await client.request("PUT", "/api/v1/configs/one", { body: ONE_CLIP })).status);
    const before = await client.usage();
    const held: HeldFile = sources.addHeldFile("long-talk-held.mp4", longPath, HOLD_AFTER);
    const submitted = await client.submit({ video_url: held.url, video_type: "podcast", config_name: "one" });
    // Mid-job for certain: the engine is downloading the source, and cannot finish until the test says so.
    await held.reached;
    const running = await client.waitForJob(submitted.job_id, { timeoutMs: 120_000, until: (job) => job.status !== "queued" });
    expect(running.status).toBe("processing");

    await stack.stopEngine();
    const requeued = await client.waitForJob(submitted.job_id, { timeoutMs: 120_000, until: (job) => job.status !== "processing" });
    expect(requeued.status).toBe("queued");
    // The next download (by the restarted engine) gets the whole file.
    held.release();
    // Whatever was reserved (if the probe had happened) stays reserved; nothing is charged twice.
    expect([before.credits_remaining, before.credits_remaining - 2]).toContain((await client.usage()).credits_remaining);

    await stack.restartEngine();
    const completed = await client.waitForJob(submitted.job_id, { timeoutMs: 300_000 });
    expect(completed.status, JSON.stringify(completed.error)).toBe("completed");
    expect(completed.credits_charged).toBe(2);
    expect((await client.usage()).credits_remaining).toBe(before.credits_remaining - 2);
  });
});
