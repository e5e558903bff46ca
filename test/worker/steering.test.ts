/**
 * Steering fields on the Worker's side: prompt, time_range,
 * remove_silence and remove_fillers at submission and in saved
 * configurations, what the engine is sent, credits charged on the range's
 * length, a range outside the source failing uncharged after the probe, and
 * each clip's prompt_match, removed spans and real duration as presented.
 */
import { env } from "cloudflare:test";
import { beforeAll, describe, expect, it } from "vitest";
import { clipReport, expectAck, FakeEngine } from "./engine-stub.ts";
import { api, createAccount, expectProblem } from "./helpers.ts";
import { accountCredits, getJob, getUsage, startJob, submit, VIDEO_URL } from "./jobs-helpers.ts";

let engine: FakeEngine;

beforeAll(() => {
  engine = new FakeEngine();
  engine.install();
});

interface SteeredJob {
  prompt: string | null;
  time_range: { start_seconds: number; end_seconds: number } | null;
  remove_silence: string;
  remove_fillers: boolean;
  status: string;
  credits_charged?: number;
  error?: { code: string; message: string };
  clips?: {
    start_seconds: number;
    end_seconds: number;
    duration_seconds: number;
    prompt_match: number | null;
    removed: { start_seconds: number; end_seconds: number; kind: string }[];
    reasons: string[];
  }[];
}

function putConfig(account: { apiKey: string }, name: string, body: Record<string, unknown>): Promise<Response> {
  return api(account, `/api/v1/configs/${name}`, { method: "PUT", body: JSON.stringify(body) });
}

describe("steering at submission", () => {
  it("stores the fields, shows them on the job and sends them to the engine", async () => {
    const account = await createAccount("pro");
    const engineView = await startJob(account, engine, {
      video_url: VIDEO_URL,
      video_type: "podcast",
      prompt: "the parts about pricing",
      time_range: { start_seconds: 600, end_seconds: 2400 },
      remove_silence: "tight",
      remove_fillers: true,
    });
    const start = engine.starts(engineView.jobId).at(-1)!;
    expect(start.config.prompt).toBe("the parts about pricing");
    expect(start.config.remove_silence).toBe("tight");
    expect(start.config.remove_fillers).toBe(true);
    expect(start.time_range).toEqual({ start_seconds: 600, end_seconds: 2400 });
    const job = (await getJob(account, engineView.jobId)) as unknown as SteeredJob;
    expect(job.prompt).toBe("the parts about pricing");
    expect(job.time_range).toEqual({ start_seconds: 600, end_seconds: 2400 });
    expect(job.remove_silence).toBe("tight");
    expect(job.remove_fillers).toBe(true);
  });

  it("leaves a job without steering as before: whole source, nothing removed, no prompt", async () => {
    const account = await createAccount("pro");
    const engineView = await startJob(account, engine);
    const start = engine.starts(engineView.jobId).at(-1)!;
    expect(start.time_range ?? null).toBeNull();
    expect(start.config).toMatchObject({ prompt: null, remove_silence: "off", remove_fillers: false });
    const job = (await getJob(account, engineView.jobId)) as unknown as SteeredJob;
    expect(job).toMatchObject({ prompt: null, time_range: null, remove_silence: "off", remove_fillers: false });
  });

  it("takes a saved configuration's steering; the submission's own fields win, null clears the prompt", async () => {
    const account = await createAccount("pro");
    const put = await putConfig(account, "pricing", { prompt: "pricing and plans", remove_silence: "pauses", remove_fillers: true });
    expect(put.status).toBe(201);
    expect(await put.json()).toMatchObject({ prompt: "pricing and plans", remove_silence: "pauses", remove_fillers: true });

    const inherited = await startJob(account, engine, { video_url: VIDEO_URL, video_type: "podcast", config_name: "pricing" });
    expect(engine.starts(inherited.jobId).at(-1)!.config).toMatchObject({ prompt: "pricing and plans", remove_silence: "pauses", remove_fillers: true });
    await inherited.fail({ code: "internal_error", message: "test over" });

    const overridden = await startJob(account, engine, {
      video_url: VIDEO_URL,
      video_type: "podcast",
      config_name: "pricing",
      prompt: null,
      remove_silence: "off",
      remove_fillers: false,
    });
    expect(engine.starts(overridden.jobId).at(-1)!.config).toMatchObject({ prompt: null, remove_silence: "off", remove_fillers: false });
    // The saved configuration itself is unchanged.
    const saved = await (await api(account, "/api/v1/configs/pricing")).json();
    expect(saved).toMatchObject({ prompt: "pricing and plans", remove_silence: "pauses", remove_fillers: true });
  });

  it("refuses bad steering with a 400 and creates nothing", async () => {
    const account = await createAccount("pro");
    const base = { video_url: VIDEO_URL, video_type: "podcast" };
    const cases: [Record<string, unknown>, string][] = [
      [{ time_range: { start_seconds: 50, end_seconds: 40 } }, "invalid_time_range"],
      [{ time_range: { start_seconds: -1, end_seconds: 40 } }, "invalid_time_range"],
      // Shorter than the default 15 s minimum clip.
      [{ time_range: { start_seconds: 10, end_seconds: 20 } }, "invalid_time_range"],
      // Past the longest source the service takes (MAX_SOURCE_SECONDS).
      [{ time_range: { start_seconds: 0, end_seconds: 10_801 } }, "invalid_time_range"],
      [{ time_range: { start_seconds: 0 } }, "invalid_request"],
      [{ time_range: { start_seconds: 0, end_seconds: 60, extra: 1 } }, "invalid_request"],
      [{ prompt: "x".repeat(501) }, "invalid_request"],
      [{ prompt: "   " }, "invalid_request"],
      [{ remove_silence: "some" }, "invalid_request"],
      [{ remove_fillers: "yes" }, "invalid_request"],
    ];
    for (const [fields, code] of cases) {
      const res = await submit(account, { ...base, ...fields });
      await expectProblem(res, 400, code);
    }
    const row = await env.DB.prepare(`SELECT COUNT(*) AS n FROM jobs WHERE account_id = ?`).bind(account.accountId).first<{ n: number }>();
    expect(row?.n).toBe(0);
    // A 500-character prompt in any script is fine.
    const ok = await submit(account, { ...base, prompt: "é".repeat(500) });
    expect(ok.status).toBe(201);
  });

  it("checks the range against the configuration's minimum clip length", async () => {
    const account = await createAccount("pro");
    expect((await putConfig(account, "short", { min_clip_seconds: 5, max_clip_seconds: 10 })).status).toBe(201);
    const res = await submit(account, { video_url: VIDEO_URL, video_type: "podcast", config_name: "short", time_range: { start_seconds: 10, end_seconds: 18 } });
    expect(res.status).toBe(201);
  });
});

