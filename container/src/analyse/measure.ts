/**
 * The analysis's measuring pass: ONE ffmpeg run that demuxes and decodes the
 * source once and feeds every signal from that decode:
 *
 *   audio  -> silencedetect (pauses) and ebur128 (momentary loudness every
 *             0.1 s) on stderr, and mono 16 kHz PCM to a file that the speech
 *             model (vad.ts) reads while it is being written;
 *   video  -> keyframes only (KEYFRAMES_ONLY_INPUT), or with `frames:
 *             "sampled"` every frame decoded and two a second kept, each
 *             scaled to a 64x36 grey thumbnail in a raw file, times from
 *             showinfo.
 *
 * The input is the finished file, or a source still downloading
 * (`{ stream }`), read front to back through ffmpeg's stdin as it arrives
 * (source/growing-file.ts; which containers can be, source/streamable.ts).
 * Nothing here needs the source's duration: the measurements grow with what
 * was read, and audioSignals() cuts them to the probed duration afterwards,
 * so a streamed pass and a pass over the finished file give the same result.
 *
 * Filter graphs are built from constants only; the demuxer is pinned with -f
 * to the one probing accepted, and the only protocol allowed is `file` (or
 * `pipe` for a streamed source).
 */
import { randomBytes } from "node:crypto";
import { readFile, rm } from "node:fs/promises";
import { join } from "node:path";
import type { FfmpegRunner } from "../ffmpeg/runner.ts";
import { GrowingFile } from "../source/growing-file.ts";
import { SAMPLE_RATE, type SpeechModel } from "./speech-model.ts";
import {
  KEYFRAMES_ONLY_INPUT,
  LOUDNESS_FLOOR,
  LOUDNESS_HOP,
  SAMPLED_FILTER,
  SILENCE_FILTER,
  THUMB_HEIGHT,
  THUMB_WIDTH,
  parseLoudnessLine,
  parseShowinfoTime,
  parseSilenceLine,
  type AudioSignals,
  type Interval,
  type VideoFrames,
} from "./signals.ts";
import { speechProbabilities, speechTrack } from "./vad.ts";

export interface MeasurePlan {
  /** The demuxer probing accepted, pinned with -f. */
  demuxer: string;
  hasAudio: boolean;
  /** Keyframes only, or every frame decoded and two a second kept (sources without audio, sparse keyframes). */
  frames: VideoFrames["mode"];
  /** Run the speech model over the audio (false: it is unavailable; speech comes from loudness). */
  speech: boolean;
}

/** The finished file (with a time_range's seek, signals.ts windowArgs), or a source still downloading. */
export type MeasureInput = { path: string; windowArgs?: string[] } | { stream: GrowingFile };

/** What the audio measured, as far as the source went (no duration applied yet). */
export interface RawAudio {
  /** Momentary loudness per LOUDNESS_HOP slot (LOUDNESS_FLOOR where none was logged). */
  loudness: Float32Array;
  /** Pauses that ended. */
  silences: Interval[];
  /** A pause still open when the audio ended: it runs to the end of the source. */
  openSilence: number | null;
  /** Speech probability per vad.ts frame; null without the speech model. */
  speechProbabilities: Float32Array | null;
  /** The pass's PCM, when it wrote one and was asked to keep it (MeasureOptions.keepPcm). */
  pcm?: SpeechPcm;
}

/**
 * The audio as the speech model heard it: mono SAMPLE_RATE Hz s16le, from the
 * audio stream's first sample to its last, in a file the pass wrote. The
 * transcript cuts its speech-to-text chunks from it (transcript/pcm-chunk.ts)
 * instead of decoding the source again for each one.
 */
export interface SpeechPcm {
  path: string;
  bytes: number;
}

export interface Measurements {
  plan: MeasurePlan;
  audio: RawAudio | null;
  frames: VideoFrames;
}

export interface MeasureOptions {
  signal: AbortSignal;
  /** The speech model, when plan.speech. */
  model: SpeechModel | null;
  /** Where the pass writes its PCM and frames (removed when it ends, but for a PCM kept). */
  workDir: string;
  /**
   * Keep the PCM of a pass that succeeded (RawAudio.pcm) for the transcript;
   * it then lives until its directory is removed (the job's work directory,
   * the early analysis's).
   */
  keepPcm?: boolean;
  timeoutMs: number;
  /** Media seconds read so far. */
  onSeconds?: (seconds: number) => void;
}

/** Loudness slots, grown as the audio goes on. */
class LoudnessSlots {
  values = new Float32Array(4096).fill(LOUDNESS_FLOOR);
  count = 0;
  set(slot: number, value: number): void {
    if (slot >= this.values.length) {
      const bigger = new Float32Array(Math.max(slot + 1, this.values.length * 2)).fill(LOUDNESS_FLOOR);
      bigger.set(this.values);
      this.values = bigger;
    }
    this.values[slot] = value;
    this.count = Math.max(this.count, slot + 1);
  }
}

