/**
 * Malicious media at the engine level (SPEC section 7): each fixture is built
 * here, served by a local source server and run as a real job (engine server,
 * native ffmpeg, a fake Worker recording callbacks). Each must end in a fail
 * report with the right SPEC code, open no local file it names (a FIFO: an
 * open for reading would release the pending writer), reach no URL it names
 * (a loopback canary counts connections), and leave no ffmpeg/ffprobe
 * process and no work directory behind. Complements probe.test.ts, which
 * covers the same tricks at the probe level.
 */
import { execFileSync } from "node:child_process";
import { open, readFile, writeFile } from "node:fs/promises";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DEFAULT_CLIP_CONFIG, type ClipConfig, type FailReport } from "#contract";
import { startTestEngine, newJobId, postJson, startJobBody, type TestEngine } from "../helpers/engine.ts";
import { startFakeWorker, type FakeWorker } from "../helpers/fake-worker.ts";
import { FFMPEG, osTempDir, removeTempDirs } from "../helpers/media.ts";
import { ffmpegChildren } from "../helpers/processes.ts";
import { startRecordingServer, waitFor, type RecordingServer } from "../helpers/servers.ts";

const CONFIG: ClipConfig = { ...DEFAULT_CLIP_CONFIG, aspect_ratio: "9:16", resolution: 720, min_clip_seconds: 5, max_clip_seconds: 10, max_clips: 1, reframe: "center", layout: "single", captions: "off", caption_style: "bold", caption_position: "bottom" };

interface Fixture {
  name: string;
  file: string;
  contentType: string;
  expected: FailReport["code"];
}

const tokens = new Map<string, string>();
const fixtures = new Map<string, Fixture>();
const outcomes: { fixture: string; code: string; fifoOpened: boolean; canaryHits: number; leftovers: number }[] = [];
let dir: string;
let fifo: string;
let fifoOpened = false;
let releaseFifo: () => Promise<void>;
let canary: RecordingServer;
let source: RecordingServer;
let worker: FakeWorker;
let engine: TestEngine;

function ffmpeg(args: string[]): void {
  execFileSync(FFMPEG, ["-nostdin", "-v", "error", "-y", ...args]);
}

/** A 4-second 160x90 clip with sound; `faststart` puts the index (moov) first. */
function tinyMp4(file: string, faststart: boolean): void {
  ffmpeg([
    "-f", "lavfi", "-i", "testsrc=size=160x90:rate=10:duration=4", "-f", "lavfi", "-i", "sine=duration=4",
    "-c:v", "libx264", "-preset", "ultrafast", "-c:a", "aac", "-shortest", ...(faststart ? ["-movflags", "+faststart"] : []), file,
  ]);
}

/** Sets the 32-bit duration of every mvhd and mdhd box (version 0) to its maximum: a header claiming about 49 days. */
function claimHugeDuration(bytes: Buffer): Buffer {
  const out = Buffer.from(bytes);
  for (const box of ["mvhd", "mdhd"]) {
    for (let at = out.indexOf(box); at >= 0; at = out.indexOf(box, at + 4)) {
      if (out[at + 4] !== 0) throw new Error(`${box} is not version 0`);
      out.writeUInt32BE(0xfffffff0, at + 20);
    }
  }
  return out;
}

async function addFixture(name: string, contents: Buffer | string, contentType: string, expected: FailReport["code"]): Promise<void> {
  const file = path.join(dir, name);
  await writeFile(file, contents);
  fixtures.set(name, { name, file, contentType, expected });
}

