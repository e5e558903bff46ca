/** The dashboard's speech parts: caption settings in the config form, the clip player's captions track, the transcript page. */
import { env } from "cloudflare:test";
import { beforeEach, describe, expect, it } from "vitest";
import { FakeEngine } from "./engine-stub.ts";
import { api } from "./helpers.ts";
import { captionedJob, CLIP_SRT, CLIP_VTT, processingJob, TRANSCRIPT } from "./speech-helpers.ts";
import { clipReport, expectAck } from "./engine-stub.ts";
import { csrfTokenIn, Visitor } from "./dashboard-helpers.ts";

let engine: FakeEngine;
beforeEach(() => {
  engine = new FakeEngine();
  engine.install();
});

/** A signed-in visitor and an API key of the same account (to drive jobs through the engine channel). */
async function signedIn(): Promise<{ visitor: Visitor; token: string; account: { accountId: string; apiKey: string; keyId: string; email: string } }> {
  const visitor = new Visitor();
  const { email } = await visitor.signUp();
  const token = csrfTokenIn(await (await visitor.get("/dashboard/keys")).text());
  const html = await (await visitor.post("/dashboard/keys", { csrf_token: token, name: "speech" })).text();
  const apiKey = /<code id="new-key">(ck_live_[0-9A-Za-z]+)<\/code>/.exec(html)?.[1] ?? "";
  const row = await env.DB.prepare(`SELECT id FROM accounts WHERE email = ?`).bind(email).first<{ id: string }>();
  await env.DB.prepare(`UPDATE accounts SET plan = 'unmetered' WHERE id = ?`).bind(row?.id ?? "").run();
  return { visitor, token, account: { accountId: row?.id ?? "", apiKey, keyId: "", email } };
}

