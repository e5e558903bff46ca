/**
 * `npm run bench:fleet`, part 2: 10,030 jobs from 1,000 accounts with a
 * deploy in the middle, on a fleet sized by the account's vCPU: 998
 * single-job free accounts submitting ten jobs each, one after another; one
 * account submitting 30 at once; one looping submit + cancel. ENGINE_MAX_INSTANCES
 * is 400 and max_instances 400, but ENGINE_VCPU_LIMIT 1,440 (of the
 * account's 1,500) caps the fleet at 360 standard-4 instances; the platform
 * itself stops at 375. Every job transcribes and is judged on Workers AI at
 * its documented default limits (300 text-generation and 720 speech
 * requests a minute for the account). Every check of the CI run applies.
 */
import { it } from "vitest";
import { effectiveCapacity, expectFairFleet, expectJudgedFleet, figures, judgementLine, scenario, summarize } from "../../test/worker/fleet/scenario.ts";
import { runFleetSimulation } from "../../test/worker/fleet/simulation.ts";

it("10,030 jobs from 1,000 accounts through a rollout", async () => {
  const options = scenario({
    capacity: 400,
    maxInstances: 400,
    vcpuLimit: 1440,
    singleAccounts: 998,
    jobsPerSingleAccount: 10,
    bursts: [30],
    looperCycles: 20,
    arrivalWindow: 1200,
    thinkSeconds: [120, 900],
    burstAt: 1800,
    rolloutAt: 2700,
  });
  const report = await runFleetSimulation({ ...options, progressEvery: 600, quiet: true });
  const f = figures(report);
  console.log(summarize(report));
  console.log(judgementLine(report));
  console.log(
    `\n| scenario | jobs | accounts | jobs/min | wait p50/p95/p99 s | instance-s/job | failures | stranded | peak/cap (platform) | real s |\n|---|---|---|---|---|---|---|---|---|---|\n` +
      `| 1,000 accounts, rollout at 45 min | ${f.jobs} | 1,000 | ${f.jobsPerMinute.toFixed(1)} | ${f.waits.map((w) => w.toFixed(0)).join(" / ")} | ${f.instanceSecondsPerJob.toFixed(0)} | ${f.failures} | ${f.stranded} | ${report.peakInstances}/${effectiveCapacity(options)} (${report.platformLimit}) | ${report.realSeconds.toFixed(0)} |`,
  );
  expectFairFleet(report);
  expectJudgedFleet(report);
});
