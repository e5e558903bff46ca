import { stat } from "node:fs/promises";
import { callbackUrl, type ClipReport, type StartJob } from "../../src/engine/contract.ts";
import { NoClipsFoundError, analyse } from "./analyse/index.ts";
import { loadSpeechModel, type SpeechModelLoad } from "./analyse/speech-model.ts";
import type { EngineConfig } from "./config.ts";
import { JobAborted, JobFailure, abortKindOf, errorMessage } from "./errors.ts";
import type { FfmpegRunner } from "./ffmpeg/runner.ts";
import { log } from "./log.ts";
import { probeSource } from "./probe.ts";
import { ProgressTracker } from "./progress.ts";
import { planReframe, type ReframePlan } from "./reframe/plan.ts";
import { renderClip } from "./render.ts";
import { outputSize } from "./render-geometry.ts";
import { JobReporter } from "./report.ts";
import type { AddressPolicy, Resolver } from "./source/address-policy.ts";
import { fetchSource } from "./source/index.ts";
import { ProcessTimeoutError } from "./spawn.ts";
import type { Candidate } from "./types.ts";
import { createWorkDir, type WorkDir } from "./workdir.ts";

/**
 * One job from start to finish: fetch the source, probe it, let the Worker
 * reserve credits, analyse, render every clip, upload, complete. Any failure
 * becomes one fail callback with a SPEC failure code; a cancel or a 409 from
 * the Worker ends the job without another callback. The work directory goes
 * in every case.
 */
export interface JobDeps {
  runner: FfmpegRunner;
  config: EngineConfig;
  /** Tests only: override the address rule and DNS for source downloads. */
  policy?: AddressPolicy;
  resolver?: Resolver;
  /** Tests only: the speech model (default: the process's, see analyse/speech-model.ts). */
  speechModel?: () => Promise<SpeechModelLoad>;
}

/** Share of a clip's render progress that face detection stands for (measured: bench/engine/faces.ts). */
const DETECT_SHARE = 0.3;

export type JobOutcome = "completed" | "failed" | "refused" | "canceled" | "inactive" | "shutdown";

interface RenderedClip {
  index: number;
  candidate: Candidate;
  videoPath: string;
  thumbnailPath: string;
  width: number;
  height: number;
  plan: ReframePlan;
}

function backendNote(runner: FfmpegRunner): string {
  return runner.backend === "wasm" ? " (WebAssembly ffmpeg, slow)" : "";
}