describe("dashboard: captions and transcripts", () => {
  it("offers the caption settings with their defaults and saves them through the contract's schema", async () => {
    const { visitor, token, account } = await signedIn();
    const html = await (await visitor.get("/dashboard/configs")).text();
    expect(html).toContain(`<option value="both" selected="">`);
    expect(html).toContain(`<option value="bold" selected="">`);
    expect(html).toContain(`<option value="bottom" selected="">`);
    const fields = { csrf_token: token, name: "subs", captions: "sidecar", caption_style: "boxed", caption_position: "center" };
    expect((await visitor.post("/dashboard/configs", fields)).status).toBe(200);
    const saved = await (await api(account, "/api/v1/configs/subs")).json<Record<string, unknown>>();
    expect(saved).toMatchObject({ captions: "sidecar", caption_style: "boxed", caption_position: "center", aspect_ratio: "9:16" });
    const refused = await visitor.post("/dashboard/configs", { ...fields, name: "bad", caption_style: "comic-sans" });
    expect(refused.status).toBe(400);
    expect((await api(account, "/api/v1/configs/bad")).status).toBe(404);
  });

  it("plays a clip with its WebVTT track and links the job's transcript", async () => {
    const { visitor, account } = await signedIn();
    const jobId = await captionedJob(engine, account);
    const page = await (await visitor.get("/dashboard/jobs")).text();
    const trackSrc = `/dashboard/jobs/${jobId}/clips/0/captions.vtt`;
    expect(page).toContain(`<track kind="captions" src="${trackSrc}" srclang="en" label="Captions" default=""/>`);
    // Only the clip with sidecars gets a track.
    expect(page).not.toContain(`/dashboard/jobs/${jobId}/clips/1/captions.vtt`);
    expect(page).toContain("Why do clips matter?");
    expect(page).toContain(`href="/dashboard/jobs/${jobId}/transcript"`);

    const track = await visitor.get(trackSrc);
    expect(track.status).toBe(200);
    expect(track.headers.get("Content-Type")).toBe("text/vtt; charset=utf-8");
    expect(await track.text()).toBe(CLIP_VTT);
    // The page's own policy allows it: media from 'self'.
    expect((await visitor.get("/dashboard/jobs")).headers.get("Content-Security-Policy")).toContain("media-src 'self'");

    const stranger = (await signedIn()).visitor;
    expect((await stranger.get(trackSrc)).status).toBe(404);
    expect((await stranger.get(`/dashboard/jobs/${jobId}/transcript`)).status).toBe(404);
    expect((await visitor.get(`/dashboard/jobs/${jobId}/clips/1/captions.vtt`)).status).toBe(404);
  });

  it("shows the transcript with times and offers it as WebVTT, SRT and text", async () => {
    const { visitor, account } = await signedIn();
    const jobId = await captionedJob(engine, account);
    const res = await visitor.get(`/dashboard/jobs/${jobId}/transcript`);
    expect(res.status).toBe(200);
    const html = await res.text();
    expect(html).toContain("the video&#39;s subtitle track");
    expect(html).toContain("<span class=\"meta\">0:01</span> Why do clips matter?");
    // Transcript text is escaped, never markup.
    expect(html).toContain("Because people &lt;b&gt;scroll&lt;/b&gt;");
    const srt = await visitor.get(`/dashboard/jobs/${jobId}/transcript?format=srt`);
    expect(srt.headers.get("Content-Disposition")).toBe(`attachment; filename="${jobId}.srt"`);
    expect(await srt.text()).toContain("00:00:01,000 --> 00:00:02,400\nWhy do clips matter?");
    expect(TRANSCRIPT.sentences).toHaveLength(2);
    expect(CLIP_SRT).toContain("-->");
  });

  it("submits an optional captions file under the API's URL rules", async () => {
    const { visitor, token, account } = await signedIn();
    const refused = await visitor.post("/dashboard/jobs", {
      csrf_token: token,
      video_url: "https://videos.example.com/a.mp4",
      video_type: "podcast",
      config_name: "",
      captions_url: "http://169.254.169.254/latest/meta-data",
    });
    expect(refused.status).toBe(400);
    expect(await refused.text()).toContain("captions_url points to a private");
    const res = await visitor.post("/dashboard/jobs", {
      csrf_token: token,
      video_url: "https://videos.example.com/a.mp4",
      video_type: "podcast",
      config_name: "",
      captions_url: "https://subs.example.com/a.srt",
    });
    expect(res.status).toBe(303);
    const jobId = /queued=(job_[A-Za-z0-9]+)/.exec(res.headers.get("Location") ?? "")?.[1] ?? "";
    const job = await (await api(account, `/api/v1/jobs/${jobId}`)).json<{ captions_url: string | null }>();
    expect(job.captions_url).toBe("https://subs.example.com/a.srt");
  });

  it("says why a job has no transcript", async () => {
    const { visitor, account } = await signedIn();
    const client = await processingJob(engine, account);
    await client.uploadClip(0, 512);
    const reason = "No subtitle track, platform subtitles or captions_url, and speech-to-text is not available on this deployment.";
    await expectAck(await client.complete({ title: "Quiet", source_duration_seconds: 60, clips: [clipReport(0)], transcript_unavailable_reason: reason }));
    expect(await (await visitor.get("/dashboard/jobs")).text()).toContain(`No transcript: ${reason}`);
    const page = await visitor.get(`/dashboard/jobs/${client.jobId}/transcript`);
    expect(page.status).toBe(404);
    expect(await page.text()).toContain(reason);
  });
  it("says when a job's captions could not be translated, and when they were", async () => {
    const { visitor, account } = await signedIn();
    const client = await processingJob(engine, account);
    await client.uploadClip(0, 512);
    const detail = "Translation is not available on this deployment (no Workers AI binding); captions are in the spoken language.";
    await expectAck(await client.complete({ title: "Talk", source_duration_seconds: 60, clips: [clipReport(0)], translation: { language: "fr", status: "unavailable", detail } }));
    const html = await (await visitor.get("/dashboard/jobs")).text();
    expect(html).toContain(`data-translation="unavailable"`);
    expect(html).toContain(`Captions not in French: ${detail}`);
    expect(await (await api(account, `/api/v1/jobs/${client.jobId}`)).json()).toMatchObject({ translation: { language: "fr", status: "unavailable", detail } });
  });
});
