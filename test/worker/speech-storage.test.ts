/**
 * The speech results end to end on the Worker side: the engine's transcript
 * and caption uploads (the private bucket), the completion's speech fields
 * (D1), the job as the API shows it, GET /api/v1/jobs/:id/transcript in every
 * format, the published caption files on {cdn_url} (never the transcript),
 * and deletion with the job.
 */
import { env, SELF } from "cloudflare:test";
import { beforeEach, describe, expect, it } from "vitest";
import { Job as JobSchema } from "../../src/api/openapi-schemas.ts";
import { TranscriptDocument } from "../../src/api/transcript.ts";
import { MAX_TRANSCRIPT_UPLOAD_BYTES } from "#contract";
import { clipReport, expectAck, FakeEngine, type EngineClient } from "./engine-stub.ts";
import { api, BASE, createAccount, expectProblem, type TestAccount } from "./helpers.ts";
import { startJob } from "./jobs-helpers.ts";
import * as helpers from "./speech-helpers.ts";
import { CLIP_SRT, CLIP_VTT, put, TRANSCRIPT } from "./speech-helpers.ts";
import { PUBLISHED_URL, stagedKeys } from "./storage-helpers.ts";

let engine: FakeEngine;
beforeEach(() => {
  engine = new FakeEngine();
  engine.install();
});

/** An object of the private bucket (staged uploads, transcripts). */
async function objectText(key: string): Promise<string | null> {
  const object = await env.UPLOADS.get(key);
  return object ? object.text() : null;
}

function processingJob(account: TestAccount, body?: Record<string, unknown>): Promise<EngineClient> {
  return helpers.processingJob(engine, account, body);
}

function captionedJob(account: TestAccount): Promise<string> {
  return helpers.captionedJob(engine, account);
}

