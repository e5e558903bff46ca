/**
 * The interleavings that could strand jobs (A-E) and the busy loop,
 * each played through the real consumer, lifecycle, Durable Objects and D1,
 * with failures injected where the platform produces them: a Durable Object
 * call that throws (a reset on deploy), a consumer that dies mid-way, a
 * cancel landing between two steps, a dead-lettered message from an old
 * chain, a Container instance still stopping. Time is simulated where the
 * platform makes the Worker wait (SimClock); nothing waits on the wall clock.
 */
import { createExecutionContext, createMessageBatch, env, getQueueResult, runDurableObjectAlarm, runInDurableObject } from "cloudflare:test";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { AccountState } from "../../src/jobs/account-state.ts";
import { accountState } from "../../src/account/stub.ts";
import { app } from "../../src/app.ts";
import { followUpTick, sendDispatches } from "../../src/fleet/fleet-scheduler.ts";
import { fleetLimits } from "../../src/fleet/limits.ts";
import { fleetTime } from "../../src/fleet/time.ts";
import { handleDeadLetters } from "../../src/queue/dead-letter.ts";
import type { JobMessage } from "../../src/fleet/job-message.ts";
import { EngineClient, expectAck, FakeEngine, waitFor } from "./engine-stub.ts";
import { acceptingEngine, callback, deliver, deliverWith, privateFleet, recordingQueue, standInFor, submitWith } from "./fleet/harness.ts";
import { SimClock } from "./fleet/sim-clock.ts";
import { createAccount } from "./helpers.ts";
import { getJob } from "./jobs-helpers.ts";

const DO_RESET = "Durable Object reset because its code was updated.";

/** A Durable Object namespace whose stubs throw on the named methods while `armed()` says so. */
function throwingNamespace<N>(real: N, methods: string[], armed: () => boolean): N {
  const namespace = real as unknown as DurableObjectNamespace;
  return new Proxy(namespace, {
    get(target, prop) {
      if (prop !== "get") {
        const value = Reflect.get(target, prop) as unknown;
        return typeof value === "function" ? (value as (...a: unknown[]) => unknown).bind(target) : value;
      }
      return (id: DurableObjectId) =>
        new Proxy(target.get(id), {
          get(stub, method) {
            if (typeof method === "string" && methods.includes(method) && armed()) {
              return async () => {
                throw new Error(DO_RESET);
              };
            }
            return Reflect.get(stub, method);
          },
        });
    },
  }) as unknown as N;
}

let engine: FakeEngine;
const wallClock = fleetTime.now;
beforeEach(() => {
  engine = new FakeEngine();
  engine.install();
});
afterEach(() => {
  engine.mode = "up";
  fleetTime.now = wallClock;
});

async function startedJob(testEnv: Env) {
  const account = await createAccount();
  const jobId = await submitWith(testEnv, account);
  await deliverWith(testEnv, account, jobId);
  const start = await waitFor(() => engine.starts(jobId)[0], "StartJob");
  return { account, jobId, start };
}

describe("A: a requeue whose Durable Object calls throw after D1 says queued", () => {
  it("is repaired, not failed: the job is dispatched again instead of waiting for (or dying at) a deadline", async () => {
    const testEnv: Env = { ...env, JOBS: recordingQueue().queue };
    const { account, jobId, start } = await startedJob(testEnv);
    const client = EngineClient.from(start);
    expect((await client.probe({ duration_seconds: 60 })).proceed).toBe(true);

    // The engine gets SIGTERM and reports `interrupted`; D1 moves the job to queued, then every Durable
    // Object call of that request throws (the objects are being reset by the same deploy).
    const resetting: Env = {
      ...testEnv,
      ACCOUNTS: throwingNamespace(env.ACCOUNTS, ["jobMoved", "jobEnded"], () => true),
      FLEET: throwingNamespace(env.FLEET, ["requeue", "release", "admit", "claim"], () => true),
    };
    const res = await callback(resetting, jobId, start.token, "interrupted", { reason: "shutdown" });
    await res.arrayBuffer();
    expect((await env.DB.prepare(`SELECT status FROM jobs WHERE id = ?`).bind(jobId).first<string>("status"))).toBe("queued");

    // The account's watchdog still holds the processing deadline; it passes, the engine silent since (it is gone).
    const stub = accountState(env, account.accountId);
    await runInDurableObject(stub, (_i: AccountState, state) => {
      state.storage.sql.exec(`UPDATE watchdog SET deadline_ms = ? WHERE job_id = ?`, Date.now() - 1000, jobId);
      state.storage.sql.exec(`UPDATE live_jobs SET last_report_ms = ? WHERE job_id = ?`, Date.now() - 3600_000, jobId);
    });
    await runDurableObjectAlarm(stub);

    // Not failed (it waited seconds, not MAX_QUEUE_SECONDS), and started again.
    const job = await getJob(account, jobId);
    expect(job.status === "failed" ? job.error : null).toBeNull();
    await waitFor(() => (engine.starts(jobId).length >= 2 ? true : undefined), "a second StartJob");
    expect((await getJob(account, jobId)).status).toBe("processing");
    expect(await stub.activeJobs()).toContain(jobId);
  });
});

