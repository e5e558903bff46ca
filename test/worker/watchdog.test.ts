import { env, runDurableObjectAlarm, runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { EXPIRY_RETRY_MS } from "../../src/account/account-state.ts";
import type { AccountState } from "../../src/jobs/account-state.ts";
import { accountState } from "../../src/account/stub.ts";
import { DEFAULT_CLIP_CONFIG } from "#contract";
import { api, createAccount } from "./helpers.ts";

/** A processing job row, as the queue consumer leaves it once the engine has started. */
async function insertProcessingJob(accountId: string): Promise<string> {
  const jobId = `job_${crypto.randomUUID().replaceAll("-", "").slice(0, 24)}`;
  const now = new Date().toISOString();
  await env.DB.prepare(
    `INSERT INTO jobs (id, account_id, status, progress, step, video_url, video_type, config_json, created_at, updated_at, last_report_at)
     VALUES (?, ?, 'processing', 10, 'Downloading video', 'https://videos.example.com/a.mp4', 'general', ?, ?, ?, ?)`,
  )
    .bind(jobId, accountId, JSON.stringify(DEFAULT_CLIP_CONFIG), now, now, now)
    .run();
  return jobId;
}

function backdateDeadline(stub: DurableObjectStub<AccountState>, jobId: string) {
  return runInDurableObject(stub, (_i: AccountState, state) => {
    state.storage.sql.exec(`UPDATE watchdog SET deadline_ms = ? WHERE job_id = ?`, Date.now() - 1000, jobId);
  });
}

describe("watchdog alarm", () => {
  it("fails a silent job with processing_timeout and frees its slot", async () => {
    const account = await createAccount();
    // One authenticated request tells the account's Durable Object which account it serves.
    expect((await api(account, "/api/v1/usage")).status).toBe(200);
    const stub = accountState(env, account.accountId);
    const jobId = await insertProcessingJob(account.accountId);
    expect(await stub.acquireSlot(jobId, 1)).toEqual({ ok: true });
    await stub.touchWatchdog(jobId, 180);
    await backdateDeadline(stub, jobId);

    expect(await runDurableObjectAlarm(stub)).toBe(true);

    const row = await env.DB.prepare(`SELECT status, error_code FROM jobs WHERE id = ?`).bind(jobId).first<{ status: string; error_code: string }>();
    expect(row).toEqual({ status: "failed", error_code: "processing_timeout" });
    expect(await stub.activeJobs()).toEqual([]);
    expect(await stub.watchdogDeadline(jobId)).toBeNull();
    expect(await runInDurableObject(stub, (_i: AccountState, state) => state.storage.getAlarm())).toBeNull();
  });

  it("leaves jobs whose deadline has not passed and re-arms for them", async () => {
    const account = await createAccount();
    expect((await api(account, "/api/v1/usage")).status).toBe(200);
    const stub = accountState(env, account.accountId);
    const silent = await insertProcessingJob(account.accountId);
    const lively = await insertProcessingJob(account.accountId);
    await stub.touchWatchdog(silent, 180);
    await stub.touchWatchdog(lively, 600);
    await backdateDeadline(stub, silent);

    expect(await runDurableObjectAlarm(stub)).toBe(true);

    const status = (id: string) => env.DB.prepare(`SELECT status FROM jobs WHERE id = ?`).bind(id).first<string>("status");
    expect(await status(silent)).toBe("failed");
    expect(await status(lively)).toBe("processing");
    const deadline = await stub.watchdogDeadline(lively);
    expect(await runInDurableObject(stub, (_i: AccountState, state) => state.storage.getAlarm())).toBe(deadline);
  });

  it("keeps a deadline whose expiry failed and retries it later", async () => {
    // An object that was never told its account cannot expire the job: the expiry throws.
    const stub = env.ACCOUNTS.get(env.ACCOUNTS.newUniqueId());
    await stub.touchWatchdog("job_orphan", 180);
    await backdateDeadline(stub, "job_orphan");

    const before = Date.now();
    expect(await runDurableObjectAlarm(stub)).toBe(true);

    const deadline = await stub.watchdogDeadline("job_orphan");
    expect(deadline).not.toBeNull();
    expect(deadline!).toBeGreaterThanOrEqual(before + EXPIRY_RETRY_MS);
    expect(await runInDurableObject(stub, (_i: AccountState, state) => state.storage.getAlarm())).toBe(deadline);
  });

  it("spares a job whose engine reported while an earlier job was being expired", async () => {
    const account = await createAccount();
    expect((await api(account, "/api/v1/usage")).status).toBe(200);
    const stub = accountState(env, account.accountId);
    const silent = await insertProcessingJob(account.accountId);
    const lively = await insertProcessingJob(account.accountId);
    await stub.touchWatchdog(silent, 180);
    await stub.touchWatchdog(lively, 180);
    await runInDurableObject(stub, async (instance: AccountState, state) => {
      state.storage.sql.exec(`UPDATE watchdog SET deadline_ms = ? WHERE job_id = ?`, Date.now() - 2000, silent);
      state.storage.sql.exec(`UPDATE watchdog SET deadline_ms = ? WHERE job_id = ?`, Date.now() - 1000, lively);
      // Both are overdue when the alarm starts. While the first expiry waits on D1,
      // the second job's engine reports (its deadline moves), as an RPC interleaved at that await would.
      const holder = instance as unknown as { env: Env };
      const realEnv = holder.env;
      let reported = false;
      const db = new Proxy(realEnv.DB, {
        get(target, prop) {
          if (prop === "prepare" && !reported) {
            reported = true;
            state.storage.sql.exec(`UPDATE watchdog SET deadline_ms = ? WHERE job_id = ?`, Date.now() + 180_000, lively);
          }
          const value = Reflect.get(target, prop) as unknown;
          return typeof value === "function" ? (value as (...a: unknown[]) => unknown).bind(target) : value;
        },
      });
      holder.env = { ...realEnv, DB: db };
      try {
        await instance.alarm();
      } finally {
        holder.env = realEnv;
      }
      expect(reported).toBe(true);
    });
    const status = (id: string) => env.DB.prepare(`SELECT status FROM jobs WHERE id = ?`).bind(id).first<string>("status");
    expect(await status(silent)).toBe("failed");
    expect(await status(lively)).toBe("processing");
    expect(await stub.watchdogDeadline(lively)).toBeGreaterThan(Date.now());
  });
});
