/** The shape of one video_type's approach to choosing clips. */
import type { Features } from "../features.ts";
import type { Limits, ScoredWindow } from "../select.ts";

export interface Strategy {
  /**
   * Clips of this type are cut on speech: without it (no audio track, a silent
   * one, or only music and noise) the analysis fails with no_clips_found and
   * says so. The other types clip on what can be seen and heard.
   */
  readonly requiresSpeech: boolean;
  /** Every window this approach would consider, scored 0-1 with reasons. */
  windows(features: Features, limits: Limits): ScoredWindow[];
}

/** Scene changes per 10 s, as 0-1 (three or more counts as full). */
export function cutRate(features: Features, start: number, end: number): number {
  return Math.min(1, (features.cuts.sum(start, end) * 10) / Math.max(1, end - start) / 3);
}
