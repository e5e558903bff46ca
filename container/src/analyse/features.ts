/**
 * Per-bin feature series (BIN seconds each) built from the raw signals, with
 * prefix sums so any window's mean is O(1). Every feature is scaled to 0-1
 * against fixed, documented references, so scores mean the same thing on
 * every source (a quiet source does not get inflated scores).
 */
import type { FrameAnalysis, SceneActivity } from "./frames.ts";
import { LOUDNESS_FLOOR, LOUDNESS_HOP, type AudioSignals, type Interval } from "./signals.ts";

export const BIN = 0.5;
/** Momentary loudness this far above the typical speech level counts as fully emphasised. */
const EMPHASIS_RANGE_LU = 6;
/** Loudness this far above the source's median counts as a full peak (after a 4 LU dead zone). */
const PEAK_RANGE_LU = 12;
const PEAK_DEAD_ZONE_LU = 4;
/** Mean thumbnail pixel change treated as full motion (a brisk pan or fast action). */
const FULL_MOTION = 0.06;
/** Anything quieter than this is not sound worth clipping (LUFS). */
export const AUDIBLE_LUFS = -50;

export class Series {
  readonly values: Float64Array;
  private readonly prefix: Float64Array;
  constructor(values: Float64Array) {
    this.values = values;
    this.prefix = new Float64Array(values.length + 1);
    for (let i = 0; i < values.length; i++) this.prefix[i + 1] = this.prefix[i]! + values[i]!;
  }
  /** Mean over the bins covering [start, end) seconds. */
  mean(start: number, end: number): number {
    const from = Math.max(0, Math.floor(start / BIN));
    const to = Math.min(this.values.length, Math.max(from + 1, Math.ceil(end / BIN)));
    return (this.prefix[to]! - this.prefix[from]!) / Math.max(1, to - from);
  }
  sum(start: number, end: number): number {
    const from = Math.max(0, Math.floor(start / BIN));
    const to = Math.min(this.values.length, Math.max(from + 1, Math.ceil(end / BIN)));
    return this.prefix[to]! - this.prefix[from]!;
  }
  /** Index and value of the largest bin in [start, end). */
  peak(start: number, end: number): { time: number; value: number } {
    const from = Math.max(0, Math.floor(start / BIN));
    const to = Math.min(this.values.length, Math.max(from + 1, Math.ceil(end / BIN)));
    let best = from;
    for (let i = from; i < to; i++) if (this.values[i]! > this.values[best]!) best = i;
    return { time: (best + 0.5) * BIN, value: this.values[best] ?? 0 };
  }
  /** The largest mean over `width` seconds inside [start, end) (the whole window's mean when it is shorter). */
  sustained(start: number, end: number, width: number): number {
    const from = Math.max(0, Math.floor(start / BIN));
    const to = Math.min(this.values.length, Math.max(from + 1, Math.ceil(end / BIN)));
    const span = Math.max(1, Math.min(to - from, Math.round(width / BIN)));
    let best = 0;
    for (let i = from; i + span <= to; i++) best = Math.max(best, this.prefix[i + span]! - this.prefix[i]!);
    return best / span;
  }
}

