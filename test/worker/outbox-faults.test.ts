/**
 * The transactional outbox under faults: every job transition's event is
 * written in the transition's own D1 batch, so a failure after the commit
 * (the account's Durable Object, the fleet's, a queue, the engine's stop
 * throwing) cannot lose it, and the sweep (src/jobs/sweep.ts) finishes what
 * was left: it delivers each event exactly once and releases every hold.
 * Deliveries are verified with the stock `standardwebhooks` receiver.
 */
import { createExecutionContext, env, waitOnExecutionContext } from "cloudflare:test";
import { Webhook } from "standardwebhooks";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { accountState } from "../../src/account/stub.ts";
import { app } from "../../src/app.ts";
import worker from "../../src/index.ts";
import { fleetScheduler } from "../../src/fleet/stub.ts";
import { runSweep } from "../../src/jobs/sweep.ts";
import { handleQueue } from "../../src/queue/consumer.ts";
import { createMessageBatch } from "cloudflare:test";
import type { JobMessage } from "../../src/fleet/job-message.ts";
import type { WebhookMessage } from "../../src/webhooks/message.ts";
import { clipReport, EngineClient, FakeEngine, waitFor } from "./engine-stub.ts";
import { createAccount, type TestAccount } from "./helpers.ts";
import { createWebhook, envWith, FakeReceiver, RecordingQueue, runAttempts, type WebhookJson } from "./webhooks-helpers.ts";

type Fault = "account" | "fleet" | "queue" | "engine stop";

/** A namespace whose stubs throw on the named RPC methods, as an overloaded Durable Object does. */
function throwingOn(namespace: DurableObjectNamespace, methods: readonly string[]): DurableObjectNamespace {
  return {
    idFromName: (name: string) => namespace.idFromName(name),
    get: (id: DurableObjectId) => {
      const stub = namespace.get(id);
      return new Proxy(stub, {
        get(target, prop) {
          if (typeof prop === "string" && methods.includes(prop)) {
            return () => Promise.reject(new Error("Durable Object overloaded"));
          }
          // A stub is itself an RPC proxy: call through it, never touch its properties (bind would be an RPC call).
          return (...args: unknown[]) => (target as unknown as Record<string, (...a: unknown[]) => unknown>)[prop as string]!(...args);
        },
      });
    },
  } as unknown as DurableObjectNamespace;
}

const brokenQueue = {
  send: () => Promise.reject(new Error("Queue send failed")),
  sendBatch: () => Promise.reject(new Error("Queue send failed")),
} as unknown as Queue;

let engine: FakeEngine;
let receiver: FakeReceiver;
let queue: RecordingQueue;

beforeEach(() => {
  engine = new FakeEngine();
  engine.install();
  receiver = new FakeReceiver();
  receiver.install();
  queue = new RecordingQueue();
});
afterEach(() => receiver.uninstall());

/** The environment with `fault` injected into what runs after a transition's commit. */
function faultyEnv(fault: Fault): Env {
  const base = envWith(queue);
  switch (fault) {
    case "account":
      return { ...base, ACCOUNTS: throwingOn(env.ACCOUNTS as unknown as DurableObjectNamespace, ["jobEnded", "jobMoved"]) as unknown as Env["ACCOUNTS"] };
    case "fleet":
      return { ...base, FLEET: throwingOn(env.FLEET as unknown as DurableObjectNamespace, ["release", "confirmStarted", "requeue"]) as unknown as Env["FLEET"] };
    case "queue":
      return { ...base, JOBS: brokenQueue, WEBHOOKS: brokenQueue };
    case "engine stop":
      engine.failCancels = true;
      return base;
  }
}

const quietJobs = { send: async () => undefined, sendBatch: async () => undefined } as unknown as Queue;

/** Submits with a jobs queue that only records (the test dispatches by hand) and the recording webhooks queue. */
async function submitQuietly(account: TestAccount): Promise<string> {
  const res = await fetchWith(
    { ...envWith(queue), JOBS: quietJobs },
    new Request("http://worker.test/api/v1/jobs", {
      method: "POST",
      headers: { Authorization: `Bearer ${account.apiKey}`, "Content-Type": "application/json" },
      body: JSON.stringify({ video_url: "https://videos.example.com/talk.mp4", video_type: "podcast" }),
    }),
  );
  const text = await res.text();
  if (res.status !== 201) throw new Error(`submit answered ${res.status}: ${text}`);
  return (JSON.parse(text) as { job_id: string }).job_id;
}

async function fetchWith(environment: Env, request: Request): Promise<Response> {
  const ctx = createExecutionContext();
  const response = await app.fetch(request, environment, ctx);
  await waitOnExecutionContext(ctx);
  return response;
}

