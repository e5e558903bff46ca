/**
 * The analysis's signals and the passes that read them apart from the
 * measuring pass (measure.ts, which decodes the source once for all of
 * them): what ebur128, silencedetect and showinfo lines say; the sampled
 * frame pass (every frame decoded, two a second kept) for sources whose
 * keyframes are too sparse (mean gap above SPARSE_KEYFRAME_GAP) to see
 * scenes; exact cut times; and the audio alone (audioPass, for the speech
 * tests and bench:speech).
 *
 * Times: ffmpeg's command line shifts every input so it starts at 0 (the
 * file's start time), and input `-ss` counts from that same origin, so every
 * time here, in the candidates and in the render is seconds from the file's
 * start as ffmpeg sees it; SourceInfo.startTime needs no correction on top.
 *
 * Filter graphs are built from constants only: nothing from the job (URL,
 * title) reaches them, and the only path is the source's, given after -i with
 * the demuxer that probing accepted pinned by -f.
 */
import { randomBytes } from "node:crypto";
import { readFile, rm } from "node:fs/promises";
import { dirname, join } from "node:path";
import type { FfmpegRunner } from "../ffmpeg/runner.ts";
import { pinnedDemuxer } from "../source/probe.ts";
import type { SourceInfo, StageProgress } from "../shared/types.ts";
import { SAMPLE_RATE } from "./speech-model.ts";
import type { SpeechTrack } from "./vad.ts";
import type { Interval } from "./interval.ts";

export const THUMB_WIDTH = 64;
export const THUMB_HEIGHT = 36;
/** Mean keyframe gap (seconds) above which keyframes are too sparse to see scenes. */
const SPARSE_KEYFRAME_GAP = 5;
/** Frames per second kept by the fallback pass. */
const SAMPLED_FPS = 2;
/** Pauses: below -35 dBFS for at least 0.3 s (a breath between phrases). */
export const SILENCE_FILTER = "silencedetect=noise=-35dB:duration=0.3";
/** ebur128's momentary loudness is logged every 0.1 s. */
export const LOUDNESS_HOP = 0.1;
/** Floor for momentary loudness (ebur128 reports about -120 LUFS for digital silence). */
export const LOUDNESS_FLOOR = -70;

export type { Interval } from "./interval.ts";

export interface AudioSignals {
  /** Momentary loudness (LUFS) per LOUDNESS_HOP slot; slot i covers [i*hop, (i+1)*hop). */
  loudness: Float32Array;
  /** Pauses, in source seconds. */
  silences: Interval[];
  /** Voice activity, when the speech model ran; absent when it is unavailable. */
  speech?: SpeechTrack;
}

/**
 * A suffix that makes a scratch file this call's own: analyses of the same source can run at once
 * (a job's streamed pass and its fallback, tests sharing generated media), and a shared name lets
 * one delete the file the other is about to read.
 */
function scratchTag(): string {
  return randomBytes(4).toString("hex");
}

/** Where the audio pass writes the speech model's input (s16le, mono, 16 kHz). */
export function speechPcmPath(source: SourceInfo): string {
  return join(dirname(source.path), `analysis-speech-${scratchTag()}.s16`);
}

export interface VideoFrames {
  /** Times (source seconds) of the frames kept. */
  times: number[];
  /** THUMB_WIDTH x THUMB_HEIGHT grey pixels per frame. */
  pixels: Uint8Array[];
  /** "keyframes" or the sampled fallback. */
  mode: "keyframes" | "sampled";
}

export interface PassOptions {
  signal: AbortSignal;
  onProgress: StageProgress;
}

/** Generous per-pass wall-clock limit: the slowest backend (wasm) runs near realtime. */
export function analysisTimeoutMs(source: SourceInfo): number {
  return 120_000 + source.durationSeconds * 2000;
}

function failOnExit(what: string, result: { exitCode: number; stderrTail: string }): void {
  if (result.exitCode !== 0) {
    throw new Error(`${what} failed (ffmpeg exit ${result.exitCode}): ${result.stderrTail.slice(-600)}`);
  }
}

function progressFrom(source: SourceInfo, onProgress: StageProgress): (seconds: number) => void {
  let best = 0;
  return (seconds) => {
    const fraction = Math.min(1, Math.max(0, seconds / Math.max(source.durationSeconds, 0.001)));
    if (fraction > best) {
      best = fraction;
      onProgress(fraction);
    }
  };
}

/**
 * Input options of a pass over a time_range (steer/time-range.ts): seek to
 * its start and read its length, so the pass's times are range-local and it
 * decodes nothing outside the range. Nothing for a whole-source pass.
 */
export function windowArgs(source: SourceInfo): string[] {
  if (!source.seekSeconds) return [];
  return ["-ss", source.seekSeconds.toFixed(6), "-t", source.durationSeconds.toFixed(6)];
}

const EBUR128_LINE = /\bt:\s*([\d.]+)\s+TARGET:.*?\bM:\s*(-?[\d.]+|-?inf|nan)/;
const SILENCE_START = /silence_start:\s*(-?[\d.]+)/;
const SILENCE_END = /silence_end:\s*(-?[\d.]+)/;

