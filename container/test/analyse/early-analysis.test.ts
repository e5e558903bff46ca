/**
 * The analysis while the source downloads (analyse/early.ts): a source
 * written to disk piece by piece, each piece only once the streamed pass has
 * read into the one before (so the pass really reads a growing file), must
 * give exactly what the analysis of the finished file gives: the same
 * candidates, speech spans, quiet stretches and keyframes. Containers that
 * stream (faststart and fragmented MP4, Matroska, MPEG-TS) start measuring
 * before the last byte; an MP4 with its index at the end waits for the whole
 * file and still gives the same result.
 */
import { copyFile, open, rm, stat } from "node:fs/promises";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ClipConfig, type VideoType } from "#contract";
import { startEarlyAnalysis, type EarlyAnalysis } from "../../src/analyse/early.ts";
import { analyse } from "../../src/analyse/index.ts";
import { loadSpeechModel } from "../../src/analyse/speech-model.ts";
import { probeSource } from "../../src/source/probe.ts";
import { GrowingFile } from "../../src/source/growing-file.ts";
import { runProcess } from "../../src/shared/spawn.ts";
import type { SourceInfo } from "../../src/shared/types.ts";
import { cachedMedia, type MediaSpec } from "../../../test/media/generate.ts";
import { FFMPEG, nativeRunner, tempDir } from "../helpers/media.ts";
import { ffmpegChildren } from "../helpers/processes.ts";
import { waitFor } from "../helpers/servers.ts";

const runner = nativeRunner();
const CONFIG = ClipConfig.parse({ min_clip_seconds: 10, max_clip_seconds: 30, max_clips: 3 });
/** The analyse tests' mixed source (speech, pauses, bursts, scene changes): generated once for both files. */
const MIXED: MediaSpec = { durationSeconds: 90, bursts: [17, 44, 71], sceneChanges: [14, 31, 47.5, 62, 76], seed: 11 };
/** Pieces the source is written in after its head. */
const PIECES = 8;
/** The first piece: enough for the head to be probed (source/streamable.ts needs at most 256 KiB past the index). */
const HEAD_BYTES = 512 * 1024;

let dir: string;
let faststart: string;

async function remux(input: string, output: string, args: string[]): Promise<string> {
  const result = await runProcess({ command: FFMPEG, args: ["-nostdin", "-v", "error", "-y", "-i", input, "-map", "0", "-c", "copy", ...args, output], timeoutMs: 60_000 });
  if (result.exitCode !== 0) throw new Error(`remux failed: ${result.stderrTail}`);
  return output;
}

async function probe(file: string): Promise<SourceInfo> {
  return probeSource({
    runner,
    path: file,
    sizeBytes: (await stat(file)).size,
    videoUrl: "https://media.test/source.mp4",
    platformTitle: null,
    maxSourceSeconds: 3600,
    signal: new AbortController().signal,
  });
}

interface Outcome {
  candidates: Awaited<ReturnType<typeof analyse>>;
  speech: { start: number; end: number }[] | null;
  quiet: { start: number; end: number }[] | null;
  keyframes: number[] | null;
}

async function analysed(source: SourceInfo, type: VideoType, early?: EarlyAnalysis): Promise<Outcome> {
  const loaded = await loadSpeechModel();
  const outcome: Outcome = { candidates: [], speech: null, quiet: null, keyframes: null };
  outcome.candidates = await analyse(runner, source, type, CONFIG, {
    signal: new AbortController().signal,
    onProgress: () => {},
    speech: "model" in loaded ? loaded.model : null,
    onSpeech: (spans) => (outcome.speech = spans),
    onQuiet: (quiet) => (outcome.quiet = quiet),
    onKeyframes: (times) => (outcome.keyframes = times),
    ...(early ? { measured: (plan, onSeconds) => early.measured(plan, onSeconds) } : {}),
  });
  return outcome;
}

/**
 * Writes `from` to `to`: the head, then PIECES pieces, each once the streamed
 * pass has measured into the media written so far (or once it is clear it
 * measures after the download). Returns the media seconds measured before the
 * last piece.
 */
async function download(from: string, to: GrowingFile, early: EarlyAnalysis, durationSeconds: number): Promise<number> {
  const bytes = (await stat(from)).size;
  const input = await open(from, "r");
  const output = await open(to.path, "w");
  const settled = () => early.outcome().startsWith("measured after") || early.outcome().startsWith("not measured");
  let written = 0;
  const write = async (length: number) => {
    const buffer = Buffer.alloc(length);
    await input.read(buffer, 0, length, written);
    await output.write(buffer, 0, length, written);
    written += length;
    to.grew();
  };
  let measuredBeforeLast = 0;
  try {
    await write(Math.min(HEAD_BYTES, bytes));
    await waitFor(() => early.startedAt() !== null || settled(), 60_000, "the streamed pass to start");
    const piece = Math.ceil((bytes - written) / PIECES);
    while (written < bytes) {
      measuredBeforeLast = early.seconds();
      await write(Math.min(piece, bytes - written));
      if (written >= bytes) break;
      // Media grows about as the bytes do: the pass has read into what was written.
      const reached = (written / bytes) * durationSeconds * 0.7;
      await waitFor(() => early.seconds() >= reached || settled(), 60_000, `the streamed pass to reach ${reached.toFixed(1)} s`);
    }
  } finally {
    await output.close();
    await input.close();
  }
  to.finish();
  return measuredBeforeLast;
}

