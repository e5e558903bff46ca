/** The dashboard's export links: on a completed job's card, served with the session, refused for another account, an unknown format or a job without clips. */
import { env } from "cloudflare:test";
import { beforeEach, describe, expect, it } from "vitest";
import { FakeEngine } from "./engine-stub.ts";
import { csrfTokenIn, Visitor } from "./dashboard-helpers.ts";
import { api } from "./helpers.ts";
import { submitUndelivered } from "./jobs-helpers.ts";
import { captionedJob } from "./speech-helpers.ts";

let engine: FakeEngine;
beforeEach(() => {
  engine = new FakeEngine();
  engine.install();
});

async function signedIn(): Promise<{ visitor: Visitor; account: { accountId: string; apiKey: string; keyId: string; email: string } }> {
  const visitor = new Visitor();
  const { email } = await visitor.signUp();
  const token = csrfTokenIn(await (await visitor.get("/dashboard/keys")).text());
  const html = await (await visitor.post("/dashboard/keys", { csrf_token: token, name: "export" })).text();
  const apiKey = /<code id="new-key">(ck_live_[0-9A-Za-z]+)<\/code>/.exec(html)?.[1] ?? "";
  const row = await env.DB.prepare(`SELECT id FROM accounts WHERE email = ?`).bind(email).first<{ id: string }>();
  await env.DB.prepare(`UPDATE accounts SET plan = 'unmetered' WHERE id = ?`).bind(row?.id ?? "").run();
  return { visitor, account: { accountId: row?.id ?? "", apiKey, keyId: "", email } };
}

describe("dashboard: export for an editor", () => {
  it("links every format on the job's card and serves the API's file", async () => {
    const { visitor, account } = await signedIn();
    const jobId = await captionedJob(engine, account);
    const page = await (await visitor.get("/dashboard/jobs")).text();
    for (const format of ["fcpxml", "edl", "mlt", "otio"]) expect(page).toContain(`href="/dashboard/jobs/${jobId}/export?format=${format}"`);
    const res = await visitor.get(`/dashboard/jobs/${jobId}/export?format=edl`);
    expect(res.status).toBe(200);
    expect(res.headers.get("Content-Disposition")).toBe(`attachment; filename="${jobId}.edl"`);
    expect(await res.text()).toBe(await (await api(account, `/api/v1/jobs/${jobId}/export?format=edl`)).text());
  });

  it("refuses another account's job, an unknown format and a job without clips", async () => {
    const { visitor, account } = await signedIn();
    const jobId = await captionedJob(engine, account);
    const stranger = (await signedIn()).visitor;
    expect((await stranger.get(`/dashboard/jobs/${jobId}/export?format=edl`)).status).toBe(404);
    expect((await visitor.get(`/dashboard/jobs/${jobId}/export?format=aaf`)).status).toBe(400);
    const queued = await submitUndelivered(account);
    const refused = await visitor.get(`/dashboard/jobs/${queued}/export?format=mlt`);
    expect(refused.status).toBe(409);
    expect(await refused.text()).toContain("is queued");
  });
});