describe("engine channel: transcript and caption uploads", () => {
  it("stores the transcript and the clip's captions in the private bucket, nothing in the public one", async () => {
    const account = await createAccount("unmetered");
    const client = await processingJob(account);
    await expectAck(await put(client, "transcript", JSON.stringify(TRANSCRIPT), "application/json"));
    await expectAck(await put(client, "clips/3/captions.vtt", CLIP_VTT, "text/vtt; charset=utf-8"));
    await expectAck(await put(client, "clips/3/captions.srt", CLIP_SRT, "application/x-subrip"));
    expect(JSON.parse((await objectText(`transcripts/${client.jobId}.json`))!)).toEqual(TRANSCRIPT);
    expect(await objectText(`staging/${client.jobId}/3.vtt`)).toBe(CLIP_VTT);
    expect(await objectText(`staging/${client.jobId}/3.srt`)).toBe(CLIP_SRT);
    expect((await env.UPLOADS.head(`staging/${client.jobId}/3.vtt`))?.httpMetadata?.contentType).toBe("text/vtt; charset=utf-8");
    expect(await env.CLIPS.head(`transcripts/${client.jobId}.json`)).toBeNull();
    expect((await SELF.fetch(`${env.CDN_URL}/transcripts/${client.jobId}.json`)).status).toBe(404);
  });

  it("stores captions sent with a byte-order mark without it (players and editors differ on BOMs)", async () => {
    const account = await createAccount("unmetered");
    const client = await processingJob(account);
    await expectAck(await put(client, "clips/1/captions.srt", `\ufeff${CLIP_SRT}`, "application/x-subrip"));
    await expectAck(await put(client, "clips/2/captions.srt", "\ufeff", "application/x-subrip"));
    const bytes = async (key: string) => new Uint8Array(await (await env.UPLOADS.get(key))!.arrayBuffer());
    expect(await bytes(`staging/${client.jobId}/1.srt`)).toEqual(new TextEncoder().encode(CLIP_SRT));
    expect((await bytes(`staging/${client.jobId}/2.srt`)).length).toBe(0);
  });

  it("refuses bad uploads with clear errors and stores nothing", async () => {
    const account = await createAccount("unmetered");
    const client = await processingJob(account);
    await expectProblem(await put(client, "transcript", JSON.stringify(TRANSCRIPT), "text/plain"), 415, "unsupported_media_type");
    await expectProblem(await put(client, "transcript", "{not json", "application/json"), 400, "invalid_request");
    const backwards = { ...TRANSCRIPT, words: [{ text: "x", start: 5, end: 4 }] };
    const problem = await expectProblem(await put(client, "transcript", JSON.stringify(backwards), "application/json"), 400, "invalid_request");
    expect(problem.errors?.[0]?.path).toBe("words.0");
    await expectProblem(await put(client, "transcript", JSON.stringify({ ...TRANSCRIPT, source: "guess" }), "application/json"), 400, "invalid_request");
    const huge = JSON.stringify({ ...TRANSCRIPT, pad: "x".repeat(MAX_TRANSCRIPT_UPLOAD_BYTES) });
    await expectProblem(await put(client, "transcript", huge, "application/json"), 413, "payload_too_large");
    await expectProblem(await put(client, "clips/0/captions.vtt", CLIP_SRT, "text/vtt"), 400, "invalid_request");
    await expectProblem(await put(client, "clips/0/captions.srt", "hello", "application/x-subrip"), 400, "invalid_request");
    await expectProblem(await put(client, "clips/0/captions.vtt", new Uint8Array([0x57, 0x45, 0xff, 0xfe]), "text/vtt"), 400, "invalid_request");
    await expectProblem(await put(client, "clips/0/captions.vtt", CLIP_VTT, "application/octet-stream"), 415, "unsupported_media_type");
    await expectProblem(await put(client, "clips/20/captions.vtt", CLIP_VTT, "text/vtt"), 400, "invalid_request");
    await expectProblem(await put(client, "clips/0/captions.vtt", "WEBVTT\n\n" + "x".repeat(2 * 1024 * 1024), "text/vtt"), 413, "payload_too_large");
    expect(await stagedKeys(client.jobId)).toEqual([]);
    expect(await env.UPLOADS.head(`transcripts/${client.jobId}.json`)).toBeNull();
  });

  it("requires the job's token and a processing job", async () => {
    const account = await createAccount("unmetered");
    const client = await processingJob(account);
    const other = await processingJob(await createAccount("unmetered"));
    const stolen = await client.send("transcript", {
      method: "PUT",
      headers: { "Content-Type": "application/json" },
      body: JSON.stringify(TRANSCRIPT),
      token: other.token,
    });
    await expectProblem(stolen, 401, "unauthorized");
    expect((await api(account, `/api/v1/jobs/${client.jobId}/cancel`, { method: "POST" })).status).toBe(200);
    await expectProblem(await put(client, "clips/0/captions.vtt", CLIP_VTT, "text/vtt"), 409, "job_not_active");
    expect(await env.UPLOADS.head(`staging/${client.jobId}/0.vtt`)).toBeNull();
  });

  it("will not complete a job whose promised sidecars or transcript were not uploaded", async () => {
    const account = await createAccount("unmetered");
    const client = await processingJob(account);
    await client.uploadClip(0, 512);
    await expectAck(await put(client, "clips/0/captions.vtt", CLIP_VTT, "text/vtt"));
    const noSrt = await client.complete({ title: "t", source_duration_seconds: 60, clips: [clipReport(0, { sidecars: true })] });
    expect((await expectProblem(noSrt, 400, "invalid_request")).detail).toContain(`staging/${client.jobId}/0.srt`);
    const noTranscript = await client.complete({
      title: "t",
      source_duration_seconds: 60,
      clips: [clipReport(0)],
      transcript: { source: "workers_ai", language: "en", word_count: 3 },
    });
    expect((await expectProblem(noTranscript, 400, "invalid_request")).detail).toContain(`transcripts/${client.jobId}.json`);
  });
});