beforeAll(async () => {
  process.env.ENGINE_LOG_LEVEL = "error";
  dir = await osTempDir("malicious");
  // A FIFO that a playlist or concat list names: opening it for reading would complete the pending open below.
  fifo = path.join(dir, "secret.ts");
  execFileSync("mkfifo", [fifo]);
  const writer = open(fifo, "w").then((handle) => {
    fifoOpened = true;
    return handle;
  });
  releaseFifo = async () => {
    const reader = await open(fifo, "r");
    await (await writer).close();
    await reader.close();
  };
  canary = await startRecordingServer((_req, res) => res.end("segment"));

  const plain = path.join(dir, "plain.mp4");
  const faststart = path.join(dir, "faststart.mp4");
  tinyMp4(plain, false);
  tinyMp4(faststart, true);
  const plainBytes = await readFile(plain);
  const hls = ["#EXTM3U", "#EXT-X-TARGETDURATION:2", "#EXTINF:2,", fifo, "#EXTINF:2,", `file://${fifo}`, "#EXTINF:2,", canary.url("/seg.ts"), "#EXT-X-ENDLIST", ""].join("\n");
  await addFixture("playlist.avi", hls, "video/x-msvideo", "source_not_video");
  await addFixture("local-file.mp4", ["#EXTM3U", "#EXT-X-TARGETDURATION:4", "#EXTINF:4,", `file://${fifo}`, "#EXT-X-ENDLIST", ""].join("\n"), "video/mp4", "source_not_video");
  await addFixture("concat.mp4", `ffconcat version 1.0\nfile '${fifo}'\nfile '${canary.url("/part.mp4")}'\n`, "video/mp4", "source_not_video");
  // The index (moov) sits at the end, so cutting the file loses it.
  await addFixture("truncated.mp4", plainBytes.subarray(0, Math.floor(plainBytes.length * 0.6)), "video/mp4", "source_not_video");
  // Random bytes over the header and the first frames.
  const corrupt = Buffer.from(plainBytes);
  for (let i = 0; i < Math.min(4096, corrupt.length); i++) corrupt[i] = (i * 7919 + 13) & 0xff;
  await addFixture("corrupt.mp4", corrupt, "video/mp4", "source_not_video");
  await addFixture("endless.mp4", claimHugeDuration(await readFile(faststart)), "video/mp4", "source_too_long");
  const audio = path.join(dir, "audio.m4a");
  ffmpeg(["-f", "lavfi", "-i", "sine=duration=3", "-c:a", "aac", audio]);
  await addFixture("audio-only.mp4", await readFile(audio), "video/mp4", "source_not_video");
  await addFixture("empty.mp4", Buffer.alloc(0), "video/mp4", "source_not_video");

  source = await startRecordingServer((req, res) => {
    const fixture = fixtures.get((req.url ?? "").slice(1));
    if (!fixture) return void res.writeHead(404).end();
    void readFile(fixture.file).then((bytes) => res.writeHead(200, { "content-type": fixture.contentType, "content-length": String(bytes.length) }).end(bytes));
  });
  worker = await startFakeWorker(tokens, await osTempDir("malicious-uploads"));
  engine = await startTestEngine(await osTempDir("malicious-work"), {}, { callbackBase: worker.base });
});

afterAll(async () => {
  await engine?.close();
  await worker?.close();
  await source?.close();
  await canary?.close();
  await releaseFifo?.();
  await removeTempDirs();
  const lines = outcomes.map((o) => `${o.fixture.padEnd(16)} ${o.code.padEnd(18)} fifo opened: ${o.fifoOpened}  canary hits: ${o.canaryHits}  leftovers: ${o.leftovers}`);
  console.log(["\nmalicious media (fixture, failure code, local file opened, canary hits, leftover work dirs + processes)", ...lines].join("\n"));
});

async function runJob(name: string): Promise<FailReport> {
  const jobId = newJobId(name.replace(/[^A-Za-z]/g, "").slice(0, 8));
  const token = `tok_${jobId}_0123456789abcdef`;
  tokens.set(jobId, token);
  const started = await postJson(`${engine.base}/jobs`, startJobBody({ jobId, token, videoUrl: source.url(`/${name}`), config: CONFIG }));
  expect(started.status).toBe(202);
  await waitFor(() => worker.callsFor(jobId).some((c) => c.kind === "fail" || c.kind === "complete"), 60_000, `the end of ${name}`);
  await waitFor(async () => !engine.engine.isRunning(jobId) && (await engine.workDirsOf(jobId)).length === 0, 20_000, `cleanup after ${name}`);
  expect(worker.callsFor(jobId, "complete")).toEqual([]);
  expect(worker.callsFor(jobId, "clip")).toEqual([]);
  const fail = worker.callsFor(jobId, "fail")[0]!.body as FailReport;
  const leftovers = (await engine.workDirsOf(jobId)).length + (await ffmpegChildren(jobId)).length;
  outcomes.push({ fixture: name, code: fail.code, fifoOpened, canaryHits: canary.connections, leftovers });
  return fail;
}

describe("malicious media, run as real jobs", () => {
  for (const name of ["playlist.avi", "local-file.mp4", "concat.mp4", "truncated.mp4", "corrupt.mp4", "endless.mp4", "audio-only.mp4", "empty.mp4"]) {
    it(`${name}: fails with its SPEC code, opens nothing it names, leaves nothing behind`, async () => {
      const fixture = fixtures.get(name)!;
      const fail = await runJob(name);
      expect(fail.code).toBe(fixture.expected);
      expect(fifoOpened).toBe(false);
      expect(canary.connections).toBe(0);
      expect(await ffmpegChildren()).toEqual([]);
    });
  }
});
