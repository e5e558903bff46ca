/**
 * The operator API's door (src/admin/guard.ts): a per-address limit at the
 * pre-authentication gate's limit, in a window of its own, and a deployment
 * whose ADMIN_TOKEN is shorter than 32 characters keeps the API closed.
 */
import { createExecutionContext, env, SELF } from "cloudflare:test";
import { describe, expect, it, vi } from "vitest";
import { MIN_ADMIN_TOKEN_LENGTH } from "../../src/admin/guard.ts";
import { app } from "../../src/app.ts";
import { preAuthLimit } from "../../src/http/pre-auth-limit.ts";
import { BASE, expectProblem } from "./helpers.ts";

const LIMIT = preAuthLimit(env);

function adminFrom(address: string, token: string): Promise<Response> {
  return SELF.fetch(`${BASE}/admin/v1/plans`, { headers: { "CF-Connecting-IP": address, Authorization: `Bearer ${token}` } });
}

async function adminWith(adminToken: string | undefined, presented: string): Promise<Response> {
  return app.fetch(
    new Request(`${BASE}/admin/v1/plans`, { headers: { Authorization: `Bearer ${presented}` } }),
    { ...env, ADMIN_TOKEN: adminToken as string },
    createExecutionContext(),
  );
}

describe("the operator API's per-address limit", { timeout: 60_000 }, () => {
  it(`refuses an address after ${LIMIT} operator requests, right token or wrong, with 429 and RateLimit headers`, async () => {
    const address = "198.51.100.7";
    for (let i = 0; i < LIMIT; i += 1) {
      const res = await adminFrom(address, i % 2 === 0 ? env.ADMIN_TOKEN : `guess-${i}-${"x".repeat(40)}`);
      await res.body?.cancel();
      expect(res.status).toBe(i % 2 === 0 ? 200 : 401);
      expect(res.headers.get("RateLimit")).toMatch(new RegExp(`^"admin";r=${LIMIT - i - 1};t=\\d+$`));
    }
    const refused = await adminFrom(address, env.ADMIN_TOKEN);
    expect(refused.headers.get("RateLimit-Policy")).toBe(`"admin";q=${LIMIT};w=60`);
    const retryAfter = Number(refused.headers.get("Retry-After"));
    expect(retryAfter).toBeGreaterThan(0);
    const problem = await expectProblem(refused, 429, "rate_limited");
    expect(problem.detail).toContain("operator API requests from this client address");
    // Another address is unaffected, and so is the API's own pre-authentication window of this one.
    expect((await adminFrom("198.51.100.8", env.ADMIN_TOKEN)).status).toBe(200);
    const api = await SELF.fetch(`${BASE}/api/v1/usage`, { headers: { "CF-Connecting-IP": address } });
    await expectProblem(api, 401, "unauthorized");
  });
});

describe("a deployment whose ADMIN_TOKEN is too short", () => {
  it(`answers every operator request 503 service_misconfigured (tokens under ${MIN_ADMIN_TOKEN_LENGTH} characters), and logs it once`, async () => {
    const errors = vi.spyOn(console, "error").mockImplementation(() => {});
    const short = "s".repeat(MIN_ADMIN_TOKEN_LENGTH - 1);
    // The right token presented, or another: closed either way; an unset token too.
    for (const [configured, presented] of [
      [short, short],
      [short, "wrong"],
      [undefined, "anything"],
    ] as const) {
      const problem = await expectProblem(await adminWith(configured, presented), 503, "service_misconfigured");
      expect(problem.configuration_error).toBe("ADMIN_TOKEN");
      expect(problem.detail).toContain(`at least ${MIN_ADMIN_TOKEN_LENGTH} characters`);
    }
    const logged = errors.mock.calls.filter((call) => String(call[0]).startsWith("operator API closed"));
    errors.mockRestore();
    expect(logged).toHaveLength(1);
    // At the minimum length, it opens.
    const enough = "e".repeat(MIN_ADMIN_TOKEN_LENGTH);
    expect((await adminWith(enough, enough)).status).toBe(200);
    await expectProblem(await adminWith(enough, `${enough}x`), 401, "unauthorized");
  });

  it("the test deployment's own token is long enough", () => {
    expect(env.ADMIN_TOKEN.length).toBeGreaterThanOrEqual(MIN_ADMIN_TOKEN_LENGTH);
  });
});