function clipReport(clip: RenderedClip): ClipReport {
  const reasons = clip.candidate.reasons
    .map((r) => r.trim().slice(0, 60))
    .filter((r) => r !== "")
    .slice(0, 8);
  return {
    index: clip.index,
    start_seconds: Math.max(0, clip.candidate.start),
    end_seconds: clip.candidate.end,
    score: Math.min(1, Math.max(0, clip.candidate.score)),
    reasons: reasons.length > 0 ? reasons : ["general"],
    width: clip.width,
    height: clip.height,
    reframe: clip.plan.used,
    faces_count: clip.plan.facesCount,
  };
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

export async function runJob(job: StartJob, deps: JobDeps, controller: AbortController): Promise<JobOutcome> {
  const { runner, config } = deps;
  const signal = controller.signal;
  const jobId = job.job_id;
  const reporter = new JobReporter({
    callbackBase: config.callbackBase,
    jobId,
    token: job.token,
    attempts: config.callbackAttempts,
    retryBaseMs: config.callbackRetryBaseMs,
    timeoutMs: config.callbackTimeoutMs,
    onInactive: () => controller.abort(new JobAborted("inactive")),
  });
  // A cancel must silence the reporter at once, even mid-request.
  signal.addEventListener("abort", () => {
    if (abortKindOf(signal) !== "shutdown") reporter.silenceNow();
  });
  const progress = new ProgressTracker((report) => reporter.progress(report), config.progressHeartbeatMs);
  const note = backendNote(runner);
  let workDir: WorkDir | undefined;
  const started = Date.now();
  log.info("job_started", { job_id: jobId, video_type: job.video_type, backend: runner.backend });
  try {
    workDir = await createWorkDir(config.workDir, jobId);
    progress.start();

    progress.enter("download", "Downloading video");
    const fetched = await fetchSource({
      videoUrl: job.video_url,
      limits: job.limits,
      allowPrivateHosts: config.allowPrivateHosts,
      backendMaxBytes: runner.maxSourceBytes,
      backendName: runner.backend === "wasm" ? "WebAssembly" : "native",
      workDir: workDir.path,
      destPath: workDir.file("source.video"),
      ytdlpPath: config.ytdlpPath,
      stallTimeoutMs: config.downloadStallTimeoutMs,
      maxRedirects: config.maxRedirects,
      signal,
      onProgress: (f) => progress.update(f),
      policy: deps.policy,
      resolver: deps.resolver,
      upload: job.source === "upload" ? { url: callbackUrl(config.callbackBase, jobId, "source"), token: job.token } : undefined,
    });
    signal.throwIfAborted();
    log.info("job_downloaded", { job_id: jobId, bytes: fetched.bytes });

    progress.enter("probe", `Probing video${note}`);
    const source = await probeSource({
      runner,
      path: fetched.path,
      sizeBytes: fetched.bytes,
      videoUrl: job.video_url,
      platformTitle: fetched.title,
      maxSourceSeconds: job.limits.max_source_seconds,
      signal,
    });
    const ack = await reporter.probe({
      duration_seconds: source.durationSeconds,
      title: source.title,
      width: source.width,
      height: source.height,
      format: source.format.slice(0, 100),
      size_bytes: source.sizeBytes,
    });
    if (!ack.proceed) {
      log.info("job_refused_by_worker", { job_id: jobId, code: ack.error?.code });
      await progress.stop();
      return "refused";
    }

    const speech = source.hasAudio ? await (deps.speechModel ?? loadSpeechModel)() : null;
    if (speech && "unavailable" in speech) log.warn("speech_detection_unavailable", { job_id: jobId, reason: speech.unavailable });
    const speechNote = speech && "unavailable" in speech ? " (speech detection unavailable: using loudness)" : "";
    progress.enter("analyse", `Analyzing video${speechNote}${note}`);
    const candidates = (
      await analyse(runner, source, job.video_type, job.config, {
        signal,
        onProgress: (f) => progress.update(f),
        speech: speech && "model" in speech ? speech.model : null,
      })
    ).slice(0, job.config.max_clips);
    if (candidates.length === 0) throw new NoClipsFoundError("analysis returned no candidates");

    const rendered: RenderedClip[] = [];
    for (const [index, candidate] of candidates.entries()) {
      progress.enter("render", `Rendering clip ${index + 1} of ${candidates.length}${note}`, { index, count: candidates.length });
      const videoPath = workDir.file(`clip-${index}.mp4`);
      const thumbnailPath = workDir.file(`clip-${index}.jpg`);
      // Face detection (reframe faces/auto) takes the first DETECT_SHARE of the clip's progress.
      const detectShare = job.config.reframe === "center" ? 0 : DETECT_SHARE;
      const plan = await planReframe({
        runner,
        source,
        candidate,
        config: job.config,
        output: outputSize(job.config, source),
        rawPath: workDir.file(`faces-${index}.rgb`),
        signal,
        onProgress: (f) => progress.update(detectShare * f),
      });
      log.info("clip_reframe", { job_id: jobId, index, reframe: plan.used, faces: plan.facesCount, detection_ms: plan.detectionMs });
      const size = await renderClip(runner, {
        source,
        candidate,
        config: job.config,
        outPath: videoPath,
        thumbnailPath,
        signal,
        onProgress: (f) => progress.update(detectShare + (1 - detectShare) * f),
        plan,
      });
      rendered.push({ index, candidate, videoPath, thumbnailPath, ...size, plan });
    }

    progress.enter("upload", "Uploading clips");
    const sizes = await Promise.all(rendered.flatMap((c) => [stat(c.videoPath), stat(c.thumbnailPath)]));
    const totalBytes = sizes.reduce((sum, s) => sum + s.size, 0);
    let uploaded = 0;
    const onBytes = (n: number) => {
      uploaded += n;
      progress.update(totalBytes > 0 ? uploaded / totalBytes : 1);
    };
    for (const clip of rendered) {
      signal.throwIfAborted();
      await reporter.putFile(`clips/${clip.index}`, clip.videoPath, "video/mp4", onBytes);
      await reporter.putFile(`clips/${clip.index}/thumbnail`, clip.thumbnailPath, "image/jpeg", onBytes);
    }

    await progress.stop();
    signal.throwIfAborted();
    await reporter.complete({
      title: source.title,
      source_duration_seconds: source.durationSeconds,
      clips: rendered.map(clipReport),
    });
    log.info("job_completed", { job_id: jobId, clips: rendered.length, seconds: Math.round((Date.now() - started) / 1000) });
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
    await workDir?.remove().catch((error: unknown) => log.error("workdir_remove_failed", { job_id: jobId, error: errorMessage(error) }));
  }
}
