/**
 * Faults at the engine level (SPEC section 7), with a real engine server,
 * native ffmpeg and a fake Worker: a source that stalls forever, a work disk
 * that fills up (a real 20 MB tmpfs when mounting is permitted, else the
 * test says why it cannot run here; the engine keeps 1 GiB free for clips,
 * so such a disk is refused before any byte is written), and callbacks that fail with 503 and
 * are retried. Each job must end with one report, no work directory and no
 * ffmpeg/ffprobe process left. Killing the engine mid-job is covered on the
 * real stack by test/e2e/watchdog.test.ts.
 */
import { execFileSync } from "node:child_process";
import { createReadStream } from "node:fs";
import { mkdir, readdir, stat } from "node:fs/promises";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DEFAULT_CLIP_CONFIG, type ClipConfig, type FailReport } from "#contract";
import { cachedMedia } from "../../../test/media/generate.ts";
import { startTestEngine, newJobId, postJson, startJobBody, type TestEngine } from "../helpers/engine.ts";
import { startFakeWorker, type FakeWorker } from "../helpers/fake-worker.ts";
import { osTempDir, removeTempDirs } from "../helpers/media.ts";
import { ffmpegChildren } from "../helpers/processes.ts";
import { startRecordingServer, waitFor, type RecordingServer } from "../helpers/servers.ts";

const SMALL: ClipConfig = { ...DEFAULT_CLIP_CONFIG, aspect_ratio: "1:1", resolution: 720, min_clip_seconds: 5, max_clip_seconds: 10, max_clips: 2, reframe: "center", layout: "single", captions: "off", caption_style: "bold", caption_position: "bottom" };
const TMPFS_BYTES = 20 * 1024 * 1024;

const tokens = new Map<string, string>();
const summary: { fault: string; injected: number; outcome: string }[] = [];
let worker: FakeWorker;
let source: RecordingServer;
let engine: TestEngine;
let talkPath: string;
let tmpfsDir: string | null = null;

function tryMountTmpfs(dir: string): boolean {
  try {
    execFileSync("mount", ["-t", "tmpfs", "-o", `size=${TMPFS_BYTES}`, "tmpfs", dir], { stdio: "ignore" });
    return true;
  } catch {
    return false;
  }
}

beforeAll(async () => {
  process.env.ENGINE_LOG_LEVEL = "error";
  talkPath = (await cachedMedia({ durationSeconds: 20, audio: "speech", bursts: [8], sceneChanges: [6, 13], seed: 23 })).path;
  const talkSize = (await stat(talkPath)).size;
  source = await startRecordingServer((req, res) => {
    if (req.url === "/talk.mp4") {
      res.writeHead(200, { "content-type": "video/mp4", "content-length": String(talkSize) });
      createReadStream(talkPath).pipe(res);
    } else if (req.url === "/stall.mp4") {
      // A few bytes, then nothing ever again (the connection stays open).
      res.writeHead(200, { "content-type": "video/mp4", "content-length": String(10 * 1024 * 1024) });
      res.write(Buffer.alloc(64 * 1024, 1));
    } else if (req.url === "/huge.mp4") {
      // More bytes than the work disk holds, well under the byte cap.
      const total = TMPFS_BYTES * 2;
      res.writeHead(200, { "content-type": "video/mp4", "content-length": String(total) });
      const chunk = Buffer.alloc(256 * 1024, 7);
      let sent = 0;
      const pump = (): void => {
        while (sent < total) {
          sent += chunk.length;
          if (!res.write(chunk)) return void res.once("drain", pump);
        }
        res.end();
      };
      pump();
    } else {
      res.writeHead(404).end();
    }
  });
  worker = await startFakeWorker(tokens, await osTempDir("faults-uploads"));
  engine = await startTestEngine(await osTempDir("faults-work"), {}, { callbackBase: worker.base });
  const mountPoint = path.resolve(".tmp", `faults-tmpfs-${process.pid}`);
  await mkdir(mountPoint, { recursive: true });
  if (tryMountTmpfs(mountPoint)) tmpfsDir = mountPoint;
});

afterAll(async () => {
  await engine?.close();
  await worker?.close();
  await source?.close();
  if (tmpfsDir) execFileSync("umount", [tmpfsDir]);
  await removeTempDirs();
  console.log(["\nengine faults (fault, times injected, outcome)", ...summary.map((s) => `${s.fault.padEnd(34)} ${String(s.injected).padStart(3)}  ${s.outcome}`)].join("\n"));
});

