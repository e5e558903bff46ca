/**
 * The fleet scenarios and the checks every run of them must pass. The
 * platform's behaviour (PLATFORM) is the stand-in's, at rates chosen to make
 * every failure mode happen in a run: placement refusals below the cap, rate
 * limits, slow images, instances that need SIGKILL after a rollout's 15
 * minutes, lost `interrupted` reports and lost exit notices, Durable Object
 * calls failing while a deploy resets them.
 */
import { expect } from "vitest";
import { quantile, waits, type SimOptions, type SimReport } from "./simulation.ts";

/** The stated bound: single-job accounts' p95 wait while deep queues wait stays under one longest job. */
export const SINGLE_P95_WAIT_BOUND_SECONDS = 300;

export const PLATFORM: Pick<
  SimOptions,
  | "bootSeconds"
  | "exitSeconds"
  | "hungShare"
  | "placementRefusal"
  | "startsPerSecond"
  | "interruptedLost"
  | "onStopLost"
  | "resetWindowSeconds"
  | "resetFailureRate"
  | "consumerConcurrency"
  | "sleepAfter"
> = {
  bootSeconds: [4, 24],
  exitSeconds: [1, 15],
  hungShare: 0.05,
  placementRefusal: 0.02,
  startsPerSecond: 25,
  interruptedLost: 0.2,
  onStopLost: 0.1,
  resetWindowSeconds: 20,
  resetFailureRate: 0.2,
  consumerConcurrency: 50,
  sleepAfter: 300,
};

/** What the fleet grants at once: ENGINE_MAX_INSTANCES within ENGINE_VCPU_LIMIT (standard-4: 4 vCPU). */
export function effectiveCapacity(options: SimOptions): number {
  return Math.min(options.capacity, Math.floor((options.vcpuLimit ?? 1500) / 4));
}

/** Headroom between ENGINE_MAX_INSTANCES and max_instances, as wrangler.toml keeps it (5%, at least 1). */
export function withHeadroom(capacity: number): number {
  return capacity + Math.max(1, Math.ceil(capacity * 0.05));
}

/**
 * The mixed scenario: free single-job accounts submitting one job after
 * another, deep queues submitting at once, one free account looping submit
 * + cancel, and a deploy (rollout) in the middle.
 */
export function scenario(size: {
  capacity: number;
  singleAccounts: number;
  jobsPerSingleAccount: number;
  bursts: number[];
  looperCycles: number;
  arrivalWindow: number;
  thinkSeconds: [number, number];
  burstAt: number;
  rolloutAt: number;
  vcpuLimit?: number;
  maxInstances?: number;
  seed?: number;
}): SimOptions {
  return {
    ...PLATFORM,
    capacity: size.capacity,
    maxInstances: size.maxInstances ?? withHeadroom(size.capacity),
    vcpuLimit: size.vcpuLimit,
    singleAccounts: size.singleAccounts,
    jobsPerSingleAccount: size.jobsPerSingleAccount,
    singlePlan: "free",
    arrivalWindow: size.arrivalWindow,
    thinkSeconds: size.thinkSeconds,
    jobSeconds: [60, 300],
    bursts: size.bursts,
    burstAt: size.burstAt,
    looperCycles: size.looperCycles,
    looperEvery: 90,
    rolloutAt: size.rolloutAt,
    seed: size.seed ?? 20261123,
  };
}

export interface Figures {
  jobs: number;
  completed: number;
  jobsPerMinute: number;
  waits: [number, number, number];
  instanceSecondsPerJob: number;
  failures: number;
  stranded: number;
  peak: string;
}

export function figures(report: SimReport): Figures {
  const completed = report.jobs.filter((j) => j.endedAt !== null && j.startedAt !== null);
  const first = Math.min(...report.jobs.map((j) => j.submittedAt));
  const last = Math.max(...completed.map((j) => j.endedAt!));
  const all = waits(report);
  return {
    jobs: report.jobs.length,
    completed: completed.length,
    jobsPerMinute: completed.length > 0 ? (completed.length / Math.max(1, last - first)) * 60 : 0,
    waits: [quantile(all, 0.5), quantile(all, 0.95), quantile(all, 0.99)],
    instanceSecondsPerJob: report.instanceSeconds / Math.max(1, completed.length),
    failures: report.failures.length,
    stranded: report.stranded.length,
    peak: `${report.peakInstances}/${effectiveCapacity(report.options)} (platform ${report.platformLimit})`,
  };
}

