import { env, SELF } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { sha256Url } from "../../src/dashboard/security/tokens.ts";
import { SESSION_TTL_SECONDS } from "../../src/dashboard/security/session.ts";
import { csrfTokenIn, PASSWORD, uniqueEmail, Visitor } from "./dashboard-helpers.ts";

/** The Set-Cookie header that sets `name` (any prefix). */
function setCookieFor(res: Response, name: string): string {
  const header = res.headers.getSetCookie().find((h) => h.split("=", 1)[0]!.endsWith(name));
  if (!header) throw new Error(`no Set-Cookie for ${name}: ${res.headers.getSetCookie().join(" | ")}`);
  return header;
}

function attributes(header: string): string[] {
  return header.split(";").slice(1).map((a) => a.trim().toLowerCase());
}

async function sessionRows(email: string): Promise<{ token_hash: string; expires_at: string; created_at: string }[]> {
  const { results } = await env.DB.prepare(
    `SELECT s.token_hash, s.expires_at, s.created_at FROM sessions s JOIN accounts a ON a.id = s.account_id WHERE a.email = ?`,
  )
    .bind(email)
    .all<{ token_hash: string; expires_at: string; created_at: string }>();
  return results;
}

describe("sessions", () => {
  it("sign-up starts a session on the free plan: HttpOnly, SameSite=Lax, no Secure over local http", async () => {
    const visitor = new Visitor();
    const { email, res } = await visitor.signUp();
    expect(res.status).toBe(303);
    expect(res.headers.get("Location")).toBe("/dashboard/jobs");
    const cookie = setCookieFor(res, "clipjobs_session");
    expect(cookie.startsWith("clipjobs_session=")).toBe(true);
    const attrs = attributes(cookie);
    expect(attrs).toContain("httponly");
    expect(attrs).toContain("samesite=lax");
    expect(attrs).toContain("path=/");
    expect(attrs).toContain(`max-age=${SESSION_TTL_SECONDS}`);
    expect(attrs).not.toContain("secure");

    const plan = await env.DB.prepare(`SELECT plan FROM accounts WHERE email = ?`).bind(email).first<{ plan: string }>();
    expect(plan?.plan).toBe("free");
    const usage = await (await visitor.get("/dashboard/usage")).text();
    expect(usage).toContain("60 of 60 credits remaining");
  });

  it("over https the cookie is __Host- prefixed and Secure", async () => {
    const visitor = new Visitor("https://dash.example.test");
    const { res } = await visitor.signUp();
    expect(res.status).toBe(303);
    const cookie = setCookieFor(res, "clipjobs_session");
    expect(cookie.startsWith("__Host-clipjobs_session=")).toBe(true);
    expect(attributes(cookie)).toEqual(expect.arrayContaining(["httponly", "secure", "samesite=lax", "path=/"]));
    expect(cookie.toLowerCase()).not.toContain("domain=");
    // The prefixed cookie is what the https pages read back.
    expect((await visitor.get("/dashboard/keys")).status).toBe(200);
    // And a cookie without the prefix is not accepted there.
    const token = visitor.cookies.get("__Host-clipjobs_session") ?? "";
    const unprefixed = await SELF.fetch("https://dash.example.test/dashboard/keys", { headers: { Cookie: `clipjobs_session=${token}` }, redirect: "manual" });
    expect(unprefixed.status).toBe(303);
  });

  it("stores only the SHA-256 of the session token, with an expiry", async () => {
    const visitor = new Visitor();
    const { email } = await visitor.signUp();
    const token = visitor.cookies.get("clipjobs_session") ?? "";
    expect(token.length).toBeGreaterThanOrEqual(43);
    const [row, ...others] = await sessionRows(email);
    expect(others).toEqual([]);
    expect(row?.token_hash).toBe(await sha256Url(token));
    expect(row?.token_hash).not.toContain(token);
    const lifetime = Date.parse(row?.expires_at ?? "") - Date.parse(row?.created_at ?? "");
    expect(lifetime).toBe(SESSION_TTL_SECONDS * 1000);
  });

  it("refuses an expired session: pages redirect to the sign-in page, JSON answers 401", async () => {
    const visitor = new Visitor();
    const { email } = await visitor.signUp();
    expect((await visitor.get("/dashboard/configs")).status).toBe(200);
    await env.DB.prepare(`UPDATE sessions SET expires_at = ? WHERE account_id = (SELECT id FROM accounts WHERE email = ?)`)
      .bind(new Date(Date.now() - 1000).toISOString(), email)
      .run();
    const page = await visitor.get("/dashboard/configs");
    expect(page.status).toBe(303);
    expect(page.headers.get("Location")).toBe("/dashboard/login?next=%2Fdashboard%2Fconfigs");
    const status = await visitor.get("/dashboard/jobs/job_AAAAAAAAAAAAAAAAAAAA/status.json");
    expect(status.status).toBe(401);
  });

  it("log out deletes the session row and clears the cookie; a replayed cookie is refused", async () => {
    const visitor = new Visitor();
    const { email } = await visitor.signUp();
    const token = visitor.cookies.get("clipjobs_session") ?? "";
    const keysPage = await (await visitor.get("/dashboard/keys")).text();
    const res = await visitor.post("/dashboard/logout", { csrf_token: csrfTokenIn(keysPage) });
    expect(res.status).toBe(303);
    expect(res.headers.get("Location")).toBe("/dashboard/login");
    expect(attributes(setCookieFor(res, "clipjobs_session"))).toContain("max-age=0");
    expect(await sessionRows(email)).toEqual([]);

    for (const path of ["/dashboard/jobs", "/dashboard/keys", "/dashboard/configs", "/dashboard/usage"]) {
      const replay = await SELF.fetch(`http://worker.test${path}`, { headers: { Cookie: `clipjobs_session=${token}` }, redirect: "manual" });
      expect(replay.status, path).toBe(303);
      expect(replay.headers.get("Location")).toMatch(/^\/dashboard\/login\?next=/);
    }
  });

  it("signing in again opens a second, independent session and returns to the page asked for", async () => {
    const first = new Visitor();
    const { email } = await first.signUp();
    const second = new Visitor();
    const page = await second.get("/dashboard/login?next=%2Fdashboard%2Fusage");
    const res = await second.post("/dashboard/login", { csrf_token: csrfTokenIn(await page.text()), email, password: PASSWORD, next: "/dashboard/usage" });
    expect(res.status).toBe(303);
    expect(res.headers.get("Location")).toBe("/dashboard/usage");
    expect(await sessionRows(email)).toHaveLength(2);
    // Off-site `next` values are ignored.
    const third = new Visitor();
    const page3 = await third.get("/dashboard/login");
    const res3 = await third.post("/dashboard/login", { csrf_token: csrfTokenIn(await page3.text()), email, password: PASSWORD, next: "//evil.example/dashboard" });
    expect(res3.headers.get("Location")).toBe("/dashboard");
  });

  it("the bare origin and /dashboard lead to the sign-in page", async () => {
    const root = await SELF.fetch("http://worker.test/", { redirect: "manual" });
    expect(root.status).toBe(302);
    expect(root.headers.get("Location")).toBe("/dashboard");
    const visitor = new Visitor();
    const dashboard = await visitor.get("/dashboard");
    expect(dashboard.headers.get("Location")).toBe("/dashboard/login");
    const login = await visitor.get("/dashboard/login");
    expect(login.status).toBe(200);
    expect(login.headers.get("Content-Security-Policy")).toContain("frame-ancestors 'none'");
    expect(login.headers.get("Cache-Control")).toBe("no-store");
    expect(uniqueEmail()).not.toBe(uniqueEmail());
  });
});
