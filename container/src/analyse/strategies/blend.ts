/**
 * Shared by vlog and general: windows bounded by natural edges (pauses and
 * scene changes outside speech, so speech is not cut mid-phrase), falling back to a grid
 * when the source has neither (music, continuous noise), scored by a weighted
 * blend of every signal.
 */
import { cutsBetweenSpeech, type Features } from "../features.ts";
import { boundaryPairs, clamp01, endInPause, gridPairs, lengthFit, scoreWith, startInPause, type Limits, type ScoredWindow } from "../select.ts";
import { cutRate } from "./strategy.ts";

export interface BlendWeights {
  speech_density: number;
  vocal_emphasis: number;
  loudness_peak: number;
  motion_burst: number;
  scene_change: number;
  length: number;
}

export function blendWindows(features: Features, limits: Limits, weights: BlendWeights): ScoredWindow[] {
  // Scene changes during speech (when the speech model can tell) would cut a sentence: not edges.
  const cuts = cutsBetweenSpeech(features);
  const starts = [0, ...cuts, ...features.pauses.map(startInPause)];
  const ends = [limits.duration, ...cuts, ...features.pauses.map(endInPause)];
  let pairs = boundaryPairs(starts, ends, limits);
  if (pairs.length === 0) pairs = gridPairs(limits);
  return pairs.map(({ start, end }) => {
    const density = clamp01((features.voiced.mean(start, end) - 0.3) / 0.55);
    const { score, reasons } = scoreWith(
      {
        speech_density: weights.speech_density * density,
        vocal_emphasis: weights.vocal_emphasis * clamp01(features.emphasis.mean(start, end) / 0.3),
        loudness_peak: weights.loudness_peak * features.loudPeak.peak(start, end).value,
        motion_burst: weights.motion_burst * clamp01(features.motion.mean(start, end) / 0.4),
        scene_change: weights.scene_change * cutRate(features, start, end),
      },
      weights.length * lengthFit(end - start, limits),
    );
    return { start, end, score, reasons };
  });
}