async function growingRun(file: string, type: VideoType) {
  const work = await tempDir("early");
  const growing = new GrowingFile(path.join(work, "source.video"));
  const early = startEarlyAnalysis({
    runner,
    source: growing,
    videoType: type,
    speech: loadSpeechModel(),
    workDir: work,
    timeoutMs: 120_000,
    signal: new AbortController().signal,
  });
  try {
    const facts = await probe(file);
    const measuredBeforeLast = await download(file, growing, early, facts.durationSeconds);
    const source = await probe(growing.path);
    const result = await analysed(source, type, early);
    return { result, early, measuredBeforeLast, duration: source.durationSeconds };
  } finally {
    await early.stop();
    await rm(work, { recursive: true, force: true });
  }
}

beforeAll(async () => {
  dir = await tempDir("early-media");
  faststart = (await cachedMedia(MIXED, ".tmp/media")).path;
});

afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe("analysis while the source downloads", () => {
  it.each([
    ["faststart MP4", "general", () => Promise.resolve(faststart)],
    ["fragmented MP4", "podcast", () => remux(faststart, path.join(dir, "fragmented.mp4"), ["-movflags", "frag_keyframe+empty_moov+default_base_moof"])],
    ["Matroska", "vlog", () => remux(faststart, path.join(dir, "source.mkv"), [])],
    ["MPEG-TS", "general", () => remux(faststart, path.join(dir, "source.ts"), ["-f", "mpegts"])],
  ] as const)("%s (%s): measured before the last byte, the same analysis as the finished file", async (_label, type, make) => {
    const file = await make();
    const grown = await growingRun(file, type);
    expect(grown.early.outcome()).toMatch(/^measured while downloading/);
    // The pass read most of the media before the last piece arrived.
    expect(grown.measuredBeforeLast).toBeGreaterThan(grown.duration * 0.5);
    const finished = await analysed(await probe(file), type);
    expect(grown.result).toEqual(finished);
    expect(finished.candidates.length).toBeGreaterThan(0);
    expect(finished.keyframes?.length).toBeGreaterThan(10);
  });

  it("an MP4 whose index comes after its media waits for the whole file, with the same analysis", async () => {
    const moovLast = await remux(faststart, path.join(dir, "moov-last.mp4"), []);
    const grown = await growingRun(moovLast, "general");
    expect(grown.early.outcome()).toMatch(/^measured after the download: the MP4's index \(moov\) comes after its media/);
    expect(grown.measuredBeforeLast).toBe(0);
    expect(grown.result).toEqual(await analysed(await probe(moovLast), "general"));
  });

  it("a download that fails stops the streamed pass: no ffmpeg is left", async () => {
    const work = await tempDir("early-fail");
    const growing = new GrowingFile(path.join(work, "source.video"));
    const early = startEarlyAnalysis({ runner, source: growing, videoType: "general", speech: loadSpeechModel(), workDir: work, timeoutMs: 120_000, signal: new AbortController().signal });
    const bytes = (await stat(faststart)).size;
    // Half the file, then the download breaks.
    const input = await open(faststart, "r");
    const buffer = Buffer.alloc(Math.floor(bytes / 2));
    await input.read(buffer, 0, buffer.length, 0);
    await input.close();
    const output = await open(growing.path, "w");
    await output.write(buffer);
    await output.close();
    growing.grew();
    await waitFor(() => early.seconds() > 5, 60_000, "the streamed pass to start");
    growing.fail(new Error("the connection dropped"));
    await early.stop();
    expect(await ffmpegChildren()).toEqual([]);
    await rm(work, { recursive: true, force: true });
  });

  it("measurements taken with another plan than the finished file's are not used", async () => {
    const work = await tempDir("early-plan");
    const growing = new GrowingFile(path.join(work, "source.video"));
    await copyFile(faststart, growing.path);
    // A head that streams: the pass starts before finish() says the download ended.
    growing.grew();
    const early = startEarlyAnalysis({ runner, source: growing, videoType: "general", speech: loadSpeechModel(), workDir: work, timeoutMs: 120_000, signal: new AbortController().signal });
    await waitFor(() => early.startedAt() !== null, 60_000, "the streamed pass to start");
    growing.finish();
    const other = await early.measured({ demuxer: "matroska", hasAudio: true, frames: "keyframes", speech: true }, () => {});
    expect(other).toBeNull();
    expect(early.outcome()).toMatch(/probe differs/);
    expect(await ffmpegChildren()).toEqual([]);
    await rm(work, { recursive: true, force: true });
  });
});
