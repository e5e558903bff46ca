/**
 * Caps hold under concurrency: 50 creations at once never pass a cap
 * (configurations, API keys, webhook endpoints), and an Idempotency-Key never
 * creates two jobs, not even when a retry takes over a claim that looked
 * abandoned while the first request was still in flight.
 */
import { env } from "cloudflare:test";
import { beforeEach, describe, expect, it } from "vitest";
import { DEFAULT_CLIP_CONFIG } from "#contract";
import { MAX_CONFIGS_PER_ACCOUNT } from "../../src/api/configs.ts";
import { MAX_ACTIVE_KEYS } from "../../src/dashboard/pages/keys.tsx";
import { putConfig } from "../../src/db/configs.ts";
import { createJob, type Submission } from "../../src/jobs/submit.ts";
import { MAX_WEBHOOKS_PER_ACCOUNT } from "../../src/webhooks/schemas.ts";
import { Visitor } from "./dashboard-helpers.ts";
import { FakeEngine } from "./engine-stub.ts";
import { api, createAccount, expectProblem } from "./helpers.ts";
import { VIDEO_URL } from "./jobs-helpers.ts";

const PARALLEL = 50;

beforeEach(() => {
  new FakeEngine().install();
});

async function count(sql: string, ...binds: unknown[]): Promise<number> {
  return (await env.DB.prepare(sql).bind(...binds).first<{ n: number }>())!.n;
}

describe(`${PARALLEL} parallel creations stay at the cap`, { timeout: 120_000 }, () => {
  it(`configurations: an account holding 80 gets exactly ${MAX_CONFIGS_PER_ACCOUNT - 80} of ${PARALLEL} new names (the rest 409), three times over`, async () => {
    for (let round = 0; round < 3; round++) {
      const account = await createAccount("unmetered");
      for (let i = 0; i < 80; i++) await putConfig(env.DB, account.accountId, `held-${i}`, DEFAULT_CLIP_CONFIG, MAX_CONFIGS_PER_ACCOUNT);
      const answers = await Promise.all(
        Array.from({ length: PARALLEL }, (_, i) => api(account, `/api/v1/configs/new-${round}-${i}`, { method: "PUT", body: JSON.stringify({ max_clips: 2 }) })),
      );
      const statuses = answers.map((r) => r.status);
      expect(statuses.filter((s) => s === 201).length).toBe(MAX_CONFIGS_PER_ACCOUNT - 80);
      for (const res of answers.filter((r) => r.status !== 201)) await expectProblem(res, 409, "conflict");
      expect(await count(`SELECT COUNT(*) AS n FROM configs WHERE account_id = ?`, account.accountId)).toBe(MAX_CONFIGS_PER_ACCOUNT);
      // At the cap, replacing an existing one still works.
      expect((await api(account, "/api/v1/configs/held-0", { method: "PUT", body: JSON.stringify({ max_clips: 3 }) })).status).toBe(200);
    }
  });

  it(`API keys made in the dashboard: exactly ${MAX_ACTIVE_KEYS} active`, async () => {
    const visitor = new Visitor();
    await visitor.signUp();
    const page = await visitor.get("/dashboard/keys");
    const token = /name="csrf_token" value="([^"]+)"/.exec(await page.text())![1]!;
    const answers = await Promise.all(Array.from({ length: PARALLEL }, (_, i) => visitor.post("/dashboard/keys", { csrf_token: token, name: `key ${i}` })));
    const statuses = answers.map((r) => r.status);
    const accountId = (await env.DB.prepare(`SELECT id FROM accounts ORDER BY rowid DESC LIMIT 1`).first<{ id: string }>())!.id;
    const active = await count(`SELECT COUNT(*) AS n FROM api_keys WHERE account_id = ? AND revoked_at IS NULL`, accountId);
    expect(active).toBe(MAX_ACTIVE_KEYS);
    expect(statuses.filter((s) => s === 200).length).toBe(MAX_ACTIVE_KEYS);
    expect(statuses.filter((s) => s === 409).length).toBe(PARALLEL - MAX_ACTIVE_KEYS);
  });

  it(`webhook endpoints: exactly ${MAX_WEBHOOKS_PER_ACCOUNT}`, async () => {
    const account = await createAccount("unmetered");
    const answers = await Promise.all(
      Array.from({ length: PARALLEL }, (_, i) =>
        api(account, "/api/v1/webhooks", { method: "POST", body: JSON.stringify({ url: `https://receiver.example.com/hook/${i}` }) }),
      ),
    );
    expect(answers.filter((r) => r.status === 201).length).toBe(MAX_WEBHOOKS_PER_ACCOUNT);
    for (const res of answers.filter((r) => r.status !== 201)) await expectProblem(res, 400, "webhook_limit_reached");
    expect(await count(`SELECT COUNT(*) AS n FROM webhook_endpoints WHERE account_id = ?`, account.accountId)).toBe(MAX_WEBHOOKS_PER_ACCOUNT);
  });
});

