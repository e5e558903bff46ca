/**
 * What the small grey frames of the video pass say: scene changes, motion
 * between frames, and per scene the centre of the region of most activity
 * (for reframe=auto). Pure functions over THUMB_WIDTH x THUMB_HEIGHT pixels.
 */
import { THUMB_HEIGHT, THUMB_WIDTH, type Interval, type VideoFrames } from "./signals.ts";

/** A luma histogram distance (0-1) above this between neighbouring frames is a cut. */
const CUT_HISTOGRAM_DISTANCE = 0.35;
/** ...or a mean absolute pixel change (0-1) above this together with half that histogram change. */
const CUT_PIXEL_DIFFERENCE = 0.18;
const HISTOGRAM_BINS = 16;

export interface SceneActivity extends Interval {
  /** Centre of the most active region, as a fraction of width and height. */
  centerX: number;
  centerY: number;
}

export interface FrameAnalysis {
  /** Source seconds where a new scene starts (the first frame of the new scene that was seen). */
  cuts: number[];
  /** Time of the frame seen just before each cut: the cut happened in (before, cut]. */
  cutAfter: number[];
  /** Motion between frame i-1 and i (0-1), for i >= 1, excluding cuts; motion[0] is 0. */
  motion: number[];
  scenes: SceneActivity[];
}

function histogram(pixels: Uint8Array): Float64Array {
  const bins = new Float64Array(HISTOGRAM_BINS);
  for (const value of pixels) bins[(value * HISTOGRAM_BINS) >> 8]! += 1;
  for (let i = 0; i < HISTOGRAM_BINS; i++) bins[i]! /= pixels.length;
  return bins;
}

function histogramDistance(a: Float64Array, b: Float64Array): number {
  let sum = 0;
  for (let i = 0; i < HISTOGRAM_BINS; i++) sum += Math.abs(a[i]! - b[i]!);
  return sum / 2;
}

function meanAbsoluteDifference(a: Uint8Array, b: Uint8Array): number {
  let sum = 0;
  for (let i = 0; i < a.length; i++) sum += Math.abs(a[i]! - b[i]!);
  return sum / a.length / 255;
}

function median(values: Uint8Array): number {
  const counts = new Uint32Array(256);
  for (const v of values) counts[v]! += 1;
  let seen = 0;
  for (let v = 0; v < 256; v++) {
    seen += counts[v]!;
    if (seen * 2 >= values.length) return v;
  }
  return 0;
}

/**
 * Centre of activity over a scene's frames: each pixel's distance from its
 * frame's median (what stands out from the background) plus twice its change
 * between consecutive frames (what moves). Only the strongest part of that map
 * counts, so a large dull background does not pull the centre to the middle.
 */
function activityCentre(frames: Uint8Array[]): { centerX: number; centerY: number } {
  const map = new Float64Array(THUMB_WIDTH * THUMB_HEIGHT);
  frames.forEach((frame, index) => {
    const background = median(frame);
    const previous = index > 0 ? frames[index - 1] : undefined;
    for (let i = 0; i < map.length; i++) {
      const standOut = Math.abs(frame[i]! - background);
      const change = previous ? Math.abs(frame[i]! - previous[i]!) : 0;
      map[i]! += standOut + 2 * change;
    }
  });
  let max = 0;
  let mean = 0;
  for (const v of map) {
    max = Math.max(max, v);
    mean += v / map.length;
  }
  // A flat picture has no region that matters: keep the centre.
  if (max < frames.length * 8) return { centerX: 0.5, centerY: 0.5 };
  const threshold = mean + (max - mean) * 0.5;
  let weight = 0;
  let sumX = 0;
  let sumY = 0;
  for (let y = 0; y < THUMB_HEIGHT; y++) {
    for (let x = 0; x < THUMB_WIDTH; x++) {
      const w = map[y * THUMB_WIDTH + x]! - threshold;
      if (w <= 0) continue;
      weight += w;
      sumX += w * (x + 0.5);
      sumY += w * (y + 0.5);
    }
  }
  if (weight === 0) return { centerX: 0.5, centerY: 0.5 };
  return { centerX: sumX / weight / THUMB_WIDTH, centerY: sumY / weight / THUMB_HEIGHT };
}

export function analyseFrames(frames: VideoFrames, durationSeconds: number): FrameAnalysis {
  const { times, pixels } = frames;
  const cuts: number[] = [];
  const cutAfter: number[] = [];
  const motion: number[] = [0];
  let previousHistogram = pixels[0] ? histogram(pixels[0]) : null;
  for (let i = 1; i < pixels.length; i++) {
    const current = histogram(pixels[i]!);
    const histogramChange = previousHistogram ? histogramDistance(previousHistogram, current) : 0;
    const pixelChange = meanAbsoluteDifference(pixels[i - 1]!, pixels[i]!);
    const isCut =
      histogramChange > CUT_HISTOGRAM_DISTANCE ||
      (pixelChange > CUT_PIXEL_DIFFERENCE && histogramChange > CUT_HISTOGRAM_DISTANCE / 2);
    if (isCut) {
      cuts.push(times[i]!);
      cutAfter.push(times[i - 1]!);
    }
    motion.push(isCut ? 0 : pixelChange);
    previousHistogram = current;
  }

  const bounds = [0, ...cuts, durationSeconds];
  const scenes: SceneActivity[] = [];
  for (let s = 0; s + 1 < bounds.length; s++) {
    const start = bounds[s]!;
    const end = bounds[s + 1]!;
    let inScene = pixels.filter((_, i) => times[i]! >= start && times[i]! < end);
    if (inScene.length === 0) {
      // A scene shorter than the frame spacing: the first frame seen after its start stands for it.
      const next = times.findIndex((t) => t >= start);
      inScene = next >= 0 ? [pixels[next]!] : [];
    }
    scenes.push({ start, end, ...(inScene.length ? activityCentre(inScene) : { centerX: 0.5, centerY: 0.5 }) });
  }
  return { cuts, cutAfter, motion, scenes };
}
