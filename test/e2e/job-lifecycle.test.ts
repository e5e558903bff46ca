/**
 * One account through a job's lifecycle on the real stack: the active-job
 * limit, cancel mid-processing, then the list endpoint with each status
 * filter over jobs in every state.
 *
 * The jobs that must be mid-processing when the test acts are held there by
 * events, not caught by polling: each one's source is held until the upload
 * gate is armed for its first clip, and the test acts once that clip's
 * upload is held (harness/upload-gate.ts). Such a job has its credits
 * reserved and a clip rendered, and cannot complete before it is canceled.
 */
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import type { JobStatus, JobView, Usage } from "../../scripts/local-stack/api-client.ts";
import { freePort } from "../../scripts/local-stack/ports.ts";
import { startSourceServer, type SourceServer } from "../../scripts/local-stack/source-server.ts";
import { newAccount, type TestAccount } from "./harness/accounts.ts";
import { statusOf } from "./harness/cdn.ts";
import { expectProblem } from "./harness/expectations.ts";
import { made } from "./harness/journey.ts";
import { TALK_20S, TALK_75S, talkSource } from "./harness/media.ts";
import { clipUploadHeld, holdClipUpload, sharedStack } from "./harness/shared-stack.ts";
import type { SharedStackInfo } from "./harness/shared-stack-config.ts";

const JOB_TIMEOUT_MS = 200_000;
/** Above the job deadline: a slow machine fails on the deadline's message, not a bare timeout. */
const TEST_TIMEOUT = { timeout: 300_000 };
/** Four 720p clips of 8-10 s from the 75 s source: a job that spends a while rendering. */
const SEVERAL = { aspect_ratio: "9:16", resolution: 720, min_clip_seconds: 8, max_clip_seconds: 10, max_clips: 4 } as const;
/** One short square clip: the cheapest job that completes. */
const ONE = { aspect_ratio: "1:1", resolution: 720, min_clip_seconds: 5, max_clip_seconds: 10, max_clips: 1 } as const;

let stack: SharedStackInfo;
let sources: SourceServer;
let longPath: string;
let shortUrl: string;
let account: TestAccount;
let initialUsage: Usage;

/** Bytes a held source sends before it waits for its job's upload gate to be armed. */
const HOLD_AFTER = 64 * 1024;

/**
 * Submits a job on the long source whose first clip's upload will be held:
 * the source is held until the gate is armed for the job, so the engine
 * cannot reach that upload first. Resolves with the job id once armed.
 */
async function submitHeldMidProcessing(name: string, body: { video_type: string; config_name: string }, beforeRelease?: (jobId: string) => Promise<void>): Promise<string> {
  const source = sources.addHeldFile(name, longPath, HOLD_AFTER);
  const submitted = await account.client.submit({ ...body, video_url: source.url });
  await holdClipUpload(submitted.job_id, 0);
  await beforeRelease?.(submitted.job_id);
  source.release();
  return submitted.job_id;
}

/** Job ids by the state each one ends up in: each made by one step, read by later ones through made(). */
const jobs: { canceled?: string; failed?: string; completed?: string; active?: string } = {};

beforeAll(async () => {
  const [info, server, long, short] = await Promise.all([sharedStack(), startSourceServer(), talkSource(TALK_75S), talkSource(TALK_20S)]);
  stack = info;
  sources = server;
  longPath = long.path;
  shortUrl = sources.addFile("short-talk.mp4", short.path);
  account = await newAccount(stack);
  for (const [name, config] of [["several", SEVERAL], ["one", ONE]] as const) {
    const saved = await account.client.request("PUT", `/api/v1/configs/${name}`, { body: config });
    expect([200, 201]).toContain(saved.status);
  }
  initialUsage = await account.client.usage();
});

afterAll(async () => {
  await sources?.close();
});

/** The keys a job's objects had under the older layout (named by the job id), and the private staging keys: none may be served. */
function clipKeysOnCdn(jobId: string, count: number): string[] {
  return Array.from({ length: count }, (_, i) =>
    ["mp4", "jpg", "vtt", "srt"].flatMap((ext) => [`${stack.cdnUrl}/clips/${jobId}/${i}.${ext}`, `${stack.cdnUrl}/staging/${jobId}/${i}.${ext}`]),
  ).flat();
}

