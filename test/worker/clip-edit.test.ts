/**
 * Editing a completed job's clip and cutting new ones (docs/editing.md), on
 * the real stack (D1, R2, the jobs queue's consumer, the account's Durable
 * Object, the webhook outbox): only the engine is played by the test, and it
 * follows the edit contract (src/contract/clip-edit.ts): one clip uploaded at
 * the edit's index with the edit's token, then complete with one ClipReport,
 * or fail.
 */
import { createExecutionContext, createMessageBatch, env, getQueueResult, SELF } from "cloudflare:test";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { StartJob } from "#contract";
import { app } from "../../src/app.ts";
import { runSweep } from "../../src/jobs/sweep.ts";
import { handleQueue } from "../../src/queue/consumer.ts";
import type { JobMessage } from "../../src/fleet/job-message.ts";
import { clipReport, EngineClient, expectAck, FakeEngine, waitFor } from "./engine-stub.ts";
import { api, createAccount, expectProblem, type TestAccount } from "./helpers.ts";
import { accountCredits } from "./jobs-helpers.ts";
import { captionedJob, CLIP_SRT, CLIP_VTT, put } from "./speech-helpers.ts";
import { bytesOf, uploadAll } from "./uploads-helpers.ts";
import { createWebhook, FakeReceiver, RECEIVER_ORIGIN } from "./webhooks-helpers.ts";
import { startJob } from "./jobs-helpers.ts";

interface ClipAnswerJson {
  index: number;
  version: number;
  url: string | null;
  thumbnail_url: string | null;
  start_seconds: number;
  end_seconds: number;
  title: string | null;
  captions: { vtt_url: string; srt_url: string } | null;
  edit: { status: string; requested: Record<string, unknown>; error?: { code: string; message: string } } | null;
  words: { index: number; text: string; start_seconds: number; end_seconds: number }[];
}

let engine: FakeEngine;
let receiver: FakeReceiver;

beforeEach(() => {
  // The engine's spy first (it restores the previous test's), then the receiver around it.
  engine = new FakeEngine();
  engine.install();
  receiver = new FakeReceiver();
  receiver.install();
});

afterEach(() => {
  receiver.uninstall();
});

/** A keyed API call handled with a jobs queue that only records, so the test delivers the edit's message itself. */
async function quietApi(account: TestAccount, path: string, init: RequestInit): Promise<Response> {
  const quiet = { ...env, JOBS: { send: async () => undefined, sendBatch: async () => undefined } as unknown as Queue };
  const headers = new Headers(init.headers);
  headers.set("Authorization", `Bearer ${account.apiKey}`);
  if (init.body !== undefined) headers.set("Content-Type", "application/json");
  return app.fetch(new Request(`http://worker.test${path}`, { ...init, headers }), quiet, createExecutionContext());
}

function patchClip(account: TestAccount, jobId: string, index: number, body: unknown): Promise<Response> {
  return quietApi(account, `/api/v1/jobs/${jobId}/clips/${index}`, { method: "PATCH", body: JSON.stringify(body) });
}

function addClip(account: TestAccount, jobId: string, body: unknown): Promise<Response> {
  return quietApi(account, `/api/v1/jobs/${jobId}/clips`, { method: "POST", body: JSON.stringify(body) });
}

async function readClip(account: TestAccount, jobId: string, index: number): Promise<ClipAnswerJson> {
  const res = await api(account, `/api/v1/jobs/${jobId}/clips/${index}`);
  const text = await res.text();
  if (res.status !== 200) throw new Error(`GET clip answered ${res.status}: ${text}`);
  return JSON.parse(text) as ClipAnswerJson;
}

async function accepted(res: Response): Promise<ClipAnswerJson> {
  const text = await res.text();
  if (res.status !== 202) throw new Error(`expected 202, got ${res.status}: ${text}`);
  return JSON.parse(text) as ClipAnswerJson;
}

