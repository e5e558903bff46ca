/**
 * Capacity, lifecycle and recovery paths of the fleet, one behaviour each,
 * with the real queue consumer, Durable Objects and D1. Engines are the
 * FakeEngine (ENGINE_URL) or the Container stand-in where the binding's
 * behaviour matters (its refusals, start times and exits, in simulated time).
 */
import { createExecutionContext, createMessageBatch, env, getQueueResult, runDurableObjectAlarm, runInDurableObject } from "cloudflare:test";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { AccountState } from "../../src/jobs/account-state.ts";
import { accountState } from "../../src/account/stub.ts";
import { app } from "../../src/app.ts";
import { fleetScheduler } from "../../src/fleet/stub.ts";
import { fleetTime } from "../../src/fleet/time.ts";
import { expireOverdueJob, MAX_ENGINE_RESTARTS } from "../../src/jobs/lifecycle.ts";
import { handleDeadLetters } from "../../src/queue/dead-letter.ts";
import type { JobMessage } from "../../src/fleet/job-message.ts";
import { EngineClient, expectAck, FakeEngine, waitFor } from "./engine-stub.ts";
import { acceptingEngine, deliver, deliverWith, driveQueue, privateFleet, recordingQueue, standInFor, submitWith } from "./fleet/harness.ts";
import type { PlatformOptions } from "./fleet/container-standin.ts";
import { SimClock } from "./fleet/sim-clock.ts";
import { api, createAccount, expectProblem } from "./helpers.ts";
import { accountCredits, getJob, submitJob, submitUndelivered } from "./jobs-helpers.ts";

let engine: FakeEngine;
beforeEach(() => {
  engine = new FakeEngine();
  engine.install();
});
const wallClock = fleetTime.now;
afterEach(() => {
  engine.mode = "up";
  fleetTime.now = wallClock;
});

describe("capacity", () => {
  it("keeps a job beyond ENGINE_MAX_INSTANCES queued with its position, then starts it when an engine frees", async () => {
    // A separate capacity from other suites: these jobs are alone in a fleet of one.
    const { sent, queue } = recordingQueue();
    const oneEngine: Env = { ...env, ENGINE_MAX_INSTANCES: "1", JOBS: queue, FLEET: privateFleet() };
    const [first, second] = [await createAccount(), await createAccount()];
    const firstJob = await submitWith(oneEngine, first);
    const secondJob = await submitWith(oneEngine, second);
    await deliverWith(oneEngine, first, firstJob);
    await waitFor(() => engine.starts(firstJob)[0], "the first StartJob");
    const result = await deliverWith(oneEngine, second, secondJob);
    expect(result.explicitAcks).toHaveLength(1);
    // Read through the API with the test's fleet (the shared one does not know the job): the step names its place.
    const read = await app.fetch(
      new Request(`http://worker.test/api/v1/jobs/${secondJob}`, { headers: { Authorization: `Bearer ${second.apiKey}` } }),
      oneEngine,
      createExecutionContext(),
    );
    expect(await read.json<{ status: string; step: string }>()).toMatchObject({ status: "queued", step: "Waiting for a free engine (position 1)" });
    expect(engine.starts(secondJob)).toEqual([]);

    // The first job ends: its engine goes to the second job at once.
    const client = EngineClient.from(engine.starts(firstJob)[0]!);
    const ended = await app.fetch(
      new Request(client.url("fail"), {
        method: "POST",
        headers: { Authorization: `Bearer ${engine.starts(firstJob)[0]!.token}`, "Content-Type": "application/json" },
        body: JSON.stringify({ code: "source_unreachable", message: "gone" }),
      }),
      oneEngine,
      createExecutionContext(),
    );
    await expectAck(ended);
    expect(sent.map((m) => m.body)).toContainEqual({ job_id: secondJob, account_id: second.accountId, dispatch: 1 });
    await deliver(oneEngine, sent.find((m) => m.body.job_id === secondJob && m.body.dispatch === 1)!.body);
    await waitFor(() => engine.starts(secondJob)[0], "the second StartJob");
    expect((await getJob(second, secondJob)).status).toBe("processing");
  });

  it("ENGINE_MAX_INSTANCES of the test pool leaves room (the production value is checked against wrangler.toml in the node suite)", () => {
    expect(Number(env.ENGINE_MAX_INSTANCES)).toBeGreaterThan(0);
  });
});