/** The queue consumer takes the job (queued -> processing) under `environment`. */
async function dispatch(environment: Env, account: TestAccount, jobId: string, body?: JobMessage): Promise<EngineClient> {
  const batch = createMessageBatch<JobMessage>("clipjobs-jobs", [
    { id: `msg-${crypto.randomUUID()}`, timestamp: new Date(), attempts: 1, body: body ?? { job_id: jobId, account_id: account.accountId } },
  ]);
  const ctx = createExecutionContext();
  await handleQueue(batch, environment, ctx);
  await waitOnExecutionContext(ctx);
  return EngineClient.from(await waitFor(() => engine.starts(jobId).at(-1), `a StartJob for ${jobId}`));
}

function callback(environment: Env, client: EngineClient, suffix: string, body: unknown): Promise<Response> {
  return fetchWith(
    environment,
    new Request(client.url(suffix), {
      method: "POST",
      headers: { Authorization: `Bearer ${client.token}`, "Content-Type": "application/json" },
      body: JSON.stringify(body),
    }),
  );
}

interface Received {
  id: string;
  type: string;
  jobId: string;
}

/** Every request the receiver got, verified by standardwebhooks with the endpoint's secret. */
function verifiedEvents(hook: WebhookJson): Received[] {
  const verifier = new Webhook(hook.secret!);
  return receiver.requests
    .filter((request) => request.url === hook.url)
    .map((request) => {
      const payload = verifier.verify(request.body, {
        "webhook-id": request.headers["webhook-id"]!,
        "webhook-timestamp": request.headers["webhook-timestamp"]!,
        "webhook-signature": request.headers["webhook-signature"]!,
      }) as { type: string; data: { job_id: string; status: string } };
      expect(payload.data.status).toBe(payload.type.slice("job.".length));
      return { id: request.headers["webhook-id"]!, type: payload.type, jobId: payload.data.job_id };
    });
}

/** Runs every queued first attempt (and whatever they queue) through the real consumer. */
async function drainWebhooks(): Promise<void> {
  for (let round = 0; round < 5; round += 1) {
    const messages: WebhookMessage[] = queue.take().map((m) => m.body);
    if (messages.length === 0) return;
    await runAttempts(queue, messages);
  }
}

async function settledAt(jobId: string): Promise<string | null> {
  const row = await env.DB.prepare(`SELECT settled_at FROM jobs WHERE id = ?`).bind(jobId).first<{ settled_at: string | null }>();
  return row?.settled_at ?? null;
}

describe.each<Fault>(["account", "fleet", "queue", "engine stop"])("a fault in the %s after the commit", (fault) => {
  it("still delivers exactly one event per transition, and the sweep releases every hold", async () => {
    const account = await createAccount("unmetered");
    const hook = await createWebhook(account);
    const faulty = faultyEnv(fault);

    // completed: queued -> processing -> completed
    const done = await submitQuietly(account);
    const doneClient = await dispatch(faulty, account, done);
    await doneClient.probe({ duration_seconds: 30 });
    await doneClient.uploadClip(0);
    const completion = await callback(faulty, doneClient, "complete", {
      title: "Talk",
      source_duration_seconds: 30,
      clips: [clipReport(0)],
      transcript: null,
      transcript_unavailable_reason: null,
    });
    expect(completion.status, await completion.text()).toBe(200);

    // failed: the engine reports a failure
    const failing = await submitQuietly(account);
    const failingClient = await dispatch(faulty, account, failing);
    expect((await callback(faulty, failingClient, "fail", { code: "source_unreachable", message: "Gone." })).status).toBe(200);

    // canceled: the client cancels a processing job
    const canceled = await submitQuietly(account);
    await dispatch(faulty, account, canceled);
    const cancel = await fetchWith(
      faulty,
      new Request(`http://worker.test/api/v1/jobs/${canceled}/cancel`, { method: "POST", headers: { Authorization: `Bearer ${account.apiKey}` } }),
    );
    expect(cancel.status, await cancel.text()).toBe(200);

    // The faults are over; the sweep runs twice (later, as the cron would) and finishes everything once.
    engine.failCancels = false;
    const later = Date.now() + 10 * 60_000;
    const first = await runSweep(envWith(queue), later);
    expect(first.failures).toEqual([]);
    const second = await runSweep(envWith(queue), later);
    expect(second).toMatchObject({ settled: 0, unsettled: 0, dispatched: 0, failures: [] });
    await drainWebhooks();

    const events = verifiedEvents(hook);
    const lifeOf = (jobId: string) => events.filter((e) => e.jobId === jobId).map((e) => e.type);
    expect(lifeOf(done)).toEqual(["job.queued", "job.processing", "job.completed"]);
    expect(lifeOf(failing)).toEqual(["job.queued", "job.processing", "job.failed"]);
    expect(lifeOf(canceled)).toEqual(["job.queued", "job.processing", "job.canceled"]);
    // One webhook-id per transition, each sent once.
    expect(new Set(events.map((e) => e.id)).size).toBe(events.length);

    // Every hold is released: the account's slots, the fleet's capacity, and the jobs are recorded settled.
    for (const jobId of [done, failing, canceled]) expect(await settledAt(jobId)).not.toBeNull();
    expect(await accountState(env, account.accountId).activeJobs()).toEqual([]);
    const fleet = await fleetScheduler(env).snapshot();
    for (const jobId of [done, failing, canceled]) expect(fleet.holding).not.toContain(jobId);
    if (fault === "engine stop") expect(engine.cancels(canceled).length).toBeGreaterThanOrEqual(2);
  });
});

