/**
 * Finishes the analysis (or runs it, when the source could not be measured
 * as it arrived) and keeps what it heard and saw for the later stages. A
 * time_range job's analysis reads only the range; its times come back in
 * source seconds.
 */
import { NoClipsFoundError, analyse as analyseSource } from "../../analyse/index.ts";
import type { MeasurePlan, SpeechPcm } from "../../analyse/measure.ts";
import type { ScoredWindow } from "../../analyse/select.ts";
import { log } from "../../shared/log.ts";
import type { Interval } from "../../steer/removals.ts";
import { analysisWindow, toSourceCandidates, toSourceSpans, windowedSource } from "../../steer/time-range.ts";
import { need, type JobContext } from "../context.ts";
import type { JobStage } from "../pipeline.ts";

function speechNote(ctx: JobContext): string {
  return ctx.speech && "unavailable" in ctx.speech ? " (speech detection unavailable: using loudness)" : "";
}

export const analyse: JobStage<JobContext> = {
  name: "analyse",
  progress: (ctx) => ({ stage: "analyse", step: `Analyzing video${speechNote(ctx)}${ctx.backendNote}` }),
  timing: () => "analysis",
  // The analysis began when its measuring pass did: during the download when it streamed.
  timedFrom: (ctx) => ctx.analysis?.startedAt ?? null,
  async run(ctx) {
    const { job, early } = ctx;
    const source = need(ctx.source, "the probed source");
    const speech = ctx.speech ?? null;
    let speechSpans: Interval[] | null = null;
    let emphasis: Interval[] = [];
    let quiet: Interval[] | null = null;
    let keyframes: number[] | null = null;
    let speechPcm: SpeechPcm | null = null;
    let windows: ScoredWindow[] = [];
    const window = analysisWindow(source, job.time_range);
    const wholeSource = window.start <= 0 && window.end >= source.durationSeconds;
    const analysed = toSourceCandidates(
      await analyseSource(ctx.runner, windowedSource(source, window), job.video_type, job.config, {
        signal: ctx.signal,
        onProgress: (f) => ctx.progress.update(f),
        speech: speech && "model" in speech ? speech.model : null,
        onSpeech: (spans) => (speechSpans = toSourceSpans(spans, window)),
        onEmphasis: (spans) => (emphasis = toSourceSpans(spans, window)),
        // The transcript cuts its chunks from the pass's PCM; a time_range's PCM starts at the range, not the source.
        ...(wholeSource ? { onPcm: (pcm: SpeechPcm) => (speechPcm = pcm) } : {}),
        onQuiet: (stretches) => (quiet = stretches ? toSourceSpans(stretches, window) : null),
        onKeyframes: (times) => (keyframes = times ? times.map((t) => t + window.start) : null),
        // Every window the strategy scored: a prompt's ranking, and the candidates judgement chooses among.
        onWindows: (scored: ScoredWindow[]) => (windows = toSourceSpans(scored, window)),
        // What the early analysis measured is the whole source: a time_range's window is measured from the file.
        ...(early && wholeSource ? { measured: (plan: MeasurePlan, onSeconds: (seconds: number) => void) => early.measured(plan, onSeconds) } : {}),
      }),
      window,
    ).slice(0, job.config.max_clips);
    const streamedFrom = early?.startedAt() ?? null;
    const streamed = streamedFrom !== null && early?.outcome().startsWith("measured while downloading") === true;
    ctx.analysis = { window, wholeSource, analysed, speechSpans, emphasis, quiet, keyframes, speechPcm, windows, startedAt: streamed ? streamedFrom : null };
    log.info("job_analysed", { job_id: ctx.jobId, analysis: early?.outcome() ?? "measured after the download", candidates: analysed.length });
    if (analysed.length === 0) throw new NoClipsFoundError("analysis returned no candidates");
  },
};