describe("one account's jobs through their lifecycle", TEST_TIMEOUT, () => {
  test("a second submission is 409 active_job_limit while the first job runs", async () => {
    // The first job cannot end before the next test cancels it (its first clip's upload is held).
    jobs.canceled = await submitHeldMidProcessing("long-talk-first.mp4", { video_type: "podcast", config_name: "several" }, async (firstId) => {
      const second = await account.client.request("POST", "/api/v1/jobs", { body: { video_url: shortUrl, video_type: "podcast" } });
      const problem = expectProblem(second, 409, "active_job_limit");
      expect(problem.active_job_id).toBe(firstId);
    });
  });

  test("cancel mid-processing: the job ends canceled, the slot is freed, reserved credits are released, no clips remain", async () => {
    const jobId = made(jobs.canceled, "the first job, held mid-processing");
    // Mid-processing: credits reserved (the probe is done), the first clip rendered and its upload held.
    await clipUploadHeld(jobId, 0);
    expect((await account.client.getJob(jobId)).status).toBe("processing");
    expect((await account.client.usage()).credits_remaining).toBeLessThan(initialUsage.credits_remaining);

    const canceled = await account.client.request("POST", `/api/v1/jobs/${jobId}/cancel`);
    expect(canceled.status).toBe(200);
    expect(canceled.body).toMatchObject({ job_id: jobId, status: "canceled" });
    const job = await account.client.getJob(jobId);
    expect(job.status).toBe("canceled");
    expect(job.credits_charged ?? 0).toBe(0);
    expectProblem(await account.client.request("POST", `/api/v1/jobs/${jobId}/cancel`), 409, "job_not_cancelable");

    expect((await account.client.usage()).credits_remaining).toBe(initialUsage.credits_remaining);
    for (const url of clipKeysOnCdn(jobId, SEVERAL.max_clips)) expect(await statusOf(url)).toBe(404);
  });

  test("after the first job ends, a new submission is accepted; a failing one charges nothing", async () => {
    // A closed loopback port: the source cannot be reached.
    const unreachable = `http://127.0.0.1:${await freePort()}/gone.mp4`;
    const submitted = await account.client.submit({ video_url: unreachable, video_type: "general" });
    jobs.failed = submitted.job_id;
    const job = await account.client.waitForJob(submitted.job_id, { timeoutMs: JOB_TIMEOUT_MS });
    expect(job.status).toBe("failed");
    expect(job.error?.code).toBe("source_unreachable");
    expect((await account.client.usage()).credits_remaining).toBe(initialUsage.credits_remaining);
  });

  test("a completed job, then one left running", async () => {
    const submitted = await account.client.submit({ video_url: shortUrl, video_type: "vlog", config_name: "one" });
    jobs.completed = submitted.job_id;
    const job = await account.client.waitForJob(submitted.job_id, { timeoutMs: JOB_TIMEOUT_MS });
    expect(job.status, JSON.stringify(job.error)).toBe("completed");

    // Left running until the last test cancels it: its first clip's upload is held.
    jobs.active = await submitHeldMidProcessing("long-talk-active.mp4", { video_type: "lecture", config_name: "several" });
    await clipUploadHeld(jobs.active, 0);
    expect((await account.client.getJob(jobs.active)).status).toBe("processing");
  });

  test("the list endpoint filters by each status, newest first, and pages with a cursor", async () => {
    const list = async (query: string): Promise<JobView[]> => {
      const result = await account.client.request("GET", `/api/v1/jobs${query}`);
      expect(result.status).toBe(200);
      const body = result.body as { jobs: JobView[]; count: number; next_cursor: string | null };
      expect(body.count).toBe(body.jobs.length);
      for (const item of body.jobs) {
        for (const field of ["job_id", "title", "clips_count", "status", "created_at", "clip_urls"]) expect(item).toHaveProperty(field);
      }
      return body.jobs;
    };
    const ids = (items: JobView[]): string[] => items.map((j) => j.job_id);

    const completed = made(jobs.completed, "the completed job");
    const failed = made(jobs.failed, "the failed job");
    const canceled = made(jobs.canceled, "the canceled job");
    const active = made(jobs.active, "the job left running");
    // The default filter is completed.
    expect(ids(await list(""))).toEqual([completed]);
    const byStatus: Record<JobStatus, string[]> = {
      completed: [completed],
      failed: [failed],
      canceled: [canceled],
      processing: [active],
      queued: [],
    };
    for (const [status, expected] of Object.entries(byStatus)) {
      const items = await list(`?status=${status}`);
      expect(ids(items), status).toEqual(expected);
      for (const item of items) expect(item.status).toBe(status);
    }
    const all = await list("?status=all");
    expect(ids(all)).toEqual([active, completed, failed, canceled]);
    const completedItem = all.find((j) => j.job_id === completed);
    expect(completedItem?.clips_count).toBe(1);
    expect(completedItem?.clip_urls).toHaveLength(1);

    // Pages of two follow the same order and end with a null cursor.
    const paged: string[] = [];
    let cursor: string | null = null;
    for (let page = 0; page < 4; page++) {
      const query: string = `?status=all&limit=2${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ""}`;
      const result = await account.client.request("GET", `/api/v1/jobs${query}`);
      const body = result.body as { jobs: JobView[]; next_cursor: string | null };
      expect(body.jobs.length).toBeLessThanOrEqual(2);
      paged.push(...ids(body.jobs));
      cursor = body.next_cursor;
      if (cursor === null) break;
    }
    expect(cursor).toBeNull();
    expect(paged).toEqual(ids(all));

    expectProblem(await account.client.request("GET", "/api/v1/jobs?status=finished"), 400, "invalid_request");
    expectProblem(await account.client.request("GET", "/api/v1/jobs?limit=101"), 400, "invalid_request");
  });

  test("cancel of the running job; the canceled job's clips never appeared on the CDN", async () => {
    const canceled = await account.client.request("POST", `/api/v1/jobs/${made(jobs.active, "the job left running")}/cancel`);
    expect(canceled.status).toBe(200);
    // By now the first job's engine run has long stopped: nothing of it was uploaded late.
    for (const url of clipKeysOnCdn(made(jobs.canceled, "the canceled job"), SEVERAL.max_clips)) expect(await statusOf(url)).toBe(404);
    const usage = await account.client.usage();
    expect(usage.credits_remaining).toBe(initialUsage.credits_remaining - 1);
  });
});
