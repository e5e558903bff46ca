/**
 * The engine under bench: the production bundle (scripts/build-engine.ts ->
 * container/dist/server.mjs) as its own Node process, a fake Worker receiving
 * its callbacks and uploads, and a loopback server for the source. Jobs go
 * through POST /jobs exactly as the Worker sends them, one at a time.
 */
import { randomBytes } from "node:crypto";
import { createReadStream } from "node:fs";
import { stat } from "node:fs/promises";
import http from "node:http";
import os from "node:os";
import type { AddressInfo } from "node:net";
import path from "node:path";
import { ENGINE_SIGNATURE_HEADER, importSigningKey, signEngineRequest, type ClipConfig, type CompleteReport, type StartJob, type VideoType } from "#contract";
import { startFakeWorker, type FakeWorker } from "../../container/test/helpers/fake-worker.ts";
import { newEngineKeys } from "../../scripts/local-stack/engine-keys.ts";
import { PROJECT_ROOT, TSX_BIN } from "../../scripts/local-stack/paths.ts";
import { runToCompletion, startProcess, type ManagedProcess } from "../../scripts/local-stack/processes.ts";
import { processTreeCpuSeconds } from "./cpu.ts";
import { peakRssMb, sampleFfmpegChildren } from "./memory.ts";

export interface JobFigures {
  jobId: string;
  report: CompleteReport;
  /** POST /jobs to the complete callback. */
  jobSeconds: number;
  /** "Analyzing" step to the first "Rendering" step (analysis, cut refinement, transcript). */
  analysisSeconds: number;
  /** First "Rendering" step to the complete callback (renders, thumbnails, uploads). */
  renderSeconds: number;
  /** "Analyzing" step to complete. */
  processingSeconds: number;
  /** CPU seconds of the engine process and its ffmpeg runs during the job. */
  cpuSeconds: number;
  /** The clips as the fake Worker stored them, by index. */
  clipFiles: string[];
  ffmpegLargestPeakMb: number;
  ffmpegConcurrentPeakMb: number;
  ffmpegProcesses: number;
  /** 1-minute load average when the job ended. */
  loadAverage: number;
}

export interface EngineHarness {
  enginePid: number;
  runJob(sourcePath: string, videoType: VideoType, config: ClipConfig): Promise<JobFigures>;
  serverPeakRssMb(): Promise<number>;
  close(): Promise<void>;
}