describe("deadlines and recovery", () => {
  it("fails a job that waited MAX_QUEUE_SECONDS with queue_timeout, charging nothing and freeing its slot", async () => {
    const account = await createAccount();
    // Its message goes to a recording queue: nothing delivers it, as when no engine ever frees up.
    const jobId = await submitWith({ ...env, JOBS: recordingQueue().queue }, account);
    const stub = accountState(env, account.accountId);
    expect(await stub.watchdogDeadline(jobId)).toBeGreaterThan(Date.now() + 3600_000);
    // A day passes: the account's deadline and the job's own (its submission + MAX_QUEUE_SECONDS).
    const dayAgo = new Date(Date.now() - 86_401_000).toISOString();
    await env.DB.prepare(`UPDATE jobs SET created_at = ? WHERE id = ?`).bind(dayAgo, jobId).run();
    await runInDurableObject(stub, (_i: AccountState, state) => {
      state.storage.sql.exec(`UPDATE watchdog SET deadline_ms = ? WHERE job_id = ?`, Date.now() - 1000, jobId);
    });
    expect(await runDurableObjectAlarm(stub)).toBe(true);
    const job = await getJob(account, jobId);
    expect(job.status).toBe("failed");
    expect(job.error?.code).toBe("queue_timeout");
    expect(job.credits_charged ?? 0).toBe(0);
    expect(await accountCredits(account.accountId)).toMatchObject({ credits_used: 0, credits_reserved: 0 });
    expect(await stub.activeJobs()).toEqual([]);
    expect(await fleetScheduler(env).position(jobId)).toBeNull();
  });

  it("puts a job whose engine was stopped under it back in the queue, credits unchanged, at most MAX_ENGINE_RESTARTS times", async () => {
    const account = await createAccount();
    // Delivered by hand only: the queue's own delivery of the submission could send a second StartJob of the first
    // dispatch at any moment, which the wait for "a new StartJob" below would take for the next dispatch's.
    const jobId = await submitUndelivered(account);
    await deliverWith(env, account, jobId);
    let start = await waitFor(() => engine.starts(jobId).at(-1), "StartJob");
    const client = EngineClient.from(start);
    expect(await client.probe({ duration_seconds: 150 })).toEqual({ proceed: true, credits_reserved: 3 });
    // The interruption's dispatch goes to a recording queue: only this test dispatches the job again.
    const requeued = recordingQueue();
    const interrupt = (token: string) =>
      app.fetch(
        new Request(client.url("interrupted"), {
          method: "POST",
          headers: { Authorization: `Bearer ${token}`, "Content-Type": "application/json" },
          body: JSON.stringify({ reason: "shutdown" }),
        }),
        { ...env, JOBS: requeued.queue },
        createExecutionContext(),
      );
    for (let restart = 1; restart <= MAX_ENGINE_RESTARTS; restart += 1) {
      await expectAck(await interrupt(start.token));
      expect((await getJob(account, jobId)).status).toBe("queued");
      expect(await accountCredits(account.accountId)).toMatchObject({ credits_reserved: 3, credits_used: 0 });
      const before = engine.starts(jobId).length;
      // The fleet granted it again at once (it went back to the head of the line): its chain's message.
      const grant = requeued.takeDue().find((m) => m.body.job_id === jobId);
      expect(grant?.body.dispatch).toBeGreaterThan(0);
      await deliver(env, grant!.body);
      start = await waitFor(() => (engine.starts(jobId).length > before ? engine.starts(jobId).at(-1) : undefined), "a new StartJob");
      expect((await getJob(account, jobId)).status).toBe("processing");
    }
    // One interruption too many: the job fails, nothing charged.
    await expectAck(await interrupt(start.token));
    const job = await getJob(account, jobId);
    expect(job.status).toBe("failed");
    expect(job.error?.code).toBe("internal_error");
    expect(await accountCredits(account.accountId)).toMatchObject({ credits_reserved: 0, credits_used: 0 });
  });

  it("fails a dead-lettered job cleanly and frees its slot and place in line", async () => {
    const account = await createAccount();
    engine.mode = "down";
    const jobId = await submitJob(account);
    const batch = createMessageBatch<JobMessage>("clipjobs-jobs-dlq", [
      { id: crypto.randomUUID(), timestamp: new Date(), attempts: 1, body: { job_id: jobId, account_id: account.accountId } },
    ]);
    const ctx = createExecutionContext();
    await handleDeadLetters(batch, env);
    expect((await getQueueResult(batch, ctx)).explicitAcks).toHaveLength(1);
    const job = await getJob(account, jobId);
    expect(job.status).toBe("failed");
    expect(job.error?.code).toBe("internal_error");
    expect(await accountState(env, account.accountId).activeJobs()).toEqual([]);
    // The account can submit again at once.
    await submitJob(account);
  });

  it("frees a slot whose job already ended in D1 instead of answering 409 forever", async () => {
    const account = await createAccount();
    engine.mode = "down";
    const stuck = await submitJob(account);
    // A release that never happened: the job ended in D1, the slot stayed.
    await env.DB.prepare(`UPDATE jobs SET status = 'canceled' WHERE id = ?`).bind(stuck).run();
    expect(await accountState(env, account.accountId).activeJobs()).toEqual([stuck]);
    const next = await submitJob(account);
    expect(await accountState(env, account.accountId).activeJobs()).toEqual([next]);
    // A live holder still blocks.
    await expectProblem(await api(account, "/api/v1/jobs", { method: "POST", body: JSON.stringify({ video_url: "https://videos.example.com/a.mp4", video_type: "general" }) }), 409, "active_job_limit");
  });

  it("answers 503 service_misconfigured and creates nothing while the engine keys are missing, weak or the example's", async () => {
    const account = await createAccount();
    for (const [variable, secret] of [
      ["ENGINE_SIGNING_KEY", "too-short"],
      ["ENGINE_SIGNING_KEY", "replace-me-with-an-ed25519-pkcs8-key"],
      ["ENGINE_SIGNING_KEY", ""],
      ["CALLBACK_TOKEN_SECRET", "too-short"],
      ["CALLBACK_TOKEN_SECRET", "local-callback-token-secret-change-me-0123456789"],
    ] as const) {
      const res = await app.fetch(
        new Request("http://worker.test/api/v1/jobs", {
          method: "POST",
          headers: { Authorization: `Bearer ${account.apiKey}`, "Content-Type": "application/json" },
          body: JSON.stringify({ video_url: "https://videos.example.com/a.mp4", video_type: "general" }),
        }),
        { ...env, [variable]: secret },
        createExecutionContext(),
      );
      const problem = await expectProblem(res, 503, "service_misconfigured");
      expect(problem.configuration_error).toBe(variable);
      if (secret) expect(problem.detail).not.toContain(secret);
    }
    const count = await env.DB.prepare(`SELECT COUNT(*) AS n FROM jobs WHERE account_id = ?`).bind(account.accountId).first<number>("n");
    expect(count).toBe(0);
  });
});

