/**
 * The job's life through the queue consumer and the engine's callbacks, with
 * credits checked at each step (reserve on probe, charge on completion,
 * release on failure and cancel).
 */
import {
  createExecutionContext,
  createMessageBatch,
  env,
  getQueueResult,
  runDurableObjectAlarm,
  runInDurableObject,
  SELF,
} from "cloudflare:test";
import { beforeEach, describe, expect, it } from "vitest";
import { accountState } from "../../src/account/stub.ts";
import { app } from "../../src/app.ts";
import { DEFAULT_CLIP_CONFIG, MAX_CLIP_UPLOAD_BYTES } from "#contract";
import { startRetryDelaySeconds } from "../../src/fleet/fleet-scheduler.ts";
import { handleQueue } from "../../src/queue/consumer.ts";
import type { JobMessage } from "../../src/fleet/job-message.ts";
import { clipReport, expectAck, FakeEngine, waitFor } from "./engine-stub.ts";
import { deliver as deliverTo, recordingQueue } from "./fleet/harness.ts";
import { api, createAccount, expectProblem } from "./helpers.ts";
import { accountCredits, deliver, getJob, getUsage, startJob, submitJob, submitUndelivered, VIDEO_URL } from "./jobs-helpers.ts";
import { added, keyOf, publicKeys, PUBLISHED_URL, stagedKeys } from "./storage-helpers.ts";

let engine: FakeEngine;
beforeEach(() => {
  engine = new FakeEngine();
  engine.install();
});


/** What of the job is left in either bucket under keys derived from its id (staged uploads, transcript, the older layout's keys). */
async function objectKeys(jobId: string): Promise<string[]> {
  const legacy = await env.CLIPS.list({ prefix: `clips/${jobId}/` });
  const transcript = await env.UPLOADS.head(`transcripts/${jobId}.json`);
  return [...(await stagedKeys(jobId)), ...legacy.objects.map((o) => o.key), ...(transcript ? [transcript.key] : [])].sort();
}

async function activeSlots(accountId: string): Promise<string[]> {
  return accountState(env, accountId).activeJobs();
}