describe("B: a consumer that dies right after marking a job processing", () => {
  it("starts the job on the redelivery instead of acknowledging it as a duplicate", async () => {
    let dying = true;
    const queue = recordingQueue();
    const testEnv: Env = { ...env, JOBS: queue.queue };
    // The invocation dies (its isolate is killed) after D1 marked the job processing, before StartJob went out:
    // here, at the first thing StartJob needs.
    const dyingEnv = new Proxy(testEnv, {
      get(target, prop) {
        if (prop === "ENGINE_SIGNING_KEY" && dying) throw new Error("the consumer's isolate was killed");
        return Reflect.get(target, prop);
      },
    });
    const account = await createAccount();
    const jobId = await submitWith(testEnv, account);

    const first = await deliverWith(dyingEnv, account, jobId);
    expect(first.retryMessages).toHaveLength(1);
    expect(engine.starts(jobId)).toEqual([]);
    expect(await env.DB.prepare(`SELECT status FROM jobs WHERE id = ?`).bind(jobId).first<string>("status")).toBe("processing");
    dying = false;

    // The queue redelivers the same message.
    await deliverWith(testEnv, account, jobId, 2);
    await waitFor(() => engine.starts(jobId)[0], "StartJob on the redelivery");
    expect((await getJob(account, jobId)).status).toBe("processing");
    // The account's watchdog guards it as processing (the silence timeout, not the queue's 24 h).
    const deadline = await accountState(env, account.accountId).watchdogDeadline(jobId);
    expect(deadline).not.toBeNull();
    expect(deadline!).toBeLessThan(Date.now() + 3600_000);
  });
});

describe("C: a cancel racing an admission", () => {
  it("leaves nothing held in the fleet, whether the job was granted or put in line", async () => {
    for (const inLine of [false, true]) {
      const capacity = "1";
      const fleet = privateFleet();
      const account = await createAccount();
      const queue = recordingQueue();
      if (inLine) {
        // Another account's job holds the one engine, so the racing job's claim puts it in line.
        const other = await createAccount();
        const otherEnv: Env = { ...env, JOBS: queue.queue, FLEET: fleet, ENGINE_MAX_INSTANCES: capacity };
        const holder = await submitWith(otherEnv, other);
        await deliverWith(otherEnv, other, holder);
        expect((await fleet.get(fleet.idFromName("fleet")).snapshot()).holding).toEqual([holder]);
      }
      let jobId = "";
      let canceled = false;
      // The cancel lands after the consumer read the job as queued and before its first fleet call.
      const racing = new Proxy(fleet, {
        get(target, prop) {
          if (prop !== "get") return Reflect.get(target, prop);
          return (id: DurableObjectId) =>
            new Proxy(target.get(id), {
              get(stub, method) {
                const value = Reflect.get(stub, method) as unknown;
                if (typeof method !== "string" || typeof value !== "function" || canceled || ["position", "snapshot"].includes(method)) return value;
                const call = stub as unknown as Record<string, (...a: unknown[]) => unknown>;
                return async (...args: unknown[]) => {
                  canceled = true;
                  const res = await app.fetch(
                    new Request(`http://worker.test/api/v1/jobs/${jobId}/cancel`, { method: "POST", headers: { Authorization: `Bearer ${account.apiKey}` } }),
                    { ...env, JOBS: queue.queue, FLEET: fleet, ENGINE_MAX_INSTANCES: capacity },
                    createExecutionContext(),
                  );
                  expect(res.status).toBe(200);
                  return call[method]!(...args);
                };
              },
            });
        },
      }) as Env["FLEET"];
      const testEnv: Env = { ...env, JOBS: queue.queue, FLEET: racing, ENGINE_MAX_INSTANCES: capacity };
      jobId = await submitWith({ ...testEnv, FLEET: fleet }, account);
      await deliverWith(testEnv, account, jobId);
      expect((await getJob(account, jobId)).status).toBe("canceled");
      const stub = fleet.get(fleet.idFromName("fleet"));
      expect((await stub.snapshot()).holding).not.toContain(jobId);
      expect(await stub.position(jobId)).toBeNull();
      expect(engine.starts(jobId)).toEqual([]);
    }
  });
});

