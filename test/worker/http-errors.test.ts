import { SELF } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { api, BASE, createAccount, expectProblem, issueKey, adminFetch } from "./helpers.ts";

describe("request ids", () => {
  it("generates a Request-Id on every response, including errors", async () => {
    const health = await SELF.fetch(`${BASE}/health`);
    const missing = await SELF.fetch(`${BASE}/nope`);
    const a = health.headers.get("Request-Id");
    const b = missing.headers.get("Request-Id");
    expect(a).toMatch(/^req_[0-9a-f]{32}$/);
    expect(b).toMatch(/^req_[0-9a-f]{32}$/);
    expect(a).not.toBe(b);
    await missing.text();
  });

  it("echoes a sane incoming Request-Id and replaces an unsafe one", async () => {
    const echoed = await SELF.fetch(`${BASE}/health`, { headers: { "Request-Id": "client-trace-0001" } });
    expect(echoed.headers.get("Request-Id")).toBe("client-trace-0001");
    const replaced = await SELF.fetch(`${BASE}/health`, { headers: { "Request-Id": "bad id <script>" } });
    expect(replaced.headers.get("Request-Id")).toMatch(/^req_/);
  });
});

describe("problem responses", () => {
  it("answers an unknown route with 404 not_found as problem+json", async () => {
    const problem = await expectProblem(await SELF.fetch(`${BASE}/no/such/route`), 404, "not_found");
    expect(problem.title).toBe("Not found");
    expect(problem.detail).toContain("/no/such/route");
  });

  it("answers an unknown authenticated API route with 404 after authentication", async () => {
    const account = await createAccount();
    const res = await api(account, "/api/v1/nothing-here");
    expect(res.headers.get("RateLimit-Policy")).toBe('"default";q=60;w=60');
    await expectProblem(res, 404, "not_found");
  });

  it("serves the error reference the problem types point at", async () => {
    const res = await SELF.fetch(`${BASE}/docs/errors`);
    expect(res.status).toBe(200);
    expect(res.headers.get("Content-Type")).toContain("text/html");
    const html = await res.text();
    for (const code of ["invalid_request", "unauthorized", "rate_limited", "payload_too_large", "internal_error"]) {
      expect(html).toContain(`id="${code}"`);
    }
  });
});

describe("authentication", () => {
  async function unauthorizedBody(headers: Record<string, string>) {
    const res = await SELF.fetch(`${BASE}/api/v1/usage`, { headers });
    expect(res.headers.get("WWW-Authenticate")).toContain("Bearer");
    expect(res.headers.get("RateLimit")).toBeNull();
    const problem = await expectProblem(res, 401, "unauthorized");
    const { request_id: _id, ...rest } = problem;
    return rest;
  }

  it("gives one identical 401 for missing, malformed, unknown and revoked keys", async () => {
    const account = await createAccount();
    const spare = await issueKey(account.accountId, "to-revoke");
    // Used once before revocation, so its lookup is cached: revocation must still win.
    expect((await api({ apiKey: spare.apiKey }, "/api/v1/usage")).status).toBe(200);
    const revoke = await adminFetch(`/admin/v1/keys/${spare.keyId}/revoke`, { method: "POST" });
    expect(revoke.status).toBe(200);

    const bodies = await Promise.all([
      unauthorizedBody({}),
      unauthorizedBody({ Authorization: "Basic abc" }),
      unauthorizedBody({ Authorization: "Bearer" }),
      unauthorizedBody({ Authorization: "Bearer not-a-key" }),
      unauthorizedBody({ Authorization: `Bearer ck_live_${"A".repeat(43)}` }),
      unauthorizedBody({ Authorization: `Bearer ${spare.apiKey}` }),
      unauthorizedBody({ Authorization: `Bearer ${account.apiKey}x` }),
    ]);
    for (const body of bodies) expect(body).toEqual(bodies[0]);
    // The account's other key still works.
    expect((await api(account, "/api/v1/usage")).status).toBe(200);
  });

  it("makes revocation effective on the very next request", async () => {
    const account = await createAccount();
    expect((await api(account, "/api/v1/usage")).status).toBe(200);
    const revoke = await adminFetch(`/admin/v1/keys/${account.keyId}/revoke`, { method: "POST" });
    expect((await revoke.json<{ status: string }>()).status).toBe("revoked");
    await expectProblem(await api(account, "/api/v1/usage"), 401, "unauthorized");
  });

  it("accepts the Bearer scheme case-insensitively", async () => {
    const account = await createAccount();
    const res = await SELF.fetch(`${BASE}/api/v1/usage`, { headers: { Authorization: `bearer ${account.apiKey}` } });
    expect(res.status).toBe(200);
  });
});

describe("JSON body guard", () => {
  it("refuses a non-JSON Content-Type with 415", async () => {
    const account = await createAccount();
    const res = await api(account, "/api/v1/configs/short", {
      method: "PUT",
      headers: { "Content-Type": "text/plain" },
      body: JSON.stringify({ max_clips: 2 }),
    });
    expect(res.headers.get("RateLimit")).toMatch(/^"default";r=\d+;t=\d+$/);
    await expectProblem(res, 415, "unsupported_media_type");
  });

  it("accepts application/json with parameters", async () => {
    const account = await createAccount();
    const res = await api(account, "/api/v1/configs/short", {
      method: "PUT",
      headers: { "Content-Type": "Application/JSON; charset=utf-8" },
      body: JSON.stringify({ max_clips: 2 }),
    });
    expect(res.status).toBe(201);
  });

  it("refuses a body over 16 KiB with 413, by declared length and by bytes actually sent", async () => {
    const account = await createAccount();
    const big = JSON.stringify({ max_clips: 2, pad: "x".repeat(17 * 1024) });
    await expectProblem(await api(account, "/api/v1/configs/big", { method: "PUT", body: big }), 413, "payload_too_large");

    // A streamed body has no Content-Length: the guard must count the bytes.
    const bytes = new TextEncoder().encode(big);
    const stream = new ReadableStream<Uint8Array>({
      start(controller) {
        for (let i = 0; i < bytes.length; i += 1024) controller.enqueue(bytes.slice(i, i + 1024));
        controller.close();
      },
    });
    const streamed = await api(account, "/api/v1/configs/big", { method: "PUT", body: stream, duplex: "half" } as RequestInit);
    await expectProblem(streamed, 413, "payload_too_large");
  });

  it("accepts a body of exactly 16 KiB", async () => {
    const account = await createAccount();
    const base = JSON.stringify({ max_clips: 2, reframe: "center" });
    // Pad with JSON whitespace, which the schema does not see.
    const body = base.slice(0, -1) + " ".repeat(16 * 1024 - base.length) + "}";
    expect(new TextEncoder().encode(body).length).toBe(16 * 1024);
    expect((await api(account, "/api/v1/configs/exact", { method: "PUT", body })).status).toBe(201);
  });

  it("answers malformed JSON with 400 invalid_request", async () => {
    const account = await createAccount();
    for (const body of ['{"max_clips": 2', "not json", "{'a': 1}"]) {
      const problem = await expectProblem(await api(account, "/api/v1/configs/bad", { method: "PUT", body }), 400, "invalid_request");
      expect(problem.detail).toMatch(/JSON/);
    }
  });

  it("answers an empty JSON body where one is required with 400 invalid_request", async () => {
    const account = await createAccount();
    await expectProblem(await api(account, "/api/v1/configs/empty", { method: "PUT", body: "" }), 400, "invalid_request");
  });
});