/** Delivers the job's newest edit's queue message to the consumer, and returns the engine's view of the edit. */
async function dispatchEdit(account: TestAccount, jobId: string): Promise<{ client: EngineClient; start: StartJob & { clip_edit: NonNullable<StartJob["clip_edit"]> } }> {
  const row = await env.DB.prepare(`SELECT id FROM clip_edits WHERE job_id = ? ORDER BY created_at DESC, rowid DESC LIMIT 1`).bind(jobId).first<{ id: string }>();
  const message: JobMessage = { job_id: jobId, account_id: account.accountId, edit_id: row!.id };
  const batch = createMessageBatch<JobMessage>("clipjobs-jobs", [{ id: `msg-${crypto.randomUUID()}`, timestamp: new Date(), attempts: 1, body: message }]);
  const ctx = createExecutionContext();
  await handleQueue(batch, env, ctx);
  await getQueueResult(batch, ctx);
  const start = await waitFor(() => engine.editStarts(jobId).find((s) => s.clip_edit.edit_id === row!.id), `the StartJob of edit ${row!.id}`);
  return { client: EngineClient.from(start), start };
}

/** The engine's side of a successful edit: the clip, its thumbnail and sidecars at the edit's index, then complete. */
async function renderEdit(client: EngineClient, edit: NonNullable<StartJob["clip_edit"]>): Promise<Response> {
  await client.uploadClip(edit.index, 700);
  await expectAck(await put(client, `clips/${edit.index}/captions.vtt`, CLIP_VTT, "text/vtt"));
  await expectAck(await put(client, `clips/${edit.index}/captions.srt`, CLIP_SRT, "application/x-subrip"));
  return client.complete({
    title: "Talk",
    source_duration_seconds: 60,
    clips: [
      clipReport(edit.index, {
        start_seconds: edit.start_seconds,
        end_seconds: edit.end_seconds,
        text: edit.words.map((w) => w.text).join(" ") || null,
        title: edit.title ?? "Chosen",
        sidecars: true,
        captions_burned: true,
        score: 0,
        reasons: ["chosen_by_user"],
      }),
    ],
  });
}

function cdnPath(url: string): string {
  return new URL(url).pathname;
}

