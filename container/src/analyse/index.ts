/**
 * Analysis: one measuring pass over the source (measure.ts: one decode feeds
 * loudness, pauses, voice activity and the keyframes; run while the source
 * downloads when it can be, early.ts), turned into per-bin features, then the
 * video_type's strategy proposes scored windows and the best non-overlapping
 * ones become the candidates, best first.
 *
 * Types that need speech: podcast and lecture clips are cut on speech. A
 * source without it (no audio track, a silent track, or only music and noise
 * to the speech model) fails them with no_clips_found saying so. Every other
 * type clips on what can be seen and heard: gaming and sports on loudness
 * and motion peaks, vlog and general on loudness, motion and scene changes
 * (their speech signals' weight moves to those, strategies/blend.ts).
 *
 * Speech: when the speech model loads (speech-model.ts), speech and pauses
 * come from voice activity (vad.ts) on mono 16 kHz audio written by the same
 * pass, so a music bed or room noise between phrases neither hides the
 * pauses nor counts as speech. Without a transcript, clip edges go only in
 * pauses between sentences (features.ts SENTENCE_PAUSE_SECONDS); the quiet
 * stretches are handed on (onQuiet) so edges moved onto a transcript's
 * sentences land where no one speaks (sentence-cuts.ts). When the model
 * cannot load, speech and pauses come from loudness and silence as before
 * (the job's step says so).
 *
 * A source with nothing worth clipping (silent and static, or shorter than
 * min_clip_seconds, or no window scoring at least MIN_SCORE) fails with
 * NoClipsFoundError instead of returning noise.
 */
import { dirname } from "node:path";
import type { ClipConfig, VideoType } from "#contract";
import type { FfmpegRunner } from "../ffmpeg/runner.ts";
import type { Candidate, CropSegment, SourceInfo, StageProgress } from "../shared/types.ts";
import { buildFeatures, emphaticMoments, hasSpeech, type Features } from "./features.ts";
import { analyseFrames, type SceneActivity } from "./frames.ts";
import { applyExactCuts, refineCuts, withoutOverlaps } from "./refine.ts";
import { pickBest, type ScoredWindow } from "./select.ts";
import { pinnedDemuxer } from "../source/probe.ts";
import { audioSignals, measure, type MeasurePlan, type Measurements, type SpeechPcm } from "./measure.ts";
import { analysisTimeoutMs, keyframesAreSparse, sampledFramesPass, windowArgs, type Interval } from "./signals.ts";
import { loadSpeechModel, type SpeechModel } from "./speech-model.ts";
import { STRATEGIES } from "./strategies/index.ts";
import { round3 } from "../shared/round.ts";

export class NoClipsFoundError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "NoClipsFoundError";
  }
}

/** Windows scoring below this are not worth a clip. */
const MIN_SCORE = 0.2;
/** Motion below this everywhere (with no cuts) means a static picture. */
const STATIC_MOTION = 0.05;
/** Share of the stage's progress that the measuring pass stands for (the rest: cut refinement, a sampled pass). */
const MEASURE_SHARE = 0.9;

export interface AnalyseOptions {
  signal: AbortSignal;
  onProgress: StageProgress;
  /**
   * The speech model: omitted, the process's model is loaded (loadSpeechModel);
   * null, speech comes from loudness and silence (the fallback).
   */
  speech?: SpeechModel | null;
  /** Told where the audio has speech (between pauses), for speech-to-text to send only those parts. */
  onSpeech?: (spans: { start: number; end: number }[]) => void;
  /** The moments of vocal emphasis (features.ts emphaticMoments), for punch-in zooms. */
  onEmphasis?: (spans: { start: number; end: number }[]) => void;
  /**
   * Told the pass's speech PCM (measure.ts SpeechPcm) when it wrote one, for
   * the transcript to cut its chunks from; the file lives until the job's work
   * directory goes. Given, the pass keeps the PCM it would otherwise remove.
   */
  onPcm?: (pcm: SpeechPcm) => void;
  /** Told where no one speaks (the speech model's quiet stretches; null when it did not run), for snapping edges to sentences. */
  onQuiet?: (quiet: Interval[] | null) => void;
  /** Told the source's keyframe times when the video pass read keyframes (null when it sampled frames instead). */
  onKeyframes?: (times: number[] | null) => void;
  /** Told every window the strategy scored: the video type's signal, for ranking a prompt's clips (steer/prompt.ts). */
  onWindows?: (windows: ScoredWindow[]) => void;
  /**
   * Measurements already taken while the source downloaded (early.ts): asked
   * with the plan this analysis needs, it answers them when they were taken
   * with that plan over the same file, else null (then the source is measured
   * here).
   */
  measured?: (plan: MeasurePlan, onSeconds: (seconds: number) => void) => Promise<Measurements | null>;
}

