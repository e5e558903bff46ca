/**
 * The dashboard's clip page against the Worker (miniflare) and the engine
 * stand-in: linked from the job card; shows the clip, its span, its caption
 * words and title; its form becomes the same edit a PATCH would be (only
 * what changed), the edit reaches the engine as a StartJob with clip_edit,
 * the page shows the re-render while it runs and version 2 once the
 * stand-in's render is published; refusals are shown with their code; another
 * account's clip is 404 and a form without the session's token is refused.
 */
import { env } from "cloudflare:test";
import { beforeEach, describe, expect, it } from "vitest";
import { clipReport, EngineClient, expectAck, FakeEngine, waitFor } from "./engine-stub.ts";
import { csrfTokenIn, Visitor } from "./dashboard-helpers.ts";
import { captionedJob, TRANSCRIPT } from "./speech-helpers.ts";

let engine: FakeEngine;
beforeEach(() => {
  engine = new FakeEngine();
  engine.install();
});

async function signedIn(): Promise<{ visitor: Visitor; account: { accountId: string; apiKey: string; keyId: string; email: string } }> {
  const visitor = new Visitor();
  const { email } = await visitor.signUp();
  const token = csrfTokenIn(await (await visitor.get("/dashboard/keys")).text());
  const html = await (await visitor.post("/dashboard/keys", { csrf_token: token, name: "clip page" })).text();
  const apiKey = /<code id="new-key">(ck_live_[0-9A-Za-z]+)<\/code>/.exec(html)?.[1] ?? "";
  const row = await env.DB.prepare(`SELECT id FROM accounts WHERE email = ?`).bind(email).first<{ id: string }>();
  await env.DB.prepare(`UPDATE accounts SET plan = 'unmetered' WHERE id = ?`).bind(row?.id ?? "").run();
  return { visitor, account: { accountId: row?.id ?? "", apiKey, keyId: "", email } };
}

function wordFields(html: string): Map<string, string> {
  return new Map([...html.matchAll(/<input name="(word_\d+)" value="([^"]*)"/g)].map((m) => [m[1]!, m[2]!]));
}

describe("dashboard: the clip page", () => {
  it("is linked from the job card and shows the clip, its span, words and title", async () => {
    const { visitor, account } = await signedIn();
    const jobId = await captionedJob(engine, account);
    const jobs = await (await visitor.get("/dashboard/jobs")).text();
    expect(jobs).toContain(`href="/dashboard/jobs/${jobId}/clips/0"`);
    const res = await visitor.get(`/dashboard/jobs/${jobId}/clips/0`);
    expect(res.status).toBe(200);
    expect(res.headers.get("Content-Security-Policy")).toContain("script-src 'nonce-");
    const html = await res.text();
    expect(html).toContain('data-clip-version="1"');
    expect(html).toContain("<video");
    expect(html).toMatch(/name="end_seconds"[^>]*value="15.5"|value="15.5"[^>]*name="end_seconds"/);
    expect([...wordFields(html).values()]).toEqual(TRANSCRIPT.words.map((w) => w.text.replace(/</g, "&lt;").replace(/>/g, "&gt;")));
    for (const label of ["End +1 s", "End −0.1 s", "Start −1 s", "Start +0.1 s"]) expect(html).toContain(`aria-label="${label}"`);
    expect(html).toContain(">Re-render</button>");
  });

  it("re-renders with the moved end and the fixed word, and shows version 2 once it is published", async () => {
    const { visitor, account } = await signedIn();
    const jobId = await captionedJob(engine, account);
    const path = `/dashboard/jobs/${jobId}/clips/0`;
    const page = await (await visitor.get(path)).text();
    const fields: Record<string, string> = { csrf_token: csrfTokenIn(page), start_seconds: "0", end_seconds: "16.5", title: "Why do clips matter?" };
    for (const [name, value] of wordFields(page)) fields[name] = value.replace(/&lt;/g, "<").replace(/&gt;/g, ">");
    fields.word_2 = "Pelican";
    const posted = await visitor.post(path, fields);
    expect(posted.status, await posted.clone().text()).toBe(303);
    expect(posted.headers.get("Location")).toBe(`${path}?edited=1`);

    const start = await waitFor(() => engine.starts(jobId).find((s) => s.clip_edit !== undefined), "the edit's StartJob");
    const edit = start.clip_edit!;
    expect({ index: edit.index, version: edit.version, start: edit.start_seconds, end: edit.end_seconds }).toEqual({ index: 0, version: 2, start: 0, end: 16.5 });
    expect(edit.words.map((w) => w.text)).toEqual(TRANSCRIPT.words.map((w, i) => (i === 2 ? "Pelican" : w.text)));
    // Only what changed was asked: the title stayed, so the engine chooses none anew.
    expect(edit.title).toBe("Why do clips matter?");
    const pending = await (await visitor.get(`${path}?edited=1`)).text();
    expect(pending).toMatch(/data-edit-status="(queued|rendering)" data-edit-pending/);
    expect(pending).toMatch(/<button type="submit" disabled/);

    // The engine stand-in renders it: one clip at the edit's index.
    const client = EngineClient.from(start);
    await client.uploadClip(0, 640);
    await expectAck(
      await client.complete({
        title: "Talk",
        source_duration_seconds: 60,
        clips: [clipReport(0, { start_seconds: 0, end_seconds: 16.5, reasons: ["chosen_by_user"], score: 0, text: "Why do Pelican matter? Because people scroll", title: "Why do clips matter?" })],
      }),
    );
    const done = await waitFor(async () => {
      const html = await (await visitor.get(path)).text();
      return html.includes('data-clip-version="2"') ? html : undefined;
    }, "version 2 on the page");
    expect(done).not.toMatch(/data-edit-status=/);
    expect(done).toContain("0–16.5 s of the source");
    expect(wordFields(done).get("word_2")).toBe("Pelican");
  });

  it("shows a refusal with its code and changes nothing", async () => {
    const { visitor, account } = await signedIn();
    const jobId = await captionedJob(engine, account);
    const path = `/dashboard/jobs/${jobId}/clips/0`;
    const page = await (await visitor.get(path)).text();
    const unchanged: Record<string, string> = { csrf_token: csrfTokenIn(page), start_seconds: "0", end_seconds: "15.5", title: "Why do clips matter?" };
    const nothing = await visitor.post(path, unchanged);
    expect(nothing.status).toBe(400);
    expect(await nothing.text()).toContain('data-code="invalid_request"');
    const outside = await visitor.post(path, { ...unchanged, end_seconds: "600" });
    expect(outside.status).toBe(400);
    expect(await outside.text()).toContain('data-code="invalid_clip_span"');
    expect(engine.starts(jobId).filter((s) => s.clip_edit)).toEqual([]);
  });

  it("is 404 for another account's clip and an unknown clip, and refuses a form without the session's token", async () => {
    const { visitor, account } = await signedIn();
    const jobId = await captionedJob(engine, account);
    const stranger = (await signedIn()).visitor;
    expect((await stranger.get(`/dashboard/jobs/${jobId}/clips/0`)).status).toBe(404);
    expect((await visitor.get(`/dashboard/jobs/${jobId}/clips/7`)).status).toBe(404);
    expect((await visitor.get(`/dashboard/jobs/${jobId}/clips/x`)).status).toBe(404);
    const forged = await visitor.post(`/dashboard/jobs/${jobId}/clips/0`, { csrf_token: "forged", end_seconds: "16.5" });
    expect(forged.status).toBe(403);
    expect(engine.starts(jobId).filter((s) => s.clip_edit)).toEqual([]);
  });
});
