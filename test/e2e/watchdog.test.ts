/**
 * The engine process dies mid-job (during the heavy work, or mid-download):
 * the Worker's watchdog fails the job with processing_timeout, frees the slot
 * and releases the reserved credits; the restarted engine clears the work
 * directories the killed one left behind.
 *
 * Runs on a stack of its own (a short silence limit, an engine this file may
 * kill), so jobs of the other e2e files never see the crash. The engine
 * reaches the Worker through an upload gate (harness/upload-gate.ts): the
 * job killed "during the heavy work" is killed once its first clip is
 * rendered and its upload held, an event, not a step caught by polling.
 */
import { readdir } from "node:fs/promises";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { startSourceServer, type SourceServer } from "../../scripts/local-stack/source-server.ts";
import { startLocalStack, type LocalStack } from "../../scripts/local-stack/stack.ts";
import { newAccount } from "./harness/accounts.ts";
import { expectFailedWithoutCharge } from "./harness/expectations.ts";
import { TALK_20S, TALK_75S, talkSource } from "./harness/media.ts";
import { stackOptions } from "./harness/shared-stack-config.ts";
import { gateStack, type UploadGate } from "./harness/upload-gate.ts";

const SILENCE_LIMIT_SECONDS = 8;
/** Three waits: into the heavy work, the watchdog, a job on the restarted engine. */
const TEST_TIMEOUT = { timeout: 360_000 };

let stack: LocalStack;
let engineWorkDir: string;
let sources: SourceServer;
let longPath: string;
let gate: UploadGate;
let shortUrl: string;
/** Sends the start of a video and then nothing: a download that never ends. */
let stallingServer: Server;

function startStallingServer(): Promise<Server> {
  const server = createServer((_req, res) => {
    res.writeHead(200, { "Content-Type": "video/mp4", "Content-Length": 50_000_000 });
    res.write(Buffer.alloc(64 * 1024));
  });
  return new Promise((resolve) => server.listen(0, "127.0.0.1", () => resolve(server)));
}

/** Job directories in the engine's work directory. */
async function jobWorkDirs(): Promise<string[]> {
  return (await readdir(engineWorkDir).catch(() => [])).filter((name) => name.startsWith("job_"));
}

beforeAll(async () => {
  const options = stackOptions("watchdog", { ENGINE_SILENCE_TIMEOUT_SECONDS: String(SILENCE_LIMIT_SECONDS) });
  engineWorkDir = join(options.dir, "engine-work");
  gate = await gateStack(options);
  const [started, server, long, short, stalling] = await Promise.all([
    startLocalStack(options),
    startSourceServer(),
    talkSource(TALK_75S),
    talkSource(TALK_20S),
    startStallingServer(),
  ]);
  stack = started;
  sources = server;
  longPath = long.path;
  shortUrl = sources.addFile("short-talk.mp4", short.path);
  stallingServer = stalling;
});

afterAll(async () => {
  stallingServer?.closeAllConnections();
  await Promise.all([
    stack?.stop(),
    sources?.close(),
    gate?.close(),
    new Promise<void>((resolve) => (stallingServer ? stallingServer.close(() => resolve()) : resolve())),
  ]);
});

describe("the watchdog", TEST_TIMEOUT, () => {
  test("an engine killed mid-job: processing_timeout, slot freed, credits released; a restarted engine takes new jobs", async () => {
    const { client } = await newAccount(stack);
    const before = await client.usage();
    // The source is held until the gate is armed: the engine cannot upload the first clip before.
    const source = sources.addHeldFile("long-talk-held.mp4", longPath, 64 * 1024);
    const submitted = await client.submit({ video_url: source.url, video_type: "podcast" });
    gate.hold(submitted.job_id, 0);
    source.release();
    // Past the probe (credits reserved) and through the heavy work: the first clip is rendered, its upload held.
    await gate.held(submitted.job_id, 0);
    expect((await client.getJob(submitted.job_id)).status).toBe("processing");
    expect((await client.usage()).credits_remaining).toBeLessThan(before.credits_remaining);

    await stack.killEngine();
    // SIGKILL skips the job's own cleanup: its directory is still there.
    expect(await jobWorkDirs()).toHaveLength(1);
    const failed = await client.waitForJob(submitted.job_id, { timeoutMs: (SILENCE_LIMIT_SECONDS + 40) * 1000 });
    expectFailedWithoutCharge(failed, "processing_timeout");
    expect(await client.usage()).toEqual(before);

    await stack.restartEngine();
    expect(await jobWorkDirs()).toEqual([]);
    // The cheapest job that completes: one short square clip at 720.
    const one = { aspect_ratio: "1:1", resolution: 720, min_clip_seconds: 5, max_clip_seconds: 10, max_clips: 1 };
    expect([200, 201]).toContain((await client.request("PUT", "/api/v1/configs/one", { body: one })).status);
    const next = await client.submit({ video_url: shortUrl, video_type: "vlog", config_name: "one" });
    const completed = await client.waitForJob(next.job_id, { timeoutMs: 200_000 });
    expect(completed.status, JSON.stringify(completed.error)).toBe("completed");
  });

  test("an engine killed mid-download: processing_timeout, nothing reserved or charged, no files left", async () => {
    const { client } = await newAccount(stack);
    const before = await client.usage();
    const origin = `http://127.0.0.1:${(stallingServer.address() as AddressInfo).port}`;
    const submitted = await client.submit({ video_url: `${origin}/endless.mp4`, video_type: "general" });
    const downloading = await client.waitForJob(submitted.job_id, {
      timeoutMs: 60_000,
      until: (job) => job.status !== "queued" && (job.status !== "processing" || /^Downloading/.test(job.step ?? "")),
    });
    expect(downloading.status).toBe("processing");
    expect(await jobWorkDirs()).toHaveLength(1);

    await stack.killEngine();
    const failed = await client.waitForJob(submitted.job_id, { timeoutMs: (SILENCE_LIMIT_SECONDS + 40) * 1000 });
    expectFailedWithoutCharge(failed, "processing_timeout");
    expect(await client.usage()).toEqual(before);

    await stack.restartEngine();
    expect(await jobWorkDirs()).toEqual([]);
  });
});
