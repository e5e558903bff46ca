/**
 * Jobs made from uploads: exactly one of video_url and upload_id, the
 * upload's owner and completeness, one job per upload, the engine reading the
 * source over its job channel (ranges included), and the upload deleted from
 * R2 and its Durable Object when the job ends.
 */
import { env } from "cloudflare:test";
import { beforeEach, describe, expect, it } from "vitest";
import { uploadKey } from "../../src/uploads/ids.ts";
import { clipReport, expectAck, FakeEngine } from "./engine-stub.ts";
import { api, createAccount, expectProblem, type TestAccount } from "./helpers.ts";
import { getJob, startJob, submit, submitJob, VIDEO_URL } from "./jobs-helpers.ts";
import {
  backdateExpiry,
  bytesOf,
  createUpload,
  head,
  patch,
  storedKeys,
  TUS,
  uploadAll,
  uploadInternals,
  uploadStub,
} from "./uploads-helpers.ts";
import { runDurableObjectAlarm } from "cloudflare:test";

let engine: FakeEngine;
beforeEach(() => {
  engine = new FakeEngine();
  engine.install();
});

async function sourceUploaded(account: TestAccount, data = bytesOf(40_000, 9), name = "Board meeting, part 2.mp4"): Promise<string> {
  return uploadAll(account, data, 16_384, name);
}

async function uploadJson(account: TestAccount, id: string) {
  const res = await api(account, `/api/v1/uploads/${id}`);
  expect(res.status).toBe(200);
  return res.json<{ job_id: string | null; expires_at: string | null; status: string }>();
}

describe("POST /api/v1/jobs with upload_id", { timeout: 30_000 }, () => {
  it("needs exactly one of video_url and upload_id", async () => {
    const account = await createAccount();
    const id = await sourceUploaded(account);
    await expectProblem(await submit(account, { video_type: "podcast" }), 400, "invalid_request");
    const both = await expectProblem(await submit(account, { video_url: VIDEO_URL, upload_id: id, video_type: "podcast" }), 400, "invalid_request");
    expect(both.errors?.[0]?.message).toContain("exactly one of video_url and upload_id");
    expect((await uploadJson(account, id)).job_id).toBeNull();
  });

  it("creates a job titled with the file name; the upload is taken and no longer expires", async () => {
    const account = await createAccount();
    const id = await sourceUploaded(account);
    const res = await submit(account, { upload_id: id, video_type: "podcast" });
    expect(res.status).toBe(201);
    const created = await res.json<{ job_id: string; video_url: string | null; upload_id: string; title?: string }>();
    expect(created.video_url).toBeNull();
    expect(created.upload_id).toBe(id);
    expect(created.title).toBe("Board meeting, part 2.mp4");
    const upload = await uploadJson(account, id);
    expect(upload.job_id).toBe(created.job_id);
    expect(upload.expires_at).toBeNull();
    expect((await head(account, id)).headers.get("Upload-Expires")).toBeNull();
  });

  it("refuses an unknown, foreign, incomplete or expired upload with its documented error", async () => {
    const account = await createAccount();
    const other = await createAccount();
    await expectProblem(await submit(account, { upload_id: "upl_doesnotexist000000", video_type: "vlog" }), 404, "not_found");
    await expectProblem(await submit(account, { upload_id: "../etc", video_type: "vlog" }), 404, "not_found");
    const foreign = await sourceUploaded(other);
    await expectProblem(await submit(account, { upload_id: foreign, video_type: "vlog" }), 404, "not_found");

    const partial = await createUpload(account, 1000);
    expect((await patch(account, partial, 0, bytesOf(999))).status).toBe(204);
    const incomplete = await expectProblem(await submit(account, { upload_id: partial, video_type: "vlog" }), 409, "upload_incomplete");
    expect(incomplete.offset).toBe(999);

    const stale = await sourceUploaded(account);
    await backdateExpiry(stale);
    await runDurableObjectAlarm(uploadStub(stale));
    await expectProblem(await submit(account, { upload_id: stale, video_type: "vlog" }), 410, "upload_expired");
    // Nothing was created for any of them.
    const list = await api(account, "/api/v1/jobs?status=all");
    expect((await list.json<{ count: number }>()).count).toBe(0);
  });

  it("one upload, two jobs at once: one is created, the other gets 409 upload_in_use; DELETE of the upload too", async () => {
    const account = await createAccount("unmetered");
    const id = await sourceUploaded(account);
    const answers = await Promise.all([
      submit(account, { upload_id: id, video_type: "podcast" }),
      submit(account, { upload_id: id, video_type: "vlog" }),
    ]);
    const statuses = answers.map((r) => r.status).sort();
    expect(statuses).toEqual([201, 409]);
    await expectProblem(answers.find((r) => r.status === 409)!, 409, "upload_in_use");
    const winner = await answers.find((r) => r.status === 201)!.json<{ job_id: string }>();
    expect((await uploadJson(account, id)).job_id).toBe(winner.job_id);
    await expectProblem(await api(account, `/api/v1/uploads/${id}`, { method: "DELETE", headers: TUS }), 409, "upload_in_use");
    expect(await storedKeys(id)).toEqual([uploadKey(id)]);
  });

  it("a job refused after taking the upload gives it back (active job limit)", async () => {
    const account = await createAccount();
    await submitJob(account); // the free plan's one active job
    const id = await sourceUploaded(account);
    await expectProblem(await submit(account, { upload_id: id, video_type: "podcast" }), 409, "active_job_limit");
    const upload = await uploadJson(account, id);
    expect(upload.job_id).toBeNull();
    expect(upload.expires_at).not.toBeNull();
  });
});

