/**
 * Voice activity over a whole source: speech probability per 32 ms frame of
 * mono 16 kHz PCM (signed 16-bit, as the audio pass extracts it), then
 * speech segments from those probabilities.
 *
 * Speed: the model is recurrent, so one stream must be run frame after frame.
 * The audio is split into lanes of LANE_FRAMES frames run side by side as one
 * batch (one model call per step for all of them), which is several times
 * faster than one stream on a single core. Each lane after the first starts
 * WARMUP_FRAMES early, so its state has settled by the time its own frames
 * begin; the warm-up frames' outputs are dropped. Once the PCM is finished,
 * the lanes left are shared out among the model's threads (speech-model.ts
 * SPEECH_THREADS), each stepping a batch of its own: while the analysis pass
 * runs, the model's thread gets little of the cores, so most of the model's
 * work is left when the pass ends (on the bench's 5-minute job, 4,400-7,300 of
 * its 9,375 frames), and one thread alone would leave the other core idle.
 *
 * Read as it is written: the PCM may still be growing (the analysis pass
 * writes it while the source downloads, analyse/measure.ts). Lanes start at
 * fixed multiples of LANE_FRAMES whatever the audio's length, and each lane
 * steps as far as the samples on disk allow; a lane's results do not depend on
 * which other lanes share its batch (checked bit for bit), so the
 * probabilities of a growing file equal those of the finished one, and after
 * the last sample only the lane it falls in has steps left.
 *
 * Memory: the PCM stays on disk and is read CHUNK_STEPS steps at a time per
 * lane (about 150 KiB per lane); only the probabilities (4 bytes per 32 ms,
 * about 450 KiB an hour) are kept.
 */
import { open } from "node:fs/promises";
import { GrowingFile, abortable } from "../source/growing-file.ts";
import type { Interval } from "./interval.ts";
import { BYTES_PER_SAMPLE, CONTEXT_SAMPLES, FRAME_SAMPLES, SAMPLE_RATE, type SpeechModel } from "./speech-model.ts";

/** Seconds per probability. */
export const FRAME_SECONDS = FRAME_SAMPLES / SAMPLE_RATE;
/** Frames per lane (about 16 s): short enough that little is left after the last sample, long enough that warm-ups cost 6%. */
export const LANE_FRAMES = 512;
/** Lanes stepped in one batch at most (an hour of audio is 225 lanes). */
const MAX_BATCH = 64;
/** About one second of warm-up before each lane's own frames. */
const WARMUP_FRAMES = 32;
/** Steps read from disk at once per lane. */
const CHUNK_STEPS = 64;

/** Hysteresis on the probability, as the model's authors recommend: speech starts at 0.5, ends below 0.35. */
const START_THRESHOLD = 0.5;
const END_THRESHOLD = 0.35;
/**
 * Onsets ramp up and releases fade over a few frames below the thresholds: a
 * segment is widened over neighbouring frames still at or above this (at most
 * EDGE_FRAMES each way), so a clip cut in the pause before it does not clip
 * the first syllable.
 */
const EDGE_THRESHOLD = 0.15;
const EDGE_FRAMES = 16;
/** Gaps shorter than this inside speech are kept as speech (a stop consonant, a breath). */
const MIN_GAP_SECONDS = 0.1;
/** Speech shorter than this is dropped (a click, a cough). */
const MIN_SPEECH_SECONDS = 0.25;
/** Each segment is widened by this much on both sides: onsets and releases are quiet. */
const PAD_SECONDS = 0.03;
/**
 * A quiet stretch (quietStretches) is at least this long. On the test media
 * its edges sit within about 0.07 s of where the voices stop and start again.
 */
const QUIET_MIN_SECONDS = 0.2;

