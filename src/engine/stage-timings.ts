/**
 * Where a completed job's time went, for its completion log line (issue 30):
 * every stage as milliseconds from submission, the Worker's own (queued,
 * dispatch, publish) around the engine's (from its complete report).
 *
 *   queued    submission -> the queue consumer took the job's message
 *   dispatch  the consumer took it -> the engine took the job (fleet grant,
 *             D1 and account updates, StartJob)
 *   download, probe, analysis, transcript, prompt, brand, render N, upload N,
 *   upload transcript   the engine's (StageTiming), overlapping
 *   publish   the complete call arriving -> the job completed in D1 (clips
 *             copied to the public bucket, credits charged)
 *
 * The engine's times are on its own clock; an engine's clock off by a few
 * milliseconds from the Worker's shows as a longer or shorter dispatch.
 */
import type { JobTimings } from "#contract";

export interface LoggedStage {
  stage: string;
  start_ms: number;
  end_ms: number;
}

export interface CompletionTimes {
  /** Submission to the completion committed. */
  total_ms: number;
  stages: LoggedStage[];
}

export function completionTimes(submittedAt: number, timings: JobTimings | undefined, publish: { start: number; end: number }): CompletionTimes {
  const stages: LoggedStage[] = [];
  const since = (at: number) => Math.max(0, Math.round(at - submittedAt));
  if (timings) {
    const engineAt = timings.engine_started_at;
    if (timings.timeline) {
      stages.push({ stage: "queued", start_ms: 0, end_ms: since(timings.timeline.dispatched_at) });
      stages.push({ stage: "dispatch", start_ms: since(timings.timeline.dispatched_at), end_ms: since(engineAt) });
    } else {
      stages.push({ stage: "queued and dispatch", start_ms: 0, end_ms: since(engineAt) });
    }
    for (const s of timings.stages) stages.push({ stage: s.stage, start_ms: since(engineAt + s.start_ms), end_ms: since(engineAt + s.end_ms) });
  }
  stages.push({ stage: "publish", start_ms: since(publish.start), end_ms: since(publish.end) });
  return { total_ms: since(publish.end), stages };
}