describe("instance lifecycle on the Container binding", () => {
  function standInEnv(options: Partial<PlatformOptions> = {}) {
    const clock = new SimClock(Date.now());
    fleetTime.now = () => clock.epochMs();
    const starts = new Map<string, string[]>();
    const queue = recordingQueue(clock);
    let testEnv: Env = env;
    const standIn = standInFor(clock, () => testEnv, { maxInstances: 5, ...options, spawn: acceptingEngine(starts) });
    testEnv = { ...env, ENGINE_URL: "", ENGINE: standIn.namespace() as unknown as Env["ENGINE"], JOBS: queue.queue, FLEET: privateFleet() };
    const drive = (seconds: number) => driveQueue(clock, queue, () => testEnv, seconds);
    return { clock, standIn, starts, queue, testEnv, drive };
  }

  it("cancel of a queued job never starts an instance", async () => {
    const { standIn, testEnv } = standInEnv();
    const account = await createAccount();
    const jobId = await submitWith({ ...testEnv, JOBS: recordingQueue().queue }, account);
    const res = await app.fetch(
      new Request(`http://worker.test/api/v1/jobs/${jobId}/cancel`, { method: "POST", headers: { Authorization: `Bearer ${account.apiKey}` } }),
      testEnv,
      createExecutionContext(),
    );
    expect(res.status).toBe(200);
    expect(standIn.history).toEqual([]);
  });

  it("a job whose instance is gone is put back in line by the watchdog (not failed), and the watchdog starts nothing", async () => {
    // The exit notice (ClipEngine.onStop) is lost too: only the watchdog is left to notice.
    const { standIn, starts, queue, testEnv, drive } = standInEnv({ maxInstances: 5, onStopLost: 1 });
    const account = await createAccount();
    const jobId = await submitWith(testEnv, account);
    await drive(10);
    expect(starts.get(jobId)).toHaveLength(1);
    expect(standIn.running()).toEqual([jobId]);
    // The engine is killed outside the Worker and never reports; then the watchdog fires.
    await standIn.namespace().get(standIn.namespace().idFromName(jobId)).stop("SIGKILL");
    await drive(1);
    expect(standIn.running()).toEqual([]);
    expect(await expireOverdueJob(testEnv, account.accountId, jobId)).toBe("repaired");
    const job = await getJob(account, jobId);
    expect(job.status).toBe("queued");
    expect(job.error ?? null).toBeNull();
    expect(standIn.history).toHaveLength(1);
    // It starts again from the head of the line, on a new instance.
    expect(queue.sent.map((m) => m.body.job_id)).toContain(jobId);
    await drive(10);
    expect(starts.get(jobId)).toHaveLength(2);
    expect((await getJob(account, jobId)).status).toBe("processing");
  });

  it("an instance that exits under a running job, its `interrupted` report lost, puts the job back in line at once", async () => {
    const { standIn, starts, testEnv, drive } = standInEnv({ maxInstances: 5, exitSeconds: () => 3 });
    const account = await createAccount();
    const jobId = await submitWith(testEnv, account);
    await drive(10);
    expect(starts.get(jobId)).toHaveLength(1);
    // A rollout's SIGTERM; the engine's report never arrives, the platform's exit notice does.
    await standIn.rollout([100]);
    await drive(30);
    expect(starts.get(jobId)).toHaveLength(2);
    const job = await getJob(account, jobId);
    expect(job.status).toBe("processing");
    expect(standIn.history.map((r) => r.stopReason)).toEqual(["rollout", null]);
  });

  it("waits for a slow image: a start whose port opens after 20 s is answered 500 by the library and reaches the engine on its retry", async () => {
    const { standIn, starts, testEnv, drive } = standInEnv({ maxInstances: 5, bootSeconds: () => 30 });
    const account = await createAccount();
    const jobId = await submitWith(testEnv, account);
    await drive(60);
    expect(standIn.refusals.notListening).toBe(1);
    expect(starts.get(jobId)).toHaveLength(1);
    expect(standIn.history).toHaveLength(1);
    expect((await getJob(account, jobId)).status).toBe("processing");
  });

  it("retries every refusal the platform answers below the limit (503, 500, 429) and fails none", async () => {
    // Refused by placement twice (one 503, one 500), then granted; two starts in one second meet the rate limit.
    const draws = [0.05, 0.2, 0.05, 0.9];
    const random = () => draws.shift() ?? 0.9;
    const { standIn, starts, testEnv, drive } = standInEnv({
      maxInstances: 10,
      placementRefusal: 0.1,
      startsPerSecond: 1,
      random,
    });
    const [a, b] = [await createAccount(), await createAccount()];
    const jobs = [await submitWith(testEnv, a), await submitWith(testEnv, b)];
    await drive(240);
    expect(standIn.refusals.placement).toBeGreaterThanOrEqual(2);
    expect(standIn.refusals.noInstance).toBeGreaterThanOrEqual(1);
    expect(standIn.refusals.limitExceeded).toBeGreaterThanOrEqual(1);
    expect(standIn.refusals.rateLimited).toBeGreaterThanOrEqual(1);
    for (const jobId of jobs) expect(starts.get(jobId)).toHaveLength(1);
    expect((await getJob(a, jobs[0]!)).status).toBe("processing");
    expect((await getJob(b, jobs[1]!)).status).toBe("processing");
  });
});
