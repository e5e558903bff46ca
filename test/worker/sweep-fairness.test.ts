/**
 * The sweep's settling takes turns (src/jobs/sweep.ts): ended jobs whose
 * releases keep failing cannot hold every run's places, so a newer job left
 * unsettled is settled by the next run even when more older jobs fail than
 * a run takes.
 */
import { createExecutionContext, env } from "cloudflare:test";
import { beforeEach, describe, expect, it } from "vitest";
import { app } from "../../src/app.ts";
import { runSweep } from "../../src/jobs/sweep.ts";
import { FakeEngine } from "./engine-stub.ts";
import { api, createAccount, type TestAccount } from "./helpers.ts";
import { submitUndelivered } from "./jobs-helpers.ts";

beforeEach(() => new FakeEngine().install());

/** The accounts' namespace, whose `jobEnded` fails for the jobs in `failing` (an account object that keeps refusing). */
function failingJobEnded(failing: ReadonlySet<string>): Env["ACCOUNTS"] {
  const namespace = env.ACCOUNTS;
  return {
    idFromName: (name: string) => namespace.idFromName(name),
    get: (id: DurableObjectId) => {
      const stub = namespace.get(id) as unknown as Record<string, (...args: unknown[]) => unknown>;
      return new Proxy(stub, {
        get(target, prop) {
          // A stub is an RPC proxy: call through it, never bind its properties.
          return (...args: unknown[]) => {
            if (prop === "jobEnded" && failing.has(args[0] as string)) return Promise.reject(new Error("Durable Object overloaded"));
            return target[prop as string]!(...args);
          };
        },
      });
    },
  } as unknown as Env["ACCOUNTS"];
}

/** A queued job canceled while its account's object refused the release: ended, not settled. */
async function canceledUnsettled(account: TestAccount, endedMinutesAgo: number): Promise<string> {
  const jobId = await submitUndelivered(account);
  const res = await app.fetch(
    new Request(`http://worker.test/api/v1/jobs/${jobId}/cancel`, { method: "POST", headers: { Authorization: `Bearer ${account.apiKey}` } }),
    { ...env, ACCOUNTS: failingJobEnded(new Set([jobId])) },
    createExecutionContext(),
  );
  expect(res.status).toBe(200);
  await env.DB.prepare(`UPDATE jobs SET updated_at = ? WHERE id = ?`).bind(new Date(Date.now() - endedMinutesAgo * 60_000).toISOString(), jobId).run();
  return jobId;
}

async function settled(jobId: string): Promise<boolean> {
  const row = await env.DB.prepare(`SELECT settled_at FROM jobs WHERE id = ?`).bind(jobId).first<{ settled_at: string | null }>();
  return row?.settled_at !== null;
}

describe("the sweep settles in turns", () => {
  it("three old jobs whose release keeps failing do not keep a run of three from settling a newer one", async () => {
    const account = await createAccount("unmetered");
    const stuck = [await canceledUnsettled(account, 30), await canceledUnsettled(account, 29), await canceledUnsettled(account, 28)];
    const newer = await canceledUnsettled(account, 5);
    const failing = { ...env, ACCOUNTS: failingJobEnded(new Set(stuck)) };
    const now = Date.now();

    // A run of three takes the three oldest; they fail again.
    expect(await runSweep(failing, now, 3)).toMatchObject({ settled: 0, unsettled: 3 });
    expect(await settled(newer)).toBe(false);
    // The next run takes the job it has not tried yet first.
    expect(await runSweep(failing, now + 60_000, 3)).toMatchObject({ settled: 1, unsettled: 2 });
    expect(await settled(newer)).toBe(true);
    // The stuck ones keep their turns, and are settled once their release works.
    expect(await runSweep(env, now + 120_000, 3)).toMatchObject({ settled: 3, unsettled: 0 });
    for (const jobId of stuck) expect(await settled(jobId)).toBe(true);
    expect((await api(account, "/api/v1/usage")).status).toBe(200);
  });
});
