/**
 * The fleet simulation: many accounts sharing a bounded fleet of engine
 * instances, driven through the real Worker (API routes, queue consumer and
 * dead-letter consumer, engine callbacks, lifecycle), the real Durable
 * Objects (AccountState, FleetScheduler) and real D1/R2 in miniflare. Only
 * the Container binding is a stand-in (container-standin.ts, failing as
 * @cloudflare/containers and the platform do) and time is simulated
 * (sim-clock.ts): every action runs for real, at the simulated moment it
 * would happen.
 *
 * What the simulation plays besides the Worker: the jobs queue (delivery at
 * least once, the consumer's max_concurrency, redelivery with backoff, the
 * dead-letter queue after max_retries), the engine inside each instance
 * (verifies StartJob, reports as a job does, retries callbacks that answer
 * 5xx as container/src/channel/report.ts does, reports `interrupted` on SIGTERM,
 * sometimes lost), the clients (single-job accounts submitting one job after
 * another, deep queues, a submit + cancel loop), Workers AI (the account's
 * speech and text-generation models and their per-minute limits,
 * workers-ai-standin.ts: each job transcribes its audio and has its clips
 * judged through the real engine-channel routes and the real account-wide
 * budget, AiBudget), a deploy (Durable Objects
 * reset, calls into them failing for a while, containers rolled over in
 * steps), and two timers Worker code sets on the wall clock: the fleet's
 * alarm (FleetScheduler.tick, every simulated minute) and the account
 * watchdog's silence timeout (expireOverdueJob for a job silent 180 s).
 */
import { abortAllDurableObjects, createExecutionContext, createMessageBatch, env, getQueueResult } from "cloudflare:test";
import { app } from "../../../src/app.ts";
import { CHUNK_START_HEADER, ENGINE_SIGNATURE_HEADER, JudgeResult, StartJob, type JobJudgement, type JudgeRequest, type JudgeVerdict } from "#contract";
import { aiBudgetTime } from "../../../src/ai/budget.ts";
import { judgeAsEngine } from "../engine-stub.ts";
import { createAccount as createAccountRow } from "../../../src/db/accounts.ts";
import { issueApiKey } from "../../../src/keys/issue.ts";
import { followUpTick } from "../../../src/fleet/fleet-scheduler.ts";
import { fleetLimits } from "../../../src/fleet/limits.ts";
import { fleetTime } from "../../../src/fleet/time.ts";
import { expireOverdueJob } from "../../../src/jobs/lifecycle.ts";
import { handleQueue, QUEUE_MAX_RETRIES } from "../../../src/queue/consumer.ts";
import { handleDeadLetters } from "../../../src/queue/dead-letter.ts";
import type { JobMessage } from "../../../src/fleet/job-message.ts";
import { rng } from "../../media/beds.ts";
import { type SimProcess } from "./container-standin.ts";
import { privateFleet, standInFor } from "./harness.ts";
import { SimClock } from "./sim-clock.ts";
import { makeWav } from "../whisper-stand-in.ts";
import { SimWorkersAi, WORKERS_AI_LIMITS, type WorkersAiLimits, type WorkersAiTally } from "./workers-ai-standin.ts";

export type AccountKind = "single" | "burst" | "looper";

export interface SimOptions {
  /** ENGINE_MAX_INSTANCES. */
  capacity: number;
  /** `max_instances` of the container (ENGINE_MAX_INSTANCES plus headroom). */
  maxInstances: number;
  /** ENGINE_VCPU_LIMIT: this application's share of the account's 1,500 vCPU. */
  vcpuLimit?: number;
  singleAccounts: number;
  jobsPerSingleAccount: number;
  /** Plan of the single-job accounts (one active job: "free" or "sim-single"). */
  singlePlan: string;
  /** The first submission of each single-job account falls in [0, arrivalWindow). */
  arrivalWindow: number;
  /** Pause between one job's end and the account's next submission. */
  thinkSeconds: [number, number];
  jobSeconds: [number, number];
  /** Deep queues: one account per entry, submitting that many jobs at once at `burstAt`. */
  bursts: number[];
  burstAt: number;
  looperCycles: number;
  looperEvery: number;
  /** A deploy (Durable Objects reset, containers rolled over in steps) at this time, or null. */
  rolloutAt: number | null;
  rolloutSteps?: number[];
  /** Seconds from a granted start until the engine's port answers. */
  bootSeconds: [number, number];
  /** Seconds from SIGTERM to exit; `hung` of the instances wait for SIGKILL (15 minutes). */
  exitSeconds: [number, number];
  hungShare: number;
  placementRefusal: number;
  startsPerSecond: number;
  /** Chance the engine's `interrupted` report is lost; chance ClipEngine.onStop never runs. */
  interruptedLost: number;
  onStopLost: number;
  /** After a deploy: for this long, a Worker call into a Durable Object throws with this chance. */
  resetWindowSeconds: number;
  resetFailureRate: number;
  /** The jobs consumer's max_concurrency. */
  consumerConcurrency: number;
  sleepAfter: number;
  seed: number;
  /** Print a progress line every this many simulated seconds (long benches). */
  progressEvery?: number;
  /** The Workers AI account's requests a minute (default: the documented 300 text generation, 720 speech); the Worker's budget is set to the same. */
  workersAi?: WorkersAiLimits;
  /** AI_BUDGET_MAX_WAIT_SECONDS (default 10). */
  aiMaxWaitSeconds?: number;
  /** Silence the Worker's own console while the simulation runs (its warnings: thousands of lines a bench). */
  quiet?: boolean;
  /** Give up (and report what is stranded) after this much simulated time; default 48 h. */
  maxSimulatedSeconds?: number;
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
  /** Jobs not in an end state when the simulation ran out of things to do. */
  stranded: string[];
  /** Highest number of instances holding a slot at once, and the platform's limit. */
  peakInstances: number;
  platformLimit: number;
  refusals: Record<string, number>;
  refusedAtLimit: number;
  instancesLeftRunning: string[];
  /** Instances stopped by idling out (sleepAfter) rather than by the Worker at their job's end. */
  idledOut: number;
  looperPeakInstances: number;
  instanceSeconds: number;
  deliveries: number;
  deadLettered: number;
  /** Most messages waiting in the queue for one job at once. */
  maxMessagesPerJob: number;
  interruptedLost: number;
  onStopLost: number;
  resetFailures: number;
  simulatedSeconds: number;
  realSeconds: number;
  /** Where the real time went, by kind of call (overlapping calls each count their own time). */
  spent: string;
  /** Calls to each binding per job (tally above). */
  calls: string;
  /** Submissions answered with an error the client retries, by status and code. */
  refusedSubmissions: Record<string, number>;
  burstWindow: [number, number] | null;
  judgement: JudgementFigures;
}