describe("PATCH /api/v1/jobs/:job_id/clips/:index", () => {
  it("accepts an edit (202), renders it with the corrected words, publishes version 2 under new URLs, charges and sends clip.updated", async () => {
    const account = await createAccount("free");
    const hook = await createWebhook(account, { events: ["clip.updated", "clip.created"] });
    const jobId = await captionedJob(engine, account);
    const before = await readClip(account, jobId, 0);
    expect(before.version).toBe(1);
    expect(before.edit).toBeNull();
    expect(before.words.map((w) => w.text)).toEqual(["Why", "do", "clips", "matter?", "Because", "people", "<b>scroll</b>"]);
    const oldUrl = before.url!;
    expect((await SELF.fetch(`http://worker.test${cdnPath(oldUrl)}`)).status).toBe(200);
    const creditsBefore = await accountCredits(account.accountId);

    // Extend by 4 s at the end, fix word 2 by index and the word at 3.5 s by time.
    const answer = await accepted(
      await patchClip(account, jobId, 0, { end_seconds: 19.5, words: [{ index: 2, text: "shorts" }, { start_seconds: 3.5, text: "viewers" }] }),
    );
    expect(answer.version).toBe(1);
    expect(answer.edit?.status).toBe("queued");
    const reserved = await accountCredits(account.accountId);
    expect(reserved!.credits_reserved - creditsBefore!.credits_reserved).toBe(1);

    // A second edit of the same clip while this one is pending is refused, and changes nothing.
    await expectProblem(await patchClip(account, jobId, 0, { title: "Again" }), 409, "clip_edit_in_progress");

    const { client, start } = await dispatchEdit(account, jobId);
    expect(start.clip_edit.index).toBe(0);
    expect(start.clip_edit.version).toBe(2);
    expect(start.clip_edit.start_seconds).toBe(0);
    expect(start.clip_edit.end_seconds).toBe(19.5);
    expect(start.clip_edit.words.map((w) => w.text)).toEqual(["Why", "do", "shorts", "matter?", "Because", "viewers", "<b>scroll</b>"]);
    expect(start.clip_edit.words[2]).toMatchObject({ start: 1.5, end: 1.9 });
    expect(start.video_url).toBe("https://videos.example.com/talks/keynote.mp4");
    expect((await readClip(account, jobId, 0)).edit?.status).toBe("rendering");

    // The edit's token opens the edit's routes only; the job's own routes stay closed (the job is completed).
    const jobToken = engine.starts(jobId).find((s) => s.clip_edit === undefined)!.token;
    expect((await client.postJson("progress", { progress: 50, step: "Rendering" }, jobToken)).status).toBe(409);

    await expectAck(await renderEdit(client, start.clip_edit));

    const after = await readClip(account, jobId, 0);
    expect(after.version).toBe(2);
    expect(after.edit).toBeNull();
    expect(after.end_seconds).toBe(19.5);
    expect(after.url).not.toBe(oldUrl);
    expect(after.captions?.vtt_url).not.toBe(before.captions?.vtt_url);
    expect(after.words.map((w) => w.text)).toContain("shorts");
    expect((await SELF.fetch(`http://worker.test${cdnPath(after.url!)}`)).status).toBe(200);
    expect((await SELF.fetch(`http://worker.test${cdnPath(oldUrl)}`)).status).toBe(404);

    // The job shows the new version at once (its cached view was dropped).
    const job = await (await api(account, `/api/v1/jobs/${jobId}`)).json<{ clips: { version: number; url: string }[]; credits_charged: number }>();
    expect(job.clips[0]).toMatchObject({ version: 2, url: after.url });

    const charged = await accountCredits(account.accountId);
    expect(charged!.credits_reserved).toBe(creditsBefore!.credits_reserved);
    expect(charged!.credits_used - creditsBefore!.credits_used).toBe(1);

    // Corrections persist: a later edit of the same clip keeps them.
    await accepted(await patchClip(account, jobId, 0, { title: "A new title" }));
    const second = await dispatchEdit(account, jobId);
    expect(second.start.clip_edit.version).toBe(3);
    expect(second.start.clip_edit.words.map((w) => w.text)).toContain("viewers");
    expect(second.start.clip_edit.title).toBe("A new title");
    await expectAck(await second.client.fail({ code: "internal_error", message: "ffmpeg exited with 1" }));

    // Failed: the published version stays, the edit says why, the reservation came back.
    const failed = await readClip(account, jobId, 0);
    expect(failed.version).toBe(2);
    expect(failed.url).toBe(after.url);
    expect(failed.edit).toMatchObject({ status: "failed", error: { code: "internal_error" } });
    const refunded = await accountCredits(account.accountId);
    expect(refunded!.credits_reserved).toBe(creditsBefore!.credits_reserved);
    expect(refunded!.credits_used).toBe(charged!.credits_used);

    const delivered = await waitFor(() => receiver.requests.find((r) => r.url === hook.url) ?? undefined, "the clip.updated delivery");
    const body = JSON.parse(delivered.body) as { type: string; data: Record<string, unknown> };
    expect(body.type).toBe("clip.updated");
    expect(body.data).toMatchObject({ job_id: jobId, index: 0, version: 2, url: after.url, start_seconds: 0, end_seconds: 19.5 });
  });

  it("answers each problem and changes nothing", async () => {
    const account = await createAccount("free");
    const jobId = await captionedJob(engine, account);
    await expectProblem(await patchClip(account, jobId, 0, { start_seconds: 10, end_seconds: 5 }), 400, "invalid_clip_span");
    await expectProblem(await patchClip(account, jobId, 0, { end_seconds: 75 }), 400, "invalid_clip_span");
    await expectProblem(await patchClip(account, jobId, 0, { end_seconds: 5 }), 400, "invalid_clip_span");
    await expectProblem(await patchClip(account, jobId, 0, { words: [{ index: 7, text: "x" }] }), 400, "invalid_word");
    await expectProblem(await patchClip(account, jobId, 0, { words: [{ start_seconds: 2.2, text: "x" }] }), 400, "invalid_word");
    await expectProblem(await patchClip(account, jobId, 0, {}), 400, "invalid_request");
    await expectProblem(await patchClip(account, jobId, 5, { title: "x" }), 404, "not_found");
    await expectProblem(await patchClip(account, "job_doesnotexist000000", 0, { title: "x" }), 404, "not_found");
    const other = await createAccount("free");
    await expectProblem(await patchClip(other, jobId, 0, { title: "x" }), 404, "not_found");
    const edits = await env.DB.prepare(`SELECT COUNT(*) AS n FROM clip_edits WHERE job_id = ?`).bind(jobId).first<{ n: number }>();
    expect(edits!.n).toBe(0);
    expect((await accountCredits(account.accountId))!.credits_reserved).toBe(0);

    // 402: the account cannot cover the edit.
    await env.DB.prepare(`UPDATE accounts SET credits_used = 60 WHERE id = ?`).bind(account.accountId).run();
    await expectProblem(await patchClip(account, jobId, 0, { title: "x" }), 402, "insufficient_credits");
    await env.DB.prepare(`UPDATE accounts SET credits_used = 0 WHERE id = ?`).bind(account.accountId).run();

    // 409 active_job_limit: the free plan's one active job is an edit of clip 0; an edit of clip 1 waits.
    await accepted(await patchClip(account, jobId, 0, { title: "x" }));
    await expectProblem(await patchClip(account, jobId, 1, { title: "y" }), 409, "active_job_limit");
  });

  it("refuses an edit of a job that is not completed (409 job_not_completed)", async () => {
    const account = await createAccount("unmetered");
    const res = await api(account, "/api/v1/jobs", { method: "POST", body: JSON.stringify({ video_url: "https://videos.example.com/a.mp4", video_type: "podcast" }) });
    const { job_id: jobId } = await res.json<{ job_id: string }>();
    await expectProblem(await patchClip(account, jobId, 0, { title: "x" }), 409, "job_not_completed");
  });

  it("answers 410 source_expired for an upload job whose upload is gone", async () => {
    const account = await createAccount("free");
    const jobId = await captionedJob(engine, account);
    await env.DB.prepare(`UPDATE jobs SET upload_id = 'upl_gone0000000000000000' WHERE id = ?`).bind(jobId).run();
    await expectProblem(await patchClip(account, jobId, 0, { title: "x" }), 410, "source_expired");
  });
});

