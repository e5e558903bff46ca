/**
 * An account's platform cookies files: PUT/GET/DELETE /api/v1/cookies/{platform}
 * and the engine channel's GET /internal/v1/jobs/:id/cookies. D1, the job
 * state and the tokens are real; the engine is the stand-in of engine-stub.ts.
 */
import { env } from "cloudflare:test";
import { beforeEach, describe, expect, it } from "vitest";
import { type EngineClient, FakeEngine } from "./engine-stub.ts";
import { api, createAccount, expectProblem, type TestAccount } from "./helpers.ts";
import { startJob } from "./jobs-helpers.ts";

let engine: FakeEngine;
beforeEach(() => {
  engine = new FakeEngine();
  engine.install();
});

const FAR = 4_102_444_800; // 2100-01-01

/** A browser export: YouTube's session cookies and another site's, which are never stored. */
function exportFile(session: string): string {
  return [
    "# Netscape HTTP Cookie File",
    "# This is a generated file! Do not edit.",
    "",
    `.youtube.com\tTRUE\t/\tTRUE\t${FAR}\tSID\t${session}`,
    `#HttpOnly_.youtube.com\tTRUE\t/\tTRUE\t${FAR}\t__Secure-3PSID\t${session}-3p`,
    `.bank.example\tTRUE\t/\tTRUE\t${FAR}\tsession\tbank-secret`,
    "",
  ].join("\n");
}

function putCookies(account: TestAccount, platform: string, body: string, contentType = "text/plain"): Promise<Response> {
  return api(account, `/api/v1/cookies/${platform}`, { method: "PUT", body, headers: { "Content-Type": contentType } });
}

async function platformJob(account: TestAccount, videoUrl: string): Promise<EngineClient> {
  const client = await startJob(account, engine, { video_url: videoUrl, video_type: "podcast" });
  return client;
}

describe("/api/v1/cookies/{platform}", () => {
  it("stores only the platform's cookies, sealed, and answers with a description, never the file", async () => {
    const account = await createAccount("unmetered");
    const put = await putCookies(account, "youtube", exportFile("alpha-session"));
    expect(put.status).toBe(201);
    const described = (await put.json()) as Record<string, unknown>;
    expect(described).toMatchObject({ platform: "youtube", cookie_count: 2, expires_at: "2100-01-01T00:00:00.000Z" });
    expect(JSON.stringify(described)).not.toContain("alpha-session");

    const got = await api(account, "/api/v1/cookies/youtube");
    expect(got.status).toBe(200);
    const text = await got.text();
    expect(text).not.toContain("alpha-session");
    expect(JSON.parse(text)).toMatchObject({ platform: "youtube", cookie_count: 2 });
    const list = (await (await api(account, "/api/v1/cookies")).json()) as { cookies: { platform: string }[] };
    expect(list.cookies.map((c) => c.platform)).toEqual(["youtube"]);

    // At rest: ciphertext only, neither the session nor the other site's cookie.
    const row = await env.DB.prepare("SELECT * FROM platform_cookies WHERE account_id = ?").bind(account.accountId).first<Record<string, unknown>>();
    expect(JSON.stringify(row)).not.toMatch(/alpha-session|bank-secret|youtube\.com/);

    expect((await putCookies(account, "youtube", exportFile("beta-session"))).status).toBe(200);
    expect((await api(account, "/api/v1/cookies/youtube", { method: "DELETE" })).status).toBe(204);
    await expectProblem(await api(account, "/api/v1/cookies/youtube"), 404, "not_found");
    await expectProblem(await api(account, "/api/v1/cookies/youtube", { method: "DELETE" }), 404, "not_found");
  });

  it("refuses what is not a cookies file of that platform, with a documented code", async () => {
    const account = await createAccount("unmetered");
    await expectProblem(await putCookies(account, "youtube", "SID=abc; HSID=def"), 422, "invalid_cookies");
    await expectProblem(await putCookies(account, "vimeo", exportFile("x")), 422, "invalid_cookies");
    await expectProblem(await putCookies(account, "youtube", `.youtube.com\tMAYBE\t/\tTRUE\t${FAR}\tSID\tx`), 422, "invalid_cookies");
    await expectProblem(await putCookies(account, "youtube", "x".repeat(100 * 1024 + 1)), 413, "cookies_too_large");
    await expectProblem(await putCookies(account, "youtube", exportFile("x"), "application/json"), 415, "unsupported_media_type");
    await expectProblem(await putCookies(account, "myspace", exportFile("x")), 400, "invalid_request");
  });
});

describe("GET /internal/v1/jobs/:id/cookies", () => {
  /** Reads the route with the job's token, then ends the job (an account has one active job at a time). */
  async function readCookies(client: EngineClient): Promise<Response> {
    const res = await client.send("cookies");
    const copy = new Response(await res.arrayBuffer(), { status: res.status, headers: res.headers });
    expect((await client.fail({ code: "source_sign_in_required", message: "YouTube said: “Sign in to confirm you’re not a bot.”" })).status).toBe(200);
    return copy;
  }

  it("gives a job only its own account's file, for its own video's platform", async () => {
    const owner = await createAccount("unmetered");
    const other = await createAccount("unmetered");
    expect((await putCookies(owner, "youtube", exportFile("owner-session"))).status).toBe(201);

    // The owner's YouTube job gets the owner's YouTube cookies, and nothing of the other site.
    const own = await readCookies(await platformJob(owner, "https://www.youtube.com/watch?v=abc"));
    expect(own.status).toBe(200);
    const file = await own.text();
    expect(file).toContain("\tSID\towner-session");
    expect(file).toContain("#HttpOnly_.youtube.com");
    expect(file).not.toContain("bank-secret");

    // Another account's YouTube job does not.
    await expectProblem(await readCookies(await platformJob(other, "https://youtu.be/abc")), 404, "not_found");
    // The owner's job on another platform does not.
    await expectProblem(await readCookies(await platformJob(owner, "https://vimeo.com/123")), 404, "not_found");
    // A direct link's token does not even open the route.
    await expectProblem(await readCookies(await platformJob(owner, "https://videos.example.com/t.mp4")), 401, "unauthorized");

    // Deleted: the next job downloads without it.
    expect((await api(owner, "/api/v1/cookies/youtube", { method: "DELETE" })).status).toBe(204);
    await expectProblem(await readCookies(await platformJob(owner, "https://www.youtube.com/watch?v=def")), 404, "not_found");
  });
});
