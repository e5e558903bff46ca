/** Status shapes, listing, cancel and delete, idempotent submission, enqueue rollback. */
import { createExecutionContext, env, SELF, waitOnExecutionContext } from "cloudflare:test";
import { beforeEach, describe, expect, it } from "vitest";
import { accountState } from "../../src/account/stub.ts";
import { JobList, Job as JobSchema, SubmitJobResponse } from "../../src/api/openapi-schemas.ts";
import { app } from "../../src/app.ts";
import { clipReport, expectAck, FakeEngine } from "./engine-stub.ts";
import { api, BASE, createAccount, expectProblem, type TestAccount } from "./helpers.ts";
import { getJob, startJob, submit, submitJob, submitUndelivered, VIDEO_URL, type JobJson } from "./jobs-helpers.ts";
import { keyOf, PUBLISHED_URL } from "./storage-helpers.ts";

let engine: FakeEngine;
beforeEach(() => {
  engine = new FakeEngine();
  engine.install();
});

interface ListJson {
  jobs: JobJson[];
  count: number;
  next_cursor: string | null;
}

async function list(account: TestAccount, query = ""): Promise<ListJson> {
  const res = await api(account, `/api/v1/jobs${query}`);
  const text = await res.text();
  if (res.status !== 200) throw new Error(`list answered ${res.status}: ${text}`);
  return JSON.parse(text) as ListJson;
}

async function cancel(account: TestAccount, jobId: string): Promise<Response> {
  return api(account, `/api/v1/jobs/${jobId}/cancel`, { method: "POST" });
}

/** A job taken all the way to completed with `clips` clips. */
async function completedJob(account: TestAccount, clips = 1): Promise<string> {
  const client = await startJob(account, engine);
  await client.probe({ duration_seconds: 42, title: "Finished talk" });
  const reports = [];
  for (let i = 0; i < clips; i++) {
    await client.uploadClip(i, 512);
    reports.push(clipReport(i));
  }
  await expectAck(await client.complete({ title: "Finished talk", source_duration_seconds: 42, clips: reports }));
  return client.jobId;
}

async function canceledJob(account: TestAccount): Promise<string> {
  const jobId = await submitJob(account);
  expect((await cancel(account, jobId)).status).toBe(200);
  return jobId;
}

describe("GET /api/v1/jobs/:job_id", () => {
  it("shapes a queued job with progress and step, without result fields", async () => {
    const account = await createAccount();
    const jobId = await submitJob(account);
    // Read the row straight away through the API: the consumer may already have picked it up.
    const job = await getJob(account, jobId);
    expect(["queued", "processing"]).toContain(job.status);
    expect(typeof job.progress).toBe("number");
    expect(typeof job.step).toBe("string");
    expect(job).not.toHaveProperty("clips");
    expect(job).not.toHaveProperty("clip_urls");
    expect(job).not.toHaveProperty("error");
    expect(job).toMatchObject({ job_id: jobId, video_url: VIDEO_URL, video_type: "podcast", config_name: null });
    expect(Date.parse(job.created_at)).not.toBeNaN();
  });

  it("shapes failed and canceled jobs without progress; failed carries error", async () => {
    const account = await createAccount();
    const canceledId = await canceledJob(account);
    const canceled = await getJob(account, canceledId);
    expect(canceled.status).toBe("canceled");
    expect(canceled).not.toHaveProperty("progress");
    expect(canceled).not.toHaveProperty("step");
    expect(canceled).not.toHaveProperty("error");
    expect(canceled.completed_at).toBeTruthy();

    const client = await startJob(account, engine);
    await expectAck(await client.fail({ code: "source_not_video", message: "The file is not a video." }));
    const failed = await getJob(account, client.jobId);
    expect(failed.status).toBe("failed");
    expect(failed.error).toEqual({ code: "source_not_video", message: "The file is not a video." });
    expect(failed).not.toHaveProperty("progress");
    expect(failed).not.toHaveProperty("clip_urls");
  });

  it("answers 404 for an unknown id, a malformed id and another account's job alike", async () => {
    const owner = await createAccount();
    const other = await createAccount();
    const jobId = await submitJob(owner);
    const foreign = await expectProblem(await api(other, `/api/v1/jobs/${jobId}`), 404, "not_found");
    const missing = await expectProblem(await api(other, `/api/v1/jobs/job_AAAAAAAAAAAAAAAAAAAA`), 404, "not_found");
    await expectProblem(await api(other, `/api/v1/jobs/not-a-job`), 404, "not_found");
    expect(foreign.title).toBe(missing.title);
    expect(foreign.detail.replace(jobId, "X")).toBe(missing.detail.replace("job_AAAAAAAAAAAAAAAAAAAA", "X"));
    await expectProblem(await api(other, `/api/v1/jobs/${jobId}/cancel`, { method: "POST" }), 404, "not_found");
    await expectProblem(await api(other, `/api/v1/jobs/${jobId}`, { method: "DELETE" }), 404, "not_found");
    // The owner's job is untouched.
    expect(["queued", "processing"]).toContain((await getJob(owner, jobId)).status);
  });
});

