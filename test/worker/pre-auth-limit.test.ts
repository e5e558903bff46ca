import { env, SELF } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { clientKey } from "../../src/gate/client-key.ts";
import { preAuthLimit } from "../../src/http/pre-auth-limit.ts";
import { isKnownUnknown, rememberUnknown, UNKNOWN_KEY_TTL_MS } from "../../src/keys/credential-cache.ts";
import { sha256Hex } from "../../src/keys/api-key.ts";
import { BASE, createAccount, expectProblem, issueKey } from "./helpers.ts";

const LIMIT = preAuthLimit(env);

function randomKey(): string {
  const alphabet = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";
  const bytes = crypto.getRandomValues(new Uint8Array(43));
  return `ck_live_${[...bytes].map((b) => alphabet[b % alphabet.length]).join("")}`;
}

function from(address: string, key: string | null): Promise<Response> {
  const headers: Record<string, string> = { "CF-Connecting-IP": address };
  if (key !== null) headers.Authorization = `Bearer ${key}`;
  return SELF.fetch(`${BASE}/api/v1/usage`, { headers });
}

let counter = 0;
function freshAddress(): string {
  counter += 1;
  return `203.0.113.${counter}`;
}

describe("per-client-address limit in front of authentication", { timeout: 60_000 }, () => {
  it(`refuses an address after ${LIMIT} requests without a valid key, with 429 and RateLimit headers`, async () => {
    const address = freshAddress();
    const valid = await createAccount();
    // Looked up once (it counts: this isolate did not know it), then known: it passes without the gate.
    expect((await from(address, valid.apiKey)).status).toBe(200);

    const batch = await Promise.all(Array.from({ length: LIMIT - 1 }, (_, i) => from(address, i % 3 === 0 ? "garbage" : randomKey())));
    for (const res of batch) await res.arrayBuffer();
    expect(batch.map((res) => res.status)).toEqual(Array.from({ length: LIMIT - 1 }, () => 401));

    for (const key of [randomKey(), null]) {
      const refused = await from(address, key);
      expect(refused.headers.get("RateLimit-Policy")).toBe(`"client";q=${LIMIT};w=60`);
      expect(refused.headers.get("RateLimit")).toMatch(/^"client";r=0;t=\d+$/);
      const retryAfter = Number(refused.headers.get("Retry-After"));
      expect(retryAfter).toBeGreaterThan(0);
      expect(retryAfter).toBeLessThanOrEqual(60);
      const problem = await expectProblem(refused, 429, "rate_limited");
      expect(problem.retry_after_seconds).toBe(retryAfter);
    }
    // Another address is unaffected; the key this isolate already knows still works from the refused one;
    // a key it has not looked up yet waits like any other request from there.
    expect((await from(freshAddress(), randomKey())).status).toBe(401);
    expect((await from(address, valid.apiKey)).status).toBe(200);
    const fresh = await issueKey(valid.accountId);
    await expectProblem(await from(address, fresh.apiKey), 429, "rate_limited");
  });

  it("counts an IPv6 client by its /64", () => {
    expect(clientKey("2001:db8:1:2:3:4:5:6")).toBe("2001:db8:1:2::/64");
    expect(clientKey("2001:0DB8:0001:0002::9")).toBe("2001:db8:1:2::/64");
    expect(clientKey("::ffff:192.0.2.1")).toBe("0:0:0:0::/64");
    expect(clientKey("198.51.100.7")).toBe("198.51.100.7");
  });

  it("rotating IPv6 addresses inside one /64 shares one limit", async () => {
    const batch = await Promise.all(Array.from({ length: LIMIT }, (_, i) => from(`2001:db8:77:1:${i.toString(16)}::1`, randomKey())));
    for (const res of batch) await res.arrayBuffer();
    expect(batch.every((res) => res.status === 401)).toBe(true);
    await expectProblem(await from("2001:db8:77:1:ffff::2", randomKey()), 429, "rate_limited");
    expect((await from("2001:db8:77:2::1", randomKey())).status).toBe(401);
  });
});

describe("unknown keys", { timeout: 30_000 }, () => {
  it("are remembered briefly: a repeated unknown key costs no D1 read", async () => {
    const account = await createAccount();
    const key = randomKey();
    const address = freshAddress();
    expect((await from(address, key)).status).toBe(401);
    // The key now exists in D1, but this isolate remembers it as unknown and does not ask again.
    await env.DB.prepare(
      `INSERT INTO api_keys (id, account_id, name, prefix, last4, hash, created_at) VALUES (?, ?, 'late', 'ck_live_', ?, ?, ?)`,
    )
      .bind(`key_${crypto.randomUUID().replaceAll("-", "")}`, account.accountId, key.slice(-4), await sha256Hex(key), new Date().toISOString())
      .run();
    expect((await from(address, key)).status).toBe(401);
  });

  it(`are forgotten after ${UNKNOWN_KEY_TTL_MS / 1000} s`, async () => {
    const hash = await sha256Hex(randomKey());
    const t0 = Date.now();
    rememberUnknown(hash, t0);
    expect(isKnownUnknown(hash, t0 + UNKNOWN_KEY_TTL_MS - 1)).toBe(true);
    expect(isKnownUnknown(hash, t0 + UNKNOWN_KEY_TTL_MS)).toBe(false);
  });
});