export interface SpeechTrack {
  /** Speech probability per FRAME_SECONDS frame; frame i covers [i, i+1) * FRAME_SECONDS. */
  probabilities: Float32Array;
  /** Speech, in source seconds, sorted and disjoint. */
  segments: Interval[];
  /** Seconds of speech in all. */
  speechSeconds: number;
  /** Where no one speaks: quiet stretches (see quietStretches), sorted and disjoint. */
  quiet: Interval[];
}

export interface DetectOptions {
  signal?: AbortSignal;
  /** Fraction done; only known for a finished file (a growing one's length is not). */
  onProgress?: (fraction: number) => void;
}

interface Lane {
  /** First frame this lane runs (its warm-up included). */
  first: number;
  /** Its own frames: [own, own + LANE_FRAMES), cut at the end of the audio. */
  own: number;
  /** The next frame to run. */
  next: number;
  /** Recurrent state for one stream: [2][128] as the model lays it out per batch row. */
  state: Float32Array;
  /** Samples of the frames [chunkFrom, chunkFrom + CHUNK_STEPS) and the context before them. */
  chunk: Float32Array;
  chunkFrom: number;
  chunkFrames: number;
}

type PcmFile = Awaited<ReturnType<typeof open>>;

/**
 * Speech probability per frame of s16le mono 16 kHz PCM: a finished file
 * (a path) or one still being written (a GrowingFile, read as it grows; the
 * promise resolves once it finished and every frame ran).
 */
export async function speechProbabilities(model: SpeechModel, pcm: string | GrowingFile, opts: DetectOptions = {}): Promise<Float32Array> {
  const source = typeof pcm === "string" ? GrowingFile.complete(pcm) : pcm;
  let file: PcmFile | null = null;
  let probabilities: Float32Array = new Float32Array(4096);
  const lanes: Lane[] = [];
  const stateSize = model.initialState(1).length;
  const chunkSamples = CHUNK_STEPS * FRAME_SAMPLES + CONTEXT_SAMPLES;
  const raw = Buffer.alloc(chunkSamples * BYTES_PER_SAMPLE);
  let total = 0;
  try {
    for (;;) {
      opts.signal?.throwIfAborted();
      source.check();
      const next = source.changed();
      const finished = source.finished;
      file ??= await open(source.path, "r").catch(() => null);
      const samples = file ? Math.floor((await file.stat()).size / BYTES_PER_SAMPLE) : 0;
      // A frame is ready once its samples are all there; the last, partial one once the file is finished (padded with silence).
      const frames = finished ? Math.ceil(samples / FRAME_SAMPLES) : Math.floor(samples / FRAME_SAMPLES);
      if (frames > probabilities.length) probabilities = grown(probabilities, frames);
      total = Math.max(total, frames);
      while (lanes.length * LANE_FRAMES < frames) {
        const own = lanes.length * LANE_FRAMES;
        const first = Math.max(0, own - WARMUP_FRAMES);
        lanes.push({ first, own, next: first, state: model.initialState(1), chunk: new Float32Array(chunkSamples), chunkFrom: -1, chunkFrames: 0 });
      }
      const limit = (lane: Lane) => Math.min(frames, lane.own + LANE_FRAMES);
      const runnable = lanes.filter((lane) => lane.next < limit(lane)).slice(0, MAX_BATCH);
      if (runnable.length === 0) {
        if (finished) break;
        await abortable(next, opts.signal ?? new AbortController().signal);
        continue;
      }
      // Each lane's next chunk of samples (as many steps as are ready, at most CHUNK_STEPS).
      for (const lane of runnable) {
        lane.chunkFrom = lane.next;
        lane.chunkFrames = Math.min(CHUNK_STEPS, limit(lane) - lane.next);
        await readSamples(file!, lane.next * FRAME_SAMPLES - CONTEXT_SAMPLES, samples, raw, lane.chunk);
      }
      // Once the PCM is finished (the pass that writes it has ended), nothing else holds the cores: the lanes
      // left are shared out among the model's threads. Before that, one thread, so the pass keeps the rest.
      const groups = finished ? shareOut(runnable, model.threads) : [runnable];
      await Promise.all(groups.map((group, thread) => stepChunks(model, group, thread, probabilities, stateSize)));
      if (finished && total > 0) {
        const done = lanes.reduce((sum, lane) => sum + (Math.min(lane.next, limit(lane)) - lane.first), 0);
        const all = lanes.reduce((sum, lane) => sum + (limit(lane) - lane.first), 0);
        opts.onProgress?.(Math.min(1, done / all));
      }
    }
    return probabilities.slice(0, total);
  } finally {
    await file?.close();
  }
}

