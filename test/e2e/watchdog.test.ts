/**
 * The engine process dies mid-job: the Worker's watchdog fails the job with
 * processing_timeout, frees the slot and releases the reserved credits.
 *
 * Runs on a stack of its own (a short silence limit, an engine this file may
 * kill), so jobs of the other e2e files never see the crash.
 */
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { startSourceServer, type SourceServer } from "../../scripts/local-stack/source-server.ts";
import { startLocalStack, type LocalStack } from "../../scripts/local-stack/stack.ts";
import { newAccount } from "./harness/accounts.ts";
import { expectFailedWithoutCharge } from "./harness/expectations.ts";
import { TALK_20S, TALK_75S, talkSource } from "./harness/media.ts";
import { stackOptions } from "./harness/shared-stack-config.ts";

const SILENCE_LIMIT_SECONDS = 8;
/** Three waits: into the heavy work, the watchdog, a job on the restarted engine. */
const TEST_TIMEOUT = { timeout: 360_000 };

let stack: LocalStack;
let sources: SourceServer;
let longUrl: string;
let shortUrl: string;

beforeAll(async () => {
  const [started, server, long, short] = await Promise.all([
    startLocalStack(stackOptions("watchdog", { ENGINE_SILENCE_TIMEOUT_SECONDS: String(SILENCE_LIMIT_SECONDS) })),
    startSourceServer(),
    talkSource(TALK_75S),
    talkSource(TALK_20S),
  ]);
  stack = started;
  sources = server;
  longUrl = sources.addFile("long-talk.mp4", long.path);
  shortUrl = sources.addFile("short-talk.mp4", short.path);
});

afterAll(async () => {
  await Promise.all([stack?.stop(), sources?.close()]);
});

describe("the watchdog", TEST_TIMEOUT, () => {
  test("an engine killed mid-job: processing_timeout, slot freed, credits released; a restarted engine takes new jobs", async () => {
    const { client } = await newAccount(stack);
    const before = await client.usage();
    const submitted = await client.submit({ video_url: longUrl, video_type: "podcast" });
    // Past the probe (credits reserved) and into the heavy work.
    const running = await client.waitForJob(submitted.job_id, {
      timeoutMs: 90_000,
      until: (job) => job.status !== "queued" && (job.status !== "processing" || /^(Analyzing|Rendering)/.test(job.step ?? "")),
    });
    expect(running.status).toBe("processing");
    expect((await client.usage()).credits_remaining).toBeLessThan(before.credits_remaining);

    await stack.killEngine();
    const failed = await client.waitForJob(submitted.job_id, { timeoutMs: (SILENCE_LIMIT_SECONDS + 40) * 1000 });
    expectFailedWithoutCharge(failed, "processing_timeout");
    expect(await client.usage()).toEqual(before);

    await stack.restartEngine();
    // The cheapest job that completes: one short square clip at 720.
    const one = { aspect_ratio: "1:1", resolution: 720, min_clip_seconds: 5, max_clip_seconds: 10, max_clips: 1 };
    expect([200, 201]).toContain((await client.request("PUT", "/api/v1/configs/one", { body: one })).status);
    const next = await client.submit({ video_url: shortUrl, video_type: "vlog", config_name: "one" });
    const completed = await client.waitForJob(next.job_id, { timeoutMs: 200_000 });
    expect(completed.status, JSON.stringify(completed.error)).toBe("completed");
  });
});
