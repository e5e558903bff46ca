/**
 * Speech-to-text chunks cut from the measuring pass's PCM (one
 * decode of the source serves the transcript too), on real speech, the real
 * speech model and real ffmpeg, against the fake Worker's transcribe route:
 *
 * - the pass keeps its PCM only when asked, and the cut chunk is the audio
 *   ffmpeg extracts for the same span: the same length, aligned to the sample,
 *   the same sound;
 * - the Workers AI stage given the PCM runs no ffmpeg and ends with the words
 *   the extracted chunks give;
 * - where the PCM's time 0 is not the source's (audio starting after the
 *   container, a time_range's seek), chunks are extracted by ffmpeg as before;
 * - a whole job (runJob, the source downloaded from a loopback server)
 *   transcribes from the PCM, and a time_range job from ffmpeg's extractions.
 */
import { createReadStream } from "node:fs";
import { mkdtemp, readdir, readFile, stat } from "node:fs/promises";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ClipConfig, CompleteReport, type StartJob, type TranscriptWord } from "#contract";
import { cachedNarration, type Narration } from "../../../test/media/narration.ts";
import { measure, type SpeechPcm } from "../../src/analyse/measure.ts";
import { loadSpeechModel, type SpeechModel } from "../../src/analyse/speech-model.ts";
import { runJob } from "../../src/job/run.ts";
import type { FfmpegRunner } from "../../src/ffmpeg/runner.ts";
import { anyAddressPolicy } from "../../src/source/address-policy.ts";
import { runProcess } from "../../src/shared/spawn.ts";
import { wordsFromCues } from "../../src/transcript/build.ts";
import { chunkArgs, planChunks, type Span } from "../../src/transcript/chunk-plan.ts";
import { cutWavFromPcm, pcmServes } from "../../src/transcript/pcm-chunk.ts";
import { transcribeWithWorkersAi, type WorkersAiOutcome } from "../../src/transcript/workers-ai.ts";
import type { SourceInfo } from "../../src/shared/types.ts";
import { probeFile } from "../helpers/clip-quality.ts";
import { newJobId, startJobBody, testConfig } from "../helpers/engine.ts";
import { startFakeWorker, type FakeWorker } from "../helpers/fake-worker.ts";
import { CountingReporter, watchedRunner } from "../helpers/held-transcribe.ts";
import { FFMPEG, nativeRunner, osTempDir, removeTempDirs } from "../helpers/media.ts";
import { SCRIPT } from "../helpers/script.ts";
import { startRecordingServer, type RecordingServer } from "../helpers/servers.ts";

const runner = nativeRunner();
const tokens = new Map<string, string>();
let dir: string;
let worker: FakeWorker;
let narration: Narration;
let source: SourceInfo;
let model: SpeechModel;
let pcm: SpeechPcm;
let truth: TranscriptWord[];
let server: RecordingServer;

async function measured(file: string, info: SourceInfo, keepPcm: boolean, workDir: string) {
  return measure(runner, { path: file }, { demuxer: "mov", hasAudio: info.hasAudio, frames: "keyframes", speech: true }, {
    signal: new AbortController().signal,
    model,
    workDir,
    keepPcm,
    timeoutMs: 120_000,
  });
}

beforeAll(async () => {
  process.env.ENGINE_LOG_LEVEL = "error";
  dir = await osTempDir("transcript-pcm");
  worker = await startFakeWorker(tokens, dir);
  // The same talk as workers-ai-lanes.test.ts (cached once): about 3 minutes, several 30 s chunks.
  narration = await cachedNarration({ sentences: [...SCRIPT, ...SCRIPT, ...SCRIPT, ...SCRIPT], gapSeconds: 0.9 });
  source = await probeFile(runner, narration.path);
  const loaded = await loadSpeechModel();
  if (!("model" in loaded)) throw new Error(`the speech model did not load: ${loaded.unavailable}`);
  model = loaded.model;
  const kept = await measured(narration.path, source, true, await mkdtemp(path.join(dir, "pass-")));
  if (!kept.audio?.pcm) throw new Error("the pass kept no PCM");
  pcm = kept.audio.pcm;
  truth = wordsFromCues(narration.sentences.map((s) => ({ start: s.start, end: s.end, text: s.text })), narration.durationSeconds);
  const size = (await stat(narration.path)).size;
  server = await startRecordingServer((req, res) => {
    if (req.url !== "/talk.mp4") return void res.writeHead(404).end();
    res.writeHead(200, { "content-type": "video/mp4", "content-length": String(size) });
    createReadStream(narration.path).pipe(res);
  });
}, 180_000);

