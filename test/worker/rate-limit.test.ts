import { env, runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import type { AccountState } from "../../src/jobs/account-state.ts";
import { RESERVE_SECONDS } from "../../src/account/request-window.ts";
import { accountState } from "../../src/account/stub.ts";
import { api, createAccount, expectProblem } from "./helpers.ts";

function parseRateLimit(header: string | null): { remaining: number; reset: number } {
  const match = /^"default";r=(\d+);t=(\d+)$/.exec(header ?? "");
  if (!match) throw new Error(`bad RateLimit header: ${header}`);
  return { remaining: Number(match[1]), reset: Number(match[2]) };
}

/**
 * Moves every counted request of the account `seconds` into the past (stored,
 * then reloaded). Stored rows sit up to RESERVE_SECONDS after their requests
 * (written ahead), so "60 seconds old" means 60 + RESERVE_SECONDS for them.
 */
async function ageWindow(accountId: string, seconds: number): Promise<void> {
  await runInDurableObject(accountState(env, accountId), (instance: AccountState, state) => {
    state.storage.sql.exec(`UPDATE request_window SET second = second - ?`, seconds);
    instance.requestWindow.load();
  });
}

describe("rate limit (60 requests per rolling minute per account)", () => {
  it("lets exactly 60 of 100 simultaneous requests through", async () => {
    const account = await createAccount();
    const responses = await Promise.all(Array.from({ length: 100 }, () => api(account, "/api/v1/video-types")));
    const statuses = responses.map((res) => res.status);
    expect(statuses.filter((s) => s === 200)).toHaveLength(60);
    expect(statuses.filter((s) => s === 429)).toHaveLength(40);

    // Every remaining value 0..59 was handed out exactly once to the accepted requests.
    const remaining = responses.filter((res) => res.status === 200).map((res) => parseRateLimit(res.headers.get("RateLimit")).remaining);
    expect(new Set(remaining).size).toBe(60);
    expect(Math.min(...remaining)).toBe(0);
    expect(Math.max(...remaining)).toBe(59);

    for (const res of responses) {
      expect(res.headers.get("RateLimit-Policy")).toBe('"default";q=60;w=60');
      if (res.status === 429) {
        const problem = await expectProblem(res, 429, "rate_limited");
        const retryAfter = Number(res.headers.get("Retry-After"));
        expect(retryAfter).toBeGreaterThanOrEqual(1);
        expect(retryAfter).toBeLessThanOrEqual(60);
        expect(problem.retry_after_seconds).toBe(retryAfter);
        expect(parseRateLimit(res.headers.get("RateLimit")).remaining).toBe(0);
      } else {
        await res.arrayBuffer();
      }
    }
  });

  it("counts per account: another account is unaffected", async () => {
    const busy = await createAccount();
    const quiet = await createAccount();
    await Promise.all(Array.from({ length: 61 }, () => api(busy, "/api/v1/video-types").then((r) => r.arrayBuffer())));
    await expectProblem(await api(busy, "/api/v1/usage"), 429, "rate_limited");
    const res = await api(quiet, "/api/v1/usage");
    expect(res.status).toBe(200);
    expect(parseRateLimit(res.headers.get("RateLimit")).remaining).toBe(59);
  });

  it("puts RateLimit headers on authenticated errors too", async () => {
    const account = await createAccount();
    const res = await api(account, "/api/v1/configs/NOT%20VALID");
    expect(res.headers.get("RateLimit-Policy")).toBe('"default";q=60;w=60');
    expect(parseRateLimit(res.headers.get("RateLimit")).remaining).toBe(59);
    await expectProblem(res, 400, "invalid_request");
  });

  it("rolls: once the counted requests are 60 seconds old, the account is served again", async () => {
    const account = await createAccount();
    await Promise.all(Array.from({ length: 60 }, () => api(account, "/api/v1/video-types").then((r) => r.arrayBuffer())));
    await expectProblem(await api(account, "/api/v1/video-types"), 429, "rate_limited");

    await ageWindow(account.accountId, 60 + RESERVE_SECONDS);
    const res = await api(account, "/api/v1/video-types");
    expect(res.status).toBe(200);
    expect(parseRateLimit(res.headers.get("RateLimit")).remaining).toBe(59);
  });

  it("applies the plan's limit", async () => {
    const account = await createAccount("unmetered");
    const res = await api(account, "/api/v1/usage");
    expect(res.headers.get("RateLimit-Policy")).toBe('"default";q=1000000;w=60');
    expect(parseRateLimit(res.headers.get("RateLimit")).remaining).toBe(999_999);
  });
});
