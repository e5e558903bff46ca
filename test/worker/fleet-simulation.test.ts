/**
 * Many accounts share a bounded fleet: the scenario (free single-job
 * accounts, a burst of jobs from one account, a submit + cancel loop, a
 * redeploy) through the real API, queue consumer, Durable Objects and D1, with
 * the Container binding played by a stand-in. This is the reduced run that CI
 * keeps (about 200 jobs, 8 instances); `npm run bench:fleet` runs the same
 * scenario and checks at the production limit: 20 instances, 1,060 jobs, 200
 * accounts.
 */
import { describe, it } from "vitest";
import { expectFairFleet, scenario, summarize } from "./fleet/scenario";
import { runFleetSimulation } from "./fleet/simulation";

describe("fleet simulation", () => {
  it("serves every job fairly within the instance limit, failing none for capacity", async () => {
    const report = await runFleetSimulation(scenario({ capacity: 8, singleAccounts: 78, jobsPerSingleAccount: 2, burstJobs: 40, looperCycles: 15 }));
    console.log(summarize(report));
    expectFairFleet(report);
  }, 900_000);
});
