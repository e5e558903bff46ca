import type { StartJob } from "#contract";
import { NoClipsFoundError } from "../analyse/index.ts";
import { loadSpeechModel } from "../analyse/speech-model.ts";
import { ProgressTracker } from "../channel/progress.ts";
import { jobReporter } from "./reporter.ts";
import type { FfmpegRunner } from "../ffmpeg/runner.ts";
import { JobAborted, JobFailure, abortKindOf, errorMessage } from "../shared/errors.ts";
import { log } from "../shared/log.ts";
import { ProcessTimeoutError } from "../shared/spawn.ts";
import { createWorkDir, type WorkDir } from "../shared/workdir.ts";
import type { JobContext, JobDeps } from "./context.ts";
import { runStages } from "./pipeline.ts";
import { StageClock } from "./stage-clock.ts";
import { JOB_STAGES } from "./stages/index.ts";

export type { JobDeps } from "./context.ts";

export type JobOutcome = "completed" | "failed" | "refused" | "canceled" | "inactive" | "shutdown";

function backendNote(runner: FfmpegRunner): string {
  return runner.backend === "wasm" ? " (WebAssembly ffmpeg, slow)" : "";
}

/** Maps anything thrown inside the pipeline to the failure the Worker is told. */
function toFailure(error: unknown, jobId: string): JobFailure {
  if (error instanceof JobFailure) return error;
  if (error instanceof NoClipsFoundError) {
    // The analysis writes its reason for the user (too short, silent and static, ...).
    return new JobFailure("no_clips_found", error.message || "Nothing in this video stood out enough to make a clip.");
  }
  if (error instanceof ProcessTimeoutError) {
    log.error("job_ffmpeg_timeout", { job_id: jobId, error: error.message });
    return new JobFailure("internal_error", "Processing the video took longer than the engine's time limit.");
  }
  log.error("job_internal_error", { job_id: jobId, error: errorMessage(error), stack: error instanceof Error ? error.stack : undefined });
  return new JobFailure("internal_error", "The clip engine hit an unexpected error while processing this video.");
}

/**
 * One job from start to finish: the stages of stages/index.ts in order
 * (pipeline.ts), sharing one context (context.ts). Each stage's start and
 * end go into the complete report and the completion log line
 * (stage-clock.ts). Any failure becomes one fail callback with a SPEC failure
 * code; a cancel or a 409 from the Worker ends the job without another
 * callback; a shutdown reports the job interrupted. The work directory goes
 * in every case.
 */
export async function runJob(job: StartJob, deps: JobDeps, controller: AbortController): Promise<JobOutcome> {
  const { runner, config } = deps;
  const signal = controller.signal;
  const jobId = job.job_id;
  const reporter = jobReporter(job, config, controller);
  const progress = new ProgressTracker((report) => reporter.progress(report), config.progressHeartbeatMs);
  let workDir: WorkDir | undefined;
  let ctx: JobContext | undefined;
  const clock = new StageClock();
  const started = clock.startedAt;
  log.info("job_started", { job_id: jobId, video_type: job.video_type, backend: runner.backend });
  try {
    workDir = await createWorkDir(config.workDir, jobId);
    // The speech model (loaded once per process) loads while the source downloads, not after it.
    const speechLoad = (deps.speechModel ?? loadSpeechModel)();
    speechLoad.catch(() => undefined);
    progress.start();
    ctx = {
      job,
      jobId,
      deps,
      runner,
      config,
      signal,
      reporter,
      progress,
      clock,
      workDir,
      backendNote: backendNote(runner),
      speechLoad,
      early: null,
      captionsUrlCues: null,
      transcript: null,
      transcriptReason: null,
      promptMatches: [],
    };
    const outcome = await runStages(JOB_STAGES, ctx);
    if (outcome === "refused") {
      await progress.stop();
      return "refused";
    }
    log.info("job_completed", { job_id: jobId, clips: ctx.rendered?.length ?? 0, seconds: Math.round((Date.now() - started) / 1000), stages: clock.timings() });
    return "completed";
  } catch (error) {
    await progress.stop();
    const kind = abortKindOf(signal);
    if (kind === "canceled" || kind === "inactive" || error instanceof JobAborted && error.kind !== "shutdown") {
      log.info("job_stopped", { job_id: jobId, reason: kind ?? "inactive" });
      return kind === "canceled" ? "canceled" : "inactive";
    }
    if (kind === "shutdown") {
      // Not the job's fault (a redeploy): the Worker puts it back in the queue.
      log.warn("job_interrupted", { job_id: jobId });
      try {
        await reporter.interrupted({ reason: "shutdown" });
      } catch (reportError) {
        log.warn("job_interrupted_report_lost", { job_id: jobId, error: errorMessage(reportError) });
      }
      return "shutdown";
    }
    const failure = toFailure(error, jobId);
    log.warn("job_failed", { job_id: jobId, code: failure.code, message: failure.message });
    try {
      await reporter.fail({ code: failure.code, message: failure.message.slice(0, 500) });
    } catch (reportError) {
      log.warn("job_fail_report_lost", { job_id: jobId, error: errorMessage(reportError) });
    }
    return "failed";
  } finally {
    // The early analysis of a job that failed, was refused or canceled stops before its files go.
    await ctx?.early?.stop().catch(() => undefined);
    await workDir?.remove().catch((error: unknown) => log.error("workdir_remove_failed", { job_id: jobId, error: errorMessage(error) }));
  }
}
