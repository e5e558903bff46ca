import { createReadStream } from "node:fs";
import { readFile, stat } from "node:fs/promises";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ClipConfig, type CompleteReport, type FailReport, type ProgressReport } from "#contract";
import { runClipPipeline } from "../../src/job/clip-pipeline.ts";
import { renderClip } from "../../src/render/index.ts";
import { thumbnailFrom, thumbnailOffset } from "../../src/render/thumbnail.ts";
import { cachedMedia, type MediaFacts } from "../../../test/media/generate.ts";
import { newJobId, postJson, startJobBody, startTestEngine, type TestEngine } from "../helpers/engine.ts";
import { generatedSource } from "../helpers/engine-source.ts";
import { startFakeWorker, type FakeWorker } from "../helpers/fake-worker.ts";
import { colourDistance, meanColourOfFrame, rgbOf } from "../helpers/frames.ts";
import { ffprobeJson, nativeRunner, osTempDir, removeTempDirs, tempDir } from "../helpers/media.ts";
import { ffmpegChildren } from "../helpers/processes.ts";
import { maxOverlap, recordingRunner, type RecordingRunner } from "../helpers/recording-runner.ts";
import { startRecordingServer, waitFor, type RecordingServer } from "../helpers/servers.ts";

/**
 * The clip pipeline: renders ENGINE_RENDER_CONCURRENCY at a time, uploads in
 * index order while later clips render, and stops everything on a cancel or a
 * failure. The scheduler alone first (injected work, exact timings), then whole
 * jobs through a real engine, real ffmpeg and a fake Worker over HTTP.
 */

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe("runClipPipeline (the scheduler)", () => {
  it("runs at most `concurrency` renders, returns and uploads clips in index order, each upload after its render", async () => {
    const log: string[] = [];
    let running = 0;
    let most = 0;
    // Clip 0 is the slowest: clips 1 and 2 finish first but wait for it to be uploaded.
    const delays = [120, 20, 20, 60, 10];
    const results = await runClipPipeline({
      count: delays.length,
      concurrency: 2,
      signal: new AbortController().signal,
      render: async (index) => {
        running += 1;
        most = Math.max(most, running);
        log.push(`render ${index}`);
        await sleep(delays[index]!);
        running -= 1;
        log.push(`rendered ${index}`);
        return `clip ${index}`;
      },
      upload: async (index, clip) => {
        log.push(`upload ${index} ${clip}`);
        await sleep(5);
      },
    });
    expect(results).toEqual(["clip 0", "clip 1", "clip 2", "clip 3", "clip 4"]);
    expect(most).toBe(2);
    const uploads = log.filter((l) => l.startsWith("upload"));
    expect(uploads).toEqual(results.map((c, i) => `upload ${i} ${c}`));
    for (let i = 0; i < delays.length; i++) expect(log.indexOf(`rendered ${i}`)).toBeLessThan(log.indexOf(`upload ${i} clip ${i}`));
    // Renders did not wait for uploads: clip 2 started before clip 0 was uploaded.
    expect(log.indexOf("render 2")).toBeLessThan(log.indexOf("upload 0 clip 0"));
  });

  it("a failing render stops the running one, starts no other, and rejects only after every started render ended", async () => {
    const started: number[] = [];
    const ended: number[] = [];
    const uploaded: number[] = [];
    const pipeline = runClipPipeline({
      count: 5,
      concurrency: 2,
      signal: new AbortController().signal,
      render: async (index, signal) => {
        started.push(index);
        if (index === 1) {
          await sleep(20);
          ended.push(index);
          throw new Error("clip 1 failed");
        }
        // Like ffmpeg: stops on the abort, but takes a moment to exit.
        await new Promise<void>((resolve) => {
          const timer = setTimeout(resolve, 2000);
          signal.addEventListener("abort", () => (clearTimeout(timer), setTimeout(resolve, 80)), { once: true });
        });
        ended.push(index);
        signal.throwIfAborted();
        return index;
      },
      upload: async (index) => {
        uploaded.push(index);
      },
    });
    await expect(pipeline).rejects.toThrow("clip 1 failed");
    expect(started).toEqual([0, 1]);
    expect(ended.sort()).toEqual([0, 1]);
    expect(uploaded).toEqual([]);
  });

  it("a failing upload stops the renders; a cancel rejects with the job signal's reason", async () => {
    const aborted: number[] = [];
    const render = async (index: number, signal: AbortSignal) => {
      if (index === 0) return index;
      await new Promise<void>((resolve) => signal.addEventListener("abort", () => resolve(), { once: true }));
      aborted.push(index);
      throw signal.reason;
    };
    await expect(
      runClipPipeline({ count: 3, concurrency: 2, signal: new AbortController().signal, render, upload: async () => Promise.reject(new Error("store refused")) }),
    ).rejects.toThrow("store refused");
    // Clip 0 rendered at once, so its lane went on to clip 2: both running renders were stopped.
    expect(aborted.sort()).toEqual([1, 2]);

    const job = new AbortController();
    const canceled = runClipPipeline({ count: 3, concurrency: 2, signal: job.signal, render, upload: (_i, _c, signal) => new Promise((_resolve, reject) => signal.addEventListener("abort", () => reject(signal.reason), { once: true })) });
    setTimeout(() => job.abort(new Error("canceled by the user")), 20);
    await expect(canceled).rejects.toThrow("canceled by the user");
  });
});