/** Who judged the completed jobs' clips, and why signals did where they did. */
export interface JudgementFigures {
  /** Completed jobs whose every candidate the model judged. */
  model: number;
  /** Completed jobs the model judged in part (a window refused), the rest left to signals. */
  modelInPart: number;
  /** Completed jobs judged by signals alone, by cause. */
  signals: Record<string, number>;
  /** Completed jobs with no judgement recorded (none should be). */
  unrecorded: number;
  /** Speech chunks the Worker answered, and refused (the account's speech minute spent: the job goes on without a transcript). */
  chunksAnswered: number;
  chunksRefused: number;
  /** What reached Workers AI, what it refused, its busiest minute. */
  workersAi: WorkersAiTally;
}

/** Sorts a job's judgement fallback reason into its cause (src/engine/judge.ts's wording; the sim engine's for no transcript). */
export function fallbackCause(reason: string | null): string {
  const text = reason ?? "";
  if (/No transcript/.test(text)) return /budget for speech/.test(text) ? "no transcript: speech minute spent" : "no transcript: other";
  if (/request budget was spent/.test(text)) return "text-generation minute spent";
  if (/quota or capacity/.test(text)) return "Workers AI refused (429)";
  if (/judgement budget/.test(text)) return "the job's own budget";
  if (/in time/.test(text)) return "no answer in time";
  return `other: ${text.slice(0, 80)}`;
}

const ORIGIN = "http://worker.test";

/** Wall time spent per kind of Worker call (what a run's real seconds go to). */
class Spent {
  readonly by = new Map<string, { n: number; ms: number }>();
  async on<T>(label: string, work: () => Promise<T>): Promise<T> {
    const start = Date.now();
    try {
      return await work();
    } finally {
      const entry = this.by.get(label) ?? { n: 0, ms: 0 };
      entry.n += 1;
      entry.ms += Date.now() - start;
      this.by.set(label, entry);
    }
  }
  summary(): string {
    return [...this.by.entries()]
      .sort((a, b) => b[1].ms - a[1].ms)
      .map(([label, { n, ms }]) => `${label} ${n}x ${(ms / Math.max(1, n)).toFixed(1)} ms`)
      .join(", ");
  }
}
/**
 * Calls the Worker makes to each binding (D1 round trips by statement, Durable
 * Object calls by method, R2 operations, queue sends, engine requests): the
 * run's cost per job, by what it is made of. Calls made inside the Durable
 * Objects themselves (their own SQLite) are theirs and not counted.
 */
class Tally {
  readonly counts = new Map<string, number>();
  add(label: string, n = 1): void {
    this.counts.set(label, (this.counts.get(label) ?? 0) + n);
  }
  /** The D1 binding, counting each round trip (a batch is one, whatever it holds) by its statement. */
  d1(real: D1Database): D1Database {
    const tally = this;
    // Keyed by the statement's text as written (cheap); shortened when printed.
    const label = (sql: string) => `D1 ${sql}`;
    const wrap = (statement: D1PreparedStatement, sql: string): D1PreparedStatement => {
      const s = statement as unknown as Record<string, (...a: unknown[]) => unknown>;
      for (const method of ["first", "all", "run", "raw"]) {
        const original = s[method]!.bind(statement);
        s[method] = (...a: unknown[]) => {
          tally.add(label(sql));
          return original(...a);
        };
      }
      const bind = s.bind!.bind(statement);
      s.bind = (...a: unknown[]) => wrap(bind(...a) as D1PreparedStatement, sql);
      return statement;
    };
    return new Proxy(real, {
      get(target, prop) {
        const value = Reflect.get(target, prop) as unknown;
        if (prop === "prepare") return (sql: string) => wrap(target.prepare(sql), sql);
        if (prop === "batch") {
          return (statements: D1PreparedStatement[]) => {
            tally.add(`D1 batch of ${statements.length}`);
            return target.batch(statements);
          };
        }
        return typeof value === "function" ? (value as (...a: unknown[]) => unknown).bind(target) : value;
      },
    });
  }
  /** A binding whose every method call is counted as `name.method`. */
  binding<T extends object>(name: string, real: T): T {
    const tally = this;
    return new Proxy(real, {
      get(target, prop) {
        const value = Reflect.get(target, prop) as unknown;
        if (typeof value !== "function") return value;
        return (...a: unknown[]) => {
          tally.add(`${name}.${String(prop)}`);
          return (value as (...a: unknown[]) => unknown).apply(target, a);
        };
      },
    });
  }
  /** Calls per job, most first. */
  perJob(jobs: number): string {
    const rows = [...this.counts.entries()].sort((a, b) => b[1] - a[1]);
    const total = (prefix: string) => rows.filter(([l]) => l.startsWith(prefix)).reduce((sum, [, n]) => sum + n, 0) / Math.max(1, jobs);
    return (
      `per job: D1 round trips ${total("D1 ").toFixed(1)}, Durable Object calls ${(total("ACCOUNTS.") + total("FLEET.")).toFixed(1)}, ` +
      `R2 ${(total("CLIPS.") + total("UPLOADS.")).toFixed(1)}, jobs-queue sends ${total("JOBS.").toFixed(1)}, engine requests ${total("ENGINE.").toFixed(1)}; ` +
      rows.map(([l, n]) => `${l.replace(/\s+/g, " ").trim().slice(0, 70)} ${(n / Math.max(1, jobs)).toFixed(2)}`).join("; ")
    );
  }
}
const DO_RESET = "Durable Object reset because its code was updated.";
/** The sim engine's audio: a few seconds a chunk stand for its 30 (Workers AI's limit counts requests, not seconds). */
const SPEECH_CHUNKS = 2;
const CHUNK_AUDIO = makeWav(2);
const CLIPS_WANTED = 5;

