/**
 * GET /api/v1/jobs/:job_id with `Prefer: wait=N` (src/jobs/held-read.ts):
 * a held read answers when the job ends, whichever way it ends, or when its
 * time runs out; it counts once; unusable preferences are ignored. Every
 * test waits on events (the read held in the account's Durable Object, the
 * end committed), never on time: the one that lets a wait run out uses
 * `wait=1` and asserts only what it answered.
 */
import { createExecutionContext, env, runDurableObjectAlarm, runInDurableObject } from "cloudflare:test";
import { beforeEach, describe, expect, it } from "vitest";
import type { AccountState } from "../../src/jobs/account-state.ts";
import { JobWaiters, MAX_WAITERS } from "../../src/account/job-waiters.ts";
import { accountState } from "../../src/account/stub.ts";
import { app } from "../../src/app.ts";
import { preferredWaitSeconds } from "../../src/http/prefer.ts";
import { DEFAULT_CLIP_CONFIG } from "#contract";
import { clipReport, expectAck, FakeEngine, waitFor, type EngineClient } from "./engine-stub.ts";
import { api, BASE, createAccount, expectProblem, type TestAccount } from "./helpers.ts";
import { startJob, submitUndelivered, type JobJson } from "./jobs-helpers.ts";

let engine: FakeEngine;
beforeEach(() => {
  engine = new FakeEngine();
  engine.install();
});

function heldGet(account: TestAccount, jobId: string, prefer = "wait=60"): Promise<Response> {
  return api(account, `/api/v1/jobs/${jobId}`, { headers: { Prefer: prefer } });
}

async function jobOf(res: Response): Promise<JobJson> {
  const text = await res.text();
  if (res.status !== 200) throw new Error(`GET job answered ${res.status}: ${text}`);
  return JSON.parse(text) as JobJson;
}

/** Resolves once `count` reads are held on the job in the account's Durable Object. */
function readsHeld(account: TestAccount, jobId: string, count = 1): Promise<true> {
  const stub = accountState(env, account.accountId);
  return waitFor(async () => ((await stub.heldReads(jobId)) === count ? true : undefined), `${count} read(s) held on ${jobId}`);
}

function remaining(res: Response): number {
  const match = /;r=(\d+);/.exec(res.headers.get("RateLimit") ?? "");
  if (!match) throw new Error(`no RateLimit header: ${res.headers.get("RateLimit")}`);
  return Number(match[1]);
}

/** A job the engine has started and probed, with one clip uploaded: ready to complete. */
async function readyToComplete(account: TestAccount): Promise<EngineClient> {
  const client = await startJob(account, engine);
  await client.probe({ duration_seconds: 42, title: "Held talk" });
  await client.uploadClip(0, 512);
  return client;
}

function complete(client: EngineClient): Promise<Response> {
  return client.complete({ title: "Held talk", source_duration_seconds: 42, clips: [clipReport(0)] });
}