async function freePort(): Promise<number> {
  const server = http.createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const port = (server.address() as AddressInfo).port;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

/** Serves the current source at /source.mp4 (the engine downloads it like any direct link). */
async function serveFiles(current: () => string): Promise<{ url: string; close(): Promise<void> }> {
  const server = http.createServer((req, res) => {
    if (req.url !== "/source.mp4") return void res.writeHead(404).end();
    const file = current();
    void stat(file).then((info) => {
      res.writeHead(200, { "content-type": "video/mp4", "content-length": info.size });
      createReadStream(file).pipe(res);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/source.mp4`,
    close: () => new Promise<void>((resolve) => (server.closeAllConnections(), server.close(() => resolve()))),
  };
}

export async function waitFor<T>(what: string, check: () => T | undefined | Promise<T | undefined>, timeoutMs: number): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    const value = await check();
    if (value !== undefined) return value;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error(`timed out waiting for ${what}`);
}

export async function startEngineHarness(work: string, env: NodeJS.ProcessEnv): Promise<EngineHarness> {
  const built = await runToCompletion({
    name: "build",
    command: TSX_BIN,
    args: [path.join(PROJECT_ROOT, "scripts", "build-engine.ts")],
    cwd: PROJECT_ROOT,
    env: process.env,
    echo: "build",
  });
  if (built !== 0) throw new Error("building the engine bundle failed");

  // The bench is the Worker here: it signs StartJob with the private half, the engine verifies with the public one.
  const keys = newEngineKeys();
  const signingKey = await importSigningKey(keys.ENGINE_SIGNING_KEY);
  const tokens = new Map<string, string>();
  const worker: FakeWorker = await startFakeWorker(tokens, work);
  let currentSource = "";
  const served = await serveFiles(() => currentSource);
  const port = await freePort();
  const engine: ManagedProcess = startProcess({
    name: "engine",
    command: process.execPath,
    args: [path.join(PROJECT_ROOT, "container", "dist", "server.mjs")],
    echo: "engine",
    cwd: PROJECT_ROOT,
    env: {
      ...process.env,
      ...env,
      PORT: String(port),
      HOST: "127.0.0.1",
      WORK_DIR: path.join(work, "engine"),
      ENGINE_FFMPEG_BACKEND: "native",
      ENGINE_VERIFY_KEY: keys.ENGINE_VERIFY_KEY,
      CALLBACK_BASE: worker.base,
      ALLOW_PRIVATE_SOURCES: "true",
    },
  });
  const engineUrl = `http://127.0.0.1:${port}`;
  // An interrupted bench must not leave the engine (its own process group) running.
  for (const signal of ["SIGINT", "SIGTERM"] as const) {
    process.once(signal, () => void engine.stop(2000).finally(() => process.exit(130)));
  }
  const close = async () => {
    await engine.stop();
    await served.close();
    await worker.close();
  };
  try {
    await waitFor("the engine's /health", async () => ((await fetch(`${engineUrl}/health`).catch(() => null))?.ok ? true : undefined), 30_000);
  } catch (error) {
    await close();
    throw error;
  }
  const enginePid = engine.pid;

  async function runJob(sourcePath: string, videoType: VideoType, config: ClipConfig): Promise<JobFigures> {
    currentSource = sourcePath;
    const jobId = `job_${randomBytes(12).toString("hex")}`;
    const token = randomBytes(24).toString("hex");
    tokens.set(jobId, token);
    const sampler = sampleFfmpegChildren(enginePid);
    const job: StartJob = {
      job_id: jobId,
      token,
      video_url: served.url,
      video_type: videoType,
      config,
      limits: { max_source_bytes: 4 * 1024 ** 3, max_source_seconds: 3 * 3600, download_timeout_seconds: 1800 },
    };
    const cpuBefore = processTreeCpuSeconds(enginePid);
    const jobStart = Date.now();
    const body = JSON.stringify(job);
    const signature = await signEngineRequest(signingKey, { method: "POST", path: "/jobs", body });
    const accepted = await fetch(`${engineUrl}/jobs`, {
      method: "POST",
      headers: { "content-type": "application/json", [ENGINE_SIGNATURE_HEADER]: signature },
      body,
    });
    if (accepted.status !== 202) throw new Error(`POST /jobs answered ${accepted.status}: ${await accepted.text()}`);
    const finished = await waitFor("the job to finish", () => worker.callsFor(jobId).find((c) => c.kind === "complete" || c.kind === "fail"), 7_200_000);
    const loadAverage = os.loadavg()[0] ?? 0;
    // The engine reaps its ffmpeg runs before it sends complete: their CPU is in its children's count.
    const cpuSeconds = processTreeCpuSeconds(enginePid) - cpuBefore;
    const children = await sampler.stop();
    if (finished.kind === "fail") throw new Error(`the job failed: ${JSON.stringify(finished.body)}`);
    const report = finished.body as CompleteReport;
    const steps = worker.callsFor(jobId, "progress").map((c) => ({ at: c.at, step: (c.body as { step: string }).step }));
    const firstAt = (prefix: string) => steps.find((s) => s.step.startsWith(prefix))?.at;
    const analysisStart = firstAt("Analyzing") ?? jobStart;
    const renderStart = firstAt("Rendering") ?? finished.at;
    const clipFiles: string[] = [];
    for (const call of worker.callsFor(jobId, "clip")) clipFiles[call.index!] = call.file!;
    return {
      jobId,
      report,
      jobSeconds: (finished.at - jobStart) / 1000,
      analysisSeconds: (renderStart - analysisStart) / 1000,
      renderSeconds: (finished.at - renderStart) / 1000,
      processingSeconds: (finished.at - analysisStart) / 1000,
      cpuSeconds,
      clipFiles,
      ffmpegLargestPeakMb: children.largestMb,
      ffmpegConcurrentPeakMb: children.concurrentMb,
      ffmpegProcesses: children.processes,
      loadAverage,
    };
  }

  return { enginePid, runJob, serverPeakRssMb: () => peakRssMb(enginePid), close };
}