describe("D: a dead-lettered message of a job that a later dispatch started", () => {
  it("leaves the running job alone", async () => {
    const testEnv: Env = { ...env, JOBS: recordingQueue().queue };
    const { account, jobId } = await startedJob(testEnv);
    expect((await getJob(account, jobId)).status).toBe("processing");

    const batch = createMessageBatch<JobMessage>("clipjobs-jobs-dlq", [
      { id: crypto.randomUUID(), timestamp: new Date(), attempts: 1, body: { job_id: jobId, account_id: account.accountId } },
    ]);
    const ctx = createExecutionContext();
    await handleDeadLetters(batch, testEnv);
    expect((await getQueueResult(batch, ctx)).explicitAcks).toHaveLength(1);
    const job = await getJob(account, jobId);
    expect(job.status).toBe("processing");
    expect(job.error ?? null).toBeNull();
  });
});

describe("E: capacity given back while the ended job's instance is still stopping", () => {
  it("grants the next job only once the instance has exited, so its start is never refused at the limit", async () => {
    const clock = new SimClock(Date.now());
    fleetTime.now = () => clock.epochMs();
    const starts = new Map<string, string[]>();
    const queue = recordingQueue(clock);
    let testEnv: Env = env;
    const standIn = standInFor(clock, () => testEnv, { maxInstances: 1, exitSeconds: () => 30, spawn: acceptingEngine(starts) });
    testEnv = { ...env, ENGINE_URL: "", ENGINE: standIn.namespace() as unknown as Env["ENGINE"], JOBS: queue.queue, FLEET: privateFleet(), ENGINE_MAX_INSTANCES: "1" };
    const [first, second] = [await createAccount(), await createAccount()];
    const a = await submitWith(testEnv, first);
    const b = await submitWith(testEnv, second);
    // Deliver whatever is due, in simulated time, for two simulated minutes.
    const drive = async (seconds: number) => {
      const end = clock.now() + seconds;
      while (clock.now() < end) {
        for (const m of queue.takeDue()) await clock.settle(deliver(testEnv, m.body));
        await clock.advance(1);
      }
    };
    await drive(10);
    expect(starts.get(a)).toHaveLength(1);
    expect(starts.get(b)).toBeUndefined();

    // A fails; its instance gets SIGTERM and takes 30 s to exit.
    const failed = await callback(testEnv, a, starts.get(a)![0]!, "fail", { code: "source_unreachable", message: "gone" });
    await expectAck(failed);
    expect(standIn.stateOf(a)).toBe("stopping");
    await drive(120);

    expect(standIn.refusedAtLimit).toBe(0);
    expect(standIn.refusals.noInstance + standIn.refusals.limitExceeded).toBe(0);
    expect(starts.get(b)).toHaveLength(1);
    expect((await getJob(second, b)).status).toBe("processing");
    const bStart = standIn.history.find((r) => r.name === b)!.startedAt;
    const aStop = standIn.history.find((r) => r.name === a)!.stoppedAt!;
    expect(bStart).toBeGreaterThanOrEqual(aStop);
  });
});

