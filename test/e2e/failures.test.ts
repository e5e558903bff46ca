/**
 * Jobs that cannot succeed end cleanly, with the SPEC's failure code, no
 * charge and a free slot: each case on its own fresh account.
 */
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { freePort } from "../../scripts/local-stack/ports.ts";
import { startSourceServer, type SourceServer } from "../../scripts/local-stack/source-server.ts";
import { newAccount } from "./harness/accounts.ts";
import { expectFailedWithoutCharge } from "./harness/expectations.ts";
import { longQuietSource } from "./harness/media.ts";
import { sharedStack } from "./harness/shared-stack.ts";
import type { SharedStackInfo } from "./harness/shared-stack-config.ts";

const JOB_TIMEOUT_MS = 90_000;
/** Two job waits per test. */
const TEST_TIMEOUT = { timeout: 240_000 };

let stack: SharedStackInfo;
let sources: SourceServer;

beforeAll(async () => {
  [stack, sources] = await Promise.all([sharedStack(), startSourceServer()]);
});

afterAll(async () => {
  await sources?.close();
});

/** Submits on a fresh account, waits for the end, and checks nothing was charged and the slot is free. */
async function failingJob(videoUrl: string, code: string, plan: "free" | "pro" = "pro"): Promise<void> {
  const { client } = await newAccount(stack, plan);
  const before = await client.usage();
  const submitted = await client.submit({ video_url: videoUrl, video_type: "general" });
  const job = await client.waitForJob(submitted.job_id, { timeoutMs: JOB_TIMEOUT_MS });
  expectFailedWithoutCharge(job, code);
  expect(await client.usage()).toEqual(before);
  // The slot is free again: the next submission is accepted (and ends the same way).
  const next = await client.submit({ video_url: videoUrl, video_type: "general" });
  expectFailedWithoutCharge(await client.waitForJob(next.job_id, { timeoutMs: JOB_TIMEOUT_MS }), code);
}

describe("jobs that fail end cleanly with the SPEC code and no charge", TEST_TIMEOUT, () => {
  test("unreachable source: source_unreachable", async () => {
    await failingJob(`http://127.0.0.1:${await freePort()}/missing.mp4`, "source_unreachable");
  });

  test("a web page instead of a video: source_not_video", async () => {
    const url = sources.addText("episode-12.mp4", "<!doctype html><html><body><h1>Episode 12</h1><p>Watch it on our site.</p></body></html>", "text/html; charset=utf-8");
    await failingJob(url, "source_not_video");
  });

  test("a source over the length limit: source_too_long", async () => {
    const seconds = stack.maxSourceSeconds + 100;
    await failingJob(sources.addFile("too-long.mp4", await longQuietSource(seconds)), "source_too_long");
  });

  test("credits run out at the probe: the engine is told to stop with insufficient_credits", async () => {
    // 62 started minutes, on the free plan's 60 credits, and still under the length limit.
    const seconds = 61 * 60 + 30;
    expect(seconds).toBeLessThan(stack.maxSourceSeconds);
    const url = sources.addFile("an-hour-and-a-bit.mp4", await longQuietSource(seconds));
    await failingJob(url, "insufficient_credits", "free");
  });
});