describe("an upload job's edit", () => {
  it("renders from the kept upload: the edit's token reads the source, the job's does not", async () => {
    const account = await createAccount("free");
    const data = bytesOf(30_000, 4);
    const uploadId = await uploadAll(account, data, 16_384, "talk.mp4");
    const job = await startJob(account, engine, { upload_id: uploadId, video_type: "podcast" });
    expect((await job.probe({ duration_seconds: 60 })).proceed).toBe(true);
    await job.uploadClip(0);
    await expectAck(await job.complete({ title: "talk.mp4", source_duration_seconds: 60, clips: [clipReport(0)] }));
    await accepted(await patchClip(account, job.jobId, 0, { start_seconds: 2, end_seconds: 20 }));
    const { client, start } = await dispatchEdit(account, job.jobId);
    expect(start.source).toBe("upload");
    const source = await client.send("source");
    expect(source.status).toBe(200);
    expect(new Uint8Array(await source.arrayBuffer())).toEqual(data);
    expect((await client.send("source", { token: job.token })).status).toBe(409);
    await expectAck(await renderEdit(client, start.clip_edit));
    // Past the keeping period, an edit is refused and nothing is reserved.
    await env.DB.prepare(`UPDATE jobs SET source_kept_until = '2000-01-01T00:00:00.000Z' WHERE id = ?`).bind(job.jobId).run();
    const reserved = (await accountCredits(account.accountId))!.credits_reserved;
    await expectProblem(await patchClip(account, job.jobId, 0, { title: "Late" }), 410, "source_expired");
    expect((await accountCredits(account.accountId))!.credits_reserved).toBe(reserved);
  });
});