describe("the busy loop", () => {
  it("keeps one dispatch chain and the original queue deadline while starts are refused, and fails the job only after the start budget", async () => {
    const clock = new SimClock(Date.now());
    fleetTime.now = () => clock.epochMs();
    const queue = recordingQueue(clock);
    const starts = new Map<string, string[]>();
    let testEnv: Env = env;
    // Other applications of the account use every vCPU: each start is refused after the library's ~8 s.
    const standIn = standInFor(clock, () => testEnv, { maxInstances: 5, otherVcpu: () => 1500, spawn: acceptingEngine(starts) });
    const fleet = privateFleet();
    testEnv = { ...env, ENGINE_URL: "", ENGINE: standIn.namespace() as unknown as Env["ENGINE"], JOBS: queue.queue, FLEET: fleet, ENGINE_MAX_INSTANCES: "2" };
    const account = await createAccount();
    const jobId = await submitWith(testEnv, account);
    const stub = accountState(env, account.accountId);
    const deadline = (await stub.watchdogDeadline(jobId))!;
    const fleetStub = fleet.get(fleet.idFromName("fleet"));

    let maxPending = 0;
    const runMinutes = async (minutes: number) => {
      for (let minute = 0; minute < minutes; minute += 1) {
        const end = clock.now() + 60;
        while (clock.now() < end) {
          for (const m of queue.takeDue()) await clock.settle(deliver(testEnv, m.body));
          maxPending = Math.max(maxPending, queue.sent.filter((m) => m.body.job_id === jobId).length);
          await clock.advance(5);
        }
        // The fleet's alarm, on the simulated clock: it would re-send a chain whose message was lost.
        await sendDispatches(testEnv, (await fleetStub.tick(fleetLimits(testEnv))).grants);
        maxPending = Math.max(maxPending, queue.sent.filter((m) => m.body.job_id === jobId).length);
      }
    };
    await runMinutes(20);
    const now = (await stub.watchdogDeadline(jobId))!;
    expect(now).toBeLessThanOrEqual(deadline);
    expect(now).toBeGreaterThan(deadline - 60_000);
    expect((await getJob(account, jobId)).status).toBe("queued");
    expect(maxPending).toBe(1);
    expect(standIn.refusedAtLimit).toBeGreaterThan(10);

    // Past the start budget (twice a rollout's grace): the job fails, nothing charged, nothing held.
    await runMinutes(12);
    const job = await getJob(account, jobId);
    expect(job.status).toBe("failed");
    expect(job.error?.code).toBe("internal_error");
    expect(job.credits_charged ?? 0).toBe(0);
    expect((await fleetStub.snapshot()).holding).toEqual([]);
    expect(queue.sent).toEqual([]);
  });
});

describe("an exit notice lost", () => {
  it("frees the slot once the platform says the instance is gone (a minute on), not after the 16-minute grace, and not while it still stops", async () => {
    const clock = new SimClock(Date.now());
    fleetTime.now = () => clock.epochMs();
    const starts = new Map<string, string[]>();
    const queue = recordingQueue(clock);
    let testEnv: Env = env;
    // Every ClipEngine.onStop is lost; A's instance takes 150 s to exit after SIGTERM.
    const standIn = standInFor(clock, () => testEnv, { maxInstances: 1, onStopLost: 1, exitSeconds: () => 150, spawn: acceptingEngine(starts) });
    const fleet = privateFleet();
    testEnv = { ...env, ENGINE_URL: "", ENGINE: standIn.namespace() as unknown as Env["ENGINE"], JOBS: queue.queue, FLEET: fleet, ENGINE_MAX_INSTANCES: "1" };
    const fleetStub = fleet.get(fleet.idFromName("fleet"));
    const [first, second] = [await createAccount(), await createAccount()];
    const a = await submitWith(testEnv, first);
    const b = await submitWith(testEnv, second);
    // Deliveries as they fall due, and the fleet's alarm once a simulated minute.
    const runMinutes = async (minutes: number) => {
      for (let minute = 0; minute < minutes; minute += 1) {
        const end = clock.now() + 60;
        while (clock.now() < end) {
          for (const m of queue.takeDue()) await clock.settle(deliver(testEnv, m.body));
          await clock.advance(1);
        }
        await followUpTick(testEnv, await fleetStub.tick(fleetLimits(testEnv)));
      }
    };
    await runMinutes(1);
    expect(starts.get(a)).toHaveLength(1);

    await expectAck(await callback(testEnv, a, starts.get(a)![0]!, "fail", { code: "source_unreachable", message: "gone" }));
    expect(standIn.stateOf(a)).toBe("stopping");
    // Overdue after a minute, but still stopping: asked, and the slot stays held.
    await runMinutes(2);
    expect(standIn.stateOf(a)).toBe("stopping");
    expect(starts.get(b)).toBeUndefined();
    expect((await fleetStub.snapshot()).stopping).toBe(1);

    // It exits at 150 s, its notice lost: the next alarm finds it gone and B starts.
    await runMinutes(2);
    expect(standIn.stateOf(a)).toBe("stopped");
    expect(standIn.onStopLostCount).toBe(1);
    expect(starts.get(b)).toHaveLength(1);
    expect((await getJob(second, b)).status).toBe("processing");
    expect(standIn.refusedAtLimit).toBe(0);
    const bStart = standIn.history.find((r) => r.name === b)!.startedAt;
    expect(bStart - standIn.history.find((r) => r.name === a)!.stoppedAt!).toBeLessThanOrEqual(60 + 5);
  });
});
