import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { SIGN_IN_FAILED } from "../../src/dashboard/pages/auth";
import { ATTEMPT_LIMITS } from "../../src/dashboard/security/throttle";
import { countAttempt } from "../../src/db/auth-throttle";
import { adminFetch } from "./helpers";
import { alertText, PASSWORD, uniqueEmail, Visitor } from "./dashboard-helpers";

const { perAccount, perAddress } = ATTEMPT_LIMITS;

async function attempt(email: string, password: string, address: string): Promise<{ status: number; alert: string; retryAfter: string | null }> {
  const res = await new Visitor(undefined, address).logIn(email, password);
  return { status: res.status, alert: alertText(await res.text()), retryAfter: res.headers.get("Retry-After") };
}

let addressCounter = 0;
function freshAddress(): string {
  addressCounter += 1;
  return `2001:db8::${addressCounter.toString(16)}:${Math.floor(Math.random() * 0xffff).toString(16)}`;
}

describe("generic sign-in errors", () => {
  it("an unknown address, a wrong password and an account without a password get the same answer", async () => {
    const { email } = await new Visitor().signUp();
    const operatorMade = uniqueEmail();
    expect((await adminFetch("/admin/v1/accounts", { method: "POST", body: JSON.stringify({ email: operatorMade }) })).status).toBe(201);

    const answers = [
      await attempt(uniqueEmail(), PASSWORD, freshAddress()),
      await attempt(email, `${PASSWORD}-wrong`, freshAddress()),
      await attempt(operatorMade, PASSWORD, freshAddress()),
      await attempt("not-an-email", PASSWORD, freshAddress()),
    ];
    for (const answer of answers) expect(answer).toEqual({ status: 401, alert: SIGN_IN_FAILED, retryAfter: null });
    expect((await attempt(email, PASSWORD, freshAddress())).status).toBe(303);
  });

  it("e-mail addresses are case-insensitive at sign-in", async () => {
    const { email } = await new Visitor().signUp();
    expect((await attempt(email.toUpperCase(), PASSWORD, freshAddress())).status).toBe(303);
  });

  it("signing up an address that has an account creates nothing and starts no session", async () => {
    const { email } = await new Visitor().signUp();
    const visitor = new Visitor();
    const { res } = await visitor.signUp(email.toUpperCase(), "another password 123");
    expect(res.status).toBe(400);
    expect(visitor.cookies.has("clipjobs_session")).toBe(false);
    const count = await env.DB.prepare(`SELECT COUNT(*) AS n FROM accounts WHERE email = ?`).bind(email).first<{ n: number }>();
    expect(count?.n).toBe(1);
    // The original password still works; the one offered at sign-up does not.
    expect((await attempt(email, "another password 123", freshAddress())).status).toBe(401);
  });
});

describe("sign-in throttling", () => {
  it(`allows ${perAccount.attempts} attempts per e-mail address per window, from any client address`, async () => {
    const { email } = await new Visitor().signUp();
    for (let i = 0; i < perAccount.attempts; i++) {
      expect((await attempt(email, "wrong password!", freshAddress())).status).toBe(401);
    }
    // Now even the right password is refused, from yet another address, without saying why beyond "too many".
    const refused = await attempt(email, PASSWORD, freshAddress());
    expect(refused.status).toBe(429);
    expect(refused.alert).toMatch(/^Too many attempts\. Try again in \d+ minutes?\.$/);
    expect(Number(refused.retryAfter)).toBeGreaterThan(0);
    expect(Number(refused.retryAfter)).toBeLessThanOrEqual(perAccount.windowSeconds);
    // Other addresses are unaffected.
    const other = await new Visitor().signUp();
    expect((await attempt(other.email, PASSWORD, freshAddress())).status).toBe(303);
  });

  it("an unknown e-mail address is throttled exactly like a known one", async () => {
    const unknown = uniqueEmail();
    for (let i = 0; i < perAccount.attempts; i++) expect((await attempt(unknown, PASSWORD, freshAddress())).status).toBe(401);
    const refused = await attempt(unknown, PASSWORD, freshAddress());
    expect(refused.status).toBe(429);
    expect(refused.alert).toMatch(/^Too many attempts/);
  });

  it(`allows ${perAddress.attempts} attempts per client address per window, whatever the e-mail address`, async () => {
    const address = freshAddress();
    const { email } = await new Visitor(undefined, freshAddress()).signUp();
    for (let i = 0; i < perAddress.attempts; i++) {
      expect((await attempt(uniqueEmail(), PASSWORD, address)).status).toBe(401);
    }
    expect((await attempt(email, PASSWORD, address)).status).toBe(429);
    // The same account from another client address still signs in.
    expect((await attempt(email, PASSWORD, freshAddress())).status).toBe(303);
    // Sign-ups from the throttled address are refused too.
    const visitor = new Visitor(undefined, address);
    const { res } = await visitor.signUp();
    expect(res.status).toBe(429);
    expect(visitor.cookies.has("clipjobs_session")).toBe(false);
  });

  it("a successful sign-in clears the e-mail address's count", async () => {
    const { email } = await new Visitor().signUp();
    for (let round = 0; round < 2; round++) {
      for (let i = 0; i < perAccount.attempts - 1; i++) expect((await attempt(email, "wrong password!", freshAddress())).status).toBe(401);
      expect((await attempt(email, PASSWORD, freshAddress())).status).toBe(303);
    }
  });

  it("counts start over when the window has passed", async () => {
    const scope = `test:${crypto.randomUUID()}`;
    const t0 = Date.now();
    expect(await countAttempt(env.DB, scope, 60, t0)).toBe(1);
    expect(await countAttempt(env.DB, scope, 60, t0 + 1000)).toBe(2);
    expect(await countAttempt(env.DB, scope, 60, t0 + 59_000)).toBe(3);
    expect(await countAttempt(env.DB, scope, 60, t0 + 60_000)).toBe(1);
    expect(await countAttempt(env.DB, scope, 60, t0 + 61_000)).toBe(2);
  });

  it("counts concurrent attempts exactly", async () => {
    const scope = `test:${crypto.randomUUID()}`;
    const now = Date.now();
    const counts = await Promise.all(Array.from({ length: 12 }, () => countAttempt(env.DB, scope, 60, now)));
    expect([...counts].sort((a, b) => a - b)).toEqual(Array.from({ length: 12 }, (_, i) => i + 1));
  });
});
