/**
 * Capacity, lifecycle and recovery paths of the fleet, one behaviour each,
 * with the real queue consumer, Durable Objects and D1. Engines are the
 * FakeEngine (ENGINE_URL) or the Container stand-in where the binding's
 * behaviour matters.
 */
import { createExecutionContext, createMessageBatch, env, getQueueResult, runDurableObjectAlarm, runInDurableObject } from "cloudflare:test";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { AccountState } from "../../src/account/account-state";
import { accountState } from "../../src/account/stub";
import { app } from "../../src/app";
import { fleetScheduler } from "../../src/fleet/stub";
import { MAX_ENGINE_RESTARTS } from "../../src/jobs/lifecycle";
import { handleQueue } from "../../src/queue/consumer";
import { handleDeadLetters } from "../../src/queue/dead-letter";
import type { JobMessage } from "../../src/queue/message";
import { ContainerStandIn, type SimProcess } from "./fleet/container-standin";
import { EngineClient, expectAck, FakeEngine, waitFor } from "./engine-stub";
import { api, createAccount, expectProblem, type TestAccount } from "./helpers";
import { accountCredits, getJob, submitJob } from "./jobs-helpers";

/** A jobs queue that records what the Worker sends, so the test delivers it. */
function recordingQueue() {
  const sent: JobMessage[] = [];
  const queue = {
    send: async (body: unknown) => void sent.push(body as JobMessage),
    sendBatch: async (messages: Iterable<MessageSendRequest>) => {
      for (const m of messages) sent.push(m.body as JobMessage);
    },
  } as unknown as Queue;
  return { sent, queue };
}

/** Submits through the API with the given env, so its queue message goes where that env says. */
async function submitWith(testEnv: Env, account: TestAccount): Promise<string> {
  const res = await app.fetch(
    new Request("http://worker.test/api/v1/jobs", {
      method: "POST",
      headers: { Authorization: `Bearer ${account.apiKey}`, "Content-Type": "application/json" },
      body: JSON.stringify({ video_url: "https://videos.example.com/a.mp4", video_type: "general" }),
    }),
    testEnv,
    createExecutionContext(),
  );
  const body = await res.json<{ job_id: string }>();
  expect(res.status).toBe(201);
  return body.job_id;
}

async function deliverWith(testEnv: Env, account: TestAccount, jobId: string) {
  const batch = createMessageBatch<JobMessage>("clipjobs-jobs", [
    { id: crypto.randomUUID(), timestamp: new Date(), attempts: 1, body: { job_id: jobId, account_id: account.accountId } },
  ]);
  const ctx = createExecutionContext();
  await handleQueue(batch, testEnv, ctx);
  return getQueueResult(batch, ctx);
}

let engine: FakeEngine;
beforeEach(() => {
  engine = new FakeEngine();
  engine.install();
});
afterEach(() => {
  engine.mode = "up";
});