describe("documented shapes", () => {
  it("every status's job, the submit answer and a list page match the OpenAPI schemas", async () => {
    const account = await createAccount();
    const submitted = await submit(account);
    SubmitJobResponse.parse(await submitted.json());
    const canceledId = (await list(account, "?status=all")).jobs[0]!.job_id;
    expect((await cancel(account, canceledId)).status).toBe(200);
    const done = await completedJob(account, 2);
    const client = await startJob(account, engine);
    const processing = await getJob(account, client.jobId);
    await expectAck(await client.fail({ code: "source_too_long", message: "Longer than 3 hours." }));
    const shapes = [processing, await getJob(account, canceledId), await getJob(account, done), await getJob(account, client.jobId)];
    expect(shapes.map((job) => job.status)).toEqual(["processing", "canceled", "completed", "failed"]);
    for (const job of shapes) expect(JobSchema.safeParse(job).error).toBeUndefined();
    expect(JobList.safeParse(await list(account, "?status=all")).error).toBeUndefined();
  });
});

describe("GET /api/v1/jobs", () => {
  it("lists completed jobs by default, newest first, with clip_urls", async () => {
    const account = await createAccount();
    const done = await completedJob(account, 2);
    await canceledJob(account);
    const page = await list(account);
    expect(page.count).toBe(1);
    expect(page.next_cursor).toBeNull();
    const item = page.jobs[0]!;
    expect(item).toMatchObject({ job_id: done, status: "completed", title: "Finished talk", clips_count: 2 });
    expect(item.clip_urls).toHaveLength(2);
    for (const url of item.clip_urls!) expect(url).toMatch(PUBLISHED_URL);
    expect(item.clip_urls).toEqual((await getJob(account, done)).clip_urls);
  });

  it("filters by any single status and by all; items always carry title, clips_count and clip_urls", async () => {
    const account = await createAccount();
    const done = await completedJob(account);
    const canceledId = await canceledJob(account);
    // Not delivered: a job the real queue delivers moves from queued to processing at a moment of its own, which
    // could fall between reading its status and listing by it (below).
    const active = await submitUndelivered(account);
    const all = await list(account, "?status=all");
    expect(all.jobs.map((j) => j.job_id)).toEqual([active, canceledId, done]);
    for (const item of all.jobs) {
      expect(item).toHaveProperty("title");
      expect(item).toHaveProperty("clips_count");
      expect(item).toHaveProperty("clip_urls");
      expect(item).toHaveProperty("created_at");
    }
    expect((await list(account, "?status=canceled")).jobs.map((j) => j.job_id)).toEqual([canceledId]);
    expect((await list(account, "?status=failed")).jobs).toEqual([]);
    expect((await getJob(account, active)).status).toBe("queued");
    expect((await list(account, "?status=queued")).jobs.map((j) => j.job_id)).toEqual([active]);
    expect((await list(account, "?status=processing")).jobs).toEqual([]);
  });

  it("pages with limit and an opaque cursor, without gaps or repeats", async () => {
    const account = await createAccount();
    const ids: string[] = [];
    for (let i = 0; i < 7; i++) ids.push(await canceledJob(account));
    const newestFirst = [...ids].reverse();
    const seen: string[] = [];
    let cursor: string | null = null;
    let pages = 0;
    do {
      const page: ListJson = await list(account, `?status=canceled&limit=3${cursor ? `&cursor=${cursor}` : ""}`);
      expect(page.count).toBe(page.jobs.length);
      seen.push(...page.jobs.map((j) => j.job_id));
      cursor = page.next_cursor;
      pages += 1;
    } while (cursor);
    expect(pages).toBe(3);
    expect(seen).toEqual(newestFirst);
    // Another account sees none of them.
    expect((await list(await createAccount(), "?status=all")).jobs).toEqual([]);
  });

  it.each([
    ["?limit=0"],
    ["?limit=101"],
    ["?limit=abc"],
    ["?status=done"],
    ["?cursor=not-a-cursor!"],
    [`?cursor=${btoa("2026-01-01T00:00:00.000Z|nope").replaceAll("=", "")}`],
  ])("answers 400 invalid_request for %s", async (query) => {
    const account = await createAccount();
    await expectProblem(await api(account, `/api/v1/jobs${query}`), 400, "invalid_request");
  });
});

