/**
 * The fleet scenario at the production limit (20 instances, 1,060
 * jobs from 200 accounts), with every check the test suite makes at a reduced
 * size (test/worker/fleet-simulation.test.ts).
 */
import { it } from "vitest";
import { expectFairFleet, scenario, summarize } from "../../test/worker/fleet/scenario";
import { runFleetSimulation } from "../../test/worker/fleet/simulation";

it("the issue's scenario at the production limit: 20 instances, 1,060 jobs from 200 accounts", async () => {
  const report = await runFleetSimulation(scenario({ capacity: 20, singleAccounts: 198, jobsPerSingleAccount: 5, burstJobs: 50, looperCycles: 20 }));
  console.log(summarize(report));
  expectFairFleet(report);
});

