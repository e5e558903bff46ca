import { createReadStream } from "node:fs";
import { stat } from "node:fs/promises";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DEFAULT_CLIP_CONFIG, ENGINE_SIGNATURE_HEADER, signEngineRequest, type ClipConfig, type CompleteReport, type ProbeReport, type ProgressReport } from "#contract";
import { cachedMedia, type MediaFacts } from "../../test/media/generate.ts";
import { startTestEngine, newJobId, OTHER_SIGNING_KEY, postJson, signedHeader, startJobBody, TEST_SIGNING_KEY, type TestEngine } from "./helpers/engine.ts";
import { startFakeWorker, type FakeWorker } from "./helpers/fake-worker.ts";
import { ffprobeJson, nativeRunner, osTempDir, removeTempDirs } from "./helpers/media.ts";
import { ffmpegChildren } from "./helpers/processes.ts";
import { startRecordingServer, waitFor, type RecordingServer } from "./helpers/servers.ts";

/**
 * The engine as the Worker sees it: a real engine server, a fake Worker
 * recording every callback, and a local source server, all over real HTTP,
 * with native ffmpeg doing the work.
 */
const SMALL: ClipConfig = { ...DEFAULT_CLIP_CONFIG, aspect_ratio: "9:16", resolution: 720, min_clip_seconds: 5, max_clip_seconds: 10, max_clips: 2, reframe: "center", layout: "single", captions: "off", caption_style: "bold", caption_position: "bottom" };
const SLOW: ClipConfig = { ...DEFAULT_CLIP_CONFIG, aspect_ratio: "9:16", resolution: 1080, min_clip_seconds: 15, max_clip_seconds: 30, max_clips: 3, reframe: "center", layout: "single", captions: "off", caption_style: "bold", caption_position: "bottom" };

const tokens = new Map<string, string>();
let worker: FakeWorker;
let source: RecordingServer;
let engine: TestEngine;
let media: { path: string; facts: MediaFacts };

function tokenFor(jobId: string): string {
  const token = `tok_${jobId}_abcdefghijklmnop`;
  tokens.set(jobId, token);
  return token;
}

function start(jobId: string, config: ClipConfig, videoPath = "/talk.mp4", extra: { allowPrivateHosts?: boolean } = {}) {
  return postJson(
    `${engine.base}/jobs`,
    startJobBody({ jobId, token: tokenFor(jobId), videoUrl: source.url(videoPath), config, ...extra }),
  );
}

function finished(jobId: string): boolean {
  return worker.callsFor(jobId).some((c) => c.kind === "complete" || c.kind === "fail");
}

beforeAll(async () => {
  process.env.ENGINE_LOG_LEVEL = "warn";
  media = await cachedMedia({ durationSeconds: 60, audio: "speech", bursts: [12, 40], sceneChanges: [10, 22, 35, 48], seed: 11 });
  const size = (await stat(media.path)).size;
  source = await startRecordingServer((req, res) => {
    if (req.url === "/talk.mp4") {
      res.writeHead(200, { "content-type": "video/mp4", "content-length": String(size) });
      createReadStream(media.path).pipe(res);
      return;
    }
    if (req.url === "/page.mp4") {
      res.writeHead(200, { "content-type": "video/mp4" }).end("<!doctype html><html><body>Sign in to watch</body></html>");
      return;
    }
    res.writeHead(404).end();
  });
  worker = await startFakeWorker(tokens, await osTempDir("uploads"));
  engine = await startTestEngine(await osTempDir("engine-work"), {}, { callbackBase: worker.base });
});

afterAll(async () => {
  await engine?.close();
  await worker?.close();
  await source?.close();
});