describe("the engine reads the source over its job channel", { timeout: 30_000 }, () => {
  it("StartJob says upload; GET .../source serves the bytes (and ranges) to the job's token only", async () => {
    const account = await createAccount();
    const data = bytesOf(40_000, 11);
    const id = await sourceUploaded(account, data, "Ünïcode talk.mp4");
    const client = await startJob(account, engine, { upload_id: id, video_type: "podcast" });
    const start = engine.starts(client.jobId).at(-1)!;
    expect(start.source).toBe("upload");
    expect(start.video_url).toBe(`upload://${id}/${encodeURIComponent("Ünïcode talk.mp4")}`);

    const whole = await client.send("source");
    expect(whole.status).toBe(200);
    expect(whole.headers.get("Content-Length")).toBe(String(data.byteLength));
    expect(whole.headers.get("Content-Disposition")).toBe(`attachment; filename*=UTF-8''${encodeURIComponent("Ünïcode talk.mp4")}`);
    expect(new Uint8Array(await whole.arrayBuffer())).toEqual(data);

    const part = await client.send("source", { headers: { Range: "bytes=30000-" } });
    expect(part.status).toBe(206);
    expect(part.headers.get("Content-Range")).toBe(`bytes 30000-39999/${data.byteLength}`);
    expect(new Uint8Array(await part.arrayBuffer())).toEqual(data.slice(30_000));

    const beyond = await client.send("source", { headers: { Range: "bytes=40000-" } });
    await expectProblem(beyond, 416, "range_not_satisfiable");
    await expectProblem(await client.send("source", { token: "not.a-token" }), 401, "unauthorized");
    // An API key does not open the channel.
    await expectProblem(await client.send("source", { token: account.apiKey }), 401, "unauthorized");
  });

  it("a URL job has no uploaded source: its token does not carry the source scope", async () => {
    const account = await createAccount();
    const client = await startJob(account, engine);
    await expectProblem(await client.send("source"), 401, "unauthorized");
  });
});

