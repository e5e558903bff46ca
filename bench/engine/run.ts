/**
 * `npm run bench:engine`: one real job through the clip engine against the
 * ffmpeg floor, on a generated 10-minute 1080p30 source (cached in .tmp/bench)
 * cut into 5 vertical 1080x1920 clips of about 30 s.
 *
 * The engine is the production bundle (scripts/build-engine.ts ->
 * container/dist/server.mjs) run as its own Node process, so its memory is
 * measured alone. The job goes through POST /jobs exactly as the Worker sends
 * it; the source is served over loopback and a fake Worker receives the
 * callbacks and uploads. Then the floor (bench/engine/floor.ts) runs the bare
 * ffmpeg commands for the same source and the same clip spans.
 *
 * Prints: job wall time (POST /jobs to the complete callback), engine
 * processing time (analysis start to complete), floor, ratios, the analysis
 * realtime factor, and peak memory of the server and of its ffmpeg children.
 * Writes the figures to bench/results/engine-<time>.json.
 */
import { randomBytes } from "node:crypto";
import { createReadStream } from "node:fs";
import { mkdir, rm, stat, writeFile } from "node:fs/promises";
import http from "node:http";
import os from "node:os";
import type { AddressInfo } from "node:net";
import path from "node:path";
import { runToCompletion, startProcess } from "../../scripts/local-stack/processes.ts";
import { PROJECT_ROOT, TSX_BIN } from "../../scripts/local-stack/paths.ts";
import { ClipConfig, ENGINE_SIGNATURE_HEADER, signEngineRequest, type CompleteReport, type StartJob } from "#contract";

/** Signs StartJob for the bench engine, as the Worker does with ENGINE_SECRET. */
const BENCH_ENGINE_SECRET = randomBytes(32).toString("base64");
import { startFakeWorker } from "../../container/test/helpers/fake-worker.ts";
import { measureFloor } from "./floor.ts";
import { peakRssMb, sampleFfmpegChildren } from "./memory.ts";
import { selectedBenchSource } from "./source.ts";

const CONFIG = ClipConfig.parse({ aspect_ratio: "9:16", resolution: 1080, min_clip_seconds: 25, max_clip_seconds: 35, max_clips: 5, reframe: "center" });
const VIDEO_TYPE = "general";
const WORK = path.join(PROJECT_ROOT, ".tmp", "bench", "run");

function round(value: number, digits = 1): number {
  return Math.round(value * 10 ** digits) / 10 ** digits;
}