describe("the job and its transcript through the public API", () => {
  it("shows transcript, language, per-clip text, title and captions on {cdn_url}", async () => {
    const account = await createAccount("unmetered");
    const jobId = await captionedJob(account);
    const res = await api(account, `/api/v1/jobs/${jobId}`);
    const job = JobSchema.parse(await res.json());
    if (job.status !== "completed") throw new Error(`job is ${job.status}`);
    expect(job.transcript).toEqual({ source: "subtitle_track", language: "en", word_count: 7 });
    expect(job.transcript_unavailable_reason).toBeNull();
    expect(job.language).toBe("en");
    const [first, second] = job.clips;
    expect(first).toMatchObject({
      text: "Why do clips matter? Because people scroll",
      title: "Why do clips matter?",
      captions_burned: true,
    });
    // Published with their clip, each under a key of its own.
    expect(first!.captions!.vtt_url).toMatch(PUBLISHED_URL);
    expect(first!.captions!.srt_url).toMatch(PUBLISHED_URL);
    expect(new Set([first!.url, first!.thumbnail_url, first!.captions!.vtt_url, first!.captions!.srt_url].map((u) => u.split("/").at(-2))).size).toBe(4);
    expect(second).toMatchObject({ text: null, title: null, captions_burned: false, captions: null });
    // The sidecar links work (the local CDN serves the bucket).
    const vtt = await SELF.fetch(first!.captions!.vtt_url);
    expect(vtt.status).toBe(200);
    expect(vtt.headers.get("Content-Type")).toContain("text/vtt");
    expect(await vtt.text()).toBe(CLIP_VTT);
  });

  it("says why there is no transcript", async () => {
    const account = await createAccount("unmetered");
    const client = await processingJob(account);
    await client.uploadClip(0, 512);
    const reason = "No subtitle track, platform subtitles or captions_url, and speech-to-text is not available on this deployment.";
    await expectAck(await client.complete({ title: "t", source_duration_seconds: 60, clips: [clipReport(0)], transcript_unavailable_reason: reason }));
    const job = JobSchema.parse(await (await api(account, `/api/v1/jobs/${client.jobId}`)).json());
    if (job.status !== "completed") throw new Error(`job is ${job.status}`);
    expect(job.transcript).toBeNull();
    expect(job.language).toBeNull();
    expect(job.transcript_unavailable_reason).toBe(reason);
    const missing = await expectProblem(await api(account, `/api/v1/jobs/${client.jobId}/transcript`), 404, "transcript_not_found");
    expect(missing.detail).toContain(reason);
  });

  it("serves the transcript as JSON, WebVTT, SRT and text", async () => {
    const account = await createAccount("unmetered");
    const jobId = await captionedJob(account);
    const json = await api(account, `/api/v1/jobs/${jobId}/transcript`);
    expect(json.status).toBe(200);
    expect(TranscriptDocument.parse(await json.json())).toEqual({ job_id: jobId, ...TRANSCRIPT });

    const vtt = await api(account, `/api/v1/jobs/${jobId}/transcript?format=vtt`);
    expect(vtt.headers.get("Content-Type")).toBe("text/vtt; charset=utf-8");
    expect(await vtt.text()).toBe(
      "WEBVTT\n\n00:00:01.000 --> 00:00:02.400\nWhy do clips matter?\n\n00:00:03.000 --> 00:00:04.400\nBecause people &lt;b&gt;scroll&lt;/b&gt;\n",
    );
    const srt = await api(account, `/api/v1/jobs/${jobId}/transcript?format=srt`);
    expect(srt.headers.get("Content-Type")).toBe("application/x-subrip; charset=utf-8");
    expect(await srt.text()).toBe(
      "1\n00:00:01,000 --> 00:00:02,400\nWhy do clips matter?\n\n2\n00:00:03,000 --> 00:00:04,400\nBecause people <b>scroll</b>\n",
    );
    const txt = await api(account, `/api/v1/jobs/${jobId}/transcript?format=txt`);
    expect(await txt.text()).toBe("Why do clips matter?\nBecause people <b>scroll</b>\n");
    await expectProblem(await api(account, `/api/v1/jobs/${jobId}/transcript?format=docx`), 400, "invalid_request");
  });

  it("keeps transcripts private to their account and answers 404 until there is one", async () => {
    const account = await createAccount("unmetered");
    const jobId = await captionedJob(account);
    const stranger = await createAccount("unmetered");
    await expectProblem(await api(stranger, `/api/v1/jobs/${jobId}/transcript`), 404, "not_found");
    await expectProblem(await SELF.fetch(`${BASE}/api/v1/jobs/${jobId}/transcript`), 401, "unauthorized");
    await expectProblem(await api(account, `/api/v1/jobs/job_doesnotexist0000000/transcript`), 404, "not_found");
    const running = await processingJob(account);
    await expectAck(await put(running, "transcript", JSON.stringify(TRANSCRIPT), "application/json"));
    await expectProblem(await api(account, `/api/v1/jobs/${running.jobId}/transcript`), 404, "transcript_not_found");
  });

  it("serves the transcript through the API only: 404 on {cdn_url} under any key", async () => {
    const account = await createAccount("unmetered");
    const jobId = await captionedJob(account);
    expect((await api(account, `/api/v1/jobs/${jobId}/transcript`)).status).toBe(200);
    for (const key of [`transcripts/${jobId}.json`, `staging/${jobId}/0.vtt`, `clips/${jobId}/0.vtt`, `uploads/${jobId}`]) {
      expect((await SELF.fetch(`${env.CDN_URL}/${key}`)).status).toBe(404);
    }
  });

  it("deletes the transcript and the caption files with the job", async () => {
    const account = await createAccount("unmetered");
    const jobId = await captionedJob(account);
    const job = JobSchema.parse(await (await api(account, `/api/v1/jobs/${jobId}`)).json());
    if (job.status !== "completed") throw new Error(`job is ${job.status}`);
    const sidecars = [job.clips[0]!.captions!.vtt_url, job.clips[0]!.captions!.srt_url];
    for (const url of sidecars) expect((await SELF.fetch(url)).status).toBe(200);
    expect(await env.UPLOADS.head(`transcripts/${jobId}.json`)).not.toBeNull();
    expect((await api(account, `/api/v1/jobs/${jobId}`, { method: "DELETE" })).status).toBe(204);
    expect(await env.UPLOADS.head(`transcripts/${jobId}.json`)).toBeNull();
    for (const url of sidecars) expect((await SELF.fetch(url)).status).toBe(404);
  });

  it("removes uploaded transcript and captions when a job fails", async () => {
    const account = await createAccount("unmetered");
    const client = await processingJob(account);
    await expectAck(await put(client, "transcript", JSON.stringify(TRANSCRIPT), "application/json"));
    await expectAck(await put(client, "clips/0/captions.vtt", CLIP_VTT, "text/vtt"));
    await expectAck(await client.fail({ code: "captions_invalid", message: "captions_url is not an SRT or WebVTT file." }));
    expect(await env.UPLOADS.head(`transcripts/${client.jobId}.json`)).toBeNull();
    expect(await stagedKeys(client.jobId)).toEqual([]);
    const job = await (await api(account, `/api/v1/jobs/${client.jobId}`)).json<{ error: { code: string }; credits_charged: number }>();
    expect(job.error.code).toBe("captions_invalid");
    expect(job.credits_charged).toBe(0);
  });
});

