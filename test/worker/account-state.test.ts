import { env, runDurableObjectAlarm, runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import type { AccountState } from "../../src/jobs/account-state.ts";
import { accountState } from "../../src/account/stub.ts";

function freshAccountId(): string {
  return `acct_test_${crypto.randomUUID().replaceAll("-", "")}`;
}

describe("AccountState active-job slots", () => {
  it("grants one slot, names the holder to others, and is idempotent per job", async () => {
    const stub = accountState(env, freshAccountId());
    expect(await stub.acquireSlot("job_a", 1)).toEqual({ ok: true });
    expect(await stub.acquireSlot("job_a", 1)).toEqual({ ok: true });
    expect(await stub.acquireSlot("job_b", 1)).toEqual({ ok: false, activeJobId: "job_a" });
    expect(await stub.activeJobs()).toEqual(["job_a"]);
  });

  it("releases only the named job, and releasing twice is harmless", async () => {
    const stub = accountState(env, freshAccountId());
    await stub.acquireSlot("job_a", 2);
    await stub.acquireSlot("job_b", 2);
    await stub.releaseSlot("job_c");
    await stub.releaseSlot("job_a");
    await stub.releaseSlot("job_a");
    expect(await stub.activeJobs()).toEqual(["job_b"]);
    expect(await stub.acquireSlot("job_c", 2)).toEqual({ ok: true });
  });

  it("gives exactly one of 20 simultaneous acquisitions the slot", async () => {
    const stub = accountState(env, freshAccountId());
    const results = await Promise.all(Array.from({ length: 20 }, (_, i) => stub.acquireSlot(`job_${i}`, 1)));
    const winners = results.filter((r) => r.ok);
    expect(winners).toHaveLength(1);
    const [holder] = await stub.activeJobs();
    for (const result of results) if (!result.ok) expect(result.activeJobId).toBe(holder);
  });
});

describe("AccountState request window", () => {
  it("hit() counts against the given limit", async () => {
    const stub = accountState(env, freshAccountId());
    const results = [await stub.hit(2), await stub.hit(2), await stub.hit(2)];
    expect(results.map((r) => [r.allowed, r.remaining])).toEqual([
      [true, 1],
      [true, 0],
      [false, 0],
    ]);
    expect(results[2]!.retryAfterSeconds).toBeGreaterThanOrEqual(1);
  });

  it("admit() refuses a revoked key without counting it, and honours a stored plan limit", async () => {
    const accountId = freshAccountId();
    const stub = accountState(env, accountId);
    await stub.revokeKey("key_gone");
    expect(await stub.admit({ accountId, keyId: "key_gone", requestsPerMinute: 60 })).toEqual({ revoked: true });
    expect(await stub.admit({ accountId, keyId: "key_live", requestsPerMinute: 60 })).toMatchObject({ revoked: false, remaining: 59 });
    await stub.setPlanLimits({ requestsPerMinute: 5, maxActiveJobs: 1 });
    expect(await stub.admit({ accountId, keyId: "key_live", requestsPerMinute: 60 })).toMatchObject({ limit: 5, remaining: 3 });
  });
});

describe("AccountState watchdog", () => {
  it("schedules the alarm for the earliest deadline and re-arms on every touch", async () => {
    const stub = accountState(env, freshAccountId());
    const before = Date.now();
    await stub.touchWatchdog("job_late", 300);
    await stub.touchWatchdog("job_soon", 60);
    const alarm = await runInDurableObject(stub, (_i: AccountState, state) => state.storage.getAlarm());
    const soon = await stub.watchdogDeadline("job_soon");
    expect(alarm).toBe(soon);
    expect(soon!).toBeGreaterThanOrEqual(before + 60_000);
    expect(soon!).toBeLessThan(before + 300_000);

    // A report from job_soon pushes its deadline: the alarm follows the new earliest one.
    await stub.touchWatchdog("job_soon", 600);
    const late = await stub.watchdogDeadline("job_late");
    expect(await runInDurableObject(stub, (_i: AccountState, state) => state.storage.getAlarm())).toBe(late);

    await stub.clearWatchdog("job_late");
    await stub.clearWatchdog("job_soon");
    expect(await runInDurableObject(stub, (_i: AccountState, state) => state.storage.getAlarm())).toBeNull();
  });
});