describe("POST /api/v1/jobs/:job_id/cancel", () => {
  it("cancels a queued job and frees the slot for the next submission", async () => {
    const account = await createAccount();
    const jobId = await submitJob(account);
    const res = await cancel(account, jobId);
    expect(res.status).toBe(200);
    expect((await res.json<JobJson>()).status).toBe("canceled");
    expect(await accountState(env, account.accountId).activeJobs()).toEqual([]);
    expect((await submit(account)).status).toBe(201);
  });

  it("answers 409 job_not_cancelable for finished jobs", async () => {
    const account = await createAccount();
    const jobId = await canceledJob(account);
    await expectProblem(await cancel(account, jobId), 409, "job_not_cancelable");
    const done = await completedJob(account);
    await expectProblem(await cancel(account, done), 409, "job_not_cancelable");
  });
});

describe("DELETE /api/v1/jobs/:job_id", () => {
  it("deletes a finished job and its clips; the job is then gone", async () => {
    const account = await createAccount();
    const jobId = await completedJob(account, 2);
    const urls = (await getJob(account, jobId)).clips!.flatMap((clip) => [clip.url, clip.thumbnail_url]);
    for (const url of urls) expect((await SELF.fetch(url)).status).toBe(200);
    const res = await api(account, `/api/v1/jobs/${jobId}`, { method: "DELETE" });
    expect(res.status).toBe(204);
    expect(await res.text()).toBe("");
    // The published URLs are gone with the job.
    for (const url of urls) expect((await SELF.fetch(url)).status).toBe(404);
    for (const url of urls) expect(await env.CLIPS.head(keyOf(url))).toBeNull();
    const clipRows = await env.DB.prepare(`SELECT COUNT(*) AS n FROM clips WHERE job_id = ?`).bind(jobId).first<{ n: number }>();
    expect(clipRows?.n).toBe(0);
    await expectProblem(await api(account, `/api/v1/jobs/${jobId}`), 404, "not_found");
    await expectProblem(await api(account, `/api/v1/jobs/${jobId}`, { method: "DELETE" }), 404, "not_found");
  });

  it("answers 409 job_not_deletable for an active job", async () => {
    const account = await createAccount();
    const jobId = await submitJob(account);
    await expectProblem(await api(account, `/api/v1/jobs/${jobId}`, { method: "DELETE" }), 409, "job_not_deletable");
    expect(["queued", "processing"]).toContain((await getJob(account, jobId)).status);
  });
});

