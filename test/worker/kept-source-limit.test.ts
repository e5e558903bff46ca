/**
 * The plan's storage limit for kept sources (docs/editing.md "The source
 * stays for edits"), on the real stack (D1, R2, the uploads' Durable
 * Objects): keeping one more completed upload job's source past the limit
 * releases the account's oldest kept sources first, never one with an edit
 * queued. Only the engine is played by the test.
 */
import { createExecutionContext, env } from "cloudflare:test";
import { beforeEach, describe, expect, it } from "vitest";
import { app } from "../../src/app.ts";
import { clipReport, expectAck, FakeEngine } from "./engine-stub.ts";
import { api, createAccount, expectProblem, type TestAccount } from "./helpers.ts";
import { startJob } from "./jobs-helpers.ts";
import { bytesOf, storedKeys, uploadAll } from "./uploads-helpers.ts";

const SOURCE_BYTES = 30_000;

let engine: FakeEngine;

beforeEach(() => {
  engine = new FakeEngine();
  engine.install();
});

/** An account on a plan of its own whose kept-source limit holds `sources` sources of SOURCE_BYTES. */
async function accountKeeping(sources: number): Promise<TestAccount> {
  const name = `kept-${crypto.randomUUID().slice(0, 8)}`;
  await env.DB.prepare(
    `INSERT INTO plans (name, credits_per_period, requests_per_minute, max_active_jobs, max_upload_bytes, max_open_uploads, max_open_upload_bytes, max_kept_source_bytes)
     VALUES (?, 6000, 100000, 5, 1073741824, 10, 1073741824, ?)`,
  )
    .bind(name, sources * SOURCE_BYTES + SOURCE_BYTES / 2)
    .run();
  return createAccount(name);
}

/** An upload job run to completion; its source is then kept. */
async function completedUploadJob(account: TestAccount, seed: number): Promise<{ jobId: string; uploadId: string }> {
  const uploadId = await uploadAll(account, bytesOf(SOURCE_BYTES, seed), 16_384, `talk-${seed}.mp4`);
  const job = await startJob(account, engine, { upload_id: uploadId, video_type: "podcast" });
  expect((await job.probe({ duration_seconds: 60 })).proceed).toBe(true);
  await job.uploadClip(0);
  await expectAck(await job.complete({ title: "talk", source_duration_seconds: 60, clips: [clipReport(0)] }));
  return { jobId: job.jobId, uploadId };
}

/** A clip edit, handled with a jobs queue that only records: the edit stays queued. */
async function patchClip(account: TestAccount, jobId: string, body: unknown): Promise<Response> {
  const quiet = { ...env, JOBS: { send: async () => undefined, sendBatch: async () => undefined } as unknown as Queue };
  const headers = { Authorization: `Bearer ${account.apiKey}`, "Content-Type": "application/json" };
  const req = new Request(`http://worker.test/api/v1/jobs/${jobId}/clips/0`, { method: "PATCH", headers, body: JSON.stringify(body) });
  return app.fetch(req, quiet, createExecutionContext());
}

async function usage(account: TestAccount): Promise<{ kept_source_bytes: number; max_kept_source_bytes: number }> {
  return (await api(account, "/api/v1/usage")).json();
}

describe("the plan's kept-source limit", { timeout: 60_000 }, () => {
  it("releases the oldest kept source when a third would go over a limit of two", async () => {
    const account = await accountKeeping(2);
    const first = await completedUploadJob(account, 1);
    const second = await completedUploadJob(account, 2);
    expect(await usage(account)).toEqual(expect.objectContaining({ kept_source_bytes: 2 * SOURCE_BYTES }));
    const third = await completedUploadJob(account, 3);

    // The oldest is released: its object is gone and an edit of it is refused.
    expect(await storedKeys(first.uploadId)).toEqual([]);
    await expectProblem(await patchClip(account, first.jobId, { title: "Late" }), 410, "source_expired");
    expect(await storedKeys(second.uploadId)).toHaveLength(1);
    expect(await storedKeys(third.uploadId)).toHaveLength(1);
    expect(await usage(account)).toEqual(
      expect.objectContaining({ kept_source_bytes: 2 * SOURCE_BYTES, max_kept_source_bytes: 2 * SOURCE_BYTES + SOURCE_BYTES / 2 }),
    );
    // The newest is still editable.
    expect((await patchClip(account, third.jobId, { title: "Fresh" })).status).toBe(202);
  });

  it("never releases a source with an edit queued: the next oldest goes instead, and a held source alone may keep the account over", async () => {
    const account = await accountKeeping(1);
    const first = await completedUploadJob(account, 4);
    expect((await patchClip(account, first.jobId, { title: "Pending" })).status).toBe(202);
    const second = await completedUploadJob(account, 5);
    // The edited source is held and the one being kept stays: both are kept, over the limit.
    expect(await storedKeys(first.uploadId)).toHaveLength(1);
    expect(await storedKeys(second.uploadId)).toHaveLength(1);
    expect((await usage(account)).kept_source_bytes).toBe(2 * SOURCE_BYTES);
    // The next completion releases the oldest unheld source (the second), not the edited one.
    const third = await completedUploadJob(account, 6);
    expect(await storedKeys(second.uploadId)).toEqual([]);
    await expectProblem(await patchClip(account, second.jobId, { title: "Late" }), 410, "source_expired");
    expect(await storedKeys(first.uploadId)).toHaveLength(1);
    expect(await storedKeys(third.uploadId)).toHaveLength(1);
  });
});
