/**
 * Shared pieces of the fleet suites: a jobs queue the test delivers by hand
 * (in simulated time), a FleetScheduler of the test's own (so other files'
 * jobs never hold its capacity), submission and delivery through the real
 * API and queue consumer, and a Container stand-in wired to ClipEngine's
 * real onStop hook.
 */
import { createExecutionContext, createMessageBatch, env, getQueueResult } from "cloudflare:test";
import { expect } from "vitest";
import { app } from "../../../src/app.ts";
import { ClipEngine } from "../../../src/engine/clip-engine.ts";
import { handleQueue } from "../../../src/queue/consumer.ts";
import type { JobMessage } from "../../../src/fleet/job-message.ts";
import type { TestAccount } from "../helpers.ts";
import { ContainerStandIn, type PlatformOptions, type SimProcess } from "./container-standin.ts";
import type { SimClock } from "./sim-clock.ts";

export interface SentMessage {
  body: JobMessage;
  /** Simulated second it becomes deliverable. */
  at: number;
}

/** A jobs queue that keeps what the Worker sends (with its delay), for the test to deliver. */
export function recordingQueue(clock?: SimClock) {
  const sent: SentMessage[] = [];
  const now = () => clock?.now() ?? 0;
  const queue = {
    send: async (body: unknown, options?: QueueSendOptions) => void sent.push({ body: body as JobMessage, at: now() + (options?.delaySeconds ?? 0) }),
    sendBatch: async (messages: Iterable<MessageSendRequest>) => {
      for (const m of messages) sent.push({ body: m.body as JobMessage, at: now() + (m.delaySeconds ?? 0) });
    },
  } as unknown as Queue;
  /** Removes and returns the messages due by now. */
  const takeDue = (): SentMessage[] => {
    const due = sent.filter((m) => m.at <= now());
    for (const m of due) sent.splice(sent.indexOf(m), 1);
    return due;
  };
  return { sent, queue, takeDue };
}

/** The FLEET binding, but every name maps to one scheduler of this test's own. */
export function privateFleet(name = `fleet-${crypto.randomUUID()}`): Env["FLEET"] {
  const real = env.FLEET;
  return {
    idFromName: () => real.idFromName(name),
    get: (id: DurableObjectId) => real.get(id),
    idFromString: (s: string) => real.idFromString(s),
    newUniqueId: () => real.newUniqueId(),
    getByName: () => real.get(real.idFromName(name)),
    jurisdiction: () => real,
  } as unknown as Env["FLEET"];
}

/** Submits through the API with the given env, so its queue message goes where that env says. */
export async function submitWith(testEnv: Env, account: TestAccount): Promise<string> {
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

/** One delivery of a jobs message to the real consumer; what the consumer did with it. */
export async function deliver(testEnv: Env, body: JobMessage, attempts = 1) {
  const batch = createMessageBatch<JobMessage>("clipjobs-jobs", [{ id: crypto.randomUUID(), timestamp: new Date(), attempts, body }]);
  const ctx = createExecutionContext();
  await handleQueue(batch, testEnv, ctx);
  return getQueueResult(batch, ctx);
}

export function deliverWith(testEnv: Env, account: TestAccount, jobId: string, attempts = 1) {
  return deliver(testEnv, { job_id: jobId, account_id: account.accountId }, attempts);
}

/** Sends an engine callback through the app with `testEnv` (as the Container's outbound handler would). */
export async function callback(testEnv: Env, jobId: string, token: string, suffix: string, body: unknown): Promise<Response> {
  return app.fetch(
    new Request(`http://worker.test/internal/v1/jobs/${jobId}/${suffix}`, {
      method: "POST",
      headers: { Authorization: `Bearer ${token}`, "Content-Type": "application/json" },
      body: JSON.stringify(body),
    }),
    testEnv,
    createExecutionContext(),
  );
}

/** An engine process that accepts StartJob and remembers each job's token; it reports nothing by itself. */
export function acceptingEngine(starts: Map<string, string[]>): (name: string) => SimProcess {
  return () => {
    let working = false;
    return {
      async handle(request) {
        if (new URL(request.url).pathname === "/health") return Response.json({ ok: true, backend: "sim", active_jobs: working ? 1 : 0 });
        const start = JSON.parse(await request.text()) as { job_id: string; token: string };
        const tokens = starts.get(start.job_id) ?? [];
        tokens.push(start.token);
        starts.set(start.job_id, tokens);
        const fresh = !working;
        working = true;
        return Response.json({ job_id: start.job_id, started: fresh }, { status: 202 });
      },
      terminate: async () => {
        working = false;
      },
    };
  };
}

/**
 * A stand-in whose exits run ClipEngine's real onStop on `testEnv()`, as the
 * library calls it on the instance's Durable Object.
 */
export function standInFor(clock: SimClock, testEnv: () => Env, options: Partial<PlatformOptions> & Pick<PlatformOptions, "maxInstances" | "spawn">) {
  const onStop = ClipEngine.prototype.onStop as (this: unknown, params: { exitCode: number; reason: "exit" | "runtime_signal" }) => unknown;
  return new ContainerStandIn(clock, {
    bootSeconds: () => 5,
    exitSeconds: () => 10,
    sleepAfter: 300,
    random: () => 0.5,
    onStop: async (name, params) => {
      const self = { env: testEnv(), ctx: { id: { name, toString: () => name } } };
      await onStop.call(self, params);
    },
    ...options,
  });
}

/**
 * Delivers every due message of `queue` for `seconds` of simulated time, each
 * delivery a task of its own (deliveries due at the same moment run at once,
 * as concurrent consumer invocations do).
 */
export async function driveQueue(clock: SimClock, queue: ReturnType<typeof recordingQueue>, testEnv: () => Env, seconds: number): Promise<void> {
  const end = clock.now() + seconds;
  while (clock.now() < end) {
    for (const m of queue.takeDue()) clock.spawn(() => deliver(testEnv(), m.body));
    await clock.advance(1);
  }
}