function grown(values: Float32Array, atLeast: number): Float32Array {
  const bigger = new Float32Array(Math.max(atLeast, values.length * 2));
  bigger.set(values);
  return bigger;
}

/**
 * Steps each lane through the chunk of samples it has read, all of them as one
 * batch per step, on one of the model's threads.
 */
async function stepChunks(model: SpeechModel, lanes: Lane[], thread: number, probabilities: Float32Array, stateSize: number): Promise<void> {
  const window = CONTEXT_SAMPLES + FRAME_SAMPLES;
  const half = stateSize / 2;
  const steps = Math.max(...lanes.map((lane) => lane.chunkFrames));
  for (let s = 0; s < steps; s++) {
    const batch = lanes.filter((lane) => s < lane.chunkFrames);
    const input = new Float32Array(batch.length * window);
    const state = new Float32Array(batch.length * stateSize);
    for (const [k, lane] of batch.entries()) {
      input.set(lane.chunk.subarray(s * FRAME_SAMPLES, s * FRAME_SAMPLES + window), k * window);
      // The state is [2, batch, 128]: each lane's two halves go to row k of each layer.
      state.set(lane.state.subarray(0, half), k * half);
      state.set(lane.state.subarray(half), batch.length * half + k * half);
    }
    const out = await model.step(input, state, batch.length, thread);
    for (const [k, lane] of batch.entries()) {
      lane.state.set(out.state.subarray(k * half, (k + 1) * half), 0);
      lane.state.set(out.state.subarray(batch.length * half + k * half, batch.length * half + (k + 1) * half), half);
      const frame = lane.chunkFrom + s;
      if (frame >= lane.own) probabilities[frame] = out.probabilities[k]!;
      lane.next = frame + 1;
    }
  }
}

/** Lanes in `count` groups of about equal steps (longest first, each to the lightest group so far). */
export function shareOut<T extends { chunkFrames: number }>(lanes: T[], count: number): T[][] {
  const groups = Array.from({ length: Math.min(count, lanes.length) }, () => ({ lanes: [] as T[], steps: 0 }));
  for (const lane of [...lanes].sort((a, b) => b.chunkFrames - a.chunkFrames)) {
    const lightest = groups.reduce((min, group) => (group.steps < min.steps ? group : min));
    lightest.lanes.push(lane);
    lightest.steps += lane.chunkFrames;
  }
  return groups.map((group) => group.lanes);
}

/** Fills `into` with samples from `fromSample` on, as floats; before the start and past the end is silence. */
async function readSamples(file: PcmFile, fromSample: number, totalSamples: number, raw: Buffer, into: Float32Array): Promise<void> {
  into.fill(0);
  const first = Math.max(0, fromSample);
  const last = Math.min(totalSamples, fromSample + into.length);
  if (last <= first) return;
  const bytes = (last - first) * BYTES_PER_SAMPLE;
  const { bytesRead } = await file.read(raw, 0, bytes, first * BYTES_PER_SAMPLE);
  const offset = first - fromSample;
  // PCM is little-endian, as is every platform the engine runs on: read it in place.
  const pcm = new Int16Array(raw.buffer, raw.byteOffset, Math.floor(bytesRead / BYTES_PER_SAMPLE));
  for (let i = 0; i < pcm.length; i++) into[offset + i] = pcm[i]! / 32768;
}

