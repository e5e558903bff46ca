/**
 * time_range: the analysis runs on a view of the source that
 * starts at the range's start and lasts its length (the passes seek with
 * `-ss`/`-t`, signals.ts), so every time it produces is range-local; the
 * candidates, speech spans and keyframes it returns are shifted back to
 * source seconds here before anything else (transcript, render) uses them.
 */
import type { TimeRange } from "#contract";
import type { Candidate, SourceInfo } from "../shared/types.ts";

export interface SourceWindow {
  /** Source seconds where the window starts. */
  start: number;
  /** Source seconds where it ends (never past the source). */
  end: number;
}

/** The window a job analyses: its range cut to the source, or the whole source. */
export function analysisWindow(source: SourceInfo, range: TimeRange | null | undefined): SourceWindow {
  if (!range) return { start: 0, end: source.durationSeconds };
  return { start: Math.min(range.start_seconds, source.durationSeconds), end: Math.min(range.end_seconds, source.durationSeconds) };
}

export function isWholeSource(window: SourceWindow, source: SourceInfo): boolean {
  return window.start <= 0 && window.end >= source.durationSeconds;
}

/** The source as the analysis sees it inside the window: seeked to its start, as long as it. */
export function windowedSource(source: SourceInfo, window: SourceWindow): SourceInfo {
  if (isWholeSource(window, source)) return source;
  return { ...source, durationSeconds: window.end - window.start, seekSeconds: window.start };
}

/** Range-local seconds -> source seconds. */
export function toSourceCandidates(candidates: Candidate[], window: SourceWindow): Candidate[] {
  if (window.start === 0) return candidates;
  const shift = window.start;
  return candidates.map((c) => ({
    ...c,
    start: c.start + shift,
    end: c.end + shift,
    ...(c.crop ? { crop: c.crop.map((s) => ({ ...s, fromSeconds: s.fromSeconds + shift, toSeconds: s.toSeconds + shift })) } : {}),
  }));
}

export function toSourceSpans<T extends { start: number; end: number }>(spans: T[], window: SourceWindow): T[] {
  if (window.start === 0) return spans;
  return spans.map((s) => ({ ...s, start: s.start + window.start, end: s.end + window.start }));
}
