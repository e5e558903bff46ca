/**
 * D1 cost of the paths clients and engines hit all the time, counted with a
 * counting view of the real D1 binding (src/db/query-count.ts): a job read of
 * an active job or a warm finished one runs no D1 query, engine reports and
 * uploads write nothing to D1, and a job costs the same D1 writes whatever
 * the number of its reports.
 */
import { createExecutionContext, createMessageBatch, env, getQueueResult, runInDurableObject, waitOnExecutionContext } from "cloudflare:test";
import { afterAll, beforeEach, describe, expect, it } from "vitest";
import { accountState } from "../../src/account/stub.ts";
import { withCountedD1, type D1Counts } from "../../src/db/query-count.ts";
import type { ProgressReport } from "#contract";
import worker from "../../src/index.ts";
import { handleQueue } from "../../src/queue/consumer.ts";
import type { JobMessage } from "../../src/fleet/job-message.ts";
import { clipReport, EngineClient, FakeEngine, waitFor } from "./engine-stub.ts";
import { BASE, createAccount, type TestAccount } from "./helpers.ts";
import { deliver, submitJob, submitUndelivered, type JobJson } from "./jobs-helpers.ts";

let engine: FakeEngine;
const summary: string[] = [];

beforeEach(() => {
  engine = new FakeEngine();
  engine.install();
});

afterAll(() => {
  console.log(`D1 counts:\n  ${summary.join("\n  ")}`);
});

interface Counted {
  status: number;
  text: string;
  counts: D1Counts;
}

/** One request straight into the Worker with a counted D1, waitUntil work included. */
async function counted(request: Request): Promise<Counted> {
  const counts: D1Counts = { queries: 0, writes: 0 };
  const ctx = createExecutionContext();
  const response = await worker.fetch(request as Request<unknown, IncomingRequestCfProperties>, withCountedD1(env, counts), ctx);
  const text = await response.text();
  await waitOnExecutionContext(ctx);
  return { status: response.status, text, counts };
}

function readJob(account: TestAccount, jobId: string): Promise<Counted> {
  return counted(new Request(`${BASE}/api/v1/jobs/${jobId}`, { headers: { Authorization: `Bearer ${account.apiKey}` } }));
}

function callback(client: EngineClient, token: string, suffix: string, init: RequestInit): Promise<Counted> {
  const headers = new Headers(init.headers);
  headers.set("Authorization", `Bearer ${token}`);
  return counted(new Request(client.url(suffix), { ...init, headers }));
}

function postJson(client: EngineClient, token: string, suffix: string, body: unknown): Promise<Counted> {
  return callback(client, token, suffix, { method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify(body) });
}

function upload(client: EngineClient, token: string, suffix: string, size: number, contentType: string): Promise<Counted> {
  return callback(client, token, suffix, {
    method: "PUT",
    headers: { "Content-Type": contentType, "Content-Length": String(size) },
    body: new Uint8Array(size).fill(7),
  });
}

function add(total: D1Counts, more: D1Counts): void {
  total.queries += more.queries;
  total.writes += more.writes;
}

/** Runs a started job to completion with `reports` progress reports; the D1 cost of all its callbacks. */
async function runJob(client: EngineClient, token: string, reports: number): Promise<{ total: D1Counts; reportCosts: D1Counts[] }> {
  const total: D1Counts = { queries: 0, writes: 0 };
  const reportCosts: D1Counts[] = [];
  const report = async (progress: number) => {
    const body: ProgressReport = { progress, step: `Step at ${progress}` };
    const result = await postJson(client, token, "progress", body);
    expect(result.status, result.text).toBe(200);
    reportCosts.push(result.counts);
    add(total, result.counts);
  };
  const probe = await postJson(client, token, "probe", {
    title: "Counted",
    duration_seconds: 90,
    width: 640,
    height: 360,
    format: "mp4",
    size_bytes: 1000,
  });
  expect(probe.status, probe.text).toBe(200);
  add(total, probe.counts);
  for (let i = 0; i < reports; i += 1) await report(Math.floor((i * 90) / reports));
  // The job's first clip upload claims its publication key (one D1 statement: the clip is staged at the key it
  // will be published at, src/jobs/clip-staging.ts); every other upload, a retry of the same clip included, costs
  // nothing in D1.
  for (const [suffix, size, type, cost] of [
    ["clips/0", 1024, "video/mp4", { queries: 1, writes: 1 }],
    ["clips/0/thumbnail", 128, "image/jpeg", { queries: 0, writes: 0 }],
    ["clips/0", 1024, "video/mp4", { queries: 0, writes: 0 }],
  ] as const) {
    const stored = await upload(client, token, suffix, size, type);
    expect(stored.status, stored.text).toBe(200);
    expect(stored.counts).toEqual(cost);
    add(total, stored.counts);
  }
  const complete = await postJson(client, token, "complete", {
    title: "Counted",
    source_duration_seconds: 90,
    clips: [clipReport(0)],
    transcript: null,
    transcript_unavailable_reason: null,
  });
  expect(complete.status, complete.text).toBe(200);
  add(total, complete.counts);
  return { total, reportCosts };
}