describe("an Idempotency-Key never creates two jobs", { timeout: 60_000 }, () => {
  it(`${PARALLEL} submissions at once with one key: one job, every answer either that job or 409 in progress`, async () => {
    const account = await createAccount("unmetered");
    const body = JSON.stringify({ video_url: VIDEO_URL, video_type: "podcast" });
    const answers = await Promise.all(
      Array.from({ length: PARALLEL }, () => api(account, "/api/v1/jobs", { method: "POST", body, headers: { "Idempotency-Key": "one-key" } })),
    );
    const created = answers.filter((r) => r.status === 201);
    expect(created.length).toBeGreaterThanOrEqual(1);
    const ids = new Set(await Promise.all(created.map(async (r) => (await r.json<{ job_id: string }>()).job_id)));
    expect(ids.size).toBe(1);
    for (const res of answers.filter((r) => r.status !== 201)) await expectProblem(res, 409, "conflict");
    expect(await count(`SELECT COUNT(*) AS n FROM jobs WHERE account_id = ?`, account.accountId)).toBe(1);
  });

  it("a retry that takes over a claim older than 60 s while the first request is still in flight: only one of them creates a job", async () => {
    const account = await createAccount("unmetered");
    const key = "slow-first-request";
    const body = { video_url: VIDEO_URL, video_type: "podcast" as const };
    // The first request claimed the key two minutes ago and is still working (its claim is pending).
    const firstClaim = crypto.randomUUID();
    const requestHash = "whatever the first request hashed";
    await env.DB.prepare(
      `INSERT INTO idempotency_keys (account_id, key, request_hash, status, response_json, created_at, claim_id) VALUES (?, ?, ?, 0, '', ?, ?)`,
    )
      .bind(account.accountId, key, requestHash, new Date(Date.now() - 120_000).toISOString(), firstClaim)
      .run();
    // The retry finds the claim abandoned, takes it over and creates the job.
    const retry = await api(account, "/api/v1/jobs", { method: "POST", body: JSON.stringify(body), headers: { "Idempotency-Key": key } });
    expect(retry.status).toBe(201);
    const { job_id: retryJob } = await retry.json<{ job_id: string }>();
    await env.DB.prepare(`UPDATE jobs SET status = 'completed' WHERE id = ?`).bind(retryJob).run();
    await env.ACCOUNTS.get(env.ACCOUNTS.idFromName(account.accountId)).jobEnded(retryJob);

    // Now the first request reaches its write, with the claim it no longer holds.
    const submission: Submission = {
      accountId: account.accountId,
      maxActiveJobs: 1,
      videoUrl: VIDEO_URL,
      uploadId: null,
      videoType: "podcast",
      configName: null,
      captionsUrl: null,
    };
    const late = await createJob(env, submission, { key, claimId: firstClaim, present: (job) => ({ job_id: job.id }) }).then(
      () => "created",
      (err: unknown) => (err as { code?: string }).code ?? String(err),
    );
    expect(late).toBe("conflict");
    expect(await count(`SELECT COUNT(*) AS n FROM jobs WHERE account_id = ?`, account.accountId)).toBe(1);
    // The key answers with the one job, and the late request left the stored answer alone.
    const replay = await api(account, "/api/v1/jobs", { method: "POST", body: JSON.stringify(body), headers: { "Idempotency-Key": key } });
    expect(replay.status).toBe(201);
    expect(replay.headers.get("Idempotent-Replayed")).toBe("true");
    expect((await replay.json<{ job_id: string }>()).job_id).toBe(retryJob);
  });
});