describe("POST /api/v1/jobs/:job_id/clips", () => {
  it("cuts a new clip at the next index, snapped when asked, and sends clip.created", async () => {
    const account = await createAccount("unmetered");
    const hook = await createWebhook(account, { events: ["clip.created"] });
    const jobId = await captionedJob(engine, account);
    const pending = await accepted(await addClip(account, jobId, { start_seconds: 2.5, end_seconds: 20, snap: true, title: "Mine" }));
    expect(pending).toMatchObject({ index: 2, version: 0, url: null, start_seconds: 3, edit: { status: "queued" } });
    expect((await readClip(account, jobId, 2)).version).toBe(0);
    const { client, start } = await dispatchEdit(account, jobId);
    expect(start.clip_edit).toMatchObject({ index: 2, version: 1, start_seconds: 3, end_seconds: 20, title: "Mine" });
    expect(start.clip_edit.words.map((w) => w.text)).toEqual(["Because", "people", "<b>scroll</b>"]);
    await expectAck(await renderEdit(client, start.clip_edit));
    const added = await readClip(account, jobId, 2);
    expect(added).toMatchObject({ index: 2, version: 1, start_seconds: 3, end_seconds: 20, edit: null });
    expect((await SELF.fetch(`http://worker.test${cdnPath(added.url!)}`)).status).toBe(200);
    const job = await (await api(account, `/api/v1/jobs/${jobId}`)).json<{ clips_count: number }>();
    expect(job.clips_count).toBe(3);
    const delivered = await waitFor(() => receiver.requests.find((r) => r.url === hook.url) ?? undefined, "the clip.created delivery");
    expect(JSON.parse(delivered.body)).toMatchObject({ type: "clip.created", data: { job_id: jobId, index: 2, version: 1 } });
    expect(RECEIVER_ORIGIN).toBe(new URL(hook.url).origin);
  });

  it("sends the parts of the span outside the job's time_range to be heard, and opens the transcribe route to the edit", async () => {
    const account = await createAccount("free");
    const jobId = await captionedJob(engine, account);
    // The job ran on seconds 0-20 of its source only.
    await env.DB.prepare("UPDATE jobs SET time_range_start = 0, time_range_end = 20 WHERE id = ?").bind(jobId).run();
    await accepted(await addClip(account, jobId, { start_seconds: 10, end_seconds: 40 }));
    const { client, start } = await dispatchEdit(account, jobId);
    expect(start.clip_edit.transcribe).toEqual([{ start: 20, end: 40 }]);
    // The test's stack has no speech-to-text: the edit's token reaches the route and is told so (not 404).
    const wav = new Uint8Array(44 + 32_000);
    const view = new DataView(wav.buffer);
    "RIFF".split("").forEach((ch, i) => view.setUint8(i, ch.charCodeAt(0)));
    view.setUint32(4, 36 + 32_000, true);
    "WAVEfmt ".split("").forEach((ch, i) => view.setUint8(8 + i, ch.charCodeAt(0)));
    view.setUint32(16, 16, true);
    view.setUint16(20, 1, true);
    view.setUint16(22, 1, true);
    view.setUint32(24, 16_000, true);
    view.setUint32(28, 32_000, true);
    view.setUint16(32, 2, true);
    view.setUint16(34, 16, true);
    "data".split("").forEach((ch, i) => view.setUint8(36 + i, ch.charCodeAt(0)));
    view.setUint32(40, 32_000, true);
    const res = await client.send("transcribe", { method: "POST", body: wav, headers: { "Content-Type": "audio/wav", "Chunk-Start-Seconds": "20" } });
    expect(res.status, await res.clone().text()).toBe(503);
    expect(((await res.json()) as { code: string }).code).toBe("transcription_unavailable");
  });

  it("refuses a 21st clip (409 clip_limit)", async () => {
    const account = await createAccount("unmetered");
    const jobId = await captionedJob(engine, account);
    await env.DB.prepare(`UPDATE clips SET idx = 19 WHERE job_id = ? AND idx = 1`).bind(jobId).run();
    await expectProblem(await addClip(account, jobId, { start_seconds: 20, end_seconds: 40 }), 409, "clip_limit");
  });
});

describe("the sweep", () => {
  it("fails an edit stuck past the edit timeout, gives its credits back and frees the account's slot", async () => {
    const account = await createAccount("free");
    const jobId = await captionedJob(engine, account);
    const creditsBefore = await accountCredits(account.accountId);
    await accepted(await patchClip(account, jobId, 0, { end_seconds: 30 }));
    await dispatchEdit(account, jobId);
    const report = await runSweep(env, Date.now() + 31 * 60_000);
    expect(report.failedEdits).toBeGreaterThanOrEqual(1);
    const clip = await readClip(account, jobId, 0);
    expect(clip.version).toBe(1);
    expect(clip.edit).toMatchObject({ status: "failed", error: { code: "processing_timeout" } });
    expect((await accountCredits(account.accountId))!.credits_reserved).toBe(creditsBefore!.credits_reserved);
    // The slot is free again: another edit is accepted on the free plan's one active job.
    await accepted(await patchClip(account, jobId, 1, { title: "Next" }));
  });
});
