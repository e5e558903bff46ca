/**
 * The capacity rule (src/fleet/fair-rule.ts) and the line that holds it: the
 * order the rule gives, the ranks the line answers (checked against a plain
 * sorted list under random changes), and the FleetScheduler granting in that
 * order with the places it reports.
 */
import { runInDurableObject } from "cloudflare:test";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { lineOrder, roundFor } from "../../src/fleet/fair-rule.ts";
import type { FleetScheduler } from "../../src/fleet/fleet-scheduler.ts";
import { createFleetTables } from "../../src/fleet/fleet-tables.ts";
import type { FleetLimits } from "../../src/fleet/limits.ts";
import { RankedLine, type LineEntry } from "../../src/fleet/ranked-line.ts";
import { privateFleet } from "./fleet/harness.ts";

/** Joins jobs in arrival order by the rule (as the scheduler does) and returns the line's order. */
function lineOf(arrivals: { jobId: string; accountId: string }[], held: Record<string, number> = {}, current = 0): string[] {
  const last = new Map<string, number>();
  const entries = arrivals.map(({ jobId, accountId }, i) => {
    const round = roundFor(current, held[accountId] ?? 0, last.get(accountId) ?? null);
    last.set(accountId, round);
    return { jobId, round, seq: i + 1 };
  });
  return entries.sort(lineOrder).map((e) => e.jobId);
}

describe("the capacity rule", () => {
  it("takes accounts in turn, not by how much each submitted", () => {
    const burst = Array.from({ length: 5 }, (_, i) => ({ jobId: `b${i}`, accountId: "burst" }));
    const order = lineOf([...burst, { jobId: "s1", accountId: "single-1" }, { jobId: "s2", accountId: "single-2" }]);
    // One of the burst, then each single account, then the rest of the burst in its own order.
    expect(order).toEqual(["b0", "s1", "s2", "b1", "b2", "b3", "b4"]);
  });

  it("puts an account holding engines behind accounts holding fewer", () => {
    expect(lineOf([{ jobId: "b0", accountId: "burst" }, { jobId: "s1", accountId: "single" }], { burst: 3 })).toEqual(["s1", "b0"]);
  });

  it("keeps each account's own jobs in arrival order and loses none", () => {
    const order = lineOf([
      { jobId: "y1", accountId: "Y" },
      { jobId: "x1", accountId: "X" },
      { jobId: "x2", accountId: "X" },
      { jobId: "y2", accountId: "Y" },
    ]);
    expect(order).toEqual(["y1", "x1", "x2", "y2"]);
  });
});

describe("the ranked line", () => {
  it("answers the same places as a sorted list, whatever joins and leaves", () => {
    type Op = { kind: "insert"; round: number } | { kind: "remove"; pick: number };
    const op = fc.oneof(
      fc.record({ kind: fc.constant("insert" as const), round: fc.integer({ min: 0, max: 40 }) }),
      fc.record({ kind: fc.constant("remove" as const), pick: fc.nat() }),
    );
    fc.assert(
      fc.property(fc.array(op, { maxLength: 900 }), (ops: Op[]) => {
        const line = new RankedLine();
        const plain: LineEntry[] = [];
        let seq = 0;
        for (const o of ops) {
          if (o.kind === "insert") {
            seq += 1;
            const entry = { jobId: `j${seq}`, round: o.round, seq: seq % 3 === 0 ? -seq : seq };
            line.insert(entry);
            plain.push(entry);
          } else if (plain.length > 0) {
            const [gone] = plain.splice(o.pick % plain.length, 1);
            expect(line.remove(gone!.jobId)).toBe(true);
          }
        }
        plain.sort(lineOrder);
        expect(line.size).toBe(plain.length);
        expect(line.first()?.jobId).toBe(plain[0]?.jobId);
        plain.forEach((entry, i) => expect(line.rank(entry.jobId)).toBe(i + 1));
        expect(RankedLine.from(plain).rank(plain.at(-1)?.jobId ?? "none")).toBe(plain.length === 0 ? null : plain.length);
      }),
      { numRuns: 60 },
    );
  });
});

const limits = (capacity: number): FleetLimits => ({ capacity, stopGraceMs: 0, startBudgetMs: 60_000 });

