/** vlog: a balanced mix of speech continuity, motion and scene changes. */
import { blendWindows } from "./blend.ts";
import type { Strategy } from "./strategy.ts";

export const vlog: Strategy = {
  requiresSpeech: false,
  windows: (features, limits) =>
    blendWindows(features, limits, {
      speech_density: 0.3,
      vocal_emphasis: 0.1,
      loudness_peak: 0.1,
      motion_burst: 0.2,
      scene_change: 0.2,
      length: 0.1,
    }),
};
