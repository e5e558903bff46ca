/**
 * GET /api/v1/jobs/:job_id/export end to end on the Worker: the engine's
 * framing report is stored with the clip and comes back as keyframes; every
 * format answers as an attachment for a completed job whose title holds
 * markup, quotes, a newline and an emoji; the documented problems for an
 * unknown format, another account's job, a job that is processing or
 * canceled, and a deleted one.
 */
import { env } from "cloudflare:test";
import { beforeEach, describe, expect, it } from "vitest";
import type { ClipFraming } from "#contract";
import { clipReport, expectAck, FakeEngine } from "./engine-stub.ts";
import { api, createAccount, expectProblem, type TestAccount } from "./helpers.ts";
import { submitJob } from "./jobs-helpers.ts";
import { CLIP_SRT, CLIP_VTT, processingJob, put, TRANSCRIPT } from "./speech-helpers.ts";

const TITLE = `Tom & "Jerry" <b>it's</b>\nsecond line 🎬`;

const FRAMING: ClipFraming = {
  source_width: 1920,
  source_height: 1080,
  source_fps: 25,
  crop_width: 606,
  crop_height: 1080,
  path: [
    { from_seconds: 0, to_seconds: 5, x0: 0.3, x1: 0.6, y0: 0.5, y1: 0.5 },
    { from_seconds: 5, to_seconds: 15.5, x0: 0.8, x1: 0.8, y0: 0.5, y1: 0.5 },
  ],
  split: false,
};

let engine: FakeEngine;
beforeEach(() => {
  engine = new FakeEngine();
  engine.install();
});

/** Completed: clip 0 with framing, sidecars and a removed pause; clip 1 from an engine that reported no framing. */
async function completedJob(account: TestAccount): Promise<string> {
  const client = await processingJob(engine, account);
  await client.uploadClip(0, 512);
  await client.uploadClip(1, 512);
  await expectAck(await put(client, "transcript", JSON.stringify(TRANSCRIPT), "application/json"));
  await expectAck(await put(client, "clips/0/captions.vtt", CLIP_VTT, "text/vtt"));
  await expectAck(await put(client, "clips/0/captions.srt", CLIP_SRT, "application/x-subrip"));
  await expectAck(
    await client.complete({
      title: TITLE,
      source_duration_seconds: 60,
      clips: [
        clipReport(0, { title: TITLE, sidecars: true, framing: FRAMING, removed: [{ start_seconds: 8, end_seconds: 9, kind: "silence" }], duration_seconds: 14.5 }),
        clipReport(1),
      ],
      transcript: { source: "subtitle_track", language: "en", word_count: 7 },
      transcript_unavailable_reason: null,
    }),
  );
  return client.jobId;
}

function exportOf(account: TestAccount, jobId: string, format: string): Promise<Response> {
  return api(account, `/api/v1/jobs/${jobId}/export?format=${format}`);
}