/** The engine's /judge request for a 60 s source: three candidates per clip asked, each with its sentences. */
function judgeRequestOf(): JudgeRequest {
  const candidates = Array.from({ length: CLIPS_WANTED * 3 }, (_, id) => {
    const start = (id * 3) % 40;
    const texts = ["Why does the fleet share one budget?", "Because Workers AI counts the whole account.", `That is answer number ${id + 1}!`];
    return {
      id,
      start,
      end: start + 18,
      signal_score: Math.round((0.9 - id * 0.04) * 100) / 100,
      sentences: texts.map((text, i) => ({ start: start + i * 6, end: start + i * 6 + 6, text })),
    };
  });
  return { language: "en", post_language: null, video_type: "general", prompt: null, clips_wanted: CLIPS_WANTED, source_duration_seconds: 60, candidates, sections: [] };
}
const JUDGE_BODY = JSON.stringify(judgeRequestOf());
const SILENCE_SECONDS = 180;

/** The jobs queue: at least once, the consumer's concurrency, redelivery with backoff, the dead-letter queue. */
class SimQueue {
  private readonly ready: { body: JobMessage; attempts: number }[] = [];
  private inFlight = 0;
  private readonly pendingPerJob = new Map<string, number>();
  deliveries = 0;
  deadLettered = 0;
  maxPerJob = 0;

  constructor(
    private readonly clock: SimClock,
    private readonly concurrency: number,
    private readonly consume: (body: JobMessage, attempts: number) => Promise<{ retryDelay: number | null }>,
    private readonly deadLetter: (body: JobMessage) => Promise<void>,
  ) {}

  producer(): Queue {
    const push = (body: unknown, delaySeconds = 0) => this.push(body as JobMessage, delaySeconds, 1);
    return {
      send: async (body: unknown, options?: QueueSendOptions) => push(body, options?.delaySeconds),
      sendBatch: async (messages: Iterable<MessageSendRequest>) => {
        for (const m of messages) push(m.body, m.delaySeconds);
      },
    } as unknown as Queue;
  }

  private push(body: JobMessage, delaySeconds: number, attempts: number): void {
    const pending = (this.pendingPerJob.get(body.job_id) ?? 0) + 1;
    this.pendingPerJob.set(body.job_id, pending);
    this.maxPerJob = Math.max(this.maxPerJob, pending);
    this.clock.at(this.clock.now() + delaySeconds, () => {
      this.ready.push({ body, attempts });
      this.kick();
    });
  }

  private kick(): void {
    while (this.inFlight < this.concurrency && this.ready.length > 0) {
      const message = this.ready.shift()!;
      this.inFlight += 1;
      this.clock.spawn(async () => {
        try {
          this.pendingPerJob.set(message.body.job_id, (this.pendingPerJob.get(message.body.job_id) ?? 1) - 1);
          this.deliveries += 1;
          const { retryDelay } = await this.consume(message.body, message.attempts);
          if (retryDelay === null) return;
          if (message.attempts >= QUEUE_MAX_RETRIES) {
            this.deadLettered += 1;
            await this.deadLetter(message.body);
          } else {
            this.push(message.body, retryDelay, message.attempts + 1);
          }
        } finally {
          this.inFlight -= 1;
          this.kick();
        }
      });
    }
  }
}

