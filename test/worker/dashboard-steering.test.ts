/**
 * The dashboard's steering fields: the configuration form saves a
 * prompt and removal settings, the submit form sends a prompt, a time range
 * (seconds or clock times) and removal overrides through the API's rules,
 * and the job card shows what steered a job and what each clip had cut.
 */
import { env } from "cloudflare:test";
import { beforeEach, describe, expect, it } from "vitest";
import { parseClock } from "../../src/jobs/steering.ts";
import { clipReport, EngineClient, expectAck, FakeEngine, waitFor } from "./engine-stub.ts";
import { alertText, csrfTokenIn, Visitor } from "./dashboard-helpers.ts";
import { deliver, VIDEO_URL } from "./jobs-helpers.ts";

let engine: FakeEngine;
beforeEach(() => {
  engine = new FakeEngine();
  engine.install();
});

async function signedIn(): Promise<{ visitor: Visitor; token: string; accountId: string }> {
  const visitor = new Visitor();
  const { email } = await visitor.signUp();
  const token = csrfTokenIn(await (await visitor.get("/dashboard/keys")).text());
  const row = await env.DB.prepare(`SELECT id FROM accounts WHERE email = ?`).bind(email).first<{ id: string }>();
  return { visitor, token, accountId: row?.id ?? "" };
}

function jobIdOf(res: Response): string {
  return /queued=(job_[A-Za-z0-9]+)/.exec(res.headers.get("Location") ?? "")?.[1] ?? "";
}

describe("dashboard steering", () => {
  it("reads clock times", () => {
    expect(parseClock("90")).toBe(90);
    expect(parseClock("1:30")).toBe(90);
    expect(parseClock("1:02:03.5")).toBe(3723.5);
    expect(parseClock("10:75")).toBeNull();
    expect(parseClock("ten")).toBeNull();
  });

  it("saves a configuration's prompt and removal settings", async () => {
    const { visitor, token } = await signedIn();
    const saved = await visitor.post("/dashboard/configs", { csrf_token: token, name: "topic", prompt: "  pricing and plans ", remove_silence: "tight", remove_fillers: "true", zoom: "emphasis" });
    expect(saved.status).toBe(200);
    const row = await env.DB.prepare(`SELECT prompt, remove_silence, remove_fillers, zoom FROM configs WHERE name = 'topic'`).first();
    expect(row).toEqual({ prompt: "pricing and plans", remove_silence: "tight", remove_fillers: 1, zoom: "emphasis" });
    const form = await (await visitor.get("/dashboard/configs/topic")).text();
    expect(form).toContain(">pricing and plans</textarea>");
    expect(form).toContain(`<option value="tight" selected="">`);
    expect(form).toContain(`<option value="emphasis" selected="">`);

    const bad = await visitor.post("/dashboard/configs", { csrf_token: token, name: "bad", remove_silence: "all" });
    expect(bad.status).toBe(400);
    expect(await bad.text()).toContain('id="config-remove_silence-error">Choose one of the listed options.');
  });

  it("submits a prompt, a range in clock time and removal overrides; the card shows them and the clips' cuts", async () => {
    const { visitor, token, accountId } = await signedIn();
    const res = await visitor.post("/dashboard/jobs", {
      csrf_token: token,
      video_url: VIDEO_URL,
      video_type: "podcast",
      config_name: "",
      prompt: "pricing",
      range_start: "10:00",
      range_end: "40:00",
      remove_silence: "pauses",
      remove_fillers: "true",
    });
    expect(res.status).toBe(303);
    const jobId = jobIdOf(res);
    const row = await env.DB.prepare(`SELECT config_json, time_range_start, time_range_end FROM jobs WHERE id = ?`).bind(jobId).first<{ config_json: string; time_range_start: number; time_range_end: number }>();
    expect(row).toMatchObject({ time_range_start: 600, time_range_end: 2400 });
    expect(JSON.parse(row!.config_json)).toMatchObject({ prompt: "pricing", remove_silence: "pauses", remove_fillers: true });

    // The consumer needs only the account id; the dashboard visitor has no API key.
    await deliver({ accountId, apiKey: "", keyId: "", email: "" }, jobId);
    const start = await waitFor(() => engine.starts(jobId).at(-1), "StartJob");
    const job = EngineClient.from(start);
    await job.probe({ duration_seconds: 3000 });
    await job.uploadClip(0);
    await expectAck(
      await job.complete({
        title: "Call",
        source_duration_seconds: 3000,
        clips: [clipReport(0, { start_seconds: 700, end_seconds: 730, prompt_match: 0.91, duration_seconds: 27.5, removed: [
          { start_seconds: 705, end_seconds: 706.5, kind: "silence" },
          { start_seconds: 710, end_seconds: 711, kind: "silence" },
          { start_seconds: 720, end_seconds: 720.3, kind: "filler" },
        ] })],
      }),
    );
    const card = (await (await visitor.get(`/dashboard/jobs/${jobId}/card`)).text()).replace(/\s+/g, " ");
    expect(card).toContain("Steered: prompt &quot;pricing&quot;, only 10:00–40:00, silence removed (pauses), filler words cut");
    // Charged on the 30-minute range, not the 50-minute source.
    expect(card).toContain("30 credits used");
    expect(card).toContain("Matches the prompt: 91%");
    expect(card).toContain("Cut out: 2 pauses (2.5 s) and 1 filler word (0.3 s)");
    expect(card).toContain("(27.5 s)");
  });

  it("refuses a range it cannot read and keeps what was typed", async () => {
    const { visitor, token } = await signedIn();
    const res = await visitor.post("/dashboard/jobs", { csrf_token: token, video_url: VIDEO_URL, video_type: "podcast", range_start: "ten", range_end: "1:00", prompt: "kept" });
    expect(res.status).toBe(400);
    const html = await res.text();
    expect(alertText(html)).toContain('From: "ten" is not a time');
    expect(html).toContain(">kept</textarea>");
    const short = await visitor.post("/dashboard/jobs", { csrf_token: token, video_url: VIDEO_URL, video_type: "podcast", range_start: "0", range_end: "5" });
    expect(short.status).toBe(400);
    expect(alertText(await short.text())).toContain("shorter than the configuration's 15 s minimum clip length");
  });
});