describe("GET /api/v1/jobs/:job_id/export", () => {
  it("stores the engine's framing with the clip", async () => {
    const account = await createAccount("unmetered");
    const jobId = await completedJob(account);
    const rows = await env.DB.prepare(`SELECT idx, framing_json FROM clips WHERE job_id = ? ORDER BY idx`).bind(jobId).all<{ idx: number; framing_json: string | null }>();
    expect(JSON.parse(rows.results[0]!.framing_json!)).toEqual(FRAMING);
    expect(rows.results[1]!.framing_json).toBeNull();
  });

  it("answers every format as an attachment, against the source, with the crop and the sidecars", async () => {
    const account = await createAccount("unmetered");
    const jobId = await completedJob(account);
    const types = { fcpxml: "application/xml", edl: "text/plain", otio: "application/json", mlt: "application/xml" } as const;
    const bodies: Record<string, string> = {};
    for (const [format, type] of Object.entries(types)) {
      const res = await exportOf(account, jobId, format);
      expect(res.status).toBe(200);
      expect(res.headers.get("Content-Type")).toContain(type);
      expect(res.headers.get("Content-Disposition")).toBe(`attachment; filename="${jobId}.${format}"`);
      bodies[format] = await res.text();
    }
    // EDL: clip 0 is two kept spans around its removed pause, clip 1 one: three events at 25 fps.
    expect(bodies.edl!.match(/^\d{3} {2}KEYNOTE +AA\/V {2}C {8}/gm)).toHaveLength(3);
    expect(bodies.edl).toContain("001  KEYNOTE  AA/V  C        00:00:00:00 00:00:08:00 01:00:00:00 01:00:08:00");
    expect(bodies.edl).toContain(`* FROM CLIP NAME: Tom & "Jerry" <b>it's</b> second line ? (part 1 of 2)`);
    expect(bodies.edl).toContain("* SOURCE FILE: keynote.mp4");
    // OTIO: the source's URL, and the clip's crop keys (a pan, then a cut) and sidecars.
    const otio = JSON.parse(bodies.otio!) as { name: string; metadata: { clipjobs: { transcript_url: string } }; tracks: { children: { children: { media_references: { DEFAULT_MEDIA: { target_url: string } }; metadata: { clipjobs: { crop: { keys: unknown[] }; captions: { vtt: string } | null } } }[] }[] } };
    expect(otio.name).toBe(TITLE);
    expect(otio.metadata.clipjobs.transcript_url).toBe(`http://worker.test/api/v1/jobs/${jobId}/transcript`);
    const clips = otio.tracks.children[0]!.children;
    expect(clips).toHaveLength(3);
    expect(clips[0]!.media_references.DEFAULT_MEDIA.target_url).toBe("https://videos.example.com/talks/keynote.mp4");
    expect(clips[0]!.metadata.clipjobs.crop.keys.length).toBeGreaterThan(1);
    expect(clips[0]!.metadata.clipjobs.captions?.vtt).toMatch(/^http:\/\/worker\.test\/cdn\//);
    expect(clips[2]!.metadata.clipjobs.crop.keys).toHaveLength(1);
    expect(clips[2]!.metadata.clipjobs.captions).toBeNull();
    // FCPXML and MLT: the title escaped, the camera's moves keyed.
    expect(bodies.fcpxml).toContain(`name="Tom &amp; &quot;Jerry&quot; &lt;b&gt;it&apos;s&lt;/b&gt;&#10;second line 🎬"`);
    expect(bodies.fcpxml).toContain("<keyframeAnimation>");
    expect(bodies.mlt).toContain(`title="Tom &amp; &quot;Jerry&quot; &lt;b&gt;it&apos;s&lt;/b&gt;&#10;second line 🎬"`);
    expect(bodies.mlt).toMatch(/<property name="transition.rect">0=[^<]*;\d+=/);
  });

  it("answers the documented problems", async () => {
    const account = await createAccount("unmetered");
    const other = await createAccount("unmetered");
    const jobId = await completedJob(account);
    await expectProblem(await exportOf(account, jobId, "aaf"), 400, "invalid_request");
    await expectProblem(await api(account, `/api/v1/jobs/${jobId}/export`), 400, "invalid_request");
    await expectProblem(await exportOf(other, jobId, "edl"), 404, "not_found");
    await expectProblem(await exportOf(account, "job_nothing", "edl"), 404, "not_found");

    const processing = await processingJob(engine, account);
    await expectProblem(await exportOf(account, processing.jobId, "otio"), 409, "job_not_completed");

    expect((await api(account, `/api/v1/jobs/${jobId}`, { method: "DELETE" })).status).toBeLessThan(300);
    await expectProblem(await exportOf(account, jobId, "fcpxml"), 404, "not_found");
  });

  it("refuses a canceled job", async () => {
    const account = await createAccount("unmetered");
    const jobId = await submitJob(account);
    expect((await api(account, `/api/v1/jobs/${jobId}/cancel`, { method: "POST" })).status).toBe(200);
    const problem = await expectProblem(await exportOf(account, jobId, "mlt"), 409, "job_not_completed");
    expect(problem.detail).toContain("canceled");
  });
});