export interface Features {
  duration: number;
  hasAudio: boolean;
  /** Fraction of each bin that is sound, not pause (0 without audio). */
  voiced: Series;
  /** How far above the typical speech level each voiced bin is (0-1). */
  emphasis: Series;
  /** How far above the source's median loudness each bin is (0-1): bursts, cheers, shouts. */
  loudPeak: Series;
  /** Motion between frames (0-1). */
  motion: Series;
  /** Scene changes per bin. */
  cuts: Series;
  /** Pauses (source seconds, at least 0.3 s each); empty without audio. */
  pauses: Interval[];
  sceneChanges: number[];
  scenes: SceneActivity[];
  /** True when any bin is audible. */
  audible: boolean;
  /**
   * How speech and pauses were found: "voice" by the speech model (music and
   * noise are not speech), "loudness" from loudness and silence (the fallback,
   * where any sound counts as speech), "none" without audio.
   */
  speechSource: "voice" | "loudness" | "none";
  /** Seconds of speech the speech model found (null unless speechSource is "voice"). */
  speechSeconds: number | null;
  /** Speech segments from the speech model (empty unless speechSource is "voice"). */
  speech: Interval[];
  /** Where the speech model heard no one (vad.ts quietStretches); null unless speechSource is "voice". */
  quiet: Interval[] | null;
  /**
   * Pauses a clip may start or end in when only the audio can tell (no
   * transcript): with the speech model, quiet stretches of at least
   * SENTENCE_PAUSE_SECONDS (between sentences, not between words); without
   * it, the pauses above. Empty without audio.
   */
  edgePauses: Interval[];
}

/**
 * The rule for clip edges from speech detection alone: a pause between
 * sentences is a quiet stretch (no frame of the speech model reaching its
 * speech threshold, faded below its quiet threshold at both ends; vad.ts) of
 * at least this long. Hesitations inside a sentence are shorter: on the test
 * conversations a 0.6 s hesitation measures at most 0.48 s, and the quiet
 * stretch of a pause measures about 0.1 s less than the silence itself.
 */
export const SENTENCE_PAUSE_SECONDS = 0.55;
/** An edge placed inside a quiet stretch keeps this far from its ends (they are accurate to about 0.07 s). */
export const QUIET_MARGIN_SECONDS = 0.1;
/** How long the most emphatic stretch of a window that counts is (an exchange of two or three sentences). */
const EMPHATIC_SECONDS = 5;

/**
 * Vocal emphasis of a window (0-1): half its mean emphasis, half its most
 * emphatic EMPHATIC_SECONDS, so a heated exchange is not diluted by the calm
 * talk around it and a clip can keep a natural length around it.
 */
export function emphasisIn(features: Features, start: number, end: number): number {
  return clamp01(0.5 * (features.emphasis.mean(start, end) / 0.3) + 0.5 * (features.emphasis.sustained(start, end, EMPHATIC_SECONDS) / 0.6));
}

/** Less speech than this in the whole source (seconds) is no speech: a stray shout in a song, a cough. */
export const MIN_SPEECH_SECONDS = 2;

/** A half-second counts as an emphatic moment (for punch-in zooms) from this emphasis on: 4.5 LU above the typical speech level. */
const EMPHATIC_MOMENT = 0.5;

/**
 * The moments of vocal emphasis, in the analysed window's seconds: runs of
 * half-second bins whose voiced loudness stands EMPHATIC_MOMENT above the
 * speech level (the same measure that ranks windows, emphasisIn).
 */
export function emphaticMoments(features: Features): { start: number; end: number }[] {
  const out: { start: number; end: number }[] = [];
  features.emphasis.values.forEach((value, b) => {
    if (value < EMPHATIC_MOMENT) return;
    const start = b * BIN;
    const last = out.at(-1);
    if (last && last.end >= start - 1e-9) last.end = Math.min(features.duration, start + BIN);
    else out.push({ start, end: Math.min(features.duration, start + BIN) });
  });
  return out;
}

/**
 * Whether the source has speech to cut on: with the speech model, at least
 * MIN_SPEECH_SECONDS of it; without the model, any audible sound (the
 * fallback cannot tell a voice from music); never without audio.
 */
export function hasSpeech(features: Features): boolean {
  if (features.speechSource === "voice") return (features.speechSeconds ?? 0) >= MIN_SPEECH_SECONDS;
  return features.speechSource === "loudness" && features.audible;
}

/**
 * A scene change (a hard edge in the picture) may sit this close to where a
 * quiet stretch begins: the stretch begins about 0.1 s after the voice stops
 * (the model's probability fades), so a slide change as the speaker finishes
 * still counts as in the pause.
 */