export function measureArgs(input: MeasureInput, plan: MeasurePlan, paths: { pcm: string | null; frames: string }): string[] {
  const streamed = "stream" in input;
  const frameFilter = `${plan.frames === "sampled" ? `${SAMPLED_FILTER},` : ""}scale=${THUMB_WIDTH}:${THUMB_HEIGHT}:flags=area,format=gray,showinfo`;
  return [
    "-nostdin", "-hide_banner", "-nostats", "-loglevel", "info",
    "-protocol_whitelist", streamed ? "pipe" : "file",
    ...(plan.frames === "keyframes" ? KEYFRAMES_ONLY_INPUT : []),
    ...(!streamed ? (input.windowArgs ?? []) : []),
    "-f", plan.demuxer,
    "-i", streamed ? "pipe:0" : input.path,
    ...(plan.hasAudio ? ["-map", "0:a:0", "-vn", "-sn", "-dn", "-af", `${SILENCE_FILTER},ebur128=framelog=info`, "-f", "null", "-"] : []),
    ...(plan.hasAudio && paths.pcm
      ? ["-map", "0:a:0", "-vn", "-sn", "-dn", "-ac", "1", "-ar", String(SAMPLE_RATE), "-c:a", "pcm_s16le", "-f", "s16le", "-y", paths.pcm]
      : []),
    "-map", "0:v:0", "-an", "-sn", "-dn",
    "-vf", frameFilter,
    "-fps_mode", "passthrough",
    "-f", "rawvideo", "-y", paths.frames,
  ];
}

export async function measure(runner: FfmpegRunner, input: MeasureInput, plan: MeasurePlan, opts: MeasureOptions): Promise<Measurements> {
  // Names of this pass only: two passes over sources in one directory (a job's streamed pass and its
  // fallback, or tests sharing generated media) must not write or delete each other's files.
  const tag = randomBytes(4).toString("hex");
  const pcmPath = plan.hasAudio && plan.speech && opts.model ? join(opts.workDir, `analysis-speech-${tag}.s16`) : null;
  const framesPath = join(opts.workDir, `analysis-${plan.frames}-${tag}.gray`);
  const loudness = new LoudnessSlots();
  const silences: Interval[] = [];
  let openSilence: number | null = null;
  const times: number[] = [];
  let seconds = 0;
  const advance = (t: number) => {
    if (t > seconds) {
      seconds = t;
      opts.onSeconds?.(t);
    }
  };
  // The speech model reads the PCM as the pass writes it; any stderr line may mean more was written.
  const pcm = pcmPath ? new GrowingFile(pcmPath) : null;
  const speechStop = new AbortController();
  const speechSignal = AbortSignal.any([opts.signal, speechStop.signal]);
  const speech = pcm && opts.model ? speechProbabilities(opts.model, pcm, { signal: speechSignal }) : null;
  speech?.catch(() => undefined);
  const onLine = (line: string): void => {
    pcm?.grew();
    const level = parseLoudnessLine(line);
    if (level) {
      if (level.slot >= 0) loudness.set(level.slot, level.value);
      advance(level.t);
      return;
    }
    const frame = parseShowinfoTime(line);
    if (frame !== null) {
      times.push(frame);
      advance(frame);
      return;
    }
    const silence = parseSilenceLine(line);
    if (silence?.kind === "start") openSilence = Math.max(0, silence.t);
    else if (silence?.kind === "end" && openSilence !== null) {
      silences.push({ start: openSilence, end: silence.t });
      openSilence = null;
    }
  };
  /** The PCM handed on; set by the last step that can fail, so a pass that fails removes its PCM below. */
  let kept: SpeechPcm | null = null;
  try {
    const streamed = "stream" in input;
    const result = await runner.ffmpeg({
      args: measureArgs(input, plan, { pcm: pcmPath, frames: framesPath }),
      inputs: streamed ? [] : [input.path],
      outputs: pcmPath ? [pcmPath, framesPath] : [framesPath],
      timeoutMs: opts.timeoutMs,
      signal: opts.signal,
      onStderrLine: onLine,
      ...(streamed ? { stdin: input.stream.stream(opts.signal) } : {}),
    });
    if (result.exitCode !== 0) {
      const failure = new Error(`analysis pass failed (ffmpeg exit ${result.exitCode}): ${result.stderrTail.slice(-600)}`);
      pcm?.fail(failure);
      throw failure;
    }
    pcm?.finish();
    const raw = await readFile(framesPath);
    const frameBytes = THUMB_WIDTH * THUMB_HEIGHT;
    const count = Math.min(times.length, Math.floor(raw.length / frameBytes));
    const pixels: Uint8Array[] = [];
    for (let i = 0; i < count; i++) pixels.push(new Uint8Array(raw.buffer, raw.byteOffset + i * frameBytes, frameBytes));
    const frames: VideoFrames = { times: times.slice(0, count), pixels, mode: plan.frames };
    const probabilities = speech ? await speech : null;
    kept = pcmPath !== null && opts.keepPcm === true ? { path: pcmPath, bytes: await pcm!.size() } : null;
    const audio: RawAudio | null = plan.hasAudio
      ? {
          loudness: loudness.values.slice(0, loudness.count),
          silences,
          openSilence,
          speechProbabilities: probabilities,
          ...(kept ? { pcm: kept } : {}),
        }
      : null;
    return { plan, audio, frames };
  } finally {
    // A failed or stopped pass must not leave the speech model reading a file that no longer grows.
    speechStop.abort(new Error("the analysis pass ended"));
    await speech?.catch(() => undefined);
    await Promise.all([rm(framesPath, { force: true }), pcmPath && !kept ? rm(pcmPath, { force: true }) : undefined]);
  }
}

/** The audio's signals over a source of `duration` seconds (the probed one). */
export function audioSignals(raw: RawAudio, duration: number): AudioSignals {
  const slots = Math.max(1, Math.ceil(duration / LOUDNESS_HOP));
  const loudness = new Float32Array(slots).fill(LOUDNESS_FLOOR);
  loudness.set(raw.loudness.subarray(0, slots));
  // A pause still open at the end runs to the end of the source.
  const silences = raw.openSilence !== null ? [...raw.silences, { start: raw.openSilence, end: duration }] : raw.silences;
  return {
    loudness,
    silences,
    ...(raw.speechProbabilities ? { speech: speechTrack(raw.speechProbabilities, duration) } : {}),
  };
}
