/**
 * The bench's source: 10 minutes of 1080p30 with speech, pauses, loud bursts,
 * scene changes and a moving subject, plus grain and an 8 Mbit/s cap so that
 * decoding costs about what real camera footage costs (flat synthetic frames
 * decode several times faster and would flatter the analysis figures).
 * Generated once and cached under .tmp/bench/ (or BENCH_CACHE_DIR, e.g. the
 * cache of another checkout, so a fresh clone need not generate it again),
 * keyed by these parameters.
 */
import { cachedMedia, type MediaFacts, type MediaSpec } from "../../test/media/generate.ts";

export const BENCH_SOURCE_SPEC: MediaSpec = {
  durationSeconds: 600,
  width: 1920,
  height: 1080,
  fps: 30,
  audio: "speech",
  grain: 10,
  maxBitrateKbps: 8000,
  bursts: [48, 131, 207, 266, 342, 415, 488, 553],
  sceneChanges: Array.from({ length: 19 }, (_, i) => 31 + i * 30 + (i % 3) * 4),
  seed: 2026,
};

/** Where the bench's generated media are cached. */
export const BENCH_CACHE_DIR = process.env.BENCH_CACHE_DIR?.trim() || ".tmp/bench";

export function benchSource(): Promise<{ path: string; facts: MediaFacts }> {
  return cachedMedia(BENCH_SOURCE_SPEC, BENCH_CACHE_DIR);
}

/** BENCH_ENGINE_QUICK=1: a 3-minute 640x360 stand-in, to check the bench itself in seconds. */
export const QUICK_SOURCE_SPEC: MediaSpec = {
  ...BENCH_SOURCE_SPEC,
  durationSeconds: 180,
  width: 640,
  height: 360,
  maxBitrateKbps: 1500,
  bursts: [40, 95, 150],
  sceneChanges: [31, 64, 97, 128, 161],
};

export function selectedBenchSource(): Promise<{ path: string; facts: MediaFacts }> {
  return process.env.BENCH_ENGINE_QUICK === "1" ? cachedMedia(QUICK_SOURCE_SPEC, BENCH_CACHE_DIR) : benchSource();
}