export async function runFleetSimulation(options: SimOptions): Promise<SimReport> {
  const realStart = Date.now();
  const spent = new Spent();
  const random = rng(options.seed);
  const between = ([lo, hi]: [number, number]) => lo + random() * (hi - lo);
  // Simulated time far ahead of the wall clock: a wall-clock alarm of the simulation's own scheduler never fires during the run.
  const clock = new SimClock(Date.now() + 365 * 86_400_000);
  const wallClock = fleetTime.now;
  fleetTime.now = () => clock.epochMs();
  // The account-wide Workers AI budget counts its minute, and makes a call wait its turn, in simulated time.
  const budgetClock = { now: aiBudgetTime.now, sleep: aiBudgetTime.sleep };
  aiBudgetTime.now = () => clock.epochMs();
  aiBudgetTime.sleep = (ms) => clock.sleep(ms / 1000);
  const aiLimits = options.workersAi ?? { textPerMinute: WORKERS_AI_LIMITS.text_generation, speechPerMinute: WORKERS_AI_LIMITS.speech };
  const workersAi = new SimWorkersAi(clock, aiLimits, random);
  let chunksAnswered = 0;
  let chunksRefused = 0;
  /** Completions so far by who judged them (the progress line's; the report reads D1). */
  const judgedSoFar = new Map<string, number>();
  const print = console.log.bind(console);
  const consoleMethods = { log: console.log, warn: console.warn, error: console.error };
  if (options.quiet) {
    const nothing = () => undefined;
    console.log = nothing;
    console.warn = nothing;
    console.error = nothing;
  }

  const jobs = new Map<string, JobRecord>();
  const durations = new Map<string, number>();
  const accountOfJob = new Map<string, string>();
  /**
   * Jobs an engine accepted and that have not ended or been handed back as far
   * as the simulation saw, and those a live engine still works on. A live
   * engine reports at least every minute (not simulated, to save time), so
   * the watchdog only ever finds jobs whose engine is gone.
   */
  const running = new Set<string>();
  const engineAlive = new Set<string>();
  const lastActivity = new Map<string, number>();
  const activeInstancesOf = new Map<string, number>();
  const onEnded = new Map<string, () => void>();
  let looperPeak = 0;
  let looperAccount = "";
  let interruptedLost = 0;
  let resetFailures = 0;
  let resetUntil = -1;
  let submissionsLeft = 0;
  const refusedSubmissions = new Map<string, number>();
  /** When an account's current, not yet successful, submission was first tried. */
  const lastAttempt = new Map<string, number>();
  /** Submitted jobs not ended yet (counted, not scanned: the clock asks after every step). */
  let unended = 0;
  const markEnded = (record: JobRecord) => {
    if (record.endedAt !== null) return;
    record.endedAt = clock.now();
    unended -= 1;
  };

  let simEnv: Env = env;
  const standIn = standInFor(clock, () => simEnv, {
    maxInstances: options.maxInstances,
    startsPerSecond: options.startsPerSecond,
    placementRefusal: options.placementRefusal,
    onStopLost: options.onStopLost,
    sleepAfter: options.sleepAfter,
    random,
    bootSeconds: () => between(options.bootSeconds),
    exitSeconds: (reason) => (reason === "rollout" && random() < options.hungShare ? 900 : between(options.exitSeconds)),
    spawn: (name) => simEngine(name),
  });

  const tally = new Tally();
  /** A Durable Object namespace whose calls are counted and (`resets`) may throw while a deploy resets the objects. */
  const resetting = <N>(name: string, real: N, resets = true): N =>
    new Proxy(real as unknown as DurableObjectNamespace, {
      get(target, prop) {
        const value = Reflect.get(target, prop) as unknown;
        if (prop !== "get") return typeof value === "function" ? (value as (...a: unknown[]) => unknown).bind(target) : value;
        return (id: DurableObjectId) => {
          const stub = target.get(id);
          return new Proxy(stub, {
            get(s, method) {
              const member = Reflect.get(s, method) as unknown;
              if (typeof member !== "function") return member;
              const call = s as unknown as Record<string, (...a: unknown[]) => unknown>;
              return (...args: unknown[]) => {
                tally.add(`${name}.${String(method)}`);
                if (resets && clock.now() <= resetUntil && random() < options.resetFailureRate) {
                  resetFailures += 1;
                  // The platform marks this error retryable (Durable Objects "Error handling" docs).
                  return Promise.reject(Object.assign(new Error(DO_RESET), { retryable: true }));
                }
                return call[method as string]!(...args);
              };
            },
          });
        };
      },
    }) as unknown as N;

  const fleet = privateFleet();
  // This run's own budget object: another run's minute (the size table runs several in one process) is not this one's.
  const budgetName = `ai-budget-${crypto.randomUUID()}`;
  const aiBudget = {
    idFromName: () => env.AI_BUDGET.idFromName(budgetName),
    get: (id: DurableObjectId) => env.AI_BUDGET.get(id),
  } as unknown as Env["AI_BUDGET"];
  const queue = new SimQueue(
    clock,
    options.consumerConcurrency,
    async (body, attempts) => {
      const batch = createMessageBatch<JobMessage>("clipjobs-jobs", [{ id: crypto.randomUUID(), timestamp: new Date(), attempts, body }]);
      let retryDelay: number | null = null;
      for (const m of batch.messages) {
        const retry = m.retry.bind(m);
        m.retry = (o?: QueueRetryOptions) => {
          retryDelay = o?.delaySeconds ?? 0;
          retry(o);
        };
      }
      const ctx = createExecutionContext();
      await spent.on("delivery", () => handleQueue(batch, simEnv, ctx));
      await getQueueResult(batch, ctx);
      return { retryDelay };
    },
    async (body) => {
      const batch = createMessageBatch<JobMessage>("clipjobs-jobs-dlq", [{ id: crypto.randomUUID(), timestamp: new Date(), attempts: 1, body }]);
      await handleDeadLetters(batch, simEnv);
    },
  );
  simEnv = {
    ...env,
    ENGINE_URL: "",
    ENGINE: standIn.namespace() as unknown as Env["ENGINE"],
    DB: tally.d1(env.DB),
    CLIPS: tally.binding("CLIPS", env.CLIPS),
    UPLOADS: tally.binding("UPLOADS", env.UPLOADS),
    JOBS: tally.binding("JOBS", queue.producer()),
    WEBHOOKS: tally.binding("WEBHOOKS", env.WEBHOOKS),
    FLEET: resetting("FLEET", fleet),
    ACCOUNTS: resetting("ACCOUNTS", env.ACCOUNTS),
    CLIENTS: resetting("CLIENTS", env.CLIENTS, false),
    UPLOAD_STATE: resetting("UPLOAD_STATE", env.UPLOAD_STATE, false),
    AI_BUDGET: resetting("AI_BUDGET", aiBudget),
    AI: workersAi.binding(),
    // The binding, not the REST transport.
    WORKERS_AI_ACCOUNT_ID: "",
    WORKERS_AI_TOKEN: "",
    AI_TEXT_GENERATION_PER_MINUTE: String(aiLimits.textPerMinute),
    AI_SPEECH_PER_MINUTE: String(aiLimits.speechPerMinute),
    AI_BUDGET_MAX_WAIT_SECONDS: String(options.aiMaxWaitSeconds ?? 10),
    ENGINE_MAX_INSTANCES: String(options.capacity),
    ENGINE_VCPU_LIMIT: String(options.vcpuLimit ?? 1500),
    // The account watchdog's own alarms run on the wall clock: the simulation plays its silence timeout below.
    ENGINE_SILENCE_TIMEOUT_SECONDS: "604800",
    MAX_QUEUE_SECONDS: "604800",
  };
  const fleetStub = fleet.get(fleet.idFromName("fleet"));

  async function call(path: string, init: RequestInit & { key?: string }): Promise<Response> {
    const headers = new Headers(init.headers);
    if (init.key) headers.set("Authorization", `Bearer ${init.key}`);
    return spent.on(`${init.method ?? "GET"} ${path.replace(/job_\w+/, ":id")}`, async () =>
      app.fetch(new Request(`${ORIGIN}${path}`, { ...init, headers }), simEnv, createExecutionContext()),
    );
  }

  /** The engine process inside one instance: verifies StartJob, then reports as a real job would. */
  function simEngine(instanceName: string): SimProcess {
    let current: { jobId: string; token: string; done: boolean } | null = null;
    const account = () => accountOfJob.get(instanceName) ?? "";
    const bump = (delta: number) => {
      const id = account();
      const n = (activeInstancesOf.get(id) ?? 0) + delta;
      activeInstancesOf.set(id, n);
      if (id === looperAccount) looperPeak = Math.max(looperPeak, n);
    };
    bump(1);
    /** A callback, retried on 5xx and lost connections like the engine's report client (5 attempts, 0.5 s doubling). */
    const callback = async (job: { jobId: string; token: string }, suffix: string, init: RequestInit): Promise<number> => (await exchange(job, suffix, init)).status;
    const exchange = async (job: { jobId: string; token: string }, suffix: string, init: RequestInit): Promise<{ status: number; text: string }> => {
      for (let attempt = 1; ; attempt += 1) {
        const headers = new Headers(init.headers);
        headers.set("Authorization", `Bearer ${job.token}`);
        const res = await spent.on(`callback ${suffix.replace(/\/\d+/, "")}`, async () =>
          app.fetch(new Request(`${ORIGIN}/internal/v1/jobs/${job.jobId}/${suffix}`, { ...init, headers }), simEnv, createExecutionContext()),
        );
        const text = await res.text();
        // A 502 is the Worker's answer that a model call failed (it already retried): the engine goes on without.
        if (res.status < 500 || res.status === 502 || attempt >= 5) {
          if (res.status < 300) lastActivity.set(job.jobId, clock.now());
          return { status: res.status, text };
        }
        await clock.sleep(0.5 * 2 ** (attempt - 1));
      }
    };
    const json = (body: unknown): RequestInit => ({ method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify(body) });
    const upload = (type: string): RequestInit => ({ method: "PUT", headers: { "Content-Type": type, "Content-Length": "4" }, body: "clip" });
    return {
      async handle(request) {
        const path = new URL(request.url).pathname;
        if (path === "/health") return Response.json({ ok: true, backend: "sim", active_jobs: current && !current.done ? 1 : 0 });
        const body = await request.text();
        // The Worker's public key verifies, and a nonce is accepted once, as the real engine does.
        const verdict = await judgeAsEngine(request.headers.get(ENGINE_SIGNATURE_HEADER), { method: request.method, path, body });
        if (verdict !== "ok") return new Response(verdict, { status: verdict === "replayed" ? 409 : 401 });
        if (path !== "/jobs") return new Response(null, { status: 404 });
        const start = StartJob.parse(JSON.parse(body));
        if (current && !current.done) return Response.json({ job_id: start.job_id, started: false }, { status: 202 });
        const job = { jobId: start.job_id, token: start.token, done: false };
        current = job;
        running.add(job.jobId);
        engineAlive.add(job.jobId);
        lastActivity.set(job.jobId, clock.now());
        const record = jobs.get(job.jobId);
        if (record) {
          record.starts += 1;
          record.startedAt ??= clock.now();
        }
        const stopped = (status: number) => {
          if (status === 409) job.done = true;
          if (job.done) engineAlive.delete(job.jobId);
          return job.done;
        };
        clock.at(clock.now() + 1, async () => {
          if (job.done) return;
          stopped(await callback(job, "probe", json({ duration_seconds: 60, title: "Sim", width: 1280, height: 720, format: "mp4", size_bytes: 1000 })));
        });
        const endAt = clock.now() + (durations.get(job.jobId) ?? 120);
        /** The job's audio, chunk by chunk, as the engine sends it: the first chunk not answered ends the transcript. */
        const transcribe = async (): Promise<{ ok: true } | { ok: false; reason: string } | null> => {
          for (let chunk = 0; chunk < SPEECH_CHUNKS; chunk += 1) {
            const answer = await exchange(job, "transcribe", {
              method: "POST",
              headers: { "Content-Type": "audio/wav", [CHUNK_START_HEADER]: (chunk * 30).toFixed(3) },
              body: CHUNK_AUDIO,
            });
            if (stopped(answer.status)) return null;
            if (answer.status !== 200) {
              chunksRefused += 1;
              const detail = (JSON.parse(answer.text) as { detail?: string }).detail ?? `status ${answer.status}`;
              return { ok: false, reason: `Speech-to-text failed: ${detail}` };
            }
            chunksAnswered += 1;
          }
          return { ok: true };
        };
        /** The judgement stage: the candidates to /judge (always 200), the answer's verdict on the clip. */
        const judge = async (): Promise<{ judgement: JobJudgement; verdict: JudgeVerdict | null } | null> => {
          const answer = await exchange(job, "judge", { method: "POST", headers: { "Content-Type": "application/json" }, body: JUDGE_BODY });
          if (stopped(answer.status)) return null;
          if (answer.status !== 200) return { judgement: { judged_by: "signals", model: null, fallback_reason: "The judgement request got no answer." }, verdict: null };
          const result = JudgeResult.parse(JSON.parse(answer.text));
          const scored = result.verdicts.filter((v) => v.scores !== null);
          const verdict = scored.sort((a, b) => b.scores!.hook - a.scores!.hook)[0] ?? null;
          return { judgement: { judged_by: result.judged_by, model: result.model, fallback_reason: result.fallback_reason }, verdict: result.judged_by === "model" ? verdict : null };
        };
        clock.at(clock.now() + 2, async () => {
          if (job.done) return;
          const heard = await transcribe();
          if (heard === null || job.done) return;
          // The analysis runs, then the judgement, halfway through the job; the renders take the rest.
          await clock.sleep(Math.max(0, (endAt - clock.now()) / 2));
          if (job.done) return;
          const judged = heard.ok
            ? await judge()
            : { judgement: { judged_by: "signals" as const, model: null, fallback_reason: `No transcript to judge the clips from. ${heard.reason}`.slice(0, 300) }, verdict: null };
          if (judged === null || job.done) return;
          await clock.sleep(Math.max(0, endAt - clock.now()));
          if (job.done) return;
          if (stopped(await callback(job, "clips/0", upload("video/mp4")))) return;
          if (stopped(await callback(job, "clips/0/thumbnail", upload("image/jpeg")))) return;
          job.done = true; // completing: a SIGTERM from here on finds nothing to interrupt
          engineAlive.delete(job.jobId);
          const clip = {
            index: 0,
            start_seconds: 0,
            end_seconds: 30,
            score: 0.5,
            reasons: [judged.verdict?.reason ?? "sim"],
            width: 1080,
            height: 1920,
            reframe: "center",
            faces_count: 0,
            text: null,
            title: judged.verdict?.title ?? null,
            captions_burned: false,
            sidecars: false,
            scores: judged.verdict?.scores ?? null,
            judged_by: judged.verdict ? "model" : "signals",
          };
          const report = {
            title: "Sim",
            source_duration_seconds: 60,
            clips: [clip],
            transcript: null,
            transcript_unavailable_reason: "simulated",
            judgement: judged.judgement,
          };
          const status = await callback(job, "complete", json(report));
          if (status === 200) {
            const key = judged.judgement.judged_by === "model" ? (judged.judgement.fallback_reason ? "model in part" : "model") : fallbackCause(judged.judgement.fallback_reason);
            judgedSoFar.set(key, (judgedSoFar.get(key) ?? 0) + 1);
          }
          // 409: canceled meanwhile, or completed by an earlier attempt whose answer was lost (a 500 after D1 moved).
          // Anything else is a broken simulation, not a fleet outcome.
          if (status !== 200 && status !== 409) throw new Error(`complete answered ${status} for ${job.jobId}`);
          running.delete(job.jobId);
          const completed = status === 200 || (await env.DB.prepare(`SELECT status FROM jobs WHERE id = ?`).bind(job.jobId).first<string>("status")) === "completed";
          if (completed && record && record.endedAt === null) {
            markEnded(record);
            onEnded.get(job.jobId)?.();
          }
        });
        return Response.json({ job_id: start.job_id, started: true }, { status: 202 });
      },
      async terminate() {
        bump(-1);
        const job = current;
        if (!job || job.done) return;
        job.done = true;
        engineAlive.delete(job.jobId);
        if (random() < options.interruptedLost) {
          interruptedLost += 1;
          return;
        }
        const status = await callback(job, "interrupted", json({ reason: "shutdown" }));
        if (status === 200) running.delete(job.jobId);
      },
    };
  }

  // Accounts.
  await env.DB.prepare(
    `INSERT OR IGNORE INTO plans (name, credits_per_period, requests_per_minute, max_active_jobs) VALUES
     ('sim-burst', 100000000, 100000, 100000), ('sim-single', 100000000, 100000, 1)`,
  ).run();
  /** An account and its key, made as the operator API makes them (minus its HTTP round trip). */
  async function createAccount(plan: string): Promise<{ accountId: string; apiKey: string }> {
    const account = await createAccountRow(env.DB, { email: `sim-${crypto.randomUUID()}@example.com`, plan });
    const { secret } = await issueApiKey(env.DB, account.id, "default");
    return { accountId: account.id, apiKey: secret };
  }

  async function submit(account: { accountId: string; apiKey: string }, kind: AccountKind): Promise<string | null> {
    const res = await call("/api/v1/jobs", {
      method: "POST",
      key: account.apiKey,
      headers: { "Content-Type": "application/json" },
      body: JSON.stringify({ video_url: "https://videos.example.com/sim.mp4", video_type: "general" }),
    });
    const body = await res.json<{ job_id?: string; code?: string; active_job_id?: string }>();
    if (res.status !== 201 || !body.job_id) {
      const key = `${res.status} ${body.code ?? ""}`;
      refusedSubmissions.set(key, (refusedSubmissions.get(key) ?? 0) + 1);
      // A one-job account's earlier submission that answered 500 may still have created its job: the 409 names
      // it, and the client takes it as its own (it was submitted at that earlier attempt).
      // A job the 409 names that D1 does not hold was never created (its enqueue failed and the slot's release
      // with it): a real client's GET would answer 404, so it is not taken as the client's own.
      if (res.status === 409 && body.active_job_id && !jobs.has(body.active_job_id) && (await jobExists(body.active_job_id))) {
        return track(body.active_job_id, account, kind, lastAttempt.get(account.accountId) ?? clock.now());
      }
      // A slot still held or a burst over the request window (or a Durable Object reset): the client tries again.
      if (res.status === 409 || res.status === 429 || res.status === 503 || res.status === 500) {
        if (!lastAttempt.has(account.accountId) || res.status === 500) lastAttempt.set(account.accountId, clock.now());
        return null;
      }
      throw new Error(`submit answered ${res.status}: ${JSON.stringify(body)}`);
    }
    lastAttempt.delete(account.accountId);
    return track(body.job_id, account, kind, clock.now());
  }

  async function jobExists(jobId: string): Promise<boolean> {
    return (await env.DB.prepare("SELECT 1 FROM jobs WHERE id = ?").bind(jobId).first()) !== null;
  }

  function track(jobId: string, account: { accountId: string }, kind: AccountKind, submittedAt: number): string {
    lastAttempt.delete(account.accountId);
    accountOfJob.set(jobId, account.accountId);
    durations.set(jobId, between(options.jobSeconds));
    jobs.set(jobId, { jobId, account: account.accountId, kind, submittedAt, startedAt: null, endedAt: null, starts: 0 });
    unended += 1;
    return jobId;
  }

  const plans = [
    ...Array.from({ length: options.singleAccounts }, () => options.singlePlan),
    ...options.bursts.map(() => "sim-burst"),
    ...(options.looperCycles > 0 ? ["free"] : []),
  ];
  const accounts: { accountId: string; apiKey: string }[] = [];
  for (let i = 0; i < plans.length; i += 50) accounts.push(...(await Promise.all(plans.slice(i, i + 50).map(createAccount))));
  const singles = accounts.slice(0, options.singleAccounts);
  const bursts = accounts.slice(options.singleAccounts, options.singleAccounts + options.bursts.length);

  // Single-job accounts: submit, wait for the end, think, submit again.
  submissionsLeft += options.singleAccounts * options.jobsPerSingleAccount;
  for (const account of singles) {
    let left = options.jobsPerSingleAccount;
    const next = async (): Promise<void> => {
      if (left <= 0) return;
      const jobId = await submit(account, "single");
      if (!jobId) return void clock.at(clock.now() + 30, next);
      left -= 1;
      submissionsLeft -= 1;
      onEnded.set(jobId, () => clock.at(clock.now() + between(options.thinkSeconds), next));
    };
    clock.at(random() * options.arrivalWindow, next);
  }

  // Deep queues: each burst account submits its jobs at once.
  const burstIds: string[] = [];
  options.bursts.forEach((count, i) => {
    submissionsLeft += count;
    const account = bursts[i]!;
    clock.at(options.burstAt, async () => {
      let left = count;
      const send = async (): Promise<void> => {
        const ids = await Promise.all(Array.from({ length: left }, () => submit(account, "burst")));
        for (const id of ids) if (id) burstIds.push(id);
        const got = ids.filter((id) => id !== null).length;
        left -= got;
        submissionsLeft -= got;
        if (left > 0) clock.at(clock.now() + 30, send);
      };
      await send();
    });
  });

  // One free account loops submit + cancel.
  if (options.looperCycles > 0) {
    const looper = accounts.at(-1)!;
    looperAccount = looper.accountId;
    let cycles = 0;
    submissionsLeft += options.looperCycles;
    const cycle = async () => {
      if (cycles >= options.looperCycles) return;
      const jobId = await submit(looper, "looper");
      if (jobId) {
        cycles += 1;
        submissionsLeft -= 1;
        onEnded.set(jobId, () => undefined);
        clock.at(clock.now() + 3 + random() * 20, async () => {
          const res = await call(`/api/v1/jobs/${jobId}/cancel`, { method: "POST", key: looper.apiKey });
          await res.arrayBuffer();
          const record = jobs.get(jobId)!;
          if (res.status === 200) {
            markEnded(record);
            running.delete(jobId);
          }
        });
      }
      clock.at(clock.now() + options.looperEvery, cycle);
    };
    clock.at(random() * 60, cycle);
  }

  // A deploy: Worker code at once (Durable Objects reset, calls into them fail for a while), containers in steps.
  if (options.rolloutAt !== null) {
    clock.at(options.rolloutAt, async () => {
      resetUntil = clock.now() + options.resetWindowSeconds;
      await abortAllDurableObjects();
      await standIn.rollout(options.rolloutSteps ?? [10, 90]);
    });
  }

  const allEnded = () => submissionsLeft <= 0 && unended === 0;

  // The fleet's alarm and the account watchdog's silence timeout, on the simulated clock.
  const timers = async (): Promise<void> => {
    if (allEnded()) return;
    // A timer whose run fails (a Durable Object reset under it) runs again at its next time, as alarms are retried.
    try {
      await followUpTick(simEnv, await spent.on("fleet tick", () => fleetStub.tick(fleetLimits(simEnv))));
    } catch (err) {
      console.warn(`fleet alarm failed: ${err instanceof Error ? err.message : String(err)}`);
    }
    for (const jobId of running) {
      if (engineAlive.has(jobId) || (lastActivity.get(jobId) ?? 0) > clock.now() - SILENCE_SECONDS) continue;
      try {
        await expireOverdueJob(simEnv, accountOfJob.get(jobId)!, jobId);
        running.delete(jobId);
      } catch (err) {
        console.warn(`watchdog expiry of ${jobId} failed: ${err instanceof Error ? err.message : String(err)}`);
      }
    }
    clock.at(clock.now() + 60, timers);
  };
  clock.at(60, timers);

  if (options.progressEvery) {
    const every = options.progressEvery;
    const progress = () => {
      if (allEnded()) return;
      const ended = jobs.size - unended;
      print(
        `  t=${(clock.now() / 60).toFixed(0)} min: ${jobs.size} submitted, ${ended} ended, ${standIn.inUse()} instances, ` +
          `${queue.deliveries} deliveries, ${((Date.now() - realStart) / 1000).toFixed(0)} real s; ` +
          `judged ${JSON.stringify(Object.fromEntries(judgedSoFar))}, speech chunks refused ${chunksRefused}, Workers AI ${JSON.stringify(workersAi.tally)}`,
      );
      clock.at(clock.now() + every, progress);
    };
    clock.at(every, progress);
  }

  // Every StartJob attempt is a sign of life for the watchdog (AccountState re-arms it at each dispatch).
  const standInFetch = simEnv.ENGINE.get.bind(simEnv.ENGINE);
  (simEnv.ENGINE as unknown as { get: (id: DurableObjectId) => unknown }).get = (id: DurableObjectId) => {
    const stub = standInFetch(id) as unknown as { fetch: (r: Request) => Promise<Response> };
    const name = id.name ?? String(id);
    return {
      ...stub,
      fetch: (request: Request) => {
        tally.add(`ENGINE.fetch ${new URL(request.url).pathname}`);
        lastActivity.set(name, clock.now());
        return stub.fetch(request);
      },
    };
  };

  try {
    await clock.run({ stop: allEnded, until: options.maxSimulatedSeconds ?? 48 * 3600 });
    // Let the last instances exit and the fleet settle.
    await clock.run({ until: clock.now() + 120 });
  } finally {
    fleetTime.now = wallClock;
    Object.assign(aiBudgetTime, budgetClock);
    Object.assign(console, consoleMethods);
  }

  // Outcome, from D1.
  const statuses: SimReport["statuses"] = { single: {}, burst: {}, looper: {} };
  const failures: SimReport["failures"] = [];
  const stranded: string[] = [];
  const ids = [...jobs.keys()];
  const judgement: JudgementFigures = { model: 0, modelInPart: 0, signals: {}, unrecorded: 0, chunksAnswered, chunksRefused, workersAi: workersAi.tally };
  for (let i = 0; i < ids.length; i += 80) {
    const chunk = ids.slice(i, i + 80);
    const { results } = await env.DB.prepare(
      `SELECT id, status, error_code, error_message, judged_by, judge_fallback_reason FROM jobs WHERE id IN (${chunk.map(() => "?").join(",")})`,
    )
      .bind(...chunk)
      .all<{ id: string; status: string; error_code: string | null; error_message: string | null; judged_by: string | null; judge_fallback_reason: string | null }>();
    for (const row of results) {
      if (row.status === "completed") {
        if (row.judged_by === "model" && row.judge_fallback_reason === null) judgement.model += 1;
        else if (row.judged_by === "model") judgement.modelInPart += 1;
        else if (row.judged_by === "signals") {
          const cause = fallbackCause(row.judge_fallback_reason);
          judgement.signals[cause] = (judgement.signals[cause] ?? 0) + 1;
        } else judgement.unrecorded += 1;
      }
      const kind = jobs.get(row.id)!.kind;
      statuses[kind][row.status] = (statuses[kind][row.status] ?? 0) + 1;
      if (row.status === "failed") failures.push({ jobId: row.id, code: row.error_code, message: row.error_message });
      if (row.status === "queued" || row.status === "processing") stranded.push(row.id);
    }
  }
  const burstStarts = burstIds.map((id) => jobs.get(id)!.startedAt ?? Infinity);
  return {
    options,
    jobs: [...jobs.values()],
    statuses,
    failures,
    stranded,
    peakInstances: standIn.peakInUse,
    platformLimit: standIn.limit(),
    refusals: { ...standIn.refusals },
    refusedAtLimit: standIn.refusedAtLimit,
    instancesLeftRunning: standIn.running(),
    idledOut: standIn.history.filter((r) => r.stopReason === "sleep").length,
    looperPeakInstances: looperPeak,
    instanceSeconds: standIn.instanceSeconds(),
    deliveries: queue.deliveries,
    deadLettered: queue.deadLettered,
    maxMessagesPerJob: queue.maxPerJob,
    interruptedLost,
    onStopLost: standIn.onStopLostCount,
    resetFailures,
    simulatedSeconds: clock.now(),
    realSeconds: (Date.now() - realStart) / 1000,
    spent: spent.summary(),
    calls: tally.perJob(jobs.size),
    refusedSubmissions: Object.fromEntries(refusedSubmissions),
    burstWindow: burstIds.length > 0 ? [options.burstAt, Math.max(...burstStarts)] : null,
    judgement,
  };
}

/** The q-quantile (0..1) of the values, or 0 for none. */
export function quantile(values: number[], q: number): number {
  if (values.length === 0) return 0;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1))]!;
}

/** First-start waits (seconds) of one kind's jobs (all kinds: undefined), optionally only those submitted inside a window. */
export function waits(report: SimReport, kind?: AccountKind, window?: [number, number]): number[] {
  return report.jobs
    .filter((j) => (kind === undefined || j.kind === kind) && j.startedAt !== null)
    .filter((j) => !window || (j.submittedAt >= window[0] && j.submittedAt <= window[1]))
    .map((j) => j.startedAt! - j.submittedAt);
}
