/**
 * The rule for clip edges from speech detection alone, on speech
 * probabilities written by hand: a pause between sentences is a quiet stretch
 * (no frame reaching the speech threshold, faded below the quiet threshold at
 * both ends) of at least SENTENCE_PAUSE_SECONDS; a hesitation is shorter, and
 * a word the model hears for a moment breaks a stretch even though the speech
 * segments drop it. Scene changes are edges only inside such pauses. Sources
 * without speech weigh what can be seen and heard instead.
 */
import { describe, expect, it } from "vitest";
import { BIN, buildFeatures, cutsBetweenSpeech, hasSpeech, SENTENCE_PAUSE_SECONDS, Series, type Features } from "../../src/analyse/features.ts";
import type { FrameAnalysis } from "../../src/analyse/frames.ts";
import { LOUDNESS_HOP } from "../../src/analyse/signals.ts";
import { podcast } from "../../src/analyse/strategies/podcast.ts";
import { withoutSpeech } from "../../src/analyse/strategies/blend.ts";
import { FRAME_SECONDS, quietStretches, speechSegments, type SpeechTrack } from "../../src/analyse/vad.ts";

/** Probabilities from a script of [seconds, probability] pieces. */
function probabilities(script: [number, number][]): Float32Array {
  const frames: number[] = [];
  for (const [seconds, p] of script) for (let i = 0; i < Math.round(seconds / FRAME_SECONDS); i++) frames.push(p);
  return Float32Array.from(frames);
}

const at = (script: [number, number][], index: number) => script.slice(0, index).reduce((t, [s]) => t + Math.round(s / FRAME_SECONDS) * FRAME_SECONDS, 0);

const NO_FRAMES: FrameAnalysis = { cuts: [], cutAfter: [], motion: [], scenes: [] };

function featuresOf(p: Float32Array, duration: number, frames: FrameAnalysis = NO_FRAMES): Features {
  const segments = speechSegments(p, duration);
  const track: SpeechTrack = { probabilities: p, segments, speechSeconds: segments.reduce((s, x) => s + x.end - x.start, 0), quiet: quietStretches(p, duration) };
  // Speech-level loudness everywhere: only the speech model decides what is a pause here.
  const loudness = new Float32Array(Math.ceil(duration / LOUDNESS_HOP)).fill(-20);
  return buildFeatures(duration, { loudness, silences: [], speech: track }, frames, frames.cuts);
}

describe("quiet stretches and pauses between sentences", () => {
  // Sentence, hesitation (0.4 s), rest of the sentence, a pause (0.9 s) with a fading start, next sentence,
  // a pause (1.0 s) broken by a word heard for 0.1 s, last sentence, then silence.
  const script: [number, number][] = [
    [0.5, 0.02], [3, 0.95], [0.4, 0.05], [2, 0.9], [0.1, 0.3], [0.8, 0.03], [3, 0.92], [0.45, 0.04], [0.1, 0.8], [0.45, 0.04], [2.5, 0.9], [1.5, 0.02],
  ];
  const p = probabilities(script);
  const duration = p.length * FRAME_SECONDS;
  const features = featuresOf(p, duration);

  it("a hesitation is quiet but not a pause between sentences; a word heard for a moment breaks a pause", () => {
    const quiet = quietStretches(p, duration);
    const hesitation = quiet.find((q) => Math.abs(q.start - at(script, 2)) < 0.05);
    expect(hesitation).toBeDefined();
    expect(hesitation!.end - hesitation!.start).toBeLessThan(SENTENCE_PAUSE_SECONDS);
    // The segments drop the 0.1 s word, so they see one long pause there; the quiet stretches do not.
    const gapAroundWord = { start: at(script, 7), end: at(script, 10) };
    const segmentsInside = speechSegments(p, duration).filter((s) => s.start > gapAroundWord.start + 0.05 && s.end < gapAroundWord.end - 0.05);
    expect(segmentsInside).toEqual([]);
    expect(quiet.filter((q) => q.start >= gapAroundWord.start - 0.05 && q.end <= gapAroundWord.end + 0.05).length).toBe(2);
    // The fading frames (0.3) after the second part are not quiet.
    const fade = at(script, 4);
    expect(quiet.some((q) => q.start <= fade && q.end > fade)).toBe(false);
  });

  it("edge pauses are the quiet stretches of at least SENTENCE_PAUSE_SECONDS, and podcast clips start and end only in them", () => {
    // The 0.5 s before the first word measures 0.48 s: too short as well.
    expect(features.edgePauses.map((q) => [Number(q.start.toFixed(2)), Number(q.end.toFixed(2))])).toEqual([
      [Number(at(script, 5).toFixed(2)), Number(at(script, 6).toFixed(2))],
      [Number(at(script, 11).toFixed(2)), Number(duration.toFixed(2))],
    ]);
    const windows = podcast.windows(features, { min: 5, max: 12, duration });
    expect(windows.length).toBeGreaterThan(0);
    const inEdgePause = (t: number) => features.edgePauses.some((q) => t >= q.start && t <= q.end);
    for (const w of windows) {
      expect(inEdgePause(w.start), `start ${w.start}`).toBe(true);
      expect(inEdgePause(w.end), `end ${w.end}`).toBe(true);
    }
  });

  it("a scene change is an edge only inside a pause between sentences (not in a hesitation, not mid-word)", () => {
    const hesitation = at(script, 2) + 0.2;
    const pause = at(script, 5) + 0.4;
    const speaking = at(script, 1) + 1.5;
    const frames: FrameAnalysis = { cuts: [speaking, hesitation, pause], cutAfter: [speaking - 0.1, hesitation - 0.1, pause - 0.1], motion: [0, 0, 0], scenes: [] };
    expect(cutsBetweenSpeech(featuresOf(p, duration, frames))).toEqual([pause]);
  });

  it("without speech every scene change is an edge, and blends weigh loudness, motion and cuts instead", () => {
    const music = probabilities([[30, 0.1]]);
    const frames: FrameAnalysis = { cuts: [8, 20], cutAfter: [7.5, 19.5], motion: [0, 0, 0], scenes: [] };
    const silentVoice = featuresOf(music, 30, frames);
    expect(hasSpeech(silentVoice)).toBe(false);
    expect(cutsBetweenSpeech(silentVoice)).toEqual([8, 20]);
    const weights = { speech_density: 0.3, vocal_emphasis: 0.1, loudness_peak: 0.1, motion_burst: 0.2, scene_change: 0.2, length: 0.1 };
    const moved = withoutSpeech(weights);
    expect(moved.speech_density + moved.vocal_emphasis).toBe(0);
    expect(moved.loudness_peak + moved.motion_burst + moved.scene_change).toBeCloseTo(0.9, 9);
    expect(moved.motion_burst / moved.loudness_peak).toBeCloseTo(2, 9);
  });
});

describe("sustained emphasis", () => {
  it("is the largest mean over the given seconds inside the window, or the window's mean when it is shorter", () => {
    // 30 s: calm, then 5 s fully emphatic from 10 s, then calm.
    const values = new Float64Array(30 / BIN);
    for (let b = 10 / BIN; b < 15 / BIN; b++) values[b] = 1;
    const series = new Series(values);
    expect(series.sustained(0, 30, 5)).toBeCloseTo(1, 9);
    expect(series.sustained(0, 30, 10)).toBeCloseTo(0.5, 9);
    expect(series.sustained(12, 14, 5)).toBeCloseTo(1, 9);
    expect(series.sustained(20, 30, 5)).toBe(0);
  });
});
