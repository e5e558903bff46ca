/**
 * Speech detection inside whole jobs: the step text when the
 * speech model cannot load (the loudness fallback), the documented failure of
 * a podcast job on music only, and the WebAssembly ffmpeg backend writing the
 * model's input in the same audio pass.
 */
import { createReadStream } from "node:fs";
import { copyFile, stat } from "node:fs/promises";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DEFAULT_CLIP_CONFIG, type ClipConfig, type CompleteReport, type FailReport, type ProgressReport, type VideoType } from "#contract";
import { cachedSpeechSource, type SpeechSource } from "../../../test/media/speech.ts";
import { audioPass, speechPcmPath } from "../../src/analyse/signals.ts";
import { loadSpeechModel } from "../../src/analyse/speech-model.ts";
import { detectSpeech } from "../../src/analyse/vad.ts";
import { createWasmRunner } from "../../src/ffmpeg/wasm.ts";
import { probeSource } from "../../src/source/probe.ts";
import { newJobId, postJson, startJobBody, startTestEngine, type TestEngine } from "../helpers/engine.ts";
import { startFakeWorker, type FakeWorker } from "../helpers/fake-worker.ts";
import { osTempDir, removeTempDirs } from "../helpers/media.ts";
import { startRecordingServer, waitFor, type RecordingServer } from "../helpers/servers.ts";

const CONFIG: ClipConfig = { ...DEFAULT_CLIP_CONFIG, aspect_ratio: "1:1", resolution: 720, min_clip_seconds: 6, max_clip_seconds: 12, max_clips: 1, reframe: "center", layout: "single", captions: "off", caption_style: "bold", caption_position: "bottom" };
const SENTENCES = [
  "Good morning and welcome to this short talk about bridges.",
  { text: "Every bridge is a promise that the other side is worth it.", emphasised: true },
  "Stone bridges have stood for two thousand years in some places.",
  "Steel made it possible to cross much wider rivers and bays.",
  { text: "The longest bridges today are built over open water.", emphasised: true },
  "Thank you for listening to this little story about bridges.",
];

const tokens = new Map<string, string>();
let worker: FakeWorker;
let files: RecordingServer;
let speech: SpeechSource;
let music: SpeechSource;
const served = new Map<string, string>();

beforeAll(async () => {
  process.env.ENGINE_LOG_LEVEL = "error";
  speech = await cachedSpeechSource({ sentences: SENTENCES, bed: { kind: "music", gainDb: 10 }, seed: 21 });
  music = await cachedSpeechSource({
    sentences: [],
    minDurationSeconds: 30,
    bed: { kind: "music", gainDb: 0, swells: [{ start: 12, end: 16 }] },
    video: { sceneChanges: [8, 16, 24] },
    seed: 22,
  });
  served.set("/speech.mp4", speech.path);
  served.set("/music.mp4", music.path);
  files = await startRecordingServer((req, res) => {
    const file = served.get(req.url ?? "");
    if (!file) return void res.writeHead(404).end();
    void stat(file).then((s) => {
      res.writeHead(200, { "content-type": "video/mp4", "content-length": String(s.size) });
      createReadStream(file).pipe(res);
    });
  });
  worker = await startFakeWorker(tokens, await osTempDir("vad-uploads"));
}, 120_000);

afterAll(async () => {
  await worker?.close();
  await files?.close();
  await removeTempDirs();
});

async function runJob(engine: TestEngine, path: string, videoType: VideoType): Promise<{ steps: string[]; complete?: CompleteReport; fail?: FailReport }> {
  const jobId = newJobId("vadjob");
  const token = `tok_${jobId}_abcdefghijklmnop`;
  tokens.set(jobId, token);
  const body = { ...startJobBody({ jobId, token, videoUrl: files.url(path), config: CONFIG }), video_type: videoType };
  expect((await postJson(`${engine.base}/jobs`, body)).status).toBe(202);
  await waitFor(() => worker.callsFor(jobId).some((c) => c.kind === "complete" || c.kind === "fail"), 120_000, "the job to finish");
  return {
    steps: [...new Set(worker.callsFor(jobId, "progress").map((c) => (c.body as ProgressReport).step))],
    complete: worker.callsFor(jobId, "complete")[0]?.body as CompleteReport | undefined,
    fail: worker.callsFor(jobId, "fail")[0]?.body as FailReport | undefined,
  };
}

