/**
 * The dashboard's request limits: per client address (IPv6 by /64) and per
 * session, on every page, the status polling and the sign-in and sign-up
 * forms, with the API's RateLimit headers; and the windows leave nothing
 * behind once they are over.
 */
import { env, runDurableObjectAlarm, runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import {
  ADDRESS_POLICY,
  DASHBOARD_REQUESTS_PER_ADDRESS,
  DASHBOARD_REQUESTS_PER_SESSION,
  SESSION_POLICY,
} from "../../src/dashboard/security/request-limit.ts";
import type { ClientGate } from "../../src/gate/client-gate.ts";
import { clientKey } from "../../src/gate/client-key.ts";
import { Visitor } from "./dashboard-helpers.ts";

let counter = 0;
function fresh64(): string {
  counter += 1;
  return `2001:db8:${(0x4000 + counter).toString(16)}:${Math.floor(Math.random() * 0xffff).toString(16)}`;
}

/** The items of a RateLimit / RateLimit-Policy header by policy name. */
function items(header: string | null): Map<string, Record<string, number>> {
  const out = new Map<string, Record<string, number>>();
  for (const item of (header ?? "").split(",")) {
    const [name, ...params] = item.trim().split(";");
    if (!name) continue;
    out.set(name.replaceAll('"', ""), Object.fromEntries(params.map((p) => [p.split("=")[0]!, Number(p.split("=")[1])])));
  }
  return out;
}

describe("per client address", { timeout: 120_000 }, () => {
  it(`the log-in page: ${DASHBOARD_REQUESTS_PER_ADDRESS} requests a minute from one /64 (any addresses in it), then 429 with Retry-After; another /64 is not affected`, async () => {
    const prefix = fresh64();
    const statuses: number[] = [];
    let last: Response | undefined;
    for (let i = 0; i < DASHBOARD_REQUESTS_PER_ADDRESS + 1; i++) {
      // A new address of the same /64 for every request.
      const res = await new Visitor(undefined, `${prefix}:${(i + 1).toString(16)}::1`).get("/dashboard/login");
      statuses.push(res.status);
      if (i === 0) {
        const policy = items(res.headers.get("RateLimit-Policy")).get(ADDRESS_POLICY);
        expect(policy).toEqual({ q: DASHBOARD_REQUESTS_PER_ADDRESS, w: 60 });
        expect(items(res.headers.get("RateLimit")).get(ADDRESS_POLICY)?.r).toBe(DASHBOARD_REQUESTS_PER_ADDRESS - 1);
      }
      last = res;
      await res.body?.cancel();
    }
    expect(statuses.slice(0, DASHBOARD_REQUESTS_PER_ADDRESS).every((s) => s === 200)).toBe(true);
    expect(statuses.at(-1)).toBe(429);
    expect(Number(last!.headers.get("Retry-After"))).toBeGreaterThan(0);
    expect(items(last!.headers.get("RateLimit")).get(ADDRESS_POLICY)?.r).toBe(0);
    // Sign-up and sign-in forms from that /64 are refused before any work.
    const form = await new Visitor(undefined, `${prefix}::99`).post("/dashboard/signup", { email: "x@example.com", password: "long enough password" });
    expect(form.status).toBe(429);
    expect((await new Visitor(undefined, `${fresh64()}::1`).get("/dashboard/login")).status).toBe(200);
  });

  it("concurrent requests: the address window lets exactly the limit through", async () => {
    // Straight at the window object (the middleware asks it once per request): 40 more than the limit at once.
    const stub = env.CLIENTS.get(env.CLIENTS.idFromName(`${ADDRESS_POLICY}:${clientKey(`${fresh64()}::7`)}`));
    const results = await Promise.all(Array.from({ length: DASHBOARD_REQUESTS_PER_ADDRESS + 40 }, () => stub.hit(DASHBOARD_REQUESTS_PER_ADDRESS)));
    expect(results.filter((r) => r.allowed).length).toBe(DASHBOARD_REQUESTS_PER_ADDRESS);
    expect(results.filter((r) => !r.allowed).every((r) => r.retryAfterSeconds > 0 && r.remaining === 0)).toBe(true);
  });
});

describe("per session", { timeout: 120_000 }, () => {
  it(`one session polling a job's status: ${DASHBOARD_REQUESTS_PER_SESSION} a minute, then 429 (JSON, Retry-After) from any address; another session of the same account is not affected`, async () => {
    const visitor = new Visitor(undefined, `${fresh64()}::1`);
    const { email } = await visitor.signUp();
    const res = await visitor.get("/dashboard/jobs");
    expect(res.status).toBe(200);
    const headers = items(res.headers.get("RateLimit-Policy"));
    expect(headers.get(SESSION_POLICY)).toEqual({ q: DASHBOARD_REQUESTS_PER_SESSION, w: 60 });
    expect(headers.get(ADDRESS_POLICY)).toEqual({ q: DASHBOARD_REQUESTS_PER_ADDRESS, w: 60 });
    await res.body?.cancel();
    const used = items(res.headers.get("RateLimit")).get(SESSION_POLICY)!;
    const left = used.r!;

    // The rest of the session's window, polled one after the other, each poll from the next of three /64s (a
    // new client window costs a Durable Object of its own; three show that the session window spans addresses).
    const prefixes = [fresh64(), fresh64(), fresh64()];
    const polls: Response[] = [];
    for (let i = 0; i < left + 1; i++) {
      const poll = await visitor.get("/dashboard/jobs/job_doesnotexist00000000/status.json", { "CF-Connecting-IP": `${prefixes[i % 3]}::${(i + 1).toString(16)}` });
      polls.push(poll);
      if (poll.status !== 429) await poll.body?.cancel();
    }
    expect(polls.slice(0, left).every((r) => r.status === 404)).toBe(true);
    const refused = polls.at(-1)!;
    expect(refused.status).toBe(429);
    const body = await refused.json<{ error: string; retry_after_seconds: number }>();
    expect(body.error).toBe("rate_limited");
    expect(Number(refused.headers.get("Retry-After"))).toBe(body.retry_after_seconds);
    expect(items(refused.headers.get("RateLimit")).get(SESSION_POLICY)?.r).toBe(0);

    // The same account signed in elsewhere has its own window.
    const other = new Visitor(undefined, `${fresh64()}::1`);
    expect((await other.logIn(email)).status).toBe(303);
    expect((await other.get("/dashboard/jobs")).status).toBe(200);
  });
});

describe("windows are removed once over", () => {
  it("the gate's alarm deletes an address window whose requests have all left it, and keeps one still counting", async () => {
    const key = clientKey(`${fresh64()}::1`);
    const stub = env.CLIENTS.get(env.CLIENTS.idFromName(`${ADDRESS_POLICY}:${key}`));
    expect((await stub.hit(5)).allowed).toBe(true);
    // An alarm is set for when the window is over.
    await runInDurableObject(stub, async (_gate: ClientGate, state) => {
      expect(await state.storage.getAlarm()).not.toBeNull();
    });
    // Still counting: the alarm keeps it.
    expect(await runDurableObjectAlarm(stub)).toBe(true);
    await runInDurableObject(stub, (gate: ClientGate) => expect(gate.liveRows()).toBeGreaterThan(0));
    // Over (the rows moved two minutes into the past): the alarm deletes everything.
    await runInDurableObject(stub, async (_gate: ClientGate, state) => {
      state.storage.sql.exec(`UPDATE request_window SET second = second - 200`);
      await state.storage.setAlarm(Date.now() + 60_000);
    });
    expect(await runDurableObjectAlarm(stub)).toBe(true);
    await runInDurableObject(stub, async (gate: ClientGate, state) => {
      expect(state.storage.sql.exec<{ n: number }>(`SELECT COUNT(*) AS n FROM request_window`).one().n).toBe(0);
      expect(await state.storage.getAlarm()).toBeNull();
      expect(gate.liveRows()).toBe(0);
    });
    // A later request starts a fresh window.
    const again = await stub.hit(5);
    expect(again).toMatchObject({ allowed: true, remaining: 4 });
  });
});
