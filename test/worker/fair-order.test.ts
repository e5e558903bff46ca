import { describe, expect, it } from "vitest";
import { fairOrder, type WaitingJob } from "../../src/fleet/fair-order";

const job = (jobId: string, accountId: string, seq: number): WaitingJob => ({ jobId, accountId, seq });

describe("the capacity rule", () => {
  it("takes accounts in turn, not by how much each submitted", () => {
    const burst = Array.from({ length: 5 }, (_, i) => job(`b${i}`, "burst", i + 1));
    const order = fairOrder([...burst, job("s1", "single-1", 10), job("s2", "single-2", 11)], { running: new Map(), lastServed: new Map() });
    // One of the burst, then each single account, then the rest of the burst in its own order.
    expect(order.map((j) => j.jobId)).toEqual(["b0", "s1", "s2", "b1", "b2", "b3", "b4"]);
  });

  it("serves the accounts with the fewest running jobs first", () => {
    const order = fairOrder([job("b0", "burst", 1), job("s1", "single", 2)], {
      running: new Map([["burst", 3]]),
      lastServed: new Map(),
    });
    expect(order.map((j) => j.jobId)).toEqual(["s1", "b0"]);
  });

  it("breaks ties by who was served longest ago, then by arrival", () => {
    const waiting = [job("a", "A", 1), job("b", "B", 2), job("c", "C", 3)];
    const order = fairOrder(waiting, { running: new Map(), lastServed: new Map([["A", 9], ["B", 4]]) });
    // C was never served, then B (turn 4), then A (turn 9).
    expect(order.map((j) => j.jobId)).toEqual(["c", "b", "a"]);
  });

  it("keeps each account's own jobs in arrival order and loses none", () => {
    const waiting = [job("x2", "X", 7), job("y1", "Y", 2), job("x1", "X", 3), job("y2", "Y", 9)];
    const order = fairOrder(waiting, { running: new Map(), lastServed: new Map() });
    expect(order.map((j) => j.jobId)).toEqual(["y1", "x1", "y2", "x2"]);
    expect(new Set(order.map((j) => j.jobId)).size).toBe(waiting.length);
  });
});
