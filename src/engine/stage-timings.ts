/**
 * Where a completed job's time went, for its completion log line:
 * every stage as milliseconds from submission, the Worker's own (queued,
 * dispatch, publish) around the engine's (from its complete report).
 *
 *   queued    submission -> the queue consumer took the job's message
 *   dispatch  the consumer took it -> the engine took the job, split (from
 *             a Worker that sends granted_at and sent_at) into
 *     dispatch: fleet grant    the consumer took it -> the fleet granted an engine
 *     dispatch: bookkeeping    other jobs' grants sent, the job processing in D1
 *                              and in its account's object, its token signed
 *     dispatch: StartJob       StartJob built -> the engine took the job (its
 *                              signature, an instance start included)
 *   download, probe, analysis, transcript, prompt, judge, brand, render N, upload N,
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
      const { dispatched_at: dispatched, granted_at: granted, sent_at: sent } = timings.timeline;
      stages.push({ stage: "dispatch", start_ms: since(dispatched), end_ms: since(engineAt) });
      if (granted !== undefined && sent !== undefined) {
        stages.push({ stage: "dispatch: fleet grant", start_ms: since(dispatched), end_ms: since(granted) });
        stages.push({ stage: "dispatch: bookkeeping", start_ms: since(granted), end_ms: since(sent) });
        stages.push({ stage: "dispatch: StartJob", start_ms: since(sent), end_ms: since(engineAt) });
      }
    } else {
      stages.push({ stage: "queued and dispatch", start_ms: 0, end_ms: since(engineAt) });
    }
    for (const s of timings.stages) stages.push({ stage: s.stage, start_ms: since(engineAt + s.start_ms), end_ms: since(engineAt + s.end_ms) });
  }
  stages.push({ stage: "publish", start_ms: since(publish.start), end_ms: since(publish.end) });
  return { total_ms: since(publish.end), stages };
}