/** How a source is measured: the probed container, keyframes unless motion is all there is to go by. */
export function measurePlan(source: SourceInfo, videoType: VideoType, speech: boolean): MeasurePlan {
  return {
    demuxer: pinnedDemuxer(source.format),
    hasAudio: source.hasAudio,
    // Without audio, motion is the only sign of excitement, and keyframes seconds apart miss short bursts of it.
    frames: !source.hasAudio && videoType !== "lecture" ? "sampled" : "keyframes",
    speech: source.hasAudio && speech,
  };
}

/** Sound between the pauses: where speech can be. */
function soundSpans(features: Features): { start: number; end: number }[] {
  const spans: { start: number; end: number }[] = [];
  let at = 0;
  for (const pause of [...features.pauses].sort((a, b) => a.start - b.start)) {
    if (pause.start > at) spans.push({ start: at, end: pause.start });
    at = Math.max(at, pause.end);
  }
  if (at < features.duration) spans.push({ start: at, end: features.duration });
  return spans;
}

/** One crop centre per scene overlapping the clip, in source seconds. */
function cropPlan(scenes: SceneActivity[], start: number, end: number): CropSegment[] {
  return scenes
    .filter((scene) => scene.end > start && scene.start < end)
    .map((scene) => ({
      fromSeconds: Math.max(start, scene.start),
      toSeconds: Math.min(end, scene.end),
      centerX: round3(scene.centerX),
      centerY: round3(scene.centerY),
    }));
}

/** Whether a clip may be framed on its region of activity (auto and faces fall back to it; center and fit never crop on it). */
function followsActivity(config: Pick<ClipConfig, "reframe">): boolean {
  return config.reframe === "auto" || config.reframe === "faces";
}

/**
 * A source with speech that is long enough for a clip but where nothing
 * stood out (a short recording of continuous talk): its best span anyway,
 * ranked low and saying so, rather than no clip. With no window at all (no
 * pause to cut in), its opening max_clip_seconds.
 */
export function bestAvailable(windows: ScoredWindow[], limits: { min: number; max: number; duration: number }): ScoredWindow {
  const best = pickBest(windows, 1, 0)[0];
  const span = best ?? { start: 0, end: Math.min(limits.duration, limits.max), score: 0, reasons: [] };
  return { start: span.start, end: span.end, score: Math.min(span.score, MIN_SCORE / 2), reasons: [BEST_AVAILABLE_REASON, ...span.reasons.filter((r) => r !== BEST_AVAILABLE_REASON)] };
}

/** The reason of a clip that is only the best span of a source where nothing stood out. */
export const BEST_AVAILABLE_REASON = "best_available";

function isSilentAndStatic(features: Features): boolean {
  const moving = features.motion.values.some((m) => m >= STATIC_MOTION);
  return !features.audible && !moving && features.sceneChanges.length === 0;
}