async function start(on: TestEngine, jobId: string, videoPath: string, downloadTimeoutSeconds = 60): Promise<void> {
  const token = `tok_${jobId}_0123456789abcdef`;
  tokens.set(jobId, token);
  const body = startJobBody({ jobId, token, videoUrl: source.url(videoPath), config: SMALL });
  body.limits.download_timeout_seconds = downloadTimeoutSeconds;
  expect((await postJson(`${on.base}/jobs`, body)).status).toBe(202);
}

async function endOf(on: TestEngine, jobId: string, timeoutMs: number): Promise<string> {
  await waitFor(() => worker.callsFor(jobId).some((c) => c.kind === "fail" || c.kind === "complete"), timeoutMs, `the end of ${jobId}`);
  await waitFor(async () => !on.engine.isRunning(jobId) && (await on.workDirsOf(jobId)).length === 0, 20_000, `cleanup of ${jobId}`);
  expect(await ffmpegChildren(jobId)).toEqual([]);
  const fail = worker.callsFor(jobId, "fail")[0]?.body as FailReport | undefined;
  return fail ? `failed ${fail.code}` : "completed";
}

describe("engine faults", () => {
  it("a source that stalls forever fails with source_unreachable at the stall limit, leaving nothing behind", async () => {
    const jobId = newJobId("stall");
    // Its own engine with a short stall limit; the others keep the tests' default, which a loaded machine cannot trip.
    const stalling = await startTestEngine(await osTempDir("faults-stall-work"), {}, { callbackBase: worker.base, downloadStallTimeoutMs: 5_000 });
    try {
      await start(stalling, jobId, "/stall.mp4");
      const outcome = await endOf(stalling, jobId, 60_000);
      expect(outcome).toBe("failed source_unreachable");
      expect(worker.callsFor(jobId, "probe")).toEqual([]);
      summary.push({ fault: "source stalls after 64 KiB", injected: 1, outcome });
    } finally {
      await stalling.close();
    }
  });

  it("callbacks answering 503 twice each are retried, and the job completes with each clip stored once", async () => {
    const jobId = newJobId("flaky");
    let injected = 0;
    worker.behaviour.override = ({ jobId: id, kind, count }) => {
      // A 503 from /transcribe means "no speech-to-text on this deployment", not a transient fault.
      if (id !== jobId || count > 2 || kind === "progress" || kind === "transcribe") return undefined;
      injected += 1;
      return 503;
    };
    await start(engine, jobId, "/talk.mp4");
    const outcome = await endOf(engine, jobId, 180_000);
    worker.behaviour.override = undefined;
    expect(outcome).toBe("completed");
    const clips = worker.callsFor(jobId, "clip").map((c) => c.index);
    expect(clips.length).toBeGreaterThan(0);
    expect(new Set(clips).size).toBe(clips.length);
    expect(worker.callsFor(jobId, "complete")).toHaveLength(1);
    expect(worker.callsFor(jobId, "probe")).toHaveLength(1);
    // The fake Worker counts tries per kind: two refusals each for probe, clip uploads, thumbnails and complete.
    expect(injected).toBe(8);
    summary.push({ fault: "503 on the first two tries of each", injected, outcome });
  });

  it("a work disk too small for the source fails the job cleanly with source_too_large (20 MB tmpfs)", async () => {
    // Mounting needs root; without it this machine cannot host a size-limited disk and the test says so.
    expect(tmpfsDir, "mount -t tmpfs is not permitted here").not.toBeNull();
    const small = await startTestEngine(tmpfsDir!, {}, { callbackBase: worker.base });
    try {
      const jobId = newJobId("diskfull");
      await start(small, jobId, "/huge.mp4");
      const outcome = await endOf(small, jobId, 60_000);
      expect(outcome).toBe("failed source_too_large");
      expect((worker.callsFor(jobId, "fail")[0]!.body as FailReport).message).toMatch(/disk space/);
      expect(await readdir(tmpfsDir!)).toEqual([]);
      summary.push({ fault: "work disk full (20 MB tmpfs)", injected: 1, outcome });
    } finally {
      await small.close();
    }
  });
});
