/**
 * Makes the cuts that matter frame-exact. The video pass only sees some
 * frames (keyframes, or two a second), so a cut it reports happened somewhere
 * after the frame seen before it. For the cuts that become clip boundaries
 * (and, with reframe=auto, crop changes inside a clip) the short span is
 * decoded in full to find the exact frame; other cuts are left as seen.
 */
import type { FfmpegRunner } from "../ffmpeg/runner.ts";
import type { SourceInfo } from "../shared/types.ts";
import type { FrameAnalysis } from "./frames.ts";
import type { Limits, ScoredWindow } from "./select.ts";
import { exactCut } from "./signals.ts";

/** Two refinements at a time: each is a short decode, and the machine has few cores. */
const CONCURRENCY = 2;

export async function refineCuts(
  runner: FfmpegRunner,
  source: SourceInfo,
  frames: FrameAnalysis,
  windows: ScoredWindow[],
  includeInterior: boolean,
  signal: AbortSignal,
): Promise<Map<number, number>> {
  const frameTime = 1 / (source.fps > 0 ? source.fps : 30);
  const wanted = new Set<number>();
  frames.cuts.forEach((cut, index) => {
    const gap = cut - frames.cutAfter[index]!;
    if (gap <= frameTime * 1.5) return;
    const isBoundary = windows.some((w) => Math.abs(w.start - cut) < 1e-6 || Math.abs(w.end - cut) < 1e-6);
    const isInterior = includeInterior && windows.some((w) => cut > w.start && cut < w.end);
    if (isBoundary || isInterior) wanted.add(index);
  });
  const exact = new Map<number, number>();
  const queue = [...wanted];
  const worker = async () => {
    for (let index = queue.shift(); index !== undefined; index = queue.shift()) {
      const at = frames.cuts[index]!;
      exact.set(at, await exactCut(runner, source, { after: frames.cutAfter[index]!, at }, signal));
    }
  };
  await Promise.all(Array.from({ length: CONCURRENCY }, worker));
  return exact;
}

/** A window with its cut boundaries moved to the exact cuts, unless that breaks the length limits. */
export function applyExactCuts(window: ScoredWindow, exact: Map<number, number>, limits: Limits): ScoredWindow {
  const start = exact.get(window.start) ?? window.start;
  const end = exact.get(window.end) ?? window.end;
  const fits = (s: number, e: number) => e - s >= limits.min - 1e-9 && e - s <= limits.max + 1e-9;
  if (fits(start, end)) return { ...window, start, end };
  if (fits(window.start, end)) return { ...window, end };
  if (fits(start, window.end)) return { ...window, start };
  return window;
}

/**
 * Moving a start earlier onto its exact cut can, rarely, reach into the clip
 * before it (one that ends in a pause just before the cut): such a start stops
 * at that clip's end instead. Lengths stay within the limits, since the start
 * lands between its original and its exact position. Order is kept.
 */
export function withoutOverlaps(windows: ScoredWindow[]): ScoredWindow[] {
  const byStart = [...windows].sort((a, b) => a.start - b.start);
  const fixed = new Map<ScoredWindow, ScoredWindow>();
  let previousEnd = -Infinity;
  for (const window of byStart) {
    const start = Math.max(window.start, previousEnd);
    fixed.set(window, start === window.start ? window : { ...window, start });
    previousEnd = window.end;
  }
  return windows.map((w) => fixed.get(w) ?? w);
}