describe("thumbnails", () => {
  it("come from the source when its keyframe before the moment is close, else from the clip", () => {
    const fullHd = { width: 1920, height: 1080 };
    const clip = { start: 100, end: 130 }; // thumbnail at 112 s
    expect(thumbnailOffset(clip)).toBeCloseTo(12);
    expect(thumbnailFrom(fullHd, clip, [0, 2, 110, 114])).toBe("source");
    expect(thumbnailFrom(fullHd, clip, [0, 100, 120])).toBe("clip");
    // A 4K source decodes four times the pixels from the same keyframe.
    expect(thumbnailFrom({ width: 3840, height: 2160 }, clip, [0, 110, 114])).toBe("clip");
    expect(thumbnailFrom(fullHd, clip, null)).toBe("clip");
    expect(thumbnailFrom(fullHd, clip, [])).toBe("clip");
  });

  it("from the rendered clip: a JPEG of the clip's size showing the clip's frame 40% in", async () => {
    const runner = nativeRunner();
    const gen = await generatedSource(runner, { durationSeconds: 24, sceneChanges: [12], seed: 21 });
    const out = await tempDir("thumb-clip");
    const candidate = { start: 9, end: 19, score: 0.5, reasons: ["scene_change"] }; // 40% in: 13 s, the second scene
    const outPath = path.join(out, "clip.mp4");
    const thumbnailPath = path.join(out, "clip.jpg");
    const config = ClipConfig.parse({ aspect_ratio: "16:9", resolution: 720, min_clip_seconds: 5, max_clip_seconds: 30 });
    const size = await renderClip(runner, { source: gen.source, candidate, config, outPath, thumbnailPath, signal: new AbortController().signal, onProgress: () => {}, thumbnailFrom: "clip" });
    expect(size).toEqual({ width: 1280, height: 720 });
    expect((await readFile(thumbnailPath)).subarray(0, 3)).toEqual(Buffer.from([0xff, 0xd8, 0xff]));
    const probe = await ffprobeJson(thumbnailPath);
    expect(probe.streams[0]).toMatchObject({ codec_name: "mjpeg", width: 1280, height: 720 });
    const thumb = await meanColourOfFrame(thumbnailPath, 0);
    const second = rgbOf(gen.facts.scenes[1]!.color);
    const first = rgbOf(gen.facts.scenes[0]!.color);
    expect(colourDistance(thumb, second)).toBeLessThan(20);
    expect(colourDistance(thumb, first)).toBeGreaterThan(60);
    const atOffset = await meanColourOfFrame(outPath, Math.round(thumbnailOffset(candidate) * gen.facts.fps));
    expect(colourDistance(thumb, atOffset)).toBeLessThan(12);
  });
});

const CONFIG: ClipConfig = ClipConfig.parse({ aspect_ratio: "9:16", resolution: 720, min_clip_seconds: 5, max_clip_seconds: 10, max_clips: 4, reframe: "center" });
const SLOW: ClipConfig = { ...CONFIG, resolution: 1080 };