const CUT_LEAD_SECONDS = 0.1;
/** ...and must be this far before it ends (the stretch ends within about 0.03 s of where the voice resumes). */
const CUT_TAIL_SECONDS = 0.05;

/**
 * Scene changes usable as clip edges. A change while someone is speaking
 * would cut a sentence: with the speech model, and speech in the source, a
 * change is only an edge inside a pause between sentences (edgePauses, see
 * CUT_LEAD_SECONDS and CUT_TAIL_SECONDS for its ends). Without the model
 * nothing can tell, and without speech every change is an edge.
 */
export function cutsBetweenSpeech(features: Features): number[] {
  if (features.quiet === null || !hasSpeech(features)) return features.sceneChanges;
  return features.sceneChanges.filter((t) => features.edgePauses.some((p) => t >= p.start - CUT_LEAD_SECONDS && t <= p.end - CUT_TAIL_SECONDS));
}

function quantile(values: number[], q: number): number {
  if (values.length === 0) return LOUDNESS_FLOOR;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!;
}

function clamp01(value: number): number {
  return Math.min(1, Math.max(0, value));
}

/** Mean loudness (LUFS, averaged as power) of the loudness slots inside each bin. */
function binLevels(audio: AudioSignals, bins: number): Float64Array {
  const levels = new Float64Array(bins).fill(LOUDNESS_FLOOR);
  const perBin = Math.round(BIN / LOUDNESS_HOP);
  for (let b = 0; b < bins; b++) {
    let power = 0;
    let count = 0;
    for (let s = b * perBin; s < (b + 1) * perBin && s < audio.loudness.length; s++) {
      power += 10 ** (audio.loudness[s]! / 10);
      count++;
    }
    if (count > 0) levels[b] = Math.max(LOUDNESS_FLOOR, 10 * Math.log10(power / count));
  }
  return levels;
}

/** A dip this far below the typical level counts as a pause when silencedetect hears none (a noisy room). */
const DIP_BELOW_TYPICAL_LU = 10;
/** ...if it lasts at least this long (in loudness slots of LOUDNESS_HOP). */
const DIP_MIN_SLOTS = 3;

/**
 * Pauses as dips of momentary loudness relative to the source's typical level,
 * for recordings whose room noise sits above silencedetect's fixed threshold.
 */
export function loudnessDips(loudness: Float32Array): Interval[] {
  const audible = [...loudness].filter((l) => l > AUDIBLE_LUFS);
  if (audible.length === 0) return [];
  const threshold = quantile(audible, 0.5) - DIP_BELOW_TYPICAL_LU;
  const dips: Interval[] = [];
  let runStart = -1;
  for (let i = 0; i <= loudness.length; i++) {
    const quiet = i < loudness.length && loudness[i]! < threshold;
    if (quiet && runStart < 0) runStart = i;
    if (!quiet && runStart >= 0) {
      if (i - runStart >= DIP_MIN_SLOTS) dips.push({ start: runStart * LOUDNESS_HOP, end: i * LOUDNESS_HOP });
      runStart = -1;
    }
  }
  return dips;
}

/** silencedetect's pauses, or loudness dips when it found too few (fewer than one per 30 s). */
function choosePauses(audio: AudioSignals, duration: number): Interval[] {
  const heard = audio.silences.filter((p) => p.end - p.start >= 0.3);
  if (heard.length >= duration / 30) return heard;
  const dips = loudnessDips(audio.loudness);
  return dips.length > heard.length ? dips : heard;
}

/** A gap between speech segments this long is a pause (the same minimum as silencedetect's). */
const MIN_PAUSE_SECONDS = 0.3;

/**
 * Pauses from the speech model: every gap between speech segments of at least
 * MIN_PAUSE_SECONDS, the stretch before the first and after the last included.
 * Music or noise in the gap does not matter; a source without speech is one pause.
 */