describe("time_range and credits", () => {
  it("reserves and charges the range's length, not the source's", async () => {
    const account = await createAccount("pro");
    const before = await getUsage(account);
    const job = await startJob(account, engine, { video_url: VIDEO_URL, video_type: "podcast", time_range: { start_seconds: 600, end_seconds: 900 } });
    // A 2-hour source: 120 credits without the range, 5 with it.
    const ack = await job.probe({ duration_seconds: 7200 });
    expect(ack).toMatchObject({ proceed: true, credits_reserved: 5 });
    expect((await accountCredits(account.accountId))?.credits_reserved).toBe(5);
    await job.uploadClip(0);
    await expectAck(await job.complete({ title: "Long call", source_duration_seconds: 7200, clips: [clipReport(0, { start_seconds: 610, end_seconds: 640 })] }));
    const done = (await getJob(account, job.jobId)) as unknown as SteeredJob;
    expect(done.credits_charged).toBe(5);
    expect((await getUsage(account)).credits_remaining).toBe(before.credits_remaining - 5);
  });

  it("charges only the part of the range inside a shorter source", async () => {
    const account = await createAccount("pro");
    const job = await startJob(account, engine, { video_url: VIDEO_URL, video_type: "podcast", time_range: { start_seconds: 60, end_seconds: 3600 } });
    // 60 s to the end of a 200 s source: 140 s, 3 credits.
    expect(await job.probe({ duration_seconds: 200 })).toMatchObject({ proceed: true, credits_reserved: 3 });
  });

  it("fails a range that starts after the source ends with time_range_outside_source, uncharged", async () => {
    const account = await createAccount("pro");
    const before = await getUsage(account);
    const job = await startJob(account, engine, { video_url: VIDEO_URL, video_type: "podcast", time_range: { start_seconds: 600, end_seconds: 900 } });
    const ack = await job.probe({ duration_seconds: 300 });
    expect(ack.proceed).toBe(false);
    expect(ack.error?.code).toBe("time_range_outside_source");
    const failed = (await getJob(account, job.jobId)) as unknown as SteeredJob;
    expect(failed.status).toBe("failed");
    expect(failed.error?.code).toBe("time_range_outside_source");
    expect(failed.error?.message).toContain("300.0 s long");
    expect(failed.credits_charged).toBe(0);
    expect((await accountCredits(account.accountId))?.credits_reserved).toBe(0);
    expect((await getUsage(account)).credits_remaining).toBe(before.credits_remaining);
  });

  it("fails a range that leaves less than a clip inside the source", async () => {
    const account = await createAccount("pro");
    const job = await startJob(account, engine, { video_url: VIDEO_URL, video_type: "podcast", time_range: { start_seconds: 290, end_seconds: 900 } });
    const ack = await job.probe({ duration_seconds: 300 });
    expect(ack).toMatchObject({ proceed: false, credits_reserved: 0, error: { code: "time_range_outside_source" } });
  });
});

