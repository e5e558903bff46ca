/**
 * The fleet simulation at 1, 5, 20 and 100 instances, each at 1x, 2x and 4x
 * that many simultaneous jobs: throughput, waits per plan and the cost in
 * instance-seconds per job. Single-job accounts (plan sim-single, one active
 * job) run jobs back to back; one account on a deep plan (sim-burst) submits
 * as many jobs as there are instances at the start, so every row also shows
 * what fair turns cost a deep queue and save everyone else.
 */
import { it } from "vitest";
import { quantile, runFleetSimulation, waits, type SimReport } from "../../test/worker/fleet/simulation";

const CAPACITIES = [1, 5, 20, 100];
const LOADS = [1, 2, 4];
const JOBS_PER_ACCOUNT = 1;

function row(capacity: number, load: number, report: SimReport): string {
  const completed = report.jobs.filter((j) => j.endedAt !== null);
  const makespan = Math.max(...completed.map((j) => j.endedAt!));
  const single = waits(report, "single");
  const burst = waits(report, "burst");
  const f = (v: number) => v.toFixed(0);
  return [
    capacity,
    `${load}x (${capacity * load} jobs at once)`,
    report.jobs.length,
    ((completed.length / makespan) * 60).toFixed(1),
    `${f(quantile(single, 0.5))} / ${f(quantile(single, 0.95))} / ${f(quantile(single, 0.99))}`,
    `${f(quantile(burst, 0.5))} / ${f(quantile(burst, 0.95))} / ${f(quantile(burst, 0.99))}`,
    (report.instanceSeconds / report.jobs.length).toFixed(0),
    `${report.peakInstances}/${capacity}`,
    report.failures.length,
    report.realSeconds.toFixed(0),
  ].join(" | ");
}

it("prints the fleet table", async () => {
  const lines = [
    "| instances | load | jobs | jobs/min | single-job wait p50/p95/p99 s | deep-queue wait p50/p95/p99 s | instance-s/job | peak | failed | real s |",
    "|---|---|---|---|---|---|---|---|---|---|",
  ];
  for (const capacity of CAPACITIES) {
    for (const load of LOADS) {
      const report = await runFleetSimulation({
        capacity,
        singleAccounts: Math.max(1, capacity * load - 1),
        jobsPerSingleAccount: JOBS_PER_ACCOUNT,
        singlePlan: "sim-single",
        arrivalWindow: 1,
        thinkSeconds: [0, 0],
        jobSeconds: [60, 300],
        burstJobs: capacity,
        burstAt: 0,
        looperCycles: 0,
        looperEvery: 60,
        redeployAt: null,
        startDelay: 5,
        stopDelay: 10,
        sleepAfter: 300,
        seed: capacity * 10 + load,
      });
      const line = `| ${row(capacity, load, report)} |`;
      lines.push(line);
      console.log(line);
    }
  }
  console.log(`\nfleet bench (simulated job length 60-300 s, start 5 s, stop 10 s):\n${lines.join("\n")}`);
});