describe("Idempotency-Key", () => {
  async function jobCount(accountId: string): Promise<number> {
    const row = await env.DB.prepare(`SELECT COUNT(*) AS n FROM jobs WHERE account_id = ?`).bind(accountId).first<{ n: number }>();
    return row?.n ?? 0;
  }

  it("replays the first response for the same key and body without a new job", async () => {
    const account = await createAccount();
    const headers = { "Idempotency-Key": "submit-0001" };
    const first = await submit(account, undefined, headers);
    expect(first.status).toBe(201);
    const firstBody = await first.text();
    const second = await submit(account, undefined, headers);
    expect(second.status).toBe(201);
    expect(await second.text()).toBe(firstBody);
    expect(second.headers.get("Idempotent-Replayed")).toBe("true");
    expect(await jobCount(account.accountId)).toBe(1);
  });

  it("answers 422 idempotency_key_reused for the same key with another body", async () => {
    const account = await createAccount();
    const headers = { "Idempotency-Key": "submit-0002" };
    expect((await submit(account, undefined, headers)).status).toBe(201);
    await expectProblem(
      await submit(account, { video_url: VIDEO_URL, video_type: "gaming" }, headers),
      422,
      "idempotency_key_reused",
    );
    expect(await jobCount(account.accountId)).toBe(1);
  });

  it("keys are per account", async () => {
    const a = await createAccount();
    const b = await createAccount();
    const headers = { "Idempotency-Key": "shared-key" };
    const ra = await (await submit(a, undefined, headers)).json<JobJson>();
    const rb = await (await submit(b, undefined, headers)).json<JobJson>();
    expect(ra.job_id).not.toBe(rb.job_id);
  });

  it("creates one job for two simultaneous requests with the same key", async () => {
    const account = await createAccount("unmetered");
    const headers = { "Idempotency-Key": "race-1" };
    const responses = await Promise.all([submit(account, undefined, headers), submit(account, undefined, headers)]);
    const bodies = await Promise.all(responses.map((r) => r.json<JobJson & { code?: string }>()));
    const created = bodies.filter((_, i) => responses[i]!.status === 201);
    expect(created.length).toBeGreaterThanOrEqual(1);
    expect(new Set(created.map((b) => b.job_id)).size).toBe(1);
    for (const [i, res] of responses.entries()) {
      if (res.status !== 201) {
        expect(res.status).toBe(409);
        expect(bodies[i]!.code).toBe("conflict");
      }
    }
    expect(await jobCount(account.accountId)).toBe(1);
  });

  it("does not remember failures, so the key can be retried", async () => {
    const account = await createAccount();
    const headers = { "Idempotency-Key": "retry-after-fix" };
    const body = { video_url: VIDEO_URL, video_type: "general", config_name: "later" };
    await expectProblem(await submit(account, body, headers), 422, "config_not_found");
    await api(account, "/api/v1/configs/later", { method: "PUT", body: JSON.stringify({ max_clips: 2 }) });
    expect((await submit(account, body, headers)).status).toBe(201);
  });

  it("forgets a key after 24 hours, and a claim whose request died after a minute", async () => {
    const account = await createAccount("unmetered");
    const headers = { "Idempotency-Key": "old-key" };
    const first = await (await submit(account, undefined, headers)).json<JobJson>();
    expect((await cancel(account, first.job_id)).status).toBe(200);
    const age = (ms: number) => new Date(Date.now() - ms).toISOString();
    await env.DB.prepare(`UPDATE idempotency_keys SET created_at = ? WHERE account_id = ?`).bind(age(25 * 3600_000), account.accountId).run();
    const second = await (await submit(account, undefined, headers)).json<JobJson>();
    expect(second.job_id).not.toBe(first.job_id);
    expect((await cancel(account, second.job_id)).status).toBe(200);

    // A claim left pending (as if its request had died before answering) blocks only briefly.
    const stuck = { "Idempotency-Key": "stuck" };
    const third = await (await submit(account, undefined, stuck)).json<JobJson>();
    expect((await cancel(account, third.job_id)).status).toBe(200);
    const markPending = env.DB.prepare(`UPDATE idempotency_keys SET status = 0, response_json = '', created_at = ? WHERE key = 'stuck'`);
    await markPending.bind(age(1000)).run();
    await expectProblem(await submit(account, undefined, stuck), 409, "conflict");
    await markPending.bind(age(120_000)).run();
    const fourth = await submit(account, undefined, stuck);
    expect(fourth.status).toBe(201);
    expect((await fourth.json<JobJson>()).job_id).not.toBe(third.job_id);
  });

  it("never makes a second job when storing the answer fails: the job and its answer commit together", async () => {
    const account = await createAccount("unmetered");
    const headers = { "Idempotency-Key": "store-fails" };
    // A real D1 failure on the write of the answer, after the job's insert was sent.
    await env.DB.prepare(
      `CREATE TRIGGER fail_answer_store BEFORE UPDATE ON idempotency_keys WHEN NEW.key = 'store-fails'
       BEGIN SELECT RAISE(ABORT, 'injected failure'); END`,
    ).run();
    try {
      const first = await submit(account, undefined, headers);
      expect(first.status).toBeGreaterThanOrEqual(500);
    } finally {
      await env.DB.prepare(`DROP TRIGGER fail_answer_store`).run();
    }
    const retry = await submit(account, undefined, headers);
    expect(retry.status).toBe(201);
    const created = await retry.json<JobJson>();
    expect(await jobCount(account.accountId)).toBe(1);
    const replay = await submit(account, undefined, headers);
    expect((await replay.json<JobJson>()).job_id).toBe(created.job_id);
  });

  it("rejects a key longer than 255 characters", async () => {
    const account = await createAccount();
    await expectProblem(await submit(account, undefined, { "Idempotency-Key": "k".repeat(256) }), 400, "invalid_request");
  });
});

describe("enqueue failure", () => {
  it("rolls back the job and the slot and answers 503 service_unavailable", async () => {
    const account = await createAccount();
    const failingQueue = {
      send: () => Promise.reject(new Error("queue unavailable")),
      sendBatch: () => Promise.reject(new Error("queue unavailable")),
    };
    const ctx = createExecutionContext();
    const res = await app.fetch(
      new Request(`${BASE}/api/v1/jobs`, {
        method: "POST",
        headers: { Authorization: `Bearer ${account.apiKey}`, "Content-Type": "application/json" },
        body: JSON.stringify({ video_url: VIDEO_URL, video_type: "podcast" }),
      }),
      { ...env, JOBS: failingQueue as unknown as Queue },
      ctx,
    );
    await waitOnExecutionContext(ctx);
    await expectProblem(res, 503, "service_unavailable");
    const rows = await env.DB.prepare(`SELECT COUNT(*) AS n FROM jobs WHERE account_id = ?`).bind(account.accountId).first<{ n: number }>();
    expect(rows?.n).toBe(0);
    expect(await accountState(env, account.accountId).activeJobs()).toEqual([]);
    expect((await submit(account)).status).toBe(201);
  });
});