export function summarize(report: SimReport): string {
  const f = figures(report);
  const r = report;
  const duringBurst = waits(r, "single", r.burstWindow ?? undefined);
  const burstWaits = waits(r, "burst");
  return (
    `fleet simulation: ${f.jobs} jobs from ${r.options.singleAccounts + r.options.bursts.length + (r.options.looperCycles > 0 ? 1 : 0)} accounts, ` +
    `${r.simulatedSeconds.toFixed(0)} simulated s in ${r.realSeconds.toFixed(1)} real s; ` +
    `${f.jobsPerMinute.toFixed(1)} jobs/min; waits p50/p95/p99 ${f.waits.map((w) => w.toFixed(0)).join("/")} s; ` +
    `single-job waits while deep queues waited: p95 ${quantile(duringBurst, 0.95).toFixed(0)} s (${duringBurst.length} jobs); ` +
    `deep-queue waits p50 ${quantile(burstWaits, 0.5).toFixed(0)} s max ${Math.max(0, ...burstWaits).toFixed(0)} s; ` +
    `instance-s/job ${f.instanceSecondsPerJob.toFixed(0)}; peak instances ${f.peak}; failures ${f.failures}; stranded ${f.stranded}; ` +
    `restarted ${r.jobs.filter((j) => j.starts > 1).length}; refusals ${JSON.stringify(r.refusals)}, at the limit ${r.refusedAtLimit}; ` +
    `lost: interrupted ${r.interruptedLost}, exit notices ${r.onStopLost}, Durable Object calls ${r.resetFailures}; ` +
    `submissions refused ${JSON.stringify(r.refusedSubmissions)}; deliveries ${r.deliveries}, dead-lettered ${r.deadLettered}, most messages queued for one job ${r.maxMessagesPerJob}; ` +
    `statuses ${JSON.stringify(r.statuses)}; time spent: ${r.spent}; calls ${r.calls}`
  );
}

/** The judgement's figures in one line: who judged the completed jobs, why signals did, what Workers AI saw. */
export function judgementLine(report: SimReport): string {
  const j = report.judgement;
  const limits = report.options.workersAi;
  const fellBack = Object.values(j.signals).reduce((a, b) => a + b, 0);
  return (
    `judgement (Workers AI limits: ${limits ? `${limits.textPerMinute} text generation, ${limits.speechPerMinute} speech` : "the documented 300 text generation, 720 speech"} a minute): ` +
    `judged by the model ${j.model}, in part ${j.modelInPart}, by signals ${fellBack} ${JSON.stringify(j.signals)}, unrecorded ${j.unrecorded}; ` +
    `speech chunks answered ${j.chunksAnswered}, refused ${j.chunksRefused}; Workers AI calls ${JSON.stringify(j.workersAi.calls)}, ` +
    `refused for its rate limit ${JSON.stringify(j.workersAi.refused)}, busiest minute ${JSON.stringify(j.workersAi.busiestMinute)}`
  );
}

/**
 * Workers AI's limits never fail or strand a job (expectFairFleet checks that):
 * every completed job records who judged it, a fallback to signals names a
 * cause the budget or the model gave, and the account-wide budget keeps the
 * fleet within Workers AI's limits, so Workers AI itself refuses nothing.
 */
export function expectJudgedFleet(report: SimReport): void {
  const j = report.judgement;
  const completed = Object.values(report.statuses).reduce((sum, byStatus) => sum + (byStatus.completed ?? 0), 0);
  expect(j.unrecorded).toBe(0);
  expect(j.model + j.modelInPart + Object.values(j.signals).reduce((a, b) => a + b, 0)).toBe(completed);
  expect(Object.keys(j.signals).filter((cause) => cause.startsWith("other"))).toEqual([]);
  expect(j.workersAi.refused).toEqual({});
  const limits = report.options.workersAi ?? { textPerMinute: 300, speechPerMinute: 720 };
  expect(j.workersAi.busiestMinute.text_generation ?? 0).toBeLessThanOrEqual(limits.textPerMinute);
  expect(j.workersAi.busiestMinute.speech ?? 0).toBeLessThanOrEqual(limits.speechPerMinute);
}

/** What the issue asks of every run. */
export function expectFairFleet(report: SimReport): void {
  const options = report.options;
  // Every job ends completed, or canceled by its owner; none failed (for capacity or anything else), none stranded.
  expect(report.failures).toEqual([]);
  expect(report.stranded).toEqual([]);
  expect(report.statuses.single).toEqual({ completed: options.singleAccounts * options.jobsPerSingleAccount });
  expect(report.statuses.burst).toEqual(options.bursts.length > 0 ? { completed: options.bursts.reduce((a, b) => a + b, 0) } : {});
  expect(Object.keys(report.statuses.looper).every((s) => s === "completed" || s === "canceled")).toBe(true);
  if (options.looperCycles > 0) expect(report.statuses.looper.canceled ?? 0).toBeGreaterThan(0);
  // The deploy interrupted running jobs; they were started again and completed.
  if (options.rolloutAt !== null) expect(report.jobs.some((j) => j.starts > 1)).toBe(true);
  // Never more instances than the fleet's capacity (stopping ones included), so never a start refused at the
  // platform's limit; none left at the end; none stopped by idling out rather than by the Worker.
  expect(report.peakInstances).toBeLessThanOrEqual(effectiveCapacity(options));
  expect(report.refusedAtLimit).toBe(0);
  expect(report.instancesLeftRunning).toEqual([]);
  expect(report.idledOut).toBe(0);
  // One dispatch chain per job: never more than two messages queued for one job (a chain's next message and a
  // redelivery of the one being handled).
  expect(report.maxMessagesPerJob).toBeLessThanOrEqual(2);
  // The submit + cancel account never holds more than one instance.
  expect(report.looperPeakInstances).toBeLessThanOrEqual(1);
  // Fairness: deep queues do not starve single-job accounts.
  if (report.burstWindow) {
    const duringBurst = waits(report, "single", report.burstWindow);
    expect(duringBurst.length).toBeGreaterThan(10);
    expect(quantile(duringBurst, 0.95)).toBeLessThan(SINGLE_P95_WAIT_BOUND_SECONDS);
  }
}
