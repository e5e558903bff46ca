/**
 * Window building blocks shared by the strategies: candidate windows from
 * natural boundaries (pauses, scene changes) or a grid, score bookkeeping
 * with named reasons, and the greedy pick of the best non-overlapping ones.
 */
import type { Interval } from "./signals.ts";

export type { Interval };

export interface Limits {
  min: number;
  max: number;
  duration: number;
}

export interface ScoredWindow extends Interval {
  score: number;
  reasons: string[];
}

/** Short-form sweet spot (about 30 s), kept inside the configured range. */
export function targetLength(limits: Limits): number {
  return Math.min(limits.max, Math.max(limits.min, 30));
}

/** 1 at the target length, falling off linearly to 0 at twice (or zero times) the target. */
export function lengthFit(length: number, limits: Limits): number {
  const target = targetLength(limits);
  return Math.max(0, 1 - Math.abs(length - target) / target);
}

export function clamp01(value: number): number {
  return Math.min(1, Math.max(0, value));
}

/**
 * Score from named contributions (each already weighted, summing to at most 1).
 * Reasons are the signals that contributed noticeably, strongest first;
 * `unnamed` contributions (e.g. length fit) add to the score without a reason.
 */
export function scoreWith(named: Record<string, number>, unnamed = 0): { score: number; reasons: string[] } {
  const entries = Object.entries(named).sort((a, b) => b[1] - a[1]);
  const score = clamp01(entries.reduce((sum, [, value]) => sum + value, 0) + unnamed);
  let reasons = entries.filter(([, value]) => value >= 0.05).map(([name]) => name);
  if (reasons.length === 0 && entries[0]) reasons = [entries[0][0]];
  return { score: Math.round(score * 1000) / 1000, reasons };
}

/** Where a clip may start inside a pause: shortly before the next phrase, never past the pause's middle. */
export function startInPause(pause: Interval): number {
  const middle = (pause.start + pause.end) / 2;
  return Math.max(middle, pause.end - 0.25);
}

/** Where a clip may end inside a pause: shortly after the phrase, never past the pause's middle. */
export function endInPause(pause: Interval): number {
  const middle = (pause.start + pause.end) / 2;
  return Math.min(middle, pause.start + 0.25);
}

/** Every (start, end) pair from the sorted boundary lists whose length is within the limits. */
export function boundaryPairs(starts: number[], ends: number[], limits: Limits): Interval[] {
  const sortedStarts = [...new Set(starts)].filter((s) => s >= 0 && s < limits.duration).sort((a, b) => a - b);
  const sortedEnds = [...new Set(ends)].filter((e) => e > 0 && e <= limits.duration).sort((a, b) => a - b);
  const pairs: Interval[] = [];
  let first = 0;
  for (const start of sortedStarts) {
    while (first < sortedEnds.length && sortedEnds[first]! - start < limits.min) first++;
    for (let i = first; i < sortedEnds.length && sortedEnds[i]! - start <= limits.max; i++) {
      pairs.push({ start, end: sortedEnds[i]! });
    }
  }
  return pairs;
}

/** A grid of windows: starts every `step` seconds, about nine lengths between min and max. */
export function gridPairs(limits: Limits): Interval[] {
  const step = Math.max(1, Math.ceil(limits.duration / 1500));
  const lengthStep = Math.max(1, (limits.max - limits.min) / 8);
  const pairs: Interval[] = [];
  for (let start = 0; start + limits.min <= limits.duration; start += step) {
    for (let length = limits.min; length <= limits.max + 1e-9; length += lengthStep) {
      if (start + length > limits.duration) break;
      pairs.push({ start, end: start + length });
    }
  }
  return pairs;
}

/** Greedy: best first, skipping any window that overlaps one already taken. */
export function pickBest(windows: ScoredWindow[], count: number, minScore: number): ScoredWindow[] {
  const ordered = windows
    .filter((w) => w.score >= minScore)
    .sort((a, b) => b.score - a.score || a.start - b.start);
  const taken: ScoredWindow[] = [];
  for (const window of ordered) {
    if (taken.length >= count) break;
    if (taken.some((t) => window.start < t.end && t.start < window.end)) continue;
    taken.push(window);
  }
  return taken;
}
