import { env, runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import type { AccountState } from "../../src/jobs/account-state.ts";
import { RequestWindow, RESERVE_SECONDS, reservationSize, type HitResult } from "../../src/account/request-window.ts";
import { accountState } from "../../src/account/stub.ts";

/** Runs the window logic inside a fresh account DO with an explicit clock. */
async function withWindow<T>(run: (hit: (limit: number, nowMs: number) => HitResult) => T): Promise<T> {
  const stub = accountState(env, `acct_window_${crypto.randomUUID()}`);
  return runInDurableObject(stub, (_instance: AccountState, state) => {
    const window = new RequestWindow(state.storage.sql);
    return run((limit, nowMs) => window.hit(limit, nowMs));
  });
}

const T0 = Date.UTC(2026, 0, 1, 12, 0, 0);

describe("rolling request window (explicit clock)", () => {
  it("counts a request for 60 seconds and no longer", async () => {
    await withWindow((hit) => {
      for (let i = 0; i < 3; i += 1) expect(hit(3, T0 + 400).allowed).toBe(true);
      const refused = hit(3, T0 + 59_900);
      expect(refused).toMatchObject({ allowed: false, remaining: 0, retryAfterSeconds: 1 });
      const accepted = hit(3, T0 + 60_000);
      expect(accepted).toMatchObject({ allowed: true, remaining: 2, retryAfterSeconds: 0 });
    });
  });

  it("refused requests are not counted", async () => {
    await withWindow((hit) => {
      expect(hit(1, T0).allowed).toBe(true);
      for (let i = 1; i < 50; i += 1) expect(hit(1, T0 + i * 1000).allowed).toBe(false);
      expect(hit(1, T0 + 60_000).allowed).toBe(true);
    });
  });

  it("frees capacity oldest first and reports when", async () => {
    await withWindow((hit) => {
      for (let i = 0; i < 20; i += 1) hit(60, T0);
      for (let i = 0; i < 40; i += 1) hit(60, T0 + 30_000);
      const refused = hit(60, T0 + 31_000);
      // The 20 oldest leave at T0 + 60 s: 29 s from now.
      expect(refused).toMatchObject({ allowed: false, retryAfterSeconds: 29, resetSeconds: 29 });
      expect(hit(60, T0 + 60_000)).toMatchObject({ allowed: true, remaining: 19 });
      // The remaining 41 leave at T0 + 90 s.
      expect(hit(60, T0 + 61_000).resetSeconds).toBe(29);
    });
  });

  it("reports remaining and reset for accepted requests", async () => {
    await withWindow((hit) => {
      expect(hit(60, T0 + 250)).toEqual({ allowed: true, limit: 60, remaining: 59, resetSeconds: 60, retryAfterSeconds: 0 });
      expect(hit(60, T0 + 10_000)).toEqual({ allowed: true, limit: 60, remaining: 58, resetSeconds: 50, retryAfterSeconds: 0 });
    });
  });

  it("is exact across a restart at any moment: every accepted request is stored before it is answered", async () => {
    const stub = accountState(env, `acct_window_${crypto.randomUUID()}`);
    await runInDurableObject(stub, (_instance: AccountState, state) => {
      // A restart at every point of a burst, at limits of 60 and of 7, at several rhythms: never
      // more than the limit gets through, and a restart costs at most one reservation's unused rest.
      for (const [limit, stepMs] of [
        [60, 0],
        [60, 700],
        [7, 3000],
      ] as const) {
        for (const restartAfter of [1, Math.floor(limit / 2), limit - 1, -1]) {
          state.storage.sql.exec(`DELETE FROM request_window`);
          let window = new RequestWindow(state.storage.sql);
          let accepted = 0;
          const start = T0 + limit * 1_000_000;
          for (let i = 0; i < limit + 5; i += 1) {
            if (window.hit(limit, start + i * stepMs).allowed) accepted += 1;
            // The object restarts (memory is gone): once, or after every request (-1).
            if (restartAfter === -1 || i + 1 === restartAfter) window = new RequestWindow(state.storage.sql);
          }
          expect(accepted).toBeLessThanOrEqual(limit);
          if (restartAfter !== -1) expect(accepted).toBeGreaterThanOrEqual(limit - (reservationSize(limit, limit) - 1));
        }
      }
    });
  });

  it("writes once per reservation, not per request, and a restart over-counts at most the unused rest", async () => {
    const stub = accountState(env, `acct_window_${crypto.randomUUID()}`);
    await runInDurableObject(stub, (_instance: AccountState, state) => {
      const first = new RequestWindow(state.storage.sql);
      // 60 requests in 3 seconds at a limit of 600: reservations of 60, one write.
      for (let i = 0; i < 60; i += 1) expect(first.hit(600, T0 + i * 50).allowed).toBe(true);
      expect(first.writes).toBe(1);
      expect(reservationSize(600, 600)).toBe(60);
      // Past the reservation's seconds, a new one; the unused rest of the old one is given back.
      first.hit(600, T0 + (RESERVE_SECONDS + 1) * 1000);
      expect(first.writes).toBe(2);
      const stored = () => state.storage.sql.exec<{ n: number }>(`SELECT SUM(hits) AS n FROM request_window`).one().n;
      expect(stored()).toBe(60 + 60);

      const restarted = new RequestWindow(state.storage.sql);
      // 61 accepted, 120 counted after the restart: never fewer, at most one reservation more.
      const after = restarted.hit(600, T0 + (RESERVE_SECONDS + 2) * 1000);
      expect(after.remaining).toBe(600 - 120 - 1);

      // Stored rows leave once their requests are out of the window.
      restarted.hit(600, T0 + (RESERVE_SECONDS + 2) * 1000 + 90_000);
      const seconds = state.storage.sql.exec<{ second: number }>(`SELECT second FROM request_window`).toArray();
      expect(seconds.every((row) => row.second > Math.floor(T0 / 1000) + 60)).toBe(true);
    });
  });

  it("takes several requests at once: as many as there is room for, exact across a restart", async () => {
    const stub = accountState(env, `acct_window_${crypto.randomUUID()}`);
    await runInDurableObject(stub, (_instance: AccountState, state) => {
      let window = new RequestWindow(state.storage.sql);
      expect(window.take(60, T0, 25)).toEqual({ granted: 25, result: { allowed: true, limit: 60, remaining: 35, resetSeconds: 60, retryAfterSeconds: 0 } });
      window = new RequestWindow(state.storage.sql);
      // After a restart the 25 are still counted (plus at most a reservation's unused rest).
      const partial = window.take(60, T0 + 1000, 100);
      expect(partial.granted).toBeLessThanOrEqual(35);
      expect(partial.granted).toBeGreaterThanOrEqual(35 - (reservationSize(60, 60) - 1));
      expect(partial.result).toMatchObject({ allowed: true, remaining: 0 });
      expect(partial.result.retryAfterSeconds).toBeGreaterThan(0);
      expect(window.take(60, T0 + 2000, 3)).toMatchObject({ granted: 0, result: { allowed: false, remaining: 0 } });
      window = new RequestWindow(state.storage.sql);
      expect(window.take(60, T0 + 2000, 1).granted).toBe(0);
      // Once every stored row has left the window (the reservation's second included), all 60 are free again.
      expect(window.take(60, T0 + (RESERVE_SECONDS + 60) * 1000, 100).granted).toBe(60);
    });
  });

  it("the account object keeps its window across a restart of the object", async () => {
    const stub = accountState(env, `acct_window_${crypto.randomUUID()}`);
    const results = await Promise.all(Array.from({ length: 12 }, () => stub.hit(10)));
    expect(results.filter((r) => r.allowed)).toHaveLength(10);
    await runInDurableObject(stub, (instance: AccountState) => instance.requestWindow.load());
    expect((await stub.hit(10)).allowed).toBe(false);
  });
});
