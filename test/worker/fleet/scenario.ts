/**
 * The fleet scenario the issue names, and the checks every run of it must
 * pass: free single-job accounts, one account submitting a burst at once, one
 * free account looping submit + cancel, and a redeploy in the middle. The
 * test suite runs it at a reduced size; `npm run bench:fleet` runs it at the
 * production limit (20 instances, 1,000+ jobs, 200 accounts).
 */
import { expect } from "vitest";
import { quantile, waits, type SimOptions, type SimReport } from "./simulation";

/** The stated bound: single-job accounts' p95 wait while the burst is queued stays under one longest job. */
export const SINGLE_P95_WAIT_BOUND_SECONDS = 300;

export function scenario(size: { capacity: number; singleAccounts: number; jobsPerSingleAccount: number; burstJobs: number; looperCycles: number }): SimOptions {
  return {
    ...size,
    singlePlan: "free",
    arrivalWindow: 3600,
    thinkSeconds: [1200, 3600],
    jobSeconds: [60, 300],
    burstAt: 1800,
    looperEvery: 90,
    redeployAt: 5400,
    startDelay: 5,
    stopDelay: 10,
    sleepAfter: 300,
    seed: 20261123,
  };
}

export function summarize(report: SimReport): string {
  const total = report.jobs.length;
  const singleWaits = waits(report, "single");
  const duringBurst = waits(report, "single", report.burstWindow ?? undefined);
  const burstWaits = waits(report, "burst");
  return (
    `fleet simulation: ${total} jobs from ${report.options.singleAccounts + 2} accounts, ${report.simulatedSeconds.toFixed(0)} simulated s in ${report.realSeconds.toFixed(1)} real s; ` +
    `peak instances ${report.peakInstances}/${report.options.capacity}, refused starts ${report.refusedStarts}; ` +
    `single waits p50 ${quantile(singleWaits, 0.5).toFixed(0)} s p95 ${quantile(singleWaits, 0.95).toFixed(0)} s; ` +
    `during the burst (${duringBurst.length} jobs) p95 ${quantile(duringBurst, 0.95).toFixed(0)} s; ` +
    `burst waits p50 ${quantile(burstWaits, 0.5).toFixed(0)} s max ${Math.max(...burstWaits).toFixed(0)} s; ` +
    `restarted after the redeploy ${report.jobs.filter((j) => j.starts > 1).length}; ` +
    `instance-seconds per job ${(report.instanceSeconds / total).toFixed(0)}; statuses ${JSON.stringify(report.statuses)}`
  );
}

/** What the issue asks of every run. */
export function expectFairFleet(report: SimReport): void {
  const options = report.options;
  // Every job ends completed, or canceled by its owner; none failed (for capacity or anything else).
  expect(report.failures).toEqual([]);
  expect(report.statuses.single).toEqual({ completed: options.singleAccounts * options.jobsPerSingleAccount });
  expect(report.statuses.burst).toEqual({ completed: options.burstJobs });
  expect(Object.keys(report.statuses.looper).every((s) => s === "completed" || s === "canceled")).toBe(true);
  expect(report.statuses.looper.canceled ?? 0).toBeGreaterThan(0);
  // The redeploy interrupted running jobs; they were started again and completed.
  expect(report.jobs.some((j) => j.starts > 1)).toBe(true);
  // Never more instances than the limit; the limit is reached; none left at the end, each stopped by the
  // Worker at its job's end rather than by idling out.
  expect(report.peakInstances).toBe(options.capacity);
  expect(report.instancesLeftRunning).toEqual([]);
  expect(report.idledOut).toBe(0);
  // The submit + cancel account never holds more than one instance.
  expect(report.looperPeakInstances).toBeLessThanOrEqual(1);
  // Fairness: the burst does not starve single-job accounts.
  const duringBurst = waits(report, "single", report.burstWindow ?? undefined);
  expect(duringBurst.length).toBeGreaterThan(10);
  expect(quantile(duringBurst, 0.95)).toBeLessThan(SINGLE_P95_WAIT_BOUND_SECONDS);
}