afterAll(async () => {
  await worker?.close();
  await server?.close();
  await removeTempDirs();
});

async function pcmFilesUnder(root: string): Promise<string[]> {
  const entries = await readdir(root, { recursive: true });
  return entries.filter((name) => name.endsWith(".s16"));
}

/** A WAV's header fields and samples (the canonical 44-byte layout, or ffmpeg's with more chunks before `data`). */
function readWav(bytes: Buffer): { format: number; channels: number; rate: number; bits: number; samples: Int16Array } {
  expect(bytes.toString("ascii", 0, 4)).toBe("RIFF");
  expect(bytes.toString("ascii", 8, 12)).toBe("WAVE");
  let at = 12;
  let fmt: { format: number; channels: number; rate: number; bits: number } | null = null;
  while (at + 8 <= bytes.length) {
    const id = bytes.toString("ascii", at, at + 4);
    const size = bytes.readUInt32LE(at + 4);
    if (id === "fmt ") fmt = { format: bytes.readUInt16LE(at + 8), channels: bytes.readUInt16LE(at + 10), rate: bytes.readUInt32LE(at + 12), bits: bytes.readUInt16LE(at + 22) };
    if (id === "data") {
      if (!fmt) throw new Error("data before fmt");
      const data = bytes.subarray(at + 8, at + 8 + size);
      const copy = Buffer.from(data);
      return { ...fmt, samples: new Int16Array(copy.buffer, copy.byteOffset, copy.length / 2) };
    }
    at += 8 + size + (size % 2);
  }
  throw new Error("no data chunk");
}

/** Normalised correlation of `a` and `b` shifted by `lag` samples, over a stretch in the middle of both. */
function correlation(a: Int16Array, b: Int16Array, lag: number): number {
  const from = 16_000;
  const to = Math.min(a.length, b.length) - 16_000;
  let ab = 0;
  let aa = 0;
  let bb = 0;
  for (let i = from; i < to; i++) {
    const x = a[i]!;
    const y = b[i + lag]!;
    ab += x * y;
    aa += x * x;
    bb += y * y;
  }
  return ab / Math.sqrt(aa * bb);
}

async function extracted(info: SourceInfo, chunk: Span, out: string): Promise<Buffer> {
  const run = await runProcess({ command: FFMPEG, args: chunkArgs(info, chunk, out), timeoutMs: 60_000 });
  expect(run.exitCode).toBe(0);
  return readFile(out);
}