export async function analyse(
  runner: FfmpegRunner,
  source: SourceInfo,
  videoType: VideoType,
  config: ClipConfig,
  opts: AnalyseOptions,
): Promise<Candidate[]> {
  const duration = source.durationSeconds;
  if (duration < config.min_clip_seconds) {
    throw new NoClipsFoundError(
      `The video is ${Math.round(duration)} s long, shorter than the ${config.min_clip_seconds} s minimum clip length.`,
    );
  }
  const strategy = STRATEGIES[videoType];
  if (strategy.requiresSpeech && !source.hasAudio) {
    throw new NoClipsFoundError(`The video has no audio track; ${videoType} clips are cut on speech.`);
  }

  let reported = 0;
  const report = (fraction: number) => {
    if (fraction > reported) {
      reported = fraction;
      opts.onProgress(Math.min(1, fraction));
    }
  };
  const onSeconds = (seconds: number) => report((MEASURE_SHARE * seconds) / Math.max(duration, 0.001));
  let model: SpeechModel | null = null;
  if (source.hasAudio) {
    if (opts.speech !== undefined) model = opts.speech;
    else {
      const loaded = await loadSpeechModel();
      model = "model" in loaded ? loaded.model : null;
    }
  }
  const plan = measurePlan(source, videoType, model !== null);
  const measured =
    (opts.measured ? await opts.measured(plan, onSeconds) : null) ??
    (await measure(runner, { path: source.path, windowArgs: windowArgs(source) }, plan, {
      signal: opts.signal,
      model,
      workDir: dirname(source.path),
      keepPcm: opts.onPcm !== undefined,
      timeoutMs: analysisTimeoutMs(source),
      onSeconds,
    }));
  let frames = measured.frames;
  if (frames.mode === "keyframes" && keyframesAreSparse(frames, duration)) {
    // Keyframes too far apart to see scenes: every frame decoded, two a second kept (a second pass over the file).
    frames = await sampledFramesPass(runner, source, { signal: opts.signal, onProgress: (f) => report(MEASURE_SHARE + f * (1 - MEASURE_SHARE)) });
  }
  opts.onKeyframes?.(frames.mode === "keyframes" ? frames.times : null);
  const audio = measured.audio ? audioSignals(measured.audio, duration) : null;
  if (measured.audio?.pcm) opts.onPcm?.(measured.audio.pcm);

  const frameAnalysis = analyseFrames(frames, duration);
  const features = buildFeatures(duration, audio, frameAnalysis, frames.times);
  if (features.hasAudio && features.audible) opts.onSpeech?.(soundSpans(features));
  if (features.hasAudio && features.audible) opts.onEmphasis?.(emphaticMoments(features));
  opts.onQuiet?.(features.quiet);
  if (isSilentAndStatic(features)) {
    throw new NoClipsFoundError("The video is silent and its picture does not change: there is no moment worth clipping.");
  }
  if (strategy.requiresSpeech && !features.audible) {
    throw new NoClipsFoundError(`The audio track is silent; ${videoType} clips are cut on speech.`);
  }
  if (strategy.requiresSpeech && !hasSpeech(features)) {
    throw new NoClipsFoundError(`No speech was found in the audio (only music or noise); ${videoType} clips are cut on speech.`);
  }

  const limits = { min: config.min_clip_seconds, max: config.max_clip_seconds, duration };
  const windows: ScoredWindow[] = strategy.windows(features, limits);
  opts.onWindows?.(windows);
  let picked = pickBest(windows, config.max_clips, MIN_SCORE);
  if (picked.length === 0 && hasSpeech(features)) picked = [bestAvailable(windows, limits)];
  if (picked.length === 0) {
    throw new NoClipsFoundError(`No moment in the video stood out enough for a ${videoType} clip.`);
  }
  const exact = await refineCuts(runner, source, frameAnalysis, picked, followsActivity(config), opts.signal);
  const chosen = withoutOverlaps(picked.map((w) => applyExactCuts(w, exact, limits)));
  const moved = (t: number) => exact.get(t) ?? t;
  const scenes = features.scenes.map((s) => ({ ...s, start: moved(s.start), end: moved(s.end) }));
  opts.onProgress(1);
  return chosen.map((w) => ({
    // Exact times (not rounded): a lecture clip that ends on a cut must not take the new slide's first frame.
    start: w.start,
    end: w.end,
    score: w.score,
    reasons: w.reasons.slice(0, 8),
    ...(followsActivity(config) ? { crop: cropPlan(scenes, w.start, w.end) } : {}),
  }));
}
