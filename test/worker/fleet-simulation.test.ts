/**
 * Many accounts share a bounded fleet that behaves as Cloudflare's does
 * (test/worker/fleet/): free single-job accounts, a deep queue, a submit +
 * cancel loop and a deploy in the middle, through the real API, queue
 * consumer, Durable Objects and D1. This is the reduced run CI keeps;
 * `npm run bench:fleet` runs the same checks on 10,000 jobs from 1,000
 * accounts and the whole size table.
 *
 * Every job transcribes its audio and has its clips judged on Workers AI
 * through the Worker's routes. Workers AI's per-minute limits are scaled
 * down with the fleet (8 engines, not hundreds: 3 text-generation and 4
 * speech requests a minute for about 5 of each a job's engines would send),
 * so the account-wide budget must make calls wait and refuse some: those
 * jobs complete on signals, with the reason.
 */
import { describe, expect, it } from "vitest";
import { expectFairFleet, expectJudgedFleet, judgementLine, scenario, summarize } from "./fleet/scenario.ts";
import { runFleetSimulation } from "./fleet/simulation.ts";

describe("fleet simulation", () => {
  it("serves every job fairly within the instance limit and Workers AI's limits through a deploy, failing and stranding none", async () => {
    const report = await runFleetSimulation({
      ...scenario({
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
      workersAi: { textPerMinute: 3, speechPerMinute: 4 },
    });
    console.log(summarize(report));
    console.log(judgementLine(report));
    expectFairFleet(report);
    expectJudgedFleet(report);
    // The limits were reached: some jobs fell back to signals for it, and the model still judged others.
    const causes = report.judgement.signals;
    expect((causes["text-generation minute spent"] ?? 0) + (causes["no transcript: speech minute spent"] ?? 0)).toBeGreaterThan(0);
    expect(report.judgement.model + report.judgement.modelInPart).toBeGreaterThan(0);
  }, 900_000);
});