describe("per-clip steering results", () => {
  it("presents prompt_match, removed spans and the real duration", async () => {
    const account = await createAccount("pro");
    const job = await startJob(account, engine, { video_url: VIDEO_URL, video_type: "podcast", prompt: "pricing", remove_silence: "tight", remove_fillers: true });
    await job.probe({ duration_seconds: 120 });
    await job.uploadClip(0);
    const removed = [
      { start_seconds: 12.3456, end_seconds: 13.1, kind: "silence" as const },
      { start_seconds: 20, end_seconds: 20.4, kind: "filler" as const },
    ];
    await expectAck(
      await job.complete({
        title: "Call",
        source_duration_seconds: 120,
        clips: [clipReport(0, { start_seconds: 10, end_seconds: 40, prompt_match: 0.87, removed, duration_seconds: 28.8, reasons: ["prompt_match", "speech_density"] })],
      }),
    );
    const done = (await getJob(account, job.jobId)) as unknown as SteeredJob;
    const clip = done.clips![0]!;
    expect(clip.prompt_match).toBe(0.87);
    expect(clip.duration_seconds).toBe(28.8);
    expect(clip.removed).toEqual([
      { start_seconds: 12.346, end_seconds: 13.1, kind: "silence" },
      { start_seconds: 20, end_seconds: 20.4, kind: "filler" },
    ]);
    expect(clip.reasons[0]).toBe("prompt_match");
  });

  it("stores and presents where the picture pushed in (a configuration with zoom: emphasis)", async () => {
    const account = await createAccount("pro");
    expect((await putConfig(account, "punch", { zoom: "emphasis" })).status).toBe(201);
    expect(await (await api(account, "/api/v1/configs/punch")).json()).toMatchObject({ zoom: "emphasis" });
    const job = await startJob(account, engine, { video_url: VIDEO_URL, video_type: "podcast", config_name: "punch" });
    expect(engine.starts(job.jobId).at(-1)!.config.zoom).toBe("emphasis");
    await job.probe({ duration_seconds: 120 });
    await job.uploadClip(0);
    const zooms = [
      { start_seconds: 14.12345, end_seconds: 15.9 },
      { start_seconds: 30, end_seconds: 31.25 },
    ];
    await expectAck(await job.complete({ title: "Call", source_duration_seconds: 120, clips: [clipReport(0, { start_seconds: 10, end_seconds: 40, zooms })] }));
    const done = (await getJob(account, job.jobId)) as unknown as { clips: { zooms: unknown }[] };
    expect(done.clips[0]!.zooms).toEqual([
      { start_seconds: 14.123, end_seconds: 15.9 },
      { start_seconds: 30, end_seconds: 31.25 },
    ]);
  });

  it("refuses a completion whose removed spans have an unknown kind", async () => {
    const account = await createAccount("pro");
    const job = await startJob(account, engine);
    await job.probe({ duration_seconds: 120 });
    await job.uploadClip(0);
    const res = await job.postJson("complete", {
      title: "Call",
      source_duration_seconds: 120,
      transcript: null,
      transcript_unavailable_reason: "none",
      clips: [{ ...clipReport(0), removed: [{ start_seconds: 1, end_seconds: 2, kind: "cough" }] }],
    });
    expect(res.status).toBe(400);
  });
});