describe("queue consumer", () => {
  it("moves the job to processing and sends StartJob with a job token, config and limits", async () => {
    const account = await createAccount();
    // Delivered by hand only: the delivery checked below is the one that starts the job, not the queue's own.
    const jobId = await submitUndelivered(account, { video_url: VIDEO_URL, video_type: "lecture" });
    const result = await deliver(account, jobId);
    expect(result.explicitAcks).toHaveLength(1);
    expect(result.retryMessages).toHaveLength(0);
    const start = await waitFor(() => engine.starts(jobId).at(-1), "the StartJob");
    expect(start.video_url).toBe(VIDEO_URL);
    expect(start.video_type).toBe("lecture");
    // Signed with the Worker's Ed25519 key; the callback origin and private-host rule are the engine's own settings.
    expect(engine.requests.filter((r) => r.path === "/jobs").every((r) => r.signed)).toBe(true);
    expect(start).not.toHaveProperty("callback_base");
    // Every member of the contract's configuration, at its default (brand and language ones included).
    expect(start.config).toEqual(DEFAULT_CLIP_CONFIG);
    expect(start.config).toMatchObject({
      aspect_ratio: "9:16",
      resolution: 1080,
      min_clip_seconds: 15,
      max_clip_seconds: 60,
      max_clips: 5,
      reframe: "auto",
      layout: "single",
      captions: "both",
      caption_style: "bold",
      caption_position: "bottom",
      prompt: null,
      remove_silence: "off",
      remove_fillers: false,
    });
    expect(start.limits).toEqual({
      max_source_bytes: 4294967296,
      max_source_seconds: 10800,
      download_timeout_seconds: 1800,
    });
    expect(start.token.length).toBeGreaterThan(20);
    const job = await getJob(account, jobId);
    expect(job.status).toBe("processing");
    expect(job.progress).toBe(0);
  });

  it("retries on one dispatch chain, with growing delays, while the engine is unreachable or failing", async () => {
    const account = await createAccount();
    const jobId = await submitUndelivered(account);
    const queue = recordingQueue();
    const testEnv: Env = { ...env, JOBS: queue.queue };
    engine.mode = "down";
    const first = await deliverTo(testEnv, { job_id: jobId, account_id: account.accountId });
    // Not the queue's retry (its count would run out): the fleet's chain, with the fleet's delay.
    expect(first.explicitAcks).toHaveLength(1);
    expect(first.retryMessages).toHaveLength(0);
    expect(queue.sent).toEqual([{ body: { job_id: jobId, account_id: account.accountId, dispatch: 1 }, at: 15 }]);
    engine.mode = "broken";
    const second = await deliverTo(testEnv, queue.sent.pop()!.body);
    expect(second.explicitAcks).toHaveLength(1);
    expect(queue.sent).toEqual([{ body: { job_id: jobId, account_id: account.accountId, dispatch: 2 }, at: 30 }]);
    // A job is processing only once an engine accepted it.
    expect((await getJob(account, jobId)).status).toBe("queued");
    // A message of the chain's past is stale: dropped without touching the engine.
    const starts = engine.starts(jobId).length;
    await deliverTo(testEnv, { job_id: jobId, account_id: account.accountId, dispatch: 1 });
    expect(engine.starts(jobId)).toHaveLength(starts);
    engine.mode = "up";
    const third = await deliverTo(testEnv, queue.sent.pop()!.body);
    expect(third.explicitAcks).toHaveLength(1);
    expect(engine.starts(jobId).length).toBe(starts + 1);
    expect((await getJob(account, jobId)).status).toBe("processing");
  });

  it("treats a busy engine (503) as no capacity, not a failure: the job keeps its grant and tries again shortly", async () => {
    const account = await createAccount();
    engine.mode = "busy";
    const jobId = await submitUndelivered(account);
    const queue = recordingQueue();
    const result = await deliverTo({ ...env, JOBS: queue.queue }, { job_id: jobId, account_id: account.accountId });
    expect(result.explicitAcks).toHaveLength(1);
    expect(result.retryMessages).toHaveLength(0);
    expect((await getJob(account, jobId)).status).toBe("queued");
    expect(queue.sent).toEqual([{ body: { job_id: jobId, account_id: account.accountId, dispatch: 1 }, at: startRetryDelaySeconds(1) }]);
    const fleet = env.FLEET.get(env.FLEET.idFromName("fleet"));
    expect((await fleet.snapshot()).holding).toContain(jobId);
    engine.mode = "up";
  });

  it("fails the job with internal_error and frees the slot once its start budget is spent", async () => {
    const account = await createAccount();
    engine.mode = "down";
    const jobId = await submitUndelivered(account);
    // A budget of 0 s: the first failure already spends it.
    const last = await deliverTo({ ...env, ENGINE_START_BUDGET_SECONDS: "0.001", JOBS: recordingQueue().queue }, { job_id: jobId, account_id: account.accountId });
    expect(last.explicitAcks).toHaveLength(1);
    expect(last.retryMessages).toHaveLength(0);
    const job = await getJob(account, jobId);
    expect(job.status).toBe("failed");
    expect(job.error?.code).toBe("internal_error");
    expect(await activeSlots(account.accountId)).not.toContain(jobId);
    engine.mode = "up";
    // The account can submit again at once.
    await submitJob(account);
  });

  it("acknowledges deliveries of finished or canceled jobs without touching the engine", async () => {
    const account = await createAccount();
    // Delivered by hand only: the queue's own delivery would race the cancel and could start the job after `before`.
    const jobId = await submitUndelivered(account);
    const cancel = await api(account, `/api/v1/jobs/${jobId}/cancel`, { method: "POST" });
    expect(cancel.status).toBe(200);
    const before = engine.starts(jobId).length;
    const result = await deliver(account, jobId);
    expect(result.explicitAcks).toHaveLength(1);
    expect(engine.starts(jobId).length).toBe(before);
  });

  it("charges a job delivered twice only once", async () => {
    const account = await createAccount();
    const client = await startJob(account, engine);
    // Duplicate delivery while processing: acknowledged, the engine is not touched again.
    const again = await deliver(account, client.jobId);
    expect(again.explicitAcks).toHaveLength(1);
    expect(engine.starts(client.jobId)).toHaveLength(1);
    const ack1 = await client.probe({ duration_seconds: 150 });
    // The engine may probe again after a restart; the reservation is not repeated.
    const ack2 = await client.probe({ duration_seconds: 150 });
    expect(ack1).toEqual({ proceed: true, credits_reserved: 3 });
    expect(ack2).toEqual({ proceed: true, credits_reserved: 3 });
    expect((await accountCredits(account.accountId))?.credits_reserved).toBe(3);
    await client.uploadClip(0);
    await expectAck(await client.complete({ title: "Talk", source_duration_seconds: 150, clips: [clipReport(0)] }));
    // A late duplicate delivery and a repeated completion (its first answer lost) change nothing; the repeat is answered as the first was.
    expect((await deliver(account, client.jobId)).explicitAcks).toHaveLength(1);
    await expectAck(await client.complete({ title: "Talk", source_duration_seconds: 150, clips: [clipReport(0)] }));
    expect(await accountCredits(account.accountId)).toMatchObject({ credits_used: 3, credits_reserved: 0 });
    expect((await getUsage(account)).credits_remaining).toBe(57);
  });
});

