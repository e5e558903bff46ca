/**
 * lecture: slides and screens. Clips start and end on scene changes (slide
 * changes) and are scored on continuous speech. When no run of slides fits
 * the configured length, clips start on a slide change and end in a pause;
 * failing that, they run between pauses. With the speech model, slide
 * changes that fall inside speech are not used as edges (they would cut a
 * sentence).
 */
import { cutsBetweenSpeech, type Features } from "../features.ts";
import { boundaryPairs, clamp01, endInPause, lengthFit, scoreWith, startInPause, type Interval, type Limits } from "../select.ts";
import type { Strategy } from "./strategy.ts";

function near(time: number, points: number[]): boolean {
  return points.some((p) => Math.abs(p - time) < 0.05);
}

function score(features: Features, limits: Limits, { start, end }: Interval) {
  const changes = features.sceneChanges;
  const aligned = (near(start, changes) || start === 0 ? 0.5 : 0) + (near(end, changes) || end >= limits.duration ? 0.5 : 0);
  const density = features.hasAudio ? clamp01((features.voiced.mean(start, end) - 0.3) / 0.55) : 0;
  const emphasis = clamp01(features.emphasis.mean(start, end) / 0.3);
  const result = scoreWith(
    { speech_density: 0.45 * density, scene_change: 0.25 * aligned, vocal_emphasis: 0.15 * emphasis },
    0.15 * lengthFit(end - start, limits),
  );
  return { start, end, ...result };
}

export const lecture: Strategy = {
  requiresAudio: false,
  windows(features, limits) {
    // A slide change while the lecturer is mid-sentence (when the speech model can tell) is not an edge.
    const slides = cutsBetweenSpeech(features);
    const slideStarts = [0, ...slides];
    const slideEnds = [...slides, limits.duration];
    let pairs = boundaryPairs(slideStarts, slideEnds, limits);
    if (pairs.length === 0) pairs = boundaryPairs(slideStarts, features.pauses.map(endInPause), limits);
    if (pairs.length === 0) pairs = boundaryPairs(features.pauses.map(startInPause), features.pauses.map(endInPause), limits);
    return pairs.map((pair) => score(features, limits, pair));
  },
};
