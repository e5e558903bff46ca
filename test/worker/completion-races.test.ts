/**
 * Transitions that overlap at the end of a job: two attempts of one
 * completion (the engine retries after its callback timeout while the first
 * attempt still waits for its D1 batch), a completion against a cancel, and a
 * completion against a failure. Whichever wins, its outcome is what the CDN
 * serves: a completed job's URLs all answer 200 and it is charged; a canceled
 * or failed job publishes nothing and is charged nothing. The loser never
 * removes what the winner published (src/jobs/unclaimed-publication.ts).
 */
import { createExecutionContext, env, SELF, waitOnExecutionContext } from "cloudflare:test";
import { beforeEach, describe, expect, it } from "vitest";
import { app } from "../../src/app.ts";
import { findJob, findPublicationKey } from "../../src/db/jobs.ts";
import { cancelJob, failJob } from "../../src/jobs/lifecycle.ts";
import { PUBLISH_RACE_MS } from "../../src/jobs/job-objects.ts";
import { publishedKeys, publishStaged } from "../../src/jobs/publication.ts";
import { runSweep } from "../../src/jobs/sweep.ts";
import { keysOf } from "../../src/jobs/unclaimed-publication.ts";
import type { CompleteReport } from "#contract";
import { clipReport, expectAck, FakeEngine, type EngineClient } from "./engine-stub.ts";
import { api, createAccount, expectProblem, type TestAccount } from "./helpers.ts";
import { Gate, holdFirst, holdPuts } from "./hold.ts";
import { getJob, getUsage, type JobJson } from "./jobs-helpers.ts";
import { CLIP_SRT, CLIP_VTT, processingJob, put } from "./speech-helpers.ts";
import { added, publicKeys, stagedKeys } from "./storage-helpers.ts";

let engine: FakeEngine;
beforeEach(() => {
  engine = new FakeEngine();
  engine.install();
});

const REPORT: CompleteReport = {
  title: "Talk",
  source_duration_seconds: 60,
  clips: [clipReport(0, { sidecars: true }), clipReport(1, { sidecars: true })],
  transcript: null,
  transcript_unavailable_reason: "no_speech",
  translation: null,
  judgement: null,
  chapters: [],
};

/** Two clips with thumbnails and caption sidecars, staged as an engine leaves them before completing. */
async function renderTwo(client: EngineClient): Promise<void> {
  for (const index of [0, 1]) {
    await client.uploadClip(index, 3000 + index);
    await expectAck(await put(client, `clips/${index}/captions.vtt`, CLIP_VTT, "text/vtt"));
    await expectAck(await put(client, `clips/${index}/captions.srt`, CLIP_SRT, "application/x-subrip"));
  }
}

/** Every key completion publishes the report's clips at (the same for every attempt of the job). */
async function reportKeys(jobId: string): Promise<string[]> {
  return keysOf(await publishedKeys((await findPublicationKey(env.DB, jobId))!, REPORT.clips));
}

/** A completion attempt over HTTP whose bindings are `bindings` (a held D1 or R2), answered once it is let go. */
async function completeWith(client: EngineClient, bindings: Partial<Env>): Promise<Response> {
  const ctx = createExecutionContext();
  const res = await app.fetch(
    new Request(client.url("complete"), {
      method: "POST",
      headers: { Authorization: `Bearer ${client.token}`, "Content-Type": "application/json" },
      body: JSON.stringify(REPORT),
    }),
    { ...env, ...bindings },
    ctx,
  );
  await waitOnExecutionContext(ctx);
  return res;
}

/** The publication key DELETE kept for the sweep, if it is still kept. */
async function keptPublication(jobId: string): Promise<string | null> {
  const row = await env.DB.prepare(`SELECT publication_key FROM deleted_publications WHERE job_id = ?`).bind(jobId).first<{ publication_key: string }>();
  return row?.publication_key ?? null;
}

async function cdnStatus(key: string): Promise<number> {
  const res = await SELF.fetch(`${env.CDN_URL}/${key}`);
  await res.body?.cancel();
  return res.status;
}

function urlsOf(job: JobJson): string[] {
  const clips = job.clips as unknown as { url: string; thumbnail_url: string; captions: { vtt_url: string; srt_url: string } }[];
  return clips.flatMap((clip) => [clip.url, clip.thumbnail_url, clip.captions.vtt_url, clip.captions.srt_url]);
}

