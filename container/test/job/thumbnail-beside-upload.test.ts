/**
 * A clip's thumbnail is made while the clip itself uploads: after
 * the last render, the clip's bytes go to the Worker at once instead of
 * waiting for its thumbnail's ffmpeg run. Shown with events: the thumbnail
 * run of every clip is held until the Worker has received that clip's video.
 * Had the thumbnail been made before the clip's upload began (in the render,
 * as before), nothing would ever release it and the job would not complete.
 */
import { createReadStream } from "node:fs";
import { readFile, stat } from "node:fs/promises";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ClipConfig, CompleteReport, type StartJob } from "#contract";
import { cachedMedia } from "../../../test/media/generate.ts";
import type { FfmpegRunner } from "../../src/ffmpeg/runner.ts";
import { runJob } from "../../src/job/run.ts";
import { anyAddressPolicy } from "../../src/source/address-policy.ts";
import { newJobId, testConfig } from "../helpers/engine.ts";
import { startFakeWorker, type FakeWorker } from "../helpers/fake-worker.ts";
import { nativeRunner, osTempDir, removeTempDirs } from "../helpers/media.ts";
import { startRecordingServer, waitFor, type RecordingServer } from "../helpers/servers.ts";

const MIXED = { durationSeconds: 90, bursts: [17, 44, 71], sceneChanges: [14, 31, 47.5, 62, 76], seed: 11 };
const THUMBNAIL = /clip-(\d+)\.jpg$/;
const tokens = new Map<string, string>();
let worker: FakeWorker;
let server: RecordingServer;
let source: string;

beforeAll(async () => {
  process.env.ENGINE_LOG_LEVEL = "error";
  source = (await cachedMedia(MIXED, ".tmp/media")).path;
  const size = (await stat(source)).size;
  server = await startRecordingServer((req, res) => {
    if (req.url !== "/source.mp4") return void res.writeHead(404).end();
    res.writeHead(200, { "content-type": "video/mp4", "content-length": String(size) });
    createReadStream(source).pipe(res);
  });
  worker = await startFakeWorker(tokens, await osTempDir("thumbnail-uploads"));
}, 120_000);

afterAll(async () => {
  await worker?.close();
  await server?.close();
  await removeTempDirs();
});

describe("a clip's thumbnail", () => {
  it("is made while the clip's video uploads, and still reaches the Worker with the clip", async () => {
    const jobId = newJobId("thumbside");
    const token = `token-${jobId}-abcdefghijkl`;
    tokens.set(jobId, token);
    const held: number[] = [];
    const real = nativeRunner();
    // Each thumbnail run waits until the Worker holds its clip's video (the budget only turns a hang into a failure).
    const runner: FfmpegRunner = {
      backend: real.backend,
      maxSourceBytes: real.maxSourceBytes,
      ffprobe: (req) => real.ffprobe(req),
      ffmpeg: async (req) => {
        const index = req.outputs.map((o) => THUMBNAIL.exec(path.basename(o))).find((m) => m !== null)?.[1];
        if (index !== undefined) {
          held.push(Number(index));
          await waitFor(() => worker.callsFor(jobId, "clip").some((c) => c.index === Number(index)), 120_000, `clip ${index}'s video at the Worker`);
        }
        return real.ffmpeg(req);
      },
    };
    const job: StartJob = {
      job_id: jobId,
      token,
      video_url: server.url("/source.mp4"),
      video_type: "general",
      config: ClipConfig.parse({ aspect_ratio: "9:16", resolution: 720, min_clip_seconds: 10, max_clip_seconds: 15, max_clips: 2, captions: "off" }),
      limits: { max_source_bytes: 1e9, max_source_seconds: 3600, download_timeout_seconds: 120 },
    };
    const outcome = await runJob(job, { runner, config: testConfig(await osTempDir("thumbnail-work"), { callbackBase: worker.base, renderConcurrency: 2 }), policy: anyAddressPolicy }, new AbortController());
    expect(outcome, JSON.stringify(worker.callsFor(jobId, "fail")[0]?.body)).toBe("completed");
    const report = CompleteReport.parse(worker.callsFor(jobId, "complete")[0]?.body);
    expect(report.clips.length).toBe(2);
    expect(held.sort()).toEqual([0, 1]);
    for (const clip of report.clips) {
      const thumbnail = worker.callsFor(jobId, "thumbnail").find((c) => c.index === clip.index);
      expect(thumbnail?.bytes).toBeGreaterThan(0);
      // A JPEG (the fake Worker keeps what arrived).
      const bytes = await readFile(thumbnail!.file!);
      expect(bytes.subarray(0, 3)).toEqual(Buffer.from([0xff, 0xd8, 0xff]));
    }
  }, 300_000);
});
