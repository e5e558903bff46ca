/**
 * The fleet simulation: many accounts sharing a bounded fleet of engine
 * instances, driven through the real Worker (API routes, queue consumer,
 * engine callbacks, lifecycle), the real Durable Objects (AccountState,
 * FleetScheduler) and real D1/R2 in miniflare. Only the Container binding is
 * a stand-in (container-standin.ts) and time is simulated: every action runs
 * for real, at the simulated moment it would happen.
 */
import { createExecutionContext, createMessageBatch, env, getQueueResult } from "cloudflare:test";
import { app } from "../../../src/app";
import { ENGINE_SIGNATURE_HEADER, StartJob } from "#contract";
import { judgeAsEngine } from "../engine-stub";
import { handleQueue } from "../../../src/queue/consumer";
import type { JobMessage } from "../../../src/queue/message";
import { ContainerStandIn, type SimProcess } from "./container-standin";
import { rng } from "../../media/beds";

export type AccountKind = "single" | "burst" | "looper";

export interface SimOptions {
  /** ENGINE_MAX_INSTANCES and the binding's max_instances. */
  capacity: number;
  singleAccounts: number;
  jobsPerSingleAccount: number;
  /** Plan of the single-job accounts ("free" in the test; a roomier plan in the bench). */
  singlePlan: string;
  /** The first submission of each single-job account falls in [0, arrivalWindow). */
  arrivalWindow: number;
  /** Pause between one job's end and the account's next submission. */
  thinkSeconds: [number, number];
  jobSeconds: [number, number];
  burstJobs: number;
  burstAt: number;
  looperCycles: number;
  looperEvery: number;
  /** A rollout (SIGTERM to every instance) at this time, or null. */
  redeployAt: number | null;
  startDelay: number;
  stopDelay: number;
  sleepAfter: number;
  seed: number;
}

export interface JobRecord {
  jobId: string;
  account: string;
  kind: AccountKind;
  submittedAt: number;
  startedAt: number | null;
  endedAt: number | null;
  starts: number;
}

export interface SimReport {
  options: SimOptions;
  jobs: JobRecord[];
  /** Final D1 status of every job, by account kind. */
  statuses: Record<AccountKind, Record<string, number>>;
  failures: { jobId: string; code: string | null; message: string | null }[];
  peakInstances: number;
  refusedStarts: number;
  instancesLeftRunning: string[];
  /** Instances stopped by idling out (sleepAfter) rather than by the Worker at their job's end. */
  idledOut: number;
  looperPeakInstances: number;
  instanceSeconds: number;
  simulatedSeconds: number;
  realSeconds: number;
  burstWindow: [number, number] | null;
}

class SimClock {
  private time = 0;
  private readonly events: { at: number; seq: number; action: () => Promise<void> | void }[] = [];
  private seq = 0;
  now(): number {
    return this.time;
  }
  at(time: number, action: () => Promise<void> | void): void {
    const event = { at: Math.max(time, this.time), seq: this.seq++, action };
    let i = this.events.length;
    while (i > 0 && (this.events[i - 1]!.at > event.at || (this.events[i - 1]!.at === event.at && this.events[i - 1]!.seq > event.seq))) i -= 1;
    this.events.splice(i, 0, event);
  }
  nextTime(): number | null {
    return this.events[0]?.at ?? null;
  }
  /** Runs every event due at the earliest pending time (and events they add for that time). */
  async step(): Promise<boolean> {
    const first = this.events[0];
    if (!first) return false;
    this.time = first.at;
    while (this.events[0] && this.events[0].at <= this.time) {
      const event = this.events.shift()!;
      await event.action();
    }
    return true;
  }
}

/** The jobs queue as the simulation sees it: messages land here and are delivered at their simulated time. */
class SimQueue {
  readonly pending: { body: JobMessage; at: number; attempts: number }[] = [];
  constructor(private readonly clock: SimClock) {}
  producer(): Queue {
    const push = (body: unknown, delaySeconds = 0) =>
      this.pending.push({ body: body as JobMessage, at: this.clock.now() + delaySeconds, attempts: 1 });
    return {
      send: async (body: unknown, options?: QueueSendOptions) => void push(body, options?.delaySeconds),
      sendBatch: async (messages: Iterable<MessageSendRequest>) => {
        for (const m of messages) push(m.body, m.delaySeconds);
      },
    } as unknown as Queue;
  }
}

const ORIGIN = "http://worker.test";

