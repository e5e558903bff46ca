/**
 * `npm run bench:fleet`, part 1: the size table. The fleet simulation
 * (test/worker/fleet/: the real Worker, queue consumer, Durable Objects and
 * D1, with a Container stand-in that fails as the platform does) at 1, 5, 20
 * and 100 instances, each at 1x, 2x and 4x that many simultaneous jobs:
 * single-job accounts (one job each, all at once) plus one deep-queue
 * account submitting as many jobs as there are instances.
 */
import { it } from "vitest";
import { expectJudgedFleet, figures, PLATFORM, withHeadroom } from "../../test/worker/fleet/scenario.ts";
import { quantile, runFleetSimulation, waits } from "../../test/worker/fleet/simulation.ts";

const CAPACITIES = [1, 5, 20, 100];
const LOADS = [1, 2, 4];

it("prints the fleet table", async () => {
  const lines = [
    "| instances | load | jobs | jobs/min | wait p50/p95/p99 s | single-job wait p50/p95/p99 s | deep-queue wait p50/p95/p99 s | instance-s/job | failures | stranded | judged by signals (Workers AI limits) | peak/cap (platform) | real s |",
    "|---|---|---|---|---|---|---|---|---|---|---|---|---|",
  ];
  const f0 = (v: number) => v.toFixed(0);
  const q3 = (values: number[]) => [0.5, 0.95, 0.99].map((q) => f0(quantile(values, q))).join(" / ");
  for (const capacity of CAPACITIES) {
    for (const load of LOADS) {
      const report = await runFleetSimulation({
        ...PLATFORM,
        capacity,
        maxInstances: withHeadroom(capacity),
        singleAccounts: Math.max(1, capacity * load - 1),
        jobsPerSingleAccount: 1,
        singlePlan: "sim-single",
        arrivalWindow: 1,
        thinkSeconds: [0, 0],
        jobSeconds: [60, 300],
        bursts: [capacity],
        burstAt: 0,
        looperCycles: 0,
        looperEvery: 60,
        rolloutAt: null,
        seed: capacity * 10 + load,
        quiet: true,
      });
      const f = figures(report);
      const line = [
        capacity,
        `${load}x (${capacity * load} at once)`,
        f.jobs,
        f.jobsPerMinute.toFixed(1),
        f.waits.map(f0).join(" / "),
        q3(waits(report, "single")),
        q3(waits(report, "burst")),
        f0(f.instanceSecondsPerJob),
        f.failures,
        f.stranded,
        Object.values(report.judgement.signals).reduce((a, b) => a + b, 0),
        `${report.peakInstances}/${capacity} (${report.platformLimit})`,
        report.realSeconds.toFixed(0),
      ].join(" | ");
      lines.push(`| ${line} |`);
      expectJudgedFleet(report);
      console.log(`| ${line} |`);
    }
  }
  console.log(`\nfleet table (jobs of 60-300 s, images booting in 4-30 s, placement refusals 2%, no rollout; Workers AI at its default 300 text-generation and 720 speech requests a minute):\n${lines.join("\n")}`);
});
