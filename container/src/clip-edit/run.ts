/**
 * A clip edit on the engine (contract: src/contract/clip-edit.ts): one clip
 * of a completed job rendered again from its source, over the span the user
 * chose, with the words the Worker sent (and speech-to-text only of the
 * parts the job never transcribed, hear.ts). No analysis, no judgement, no
 * probe or progress callback:
 * the Worker reserved the edit's credits when it accepted it. The source,
 * framing, captions, brand and render steps are the job's own functions; the
 * clip goes up on the job's clip routes under the edit's index, and the edit
 * ends with one complete report of that one clip, or one fail report.
 */
import { rm, stat } from "node:fs/promises";
import { callbackUrl, type ClipEdit, type ClipReport, type StartJob } from "#contract";
import { prepareBrand } from "../brand/prepare.ts";
import { prepareClipCaptions } from "../captions/index.ts";
import { JobAborted, JobFailure, abortKindOf, errorMessage } from "../shared/errors.ts";
import type { JobDeps, JobOutcome } from "../job/run.ts";
import { log } from "../shared/log.ts";
import { probeSource } from "../source/probe.ts";
import { framingReport } from "../reframe/framing-report.ts";
import { planReframe } from "../reframe/plan.ts";
import { renderClipVideo, renderThumbnail } from "../render/index.ts";
import { outputSize } from "../render/geometry.ts";
import { jobReporter } from "../job/reporter.ts";
import { fetchSource } from "../source/index.ts";
import { ProcessTimeoutError } from "../shared/spawn.ts";
import { StageClock } from "../job/stage-clock.ts";
import { keptSeconds, noRemovals, planRemovals } from "../steer/removals.ts";
import type { Candidate } from "../shared/types.ts";
import { createWorkDir, type WorkDir } from "../shared/workdir.ts";
import { optionalUpload, platformCookies } from "./callbacks.ts";
import { checkSpan } from "./span.ts";
import { hearUncovered } from "./hear.ts";
import { pausesBetweenWords, speechFromWords } from "./words.ts";

/** The reason an edited clip reports: its span was chosen by a person, not by the analysis. */
export const EDIT_REASON = "chosen_by_user";

export type ClipEditJob = StartJob & { clip_edit: ClipEdit };

export function isClipEdit(job: StartJob): job is ClipEditJob {
  return job.clip_edit !== undefined;
}

function toFailure(error: unknown, jobId: string, editId: string): JobFailure {
  if (error instanceof JobFailure) return error;
  if (error instanceof ProcessTimeoutError) {
    log.error("edit_ffmpeg_timeout", { job_id: jobId, edit_id: editId, error: error.message });
    return new JobFailure("internal_error", "Rendering the clip took longer than the engine's time limit.");
  }
  log.error("edit_internal_error", { job_id: jobId, edit_id: editId, error: errorMessage(error), stack: error instanceof Error ? error.stack : undefined });
  return new JobFailure("internal_error", "The clip engine hit an unexpected error while rendering this clip.");
}