describe("D1 cost of a job read", () => {
  it("answers queued, processing and warm finished jobs with no D1 query; a deleted job is gone", async () => {
    const account = await createAccount("unmetered");
    // Delivered by hand only: the queue's own delivery of the submission, late on a loaded machine, could move the
    // job to processing ("Starting") again after the progress report below.
    const jobId = await submitUndelivered(account);
    await readJob(account, jobId); // the key lookup is cached per isolate from here on

    // Queued (nothing delivered it yet), i.e. active.
    const queued = await readJob(account, jobId);
    expect(queued.status).toBe(200);
    expect(["queued", "processing"]).toContain((JSON.parse(queued.text) as JobJson).status);
    expect(queued.counts.queries).toBe(0);

    await deliver(account, jobId);
    const start = await waitFor(() => engine.starts(jobId).at(-1), `a StartJob for ${jobId}`);
    const client = EngineClient.from(start);
    await postJson(client, start.token, "progress", { progress: 40, step: "Analysing audio" });
    const processing = await readJob(account, jobId);
    const live = JSON.parse(processing.text) as JobJson;
    expect(live).toMatchObject({ status: "processing", progress: 40, step: "Analysing audio" });
    expect(processing.counts.queries).toBe(0);
    // Lists read D1, the durable record, with the live progress of the active jobs laid over it.
    const listed = await counted(new Request(`${BASE}/api/v1/jobs?status=processing`, { headers: { Authorization: `Bearer ${account.apiKey}` } }));
    expect((JSON.parse(listed.text) as { jobs: JobJson[] }).jobs).toMatchObject([{ job_id: jobId, progress: 40, step: "Analysing audio" }]);
    // Progress never decreases.
    await postJson(client, start.token, "progress", { progress: 10, step: "Rendering clip 1" });
    expect(JSON.parse((await readJob(account, jobId)).text)).toMatchObject({ progress: 40, step: "Rendering clip 1" });

    await runJob(client, start.token, 1);
    const cold = await readJob(account, jobId);
    expect(cold.counts.queries).toBeGreaterThan(0);
    const warm = await readJob(account, jobId);
    expect(warm.counts.queries).toBe(0);
    expect(warm.status).toBe(200);
    expect(warm.text).toBe(cold.text);
    expect((JSON.parse(warm.text) as JobJson).status).toBe("completed");
    summary.push(`job read: queued ${queued.counts.queries}, processing ${processing.counts.queries}, finished cold ${cold.counts.queries}, warm ${warm.counts.queries}`);

    const deleted = await counted(
      new Request(`${BASE}/api/v1/jobs/${jobId}`, { method: "DELETE", headers: { Authorization: `Bearer ${account.apiKey}` } }),
    );
    expect(deleted.status).toBe(204);
    const after = await readJob(account, jobId);
    expect(after.status).toBe(404);
  });

  it("repairs a Durable Object that does not know a running job (one accepted before it kept live state) from D1", async () => {
    const account = await createAccount("unmetered");
    // Delivered by hand only: a late delivery by the queue itself would tell the object about the job again after
    // the test made it forget.
    const jobId = await submitUndelivered(account);
    await deliver(account, jobId);
    const start = await waitFor(() => engine.starts(jobId).at(-1), `a StartJob for ${jobId}`);
    const stub = accountState(env, account.accountId);
    await runInDurableObject(stub, (_instance, state) => {
      state.storage.sql.exec(`DELETE FROM live_jobs WHERE job_id = ?`, jobId);
    });
    expect(await stub.liveJob(jobId, env.CDN_URL)).toEqual({ kind: "unknown" });

    const report = await postJson(EngineClient.from(start), start.token, "progress", { progress: 55, step: "Rendering clip 1" });
    expect(report.status, report.text).toBe(200);
    expect(report.counts.writes).toBe(0);
    const read = await readJob(account, jobId);
    expect(JSON.parse(read.text)).toMatchObject({ status: "processing", progress: 55, step: "Rendering clip 1" });
    expect(read.counts.queries).toBe(0);
  });

  it("never serves another account's job from its cache", async () => {
    const owner = await createAccount("unmetered");
    const other = await createAccount("unmetered");
    const jobId = await submitJob(owner);
    await readJob(owner, jobId);
    expect((await readJob(other, jobId)).status).toBe(404);
  });
});