describe("Prefer: wait on a job that ends while the read is held", () => {
  it("answers completed, with its clips, once the completion commits", async () => {
    const account = await createAccount();
    const client = await readyToComplete(account);
    const held = heldGet(account, client.jobId);
    await readsHeld(account, client.jobId);

    await expectAck(await complete(client));
    // Woken by the end, not by its minute running out.
    expect(await accountState(env, account.accountId).heldReads(client.jobId)).toBe(0);

    const res = await held;
    expect(res.headers.get("Preference-Applied")).toBe("wait=60");
    const job = await jobOf(res);
    expect(job).toMatchObject({ job_id: client.jobId, status: "completed", title: "Held talk", clips_count: 1 });
    expect(job.clips).toHaveLength(1);
    expect(job.clip_urls).toEqual([job.clips![0]!.url]);
  });

  it("answers failed, with the error, once the engine's failure commits", async () => {
    const account = await createAccount();
    const client = await startJob(account, engine);
    const held = heldGet(account, client.jobId);
    await readsHeld(account, client.jobId);

    await expectAck(await client.fail({ code: "source_not_video", message: "The file is not a video." }));
    expect(await accountState(env, account.accountId).heldReads(client.jobId)).toBe(0);

    const res = await held;
    expect(res.headers.get("Preference-Applied")).toBe("wait=60");
    expect(await jobOf(res)).toMatchObject({ status: "failed", error: { code: "source_not_video", message: "The file is not a video." } });
  });

  it("answers canceled once a cancel commits, and every read held on the job wakes", async () => {
    const account = await createAccount();
    const jobId = await submitUndelivered(account);
    const first = heldGet(account, jobId);
    const second = heldGet(account, jobId, "wait=30");
    await readsHeld(account, jobId, 2);

    expect((await api(account, `/api/v1/jobs/${jobId}/cancel`, { method: "POST" })).status).toBe(200);

    const [a, b] = await Promise.all([first, second]);
    expect(a.headers.get("Preference-Applied")).toBe("wait=60");
    expect(b.headers.get("Preference-Applied")).toBe("wait=30");
    expect((await jobOf(a)).status).toBe("canceled");
    expect((await jobOf(b)).status).toBe("canceled");
  });

  it("answers failed when the watchdog expires the job in the account's alarm", async () => {
    const account = await createAccount();
    expect((await api(account, "/api/v1/usage")).status).toBe(200);
    const stub = accountState(env, account.accountId);
    // A processing job its account's object never saw, silent for an hour: the read finds it in D1.
    const jobId = `job_${crypto.randomUUID().replaceAll("-", "").slice(0, 24)}`;
    const now = new Date(Date.now() - 3600_000).toISOString();
    await env.DB.prepare(
      `INSERT INTO jobs (id, account_id, status, progress, step, video_url, video_type, config_json, created_at, updated_at, last_report_at)
       VALUES (?, ?, 'processing', 10, 'Downloading video', 'https://videos.example.com/a.mp4', 'general', ?, ?, ?, ?)`,
    )
      .bind(jobId, account.accountId, JSON.stringify(DEFAULT_CLIP_CONFIG), now, now, now)
      .run();
    await stub.touchWatchdog(jobId, 180);
    const held = heldGet(account, jobId);
    await readsHeld(account, jobId);

    await runInDurableObject(stub, (_i: AccountState, state) => {
      state.storage.sql.exec(`UPDATE watchdog SET deadline_ms = ? WHERE job_id = ?`, Date.now() - 1000, jobId);
    });
    expect(await runDurableObjectAlarm(stub)).toBe(true);

    const res = await held;
    expect(res.headers.get("Preference-Applied")).toBe("wait=60");
    expect(await jobOf(res)).toMatchObject({ status: "failed", error: { code: "processing_timeout" } });
  });

  it("counts the held request once in the account's request window", async () => {
    const account = await createAccount();
    const client = await readyToComplete(account);
    const before = await api(account, `/api/v1/jobs/${client.jobId}`);
    expect(before.status).toBe(200);

    const held = heldGet(account, client.jobId);
    await readsHeld(account, client.jobId);
    await expectAck(await complete(client));
    const res = await held;
    expect((await jobOf(res)).status).toBe("completed");
    const after = await api(account, `/api/v1/jobs/${client.jobId}`);
    expect(after.status).toBe(200);

    // The engine's calls are not the account's requests: only the three reads counted, one each.
    expect(remaining(res)).toBe(remaining(before) - 1);
    expect(remaining(after)).toBe(remaining(before) - 2);
  });
});

