import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { SIGN_IN_FAILED, SIGN_UP_REDIRECT } from "../../src/dashboard/pages/auth";
import { admitSignIn, ATTEMPT_LIMITS, progressiveDelayMs, signInSucceeded } from "../../src/dashboard/security/throttle";
import { countAttempt } from "../../src/db/auth-throttle";
import { adminFetch } from "./helpers";
import { alertText, PASSWORD, uniqueEmail, Visitor } from "./dashboard-helpers";

const { perPair, perAccount, perAddress } = ATTEMPT_LIMITS;

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

  it("a sign-up answers a taken address exactly as a new one: same redirect, no session, nothing created", async () => {
    const { email } = await new Visitor().signUp();
    const taken = new Visitor();
    const takenRes = await taken.signUpOnly(email.toUpperCase(), "another password 123");
    const fresh = new Visitor();
    const freshRes = await fresh.signUpOnly(uniqueEmail(), "another password 123");
    for (const [res, visitor] of [[takenRes, taken], [freshRes, fresh]] as const) {
      expect(res.status).toBe(303);
      expect(res.headers.get("Location")).toBe(SIGN_UP_REDIRECT);
      expect(visitor.cookies.has("clipjobs_session")).toBe(false);
      expect(await res.text()).toBe("");
    }
    expect(new Set([...takenRes.headers.keys()])).toEqual(new Set([...freshRes.headers.keys()]));
    const count = await env.DB.prepare(`SELECT COUNT(*) AS n FROM accounts WHERE email = ?`).bind(email).first<{ n: number }>();
    expect(count?.n).toBe(1);
    // The original password still works; the one offered at sign-up does not.
    expect((await attempt(email, "another password 123", freshAddress())).status).toBe(401);
    expect((await attempt(email, PASSWORD, freshAddress())).status).toBe(303);
    // The page the sign-up leads to says what happened in both cases.
    expect(await (await fresh.get(SIGN_UP_REDIRECT)).text()).toContain("If that e-mail address had no account, it has one now");
  });
});

describe("sign-in throttling", () => {
  it("a third party failing on an account's e-mail never locks its owner out", async () => {
    const { email } = await new Visitor().signUp();
    const attacker = freshAddress();
    for (let i = 0; i < perPair.attempts; i++) expect((await attempt(email, "wrong password!", attacker)).status).toBe(401);
    // The attacker's address is now refused for this e-mail, even with the right password...
    const refused = await attempt(email, PASSWORD, attacker);
    expect(refused.status).toBe(429);
    expect(refused.alert).toMatch(/^Too many attempts\. Try again in \d+ minutes?\.$/);
    expect(Number(refused.retryAfter)).toBeGreaterThan(0);
    expect(Number(refused.retryAfter)).toBeLessThanOrEqual(perPair.windowSeconds);
    // ...while the owner, from their own address, signs in.
    expect((await attempt(email, PASSWORD, freshAddress())).status).toBe(303);
  });

  it("failures spread over many addresses only slow an e-mail down: a progressive delay, never a refusal", async () => {
    const { email } = await new Visitor().signUp();
    const delays: number[] = [];
    for (let i = 0; i < perAccount.freeFailures + 5; i++) {
      const verdict = await admitSignIn(env.DB, email, freshAddress());
      expect(verdict.allowed).toBe(true);
      if (verdict.allowed) delays.push(verdict.delayMs);
    }
    expect(delays).toEqual([0, 0, 0, 0, 0, 250, 500, 1000, 2000, 2000]);
    expect(progressiveDelayMs(1000)).toBe(perAccount.maxDelayMs);
    // The owner gets in (after the delay), and the success resets the e-mail's count.
    expect((await attempt(email, PASSWORD, freshAddress())).status).toBe(303);
    const after = await admitSignIn(env.DB, email, freshAddress());
    expect(after).toEqual({ allowed: true, delayMs: 0 });
  });

  it("an unknown e-mail address is throttled exactly like a known one", async () => {
    const unknown = uniqueEmail();
    const address = freshAddress();
    for (let i = 0; i < perPair.attempts; i++) expect((await attempt(unknown, PASSWORD, address)).status).toBe(401);
    const refused = await attempt(unknown, PASSWORD, address);
    expect(refused.status).toBe(429);
    expect(refused.alert).toMatch(/^Too many attempts/);
  });

  it(`allows ${perAddress.attempts} failures per client address per window, whatever the e-mail address`, async () => {
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
    const res = await visitor.signUpOnly();
    expect(res.status).toBe(429);
    expect(visitor.cookies.has("clipjobs_session")).toBe(false);
  });

  it("successes are not failures: they clear the pair's count and give the address its attempt back", async () => {
    const { email } = await new Visitor().signUp();
    const address = freshAddress();
    for (let round = 0; round < 2; round++) {
      for (let i = 0; i < perPair.attempts - 1; i++) expect((await attempt(email, "wrong password!", address)).status).toBe(401);
      expect((await attempt(email, PASSWORD, address)).status).toBe(303);
    }
    const busy = freshAddress();
    for (let i = 0; i < perAddress.attempts + 5; i++) {
      expect((await admitSignIn(env.DB, email, busy)).allowed).toBe(true);
      await signInSucceeded(env.DB, email, busy);
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