/** Submits with a counted D1 and a queue that only records; the consumer then runs on a counted D1 too. */
async function countedSubmitAndStart(account: TestAccount): Promise<{ client: EngineClient; token: string; counts: D1Counts }> {
  const counts: D1Counts = { queries: 0, writes: 0 };
  const quiet = { ...env, JOBS: { send: async () => undefined, sendBatch: async () => undefined } as unknown as Queue };
  const ctx = createExecutionContext();
  const submitted = await worker.fetch(
    new Request(`${BASE}/api/v1/jobs`, {
      method: "POST",
      headers: { Authorization: `Bearer ${account.apiKey}`, "Content-Type": "application/json" },
      body: JSON.stringify({ video_url: "https://videos.example.com/counted.mp4", video_type: "podcast" }),
    }) as Request<unknown, IncomingRequestCfProperties>,
    withCountedD1(quiet, counts),
    ctx,
  );
  const text = await submitted.text();
  await waitOnExecutionContext(ctx);
  expect(submitted.status, text).toBe(201);
  const jobId = (JSON.parse(text) as JobJson).job_id;
  const message: JobMessage = { job_id: jobId, account_id: account.accountId };
  const batch = createMessageBatch<JobMessage>("clipjobs-jobs", [
    { id: `msg-${jobId}`, timestamp: new Date(), attempts: 1, body: message },
  ]);
  const queueCtx = createExecutionContext();
  await handleQueue(batch, withCountedD1(env, counts), queueCtx);
  await getQueueResult(batch, queueCtx);
  const start = await waitFor(() => engine.starts(jobId).at(-1), `a StartJob for ${jobId}`);
  return { client: EngineClient.from(start), token: start.token, counts };
}

describe("D1 writes per job", () => {
  it("are the same for a job with 3 reports and one with 30 (submission to completion); a report writes nothing", async () => {
    const account = await createAccount("unmetered");
    // The key's lookup and its last_used_at hint are per key and interval, not per job: out of the count.
    expect((await readJob(account, "job_000000000000000000000000")).status).toBe(404);
    const runWhole = async (reports: number) => {
      const started = await countedSubmitAndStart(account);
      const run = await runJob(started.client, started.token, reports);
      const whole: D1Counts = { queries: 0, writes: 0 };
      add(whole, started.counts);
      add(whole, run.total);
      return { whole, run };
    };
    const short = await runWhole(3);
    const long = await runWhole(30);

    expect(long.whole.writes).toBe(short.whole.writes);
    expect(long.whole.queries).toBe(short.whole.queries);
    expect(short.whole.writes).toBeGreaterThan(0);
    // A job's first report may read its account once per isolate; every later report costs nothing in D1.
    for (const cost of [...short.run.reportCosts.slice(1), ...long.run.reportCosts.slice(1)]) {
      expect(cost).toEqual({ queries: 0, writes: 0 });
    }
    summary.push(
      `whole job (submit, queue, engine callbacks, one clip): ${short.whole.writes} writes, ${short.whole.queries} queries with 3 reports; ` +
        `${long.whole.writes} writes, ${long.whole.queries} queries with 30`,
    );
  });
});
