/**
 * podcast: speech-driven. Clips start and end inside pauses between
 * sentences (features.edgePauses: never mid-phrase, never in a hesitation)
 * and are scored on speech density and vocal emphasis; scene cuts are
 * ignored.
 */
import { emphasisIn } from "../features.ts";
import { boundaryPairs, clamp01, endInPause, lengthFit, scoreWith, startInPause } from "../select.ts";
import type { Strategy } from "./strategy.ts";

/** Windows with less sound than this are mostly silence, not conversation. */
const MIN_VOICED = 0.4;

export const podcast: Strategy = {
  requiresSpeech: true,
  windows(features, limits) {
    let pairs = boundaryPairs(features.edgePauses.map(startInPause), features.edgePauses.map(endInPause), limits);
    // Talk with no pause between sentences within the maximum length: the shorter pauses are all there is.
    if (pairs.length === 0) pairs = boundaryPairs(features.pauses.map(startInPause), features.pauses.map(endInPause), limits);
    return pairs.flatMap(({ start, end }) => {
      const voiced = features.voiced.mean(start, end);
      if (voiced < MIN_VOICED) return [];
      const density = clamp01((voiced - 0.3) / 0.55);
      const emphasis = emphasisIn(features, start, end);
      const { score, reasons } = scoreWith(
        { speech_density: 0.5 * density, vocal_emphasis: 0.35 * emphasis },
        0.15 * lengthFit(end - start, limits),
      );
      return [{ start, end, score, reasons: [...reasons, "pause_bounded"] }];
    });
  },
};
