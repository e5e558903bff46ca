import { SELF } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { csrfTokenIn, PASSWORD, uniqueEmail, Visitor } from "./dashboard-helpers.ts";

async function signedIn(): Promise<{ visitor: Visitor; token: string }> {
  const visitor = new Visitor();
  await visitor.signUp();
  const token = csrfTokenIn(await (await visitor.get("/dashboard/keys")).text());
  return { visitor, token };
}

async function keyCount(visitor: Visitor): Promise<number> {
  const html = await (await visitor.get("/dashboard/keys")).text();
  return (html.match(/data-key-id=/g) ?? []).length;
}

describe("CSRF protection", () => {
  it("refuses a signed-in form without the token, with a wrong one, or with another session's", async () => {
    const { visitor, token } = await signedIn();
    const other = await signedIn();
    const attempts: Record<string, string>[] = [{ name: "a" }, { name: "b", csrf_token: "" }, { name: "c", csrf_token: `${token}x` }, { name: "d", csrf_token: other.token }];
    for (const fields of attempts) {
      const res = await visitor.post("/dashboard/keys", fields);
      expect(res.status, JSON.stringify(fields)).toBe(403);
    }
    expect(await keyCount(visitor)).toBe(0);
    const ok = await visitor.post("/dashboard/keys", { name: "good", csrf_token: token });
    expect(ok.status).toBe(200);
    expect(await keyCount(visitor)).toBe(1);
  });

  it("the token is the same on every page of a session and differs between sessions", async () => {
    const { visitor, token } = await signedIn();
    for (const path of ["/dashboard/jobs", "/dashboard/configs", "/dashboard/usage"]) {
      expect(csrfTokenIn(await (await visitor.get(path)).text())).toBe(token);
    }
    expect((await signedIn()).token).not.toBe(token);
  });

  it("every form of every signed-in page carries the token", async () => {
    const { visitor, token } = await signedIn();
    await visitor.post("/dashboard/configs", { csrf_token: token, name: "one" });
    for (const path of ["/dashboard/jobs", "/dashboard/configs", "/dashboard/configs/one", "/dashboard/configs/one/delete", "/dashboard/keys", "/dashboard/usage"]) {
      const html = await (await visitor.get(path)).text();
      const forms = html.match(/<form[^>]*method="post"[\s\S]*?<\/form>/g) ?? [];
      expect(forms.length, path).toBeGreaterThan(0);
      for (const form of forms) expect(form, path).toContain(`name="csrf_token" value="${token}"`);
    }
  });

  it("refuses a POST from another origin even with the right token", async () => {
    const { visitor, token } = await signedIn();
    const crossOrigin = await visitor.post("/dashboard/keys", { name: "x", csrf_token: token }, { Origin: "https://evil.example" });
    expect(crossOrigin.status).toBe(403);
    expect(await crossOrigin.text()).toContain("another site");
    const nullOrigin = await visitor.post("/dashboard/keys", { name: "x", csrf_token: token }, { Origin: "null" });
    expect(nullOrigin.status).toBe(403);
    // Same scheme and host but another port is another origin.
    const otherPort = await visitor.post("/dashboard/keys", { name: "x", csrf_token: token }, { Origin: "http://worker.test:8080" });
    expect(otherPort.status).toBe(403);
    expect(await keyCount(visitor)).toBe(0);
  });

  it("without Origin, a cross-site Sec-Fetch-Site is refused", async () => {
    const { visitor, token } = await signedIn();
    const cookie = [...visitor.cookies].map(([n, v]) => `${n}=${v}`).join("; ");
    const res = await SELF.fetch("http://worker.test/dashboard/keys", {
      method: "POST",
      headers: { "Content-Type": "application/x-www-form-urlencoded", Cookie: cookie, "Sec-Fetch-Site": "cross-site" },
      body: new URLSearchParams({ name: "x", csrf_token: token }).toString(),
      redirect: "manual",
    });
    expect(res.status).toBe(403);
  });

  it("log out needs the token too", async () => {
    const { visitor } = await signedIn();
    expect((await visitor.post("/dashboard/logout", {})).status).toBe(403);
    expect((await visitor.get("/dashboard/keys")).status).toBe(200);
  });

  it("sign-in and sign-up forms need the double-submit token matching their cookie", async () => {
    const first = new Visitor();
    const { email } = await first.signUp();
    const visitor = new Visitor();
    const page = await visitor.get("/dashboard/login");
    const token = csrfTokenIn(await page.text());
    expect(visitor.cookies.get("clipjobs_csrf")).toBe(token);

    expect((await visitor.post("/dashboard/login", { email, password: PASSWORD })).status).toBe(403);
    expect((await visitor.post("/dashboard/login", { email, password: PASSWORD, csrf_token: "A".repeat(43) })).status).toBe(403);
    // The right field without its cookie (a forged cross-site form cannot set it).
    const stranger = new Visitor();
    expect((await stranger.post("/dashboard/login", { email, password: PASSWORD, csrf_token: token })).status).toBe(403);
    expect((await stranger.post("/dashboard/signup", { email: uniqueEmail(), password: PASSWORD, csrf_token: token })).status).toBe(403);
    expect(stranger.cookies.has("clipjobs_session")).toBe(false);

    const ok = await visitor.post("/dashboard/login", { email, password: PASSWORD, csrf_token: token });
    expect(ok.status).toBe(303);
    expect(visitor.cookies.has("clipjobs_session")).toBe(true);
  });
});