export function speechPauses(segments: Interval[], duration: number): Interval[] {
  const pauses: Interval[] = [];
  let from = 0;
  for (const segment of [...segments, { start: duration, end: duration }]) {
    if (segment.start - from >= MIN_PAUSE_SECONDS) pauses.push({ start: from, end: Math.min(duration, segment.start) });
    from = Math.max(from, segment.end);
  }
  return pauses;
}

function voicedFractions(pauses: Interval[], bins: number): Float64Array {
  const voiced = new Float64Array(bins).fill(1);
  for (const pause of pauses) {
    const from = Math.max(0, Math.floor(pause.start / BIN));
    const to = Math.min(bins, Math.ceil(pause.end / BIN));
    for (let b = from; b < to; b++) {
      const overlap = Math.min(pause.end, (b + 1) * BIN) - Math.max(pause.start, b * BIN);
      voiced[b] = Math.max(0, voiced[b]! - overlap / BIN);
    }
  }
  return voiced;
}

export function buildFeatures(duration: number, audio: AudioSignals | null, frames: FrameAnalysis, frameTimes: number[]): Features {
  const bins = Math.max(1, Math.ceil(duration / BIN));
  const voiced = new Float64Array(bins);
  const emphasis = new Float64Array(bins);
  const loudPeak = new Float64Array(bins);
  let audible = false;
  let pauses: Interval[] = [];

  if (audio) {
    const levels = binLevels(audio, bins);
    // A bin is only sound if it is audible; silencedetect's threshold is absolute, this guards very quiet tracks.
    pauses = audio.speech ? speechPauses(audio.speech.segments, duration) : choosePauses(audio, duration);
    const fractions = voicedFractions(pauses, bins);
    for (let b = 0; b < bins; b++) voiced[b] = levels[b]! > AUDIBLE_LUFS ? fractions[b]! : 0;
    audible = levels.some((l) => l > AUDIBLE_LUFS);
    const voicedLevels = [...levels].filter((_, b) => voiced[b]! > 0.5);
    const speechLevel = quantile(voicedLevels, 0.5);
    const typical = quantile([...levels], 0.5);
    for (let b = 0; b < bins; b++) {
      if (voiced[b]! > 0.5) emphasis[b] = clamp01((levels[b]! - speechLevel - 1.5) / EMPHASIS_RANGE_LU);
      if (levels[b]! > AUDIBLE_LUFS) loudPeak[b] = clamp01((levels[b]! - typical - PEAK_DEAD_ZONE_LU) / PEAK_RANGE_LU);
    }
  }

  // Motion between frames i-1 and i is spread over the bins between their times.
  const motion = new Float64Array(bins);
  for (let i = 1; i < frames.motion.length; i++) {
    const from = Math.max(0, Math.floor(frameTimes[i - 1]! / BIN));
    const to = Math.min(bins, Math.max(from + 1, Math.ceil(frameTimes[i]! / BIN)));
    const value = clamp01(frames.motion[i]! / FULL_MOTION);
    for (let b = from; b < to; b++) motion[b] = Math.max(motion[b]!, value);
  }
  const cuts = new Float64Array(bins);
  for (const cut of frames.cuts) {
    const b = Math.min(bins - 1, Math.floor(cut / BIN));
    cuts[b]! += 1;
  }

  return {
    duration,
    hasAudio: audio !== null,
    voiced: new Series(voiced),
    emphasis: new Series(emphasis),
    loudPeak: new Series(loudPeak),
    motion: new Series(motion),
    cuts: new Series(cuts),
    pauses,
    sceneChanges: frames.cuts,
    scenes: frames.scenes,
    audible,
    speechSource: audio ? (audio.speech ? "voice" : "loudness") : "none",
    speechSeconds: audio?.speech ? audio.speech.speechSeconds : null,
    speech: audio?.speech?.segments ?? [],
    quiet: audio?.speech?.quiet ?? null,
    edgePauses: audio?.speech ? audio.speech.quiet.filter((q) => q.end - q.start >= SENTENCE_PAUSE_SECONDS) : pauses,
  };
}