describe("engine callbacks", () => {
  it("runs the whole flow: progress, probe reserve, uploads, complete charges", async () => {
    const account = await createAccount();
    const client = await startJob(account, engine);

    await expectAck(await client.progress({ progress: 10, step: "Downloading video" }));
    let job = await getJob(account, client.jobId);
    expect(job).toMatchObject({ status: "processing", progress: 10, step: "Downloading video" });

    const ack = await client.probe({ duration_seconds: 125.2, title: "Keynote" });
    expect(ack).toEqual({ proceed: true, credits_reserved: 3 });
    expect((await getUsage(account)).credits_remaining).toBe(57);
    expect(await accountCredits(account.accountId)).toMatchObject({ credits_used: 0, credits_reserved: 3 });

    // Progress never goes backwards.
    await expectAck(await client.progress({ progress: 40, step: "Analyzing video" }));
    await expectAck(await client.progress({ progress: 30, step: "Rendering clip 1 of 2" }));
    job = await getJob(account, client.jobId);
    expect(job.progress).toBe(40);
    expect(job.step).toBe("Rendering clip 1 of 2");
    expect(job.source_duration_seconds).toBe(125.2);

    const publicBefore = await publicKeys();
    const first = await client.uploadClip(0, 4096);
    await client.uploadClip(1, 1024);
    // A retried upload overwrites the same key; uploads wait in the private bucket, nothing is public yet.
    await client.uploadClip(1, 3000);
    expect(await stagedKeys(client.jobId)).toEqual([
      `staging/${client.jobId}/0.jpg`,
      `staging/${client.jobId}/0.mp4`,
      `staging/${client.jobId}/1.jpg`,
      `staging/${client.jobId}/1.mp4`,
    ]);
    expect(added(publicBefore, await publicKeys())).toEqual([]);
    // A clip waits as an incomplete upload (src/jobs/clip-staging.ts); its marker names the retry's upload.
    expect((await env.UPLOADS.head(`staging/${client.jobId}/1.mp4`))?.customMetadata?.size).toBe("3000");

    await expectAck(
      await client.complete({
        title: "Keynote",
        source_duration_seconds: 125.2,
        clips: [clipReport(1, { score: 0.7 }), clipReport(0, { score: 0.95, reframe: "faces", faces_count: 2 })],
      }),
    );
    job = await getJob(account, client.jobId);
    expect(job.status).toBe("completed");
    expect(job.progress).toBeUndefined();
    expect(job.step).toBeUndefined();
    expect(job.title).toBe("Keynote");
    expect(job.clips_count).toBe(2);
    // Published at completion, each object under a key of its own; the staged copies are gone.
    expect(job.clip_urls).toEqual(job.clips?.map((clip) => clip.url));
    const urls = job.clips!.flatMap((clip) => [clip.url, clip.thumbnail_url]);
    for (const url of urls) expect(url).toMatch(PUBLISHED_URL);
    expect(new Set(urls.map((url) => url.split("/").at(-2))).size).toBe(4);
    expect(added(publicBefore, await publicKeys())).toEqual(urls.map(keyOf).sort());
    expect(await stagedKeys(client.jobId)).toEqual([]);
    const stored = await env.CLIPS.get(keyOf(job.clips![0]!.url));
    expect(stored?.httpMetadata?.contentType).toBe("video/mp4");
    expect(new Uint8Array(await stored!.arrayBuffer())).toEqual(first.clip);
    // What the R2 custom domain's edge honours: short and revalidated, so a DELETE takes effect (docs/architecture.md "Where a job's objects live").
    expect(stored?.httpMetadata?.cacheControl).toBe("public, max-age=300, must-revalidate");
    expect((await env.CLIPS.head(keyOf(job.clips![1]!.url)))?.size).toBe(3000);
    expect(job.clips?.[0]).toEqual({
      url: job.clip_urls![0],
      thumbnail_url: job.clips![0]!.thumbnail_url,
      start_seconds: 0,
      end_seconds: 15.5,
      duration_seconds: 15.5,
      score: 0.95,
      reasons: ["speech_density", "loudness_peak"],
      width: 1080,
      height: 1920,
      reframe: "faces",
      faces_count: 2,
      text: null,
      title: null,
      captions: null,
      captions_burned: false,
      prompt_match: null,
      removed: [],
      zooms: [],
      // An engine that judged nothing: signals.
      scores: null,
      judged_by: "signals",
      description: null,
      hashtags: [],
      version: 1,
    });
    expect(job.clips?.[1]).toMatchObject({ reframe: "center", faces_count: 0 });
    expect(job).toMatchObject({ judgement: null, chapters: [] });
    expect(job.credits_charged).toBe(3);
    expect(job.completed_at).toBeTruthy();
    expect(job.error).toBeUndefined();

    expect(await accountCredits(account.accountId)).toMatchObject({ credits_used: 3, credits_reserved: 0 });
    expect(await getUsage(account)).toMatchObject({ credits_remaining: 57, credits_total: 60, plan: "free" });
    expect(await activeSlots(account.accountId)).toEqual([]);
    // The clip is served where the job says it is.
    const served = await SELF.fetch(job.clip_urls![0]!);
    expect(served.status).toBe(200);
    expect(new Uint8Array(await served.arrayBuffer())).toEqual(first.clip);
  });

  it("refuses completion while a reported clip was never uploaded", async () => {
    const account = await createAccount();
    const client = await startJob(account, engine);
    await client.probe({ duration_seconds: 30 });
    await client.uploadClip(0);
    const problem = await expectProblem(
      await client.complete({ title: "x", source_duration_seconds: 30, clips: [clipReport(0), clipReport(1)] }),
      400,
      "invalid_request",
    );
    expect(problem.detail).toContain(`staging/${client.jobId}/1.mp4`);
    expect((await getJob(account, client.jobId)).status).toBe("processing");
  });

  it("validates reports against the contract", async () => {
    const account = await createAccount();
    const client = await startJob(account, engine);
    await expectProblem(await client.progress({ progress: 100, step: "Done" }), 400, "invalid_request");
    await expectProblem(await client.postJson("fail", { code: "made_up", message: "x" }), 400, "invalid_request");
    await expectProblem(await client.upload("clips/20", new Uint8Array(10), "video/mp4"), 400, "invalid_request");
  });

  it("refuses the probe and fails the job with insufficient_credits when credits run out", async () => {
    const account = await createAccount();
    await env.DB.prepare(`UPDATE accounts SET credits_used = 58 WHERE id = ?`).bind(account.accountId).run();
    const client = await startJob(account, engine);
    const ack = await client.probe({ duration_seconds: 181 });
    expect(ack.proceed).toBe(false);
    expect(ack.credits_reserved).toBe(0);
    expect(ack.error?.code).toBe("insufficient_credits");
    const job = await getJob(account, client.jobId);
    expect(job.status).toBe("failed");
    expect(job.error?.code).toBe("insufficient_credits");
    expect(await accountCredits(account.accountId)).toMatchObject({ credits_used: 58, credits_reserved: 0 });
    expect(await activeSlots(account.accountId)).toEqual([]);
    // Anything the engine still sends is refused.
    await expectProblem(await client.progress({ progress: 5, step: "Downloading video" }), 409, "job_not_active");
  });

  it("fail releases the reservation, deletes partial clips and frees the slot", async () => {
    const account = await createAccount();
    const client = await startJob(account, engine);
    await client.probe({ duration_seconds: 600 });
    expect((await getUsage(account)).credits_remaining).toBe(50);
    await client.uploadClip(0);
    await expectAck(await client.fail({ code: "no_clips_found", message: "Nothing stood out." }));
    const job = await getJob(account, client.jobId);
    expect(job.status).toBe("failed");
    expect(job.error).toEqual({ code: "no_clips_found", message: "Nothing stood out." });
    expect(job.credits_charged).toBe(0);
    expect(job.progress).toBeUndefined();
    expect((await getUsage(account)).credits_remaining).toBe(60);
    expect(await objectKeys(client.jobId)).toEqual([]);
    expect(await activeSlots(account.accountId)).toEqual([]);
  });

  it("cancel deletes partial clips, releases credits, stops the engine; later callbacks get 409", async () => {
    const account = await createAccount();
    const client = await startJob(account, engine);
    await client.probe({ duration_seconds: 61 });
    expect((await getUsage(account)).credits_remaining).toBe(58);
    await client.uploadClip(0);
    const res = await api(account, `/api/v1/jobs/${client.jobId}/cancel`, { method: "POST" });
    expect(res.status).toBe(200);
    const body = await res.json<{ status: string }>();
    expect(body.status).toBe("canceled");
    expect(await objectKeys(client.jobId)).toEqual([]);
    expect((await getUsage(account)).credits_remaining).toBe(60);
    expect(await activeSlots(account.accountId)).toEqual([]);
    const cancels = engine.cancels(client.jobId);
    expect(cancels).toHaveLength(1);
    expect(cancels[0]!.signed).toBe(true);

    await expectProblem(await client.progress({ progress: 50, step: "Rendering clip 1 of 2" }), 409, "job_not_active");
    await expectProblem(await client.upload("clips/1", new Uint8Array(100), "video/mp4"), 409, "job_not_active");
    await expectProblem(
      await client.complete({ title: "x", source_duration_seconds: 61, clips: [clipReport(0)] }),
      409,
      "job_not_active",
    );
    expect(await objectKeys(client.jobId)).toEqual([]);
    expect((await getJob(account, client.jobId)).status).toBe("canceled");
    expect((await getUsage(account)).credits_remaining).toBe(60);
  });

  it("the watchdog fails a silent job with processing_timeout, frees the slot and releases credits", async () => {
    const account = await createAccount();
    const client = await startJob(account, engine);
    await client.probe({ duration_seconds: 120 });
    await client.uploadClip(0);
    expect((await getUsage(account)).credits_remaining).toBe(58);
    const stub = accountState(env, account.accountId);
    // Silence that has already lasted longer than allowed: the last report and the deadline are both past.
    await runInDurableObject(stub, (_instance, state) => {
      state.storage.sql.exec(`UPDATE live_jobs SET last_report_ms = ? WHERE job_id = ?`, Date.now() - 3_600_000, client.jobId);
    });
    await stub.touchWatchdog(client.jobId, 0);
    await runDurableObjectAlarm(stub);
    const job = await waitFor(async () => {
      const current = await getJob(account, client.jobId);
      return current.status === "failed" ? current : undefined;
    }, "the watchdog to fail the job");
    expect(job.error?.code).toBe("processing_timeout");
    expect((await getUsage(account)).credits_remaining).toBe(60);
    expect(await activeSlots(account.accountId)).toEqual([]);
    expect(await objectKeys(client.jobId)).toEqual([]);
    expect(engine.cancels(client.jobId).length).toBeGreaterThanOrEqual(1);
    await expectProblem(await client.progress({ progress: 60, step: "Uploading clips" }), 409, "job_not_active");
  });

  it("the watchdog spares a job whose engine reported after its deadline was set", async () => {
    const account = await createAccount();
    const client = await startJob(account, engine);
    const stub = accountState(env, account.accountId);
    await stub.touchWatchdog(client.jobId, 0);
    // The deadline passed, but the live state shows a report within the silence timeout.
    await runDurableObjectAlarm(stub);
    expect((await getJob(account, client.jobId)).status).toBe("processing");
    expect(await stub.watchdogDeadline(client.jobId)).toBeGreaterThan(Date.now());
    await expectAck(await client.progress({ progress: 30, step: "Analysing" }));
  });

  it("refuses uploads over the size cap or without a length, before storing anything", async () => {
    const account = await createAccount();
    const client = await startJob(account, engine);
    const token = engine.starts(client.jobId).at(-1)!.token;
    const put = (headers: Record<string, string>, body: BodyInit) =>
      app.fetch(
        new Request(client.url("clips/0"), { method: "PUT", headers: { Authorization: `Bearer ${token}`, ...headers }, body }),
        env,
        createExecutionContext(),
      );
    await expectProblem(
      await put({ "Content-Type": "video/mp4", "Content-Length": String(MAX_CLIP_UPLOAD_BYTES + 1) }, new Uint8Array(16)),
      413,
      "payload_too_large",
    );
    const unsized = new ReadableStream<Uint8Array>({
      start(controller) {
        controller.enqueue(new Uint8Array(16));
        controller.close();
      },
    });
    await expectProblem(await put({ "Content-Type": "video/mp4" }, unsized), 400, "invalid_request");
    expect(await objectKeys(client.jobId)).toEqual([]);
  });

  it("charges by the reported duration when the engine completes without a probe", async () => {
    const account = await createAccount();
    const client = await startJob(account, engine);
    await client.uploadClip(0);
    await expectAck(await client.complete({ title: "Short", source_duration_seconds: 59, clips: [clipReport(0)] }));
    expect((await getJob(account, client.jobId)).credits_charged).toBe(1);
    expect(await accountCredits(account.accountId)).toMatchObject({ credits_used: 1, credits_reserved: 0 });
  });

  it("a completion without a probe is checked against the balance, as a reservation is", async () => {
    const account = await createAccount();
    const client = await startJob(account, engine);
    await client.uploadClip(0);
    // The account spends its 60 credits elsewhere while the job runs.
    await env.DB.prepare(`UPDATE accounts SET credits_used = 60 WHERE id = ?`).bind(account.accountId).run();
    await expectProblem(
      await client.complete({ title: "Long", source_duration_seconds: 125, clips: [clipReport(0)] }),
      409,
      "job_not_active",
    );
    const job = await getJob(account, client.jobId);
    expect(job.status).toBe("failed");
    expect(job.error?.code).toBe("insufficient_credits");
    expect(await accountCredits(account.accountId)).toMatchObject({ credits_used: 60, credits_reserved: 0 });
    expect(await objectKeys(client.jobId)).toEqual([]);
    expect(await activeSlots(account.accountId)).toEqual([]);
  });

  it("settles a cancel racing a completion and a fail to exactly one end state", async () => {
    for (let round = 0; round < 3; round++) {
      const account = await createAccount();
      const client = await startJob(account, engine);
      await client.probe({ duration_seconds: 90 });
      await client.uploadClip(0);
      const publicBefore = await publicKeys();
      const [canceled, completed, failed] = await Promise.all([
        api(account, `/api/v1/jobs/${client.jobId}/cancel`, { method: "POST" }),
        client.complete({ title: "Race", source_duration_seconds: 90, clips: [clipReport(0)] }),
        client.fail({ code: "internal_error", message: "engine crashed" }),
      ]);
      const winners = [canceled.status, completed.status, failed.status].filter((status) => status === 200);
      await Promise.all([canceled.text(), completed.text(), failed.text()]);
      expect(winners).toHaveLength(1);
      const job = await getJob(account, client.jobId);
      const credits = await accountCredits(account.accountId);
      expect(await objectKeys(client.jobId)).toEqual([]);
      if (job.status === "completed") {
        expect(completed.status).toBe(200);
        expect(credits).toMatchObject({ credits_used: 2, credits_reserved: 0 });
        expect(added(publicBefore, await publicKeys())).toEqual([job.clips![0]!.url, job.clips![0]!.thumbnail_url].map(keyOf).sort());
      } else {
        expect(["canceled", "failed"]).toContain(job.status);
        expect(credits).toMatchObject({ credits_used: 0, credits_reserved: 0 });
        // A completion that lost the race deleted what it had published.
        expect(added(publicBefore, await publicKeys())).toEqual([]);
      }
      expect(await activeSlots(account.accountId)).toEqual([]);
    }
  });
});
