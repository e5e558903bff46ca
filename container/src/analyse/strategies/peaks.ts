/**
 * Shared by gaming and sports: clips built around excitement peaks (loudness
 * peaks, or motion peaks without audio), placed so the peak falls in the
 * second half of the clip: the build-up comes first, the payoff lands late.
 */
import type { Features, Series } from "../features.ts";
import { BIN } from "../features.ts";
import { targetLength, type Interval, type Limits } from "../select.ts";

/** Where in the clip the peak is placed (fractions of the clip's length). */
const PEAK_POSITIONS = [0.6, 0.7, 0.8];
/** Peaks closer than this are one event. */
const MERGE_SECONDS = 3;

export interface PeakWindow extends Interval {
  peakTime: number;
  peakValue: number;
}

/** Local maxima of a series at or above `floor`, strongest first, merged within MERGE_SECONDS. */
export function findPeaks(series: Series, floor: number): { time: number; value: number }[] {
  const values = series.values;
  const peaks: { time: number; value: number }[] = [];
  for (let b = 0; b < values.length; b++) {
    const v = values[b]!;
    if (v < floor) continue;
    if (b > 0 && values[b - 1]! > v) continue;
    if (b + 1 < values.length && values[b + 1]! >= v) continue;
    peaks.push({ time: (b + 0.5) * BIN, value: v });
  }
  peaks.sort((a, b) => b.value - a.value);
  const merged: { time: number; value: number }[] = [];
  for (const peak of peaks) {
    if (!merged.some((m) => Math.abs(m.time - peak.time) < MERGE_SECONDS)) merged.push(peak);
  }
  return merged;
}

/** The excitement series: loudness peaks when the source is audible, else motion. */
export function excitement(features: Features): Series {
  return features.audible ? features.loudPeak : features.motion;
}

export function peakWindows(features: Features, limits: Limits, floor: number): PeakWindow[] {
  const series = excitement(features);
  const lengths = [...new Set([limits.min, targetLength(limits), (limits.min + limits.max) / 2, limits.max])];
  const windows: PeakWindow[] = [];
  for (const peak of findPeaks(series, floor).slice(0, 200)) {
    for (const length of lengths) {
      if (length > limits.duration) continue;
      for (const position of PEAK_POSITIONS) {
        const start = Math.min(Math.max(0, peak.time - position * length), limits.duration - length);
        const end = start + length;
        // The window's own strongest moment must be in its second half (clamping at the source's ends can move it).
        const strongest = series.peak(start, end);
        if (strongest.time - start < length / 2) continue;
        windows.push({ start, end, peakTime: strongest.time, peakValue: strongest.value });
      }
    }
  }
  return windows;
}
