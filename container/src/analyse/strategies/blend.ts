/**
 * Shared by vlog and general: windows bounded by natural edges (pauses
 * between sentences and scene changes outside speech, so speech is not cut
 * mid-phrase), falling back to a grid when the source has neither (music,
 * continuous noise), scored by a weighted blend of every signal.
 *
 * Without speech (music, travel footage, b-roll, no audio track) the speech
 * signals have nothing to measure: their weight goes to the signals that
 * remain (loudness, motion, scene changes) in proportion, so the score keeps
 * its scale and a source that moves and swells clips as well as one that
 * talks.
 */
import { cutsBetweenSpeech, emphasisIn, hasSpeech, type Features } from "../features.ts";
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

/** The weights for a source without speech: the speech signals' share spread over the others. */
export function withoutSpeech(weights: BlendWeights): BlendWeights {
  const speech = weights.speech_density + weights.vocal_emphasis;
  const rest = weights.loudness_peak + weights.motion_burst + weights.scene_change;
  const scale = rest > 0 ? (rest + speech) / rest : 1;
  return {
    speech_density: 0,
    vocal_emphasis: 0,
    loudness_peak: weights.loudness_peak * scale,
    motion_burst: weights.motion_burst * scale,
    scene_change: weights.scene_change * scale,
    length: weights.length,
  };
}

export function blendWindows(features: Features, limits: Limits, given: BlendWeights): ScoredWindow[] {
  const weights = hasSpeech(features) ? given : withoutSpeech(given);
  // Scene changes during speech (when the speech model can tell) would cut a sentence: not edges.
  const cuts = cutsBetweenSpeech(features);
  const starts = [0, ...cuts, ...features.edgePauses.map(startInPause)];
  const ends = [limits.duration, ...cuts, ...features.edgePauses.map(endInPause)];
  let pairs = boundaryPairs(starts, ends, limits);
  // Talk with no pause between sentences within the maximum length: the shorter pauses, then a grid (continuous music or noise).
  if (pairs.length === 0) pairs = boundaryPairs(features.pauses.map(startInPause), features.pauses.map(endInPause), limits);
  if (pairs.length === 0) pairs = gridPairs(limits);
  return pairs.map(({ start, end }) => {
    const density = clamp01((features.voiced.mean(start, end) - 0.3) / 0.55);
    const speech = weights.speech_density + weights.vocal_emphasis > 0;
    const { score, reasons } = scoreWith(
      {
        ...(speech
          ? {
              speech_density: weights.speech_density * density,
              vocal_emphasis: weights.vocal_emphasis * emphasisIn(features, start, end),
            }
          : {}),
        loudness_peak: weights.loudness_peak * features.loudPeak.peak(start, end).value,
        motion_burst: weights.motion_burst * clamp01(features.motion.mean(start, end) / 0.4),
        scene_change: weights.scene_change * cutRate(features, start, end),
      },
      weights.length * lengthFit(end - start, limits),
    );
    return { start, end, score, reasons };
  });
}