/** The job completed, charged once, and every URL it names is served. */
async function expectServedCompletion(account: TestAccount, jobId: string, creditsBefore: number): Promise<void> {
  const job = await getJob(account, jobId);
  expect(job.status).toBe("completed");
  expect(job.credits_charged).toBe(1);
  expect((await getUsage(account)).credits_remaining).toBe(creditsBefore - 1);
  const urls = urlsOf(job);
  expect(urls).toHaveLength(8);
  for (const url of urls) {
    const res = await SELF.fetch(url);
    await res.body?.cancel();
    expect(res.status, url).toBe(200);
  }
  expect(await stagedKeys(jobId)).toEqual([]);
}

/** The job ended as `status`, charged nothing, and nothing of it is public. */
async function expectNothingPublished(account: TestAccount, jobId: string, status: string, keys: string[], creditsBefore: number, publicBefore: Set<string>) {
  const job = await getJob(account, jobId);
  expect(job.status).toBe(status);
  expect(job.credits_charged).toBe(0);
  expect((await getUsage(account)).credits_remaining).toBe(creditsBefore);
  for (const key of keys) expect(await cdnStatus(key), key).toBe(404);
  expect(added(publicBefore, await publicKeys())).toEqual([]);
}

describe("two attempts of one completion", () => {
  it("the first, held before its D1 batch, loses to the retry and leaves every URL of the completed job served", async () => {
    const account = await createAccount();
    const credits = (await getUsage(account)).credits_remaining;
    const client = await processingJob(engine, account);
    await renderTwo(client);
    const gate = new Gate();
    const first = completeWith(client, { DB: holdFirst(env.DB, "batch", gate) });
    // The first attempt has published everything and waits just before its batch.
    await gate.reached;
    for (const key of await reportKeys(client.jobId)) expect(await cdnStatus(key), key).toBe(200);
    await expectAck(await client.complete(REPORT));
    gate.release();
    // The first attempt is answered as the completion that overtook it was.
    await expectAck(await first);
    await expectServedCompletion(account, client.jobId, credits);
  });

  it("the first, held while publishing, finds the retry's clean-up done and removes none of the winner's objects", async () => {
    const account = await createAccount();
    const credits = (await getUsage(account)).credits_remaining;
    const client = await processingJob(engine, account);
    await renderTwo(client);
    const gate = new Gate();
    const first = completeWith(client, { CLIPS: holdPuts(env.CLIPS, gate) });
    await gate.reached;
    // The retry publishes, commits and settles (the staged copies are deleted) while the first still copies.
    await expectAck(await client.complete(REPORT));
    gate.release();
    await expectAck(await first);
    await expectServedCompletion(account, client.jobId, credits);
  });
});

describe("a completion against a cancel", () => {
  it("a cancel committed while the completion waits for its batch wins: nothing published, nothing charged", async () => {
    const account = await createAccount();
    const credits = (await getUsage(account)).credits_remaining;
    const before = await publicKeys();
    const client = await processingJob(engine, account);
    await renderTwo(client);
    const keys = await reportKeys(client.jobId);
    const gate = new Gate();
    const completion = completeWith(client, { DB: holdFirst(env.DB, "batch", gate) });
    await gate.reached;
    expect((await api(account, `/api/v1/jobs/${client.jobId}/cancel`, { method: "POST" })).status).toBe(200);
    gate.release();
    await expectProblem(await completion, 409, "job_not_active");
    await expectNothingPublished(account, client.jobId, "canceled", keys, credits, before);
  });

  it("a completion committed while the cancel waits for its batch wins: every URL served, charged once", async () => {
    const account = await createAccount();
    const credits = (await getUsage(account)).credits_remaining;
    const client = await processingJob(engine, account);
    await renderTwo(client);
    const gate = new Gate();
    const processing = (await findJob(env.DB, client.jobId))!;
    const cancel = cancelJob({ ...env, DB: holdFirst(env.DB, "batch", gate) }, processing);
    await gate.reached;
    await expectAck(await client.complete(REPORT));
    gate.release();
    expect(await cancel).toBe(false);
    await expectServedCompletion(account, client.jobId, credits);
    await expectProblem(await api(account, `/api/v1/jobs/${client.jobId}/cancel`, { method: "POST" }), 409, "job_not_cancelable");
  });
});