export async function runClipEdit(job: ClipEditJob, deps: JobDeps, controller: AbortController): Promise<JobOutcome> {
  const { runner, config } = deps;
  const signal = controller.signal;
  const jobId = job.job_id;
  const edit = job.clip_edit;
  const index = edit.index;
  const reporter = jobReporter(job, config, controller);
  const clock = new StageClock();
  let workDir: WorkDir | undefined;
  log.info("edit_started", { job_id: jobId, edit_id: edit.edit_id, index, start: edit.start_seconds, end: edit.end_seconds, words: edit.words.length });
  try {
    // A span that cannot be inside any source fails before anything is downloaded.
    checkSpan(edit, null);
    workDir = await createWorkDir(config.workDir, jobId);
    const dir = workDir;
    const endDownload = clock.begin("download");
    const fetched = await fetchSource({
      videoUrl: job.video_url,
      limits: job.limits,
      allowPrivateHosts: config.allowPrivateHosts,
      backendMaxBytes: runner.maxSourceBytes,
      backendName: runner.backend === "wasm" ? "WebAssembly" : "native",
      workDir: dir.path,
      destPath: dir.file("source.video"),
      ytdlpPath: config.ytdlpPath,
      stallTimeoutMs: config.downloadStallTimeoutMs,
      maxRedirects: config.maxRedirects,
      signal,
      onProgress: () => undefined,
      policy: deps.policy,
      resolver: deps.resolver,
      upload: job.source === "upload" ? { url: callbackUrl(config.callbackBase, jobId, "source"), token: job.token } : undefined,
      platformCookies: () => platformCookies(reporter, jobId),
      platformProxy: config.platformProxy,
    });
    endDownload();
    signal.throwIfAborted();

    const source = await clock.time("probe", () =>
      probeSource({
        runner,
        path: fetched.path,
        sizeBytes: fetched.bytes,
        videoUrl: job.video_url,
        platformTitle: fetched.title,
        maxSourceSeconds: job.limits.max_source_seconds,
        signal,
      }),
    );
    const span = checkSpan(edit, source.durationSeconds);
    // Parts of the span the job never transcribed are heard now (hear.ts).
    const heard = await clock.time("transcript", () =>
      hearUncovered({ edit, span, language: job.config.language ?? null, runner, reporter, source, chunkPath: (i) => dir.file(`speech-${i}.wav`), jobId, signal }),
    );
    const transcript = heard.transcript;
    const words = transcript?.words ?? [];
    const candidate: Candidate = { start: span.start, end: span.end, score: 0, reasons: [EDIT_REASON] };
    const output = outputSize(job.config, source);
    const brand = await clock.time("brand", () =>
      prepareBrand({
        job,
        runner,
        reporter,
        progress: { enter: () => undefined },
        transcript,
        clips: [candidate],
        output,
        logoPath: dir.file("logo.image"),
        signal,
      }),
    );
    signal.throwIfAborted();

    const endRender = clock.begin(`render ${index}`);
    const plan = await planReframe({
      runner,
      source,
      candidate,
      config: job.config,
      output,
      speech: speechFromWords(words),
      rawPath: dir.file(`faces-${index}.rgb`),
      signal,
      onProgress: () => undefined,
    });
    const removal =
      source.hasAudio && (job.config.remove_silence !== "off" || job.config.remove_fillers)
        ? planRemovals({ start: span.start, end: span.end, silence: job.config.remove_silence, fillers: job.config.remove_fillers, pauses: pausesBetweenWords(words, span.start, span.end), words })
        : noRemovals(span.start, span.end);
    const captions = await prepareClipCaptions({
      removal: { plan: removal, fillers: job.config.remove_fillers },
      transcript,
      config: job.config,
      start: span.start,
      end: span.end,
      width: output.width,
      height: output.height,
      canBurn: runner.backend === "native",
      file: (name) => dir.file(name),
      index,
      translation: brand.translation,
      videoTitle: source.title,
      hookTop: brand.hookTop,
      emphasis: [],
      // The user's title is the clip's post title: the hook title shows it.
      postTitle: edit.title,
    });
    const videoPath = dir.file(`clip-${index}.mp4`);
    const thumbnailPath = dir.file(`clip-${index}.jpg`);
    const size = await renderClipVideo(runner, {
      source,
      candidate,
      config: job.config,
      outPath: videoPath,
      signal,
      onProgress: () => undefined,
      plan,
      captionsPath: captions.assPath,
      logo: brand.logo,
      kept: removal.kept,
    });
    await renderThumbnail(runner, { source, candidate, config: job.config, outPath: videoPath, thumbnailPath, thumbnailFrom: "clip", plan, signal });
    endRender();

    const sidecars = await clock.time(`upload ${index}`, async () => {
      await reporter.putFile(`clips/${index}`, videoPath, "video/mp4", undefined, signal);
      await reporter.putFile(`clips/${index}/thumbnail`, thumbnailPath, "image/jpeg", undefined, signal);
      const { vttPath, srtPath } = captions;
      if (!vttPath || !srtPath) return false;
      const vtt = await optionalUpload(jobId, () => reporter.putFile(`clips/${index}/captions.vtt`, vttPath, "text/vtt; charset=utf-8", undefined, signal));
      const srt = await optionalUpload(jobId, () => reporter.putFile(`clips/${index}/captions.srt`, srtPath, "application/x-subrip; charset=utf-8", undefined, signal));
      return vtt && srt;
    });
    await Promise.all([rm(videoPath, { force: true }), rm(thumbnailPath, { force: true })]);
    signal.throwIfAborted();

    const clip: ClipReport = {
      index,
      start_seconds: span.start,
      end_seconds: span.end,
      score: 0,
      // An edit re-renders without the source's analysis: no emphasis moments, no punch-in.
      zooms: [],
      reasons: [EDIT_REASON],
      width: size.width,
      height: size.height,
      reframe: plan.used,
      faces_count: plan.facesCount,
      text: captions.text,
      title: edit.title ?? captions.title,
      captions_burned: captions.captionsBurned,
      sidecars,
      prompt_match: null,
      removed: removal.removed,
      ...(removal.kept.length > 1 ? { duration_seconds: Math.round(keptSeconds(removal) * 1000) / 1000 } : {}),
      framing: framingReport(plan.views, source, size, span.end - span.start),
      scores: null,
      judged_by: "signals",
      description: null,
      hashtags: [],
    };
    const endComplete = clock.begin("complete");
    await reporter.complete({
      title: source.title,
      source_duration_seconds: source.durationSeconds,
      clips: [clip],
      transcript: null,
      transcript_unavailable_reason: heard.reason ?? "A clip edit renders with the words it was sent; the job's transcript is unchanged.",
      translation: brand.translationOutcome,
      judgement: null,
      chapters: [],
      timings: { ...(job.timeline ? { timeline: job.timeline } : {}), engine_started_at: clock.startedAt, stages: clock.timings().slice(0, 64) },
    });
    endComplete();
    log.info("edit_completed", { job_id: jobId, edit_id: edit.edit_id, index, stages: clock.timings() });
    return "completed";
  } catch (error) {
    const kind = abortKindOf(signal);
    if (kind === "canceled" || kind === "inactive" || (error instanceof JobAborted && error.kind !== "shutdown")) {
      log.info("edit_stopped", { job_id: jobId, edit_id: edit.edit_id, reason: kind ?? "inactive" });
      return kind === "canceled" ? "canceled" : "inactive";
    }
    if (kind === "shutdown") {
      // The Worker puts the edit back, as it does a job.
      await reporter.interrupted({ reason: "shutdown" }).catch((e: unknown) => log.warn("edit_interrupted_report_lost", { job_id: jobId, error: errorMessage(e) }));
      return "shutdown";
    }
    const failure = toFailure(error, jobId, edit.edit_id);
    log.warn("edit_failed", { job_id: jobId, edit_id: edit.edit_id, code: failure.code, message: failure.message });
    await reporter.fail({ code: failure.code, message: failure.message.slice(0, 500) }).catch((e: unknown) => log.warn("edit_fail_report_lost", { job_id: jobId, error: errorMessage(e) }));
    return "failed";
  } finally {
    await workDir?.remove().catch((error: unknown) => log.error("workdir_remove_failed", { job_id: jobId, error: errorMessage(error) }));
  }
}
