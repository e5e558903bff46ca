/**
 * gaming: excitement. Loudness peaks (shouts, explosions) with bursts of
 * motion and cuts; the peak sits in the second half of the clip.
 */
import { clamp01, lengthFit, scoreWith } from "../select.ts";
import { excitement, peakWindows } from "./peaks.ts";
import { cutRate, type Strategy } from "./strategy.ts";

export const gaming: Strategy = {
  requiresSpeech: false,
  windows(features, limits) {
    const peakName = features.audible ? "loudness_peak" : "motion_burst";
    return peakWindows(features, limits, 0.25).map((w) => {
      const sustained = clamp01(excitement(features).mean(w.start, w.end) / 0.3);
      const motion = clamp01(features.motion.mean(w.start, w.end) / 0.5);
      const { score, reasons } = scoreWith(
        {
          [peakName]: 0.45 * w.peakValue + 0.1 * sustained,
          ...(features.audible ? { motion_burst: 0.2 * motion } : {}),
          scene_change: 0.15 * cutRate(features, w.start, w.end),
        },
        0.1 * lengthFit(w.end - w.start, limits) + (features.audible ? 0 : 0.2 * motion),
      );
      return { start: w.start, end: w.end, score, reasons };
    });
  },
};