describe("a completion against a failure", () => {
  const TIMEOUT = { code: "processing_timeout", message: "The clip engine stopped reporting progress." } as const;

  it("a failure committed while the completion waits for its batch wins: nothing published, nothing charged", async () => {
    const account = await createAccount();
    const credits = (await getUsage(account)).credits_remaining;
    const before = await publicKeys();
    const client = await processingJob(engine, account);
    await renderTwo(client);
    const keys = await reportKeys(client.jobId);
    const gate = new Gate();
    const completion = completeWith(client, { DB: holdFirst(env.DB, "batch", gate) });
    await gate.reached;
    expect(await failJob(env, (await findJob(env.DB, client.jobId))!, ["processing"], TIMEOUT, { engineReported: false })).toBe(true);
    gate.release();
    await expectProblem(await completion, 409, "job_not_active");
    await expectNothingPublished(account, client.jobId, "failed", keys, credits, before);
  });

  it("a completion committed while the failure waits for its batch wins: every URL served, charged once", async () => {
    const account = await createAccount();
    const credits = (await getUsage(account)).credits_remaining;
    const client = await processingJob(engine, account);
    await renderTwo(client);
    const gate = new Gate();
    const processing = (await findJob(env.DB, client.jobId))!;
    const failure = failJob({ ...env, DB: holdFirst(env.DB, "batch", gate) }, processing, ["processing"], TIMEOUT, { engineReported: false });
    await gate.reached;
    await expectAck(await client.complete(REPORT));
    gate.release();
    expect(await failure).toBe(false);
    await expectServedCompletion(account, client.jobId, credits);
  });
});

describe("a completion still writing when its canceled job is deleted", () => {
  it("removes what it wrote after the deletion: no object of the job is left in the public bucket", async () => {
    const account = await createAccount();
    const before = await publicKeys();
    const client = await processingJob(engine, account);
    await renderTwo(client);
    const keys = await reportKeys(client.jobId);
    const gate = new Gate();
    // The completion's copies land only after the cancel and the DELETE (their clean-up ran before them).
    const completion = completeWith(client, { CLIPS: holdPuts(env.CLIPS, gate) });
    await gate.reached;
    expect((await api(account, `/api/v1/jobs/${client.jobId}/cancel`, { method: "POST" })).status).toBe(200);
    expect((await api(account, `/api/v1/jobs/${client.jobId}`, { method: "DELETE" })).status).toBe(204);
    expect(await findJob(env.DB, client.jobId)).toBeNull();
    gate.release();
    await expectProblem(await completion, 409, "job_not_active");
    for (const key of keys) expect(await cdnStatus(key), key).toBe(404);
    expect(added(before, await publicKeys())).toEqual([]);
  });

  it("when the attempt's Worker stops before its check, the sweep removes what it wrote once no attempt can still run", async () => {
    const account = await createAccount();
    const before = await publicKeys();
    const client = await processingJob(engine, account);
    await renderTwo(client);
    const publicationKey = (await findPublicationKey(env.DB, client.jobId))!;
    const keys = keysOf(await publishedKeys(publicationKey, REPORT.clips));
    const gate = new Gate();
    // Only the attempt's copies, not its check after them: as if its Worker stopped once they landed.
    const copies = publishStaged({ ...env, CLIPS: holdPuts(env.CLIPS, gate) }, client.jobId, await publishedKeys(publicationKey, REPORT.clips)).catch(
      (err: unknown) => err,
    );
    await gate.reached;
    expect((await api(account, `/api/v1/jobs/${client.jobId}/cancel`, { method: "POST" })).status).toBe(200);
    expect((await api(account, `/api/v1/jobs/${client.jobId}`, { method: "DELETE" })).status).toBe(204);
    gate.release();
    await copies;
    const leftBehind = added(before, await publicKeys());
    expect(leftBehind.length).toBeGreaterThan(0);
    expect(keys).toEqual(expect.arrayContaining(leftBehind));
    // Too early: an attempt could still be writing.
    await runSweep(env, Date.now());
    expect(await keptPublication(client.jobId)).toBe(publicationKey);
    expect(added(before, await publicKeys())).toEqual(leftBehind);
    // Once no attempt can still run, every key the job could have published is deleted, and so is the record.
    await runSweep(env, Date.now() + PUBLISH_RACE_MS + 1000);
    expect(added(before, await publicKeys())).toEqual([]);
    expect(await keptPublication(client.jobId)).toBeNull();
  });
});