describe("the measuring pass's PCM", () => {
  it("is kept only when asked, and holds the whole audio as mono 16 kHz s16le", async () => {
    expect(pcm.bytes).toBe((await stat(pcm.path)).size);
    // The talk's length in samples, give or take the audio codec's last frame.
    expect(Math.abs(pcm.bytes / 32_000 - source.durationSeconds)).toBeLessThan(0.1);
    const work = await mkdtemp(path.join(dir, "unkept-"));
    const unkept = await measured(narration.path, source, false, work);
    expect(unkept.audio?.pcm).toBeUndefined();
    expect(unkept.audio?.speechProbabilities?.length).toBeGreaterThan(0);
    expect(await readdir(work)).toEqual([]);
  });

  it("cuts chunks that are the audio ffmpeg extracts for them: the same length, aligned to the sample, the same sound", async () => {
    expect(source.audioLeadSeconds).toBe(0);
    expect(pcmServes(source, pcm)).toBe(true);
    const chunks = planChunks(source.durationSeconds, null);
    expect(chunks.length).toBeGreaterThanOrEqual(3);
    // The first, one inside starting between two milliseconds (both take the start to the millisecond, as the
    // Worker is told it), and the last.
    for (const chunk of [chunks[0]!, { start: 61.2345, end: 83.5 }, chunks.at(-1)!]) {
      const cutPath = path.join(dir, `cut-${chunk.start}.wav`);
      expect(await cutWavFromPcm(pcm, chunk, cutPath)).toBe(true);
      const cut = readWav(await readFile(cutPath));
      const ffmpeg = readWav(await extracted(source, chunk, path.join(dir, `ffmpeg-${chunk.start}.wav`)));
      expect({ format: cut.format, channels: cut.channels, rate: cut.rate, bits: cut.bits }).toEqual({ format: 1, channels: 1, rate: 16_000, bits: 16 });
      expect({ channels: ffmpeg.channels, rate: ffmpeg.rate, bits: ffmpeg.bits }).toEqual({ channels: 1, rate: 16_000, bits: 16 });
      // Within a millisecond of each other in length (ffmpeg's -t ends on its own rounding).
      expect(Math.abs(cut.samples.length - ffmpeg.samples.length)).toBeLessThanOrEqual(16);
      // Best alignment within +-2 ms: at lag 0 (or one sample off), nearly identical sound.
      let best = { lag: 0, r: -1 };
      for (let lag = -32; lag <= 32; lag++) {
        const r = correlation(cut.samples, ffmpeg.samples, lag);
        if (r > best.r) best = { lag, r };
      }
      expect(Math.abs(best.lag), `chunk at ${chunk.start} s`).toBeLessThanOrEqual(1);
      expect(best.r).toBeGreaterThan(0.99);
    }
  });

  it("cuts nothing past its end: a chunk it holds too little of is left to ffmpeg", async () => {
    const end = pcm.bytes / 32_000;
    expect(await cutWavFromPcm(pcm, { start: end - 0.05, end: end + 10 }, path.join(dir, "past.wav"))).toBe(false);
    await expect(stat(path.join(dir, "past.wav"))).rejects.toThrow();
    const from = Math.floor(end * 1000) / 1000 - 5;
    expect(await cutWavFromPcm(pcm, { start: from, end: end + 10 }, path.join(dir, "tail.wav"))).toBe(true);
    // From the millisecond asked to the PCM's last sample.
    expect(readWav(await readFile(path.join(dir, "tail.wav"))).samples.length).toBe(pcm.bytes / 2 - Math.round(from * 16_000));
  });
});