async function freePort(): Promise<number> {
  const server = http.createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const port = (server.address() as AddressInfo).port;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

/** Serves one file at /source.mp4 (the engine downloads it like any direct link). */
async function serveFile(file: string): Promise<{ url: string; close(): Promise<void> }> {
  const size = (await stat(file)).size;
  const server = http.createServer((req, res) => {
    if (req.url !== "/source.mp4") return void res.writeHead(404).end();
    res.writeHead(200, { "content-type": "video/mp4", "content-length": size });
    createReadStream(file).pipe(res);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/source.mp4`,
    close: () => new Promise<void>((resolve) => (server.closeAllConnections(), server.close(() => resolve()))),
  };
}

async function waitFor<T>(what: string, check: () => T | undefined | Promise<T | undefined>, timeoutMs: number): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    const value = await check();
    if (value !== undefined) return value;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error(`timed out waiting for ${what}`);
}

async function main(): Promise<void> {
  console.log("bench:engine: preparing the 10-minute 1080p30 source (generated once, then cached in .tmp/bench)...");
  const generationStart = performance.now();
  const { path: sourcePath, facts } = await selectedBenchSource();
  const generationSeconds = (performance.now() - generationStart) / 1000;
  console.log(`source: ${sourcePath} (${round((await stat(sourcePath)).size / 1e6)} MB, ready in ${round(generationSeconds)} s)`);

  const built = await runToCompletion({
    name: "build",
    command: TSX_BIN,
    args: [path.join(PROJECT_ROOT, "scripts", "build-engine.ts")],
    cwd: PROJECT_ROOT,
    env: process.env,
    echo: "build",
  });
  if (built !== 0) throw new Error("building the engine bundle failed");

  await rm(WORK, { recursive: true, force: true });
  await mkdir(WORK, { recursive: true });
  const jobId = `job_${randomBytes(12).toString("hex")}`;
  const token = randomBytes(24).toString("hex");
  const worker = await startFakeWorker(new Map([[jobId, token]]), WORK);
  const served = await serveFile(sourcePath);
  const port = await freePort();
  const engine = startProcess({
    name: "engine",
    command: process.execPath,
    args: [path.join(PROJECT_ROOT, "container", "dist", "server.mjs")],
    echo: "engine",
    cwd: PROJECT_ROOT,
    env: {
      ...process.env,
      PORT: String(port),
      HOST: "127.0.0.1",
      WORK_DIR: path.join(WORK, "engine"),
      ENGINE_FFMPEG_BACKEND: "native",
      ENGINE_SECRET: BENCH_ENGINE_SECRET,
      CALLBACK_BASE: worker.base,
      ALLOW_PRIVATE_SOURCES: "true",
    },
  });
  const engineUrl = `http://127.0.0.1:${port}`;
  // An interrupted bench must not leave the engine (its own process group) running.
  for (const signal of ["SIGINT", "SIGTERM"] as const) {
    process.once(signal, () => void engine.stop(2000).finally(() => process.exit(130)));
  }
  try {
    await waitFor("the engine's /health", async () => ((await fetch(`${engineUrl}/health`).catch(() => null))?.ok ? true : undefined), 30_000);
    const enginePid = engine.pid;
    const sampler = sampleFfmpegChildren(enginePid);

    const job: StartJob = {
      job_id: jobId,
      token,
      video_url: served.url,
      video_type: VIDEO_TYPE,
      config: CONFIG,
      limits: { max_source_bytes: 4 * 1024 ** 3, max_source_seconds: 3 * 3600, download_timeout_seconds: 600 },
    };
    const jobStart = Date.now();
    const body = JSON.stringify(job);
    const signature = await signEngineRequest(BENCH_ENGINE_SECRET, { method: "POST", path: "/jobs", body });
    const accepted = await fetch(`${engineUrl}/jobs`, {
      method: "POST",
      headers: { "content-type": "application/json", [ENGINE_SIGNATURE_HEADER]: signature },
      body,
    });
    if (accepted.status !== 202) throw new Error(`POST /jobs answered ${accepted.status}: ${await accepted.text()}`);
    const finished = await waitFor(
      "the job to finish",
      () => worker.callsFor(jobId).find((c) => c.kind === "complete" || c.kind === "fail"),
      3_600_000,
    );
    const jobSeconds = (finished.at - jobStart) / 1000;
    const loadDuringJob = os.loadavg()[0] ?? 0;
    const children = await sampler.stop();
    const serverPeakMb = await peakRssMb(enginePid);
    if (finished.kind === "fail") throw new Error(`the job failed: ${JSON.stringify(finished.body)}`);
    const report = finished.body as CompleteReport;

    const steps = worker.callsFor(jobId, "progress").map((c) => ({ at: c.at, step: (c.body as { step: string }).step }));
    const firstAt = (prefix: string) => steps.find((s) => s.step.startsWith(prefix))?.at;
    const analysisStart = firstAt("Analyzing") ?? jobStart;
    const renderStart = firstAt("Rendering") ?? finished.at;
    const analysisSeconds = (renderStart - analysisStart) / 1000;
    const processingSeconds = (finished.at - analysisStart) / 1000;

    console.log("floor: the same analysis commands and clip encodes with plain ffmpeg...");
    const floor = await measureFloor(sourcePath, facts, report.clips.map((c) => ({ start: c.start_seconds, end: c.end_seconds })), path.join(WORK, "floor"));

    const figures = {
      source: { duration_seconds: facts.durationSeconds, width: facts.width, height: facts.height, fps: facts.fps },
      clips: report.clips.map((c) => ({ start: round(c.start_seconds, 2), end: round(c.end_seconds, 2), seconds: round(c.end_seconds - c.start_seconds, 2), width: c.width, height: c.height, score: c.score, reasons: c.reasons.join(",") })),
      job_wall_seconds: round(jobSeconds),
      engine_processing_seconds: round(processingSeconds),
      engine_analysis_seconds: round(analysisSeconds, 2),
      floor_seconds: round(floor.totalSeconds),
      floor_analysis_seconds: round(floor.analysisSeconds, 2),
      floor_encode_seconds: floor.encodeSeconds.map((s) => round(s)),
      ratio_job_to_floor: round(jobSeconds / floor.totalSeconds, 3),
      ratio_processing_to_floor: round(processingSeconds / floor.totalSeconds, 3),
      analysis_realtime_factor_engine: round(facts.durationSeconds / analysisSeconds),
      analysis_realtime_factor_floor: round(facts.durationSeconds / floor.analysisSeconds),
      server_peak_rss_mb: round(serverPeakMb),
      ffmpeg_largest_peak_rss_mb: round(children.largestMb),
      ffmpeg_concurrent_peak_rss_mb: round(children.concurrentMb),
      ffmpeg_processes: children.processes,
      bench_process_peak_rss_mb: round(process.resourceUsage().maxRSS / 1024),
      load_average_1m_after_job: round(loadDuringJob, 2),
      load_average_1m_at_end: round(os.loadavg()[0] ?? 0, 2),
      cpus: os.cpus().length,
      targets: { ratio_max: 1.15, analysis_realtime_min: 50, server_peak_mb_max: 300 },
    };
    console.log("");
    console.table(figures.clips);
    console.log(`job wall time (POST /jobs -> complete):    ${figures.job_wall_seconds} s`);
    console.log(`engine processing (analysis -> complete):  ${figures.engine_processing_seconds} s`);
    console.log(`ffmpeg floor (analysis + 5 encodes):       ${figures.floor_seconds} s  (analysis ${figures.floor_analysis_seconds} s, encodes ${figures.floor_encode_seconds.join(" + ")} s)`);
    console.log(`ratio job / floor:                         ${figures.ratio_job_to_floor}  (target <= 1.15)`);
    console.log(`ratio processing / floor:                  ${figures.ratio_processing_to_floor}`);
    console.log(`analysis realtime factor (engine step):    ${figures.analysis_realtime_factor_engine}x  (floor commands ${figures.analysis_realtime_factor_floor}x; target >= 50x)`);
    console.log(`server peak RSS:                           ${figures.server_peak_rss_mb} MB  (target < 300 MB)`);
    console.log(`ffmpeg peak RSS: largest ${figures.ffmpeg_largest_peak_rss_mb} MB, concurrent ${figures.ffmpeg_concurrent_peak_rss_mb} MB over ${figures.ffmpeg_processes} processes`);
    const resultsDir = path.join(PROJECT_ROOT, "bench", "results");
    await mkdir(resultsDir, { recursive: true });
    const file = path.join(resultsDir, `engine-${new Date().toISOString().replace(/[:.]/g, "-")}.json`);
    await writeFile(file, JSON.stringify(figures, null, 2));
    console.log(`machine: ${figures.cpus} cores, 1-minute load average ${figures.load_average_1m_after_job} after the job, ${figures.load_average_1m_at_end} after the floor`);
    console.log(`figures written to ${path.relative(PROJECT_ROOT, file)}`);
  } finally {
    await engine.stop();
    await served.close();
    await worker.close();
    await rm(WORK, { recursive: true, force: true });
  }
}

main().catch((error: unknown) => {
  console.error(error instanceof Error ? error.message : error);
  process.exit(1);
});