describe("the scheduler", () => {
  it("reports each waiting job's place and grants in that order as engines come back", async () => {
    const fleet = privateFleet();
    const stub = fleet.get(fleet.idFromName("fleet"));
    const claim = (jobId: string, accountId: string) => stub.claim({ jobId, accountId, dispatch: 0 }, limits(1));
    expect((await claim("first", "A")).state).toBe("granted");
    const arrivals = [
      ["b1", "B"],
      ["b2", "B"],
      ["b3", "B"],
      ["c1", "C"],
      ["a2", "A"],
      ["d1", "D"],
    ] as const;
    for (const [jobId, accountId] of arrivals) expect((await claim(jobId, accountId)).state).toBe("waiting");
    // A holds an engine, so its second job joins a round later than the others' first.
    const expected = ["b1", "c1", "d1", "b2", "a2", "b3"];
    for (const [i, jobId] of expected.entries()) expect(await stub.position(jobId)).toBe(i + 1);
    const granted: string[] = [];
    let holder = "first";
    for (let i = 0; i < expected.length; i += 1) {
      const grants = await stub.release(holder, limits(1));
      expect(grants).toHaveLength(1);
      holder = grants[0]!.jobId;
      granted.push(holder);
      expect(grants[0]!.dispatch).toBe(1);
      if (i + 1 < expected.length) expect(await stub.position(expected[i + 1]!)).toBe(1);
    }
    expect(granted).toEqual(expected);
    expect(await stub.position("b3")).toBeNull();
  });

  it("serves a deep queue's later rounds while single-job accounts keep coming back (an ended job's round is remembered)", async () => {
    const fleet = privateFleet();
    const stub = fleet.get(fleet.idFromName("fleet"));
    const claim = (jobId: string, accountId: string) => stub.claim({ jobId, accountId, dispatch: 0 }, limits(1));
    expect((await claim("s0-0", "S0")).state).toBe("granted");
    for (const jobId of ["d1", "d2", "d3"]) expect((await claim(jobId, "DEEP")).state).toBe("waiting");
    // Three single-job accounts: each submits again as soon as its job is granted (and ends), for ever.
    const singles = ["S0", "S1", "S2"];
    for (const account of singles.slice(1)) expect((await claim(`${account}-0`, account)).state).toBe("waiting");
    const next = new Map(singles.map((a) => [a, 1]));
    let holder = "s0-0";
    const grantedDeep: number[] = [];
    let holderAccount = "S0";
    for (let grant = 1; grant <= 30 && grantedDeep.length < 3; grant += 1) {
      const [g] = await stub.release(holder, limits(1));
      // The ended job's account holds nothing now and submits again at once.
      if (holderAccount !== "DEEP") {
        const n = next.get(holderAccount)!;
        next.set(holderAccount, n + 1);
        expect((await claim(`${holderAccount}-${n}`, holderAccount)).state).toBe("waiting");
      }
      holder = g!.jobId;
      holderAccount = g!.accountId;
      if (g!.accountId === "DEEP") grantedDeep.push(grant);
    }
    // One deep job a round, each round at most one job of each of the three others: the deep queue is done by grant 12.
    expect(grantedDeep).toHaveLength(3);
    expect(grantedDeep[2]).toBeLessThanOrEqual(12);
  });

  it("keeps the line across a restart of the object (its ranks are rebuilt from storage)", async () => {
    const fleet = privateFleet();
    const stub = fleet.get(fleet.idFromName("fleet"));
    for (let i = 0; i < 5; i += 1) await stub.claim({ jobId: `j${i}`, accountId: `acct-${i}`, dispatch: 0 }, limits(1));
    const before = await Promise.all([1, 2, 3, 4].map((i) => stub.position(`j${i}`)));
    expect(before).toEqual([1, 2, 3, 4]);
    // The object's memory is gone (a reset on deploy); its storage is not.
    await runInDurableObject(stub, (instance: FleetScheduler) => {
      (instance as unknown as { line: unknown }).line = null;
    });
    const again = fleet.get(fleet.idFromName("fleet"));
    expect(await Promise.all([1, 2, 3, 4].map((i) => again.position(`j${i}`)))).toEqual(before);
    expect(await again.release("j0", limits(1))).toEqual([{ jobId: "j1", accountId: "acct-1", dispatch: 1 }]);
  });
});

describe("the scheduler's storage", () => {
  it("carries the first scheduler's line and grants over to the new tables", async () => {
    const fleet = privateFleet();
    const stub = fleet.get(fleet.idFromName("fleet"));
    await runInDurableObject(stub, (_instance: FleetScheduler, state) => {
      const sql = state.storage.sql;
      // The first scheduler's schema (version 1), as production holds it.
      for (const table of ["waiting", "holding", "stopping", "fleet_minutes", "fleet_meta"]) sql.exec(`DROP TABLE IF EXISTS ${table}`);
      sql.exec(`CREATE TABLE waiting (job_id TEXT PRIMARY KEY, account_id TEXT NOT NULL, seq INTEGER NOT NULL)`);
      sql.exec(`CREATE TABLE holding (job_id TEXT PRIMARY KEY, account_id TEXT NOT NULL, granted_ms INTEGER NOT NULL, started INTEGER NOT NULL DEFAULT 0)`);
      sql.exec(`CREATE TABLE served (account_id TEXT PRIMARY KEY, turn INTEGER NOT NULL)`);
      sql.exec(`CREATE TABLE fleet_meta (key TEXT PRIMARY KEY, value INTEGER NOT NULL)`);
      sql.exec(`INSERT INTO waiting VALUES ('w2', 'B', 2), ('w1', 'A', 1)`);
      sql.exec(`INSERT INTO holding VALUES ('h1', 'C', 1000, 1)`);
      createFleetTables(sql);
    });
    // The object restarts on the migrated storage.
    await runInDurableObject(stub, (instance: FleetScheduler) => {
      (instance as unknown as { line: unknown; limits: unknown }).line = null;
      (instance as unknown as { line: unknown; limits: unknown }).limits = null;
    });
    expect(await stub.position("w1")).toBe(1);
    expect(await stub.position("w2")).toBe(2);
    expect(await stub.jobState("h1")).toEqual({ state: "started", dispatch: 1 });
    expect(await stub.release("h1", limits(1))).toEqual([{ jobId: "w1", accountId: "A", dispatch: 1 }]);
  });
});
