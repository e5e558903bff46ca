/**
 * The main job on the real local stack, driven only through HTTP: submit,
 * poll, download every clip from {cdn_url} and check it with ffprobe; a saved
 * configuration shaping the output; another account locked out; delete.
 */
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import type { JobView } from "../../scripts/local-stack/api-client.ts";
import { startSourceServer, type SourceServer } from "../../scripts/local-stack/source-server.ts";
import { newAccount, type TestAccount } from "./harness/accounts.ts";
import { download, scratchDir, statusOf } from "./harness/cdn.ts";
import { expectClipsOnCdn, expectProblem } from "./harness/expectations.ts";
import { TALK_40S, talkSource } from "./harness/media.ts";
import { sharedStack } from "./harness/shared-stack.ts";
import type { SharedStackInfo } from "./harness/shared-stack-config.ts";

const JOB_TIMEOUT_MS = 200_000;
/** Above the job deadline: a slow machine fails on the deadline's message, not a bare timeout. */
const TEST_TIMEOUT = { timeout: 300_000 };
/** The saved configuration of the second job: square, 720, short clips. */
const SQUARE = { aspect_ratio: "1:1", resolution: 720, min_clip_seconds: 5, max_clip_seconds: 10, max_clips: 2, reframe: "center" } as const;

let stack: SharedStackInfo;
let sources: SourceServer;
let talkUrl: string;
let talkSeconds: number;
const scratch = scratchDir();

beforeAll(async () => {
  const [info, server, talk] = await Promise.all([sharedStack(), startSourceServer(), talkSource(TALK_40S)]);
  stack = info;
  sources = server;
  talkSeconds = talk.facts.durationSeconds;
  // The title of a source without metadata comes from this file name.
  talkUrl = sources.addFile("weekly-podcast-episode.mp4", talk.path);
});

afterAll(async () => {
  await sources?.close();
  scratch.remove();
});

function lettersOf(text: string | null | undefined): string {
  return (text ?? "").toLowerCase().replace(/[^a-z]/g, "");
}

describe("a job with the default configuration", TEST_TIMEOUT, () => {
  test("completes with 1080x1920 H.264/AAC clips of 15-60 s, JPEG thumbnails, and figures that agree", async () => {
    const { client } = await newAccount(stack);
    const before = await client.usage();

    const submitted = await client.submit({ video_url: talkUrl, video_type: "podcast" });
    expect(submitted.status).toBe("queued");
    expect(submitted.job_id).toMatch(/^job_[A-Za-z0-9]{16,}$/);
    expect((submitted.message ?? "").length).toBeGreaterThan(0);

    const seen: JobView[] = [];
    const job = await client.waitForJob(submitted.job_id, { timeoutMs: JOB_TIMEOUT_MS, onUpdate: (j) => seen.push(j) });
    expect(job.status, JSON.stringify(job.error)).toBe("completed");

    // Progress while it ran: integer percent with a step, never decreasing, 100 only once completed.
    const running = seen.filter((j) => j.status === "queued" || j.status === "processing");
    for (const [i, j] of running.entries()) {
      expect(j.progress).toBeGreaterThanOrEqual(0);
      expect(j.progress).toBeLessThan(100);
      expect((j.step ?? "").length).toBeGreaterThan(0);
      if (i > 0) expect(j.progress ?? 0).toBeGreaterThanOrEqual(running[i - 1]?.progress ?? 0);
    }

    await expectClipsOnCdn(job, stack.cdnUrl, { width: 1080, height: 1920, minSeconds: 15, maxSeconds: 60, maxClips: 5, sourceSeconds: talkSeconds }, scratch);

    expect(lettersOf(job.title)).toContain("weeklypodcastepisode");
    expect(job.source_duration_seconds).toBeCloseTo(talkSeconds, 0);
    // One credit per started minute of source.
    expect(job.credits_charged).toBe(Math.ceil(talkSeconds / 60));
    const after = await client.usage();
    expect(after.plan).toBe(before.plan);
    expect(after.credits_total).toBe(before.credits_total);
    expect(after.credits_remaining).toBe(before.credits_remaining - (job.credits_charged ?? 0));

    // The list shows the same job with the same figures.
    const listed = await client.request("GET", "/api/v1/jobs");
    expect(listed.status).toBe(200);
    const item = (listed.body as { jobs: JobView[] }).jobs.find((j) => j.job_id === job.job_id);
    expect(item).toMatchObject({ status: "completed", title: job.title, clips_count: job.clips_count, clip_urls: job.clip_urls });
  });
});

