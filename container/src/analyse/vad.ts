/**
 * Voice activity over a whole source: speech probability per 32 ms frame of
 * mono 16 kHz PCM (signed 16-bit, as the audio pass extracts it), then
 * speech segments from those probabilities.
 *
 * Speed: the model is recurrent, so one stream must be run frame after frame.
 * The audio is split into LANES contiguous parts run side by side as one
 * batch (one model call per step for all of them), which is several times
 * faster than one stream on a single core. Each part after the first starts
 * WARMUP_FRAMES early, so its state has settled by the time its own frames
 * begin; the warm-up frames' outputs are dropped.
 *
 * Memory: the PCM stays on disk and is read CHUNK_STEPS steps at a time per
 * lane (about 1 MiB in all); only the probabilities (4 bytes per 32 ms, about
 * 450 KiB an hour) are kept.
 */
import { open } from "node:fs/promises";
import type { Interval } from "./signals.ts";
import { CONTEXT_SAMPLES, FRAME_SAMPLES, SAMPLE_RATE, type SpeechModel } from "./speech-model.ts";

/** Seconds per probability. */
export const FRAME_SECONDS = FRAME_SAMPLES / SAMPLE_RATE;
/** Parts run side by side; more adds little on one thread (measured in bench/engine). */
const LANES = 16;
/** A part shorter than this is not worth its warm-up. */
const MIN_LANE_FRAMES = 256;
/** About one second of warm-up before each part's own frames. */
const WARMUP_FRAMES = 32;
/** Steps read from disk at once per lane. */
const CHUNK_STEPS = 64;
const BYTES_PER_SAMPLE = 2;

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
  onProgress?: (fraction: number) => void;
  /** Parts run side by side (default LANES); the bench compares settings. */
  lanes?: number;
}

interface Lane {
  /** First frame this lane runs (its warm-up included). */
  first: number;
  /** Its own frames: [own, ownEnd). */
  own: number;
  ownEnd: number;
}

function planLanes(frames: number, most: number): { lanes: Lane[]; steps: number } {
  const count = Math.max(1, Math.min(most, Math.floor(frames / MIN_LANE_FRAMES)));
  const size = Math.ceil(frames / count);
  const lanes: Lane[] = [];
  for (let k = 0; k < count; k++) {
    const own = k * size;
    lanes.push({ first: Math.max(0, own - WARMUP_FRAMES), own, ownEnd: Math.min(frames, own + size) });
  }
  const steps = Math.max(...lanes.map((l) => l.ownEnd - l.first));
  return { lanes, steps };
}

/** Speech probability per frame of the s16le mono 16 kHz file at `pcmPath`. */
export async function speechProbabilities(model: SpeechModel, pcmPath: string, opts: DetectOptions = {}): Promise<Float32Array> {
  const file = await open(pcmPath, "r");
  try {
    const totalSamples = Math.floor((await file.stat()).size / BYTES_PER_SAMPLE);
    const frames = Math.ceil(totalSamples / FRAME_SAMPLES);
    const probabilities = new Float32Array(frames);
    if (frames === 0) return probabilities;
    const { lanes, steps } = planLanes(frames, opts.lanes ?? LANES);
    const batch = lanes.length;
    const window = CONTEXT_SAMPLES + FRAME_SAMPLES;
    // Per lane: the samples of CHUNK_STEPS steps plus the context before the first of them.
    const chunkSamples = CHUNK_STEPS * FRAME_SAMPLES + CONTEXT_SAMPLES;
    const raw = Buffer.alloc(chunkSamples * BYTES_PER_SAMPLE);
    const chunks = lanes.map(() => new Float32Array(chunkSamples));
    const input = new Float32Array(batch * window);
    let state = model.initialState(batch);

    for (let chunkStart = 0; chunkStart < steps; chunkStart += CHUNK_STEPS) {
      opts.signal?.throwIfAborted();
      for (const [k, lane] of lanes.entries()) {
        await readSamples(file, (lane.first + chunkStart) * FRAME_SAMPLES - CONTEXT_SAMPLES, totalSamples, raw, chunks[k]!);
      }
      const chunkSteps = Math.min(CHUNK_STEPS, steps - chunkStart);
      for (let s = 0; s < chunkSteps; s++) {
        for (let k = 0; k < batch; k++) input.set(chunks[k]!.subarray(s * FRAME_SAMPLES, s * FRAME_SAMPLES + window), k * window);
        const out = await model.step(input, state, batch);
        state = out.state;
        for (const [k, lane] of lanes.entries()) {
          const frame = lane.first + chunkStart + s;
          if (frame >= lane.own && frame < lane.ownEnd) probabilities[frame] = out.probabilities[k]!;
        }
      }
      opts.onProgress?.(Math.min(1, (chunkStart + chunkSteps) / steps));
    }
    return probabilities;
  } finally {
    await file.close();
  }
}

/** Fills `into` with samples from `fromSample` on, as floats; before the start and past the end is silence. */
async function readSamples(
  file: Awaited<ReturnType<typeof open>>,
  fromSample: number,
  totalSamples: number,
  raw: Buffer,
  into: Float32Array,
): Promise<void> {
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

export async function detectSpeech(model: SpeechModel, pcmPath: string, duration: number, opts: DetectOptions = {}): Promise<SpeechTrack> {
  const probabilities = await speechProbabilities(model, pcmPath, opts);
  const segments = speechSegments(probabilities, duration);
  const speechSeconds = segments.reduce((sum, s) => sum + (s.end - s.start), 0);
  return { probabilities, segments, speechSeconds, quiet: quietStretches(probabilities, duration) };
}
