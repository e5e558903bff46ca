import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import {
  formatPasswordHash,
  hashPassword,
  parsePasswordHash,
  PASSWORD_ALGORITHM,
  PBKDF2_ITERATIONS,
  verifyPassword,
} from "../../src/dashboard/security/password.ts";
import { PASSWORD, uniqueEmail, Visitor } from "./dashboard-helpers.ts";

async function pbkdf2(password: string, salt: Uint8Array, iterations: number): Promise<Uint8Array> {
  const key = await crypto.subtle.importKey("raw", new TextEncoder().encode(password), "PBKDF2", false, ["deriveBits"]);
  return new Uint8Array(await crypto.subtle.deriveBits({ name: "PBKDF2", hash: "SHA-256", salt, iterations }, key, 256));
}

async function storedHashOf(email: string): Promise<string | null> {
  const row = await env.DB.prepare(`SELECT password_hash FROM accounts WHERE email = ?`).bind(email).first<{ password_hash: string | null }>();
  return row?.password_hash ?? null;
}

describe("password hashing", () => {
  it("stores algorithm, iterations, a 16-byte salt and a 32-byte hash", async () => {
    const stored = await hashPassword(PASSWORD);
    const parsed = parsePasswordHash(stored);
    expect(stored.startsWith(`${PASSWORD_ALGORITHM}$${PBKDF2_ITERATIONS}$`)).toBe(true);
    // Production Workers refuse PBKDF2 above 100,000 iterations (workerd under
    // wrangler dev and miniflare does not enforce it): the highest count that deploys.
    expect(parsed?.iterations).toBe(100_000);
    expect(parsed?.salt.byteLength).toBe(16);
    expect(parsed?.hash.byteLength).toBe(32);
    expect(stored).not.toContain(PASSWORD);
  });

  it("verifies the right password and refuses a wrong one", async () => {
    const stored = await hashPassword(PASSWORD);
    expect(await verifyPassword(PASSWORD, stored)).toEqual({ ok: true, needsRehash: false });
    expect((await verifyPassword(`${PASSWORD}!`, stored)).ok).toBe(false);
    expect((await verifyPassword("", stored)).ok).toBe(false);
  });

  it("salts every hash: the same password twice gives different salts and hashes", async () => {
    const [a, b] = [parsePasswordHash(await hashPassword(PASSWORD)), parsePasswordHash(await hashPassword(PASSWORD))];
    expect(a && b).toBeTruthy();
    expect(a?.salt).not.toEqual(b?.salt);
    expect(a?.hash).not.toEqual(b?.hash);
  });

  it("treats composed and decomposed Unicode as the same password", async () => {
    const stored = await hashPassword("caf\u00e9-password");
    expect((await verifyPassword("cafe\u0301-password", stored)).ok).toBe(true);
  });

  it("refuses malformed stored values instead of throwing", async () => {
    for (const stored of ["", "plain", "pbkdf2-sha256$abc$AAAA$AAAA", "md5$1000$AAAA$AAAA", "pbkdf2-sha256$100001$AAAA$AAAA"]) {
      expect((await verifyPassword(PASSWORD, stored)).ok).toBe(false);
    }
  });

  it("signing up stores only the hash; a hash with fewer iterations is upgraded at the next sign-in", async () => {
    const visitor = new Visitor();
    const { email } = await visitor.signUp();
    const stored = await storedHashOf(email);
    expect(stored && (await verifyPassword(PASSWORD, stored)).ok).toBe(true);

    // An older, weaker hash of the same password (as if made before the iteration count was raised).
    const salt = crypto.getRandomValues(new Uint8Array(16));
    const weak = formatPasswordHash({ algorithm: PASSWORD_ALGORITHM, iterations: 1000, salt, hash: await pbkdf2(PASSWORD, salt, 1000) });
    await env.DB.prepare(`UPDATE accounts SET password_hash = ? WHERE email = ?`).bind(weak, email).run();
    expect(await verifyPassword(PASSWORD, weak)).toEqual({ ok: true, needsRehash: true });

    const res = await new Visitor().logIn(email);
    expect(res.status).toBe(303);
    const upgraded = await storedHashOf(email);
    expect(parsePasswordHash(upgraded ?? "")?.iterations).toBe(PBKDF2_ITERATIONS);
    expect(upgraded && (await verifyPassword(PASSWORD, upgraded)).ok).toBe(true);
  });

  it("refuses a sign-up with a short password and creates nothing", async () => {
    const email = uniqueEmail();
    const res = await new Visitor().submit("/dashboard/signup", "/dashboard/signup", { email, password: "short" });
    expect(res.status).toBe(400);
    expect(await res.text()).toContain("at least 10 characters");
    expect(await env.DB.prepare(`SELECT id FROM accounts WHERE email = ?`).bind(email).first()).toBeNull();
  });
});
