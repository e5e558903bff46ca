import { env, SELF } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { adminFetch, api, BASE, createAccount, expectProblem } from "./helpers.ts";

describe("operator API guard", () => {
  it("refuses a missing or wrong token, and API keys, with 401", async () => {
    const account = await createAccount();
    const attempts: Record<string, string>[] = [
      {},
      { Authorization: "Bearer wrong-token-wrong-token" },
      { Authorization: `Bearer ${env.ADMIN_TOKEN}x` },
      { Authorization: `Bearer ${account.apiKey}` },
    ];
    for (const headers of attempts) {
      await expectProblem(await SELF.fetch(`${BASE}/admin/v1/plans`, { headers }), 401, "unauthorized");
    }
  });

  it("never lets the admin token act as an API key", async () => {
    const res = await SELF.fetch(`${BASE}/api/v1/usage`, { headers: { Authorization: `Bearer ${env.ADMIN_TOKEN}` } });
    await expectProblem(res, 401, "unauthorized");
  });
});

describe("operator API", () => {
  it("lists the plans table", async () => {
    const res = await adminFetch("/admin/v1/plans");
    const { plans } = await res.json<{ plans: { name: string; credits_per_period: number; requests_per_minute: number; max_active_jobs: number }[] }>();
    expect(plans.find((p) => p.name === "free")).toEqual({ name: "free", credits_per_period: 60, requests_per_minute: 60, max_active_jobs: 1 });
  });

  it("creates an account with a working key, stored only as a hash", async () => {
    const email = `owner-${crypto.randomUUID()}@example.com`;
    const res = await adminFetch("/admin/v1/accounts", { method: "POST", body: JSON.stringify({ email, plan: "pro" }) });
    expect(res.status).toBe(201);
    const created = await res.json<{ account_id: string; api_key: string; key_id: string }>();
    expect(created.account_id).toMatch(/^acct_[0-9A-Za-z]{17}$/);
    expect(created.api_key).toMatch(/^ck_live_[0-9A-Za-z]{43}$/);

    const row = await env.DB.prepare(`SELECT prefix, last4, hash FROM api_keys WHERE id = ?`).bind(created.key_id).first<{ prefix: string; last4: string; hash: string }>();
    expect(row!.prefix).toBe(created.api_key.slice(0, 12));
    expect(row!.last4).toBe(created.api_key.slice(-4));
    expect(row!.hash).toMatch(/^[0-9a-f]{64}$/);
    const everything = JSON.stringify(await env.DB.prepare(`SELECT * FROM api_keys`).all());
    expect(everything).not.toContain(created.api_key);

    const usage = await api({ apiKey: created.api_key }, "/api/v1/usage");
    expect((await usage.json<{ plan: string }>()).plan).toBe("pro");

    const account = await adminFetch(`/admin/v1/accounts/${created.account_id}`);
    expect(await account.json()).toMatchObject({ account_id: created.account_id, email, plan: "pro", usage: { credits_total: 600 } });
  });

  it("validates account creation", async () => {
    const bad = await adminFetch("/admin/v1/accounts", { method: "POST", body: JSON.stringify({ email: "not-an-email", plan: "free" }) });
    expect((await expectProblem(bad, 400, "invalid_request")).errors?.[0]?.path).toBe("email");
    const plan = await adminFetch("/admin/v1/accounts", { method: "POST", body: JSON.stringify({ email: "x@example.com", plan: "gold" }) });
    expect((await expectProblem(plan, 400, "invalid_request")).errors?.[0]?.path).toBe("plan");
    const account = await createAccount();
    const duplicate = await adminFetch("/admin/v1/accounts", { method: "POST", body: JSON.stringify({ email: account.email.toUpperCase(), plan: "free" }) });
    await expectProblem(duplicate, 409, "conflict");
  });

  it("issues, lists and revokes keys without ever listing a secret", async () => {
    const account = await createAccount();
    const issued = await adminFetch(`/admin/v1/accounts/${account.accountId}/keys`, { method: "POST", body: JSON.stringify({ name: "ci" }) });
    expect(issued.status).toBe(201);
    const second = await issued.json<{ key_id: string; api_key: string; name: string }>();
    expect(second.name).toBe("ci");
    expect((await api({ apiKey: second.api_key }, "/api/v1/usage")).status).toBe(200);

    const listed = await adminFetch(`/admin/v1/accounts/${account.accountId}/keys`);
    const { keys } = await listed.json<{ keys: { key_id: string; status: string; last4: string }[] }>();
    expect(keys.map((k) => k.key_id).sort()).toEqual([account.keyId, second.key_id].sort());
    expect(JSON.stringify(keys)).not.toContain(second.api_key);

    const revoked = await adminFetch(`/admin/v1/keys/${second.key_id}`, { method: "DELETE" });
    expect((await revoked.json<{ status: string }>()).status).toBe("revoked");
    await expectProblem(await api({ apiKey: second.api_key }, "/api/v1/usage"), 401, "unauthorized");
    expect((await api(account, "/api/v1/usage")).status).toBe(200);
    await expectProblem(await adminFetch(`/admin/v1/keys/key_missing/revoke`, { method: "POST" }), 404, "not_found");
  });

  it("records last use of a key", async () => {
    const account = await createAccount();
    const lastUsed = () => env.DB.prepare(`SELECT last_used_at FROM api_keys WHERE id = ?`).bind(account.keyId).first<string | null>("last_used_at");
    expect(await lastUsed()).toBeNull();
    expect((await api(account, "/api/v1/usage")).status).toBe(200);
    const deadline = Date.now() + 45_000; // A budget for a stuck run: the write is waitUntil work, late on a loaded machine.
    while ((await lastUsed()) === null && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    expect(await lastUsed()).not.toBeNull();
  });

  it("sets plans and grants credits", async () => {
    const account = await createAccount();
    const plan = await adminFetch(`/admin/v1/accounts/${account.accountId}/plan`, { method: "PUT", body: JSON.stringify({ plan: "pro" }) });
    expect(await plan.json()).toMatchObject({ plan: "pro", usage: { credits_total: 600, credits_remaining: 600 } });
    const grant = await adminFetch(`/admin/v1/accounts/${account.accountId}/credits`, { method: "POST", body: JSON.stringify({ credits: 25, reason: "support" }) });
    expect(await grant.json()).toMatchObject({ usage: { credits_granted: 25, credits_remaining: 625 } });
    const usage = await (await api(account, "/api/v1/usage")).json();
    expect(usage).toMatchObject({ plan: "pro", credits_total: 600, credits_remaining: 625 });

    // The new plan's request limit applies from the next request.
    await adminFetch(`/admin/v1/accounts/${account.accountId}/plan`, { method: "PUT", body: JSON.stringify({ plan: "unmetered" }) });
    expect((await api(account, "/api/v1/usage")).headers.get("RateLimit-Policy")).toBe('"default";q=1000000;w=60');

    await expectProblem(
      await adminFetch(`/admin/v1/accounts/${account.accountId}/credits`, { method: "POST", body: JSON.stringify({ credits: -5 }) }),
      400,
      "invalid_request",
    );
    await expectProblem(
      await adminFetch(`/admin/v1/accounts/acct_missing/plan`, { method: "PUT", body: JSON.stringify({ plan: "pro" }) }),
      404,
      "not_found",
    );
    await expectProblem(await adminFetch(`/admin/v1/accounts/acct_missing`), 404, "not_found");
  });
});