export async function runFleetSimulation(options: SimOptions): Promise<SimReport> {
  const realStart = Date.now();
  const random = rng(options.seed);
  const between = ([lo, hi]: [number, number]) => lo + random() * (hi - lo);
  const clock = new SimClock();
  const queue = new SimQueue(clock);
  const jobs = new Map<string, JobRecord>();
  const durations = new Map<string, number>();
  const accountOfJob = new Map<string, string>();
  const activeInstancesOf = new Map<string, number>();
  let looperPeak = 0;
  let looperAccount = "";

  const standIn: ContainerStandIn = new ContainerStandIn(clock, {
    maxInstances: options.capacity,
    startDelay: options.startDelay,
    stopDelay: options.stopDelay,
    sleepAfter: options.sleepAfter,
    spawn: (name) => simEngine(name),
  });

  const simEnv: Env = {
    ...env,
    ENGINE_URL: "",
    ENGINE: standIn.namespace() as unknown as Env["ENGINE"],
    JOBS: queue.producer(),
    ENGINE_MAX_INSTANCES: String(options.capacity),
    // Real-time deadlines must not fire while simulated hours pass in seconds.
    ENGINE_SILENCE_TIMEOUT_SECONDS: "604800",
    MAX_QUEUE_SECONDS: "604800",
  };

  async function call(path: string, init: RequestInit & { key?: string }): Promise<Response> {
    const headers = new Headers(init.headers);
    if (init.key) headers.set("Authorization", `Bearer ${init.key}`);
    const ctx = createExecutionContext();
    const response = await app.fetch(new Request(`${ORIGIN}${path}`, { ...init, headers }), simEnv, ctx);
    return response;
  }

  /** The engine process inside one instance: verifies StartJob, then reports as a real job would. */
  function simEngine(instanceName: string): SimProcess {
    let running: { jobId: string; token: string; done: boolean } | null = null;
    const account = () => accountOfJob.get(instanceName) ?? "";
    const bump = (delta: number) => {
      const id = account();
      const n = (activeInstancesOf.get(id) ?? 0) + delta;
      activeInstancesOf.set(id, n);
      if (id === looperAccount) looperPeak = Math.max(looperPeak, n);
    };
    bump(1);
    const callback = async (suffix: string, init: RequestInit): Promise<number> => {
      const job = running!;
      const headers = new Headers(init.headers);
      headers.set("Authorization", `Bearer ${job.token}`);
      const res = await app.fetch(new Request(`${ORIGIN}/internal/v1/jobs/${job.jobId}/${suffix}`, { ...init, headers }), simEnv, createExecutionContext());
      await res.arrayBuffer();
      return res.status;
    };
    const json = (body: unknown): RequestInit => ({ method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify(body) });
    const upload = (type: string): RequestInit => ({ method: "PUT", headers: { "Content-Type": type, "Content-Length": "4" }, body: "clip" });
    return {
      async handle(request) {
        const path = new URL(request.url).pathname;
        const body = await request.text();
        const verdict = await judgeAsEngine(request.headers.get(ENGINE_SIGNATURE_HEADER), { method: request.method, path, body });
        if (verdict !== "ok") return new Response(verdict, { status: verdict === "replayed" ? 409 : 401 });
        if (path !== "/jobs") return new Response(null, { status: 404 });
        const start = StartJob.parse(JSON.parse(body));
        if (running && !running.done) return Response.json({ job_id: start.job_id, started: false }, { status: 202 });
        running = { jobId: start.job_id, token: start.token, done: false };
        const current = running;
        const record = jobs.get(start.job_id);
        if (record) {
          record.starts += 1;
          record.startedAt ??= clock.now();
        }
        const began = clock.now() + options.startDelay;
        clock.at(began + 1, async () => {
          if (current.done) return;
          if ((await callback("probe", json({ duration_seconds: 60, title: "Sim", width: 1280, height: 720, format: "mp4", size_bytes: 1000 }))) !== 200) current.done = true;
        });
        clock.at(began + (durations.get(start.job_id) ?? 120), async () => {
          if (current.done) return;
          if ((await callback("clips/0", upload("video/mp4"))) !== 200) return void (current.done = true);
          if ((await callback("clips/0/thumbnail", upload("image/jpeg"))) !== 200) return void (current.done = true);
          current.done = true; // completing: a SIGTERM from here on finds nothing to interrupt
          const clip = {
            index: 0,
            start_seconds: 0,
            end_seconds: 30,
            score: 0.5,
            reasons: ["sim"],
            width: 1080,
            height: 1920,
            reframe: "center",
            faces_count: 0,
            text: null,
            title: null,
            captions_burned: false,
            sidecars: false,
          };
          const report = { title: "Sim", source_duration_seconds: 60, clips: [clip], transcript: null, transcript_unavailable_reason: "simulated" };
          const status = await callback("complete", json(report));
          // 409: canceled meanwhile. Anything else is a broken simulation, not a fleet outcome.
          if (status !== 200 && status !== 409) throw new Error(`complete answered ${status} for ${current.jobId}`);
          if (status === 200 && record) record.endedAt = clock.now();
        });
        return Response.json({ job_id: start.job_id, started: true }, { status: 202 });
      },
      async terminate() {
        bump(-1);
        if (running && !running.done) {
          running.done = true;
          await callback("interrupted", json({ reason: "shutdown" }));
        }
      },
    };
  }

  async function deliverDue(): Promise<void> {
    for (let round = 0; round < 10_000; round += 1) {
      const due = queue.pending.filter((m) => m.at <= clock.now());
      if (due.length === 0) return;
      queue.pending.splice(0, queue.pending.length, ...queue.pending.filter((m) => m.at > clock.now()));
      for (const message of due) {
        const batch = createMessageBatch<JobMessage>("clipjobs-jobs", [
          { id: crypto.randomUUID(), timestamp: new Date(), attempts: message.attempts, body: message.body },
        ]);
        let delay = 0;
        for (const m of batch.messages) {
          const retry = m.retry.bind(m);
          m.retry = (o?: QueueRetryOptions) => {
            delay = o?.delaySeconds ?? 0;
            retry(o);
          };
        }
        const ctx = createExecutionContext();
        await handleQueue(batch, simEnv, ctx);
        const result = await getQueueResult(batch, ctx);
        if (result.retryMessages.length > 0) queue.pending.push({ body: message.body, at: clock.now() + delay, attempts: message.attempts + 1 });
      }
    }
    throw new Error("queue did not settle");
  }

  // Accounts.
  await env.DB.prepare(
    `INSERT OR IGNORE INTO plans (name, credits_per_period, requests_per_minute, max_active_jobs) VALUES
     ('sim-burst', 1000000, 100000, 1000), ('sim-single', 1000000, 100000, 1)`,
  ).run();
  async function createAccount(plan: string): Promise<{ accountId: string; apiKey: string }> {
    const res = await call("/admin/v1/accounts", {
      method: "POST",
      headers: { Authorization: `Bearer ${env.ADMIN_TOKEN}`, "Content-Type": "application/json" },
      body: JSON.stringify({ email: `sim-${crypto.randomUUID()}@example.com`, plan }),
    });
    if (res.status !== 201) throw new Error(`account: ${res.status} ${await res.text()}`);
    const body = await res.json<{ account_id: string; api_key: string }>();
    return { accountId: body.account_id, apiKey: body.api_key };
  }

  async function submit(account: { accountId: string; apiKey: string }, kind: AccountKind, retry: () => void): Promise<string | null> {
    const res = await call("/api/v1/jobs", {
      method: "POST",
      key: account.apiKey,
      headers: { "Content-Type": "application/json" },
      body: JSON.stringify({ video_url: "https://videos.example.com/sim.mp4", video_type: "general" }),
    });
    const body = await res.json<{ job_id?: string; code?: string }>();
    if (res.status !== 201 || !body.job_id) {
      if (res.status === 409 || res.status === 429) {
        retry();
        return null;
      }
      throw new Error(`submit answered ${res.status}: ${JSON.stringify(body)}`);
    }
    const jobId = body.job_id;
    accountOfJob.set(jobId, account.accountId);
    durations.set(jobId, between(options.jobSeconds));
    jobs.set(jobId, { jobId, account: account.accountId, kind, submittedAt: clock.now(), startedAt: null, endedAt: null, starts: 0 });
    return jobId;
  }

  // Single-job accounts: submit, wait for the end, think, submit again.
  const singles = await Promise.all(Array.from({ length: options.singleAccounts }, () => createAccount(options.singlePlan)));
  for (const account of singles) {
    let left = options.jobsPerSingleAccount;
    const next = async (): Promise<void> => {
      if (left <= 0) return;
      const jobId = await submit(account, "single", () => clock.at(clock.now() + 30, next));
      if (!jobId) return;
      left -= 1;
      const watch = () => {
        const record = jobs.get(jobId)!;
        if (record.endedAt !== null) clock.at(clock.now() + between(options.thinkSeconds), next);
        else clock.at(clock.now() + 15, watch);
      };
      clock.at(clock.now() + 15, watch);
    };
    clock.at(random() * options.arrivalWindow, next);
  }

  // One account submits a burst of jobs at once.
  let burstIds: string[] = [];
  if (options.burstJobs > 0) {
    const burst = await createAccount("sim-burst");
    clock.at(options.burstAt, async () => {
      const ids = await Promise.all(Array.from({ length: options.burstJobs }, () => submit(burst, "burst", () => undefined)));
      burstIds = ids.filter((id): id is string => id !== null);
    });
  }

  // One free account loops submit + cancel.
  if (options.looperCycles > 0) {
    const looper = await createAccount("free");
    looperAccount = looper.accountId;
    let cycles = 0;
    const cycle = async () => {
      if (cycles >= options.looperCycles) return;
      cycles += 1;
      const jobId = await submit(looper, "looper", () => undefined);
      if (jobId) {
        clock.at(clock.now() + 3 + random() * 20, async () => {
          const res = await call(`/api/v1/jobs/${jobId}/cancel`, { method: "POST", key: looper.apiKey });
          await res.arrayBuffer();
          const record = jobs.get(jobId)!;
          if (res.status === 200) record.endedAt = clock.now();
        });
      }
      clock.at(clock.now() + options.looperEvery, cycle);
    };
    clock.at(random() * 60, cycle);
  }

  if (options.redeployAt !== null) clock.at(options.redeployAt, () => standIn.redeploy());

  // Run: every step, deliver whatever the queue holds for now.
  let steps = 0;
  for (;;) {
    await deliverDue();
    const nextEvent = clock.nextTime();
    const nextMessage = queue.pending.length > 0 ? Math.min(...queue.pending.map((m) => m.at)) : null;
    if (nextEvent === null && nextMessage === null) break;
    if (nextEvent === null || (nextMessage !== null && nextMessage < nextEvent)) {
      clock.at(nextMessage!, () => undefined);
    }
    await clock.step();
    if (++steps > 2_000_000) throw new Error("simulation did not finish");
  }

  // Outcome, from D1.
  const statuses: SimReport["statuses"] = { single: {}, burst: {}, looper: {} };
  const failures: SimReport["failures"] = [];
  const ids = [...jobs.keys()];
  for (let i = 0; i < ids.length; i += 80) {
    const chunk = ids.slice(i, i + 80);
    const { results } = await env.DB.prepare(`SELECT id, status, error_code, error_message FROM jobs WHERE id IN (${chunk.map(() => "?").join(",")})`)
      .bind(...chunk)
      .all<{ id: string; status: string; error_code: string | null; error_message: string | null }>();
    for (const row of results) {
      const kind = jobs.get(row.id)!.kind;
      statuses[kind][row.status] = (statuses[kind][row.status] ?? 0) + 1;
      if (row.status === "failed") failures.push({ jobId: row.id, code: row.error_code, message: row.error_message });
    }
  }
  const burstStarts = burstIds.map((id) => jobs.get(id)!.startedAt ?? Infinity);
  return {
    options,
    jobs: [...jobs.values()],
    statuses,
    failures,
    peakInstances: standIn.peakInUse,
    refusedStarts: standIn.refusedStarts,
    instancesLeftRunning: standIn.running(),
    idledOut: standIn.history.filter((r) => r.stopReason === "sleep").length,
    looperPeakInstances: looperPeak,
    instanceSeconds: standIn.instanceSeconds(),
    simulatedSeconds: clock.now(),
    realSeconds: (Date.now() - realStart) / 1000,
    burstWindow: burstIds.length > 0 ? [options.burstAt, Math.max(...burstStarts)] : null,
  };
}

/** The q-quantile (0..1) of the values, or 0 for none. */
export function quantile(values: number[], q: number): number {
  if (values.length === 0) return 0;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1))]!;
}

/** First-start waits (seconds) of one kind's jobs, optionally only those submitted inside a window. */
export function waits(report: SimReport, kind: AccountKind, window?: [number, number]): number[] {
  return report.jobs
    .filter((j) => j.kind === kind && j.startedAt !== null)
    .filter((j) => !window || (j.submittedAt >= window[0] && j.submittedAt <= window[1]))
    .map((j) => j.startedAt! - j.submittedAt);
}