describe("the uploaded source is deleted when its job ends (a completed job's once its keeping period is over)", { timeout: 30_000 }, () => {
  async function expectUploadGone(account: TestAccount, id: string): Promise<void> {
    expect(await storedKeys(id)).toEqual([]);
    expect((await uploadInternals(id)).rows).toBe(0);
    expect((await head(account, id)).status).toBe(404);
  }

  it("completed", async () => {
    const account = await createAccount();
    const id = await sourceUploaded(account);
    const client = await startJob(account, engine, { upload_id: id, video_type: "podcast" });
    expect((await client.probe({ duration_seconds: 60, title: "Board meeting, part 2.mp4" })).proceed).toBe(true);
    await client.uploadClip(0);
    await expectAck(await client.complete({ title: "Board meeting, part 2.mp4", source_duration_seconds: 60, clips: [clipReport(0)] }));
    const job = await getJob(account, client.jobId);
    expect(job.status).toBe("completed");
    expect(job.title).toBe("Board meeting, part 2.mp4");
    // Kept for clip edits (the free plan's 7 days), but no longer served to the job's own token (the job is not processing).
    expect(await storedKeys(id)).toHaveLength(1);
    await expectProblem(await client.send("source"), 409, "job_not_active");
    const kept = await env.DB.prepare(`SELECT source_kept_until, completed_at FROM jobs WHERE id = ?`).bind(client.jobId).first<{ source_kept_until: string; completed_at: string }>();
    const days = (Date.parse(kept!.source_kept_until) - Date.parse(kept!.completed_at)) / 86_400_000;
    expect(days).toBeGreaterThan(6.99);
    expect(days).toBeLessThan(7.01);
    // Once the period has passed, the upload's own alarm deletes it.
    await env.DB.prepare(`UPDATE jobs SET source_kept_until = '2000-01-01T00:00:00.000Z' WHERE id = ?`).bind(client.jobId).run();
    await runDurableObjectAlarm(uploadStub(id));
    await expectUploadGone(account, id);
  });

  it("completed, then deleted: the kept source goes with the job", async () => {
    const account = await createAccount("pro");
    const id = await sourceUploaded(account);
    const client = await startJob(account, engine, { upload_id: id, video_type: "podcast" });
    expect((await client.probe({ duration_seconds: 60 })).proceed).toBe(true);
    await client.uploadClip(0);
    await expectAck(await client.complete({ title: "t", source_duration_seconds: 60, clips: [clipReport(0)] }));
    expect(await storedKeys(id)).toHaveLength(1);
    const kept = await env.DB.prepare(`SELECT source_kept_until, completed_at FROM jobs WHERE id = ?`).bind(client.jobId).first<{ source_kept_until: string; completed_at: string }>();
    expect(Math.round((Date.parse(kept!.source_kept_until) - Date.parse(kept!.completed_at)) / 86_400_000)).toBe(30);
    expect((await api(account, `/api/v1/jobs/${client.jobId}`, { method: "DELETE" })).status).toBe(204);
    await expectUploadGone(account, id);
  });

  it("failed", async () => {
    const account = await createAccount();
    const id = await sourceUploaded(account);
    const client = await startJob(account, engine, { upload_id: id, video_type: "podcast" });
    await expectAck(await client.fail({ code: "source_not_video", message: "Not a video." }));
    await expectUploadGone(account, id);
  });

  it("canceled while queued", async () => {
    const account = await createAccount();
    const id = await sourceUploaded(account);
    const jobId = await submitJob(account, { upload_id: id, video_type: "podcast" });
    expect((await api(account, `/api/v1/jobs/${jobId}/cancel`, { method: "POST" })).status).toBe(200);
    expect((await getJob(account, jobId)).status).toBe("canceled");
    await expectUploadGone(account, id);
  });

  it("if the end did not delete it, the upload's own alarm does once the job is over", async () => {
    const account = await createAccount();
    const id = await sourceUploaded(account);
    const jobId = await submitJob(account, { upload_id: id, video_type: "podcast" });
    // End the job behind the lifecycle's back (as if the release call had failed).
    await env.DB.prepare(`UPDATE jobs SET status = 'failed', error_code = 'internal_error', error_message = 'x' WHERE id = ?`).bind(jobId).run();
    await runDurableObjectAlarm(uploadStub(id));
    expect(await storedKeys(id)).toEqual([]);
    expect((await uploadInternals(id)).rows).toBe(0);
  });
});
