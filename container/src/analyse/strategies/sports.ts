/**
 * sports: like gaming, weighted to sustained crowd and commentary loudness
 * (a roar lasts longer than a shout) and to replays (bursts of cuts).
 */
import { clamp01, lengthFit, scoreWith } from "../select.ts";
import { excitement, peakWindows } from "./peaks.ts";
import { cutRate, type Strategy } from "./strategy.ts";

export const sports: Strategy = {
  requiresSpeech: false,
  windows(features, limits) {
    const peakName = features.audible ? "crowd_loudness" : "motion_burst";
    return peakWindows(features, limits, 0.2).map((w) => {
      const sustained = clamp01(excitement(features).mean(w.start, w.end) / 0.25);
      const motion = clamp01(features.motion.mean(w.start, w.end) / 0.5);
      const { score, reasons } = scoreWith(
        {
          [peakName]: 0.35 * w.peakValue + 0.25 * sustained,
          ...(features.audible ? { motion_burst: 0.15 * motion } : {}),
          replay_cuts: 0.15 * cutRate(features, w.start, w.end),
        },
        0.1 * lengthFit(w.end - w.start, limits) + (features.audible ? 0 : 0.15 * motion),
      );
      return { start: w.start, end: w.end, score, reasons };
    });
  },
};