describe("speech detection in jobs", () => {
  it("with the model: the step is plain, and a podcast clip over a music bed starts and ends between sentences", { timeout: 180_000 }, async () => {
    const engine = await startTestEngine(await osTempDir("vad-engine"), {}, { callbackBase: worker.base });
    try {
      const { steps, complete, fail } = await runJob(engine, "/speech.mp4", "podcast");
      expect(fail).toBeUndefined();
      expect(steps).toContain("Analyzing video");
      const clip = complete!.clips[0]!;
      for (const edge of [clip.start_seconds, clip.end_seconds]) {
        expect(speech.sentences.find((s) => edge > s.start && edge < s.end), `edge ${edge}`).toBeUndefined();
      }
    } finally {
      await engine.close();
    }
  });

  it("when the model cannot load: the job still completes on loudness and its step says so", { timeout: 180_000 }, async () => {
    const engine = await startTestEngine(await osTempDir("vad-engine"), {
      speechModel: async () => ({ unavailable: "the native ONNX runtime did not load: no binary for this platform" }),
    }, { callbackBase: worker.base });
    try {
      const { steps, complete, fail } = await runJob(engine, "/speech.mp4", "general");
      expect(fail).toBeUndefined();
      expect(complete!.clips).toHaveLength(1);
      expect(steps).toContain("Analyzing video (speech detection unavailable: using loudness)");
    } finally {
      await engine.close();
    }
  });

  it("a podcast job on music only fails with no_clips_found saying no speech was found; gaming still clips", { timeout: 180_000 }, async () => {
    const engine = await startTestEngine(await osTempDir("vad-engine"), {}, { callbackBase: worker.base });
    try {
      const podcast = await runJob(engine, "/music.mp4", "podcast");
      expect(podcast.complete).toBeUndefined();
      expect(podcast.fail?.code).toBe("no_clips_found");
      expect(podcast.fail?.message).toMatch(/No speech was found/);
      const gaming = await runJob(engine, "/music.mp4", "gaming");
      expect(gaming.fail).toBeUndefined();
      expect(gaming.complete!.clips.length).toBeGreaterThanOrEqual(1);
    } finally {
      await engine.close();
    }
  });

  it("the WebAssembly ffmpeg backend writes the model's input in the same audio pass", { timeout: 300_000 }, async () => {
    const loaded = await loadSpeechModel();
    if (!("model" in loaded)) throw new Error(loaded.unavailable);
    const runner = await createWasmRunner();
    const dir = await osTempDir("vad-wasm");
    const path = `${dir}/source.mp4`;
    await copyFile(speech.path, path);
    const source = await probeSource({
      runner,
      path,
      sizeBytes: (await stat(path)).size,
      videoUrl: "https://media.test/speech.mp4",
      platformTitle: null,
      maxSourceSeconds: 3600,
      signal: new AbortController().signal,
    });
    const pcm = speechPcmPath(source);
    const audio = await audioPass(runner, source, { signal: new AbortController().signal, onProgress: () => {}, speechPcm: pcm });
    expect(audio.loudness.length).toBeGreaterThan(0);
    expect((await stat(pcm)).size).toBeCloseTo(source.durationSeconds * 16000 * 2, -4);
    const track = await detectSpeech(loaded.model, pcm, source.durationSeconds);
    const spoken = speech.sentences.reduce((sum, s) => sum + (s.end - s.start), 0);
    expect(track.speechSeconds).toBeGreaterThan(spoken * 0.9);
    expect(track.speechSeconds).toBeLessThan(spoken * 1.2);
  });
});