/** An ebur128 line: its time, and the momentary loudness credited to the slot at its 0.4 s window's centre. */
export function parseLoudnessLine(line: string): { t: number; slot: number; value: number } | null {
  const level = EBUR128_LINE.exec(line);
  if (!level) return null;
  const t = Number(level[1]);
  const raw = Number(level[2]);
  const value = Number.isFinite(raw) ? Math.max(LOUDNESS_FLOOR, raw) : LOUDNESS_FLOOR;
  // M at time t covers the 0.4 s before t: credit it to the slot at the window's centre.
  return { t, slot: Math.floor((t - 0.2) / LOUDNESS_HOP), value };
}

/** A silencedetect line: where a pause starts or ends. */
export function parseSilenceLine(line: string): { kind: "start" | "end"; t: number } | null {
  const started = SILENCE_START.exec(line);
  if (started) return { kind: "start", t: Number(started[1]) };
  const ended = SILENCE_END.exec(line);
  return ended ? { kind: "end", t: Number(ended[1]) } : null;
}

/**
 * The audio pass. With `speechPcm`, the run also writes the track as the
 * speech model's input to that path (the caller runs the model and removes
 * the file).
 */
export async function audioPass(
  runner: FfmpegRunner,
  source: SourceInfo,
  opts: PassOptions & { speechPcm?: string },
): Promise<AudioSignals> {
  const slots = Math.max(1, Math.ceil(source.durationSeconds / LOUDNESS_HOP));
  const loudness = new Float32Array(slots).fill(LOUDNESS_FLOOR);
  const silences: Interval[] = [];
  let openSilence: number | null = null;
  const report = progressFrom(source, opts.onProgress);

  const onLine = (line: string): void => {
    const level = parseLoudnessLine(line);
    if (level) {
      if (level.slot >= 0 && level.slot < slots) loudness[level.slot] = level.value;
      report(level.t);
      return;
    }
    const silence = parseSilenceLine(line);
    if (silence?.kind === "start") openSilence = Math.max(0, silence.t);
    else if (silence?.kind === "end" && openSilence !== null) {
      silences.push({ start: openSilence, end: silence.t });
      openSilence = null;
    }
  };

  const result = await runner.ffmpeg({
    args: [
      "-nostdin", "-hide_banner", "-nostats", "-loglevel", "info",
      "-protocol_whitelist", "file",
      ...windowArgs(source),
      "-f", pinnedDemuxer(source.format),
      "-i", source.path,
      "-map", "0:a:0", "-vn", "-sn", "-dn",
      "-af", `${SILENCE_FILTER},ebur128=framelog=info`,
      "-f", "null", "-",
      ...(opts.speechPcm
        ? ["-map", "0:a:0", "-vn", "-sn", "-dn", "-ac", "1", "-ar", String(SAMPLE_RATE), "-c:a", "pcm_s16le", "-f", "s16le", "-y", opts.speechPcm]
        : []),
    ],
    inputs: [source.path],
    outputs: opts.speechPcm ? [opts.speechPcm] : [],
    timeoutMs: analysisTimeoutMs(source),
    signal: opts.signal,
    onStderrLine: onLine,
  });
  failOnExit("audio analysis", result);
  // A pause still open at the end runs to the end of the source.
  if (openSilence !== null) silences.push({ start: openSilence, end: source.durationSeconds });
  opts.onProgress(1);
  return { loudness, silences };
}

const SHOWINFO_TIME = /\bn:\s*\d+\s+pts:\s*-?\d+\s+pts_time:\s*(-?[\d.]+)/;

/** A showinfo line's frame time, or null. */
export function parseShowinfoTime(line: string): number | null {
  const match = SHOWINFO_TIME.exec(line);
  return match ? Number(match[1]) : null;
}

/**
 * Input options that give the decoder keyframes only. `-skip_frame nokey`
 * alone hands every packet to the decoder, which drops the others itself: its
 * frame threads then take turns on every packet and decode one keyframe at a
 * time. `-discard nokey` has the demuxer drop them first where it can (MP4 by
 * its sync-sample table, FLV); the keyframes then decode side by side on the
 * decoder's threads. The same frames come out (measured on the bench's 5-minute
 * 1080p30 source: identical raw output; the measuring pass 3.9-4.2 s -> 1.9-2.0 s
 * wall on 2 cores, less CPU too). Demuxers that ignore it (Matroska, MPEG-TS)
 * behave as before, and `-skip_frame` still holds where a container's flags
 * call a frame key that is not.
 */
export const KEYFRAMES_ONLY_INPUT: readonly string[] = ["-discard:v", "nokey", "-skip_frame:v", "nokey"];

/** The sampled pass's frame selection: select (not fps) keeps each kept frame's own timestamp, so a cut is never dated before it happens. */
export const SAMPLED_FILTER = `select='isnan(prev_selected_t)+gte(t-prev_selected_t,${(1 / SAMPLED_FPS).toFixed(3)})'`;