describe("jobs through the pipeline", () => {
  const tokens = new Map<string, string>();
  let worker: FakeWorker;
  let source: RecordingServer;
  let media: { path: string; facts: MediaFacts };
  const engines: TestEngine[] = [];

  beforeAll(async () => {
    process.env.ENGINE_LOG_LEVEL = "error";
    media = await cachedMedia({ durationSeconds: 48, audio: "speech", bursts: [6, 20, 33], sceneChanges: [9, 18, 27, 38], seed: 151 });
    const size = (await stat(media.path)).size;
    source = await startRecordingServer((req, res) => {
      res.writeHead(200, { "content-type": "video/mp4", "content-length": String(size) });
      createReadStream(media.path).pipe(res);
    });
    worker = await startFakeWorker(tokens, await osTempDir("pipeline-uploads"));
  });

  afterAll(async () => {
    for (const engine of engines) await engine.close();
    await worker?.close();
    await source?.close();
    await removeTempDirs();
  });

  async function engineWith(runner: RecordingRunner, renderConcurrency: number): Promise<TestEngine> {
    const engine = await startTestEngine(await osTempDir("pipeline-engine"), { runner }, { callbackBase: worker.base, renderConcurrency });
    engines.push(engine);
    return engine;
  }

  async function start(engine: TestEngine, label: string, config: ClipConfig): Promise<string> {
    const jobId = newJobId(label);
    tokens.set(jobId, `tok_${jobId}_abcdefghijklmnop`);
    const res = await postJson(`${engine.base}/jobs`, startJobBody({ jobId, token: tokens.get(jobId)!, videoUrl: source.url("/talk.mp4"), config }));
    expect(res.status).toBe(202);
    return jobId;
  }

  const finished = (jobId: string) => worker.callsFor(jobId).some((c) => c.kind === "complete" || c.kind === "fail");

  async function expectCleanedUp(engine: TestEngine, jobId: string): Promise<void> {
    await waitFor(async () => !engine.engine.isRunning(jobId) && (await engine.workDirsOf(jobId)).length === 0, 15_000, "the job's cleanup");
    expect(await ffmpegChildren(jobId)).toEqual([]);
  }

  it("concurrency 2: two renders at once, never more; every clip correct, uploaded and reported in order; progress only grows", async () => {
    const runner = recordingRunner();
    const engine = await engineWith(runner, 2);
    const jobId = await start(engine, "conc", CONFIG);
    await waitFor(() => finished(jobId), 180_000, "the job to finish");
    expect(worker.callsFor(jobId, "fail")).toEqual([]);
    const report = worker.callsFor(jobId, "complete")[0]!.body as CompleteReport;
    const count = report.clips.length;
    expect(count).toBeGreaterThanOrEqual(3);
    expect(report.clips.map((c) => c.index)).toEqual([...Array(count).keys()]);

    const renders = runner.renders();
    expect(renders.map((r) => r.index).sort()).toEqual([...Array(count).keys()]);
    expect(renders.every((r) => r.exitCode === 0)).toBe(true);
    expect(maxOverlap(renders)).toBe(2);

    const clips = worker.callsFor(jobId, "clip");
    expect(clips.map((c) => c.index)).toEqual([...Array(count).keys()]);
    for (const clip of report.clips) {
      const probe = await ffprobeJson(clips[clip.index]!.file!);
      expect(Number(probe.format.duration)).toBeCloseTo(clip.end_seconds - clip.start_seconds, 0);
      expect(probe.streams.find((s) => s.codec_type === "video")).toMatchObject({ codec_name: "h264", width: 720, height: 1280 });
    }
    expect(worker.callsFor(jobId, "thumbnail").map((c) => c.index)).toEqual([...Array(count).keys()]);

    const progress = worker.callsFor(jobId, "progress").map((c) => c.body as ProgressReport);
    const values = progress.map((p) => p.progress);
    expect(values).toEqual([...values].sort((a, b) => a - b));
    const steps = progress.map((p) => p.step);
    expect(steps).toContain(`Rendering clips 1 and 2 of ${count}`);
    expect(steps.at(-1)).toBe("Uploading clips");
    await expectCleanedUp(engine, jobId);
  });

  it("uploads overlap renders: with a slow store, clip 0 is being stored while the next clips render, and renders never wait for it", async () => {
    // The overlap is made of events, not of times: clip 1's render starts once clip 0's upload has arrived,
    // and the store answers clip 0 once clip 1's render has started. A pipeline that made either wait for the
    // other would stall here; the budgets then run out and the checks below say which side waited.
    let jobId = "";
    const uploadArrived = (index: number) => worker.callsFor(jobId, "clip").some((c) => c.index === index);
    const runner = recordingRunner(async (req) => {
      if (req.args.includes("libx264") && req.outputs.some((o) => o.endsWith("clip-1.mp4"))) {
        await waitFor(() => uploadArrived(0), 60_000, "clip 0's upload").catch(() => undefined);
      }
      return req;
    });
    const renderStarted = (index: number) => {
      const render = runner.renders().find((r) => r.index === index);
      return render !== undefined && Date.now() > render.startedAt;
    };
    worker.behaviour.holdAnswer = (call) =>
      call.jobId === jobId && call.kind === "clip" && call.index === 0 ? waitFor(() => renderStarted(1), 60_000, "clip 1's render").catch(() => undefined) : undefined;
    const engine = await engineWith(runner, 1);
    try {
      jobId = await start(engine, "overlap", CONFIG);
      await waitFor(() => finished(jobId), 180_000, "the job to finish");
    } finally {
      worker.behaviour.holdAnswer = undefined;
    }
    const report = worker.callsFor(jobId, "complete")[0]?.body as CompleteReport;
    expect(report.clips.length).toBeGreaterThanOrEqual(3);
    const renders = runner.renders().sort((a, b) => a.index - b.index);
    expect(maxOverlap(renders)).toBe(1);
    const upload0 = worker.callsFor(jobId, "clip").find((c) => c.index === 0)!;
    // Clip 1 started rendering while clip 0's upload was still waiting for its answer...
    expect(renders[1]!.startedAt).toBeLessThan(upload0.answeredAt!);
    // ...and clip 0's upload began before clip 1's render ended: the two ran at the same time.
    expect(upload0.at).toBeLessThan(renders[1]!.endedAt!);
    // Uploads still go in index order, each after its own render.
    const uploads = worker.callsFor(jobId, "clip");
    expect(uploads.map((c) => c.index)).toEqual(renders.map((r) => r.index));
    for (const u of uploads) expect(u.at).toBeGreaterThanOrEqual(renders[u.index!]!.endedAt!);
    await expectCleanedUp(engine, jobId);
  });

  it("a cancel while two clips render kills both ffmpeg runs, removes the work directory and sends nothing more", async () => {
    const runner = recordingRunner();
    const engine = await engineWith(runner, 2);
    const jobId = await start(engine, "cancelpipe", SLOW);
    const runningRenders = () => runner.renders().filter((r) => r.endedAt === undefined);
    await waitFor(() => runningRenders().length === 2 || finished(jobId), 120_000, "two renders at once");
    expect(finished(jobId)).toBe(false);
    const callsBefore = worker.callsFor(jobId).filter((c) => c.kind !== "progress").length;
    expect((await postJson(`${engine.base}/jobs/${jobId}/cancel`, undefined)).status).toBe(202);
    await expectCleanedUp(engine, jobId);
    const renders = runner.renders();
    expect(renders.filter((r) => r.stopped).length).toBe(2);
    expect(renders.length).toBe(2);
    const after = worker.callsFor(jobId).filter((c) => c.kind !== "progress");
    expect(after.length).toBe(callsBefore);
    expect(after.map((c) => c.kind)).not.toContain("complete");
    expect(after.map((c) => c.kind)).not.toContain("fail");
  });

  it("a render that fails mid-pipeline fails the job once, stops the other render, starts no more and cleans up", async () => {
    // Clip 1's encode names an encoder ffmpeg does not have, once clip 0's encode is under way: a real ffmpeg failure.
    const runner = recordingRunner(async (req, events) => {
      if (!req.args.includes("libx264") || !req.outputs.some((o) => o.endsWith("clip-1.mp4"))) return req;
      const deadline = Date.now() + 30_000;
      while (!events.some((e) => e.outputs.some((o) => o.endsWith("clip-0.mp4")) && e.endedAt === undefined) && Date.now() < deadline) await sleep(20);
      await sleep(300);
      return { ...req, args: req.args.map((a) => (a === "libx264" ? "no_such_encoder_x" : a)) };
    });
    const engine = await engineWith(runner, 2);
    const jobId = await start(engine, "failpipe", SLOW);
    await waitFor(() => finished(jobId), 180_000, "the job to finish");
    await expectCleanedUp(engine, jobId);
    const fails = worker.callsFor(jobId, "fail");
    expect(fails).toHaveLength(1);
    expect((fails[0]!.body as FailReport).code).toBe("internal_error");
    expect(worker.callsFor(jobId, "complete")).toEqual([]);
    const renders = runner.renders().sort((a, b) => a.index - b.index);
    expect(renders.map((r) => r.index)).toEqual([0, 1]);
    expect(renders[1]!.exitCode).not.toBe(0);
    expect(renders[0]!.stopped).toBe(true);
    expect(worker.callsFor(jobId, "clip")).toEqual([]);
  });
});
