import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { accountState } from "../../src/account/stub.ts";
import { api, createAccount, expectProblem } from "./helpers.ts";

/** Exactness under concurrency (SPEC section 2): real simultaneous requests, not a loop. */
describe("per-account decisions under concurrency", () => {
  it("lets exactly 60 of 100 simultaneous requests with one key through", async () => {
    const account = await createAccount();
    const responses = await Promise.all(Array.from({ length: 100 }, () => api(account, "/api/v1/usage")));
    const passed = responses.filter((res) => res.status === 200).length;
    const limited = responses.filter((res) => res.status === 429).length;
    await Promise.all(responses.map((res) => res.arrayBuffer()));
    expect({ passed, limited }).toEqual({ passed: 60, limited: 40 });
  });

  it("creates exactly one job from 20 simultaneous submissions", async () => {
    const account = await createAccount();
    const submit = () =>
      api(account, "/api/v1/jobs", {
        method: "POST",
        body: JSON.stringify({ video_url: "https://videos.example.com/keynote.mp4", video_type: "lecture" }),
      });
    const responses = await Promise.all(Array.from({ length: 20 }, submit));
    const created = responses.filter((res) => res.status === 201);
    expect(created).toHaveLength(1);
    const { job_id: jobId } = await created[0]!.json<{ job_id: string }>();

    for (const res of responses.filter((r) => r.status !== 201)) {
      const problem = await expectProblem(res, 409, "active_job_limit");
      expect(problem.active_job_id).toBe(jobId);
    }
    const rows = await env.DB.prepare(`SELECT id FROM jobs WHERE account_id = ?`).bind(account.accountId).all<{ id: string }>();
    expect(rows.results.map((row) => row.id)).toEqual([jobId]);
    expect(await accountState(env, account.accountId).activeJobs()).toEqual([jobId]);
  });
});
