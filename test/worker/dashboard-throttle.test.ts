import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { SIGN_IN_FAILED, SIGN_UP_REDIRECT } from "../../src/dashboard/pages/auth.tsx";
import { admitSignIn, admitSignUp, ATTEMPT_LIMITS, MAX_QUEUED_WAIT_MS, progressiveDelayMs, signInSucceeded } from "../../src/dashboard/security/throttle.ts";
import { countAttempt } from "../../src/db/auth-throttle.ts";
import { clientKey } from "../../src/gate/client-key.ts";
import { adminFetch } from "./helpers.ts";
import { alertText, PASSWORD, uniqueEmail, Visitor } from "./dashboard-helpers.ts";

const { perPair, perAccount, perAddress, signUpsPerAddress } = ATTEMPT_LIMITS;

async function attempt(email: string, password: string, address: string): Promise<{ status: number; alert: string; retryAfter: string | null }> {
  const res = await new Visitor(undefined, address).logIn(email, password);
  return { status: res.status, alert: alertText(await res.text()), retryAfter: res.headers.get("Retry-After") };
}

let addressCounter = 0;
/** An address in a /64 of its own (addresses in one /64 count as one client). */
function freshAddress(): string {
  addressCounter += 1;
  return `2001:db8:${addressCounter.toString(16)}:${Math.floor(Math.random() * 0xffff).toString(16)}::1`;
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
    // One attempt after the other, each made once the previous one's wait is over (as a client that waits).
    // Started in the past, so the last turn is over before the owner's real sign-in below.
    let now = Date.now() - 6000;
    for (let i = 0; i < perAccount.freeFailures + 5; i++) {
      const verdict = await admitSignIn(env.DB, email, freshAddress(), now);
      expect(verdict.allowed).toBe(true);
      if (verdict.allowed) delays.push(verdict.delayMs);
      if (verdict.allowed) now += verdict.delayMs;
    }
    expect(delays).toEqual([0, 0, 0, 0, 0, 250, 500, 1000, 2000, 2000]);
    expect(progressiveDelayMs(1000)).toBe(perAccount.maxDelayMs);
    // The owner gets in (after the delay), and the success resets the e-mail's count.
    expect((await attempt(email, PASSWORD, freshAddress())).status).toBe(303);
    const after = await admitSignIn(env.DB, email, freshAddress(), now);
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

/** `count` addresses inside one /64, each different. */
function addressesIn64(count: number): string[] {
  addressCounter += 1;
  const prefix = `2001:db8:ff${addressCounter.toString(16)}:${Math.floor(Math.random() * 0xffff).toString(16)}`;
  return Array.from({ length: count }, (_, i) => `${prefix}:${(i + 1).toString(16)}:0:${Math.floor(Math.random() * 0xffff).toString(16)}:1`);
}

describe("IPv6 is counted by /64, like the API's pre-authentication gate", { timeout: 60_000 }, () => {
  it(`${perAddress.attempts} failures from ${perAddress.attempts} different addresses of one /64 use up that /64; the next address in it is refused, another /64 is not`, async () => {
    const addresses = addressesIn64(perAddress.attempts + 1);
    const { email } = await new Visitor(undefined, freshAddress()).signUp();
    for (const address of addresses.slice(0, perAddress.attempts)) {
      expect((await attempt(uniqueEmail(), PASSWORD, address)).status).toBe(401);
    }
    expect((await attempt(email, PASSWORD, addresses.at(-1)!)).status).toBe(429);
    // The same /64 written another way (expanded, upper case) is the same client.
    const expanded = addresses[0]!.replace("2001:db8:", "2001:0DB8:");
    expect((await attempt(email, PASSWORD, expanded)).status).toBe(429);
    expect((await attempt(email, PASSWORD, freshAddress())).status).toBe(303);
  });

  it("the (e-mail, client) pair is the /64 too: rotating addresses inside it does not reset the pair's count", async () => {
    const { email } = await new Visitor().signUp();
    const addresses = addressesIn64(perPair.attempts + 1);
    for (const address of addresses.slice(0, perPair.attempts)) expect((await attempt(email, "wrong password!", address)).status).toBe(401);
    expect((await attempt(email, PASSWORD, addresses.at(-1)!)).status).toBe(429);
  });

  it(`sign-ups: at most ${signUpsPerAddress.attempts} per /64 per hour, whatever the addresses inside it`, async () => {
    const addresses = addressesIn64(signUpsPerAddress.attempts + 1);
    for (const address of addresses.slice(0, signUpsPerAddress.attempts)) {
      expect((await new Visitor(undefined, address).signUpOnly()).status).toBe(303);
    }
    const refused = await new Visitor(undefined, addresses.at(-1)!).signUpOnly();
    expect(refused.status).toBe(429);
    expect(Number(refused.headers.get("Retry-After"))).toBeGreaterThan(perAddress.windowSeconds);
    expect((await new Visitor(undefined, freshAddress()).signUpOnly()).status).toBe(303);
    // The counted client is the /64 (the key the API gate uses).
    expect((await admitSignUp(env.DB, clientKey(addresses[0]!))).allowed).toBe(false);
  });
});

describe("parallel guesses on one e-mail address take turns", { timeout: 60_000 }, () => {
  it("concurrent attempts past the free failures each wait their own turn (one delay apart); past the longest wait they are refused and reserve nothing", async () => {
    const email = uniqueEmail();
    const now = Date.now();
    for (let i = 0; i < perAccount.freeFailures; i++) expect(await admitSignIn(env.DB, email, freshAddress(), now)).toEqual({ allowed: true, delayMs: 0 });
    // Twelve at once, from twelve clients: at the largest delay only MAX_QUEUED_WAIT_MS / 2 s of turns fit.
    for (let i = 0; i < 3; i++) await admitSignIn(env.DB, email, freshAddress(), now - 60_000);
    const verdicts = await Promise.all(Array.from({ length: 12 }, () => admitSignIn(env.DB, email, freshAddress(), now)));
    const waits = verdicts.flatMap((v) => (v.allowed ? [v.delayMs] : [])).sort((a, b) => a - b);
    const refused = verdicts.filter((v) => !v.allowed);
    expect(waits.length).toBe(MAX_QUEUED_WAIT_MS / perAccount.maxDelayMs);
    waits.forEach((wait, i) => expect(wait).toBe((i + 1) * perAccount.maxDelayMs));
    for (const verdict of refused) expect(verdict.allowed === false && verdict.retryAfterSeconds >= 1).toBe(true);
    // Nothing was reserved by the refused ones: once the queue has drained, an attempt waits one delay only.
    const later = await admitSignIn(env.DB, email, freshAddress(), now + MAX_QUEUED_WAIT_MS);
    expect(later).toEqual({ allowed: true, delayMs: perAccount.maxDelayMs });
  });

  it("the owner is slowed, not locked out: with no guessing going on, the right password gets in after one delay", async () => {
    const { email } = await new Visitor().signUp();
    for (let i = 0; i < perAccount.freeFailures + 3; i++) await admitSignIn(env.DB, email, freshAddress(), Date.now() - 30_000);
    const started = Date.now();
    expect((await attempt(email, PASSWORD, freshAddress())).status).toBe(303);
    expect(Date.now() - started).toBeGreaterThanOrEqual(perAccount.maxDelayMs - 50);
  });
});

describe("counters are removed once their window is over", () => {
  it("an attempt removes ended counters (and keeps running ones)", async () => {
    const t0 = Date.now() - 2 * 60 * 60 * 1000;
    const ended = Array.from({ length: 5 }, () => `test-ended:${crypto.randomUUID()}`);
    for (const scope of ended) await countAttempt(env.DB, scope, 15 * 60, t0);
    const running = `test-running:${crypto.randomUUID()}`;
    await countAttempt(env.DB, running, 15 * 60, Date.now());
    await admitSignUp(env.DB, freshAddress());
    const left = await env.DB.prepare(`SELECT scope FROM auth_throttle WHERE scope IN (${[...ended, running].map(() => "?").join(",")})`)
      .bind(...ended, running)
      .all<{ scope: string }>();
    expect(left.results.map((r) => r.scope)).toEqual([running]);
  });
});
