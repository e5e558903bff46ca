/** general: the default blend when the content is unknown. */
import { blendWindows } from "./blend.ts";
import type { Strategy } from "./strategy.ts";

export const general: Strategy = {
  requiresSpeech: false,
  windows: (features, limits) =>
    blendWindows(features, limits, {
      speech_density: 0.25,
      vocal_emphasis: 0.15,
      loudness_peak: 0.2,
      motion_burst: 0.15,
      scene_change: 0.15,
      length: 0.1,
    }),
};