describe("a job with a saved configuration, and its owner's rights", TEST_TIMEOUT, () => {
  /** The owner's completed job with the saved configuration, made once for these tests; the hook fails if it does not complete. */
  let owner: TestAccount;
  let saved: { status: number; body: unknown };
  let job: JobView;

  beforeAll(async () => {
    owner = await newAccount(stack);
    saved = await owner.client.request("PUT", "/api/v1/configs/square", { body: SQUARE });
    if (saved.status !== 200 && saved.status !== 201) throw new Error(`saving the configuration answered ${saved.status}: ${JSON.stringify(saved.body)}`);
    const submitted = await owner.client.submit({ video_url: talkUrl, video_type: "gaming", config_name: "square" });
    job = await owner.client.waitForJob(submitted.job_id, { timeoutMs: JOB_TIMEOUT_MS });
    if (job.status !== "completed") throw new Error(`the job ${job.job_id} ended ${job.status}: ${JSON.stringify(job.error)}`);
  }, TEST_TIMEOUT.timeout);

  test("PUT /configs/:name is used: 1:1 clips at 720x720, 5-10 s, at most 2", async () => {
    expect(saved.body).toMatchObject(SQUARE);
    expect(job.config_name).toBe("square");
    await expectClipsOnCdn(job, stack.cdnUrl, { width: 720, height: 720, minSeconds: 5, maxSeconds: 10, maxClips: 2, sourceSeconds: talkSeconds }, scratch);
  });

  test("clips are served with HTTP Range (206) for seeking", async () => {
    const url = job.clip_urls?.[0] ?? "";
    const whole = await download(url);
    expect(whole.status).toBe(200);
    const part = await download(url, { Range: "bytes=100-1099" });
    expect(part.status).toBe(206);
    expect(part.headers.get("Content-Range")).toBe(`bytes 100-1099/${whole.bytes.byteLength}`);
    expect(part.bytes).toEqual(whole.bytes.subarray(100, 1100));
  });

  test("another account cannot see, list, cancel or delete the job (404, as if it did not exist)", async () => {
    const stranger = await newAccount(stack);
    expectProblem(await stranger.client.request("GET", `/api/v1/jobs/${job.job_id}`), 404, "not_found");
    expectProblem(await stranger.client.request("POST", `/api/v1/jobs/${job.job_id}/cancel`), 404, "not_found");
    expectProblem(await stranger.client.request("DELETE", `/api/v1/jobs/${job.job_id}`), 404, "not_found");
    const list = await stranger.client.request("GET", "/api/v1/jobs?status=all");
    expect(list.status).toBe(200);
    expect((list.body as { jobs: JobView[] }).jobs).toEqual([]);
    // Nothing the stranger did touched it.
    expect((await owner.client.getJob(job.job_id)).status).toBe("completed");
    for (const url of job.clip_urls ?? []) expect(await statusOf(url)).toBe(200);
  });

  // Last in this block: it deletes the job the tests above read.
  test("the owner deletes the finished job: it is gone from the API and its clips from {cdn_url}", async () => {
    const deleted = await owner.client.request("DELETE", `/api/v1/jobs/${job.job_id}`);
    expect([200, 204]).toContain(deleted.status);
    expectProblem(await owner.client.request("GET", `/api/v1/jobs/${job.job_id}`), 404, "not_found");
    for (const clip of job.clips ?? []) {
      expect(await statusOf(clip.url)).toBe(404);
      expect(await statusOf(clip.thumbnail_url)).toBe(404);
    }
    const list = await owner.client.request("GET", "/api/v1/jobs?status=all");
    expect((list.body as { jobs: JobView[] }).jobs.map((j) => j.job_id)).not.toContain(job.job_id);
  });
});
