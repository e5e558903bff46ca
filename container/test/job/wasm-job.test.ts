import { createReadStream } from "node:fs";
import { stat } from "node:fs/promises";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DEFAULT_CLIP_CONFIG, type ClipConfig, type CompleteReport, type ProgressReport } from "#contract";
import { cachedMedia } from "../../../test/media/generate.ts";
import { createWasmRunner } from "../../src/ffmpeg/wasm.ts";
import { newJobId, postJson, startJobBody, startTestEngine, type TestEngine } from "../helpers/engine.ts";
import { startFakeWorker, type FakeWorker } from "../helpers/fake-worker.ts";
import { ffprobeJson, osTempDir, removeTempDirs } from "../helpers/media.ts";
import { startRecordingServer, waitFor, type RecordingServer } from "../helpers/servers.ts";

/**
 * A whole job on the WebAssembly backend: download, probe, analysis, render
 * and upload through the real engine server, with @ffmpeg/core doing every
 * ffmpeg and ffprobe run. Kept small (a 24 s 320x180 source, one square 720p
 * clip) because the wasm build is about ten times slower than native.
 */
const CONFIG: ClipConfig = { ...DEFAULT_CLIP_CONFIG, aspect_ratio: "1:1", resolution: 720, min_clip_seconds: 5, max_clip_seconds: 10, max_clips: 1, reframe: "center", layout: "single", captions: "off", caption_style: "bold", caption_position: "bottom" };

const tokens = new Map<string, string>();
let worker: FakeWorker;
let source: RecordingServer;
let engine: TestEngine;
let sourceSeconds: number;

beforeAll(async () => {
  process.env.ENGINE_LOG_LEVEL = "warn";
  const media = await cachedMedia({ durationSeconds: 24, audio: "speech", bursts: [14], sceneChanges: [8, 16], seed: 5 });
  sourceSeconds = media.facts.durationSeconds;
  const size = (await stat(media.path)).size;
  source = await startRecordingServer((req, res) => {
    if (req.url !== "/short.mp4") {
      res.writeHead(404).end();
      return;
    }
    res.writeHead(200, { "content-type": "video/mp4", "content-length": String(size) });
    createReadStream(media.path).pipe(res);
  });
  worker = await startFakeWorker(tokens, await osTempDir("wasm-uploads"));
  engine = await startTestEngine(await osTempDir("wasm-engine"), { runner: await createWasmRunner() }, { callbackBase: worker.base });
});

afterAll(async () => {
  await engine?.close();
  await worker?.close();
  await source?.close();
  await removeTempDirs();
});

describe("a job on the WebAssembly backend", () => {
  it("produces a valid clip and thumbnail end to end, and says which backend ran", { timeout: 600_000 }, async () => {
    expect(await (await fetch(`${engine.base}/health`)).json()).toMatchObject({ backend: "wasm" });
    const jobId = newJobId("wasmjob");
    const token = `tok_${jobId}_abcdefghijklmnop`;
    tokens.set(jobId, token);
    const started = await postJson(`${engine.base}/jobs`, startJobBody({ jobId, token, videoUrl: source.url("/short.mp4"), config: CONFIG }));
    expect(started.status).toBe(202);
    await waitFor(() => worker.callsFor(jobId).some((c) => c.kind === "complete" || c.kind === "fail"), 540_000, "the job to finish");

    expect(worker.callsFor(jobId, "fail").map((c) => c.body)).toEqual([]);
    const steps = [...new Set(worker.callsFor(jobId, "progress").map((c) => (c.body as ProgressReport).step))];
    expect(steps.some((s) => s.includes("WebAssembly"))).toBe(true);

    const complete = worker.callsFor(jobId, "complete")[0]?.body as CompleteReport;
    expect(complete.clips).toHaveLength(1);
    expect(complete.source_duration_seconds).toBeCloseTo(sourceSeconds, 0);
    const clip = complete.clips[0]!;
    const video = worker.callsFor(jobId, "clip")[0];
    const thumbnail = worker.callsFor(jobId, "thumbnail")[0];
    if (!video?.file || !thumbnail?.file) throw new Error("clip or thumbnail upload missing");

    const probed = await ffprobeJson(video.file);
    const stream = probed.streams.find((s) => s.codec_type === "video");
    expect(stream).toMatchObject({ codec_name: "h264", width: 720, height: 720 });
    expect(probed.streams.find((s) => s.codec_type === "audio")?.codec_name).toBe("aac");
    const length = Number(probed.format.duration);
    expect(length).toBeGreaterThanOrEqual(CONFIG.min_clip_seconds - 0.2);
    expect(length).toBeLessThanOrEqual(CONFIG.max_clip_seconds + 0.2);
    expect(clip.end_seconds - clip.start_seconds).toBeCloseTo(length, 0);
    expect((await ffprobeJson(thumbnail.file)).streams[0]?.codec_name).toBe("mjpeg");
    await waitFor(async () => (await engine.workDirsOf(jobId)).length === 0, 10_000, "the work dir to go");
  });
});