describe("captions_url at submission", () => {
  it("is checked like video_url, kept on the job and sent to the engine", async () => {
    const account = await createAccount("unmetered");
    const captionsUrl = "https://subs.example.com/talk.en.vtt";
    const client = await startJob(account, engine, { video_url: "https://videos.example.com/a.mp4", video_type: "podcast", captions_url: captionsUrl });
    expect(engine.starts(client.jobId).at(-1)?.captions_url).toBe(captionsUrl);
    const job = await (await api(account, `/api/v1/jobs/${client.jobId}`)).json<{ captions_url: string | null }>();
    expect(job.captions_url).toBe(captionsUrl);
    for (const bad of ["http://127.0.0.1/subs.vtt", "ftp://subs.example.com/a.srt", "https://user:pw@subs.example.com/a.srt", "not a url"]) {
      const res = await api(account, "/api/v1/jobs", {
        method: "POST",
        body: JSON.stringify({ video_url: "https://videos.example.com/a.mp4", video_type: "podcast", captions_url: bad }),
      });
      const problem = await expectProblem(res, 400, "invalid_captions_url");
      expect(problem.errors?.[0]?.path).toBe("captions_url");
    }
  });

  it("is optional: absent and null send none", async () => {
    const account = await createAccount("unmetered");
    const client = await startJob(account, engine, { video_url: "https://videos.example.com/b.mp4", video_type: "general", captions_url: null });
    expect(engine.starts(client.jobId).at(-1)?.captions_url ?? null).toBeNull();
  });
});