describe("job.queued", () => {
  it("is sent for a submission with an Idempotency-Key (its guard shares the batch), once for the key's replay too", async () => {
    const account = await createAccount("unmetered");
    const hook = await createWebhook(account);
    const submitWithKey = () =>
      fetchWith(
        { ...envWith(queue), JOBS: quietJobs },
        new Request("http://worker.test/api/v1/jobs", {
          method: "POST",
          headers: { Authorization: `Bearer ${account.apiKey}`, "Content-Type": "application/json", "Idempotency-Key": "outbox-once" },
          body: JSON.stringify({ video_url: "https://videos.example.com/talk.mp4", video_type: "podcast" }),
        }),
      );
    const first = await submitWithKey();
    expect(first.status).toBe(201);
    const replay = await submitWithKey();
    expect(replay.status).toBe(201);
    const jobId = (await first.json<{ job_id: string }>()).job_id;
    expect((await replay.json<{ job_id: string }>()).job_id).toBe(jobId);
    await drainWebhooks();
    expect(verifiedEvents(hook)).toEqual([expect.objectContaining({ type: "job.queued", jobId })]);
  });
});

describe("an undone transition", () => {
  it("a submission whose enqueue fails after the commit is removed with its event: no event is ever sent", async () => {
    const account = await createAccount("unmetered");
    const hook = await createWebhook(account);
    const res = await fetchWith(
      { ...envWith(queue), JOBS: brokenQueue },
      new Request("http://worker.test/api/v1/jobs", {
        method: "POST",
        headers: { Authorization: `Bearer ${account.apiKey}`, "Content-Type": "application/json" },
        body: JSON.stringify({ video_url: "https://videos.example.com/a.mp4", video_type: "podcast" }),
      }),
    );
    expect(res.status).toBe(503);
    await runSweep(envWith(queue), Date.now() + 10 * 60_000);
    await drainWebhooks();
    expect(verifiedEvents(hook)).toEqual([]);
  });

  it("a job the engine did not take goes back to queued and its job.processing is withdrawn unsent", async () => {
    const account = await createAccount("unmetered");
    const hook = await createWebhook(account);
    const jobId = await submitQuietly(account);
    engine.mode = "busy";
    const batch = createMessageBatch<JobMessage>("clipjobs-jobs", [
      { id: `msg-${crypto.randomUUID()}`, timestamp: new Date(), attempts: 1, body: { job_id: jobId, account_id: account.accountId } },
    ]);
    // The retry goes on the job's dispatch chain (a message of another chain would be dropped): keep it to deliver.
    const retries: JobMessage[] = [];
    const recording = { send: async (body: unknown) => void retries.push(body as JobMessage), sendBatch: async () => undefined } as unknown as Queue;
    await handleQueue(batch, { ...envWith(queue), JOBS: recording }, createExecutionContext());
    engine.mode = "up";
    expect(retries).toHaveLength(1);
    await dispatch(envWith(queue), account, jobId, retries[0]);
    await runSweep(envWith(queue), Date.now() + 10 * 60_000);
    await drainWebhooks();
    expect(verifiedEvents(hook).map((e) => e.type)).toEqual(["job.queued", "job.processing"]);
  });
});

describe("wiring", () => {
  it("the cron trigger runs the sweep: an ended job left unsettled is settled", async () => {
    const account = await createAccount("unmetered");
    const jobId = await submitQuietly(account);
    const faulty = { ...envWith(queue), ACCOUNTS: throwingOn(env.ACCOUNTS as unknown as DurableObjectNamespace, ["jobEnded"]) as unknown as Env["ACCOUNTS"] };
    const client = await dispatch(faulty, account, jobId);
    expect((await callback(faulty, client, "fail", { code: "source_unreachable", message: "Gone." })).status).toBe(200);
    expect(await settledAt(jobId)).toBeNull();
    // As if the end happened a minute ago (the sweep leaves a transition's own releases their time).
    const minuteAgo = new Date(Date.now() - 60_000).toISOString();
    await env.DB.prepare(`UPDATE jobs SET updated_at = ? WHERE id = ?`).bind(minuteAgo, jobId).run();
    const ctx = createExecutionContext();
    await worker.scheduled!({ cron: "* * * * *", scheduledTime: Date.now(), noRetry: () => {} } as ScheduledController, envWith(queue), ctx);
    await waitOnExecutionContext(ctx);
    expect(await settledAt(jobId)).not.toBeNull();
    expect(await accountState(env, account.accountId).activeJobs()).toEqual([]);
  });
});
