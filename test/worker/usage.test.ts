import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { periodStartOf } from "../../src/db/accounts.ts";
import { adminFetch, api, createAccount } from "./helpers.ts";

interface UsageBody {
  credits_remaining: number;
  credits_total: number;
  plan: string;
  credits_granted: number;
  credits_used: number;
  credits_reserved: number;
  period_start: string;
  period_end: string;
}

async function usageOf(account: { apiKey: string }): Promise<UsageBody> {
  const res = await api(account, "/api/v1/usage");
  expect(res.status).toBe(200);
  return res.json<UsageBody>();
}

function setBalance(accountId: string, balance: { used: number; reserved: number }) {
  return env.DB.prepare(`UPDATE accounts SET credits_used = ?, credits_reserved = ? WHERE id = ?`)
    .bind(balance.used, balance.reserved, accountId)
    .run();
}

describe("GET /api/v1/usage", () => {
  it("starts a free account at the plan's credits for the current calendar month", async () => {
    const account = await createAccount();
    const usage = await usageOf(account);
    const now = new Date();
    expect(usage).toEqual({
      credits_remaining: 60,
      credits_total: 60,
      plan: "free",
      credits_granted: 0,
      credits_used: 0,
      credits_reserved: 0,
      period_start: periodStartOf(now),
      period_end: new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() + 1, 1)).toISOString(),
      // Upload sources kept for clip edits, against the free plan's 5 GB (docs/editing.md).
      kept_source_bytes: 0,
      max_kept_source_bytes: 5 * 1024 ** 3,
    });
  });

  it("subtracts used and reserved credits, adds grants, never goes below zero", async () => {
    const account = await createAccount();
    await setBalance(account.accountId, { used: 20, reserved: 15 });
    expect((await usageOf(account)).credits_remaining).toBe(25);
    await adminFetch(`/admin/v1/accounts/${account.accountId}/credits`, { method: "POST", body: JSON.stringify({ credits: 10 }) });
    expect((await usageOf(account)).credits_remaining).toBe(35);
    await setBalance(account.accountId, { used: 70, reserved: 30 });
    const usage = await usageOf(account);
    expect(usage.credits_remaining).toBe(0);
    expect(usage.credits_total).toBe(60);
  });

  it("rolls into a new month: used and granted reset, reserved carries over", async () => {
    const account = await createAccount();
    await adminFetch(`/admin/v1/accounts/${account.accountId}/credits`, { method: "POST", body: JSON.stringify({ credits: 10 }) });
    await env.DB.prepare(`UPDATE accounts SET credits_used = 50, credits_reserved = 4, period_start = ? WHERE id = ?`)
      .bind("2020-01-01T00:00:00.000Z", account.accountId)
      .run();
    const usage = await usageOf(account);
    expect(usage).toMatchObject({ credits_used: 0, credits_granted: 0, credits_reserved: 4, credits_remaining: 56 });
    expect(usage.period_start).toBe(periodStartOf(new Date()));
  });
});

describe("GET /api/v1/video-types", () => {
  it("lists every video type with its description", async () => {
    const account = await createAccount();
    const res = await api(account, "/api/v1/video-types");
    const body = await res.json<{ video_types: { value: string; description: string }[]; default: string }>();
    expect(body.video_types.map((t) => t.value)).toEqual(["podcast", "lecture", "gaming", "sports", "vlog", "general"]);
    for (const type of body.video_types) expect(type.description.length).toBeGreaterThan(20);
    expect(body.video_types.find((t) => t.value === "podcast")!.description).toContain("pauses");
    expect(body.default).toBe("general");
  });
});