describe("Prefer: wait answered without waiting for an end", () => {
  it("answers a job that has already ended at once, with the wait it would have honoured (capped at 60)", async () => {
    const account = await createAccount();
    const jobId = await submitUndelivered(account);
    expect((await api(account, `/api/v1/jobs/${jobId}/cancel`, { method: "POST" })).status).toBe(200);

    // Twice: the first read finds the job in D1, the second in the account's object.
    for (const prefer of ["wait=3600", "wait=5"]) {
      const res = await heldGet(account, jobId, prefer);
      expect(res.headers.get("Preference-Applied")).toBe(prefer === "wait=5" ? "wait=5" : "wait=60");
      expect((await jobOf(res)).status).toBe("canceled");
    }
  });

  it("answers the still active job when its wait runs out", async () => {
    const account = await createAccount();
    const jobId = await submitUndelivered(account);
    const res = await heldGet(account, jobId, "wait=1");
    expect(res.headers.get("Preference-Applied")).toBe("wait=1");
    const job = await jobOf(res);
    expect(job).toMatchObject({ job_id: jobId, status: "queued" });
    expect(typeof job.progress).toBe("number");
    expect(await accountState(env, account.accountId).heldReads(jobId)).toBe(0);
  });

  it.each(["wait", "wait=", "wait=abc", "wait=-5", "wait=0", "wait=1.5", "wait=5s", "respond-async", "", "handling=lenient"])(
    "ignores the unusable preference %j: no error, no header, no wait",
    async (prefer) => {
      const account = await createAccount();
      const jobId = await submitUndelivered(account);
      const res = await heldGet(account, jobId, prefer);
      expect(res.headers.get("Preference-Applied")).toBeNull();
      expect((await jobOf(res)).status).toBe("queued");
    },
  );

  it("answers another account's job, an unknown id and a malformed id 404 at once", async () => {
    const owner = await createAccount();
    const other = await createAccount();
    const jobId = await submitUndelivered(owner);
    for (const id of [jobId, "job_AAAAAAAAAAAAAAAAAAAA", "not-a-job"]) {
      const res = await heldGet(other, id);
      expect(res.headers.get("Preference-Applied")).toBeNull();
      await expectProblem(res, 404, "not_found");
    }
    expect(await accountState(env, owner.accountId).heldReads(jobId)).toBe(0);
  });

  it("answers the job as it is when the account's object fails the wait (e.g. reset by a deploy)", async () => {
    const account = await createAccount();
    const client = await startJob(account, engine);
    await expectAck(await client.progress({ progress: 40, step: "Rendering clip 1 of 5" }));
    // The namespace as the Worker sees it, whose objects drop every held read.
    const failing = new Proxy(env.ACCOUNTS, {
      get(namespace, prop) {
        if (prop === "get") {
          return (id: DurableObjectId) =>
            new Proxy(namespace.get(id), {
              get(stub, method) {
                if (method === "waitForEnd") return () => Promise.reject(new Error("Durable Object reset because its code was updated."));
                return Reflect.get(stub, method) as unknown;
              },
            });
        }
        const value = Reflect.get(namespace, prop) as unknown;
        return typeof value === "function" ? (value as (...args: unknown[]) => unknown).bind(namespace) : value;
      },
    });
    const res = await app.fetch(
      new Request(`${BASE}/api/v1/jobs/${client.jobId}`, { headers: { Authorization: `Bearer ${account.apiKey}`, Prefer: "wait=60" } }),
      { ...env, ACCOUNTS: failing },
      createExecutionContext(),
    );
    expect(res.headers.get("Preference-Applied")).toBeNull();
    expect(await jobOf(res)).toMatchObject({ job_id: client.jobId, status: "processing", progress: 40, step: "Rendering clip 1 of 5" });
  });
});

describe("the account's held reads", () => {
  it("answers at once for a job it knows has ended, and wakes reads on deletion", async () => {
    const stub = env.ACCOUNTS.get(env.ACCOUNTS.newUniqueId());
    await stub.jobEnded("job_ended");
    expect(await stub.waitForEnd("job_ended", env.CDN_URL, 60_000)).toEqual({ held: true, view: { kind: "unknown" } });

    const deleted = stub.waitForEnd("job_deleted", env.CDN_URL, 60_000);
    await waitFor(async () => ((await stub.heldReads("job_deleted")) === 1 ? true : undefined), "the held read");
    await stub.forgetJob("job_deleted");
    expect(await deleted).toEqual({ held: true, view: { kind: "unknown" } });
  });

  it("holds at most MAX_WAITERS reads at once; the rest are answered without waiting", async () => {
    const waiters = new JobWaiters();
    const held = Array.from({ length: MAX_WAITERS }, (_, i) => waiters.wait(`job_${i % 3}`, 60_000));
    expect(held.every((wait) => wait !== null)).toBe(true);
    expect(waiters.wait("job_other", 60_000)).toBeNull();
    for (const jobId of ["job_0", "job_1", "job_2"]) waiters.wake(jobId);
    expect(await Promise.all(held)).toEqual(Array.from({ length: MAX_WAITERS }, () => "ended"));
    const again = waiters.wait("job_other", 60_000);
    expect(again).not.toBeNull();
    waiters.wake("job_other");
    expect(await again).toBe("ended");
  });
});

describe("preferredWaitSeconds (RFC 7240)", () => {
  it.each([
    ["wait=10", 10],
    ["WAIT=10", 10],
    [" wait = 10 ", 10],
    ['wait="7"', 7],
    ["respond-async, wait=15", 15],
    ["wait=15; foo=bar, respond-async", 15],
    ['handling="a,wait=3", wait=4', 4],
    ["wait=5, wait=9", 5],
    ["wait=61", 60],
    ["wait=99999999999999999999999", 60],
    ["wait=007", 7],
  ])("%j -> %j", (header, seconds) => {
    expect(preferredWaitSeconds(header)).toBe(seconds);
  });

  it.each([null, undefined, "", "wait", "wait=", "wait=0", "wait=-1", "wait=1.5", "wait=5s", "wait=abc, wait=5", "respond-async", ",,,"])(
    "%j -> null",
    (header) => {
      expect(preferredWaitSeconds(header)).toBeNull();
    },
  );
});
