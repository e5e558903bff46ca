/**
 * Face reframing through the whole engine: a job posted to the engine server
 * (as the Worker sends it) on a composed source; the fake Worker receives the
 * complete report, whose clips say what their crop followed and how it moved.
 */
import { createReadStream } from "node:fs";
import { stat } from "node:fs/promises";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ClipFraming, DEFAULT_CLIP_CONFIG, type ClipConfig, type CompleteReport, type ProgressReport } from "#contract";
import { startTestEngine, newJobId, postJson, startJobBody, type TestEngine } from "../helpers/engine.ts";
import { compose, PEOPLE } from "../helpers/faces-media.ts";
import { screenRecording } from "../helpers/screen-media.ts";
import { startFakeWorker, type FakeWorker } from "../helpers/fake-worker.ts";
import { ffprobeJson, osTempDir, removeTempDirs } from "../helpers/media.ts";
import { startRecordingServer, waitFor, type RecordingServer } from "../helpers/servers.ts";

const CONFIG: ClipConfig = { ...DEFAULT_CLIP_CONFIG, aspect_ratio: "9:16", resolution: 720, min_clip_seconds: 5, max_clip_seconds: 10, max_clips: 1, reframe: "faces", layout: "single", captions: "off", caption_style: "bold", caption_position: "bottom" };

const tokens = new Map<string, string>();
let worker: FakeWorker;
let source: RecordingServer;
let engine: TestEngine;

beforeAll(async () => {
  process.env.ENGINE_LOG_LEVEL = "warn";
  const dir = await osTempDir("faces-job");
  const file = path.join(dir, "walk.mp4");
  await compose(file, { seconds: 10, width: 640, height: 360, fps: 15, distractor: true, people: [{ person: PEOPLE.anna, width: 130, path: [[0, 40, 120], [6, 450, 140], [10, 450, 140]] }] });
  const screen = path.join(dir, "screen.mp4");
  await screenRecording(screen, { seconds: 10, width: 640, height: 360, fps: 15 });
  const files = new Map([["/walk.mp4", file], ["/screen.mp4", screen]]);
  const sizes = new Map(await Promise.all([...files].map(async ([route, f]) => [route, (await stat(f)).size] as const)));
  source = await startRecordingServer((req, res) => {
    const served = files.get(req.url ?? "");
    if (!served) return void res.writeHead(404).end();
    res.writeHead(200, { "content-type": "video/mp4", "content-length": String(sizes.get(req.url ?? "")) });
    createReadStream(served).pipe(res);
  });
  worker = await startFakeWorker(tokens, await osTempDir("faces-uploads"));
  engine = await startTestEngine(await osTempDir("faces-engine"), {}, { callbackBase: worker.base });
}, 120_000);

afterAll(async () => {
  await engine?.close();
  await worker?.close();
  await source?.close();
  await removeTempDirs();
});

describe("engine job reframing", () => {
  it("completes with clips that report reframe=faces and the number of faces seen", async () => {
    const jobId = newJobId("faces");
    const token = `tok_${jobId}_abcdefghijklmnop`;
    tokens.set(jobId, token);
    const res = await postJson(`${engine.base}/jobs`, startJobBody({ jobId, token, videoUrl: source.url("/walk.mp4"), config: CONFIG }));
    expect(res.status, JSON.stringify(res.json)).toBe(202);
    await waitFor(() => worker.callsFor(jobId).some((c) => c.kind === "complete" || c.kind === "fail"), 200_000, "the job to finish");
    const calls = worker.callsFor(jobId);
    const fail = calls.find((c) => c.kind === "fail");
    expect(fail?.body).toBeUndefined();
    const complete = calls.find((c) => c.kind === "complete")!.body as CompleteReport;
    expect(complete.clips).toHaveLength(1);
    expect(complete.clips[0]).toMatchObject({ reframe: "faces", faces_count: 1, width: 720, height: 1280 });
    // The framing the editor exports carry: the source's picture, the render's crop window, and a camera that follows the walk to the right.
    const framing = ClipFraming.parse(complete.clips[0]!.framing);
    expect(framing).toMatchObject({ source_width: 640, source_height: 360, source_fps: 15, crop_width: 202, crop_height: 360, split: false });
    expect(framing.path.at(-1)!.x1 - framing.path[0]!.x0).toBeGreaterThan(0.3);
    expect(framing.path.every((segment) => Number.isFinite(segment.to_seconds) && segment.to_seconds <= 10)).toBe(true);
    // Progress never went backwards through detection and rendering.
    const progress = calls.filter((c) => c.kind === "progress").map((c) => (c.body as ProgressReport).progress);
    expect(progress).toEqual([...progress].sort((a, b) => a - b));
    const clip = calls.find((c) => c.kind === "clip")!;
    const probe = await ffprobeJson(clip.file!);
    expect(probe.streams.find((s) => s.codec_type === "video")).toMatchObject({ width: 720, height: 1280 });
  }, 240_000);

  it("with no configuration (reframe auto), a screen recording's clip reports reframe=fit", async () => {
    const jobId = newJobId("fit");
    const token = `tok_${jobId}_abcdefghijklmnop`;
    tokens.set(jobId, token);
    const config: ClipConfig = { ...DEFAULT_CLIP_CONFIG, resolution: 720, min_clip_seconds: 5, max_clip_seconds: 10, max_clips: 1, captions: "off" };
    expect(config.reframe).toBe("auto");
    const res = await postJson(`${engine.base}/jobs`, startJobBody({ jobId, token, videoUrl: source.url("/screen.mp4"), config }));
    expect(res.status, JSON.stringify(res.json)).toBe(202);
    await waitFor(() => worker.callsFor(jobId).some((c) => c.kind === "complete" || c.kind === "fail"), 200_000, "the job to finish");
    const calls = worker.callsFor(jobId);
    expect(calls.find((c) => c.kind === "fail")?.body).toBeUndefined();
    const complete = calls.find((c) => c.kind === "complete")!.body as CompleteReport;
    expect(complete.clips[0]).toMatchObject({ reframe: "fit", faces_count: 0, width: 720, height: 1280 });
  }, 240_000);
});
