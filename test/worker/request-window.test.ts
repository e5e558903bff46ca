import { env, runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import type { AccountState } from "../../src/account/account-state";
import { RequestWindow, type HitResult } from "../../src/account/request-window";
import { accountState } from "../../src/account/stub";

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

  it("persists what was flushed, and a restarted window continues from it", async () => {
    const stub = accountState(env, `acct_window_${crypto.randomUUID()}`);
    await runInDurableObject(stub, (_instance: AccountState, state) => {
      const first = new RequestWindow(state.storage.sql);
      for (let i = 0; i < 3; i += 1) first.hit(5, T0 + i * 1000);
      expect(first.hasPendingChanges()).toBe(true);
      first.flush(T0 + 3000);
      expect(first.hasPendingChanges()).toBe(false);
      first.hit(5, T0 + 4000); // not flushed: a restart forgets it

      const restarted = new RequestWindow(state.storage.sql);
      expect(restarted.hit(5, T0 + 5000)).toMatchObject({ allowed: true, remaining: 1 });

      // Expired buckets leave storage on the next flush.
      restarted.hit(5, T0 + 62_000);
      restarted.flush(T0 + 62_000);
      const stored = state.storage.sql.exec<{ second: number }>(`SELECT second FROM request_window ORDER BY second`).toArray();
      expect(stored.map((row) => row.second)).toEqual([Math.floor(T0 / 1000) + 5, Math.floor(T0 / 1000) + 62]);
    });
  });

  it("the account object writes its window behind the hot path", async () => {
    const stub = accountState(env, `acct_window_${crypto.randomUUID()}`);
    await Promise.all(Array.from({ length: 10 }, () => stub.hit(60)));
    const storedHits = () =>
      runInDurableObject(stub, (_instance: AccountState, state) =>
        state.storage.sql.exec<{ n: number | null }>(`SELECT SUM(hits) AS n FROM request_window`).one().n ?? 0,
      );
    const deadline = Date.now() + 5000;
    while ((await storedHits()) < 10 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
    expect(await storedHits()).toBe(10);
  });
});
