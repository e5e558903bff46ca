/**
 * The span a clip edit renders, checked against the source: it must start
 * before it ends and lie inside the source. An end that overshoots the
 * source by less than SPAN_SLACK_SECONDS (a duration the Worker rounded) is
 * held at the source's end; anything further fails the edit with
 * `time_range_outside_source` and nothing is rendered.
 */
import type { ClipEdit } from "#contract";
import { JobFailure } from "../shared/errors.ts";

export const SPAN_SLACK_SECONDS = 0.05;

export interface Span {
  start: number;
  end: number;
}

/** `sourceSeconds` null: only what holds for any source (before the download). */
export function checkSpan(edit: Pick<ClipEdit, "start_seconds" | "end_seconds">, sourceSeconds: number | null): Span {
  const { start_seconds: start, end_seconds: end } = edit;
  if (!(end > start)) {
    throw new JobFailure("time_range_outside_source", `The clip's span ends (${end} s) at or before its start (${start} s).`);
  }
  if (sourceSeconds === null) return { start, end };
  if (start >= sourceSeconds || end > sourceSeconds + SPAN_SLACK_SECONDS) {
    throw new JobFailure(
      "time_range_outside_source",
      `The clip's span ${start}-${end} s is not inside the source, which is ${Math.round(sourceSeconds * 1000) / 1000} s long.`,
    );
  }
  return { start, end: Math.min(end, sourceSeconds) };
}