describe("engine server", () => {
  it("answers /health with its backend and job count", async () => {
    const res = await fetch(`${engine.base}/health`);
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ ok: true, backend: "native", active_jobs: 0 });
  });

  it("rejects a StartJob that does not match the contract", async () => {
    const res = await postJson(`${engine.base}/jobs`, { job_id: "job_x", video_url: "http://a/b" });
    expect(res.status).toBe(400);
    expect((res.json as { code: string }).code).toBe("invalid_request");
  });

  it("runs two jobs at once end to end: progress, probe report, clips and thumbnails uploaded, complete", async () => {
    const jobId = newJobId("full");
    const otherId = newJobId("square");
    const square: ClipConfig = { ...SMALL, aspect_ratio: "1:1", max_clips: 1 };
    const requestsBefore = source.requests.length;
    const first = await start(jobId, SMALL);
    const other = await start(otherId, square);
    const second = await start(jobId, SMALL);
    expect(first).toEqual({ status: 202, json: { job_id: jobId, started: true } });
    expect(other).toEqual({ status: 202, json: { job_id: otherId, started: true } });
    expect(second).toEqual({ status: 202, json: { job_id: jobId, started: false } });
    // A ceiling that only bounds a hang: two whole jobs on a machine shared with other work.
    await waitFor(() => finished(jobId) && finished(otherId), 400_000, "both jobs to finish");

    // The duplicate start ran nothing: one download per job, one probe report each.
    expect(source.requests.length - requestsBefore).toBe(2);
    for (const id of [jobId, otherId]) {
      expect(worker.callsFor(id, "fail")).toEqual([]);
      expect(worker.callsFor(id, "probe")).toHaveLength(1);
    }

    const calls = worker.callsFor(jobId);
    const progress = calls.filter((c) => c.kind === "progress").map((c) => c.body as ProgressReport);
    const values = progress.map((p) => p.progress);
    expect(values).toEqual([...values].sort((a, b) => a - b));
    expect(Math.max(...values)).toBeLessThanOrEqual(99);
    const steps = [...new Set(progress.map((p) => p.step))];
    expect(steps[0]).toBe("Downloading video");
    expect(steps).toContain("Analyzing video");
    expect(steps.some((s) => /^Rendering clip [12] of 2$/.test(s))).toBe(true);
    expect(steps.at(-1)).toBe("Uploading clips");

    const probe = calls.find((c) => c.kind === "probe")?.body as ProbeReport;
    expect(probe.duration_seconds).toBeCloseTo(media.facts.durationSeconds, 0);
    expect(probe.size_bytes).toBe((await stat(media.path)).size);
    expect(probe.title).toBe("talk");
    const order = calls.map((c) => c.kind);
    expect(order.indexOf("probe")).toBeLessThan(order.indexOf("clip"));
    expect(order.at(-1)).toBe("complete");

    for (const [id, config, size] of [
      [jobId, SMALL, [720, 1280]],
      [otherId, square, [720, 720]],
    ] as const) {
      const jobCalls = worker.callsFor(id);
      const complete = jobCalls.find((c) => c.kind === "complete")?.body as CompleteReport;
      expect(complete.clips.map((c) => c.index)).toEqual([...Array(config.max_clips).keys()]);
      expect(complete.source_duration_seconds).toBeCloseTo(media.facts.durationSeconds, 0);
      for (const clip of complete.clips) {
        const video = jobCalls.find((c) => c.kind === "clip" && c.index === clip.index);
        const thumbnail = jobCalls.find((c) => c.kind === "thumbnail" && c.index === clip.index);
        expect(video?.contentType).toBe("video/mp4");
        expect(thumbnail?.contentType).toBe("image/jpeg");
        if (!video?.file || !thumbnail?.file) throw new Error("upload missing");
        const probed = await ffprobeJson(video.file);
        const v = probed.streams.find((s) => s.codec_type === "video");
        expect(v?.codec_name).toBe("h264");
        expect(probed.streams.find((s) => s.codec_type === "audio")?.codec_name).toBe("aac");
        expect([v?.width, v?.height]).toEqual([clip.width, clip.height]);
        expect([clip.width, clip.height]).toEqual(size);
        const length = Number(probed.format.duration);
        expect(length).toBeGreaterThanOrEqual(config.min_clip_seconds - 0.2);
        expect(length).toBeLessThanOrEqual(config.max_clip_seconds + 0.2);
        expect(clip.end_seconds - clip.start_seconds).toBeCloseTo(length, 0);
        expect((await ffprobeJson(thumbnail.file)).streams[0]?.codec_name).toBe("mjpeg");
      }
      await waitFor(async () => (await engine.workDirsOf(id)).length === 0, 10_000, "the work dir to go");
    }
    // Let go of both: the engine drops a job from its count just after removing its work dir.
    await waitFor(() => !engine.engine.isRunning(jobId) && !engine.engine.isRunning(otherId), 10_000, "the engine to let go of both jobs");
  }, 600_000);

  it("stops when the Worker refuses the probe report, with no analysis and no uploads", async () => {
    const jobId = newJobId("refused");
    worker.behaviour.probeAck = (id) =>
      id === jobId ? { proceed: false, credits_reserved: 0, error: { code: "insufficient_credits", message: "no credits" } } : { proceed: true, credits_reserved: 1 };
    await start(jobId, SMALL);
    await waitFor(() => worker.callsFor(jobId, "probe").length === 1, 30_000, "the probe report");
    await waitFor(async () => !engine.engine.isRunning(jobId) && (await engine.workDirsOf(jobId)).length === 0, 20_000, "the job to stop");
    const kinds = worker.callsFor(jobId).map((c) => c.kind);
    expect(kinds).not.toContain("clip");
    expect(kinds).not.toContain("complete");
    expect(kinds).not.toContain("fail");
    const steps = worker.callsFor(jobId, "progress").map((c) => (c.body as ProgressReport).step);
    expect(steps).not.toContain("Analyzing video");
    worker.behaviour.probeAck = undefined;
  });

  it("cancels a job mid-render: unsigned or forged cancel refused, ffmpeg stopped, work dir removed, nothing more sent", async () => {
    const jobId = newJobId("cancel");
    await start(jobId, SLOW);
    const rendering = () => worker.callsFor(jobId, "progress").some((c) => (c.body as ProgressReport).step.startsWith("Rendering"));
    await waitFor(async () => rendering() && (await ffmpegChildren(jobId)).length > 0, 60_000, "rendering to start");

    const cancelUrl = `${engine.base}/jobs/${jobId}/cancel`;
    const forged = await postJson(cancelUrl, undefined, {}, { signingKey: OTHER_SIGNING_KEY });
    expect(forged.status).toBe(401);
    const missing = await postJson(cancelUrl, undefined, { authorization: `Bearer ${tokens.get(jobId)}` }, { signed: false });
    expect(missing.status).toBe(401);
    expect(engine.engine.isRunning(jobId)).toBe(true);
    const unknown = await postJson(`${engine.base}/jobs/job_doesnotexist0000000/cancel`, undefined);
    expect(unknown.status).toBe(404);

    const canceledAt = Date.now();
    // The genuine cancel, sent twice byte for byte: accepted once, the replay refused.
    const signature = await signedHeader({ method: "POST", path: new URL(cancelUrl).pathname, body: "" });
    const send = () => fetch(cancelUrl, { method: "POST", headers: { "content-type": "application/json", [ENGINE_SIGNATURE_HEADER]: signature }, body: "" });
    const ok = await send();
    expect(ok.status).toBe(202);
    const replayed = await send();
    expect(replayed.status).toBe(409);
    expect(((await replayed.json()) as { code: string }).code).toBe("replayed");
    await waitFor(async () => (await ffmpegChildren(jobId)).length === 0, 10_000, "ffmpeg to stop");
    expect(Date.now() - canceledAt).toBeLessThan(10_000);
    await waitFor(async () => !engine.engine.isRunning(jobId) && (await engine.workDirsOf(jobId)).length === 0, 10_000, "cleanup");
    const kinds = worker.callsFor(jobId).map((c) => c.kind);
    expect(kinds).not.toContain("clip");
    expect(kinds).not.toContain("complete");
    expect(kinds).not.toContain("fail");
  });

  it("aborts a job when a callback answers 409", async () => {
    const jobId = newJobId("gone");
    worker.behaviour.override = ({ jobId: id, kind }) => (id === jobId && kind === "probe" ? 409 : undefined);
    await start(jobId, SMALL);
    await waitFor(async () => !engine.engine.isRunning(jobId) && (await engine.workDirsOf(jobId)).length === 0 && source.requests.length > 0, 30_000, "the job to stop");
    const kinds = worker.callsFor(jobId).map((c) => c.kind);
    expect(kinds.every((k) => k === "progress")).toBe(true);
    const steps = worker.callsFor(jobId, "progress").map((c) => (c.body as ProgressReport).step);
    expect(steps).not.toContain("Analyzing video");
    worker.behaviour.override = undefined;
  });

  it("fails a loopback source with source_unreachable when private hosts are not allowed, without connecting", async () => {
    // Private hosts are the engine's own setting (ALLOW_PRIVATE_SOURCES); a body naming them changes nothing.
    const strict = await startTestEngine(await osTempDir("engine-strict"), {}, { callbackBase: worker.base, allowPrivateHosts: false });
    const jobId = newJobId("ssrf");
    const connections = source.connections;
    const body = {
      ...startJobBody({ jobId, token: tokenFor(jobId), videoUrl: `http://127.1:${source.port}/talk.mp4`, config: SMALL }),
      callback_base: "http://127.0.0.1:1",
      limits: { max_source_bytes: 1e9, max_source_seconds: 3600, download_timeout_seconds: 60, allow_private_hosts: true },
    };
    expect((await postJson(`${strict.base}/jobs`, body)).status).toBe(202);
    await waitFor(() => finished(jobId), 20_000, "the fail report");
    await strict.close();
    const fail = worker.callsFor(jobId, "fail")[0]?.body as { code: string; message: string };
    expect(fail.code).toBe("source_unreachable");
    expect(fail.message).toMatch(/non-public address/);
    expect(source.connections).toBe(connections);
  });

  it("fails HTML served as video/mp4 with source_not_video", async () => {
    const jobId = newJobId("html");
    await start(jobId, SMALL, "/page.mp4");
    await waitFor(() => finished(jobId), 20_000, "the fail report");
    expect((worker.callsFor(jobId, "fail")[0]?.body as { code: string }).code).toBe("source_not_video");
    await waitFor(async () => (await engine.workDirsOf(jobId)).length === 0, 10_000, "cleanup");
  });

  it("accepts a signed StartJob once: the same request replayed is refused with 409 and starts nothing", async () => {
    const jobId = newJobId("replay");
    const text = JSON.stringify(startJobBody({ jobId, token: tokenFor(jobId), videoUrl: source.url("/page.mp4"), config: SMALL }));
    const signature = await signedHeader({ method: "POST", path: "/jobs", body: text });
    const send = () => fetch(`${engine.base}/jobs`, { method: "POST", headers: { "content-type": "application/json", [ENGINE_SIGNATURE_HEADER]: signature }, body: text });
    const first = await send();
    expect(first.status).toBe(202);
    // Ended: reported to the Worker, and let go by the engine (which it does just after the report).
    await waitFor(() => finished(jobId) && !engine.engine.isRunning(jobId), 20_000, "the first run to end");
    // Replayed after the job ended (where a re-run would do the work again) and again at once.
    for (let i = 0; i < 2; i += 1) {
      const again = await send();
      expect(again.status).toBe(409);
      expect(((await again.json()) as { code: string }).code).toBe("replayed");
    }
    expect(worker.callsFor(jobId, "fail")).toHaveLength(1);
    expect(engine.engine.isRunning(jobId)).toBe(false);
    // A new signature of the same body (what the Worker sends for a duplicate dispatch) is a new request.
    expect((await postJson(`${engine.base}/jobs`, JSON.parse(text))).status).toBe(202);
    // Let go by the engine too (just after its report), as the first run.
    await waitFor(() => worker.callsFor(jobId, "fail").length === 2 && !engine.engine.isRunning(jobId), 20_000, "the second run to end");
  });

  it("answers 401 to an unsigned, forged or expired StartJob and fetches nothing", async () => {
    const connections = source.connections;
    const requests = source.requests.length;
    for (const [label, options] of [
      ["unsigned", { signed: false }],
      ["forged", { signingKey: OTHER_SIGNING_KEY }],
    ] as const) {
      const jobId = newJobId(label);
      const res = await postJson(`${engine.base}/jobs`, startJobBody({ jobId, token: tokenFor(jobId), videoUrl: source.url("/talk.mp4"), config: SMALL }), {}, options);
      expect(res.status).toBe(401);
    }
    // A signature older than the tolerance (a replay) is refused too.
    const jobId = newJobId("expired");
    const text = JSON.stringify(startJobBody({ jobId, token: tokenFor(jobId), videoUrl: source.url("/talk.mp4"), config: SMALL }));
    const old = await signedHeader({ method: "POST", path: "/jobs", body: text }, TEST_SIGNING_KEY, Date.now() - 10 * 60_000);
    const expired = await fetch(`${engine.base}/jobs`, { method: "POST", headers: { "content-type": "application/json", [ENGINE_SIGNATURE_HEADER]: old }, body: text });
    expect(expired.status).toBe(401);
    // The body signed for another path does not open this one.
    const moved = await fetch(`${engine.base}/jobs`, {
      method: "POST",
      headers: { "content-type": "application/json", [ENGINE_SIGNATURE_HEADER]: await signedHeader({ method: "POST", path: "/other", body: text }) },
      body: text,
    });
    expect(moved.status).toBe(401);
    expect(engine.engine.isRunning(jobId)).toBe(false);
    expect(source.connections).toBe(connections);
    expect(source.requests.length).toBe(requests);
  });

  it("on shutdown reports running jobs as interrupted (the Worker requeues them) and refuses new ones", async () => {
    const own = await startTestEngine(await osTempDir("engine-shutdown"), {}, { callbackBase: worker.base });
    const jobId = newJobId("shutdown");
    await postJson(`${own.base}/jobs`, startJobBody({ jobId, token: tokenFor(jobId), videoUrl: source.url("/talk.mp4"), config: SLOW }));
    await waitFor(() => worker.callsFor(jobId, "progress").length > 0, 30_000, "the job to start");
    await own.engine.shutdown();
    expect(worker.callsFor(jobId, "fail")).toEqual([]);
    expect(worker.callsFor(jobId, "interrupted")[0]?.body).toEqual({ reason: "shutdown" });
    expect(await own.workDirsOf(jobId)).toEqual([]);
    expect(await ffmpegChildren(jobId)).toEqual([]);
    await expect(fetch(`${own.base}/health`)).rejects.toThrow();
  });

  it("names the WebAssembly backend in its steps and applies that backend's size cap", async () => {
    // The native runner relabelled as "wasm" with a small cap: the pipeline only
    // sees the interface, so this checks the pipeline's side of the backend switch.
    const size = (await stat(media.path)).size;
    const wasmLike = { ...nativeRunner(), backend: "wasm" as const, maxSourceBytes: size + 1 };
    const own = await startTestEngine(await osTempDir("engine-wasm"), { runner: wasmLike }, { callbackBase: worker.base });
    const tinyCap = await startTestEngine(await osTempDir("engine-wasm-cap"), { runner: { ...wasmLike, maxSourceBytes: 1000 } }, { callbackBase: worker.base });
    try {
      expect(await (await fetch(`${own.base}/health`)).json()).toMatchObject({ backend: "wasm" });
      const jobId = newJobId("wasmsteps");
      worker.behaviour.probeAck = (id) => ({ proceed: id !== jobId, credits_reserved: 0 });
      await postJson(`${own.base}/jobs`, startJobBody({ jobId, token: tokenFor(jobId), videoUrl: source.url("/talk.mp4"), config: SMALL }));
      await waitFor(() => worker.callsFor(jobId, "probe").length === 1, 30_000, "the probe report");
      await waitFor(() => own.engine.activeJobs() === 0, 10_000, "the job to stop");
      const steps = worker.callsFor(jobId, "progress").map((c) => (c.body as ProgressReport).step);
      expect(steps).toContain("Probing video (WebAssembly ffmpeg, slow)");

      const bigId = newJobId("wasmcap");
      await postJson(`${tinyCap.base}/jobs`, startJobBody({ jobId: bigId, token: tokenFor(bigId), videoUrl: source.url("/talk.mp4"), config: SMALL }));
      await waitFor(() => finished(bigId), 20_000, "the fail report");
      const fail = worker.callsFor(bigId, "fail")[0]?.body as { code: string; message: string };
      expect(fail.code).toBe("source_too_large");
      expect(fail.message).toMatch(/WebAssembly ffmpeg backend/);
    } finally {
      worker.behaviour.probeAck = undefined;
      await own.close();
      await tinyCap.close();
    }
  });
});

afterAll(removeTempDirs);
