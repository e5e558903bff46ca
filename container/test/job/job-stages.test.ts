/**
 * A job's stage timings, on a real job against the fake Worker:
 * the complete report hands back StartJob's timeline and lists every stage
 * (download, probe, analysis, transcript, each render and upload) in the
 * order they can happen. The source arrives in two parts, the second only
 * once the analysis has measured part of the first (its speech input is on
 * disk): the analysis starts before the download ends.
 */
import { open, readdir, stat } from "node:fs/promises";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ClipConfig, CompleteReport, type StageTiming, type StartJob } from "#contract";
import { cachedMedia } from "../../../test/media/generate.ts";
import { runJob } from "../../src/job/run.ts";
import { anyAddressPolicy } from "../../src/source/address-policy.ts";
import { newJobId, testConfig } from "../helpers/engine.ts";
import { startFakeWorker, type FakeWorker } from "../helpers/fake-worker.ts";
import { nativeRunner, osTempDir, removeTempDirs } from "../helpers/media.ts";
import { startRecordingServer, waitFor, type RecordingServer } from "../helpers/servers.ts";

const runner = nativeRunner();
const tokens = new Map<string, string>();
/** The analyse tests' mixed source, generated once for all of them. */
const MIXED = { durationSeconds: 90, bursts: [17, 44, 71], sceneChanges: [14, 31, 47.5, 62, 76], seed: 11 };
let worker: FakeWorker;
let server: RecordingServer;
let workRoot: string;
let source: string;

/** The streamed analysis of `jobId` has written speech input: it is measuring the source. */
async function measuring(jobId: string): Promise<boolean> {
  for (const name of await readdir(workRoot).catch(() => [] as string[])) {
    if (!name.startsWith(jobId)) continue;
    const early = path.join(workRoot, name, "early");
    for (const file of await readdir(early).catch(() => [] as string[])) {
      if (!file.startsWith("analysis-speech-")) continue;
      if ((await stat(path.join(early, file)).then((s) => s.size, () => 0)) > 0) return true;
    }
  }
  return false;
}

beforeAll(async () => {
  process.env.ENGINE_LOG_LEVEL = "error";
  source = (await cachedMedia(MIXED, ".tmp/media")).path;
  const size = (await stat(source)).size;
  server = await startRecordingServer((req, res) => {
    const jobId = /^\/([^/]+)\/source\.mp4$/.exec(req.url ?? "")?.[1];
    if (!jobId) return void res.writeHead(404).end();
    res.writeHead(200, { "content-type": "video/mp4", "content-length": String(size) });
    void (async () => {
      const file = await open(source, "r");
      try {
        const first = Math.floor(size * 0.6);
        const head = Buffer.alloc(first);
        await file.read(head, 0, first, 0);
        res.write(head);
        // The rest once the engine's analysis is reading the first part.
        await waitFor(() => measuring(jobId), 60_000, "the streamed analysis");
        const rest = Buffer.alloc(size - first);
        await file.read(rest, 0, rest.length, first);
        res.end(rest);
      } finally {
        await file.close();
      }
    })();
  });
  workRoot = await osTempDir("stages-work");
  worker = await startFakeWorker(tokens, await osTempDir("stages-uploads"));
}, 120_000);

afterAll(async () => {
  await worker?.close();
  await server?.close();
  await removeTempDirs();
});

describe("stage timings of a job", () => {
  it("are in the complete report, with StartJob's timeline, every stage present and in order; the analysis starts before the download ends", async () => {
    const jobId = newJobId("stages");
    const token = `token-${jobId}-abcdefghijkl`;
    tokens.set(jobId, token);
    const timeline = { submitted_at: Date.now() - 500, dispatched_at: Date.now() - 100 };
    const job: StartJob = {
      job_id: jobId,
      token,
      video_url: server.url(`/${jobId}/source.mp4`),
      video_type: "general",
      config: ClipConfig.parse({ aspect_ratio: "9:16", resolution: 720, min_clip_seconds: 10, max_clip_seconds: 15, max_clips: 2, captions: "off" }),
      limits: { max_source_bytes: 1e9, max_source_seconds: 3600, download_timeout_seconds: 120 },
      timeline,
    };
    const before = Date.now();
    const outcome = await runJob(job, { runner, config: testConfig(workRoot, { callbackBase: worker.base, renderConcurrency: 2 }), policy: anyAddressPolicy }, new AbortController());
    expect(outcome, JSON.stringify(worker.callsFor(jobId, "fail")[0]?.body)).toBe("completed");
    const report = CompleteReport.parse(worker.callsFor(jobId, "complete")[0]?.body);
    const timings = report.timings!;
    expect(timings.timeline).toEqual(timeline);
    expect(timings.engine_started_at).toBeGreaterThanOrEqual(before);

    const clips = report.clips.length;
    expect(clips).toBeGreaterThanOrEqual(1);
    const names = timings.stages.map((s) => s.stage);
    const expected = ["download", "probe", "analysis", "transcript", "judge", "brand", ...Array.from({ length: clips }, (_, i) => [`render ${i}`, `upload ${i}`]).flat()];
    expect([...names].sort()).toEqual([...expected].sort());
    const at = (stage: string): StageTiming => timings.stages.find((s) => s.stage === stage)!;
    for (const s of timings.stages) expect(s.end_ms, s.stage).toBeGreaterThanOrEqual(s.start_ms);
    expect(at("probe").start_ms).toBeGreaterThanOrEqual(at("download").end_ms);
    // Measured while the source arrived: the analysis began before the last byte and ended after the probe.
    expect(at("analysis").start_ms).toBeLessThan(at("download").end_ms);
    expect(at("analysis").end_ms).toBeGreaterThanOrEqual(at("probe").end_ms);
    expect(at("transcript").start_ms).toBeGreaterThanOrEqual(at("analysis").end_ms);
    expect(at("brand").start_ms).toBeGreaterThanOrEqual(at("transcript").end_ms);
    for (let i = 0; i < clips; i++) {
      expect(at(`render ${i}`).start_ms).toBeGreaterThanOrEqual(at("brand").end_ms);
      expect(at(`upload ${i}`).start_ms).toBeGreaterThanOrEqual(at(`render ${i}`).end_ms);
      if (i > 0) expect(at(`upload ${i}`).start_ms).toBeGreaterThanOrEqual(at(`upload ${i - 1}`).end_ms);
    }
    // The report goes out after the last upload.
    const lastUpload = Math.max(...Array.from({ length: clips }, (_, i) => at(`upload ${i}`).end_ms));
    expect(worker.callsFor(jobId, "complete")[0]!.at - timings.engine_started_at).toBeGreaterThanOrEqual(lastUpload);
  }, 300_000);
});