async function framePass(
  runner: FfmpegRunner,
  source: SourceInfo,
  mode: VideoFrames["mode"],
  opts: PassOptions,
): Promise<VideoFrames> {
  const rawPath = join(dirname(source.path), `analysis-${mode}-${scratchTag()}.gray`);
  const times: number[] = [];
  const report = progressFrom(source, opts.onProgress);
  const onLine = (line: string): void => {
    const t = parseShowinfoTime(line);
    if (t === null) return;
    times.push(t);
    report(t);
  };
  const scale = `scale=${THUMB_WIDTH}:${THUMB_HEIGHT}:flags=area,format=gray,showinfo`;
  const filter = mode === "keyframes" ? scale : `${SAMPLED_FILTER},${scale}`;
  try {
    const result = await runner.ffmpeg({
      args: [
        "-nostdin", "-hide_banner", "-nostats", "-loglevel", "info",
        "-protocol_whitelist", "file",
        ...(mode === "keyframes" ? KEYFRAMES_ONLY_INPUT : []),
        ...windowArgs(source),
        "-f", pinnedDemuxer(source.format),
        "-i", source.path,
        "-map", "0:v:0", "-an", "-sn", "-dn",
        "-vf", filter,
        "-fps_mode", "passthrough",
        "-f", "rawvideo", "-y", rawPath,
      ],
      inputs: [source.path],
      outputs: [rawPath],
      timeoutMs: analysisTimeoutMs(source),
      signal: opts.signal,
      onStderrLine: onLine,
    });
    failOnExit("video analysis", result);
    const raw = await readFile(rawPath);
    const frameBytes = THUMB_WIDTH * THUMB_HEIGHT;
    const count = Math.min(times.length, Math.floor(raw.length / frameBytes));
    const pixels: Uint8Array[] = [];
    for (let i = 0; i < count; i++) pixels.push(new Uint8Array(raw.buffer, raw.byteOffset + i * frameBytes, frameBytes));
    opts.onProgress(1);
    return { times: times.slice(0, count), pixels, mode };
  } finally {
    await rm(rawPath, { force: true });
  }
}

export function keyframesAreSparse(frames: VideoFrames, durationSeconds: number): boolean {
  if (durationSeconds < 2 * SPARSE_KEYFRAME_GAP) return frames.times.length < 2;
  return durationSeconds / Math.max(1, frames.times.length) > SPARSE_KEYFRAME_GAP;
}

/**
 * The sampled pass over the finished file: every frame decoded, two a second
 * kept. For a source whose keyframes turned out too sparse to see scenes
 * (analyse/index.ts); sources without audio get it from the measuring pass.
 */
export function sampledFramesPass(runner: FfmpegRunner, source: SourceInfo, opts: PassOptions): Promise<VideoFrames> {
  return framePass(runner, source, "sampled", opts);
}

/**
 * The exact time of a cut known to lie in (after, at]: decodes just that span
 * (every frame, small and grey) and returns the time of the frame that differs
 * most from the one before it. Costs a fraction of a second per cut, so it is
 * only used for the cuts that become clip boundaries or crop changes.
 */
export async function exactCut(
  runner: FfmpegRunner,
  source: SourceInfo,
  span: { after: number; at: number },
  signal: AbortSignal,
): Promise<number> {
  const rawPath = join(dirname(source.path), `analysis-cut-${Math.round(span.at * 1000)}-${scratchTag()}.gray`);
  const times: number[] = [];
  try {
    const result = await runner.ffmpeg({
      args: [
        "-nostdin", "-hide_banner", "-nostats", "-loglevel", "info",
        "-protocol_whitelist", "file",
        "-ss", ((source.seekSeconds ?? 0) + span.after).toFixed(6),
        "-f", pinnedDemuxer(source.format),
        "-i", source.path,
        "-t", (span.at - span.after + 0.001).toFixed(6),
        "-map", "0:v:0", "-an", "-sn", "-dn",
        "-vf", `scale=${THUMB_WIDTH}:${THUMB_HEIGHT}:flags=area,format=gray,showinfo`,
        "-fps_mode", "passthrough",
        "-f", "rawvideo", "-y", rawPath,
      ],
      inputs: [source.path],
      outputs: [rawPath],
      timeoutMs: 60_000 + (span.at - span.after) * 20_000,
      signal,
      onStderrLine: (line) => {
        const t = parseShowinfoTime(line);
        if (t !== null) times.push(span.after + t);
      },
    });
    failOnExit("cut refinement", result);
    const raw = await readFile(rawPath);
    const frameBytes = THUMB_WIDTH * THUMB_HEIGHT;
    const count = Math.min(times.length, Math.floor(raw.length / frameBytes));
    let best = { time: span.at, change: -1 };
    for (let i = 1; i < count; i++) {
      let change = 0;
      for (let p = 0; p < frameBytes; p++) change += Math.abs(raw[i * frameBytes + p]! - raw[(i - 1) * frameBytes + p]!);
      if (change > best.change) best = { time: times[i]!, change };
    }
    return best.time;
  } finally {
    await rm(rawPath, { force: true });
  }
}