describe("the Workers AI stage with the PCM", () => {
  async function transcribeWith(info: SourceInfo, given: SpeechPcm | null): Promise<{ outcome: WorkersAiOutcome; extractions: number; seconds: number[] }> {
    const jobId = newJobId("pcm");
    const token = `token-${jobId}-abcdefghijkl`;
    tokens.set(jobId, token);
    const work = await mkdtemp(path.join(dir, "stage-"));
    const seconds: number[] = [];
    worker.behaviour.transcribe = ({ startSeconds, wav }) => {
      seconds.push(readWav(wav).samples.length / 16_000);
      return heardIn(startSeconds, wav);
    };
    let extractions = 0;
    const outcome = await transcribeWithWorkersAi({
      runner: watchedRunner({ started: () => (extractions += 1) }),
      reporter: new CountingReporter({ callbackBase: worker.base, jobId, token, attempts: 2, retryBaseMs: 20, timeoutMs: 30_000, onInactive: () => undefined }),
      source: info,
      speech: null,
      pcm: given,
      chunkPath: (i) => path.join(work, `speech-${i}.wav`),
      signal: new AbortController().signal,
      onProgress: () => undefined,
    });
    // Every chunk's WAV is gone once answered, whichever way it was made.
    expect((await readdir(work)).filter((f) => f.endsWith(".wav"))).toEqual([]);
    return { outcome, extractions, seconds: seconds.sort((a, b) => a - b) };
  }

  /** The model's answer for a chunk: the script's words heard in it. */
  function heardIn(startSeconds: number, wav: Buffer) {
    const heard = readWav(wav).samples.length / 16_000;
    return { status: 200, body: { language: "en", words: truth.filter((w) => w.end > startSeconds && w.start < startSeconds + heard) } };
  }

  it("runs no ffmpeg and ends with the words the extracted chunks give", async () => {
    const chunks = planChunks(source.durationSeconds, null);
    const fromPcm = await transcribeWith(source, pcm);
    const fromFfmpeg = await transcribeWith(source, null);
    expect(fromPcm.extractions).toBe(0);
    expect(fromFfmpeg.extractions).toBe(chunks.length);
    expect(fromPcm.outcome.kind).toBe("ok");
    expect(fromPcm.outcome).toEqual(fromFfmpeg.outcome);
    if (fromPcm.outcome.kind === "ok") expect(fromPcm.outcome.words.map((w) => w.text)).toEqual(truth.map((w) => w.text));
    // The same audio lengths went out, chunk for chunk, within a millisecond.
    expect(fromPcm.seconds).toHaveLength(chunks.length);
    fromPcm.seconds.forEach((s, i) => expect(Math.abs(s - fromFfmpeg.seconds[i]!)).toBeLessThanOrEqual(0.001));
  });

  it("extracts with ffmpeg where the PCM's time 0 is not the source's: audio starting after the container, a time_range's seek", async () => {
    const late = path.join(dir, "late-audio.mp4");
    const mux = await runProcess({
      command: FFMPEG,
      args: ["-nostdin", "-v", "error", "-y", "-i", narration.path, "-itsoffset", "0.5", "-i", narration.path, "-map", "0:v", "-map", "1:a", "-c", "copy", late],
      timeoutMs: 60_000,
    });
    expect(mux.exitCode).toBe(0);
    const lateSource = await probeFile(runner, late);
    // 0.5 s less the audio codec's priming, which the container's edit list skips.
    expect(lateSource.audioLeadSeconds).toBeGreaterThan(0.45);
    expect(lateSource.audioLeadSeconds).toBeLessThanOrEqual(0.5);
    expect(pcmServes(lateSource, pcm)).toBe(false);
    const chunks = planChunks(lateSource.durationSeconds, null);
    const lateRun = await transcribeWith(lateSource, pcm);
    expect(lateRun.extractions).toBe(chunks.length);
    expect(lateRun.outcome.kind).toBe("ok");

    expect(pcmServes({ ...source, seekSeconds: 30 }, pcm)).toBe(false);
    const { audioLeadSeconds: _unknown, ...unprobed } = source;
    expect(pcmServes(unprobed, pcm)).toBe(false);
  });

  it.each([
    { what: "a whole source transcribes from the analysis's PCM", timeRange: undefined, extracted: false },
    { what: "a time_range job extracts its chunks with ffmpeg", timeRange: { start_seconds: 40, end_seconds: 120 }, extracted: true },
  ])("a job: $what", async ({ timeRange, extracted: expectExtractions }) => {
    const jobId = newJobId("pcm-job");
    const token = `token-${jobId}-abcdefghijkl`;
    tokens.set(jobId, token);
    worker.behaviour.transcribe = ({ startSeconds, wav }) => heardIn(startSeconds, wav);
    const workRoot = await mkdtemp(path.join(dir, "job-"));
    let extractions = 0;
    /** PCM files on disk under the job's work directory when each render started. */
    const pcmAtRenders: string[][] = [];
    const watched = watchedRunner({ started: () => (extractions += 1) });
    const runner: FfmpegRunner = {
      ...watched,
      ffmpeg: async (req) => {
        if (req.args.includes("libx264")) pcmAtRenders.push(await pcmFilesUnder(workRoot));
        return watched.ffmpeg(req);
      },
    };
    const job: StartJob = {
      ...startJobBody({
        jobId,
        token,
        videoUrl: server.url("/talk.mp4"),
        config: ClipConfig.parse({ aspect_ratio: "9:16", resolution: 720, min_clip_seconds: 8, max_clip_seconds: 15, max_clips: 1, captions: "off" }),
      }),
      video_type: "podcast",
      ...(timeRange ? { time_range: timeRange } : {}),
    };
    const outcome = await runJob(
      job,
      { runner, config: testConfig(workRoot, { callbackBase: worker.base }), policy: anyAddressPolicy },
      new AbortController(),
    );
    expect(outcome, JSON.stringify(worker.callsFor(jobId, "fail")[0]?.body)).toBe("completed");
    const report = CompleteReport.parse(worker.callsFor(jobId, "complete")[0]?.body);
    expect(report.transcript?.source).toBe("workers_ai");
    const asked = worker.callsFor(jobId, "transcribe").length;
    expect(asked).toBeGreaterThan(0);
    expect(extractions).toBe(expectExtractions ? asked : 0);
    // The PCM is gone before the renders start: they get its disk.
    expect(pcmAtRenders.length).toBeGreaterThan(0);
    for (const files of pcmAtRenders) expect(files).toEqual([]);
  }, 180_000);
});
