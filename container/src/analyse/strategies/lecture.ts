/**
 * lecture: slides and screens. Clips start and end on scene changes (slide
 * changes) and are scored on continuous speech. When no run of slides fits
 * the configured length, clips start on a slide change and end in a pause
 * between sentences, or start in one and end on a slide change; with no
 * slide changes at all (a talking head), or failing that, they run between
 * pauses. With the speech model, slide changes that fall inside speech are
 * not used as edges (they would cut a sentence). A lecture is cut on speech:
 * without it the analysis fails (index.ts), and a clip edge in a long
 * stretch without speech (a music intro, a silent title slide) moves to just
 * before the speech resumes, or just after it stops.
 */
import { cutsBetweenSpeech, emphasisIn, type Features } from "../features.ts";
import { boundaryPairs, clamp01, endInPause, lengthFit, scoreWith, startInPause, type Interval, type Limits } from "../select.ts";
import type { Strategy } from "./strategy.ts";

/** Silence at a clip's edge longer than this is dead air, not a slide's lead-in. */
const MAX_DEAD_AIR_SECONDS = 3;

function near(time: number, points: number[]): boolean {
  return points.some((p) => Math.abs(p - time) < 0.05);
}

function score(features: Features, limits: Limits, { start, end }: Interval) {
  const changes = features.sceneChanges;
  const aligned = (near(start, changes) || start === 0 ? 0.5 : 0) + (near(end, changes) || end >= limits.duration ? 0.5 : 0);
  const density = features.hasAudio ? clamp01((features.voiced.mean(start, end) - 0.3) / 0.55) : 0;
  const emphasis = emphasisIn(features, start, end);
  const result = scoreWith(
    { speech_density: 0.45 * density, scene_change: 0.25 * aligned, vocal_emphasis: 0.15 * emphasis },
    0.15 * lengthFit(end - start, limits),
  );
  return { start, end, ...result };
}

/** The pair with an edge in long dead air moved next to the speech (null when that leaves it too short). */
function withoutDeadAir(features: Features, limits: Limits, pair: Interval): Interval | null {
  let { start, end } = pair;
  for (const pause of features.edgePauses) {
    if (pause.end - pause.start <= MAX_DEAD_AIR_SECONDS) continue;
    if (start >= pause.start && start < pause.end) start = Math.max(start, startInPause(pause));
    if (end > pause.start && end <= pause.end) end = Math.min(end, endInPause(pause));
  }
  return end - start >= limits.min - 1e-9 ? { start, end } : null;
}

export const lecture: Strategy = {
  requiresSpeech: true,
  windows(features, limits) {
    // A slide change while the lecturer is mid-sentence (when the speech model can tell) is not an edge.
    const slides = cutsBetweenSpeech(features);
    const slideStarts = [0, ...slides];
    const slideEnds = [...slides, limits.duration];
    let pairs = boundaryPairs(slideStarts, slideEnds, limits);
    if (pairs.length === 0 && slides.length > 0) {
      pairs = [
        ...boundaryPairs(slideStarts, features.edgePauses.map(endInPause), limits),
        ...boundaryPairs(features.edgePauses.map(startInPause), slideEnds, limits),
      ];
    }
    if (pairs.length === 0) pairs = boundaryPairs(features.edgePauses.map(startInPause), features.edgePauses.map(endInPause), limits);
    if (pairs.length === 0) pairs = boundaryPairs(features.pauses.map(startInPause), features.pauses.map(endInPause), limits);
    const seen = new Set<string>();
    return pairs.flatMap((pair) => {
      const trimmed = withoutDeadAir(features, limits, pair);
      if (!trimmed || seen.has(`${trimmed.start}:${trimmed.end}`)) return [];
      seen.add(`${trimmed.start}:${trimmed.end}`);
      return [score(features, limits, trimmed)];
    });
  },
};