/**
 * Runs of speech as frame indices [start, end): hysteresis on the probability
 * (START_THRESHOLD to begin, below END_THRESHOLD to end), each widened over
 * the fading frames still at or above EDGE_THRESHOLD (at most EDGE_FRAMES each
 * way). Nothing is merged or dropped yet.
 */
function speechRuns(probabilities: Float32Array): { start: number; end: number }[] {
  const runs: { start: number; end: number }[] = [];
  let start = -1;
  for (let i = 0; i <= probabilities.length; i++) {
    const p = i < probabilities.length ? probabilities[i]! : 0;
    if (start < 0 && p >= START_THRESHOLD) start = i;
    else if (start >= 0 && p < END_THRESHOLD) {
      let first = start;
      while (first > 0 && start - first < EDGE_FRAMES && probabilities[first - 1]! >= EDGE_THRESHOLD) first--;
      let end = i;
      while (end < probabilities.length && end - i < EDGE_FRAMES && probabilities[end]! >= EDGE_THRESHOLD) end++;
      runs.push({ start: first, end });
      start = -1;
    }
  }
  return runs;
}

/** Speech segments (source seconds) from per-frame probabilities, clipped to [0, duration]. */
export function speechSegments(probabilities: Float32Array, duration: number): Interval[] {
  const raw = speechRuns(probabilities).map((r) => ({ start: r.start * FRAME_SECONDS, end: r.end * FRAME_SECONDS }));
  const merged: Interval[] = [];
  for (const segment of raw) {
    const last = merged.at(-1);
    if (last && segment.start - last.end < MIN_GAP_SECONDS) last.end = segment.end;
    else merged.push({ ...segment });
  }
  const segments: Interval[] = [];
  for (const segment of merged) {
    if (segment.end - segment.start < MIN_SPEECH_SECONDS) continue;
    const padded = { start: Math.max(0, segment.start - PAD_SECONDS), end: Math.min(duration, segment.end + PAD_SECONDS) };
    const last = segments.at(-1);
    if (last && padded.start <= last.end) last.end = padded.end;
    else if (padded.end > padded.start) segments.push(padded);
  }
  return segments;
}

/**
 * Where no one is speaking: the stretches between runs of speech (before the
 * segments drop short sounds, so a word the model heard for a moment still
 * breaks a stretch), at least QUIET_MIN_SECONDS long. No frame inside one
 * reaches START_THRESHOLD, and at its ends the probability has faded below
 * EDGE_THRESHOLD: the pause is consistent across the detector's frames.
 * Clip edges are only placed inside these (features.ts, sentence-cuts.ts).
 */
export function quietStretches(probabilities: Float32Array, duration: number): Interval[] {
  const quiet: Interval[] = [];
  let from = 0;
  for (const run of [...speechRuns(probabilities), { start: Number.POSITIVE_INFINITY, end: Number.POSITIVE_INFINITY }]) {
    const start = Math.min(duration, from * FRAME_SECONDS);
    const end = Math.min(duration, run.start * FRAME_SECONDS);
    if (end - start >= QUIET_MIN_SECONDS) quiet.push({ start, end });
    from = run.end;
  }
  return quiet;
}

/** The speech track of the PCM's probabilities (see speechProbabilities). */
export function speechTrack(probabilities: Float32Array, duration: number): SpeechTrack {
  const segments = speechSegments(probabilities, duration);
  const speechSeconds = segments.reduce((sum, s) => sum + (s.end - s.start), 0);
  return { probabilities, segments, speechSeconds, quiet: quietStretches(probabilities, duration) };
}

export async function detectSpeech(model: SpeechModel, pcm: string | GrowingFile, duration: number, opts: DetectOptions = {}): Promise<SpeechTrack> {
  return speechTrack(await speechProbabilities(model, pcm, opts), duration);
}
