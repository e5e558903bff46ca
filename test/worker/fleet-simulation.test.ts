/**
 * Many accounts share a bounded fleet that behaves as Cloudflare's does
 * (test/worker/fleet/): free single-job accounts, a deep queue, a submit +
 * cancel loop and a deploy in the middle, through the real API, queue
 * consumer, Durable Objects and D1. This is the reduced run CI keeps;
 * `npm run bench:fleet` runs the same checks on 10,000 jobs from 1,000
 * accounts and the whole size table.
 */
import { describe, it } from "vitest";
import { expectFairFleet, scenario, summarize } from "./fleet/scenario.ts";
import { runFleetSimulation } from "./fleet/simulation.ts";

describe("fleet simulation", () => {
  it("serves every job fairly within the instance limit through a deploy, failing and stranding none", async () => {
    const report = await runFleetSimulation(
      scenario({
        capacity: 8,
        singleAccounts: 60,
        jobsPerSingleAccount: 2,
        bursts: [30],
        looperCycles: 12,
        arrivalWindow: 3600,
        thinkSeconds: [1200, 3600],
        burstAt: 1800,
        rolloutAt: 5400,
      }),
    );
    console.log(summarize(report));
    expectFairFleet(report);
  }, 900_000);
});