describe("capacity", () => {
  it("keeps a job beyond ENGINE_MAX_INSTANCES queued with its position, then starts it when an engine frees", async () => {
    // A separate capacity from other suites: these jobs are alone in a fleet of one.
    const { sent, queue } = recordingQueue();
    const oneEngine: Env = { ...env, ENGINE_MAX_INSTANCES: "1", JOBS: queue };
    const [first, second] = [await createAccount(), await createAccount()];
    const firstJob = await submitWith(oneEngine, first);
    const secondJob = await submitWith(oneEngine, second);
    await deliverWith(oneEngine, first, firstJob);
    await waitFor(() => engine.starts(firstJob)[0], "the first StartJob");
    // Another suite's jobs may hold engines in the shared fleet: only compare our two.
    const result = await deliverWith(oneEngine, second, secondJob);
    expect(result.explicitAcks).toHaveLength(1);
    const waiting = await getJob(second, secondJob);
    expect(waiting.status).toBe("queued");
    expect(waiting.step).toMatch(/^Waiting for a free engine \(position \d+\)$/);
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
    expect(sent).toContainEqual({ job_id: secondJob, account_id: second.accountId });
    await deliverWith(oneEngine, second, secondJob);
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
    const jobId = await submitJob(account);
    await deliverWith(env, account, jobId);
    let start = await waitFor(() => engine.starts(jobId).at(-1), "StartJob");
    const client = EngineClient.from(start);
    expect(await client.probe({ duration_seconds: 150 })).toEqual({ proceed: true, credits_reserved: 3 });
    // The interruption's dispatch goes to a recording queue: only this test dispatches the job again.
    const interrupt = (token: string) =>
      app.fetch(
        new Request(client.url("interrupted"), {
          method: "POST",
          headers: { Authorization: `Bearer ${token}`, "Content-Type": "application/json" },
          body: JSON.stringify({ reason: "shutdown" }),
        }),
        { ...env, JOBS: recordingQueue().queue },
        createExecutionContext(),
      );
    for (let restart = 1; restart <= MAX_ENGINE_RESTARTS; restart += 1) {
      await expectAck(await interrupt(start.token));
      expect((await getJob(account, jobId)).status).toBe("queued");
      expect(await accountCredits(account.accountId)).toMatchObject({ credits_reserved: 3, credits_used: 0 });
      const before = engine.starts(jobId).length;
      await deliverWith(env, account, jobId);
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
  function standInEnv() {
    let now = 0;
    const timers: { at: number; run: () => unknown }[] = [];
    const started: string[] = [];
    const standIn = new ContainerStandIn(
      { now: () => now, at: (at, run) => void timers.push({ at, run }) },
      {
        maxInstances: 5,
        startDelay: 1,
        stopDelay: 1,
        sleepAfter: 300,
        spawn: (name): SimProcess => {
          started.push(name);
          return {
            handle: async (request) => {
              const start = JSON.parse(await request.text()) as { job_id: string };
              return Response.json({ job_id: start.job_id, started: true }, { status: 202 });
            },
            terminate: async () => undefined,
          };
        },
      },
    );
    const advance = async (seconds: number) => {
      now += seconds;
      for (const timer of timers.splice(0).sort((a, b) => a.at - b.at)) {
        if (timer.at <= now) await timer.run();
        else timers.push(timer);
      }
    };
    const testEnv: Env = { ...env, ENGINE_URL: "", ENGINE: standIn.namespace() as unknown as Env["ENGINE"] };
    return { standIn, started, advance, testEnv };
  }

  it("cancel of a queued job never starts an instance", async () => {
    const { standIn, started, testEnv } = standInEnv();
    const account = await createAccount();
    const jobId = await submitWith({ ...env, JOBS: recordingQueue().queue }, account);
    const res = await app.fetch(
      new Request(`http://worker.test/api/v1/jobs/${jobId}/cancel`, { method: "POST", headers: { Authorization: `Bearer ${account.apiKey}` } }),
      testEnv,
      createExecutionContext(),
    );
    expect(res.status).toBe(200);
    expect(started).toEqual([]);
    expect(standIn.running()).toEqual([]);
  });

  it("the watchdog never starts an instance that is gone", async () => {
    const { standIn, started, advance, testEnv } = standInEnv();
    const account = await createAccount();
    const jobId = await submitWith({ ...env, JOBS: recordingQueue().queue }, account);
    await deliverWith(testEnv, account, jobId);
    expect(started).toEqual([jobId]);
    await advance(2);
    expect(standIn.running()).toEqual([jobId]);
    // The engine is killed outside the Worker (the instance is gone); then the watchdog fires.
    await standIn.namespace().get(standIn.namespace().idFromName(jobId)).stop("SIGKILL");
    await advance(2);
    expect(standIn.running()).toEqual([]);
    const stub = accountState(env, account.accountId);
    await runInDurableObject(stub, (_i: AccountState, state) => {
      state.storage.sql.exec(`UPDATE watchdog SET deadline_ms = ? WHERE job_id = ?`, Date.now() - 1000, jobId);
    });
    // The alarm runs with the Durable Object's own env; expiring through the stand-in env shows no start either.
    const { expireOverdueJob } = await import("../../src/jobs/lifecycle");
    await expireOverdueJob(testEnv, account.accountId, jobId);
    expect((await getJob(account, jobId)).error?.code).toBe("processing_timeout");
    expect(started).toEqual([jobId]);
    expect(standIn.running()).toEqual([]);
  });
});
