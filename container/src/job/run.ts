import { rm, stat, writeFile } from "node:fs/promises";
import { JUDGE_CANDIDATES_PER_CLIP, JUDGE_MAX_CANDIDATES, MAX_TRANSCRIPT_UPLOAD_BYTES, callbackUrl, type ClipFraming, type ClipReport, type StartJob, type Transcript } from "#contract";
import { startEarlyAnalysis, type EarlyAnalysis } from "../analyse/early.ts";
import { NoClipsFoundError, analyse } from "../analyse/index.ts";
import type { MeasurePlan, SpeechPcm } from "../analyse/measure.ts";
import { loadSpeechModel, type SpeechModelLoad } from "../analyse/speech-model.ts";
import { SENTENCE_SNAPPED_TYPES } from "../analyse/sentence-cuts.ts";
import { proposeCandidates } from "../judge/candidates.ts";
import { judgeStage } from "../judge/stage.ts";
import { prepareBrand } from "../brand/prepare.ts";
import { prepareClipCaptions, type ClipCaptions } from "../captions/index.ts";
import type { EngineConfig } from "../shared/config.ts";
import { JobAborted, JobFailure, abortKindOf, errorMessage } from "../shared/errors.ts";
import type { FfmpegRunner } from "../ffmpeg/runner.ts";
import { log } from "../shared/log.ts";
import { probeSource } from "../source/probe.ts";
import { ProgressTracker } from "../channel/progress.ts";
import { framingReport } from "../reframe/framing-report.ts";
import { planReframe, type ReframePlan } from "../reframe/plan.ts";
import { runClipPipeline } from "./clip-pipeline.ts";
import { renderClipVideo, renderThumbnail } from "../render/index.ts";
import { outputSize } from "../render/geometry.ts";
import { CallbackError, JobReporter } from "../channel/report.ts";
import { policyFor, systemResolver, type AddressPolicy, type Resolver } from "../source/address-policy.ts";
import { GrowingFile } from "../source/growing-file.ts";
import { fetchSource } from "../source/index.ts";
import { classifySourceUrl } from "../source/platforms.ts";
import { ProcessTimeoutError } from "../shared/spawn.ts";
import { fetchCaptionsUrl } from "../transcript/captions-url.ts";
import type { Cue } from "../transcript/cues.ts";
import { obtainTranscript } from "../transcript/index.ts";
import type { Candidate } from "../shared/types.ts";
import type { ScoredWindow } from "../analyse/select.ts";
import { promptClips } from "../steer/prompt.ts";
import { keptSeconds, noRemovals, planRemovals, type Interval, type RemovalPlan } from "../steer/removals.ts";
import { analysisWindow, toSourceCandidates, toSourceSpans, windowedSource, type SourceWindow } from "../steer/time-range.ts";
import { StageClock } from "./stage-clock.ts";
import { thumbnailFrom } from "../render/thumbnail.ts";
import { createWorkDir, type WorkDir } from "../shared/workdir.ts";

/**
 * One job from start to finish: fetch the source (analysing it as it
 * arrives when its container allows, analyse/early.ts), probe it, let the
 * Worker reserve credits, finish the analysis, then render the clips and
 * upload each while the next ones render (clip-pipeline.ts), complete. Each
 * stage's start and end go into the complete report and the completion log
 * line (stage-clock.ts). Any failure
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
  /** Writes the thumbnail (from the source or from the rendered clip), run beside the clip's upload. */
  makeThumbnail: (signal: AbortSignal) => Promise<void>;
  width: number;
  height: number;
  plan: ReframePlan;
  captions: ClipCaptions;
  /** What was cut out, and the match with the job's prompt (null without one). */
  removal: RemovalPlan;
  promptMatch: number | null;
  /** The crop as reported for editor exports. */
  framing: ClipFraming;
}

/** A captions file is small: it gets at most this long to download, whatever the video's limit. */
const CAPTIONS_DOWNLOAD_MS = 60_000;

function isPlatformUrl(videoUrl: string): boolean {
  try {
    return classifySourceUrl(new URL(videoUrl)).kind === "platform";
  } catch {
    return false;
  }
}

function backendNote(runner: FfmpegRunner): string {
  return runner.backend === "wasm" ? " (WebAssembly ffmpeg, slow)" : "";
}

function clipReport(clip: RenderedClip): ClipReport {
  const reasons = clip.candidate.reasons
    .map((r) => r.trim().slice(0, 120))
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
    text: clip.captions.text,
    // The model's post title when it wrote one (in the captions' language), else one of the clip's own lines.
    title: clip.candidate.judged?.title ?? clip.captions.title,
    captions_burned: clip.captions.captionsBurned,
    sidecars: clip.captions.vttPath !== null && clip.captions.srtPath !== null,
    prompt_match: clip.promptMatch,
    removed: clip.removal.removed,
    ...(clip.removal.kept.length > 1 ? { duration_seconds: Math.round(keptSeconds(clip.removal) * 1000) / 1000 } : {}),
    framing: clip.framing,
    scores: clip.candidate.judged?.scores ?? null,
    judged_by: clip.candidate.judged ? "model" : "signals",
    description: clip.candidate.judged?.description ?? null,
    hashtags: clip.candidate.judged?.hashtags ?? [],
  };
}

/** Pauses of the analysed window: the gaps between the spans where the analysis heard sound. */
function pausesBetween(sound: Interval[] | null, window: SourceWindow): Interval[] {
  if (!sound) return [];
  const pauses: Interval[] = [];
  let at = window.start;
  for (const span of [...sound].sort((a, b) => a.start - b.start)) {
    if (span.start > at) pauses.push({ start: at, end: span.start });
    at = Math.max(at, span.end);
  }
  if (window.end > at) pauses.push({ start: at, end: window.end });
  return pauses;
}

/** The transcript's words and sentences inside the analysed window (a time_range); null when none are. */
function transcriptInWindow(transcript: Transcript | null, window: SourceWindow, whole: boolean): Transcript | null {
  if (!transcript || whole) return transcript;
  const inside = (item: { start: number; end: number }) => (item.start + item.end) / 2 >= window.start && (item.start + item.end) / 2 < window.end;
  const words = transcript.words.filter(inside);
  return words.length > 0 ? { ...transcript, words, sentences: transcript.sentences.filter(inside) } : null;
}

/** Promise.all that lets every promise settle before it rejects with the first failure (in order). */
async function allSettledOrThrow<T extends readonly unknown[]>(promises: { [K in keyof T]: Promise<T[K]> }): Promise<T> {
  const settled = await Promise.allSettled(promises);
  const failed = settled.find((r): r is PromiseRejectedResult => r.status === "rejected");
  if (failed) throw failed.reason;
  return settled.map((r) => (r as PromiseFulfilledResult<unknown>).value) as unknown as T;
}

/**
 * Sidecars and the transcript are extras: a Worker that does not know their
 * route (404, e.g. mid-rollout of a new engine) leaves the clip without them
 * instead of failing the job. Anything else (409, retries exhausted) still
 * ends the job as before.
 */
async function optionalUpload(jobId: string, upload: () => Promise<void>): Promise<boolean> {
  try {
    await upload();
    return true;
  } catch (error) {
    if (error instanceof CallbackError && error.status === 404) {
      log.warn("job_optional_upload_refused", { job_id: jobId, error: error.message });
      return false;
    }
    throw error;
  }
}

/** Stores the transcript; answers why not when it could not be stored, null when it was. */
/** The largest cookies file the Worker stores (src/cookies/netscape.ts), with room for its header line. */
const MAX_COOKIES_BYTES = 101 * 1024;

/**
 * The account's cookies file for the platform, or null. A channel that cannot
 * answer costs the download its cookies, not the job; a job the Worker ended
 * (409) stops as everywhere else. The file's text is never logged.
 */
async function readPlatformCookies(reporter: JobReporter, jobId: string): Promise<string | null> {
  try {
    return await reporter.getCookies(MAX_COOKIES_BYTES);
  } catch (error) {
    if (error instanceof CallbackError && error.status !== 409) {
      console.warn(`[${jobId}] could not read the account's platform cookies (HTTP ${error.status}); downloading without them`);
      return null;
    }
    throw error;
  }
}

async function storeTranscript(transcript: Transcript, workDir: WorkDir, reporter: JobReporter, jobId: string, signal: AbortSignal): Promise<string | null> {
  const body = JSON.stringify(transcript);
  if (Buffer.byteLength(body) > MAX_TRANSCRIPT_UPLOAD_BYTES) {
    log.warn("job_transcript_too_large", { job_id: jobId, bytes: Buffer.byteLength(body) });
    return "The transcript is larger than the 8 MiB the service stores.";
  }
  const transcriptPath = workDir.file("transcript.json");
  await writeFile(transcriptPath, body, "utf8");
  const stored = await optionalUpload(jobId, () => reporter.putFile("transcript", transcriptPath, "application/json", undefined, signal));
  return stored ? null : "The transcript could not be stored by this deployment.";
}

/** The step while clips render: "Rendering clip 2 of 5", or with several at once "Rendering clips 2 and 3 of 5". */
export function renderingStep(running: number[], count: number): string {
  const numbers = running.map((i) => i + 1);
  if (numbers.length <= 1) return `Rendering clip ${numbers[0] ?? 1} of ${count}`;
  return `Rendering clips ${numbers.slice(0, -1).join(", ")} and ${numbers.at(-1)} of ${count}`;
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

/** Removes the analysis's PCM once the transcript has cut its chunks (a job's whole work directory goes at its end anyway). */
async function removePcm(pcm: SpeechPcm | null): Promise<void> {
  if (pcm) await rm(pcm.path, { force: true });
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
  let early: EarlyAnalysis | null = null;
  const clock = new StageClock();
  const started = clock.startedAt;
  log.info("job_started", { job_id: jobId, video_type: job.video_type, backend: runner.backend });
  try {
    workDir = await createWorkDir(config.workDir, jobId);
    // The speech model (loaded once per process) loads while the source downloads, not after it.
    const speechLoad = (deps.speechModel ?? loadSpeechModel)();
    speechLoad.catch(() => undefined);
    progress.start();

    progress.enter("download", "Downloading video");
    const endDownload = clock.begin("download");
    const arriving = new GrowingFile(workDir.file("source.video"));
    // The analysis reads a direct link or an upload as it arrives (native ffmpeg only; yt-dlp merges at the end).
    // A time_range job measures only its range, from the finished file (the passes seek to it).
    if (runner.backend === "native" && !isPlatformUrl(job.video_url) && !job.time_range) {
      early = startEarlyAnalysis({
        runner,
        source: arriving,
        videoType: job.video_type,
        speech: speechLoad,
        workDir: workDir.path,
        timeoutMs: (job.limits.download_timeout_seconds + 120 + job.limits.max_source_seconds * 2) * 1000,
        signal,
      });
    }
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
      onWritten: () => arriving.grew(),
      policy: deps.policy,
      resolver: deps.resolver,
      upload: job.source === "upload" ? { url: callbackUrl(config.callbackBase, jobId, "source"), token: job.token } : undefined,
      platformCookies: () => readPlatformCookies(reporter, jobId),
      platformProxy: config.platformProxy,
    }).catch((error: unknown) => {
      arriving.fail(error);
      throw error;
    });
    arriving.finish();
    endDownload();
    signal.throwIfAborted();
    log.info("job_downloaded", { job_id: jobId, bytes: fetched.bytes });
    // The client named this file: an unusable one fails the job (captions_invalid) before any work is charged.
    let captionsUrlCues: Cue[] | null = null;
    if (job.captions_url) {
      captionsUrlCues = await fetchCaptionsUrl({
        url: job.captions_url,
        destPath: workDir.file("captions-url.txt"),
        timeoutMs: Math.min(CAPTIONS_DOWNLOAD_MS, job.limits.download_timeout_seconds * 1000),
        stallTimeoutMs: config.downloadStallTimeoutMs,
        maxRedirects: config.maxRedirects,
        policy: deps.policy ?? policyFor(config.allowPrivateHosts),
        resolver: deps.resolver ?? systemResolver,
        signal,
      });
    }

    progress.enter("probe", `Probing video${note}`);
    const endProbe = clock.begin("probe");
    const source = await probeSource({
      runner,
      path: fetched.path,
      sizeBytes: fetched.bytes,
      videoUrl: job.video_url,
      platformTitle: fetched.title,
      maxSourceSeconds: job.limits.max_source_seconds,
      signal,
    });
    if (captionsUrlCues && !captionsUrlCues.some((cue) => cue.start < source.durationSeconds)) {
      throw new JobFailure("captions_invalid", "captions_url: none of the file's cues fall within the video's length.");
    }
    const ack = await reporter.probe({
      duration_seconds: source.durationSeconds,
      title: source.title,
      width: source.width,
      height: source.height,
      format: source.format.slice(0, 100),
      size_bytes: source.sizeBytes,
    });
    endProbe();
    if (!ack.proceed) {
      log.info("job_refused_by_worker", { job_id: jobId, code: ack.error?.code });
      await progress.stop();
      return "refused";
    }

    const speech = source.hasAudio ? await speechLoad : null;
    if (speech && "unavailable" in speech) log.warn("speech_detection_unavailable", { job_id: jobId, reason: speech.unavailable });
    const speechNote = speech && "unavailable" in speech ? " (speech detection unavailable: using loudness)" : "";
    progress.enter("analyse", `Analyzing video${speechNote}${note}`);
    let speechSpans: { start: number; end: number }[] | null = null;
    let quiet: { start: number; end: number }[] | null = null;
    let keyframes: number[] | null = null;
    let speechPcm: SpeechPcm | null = null;
    let windows: ScoredWindow[] = [];
    const analysisCalled = Date.now();
    // time_range: the analysis reads only the range; its times come back in source seconds.
    const window = analysisWindow(source, job.time_range);
    const wholeSource = window.start <= 0 && window.end >= source.durationSeconds;
    const prompt = job.config.prompt ?? null;
    const analysed = toSourceCandidates(
      await analyse(runner, windowedSource(source, window), job.video_type, job.config, {
        signal,
        onProgress: (f) => progress.update(f),
        speech: speech && "model" in speech ? speech.model : null,
        onSpeech: (spans) => (speechSpans = toSourceSpans(spans, window)),
        // The transcript cuts its chunks from the pass's PCM; a time_range's PCM starts at the range, not the source.
        ...(wholeSource ? { onPcm: (pcm: SpeechPcm) => (speechPcm = pcm) } : {}),
        onQuiet: (stretches) => (quiet = stretches ? toSourceSpans(stretches, window) : null),
        onKeyframes: (times) => (keyframes = times ? times.map((t) => t + window.start) : null),
        // Every window the strategy scored: a prompt's ranking, and the candidates judgement chooses among.
        onWindows: (scored: ScoredWindow[]) => (windows = toSourceSpans(scored, window)),
        // What the early analysis measured is the whole source: a time_range's window is measured from the file.
        ...(early && wholeSource ? { measured: (plan: MeasurePlan, onSeconds: (seconds: number) => void) => early!.measured(plan, onSeconds) } : {}),
      }),
      window,
    ).slice(0, job.config.max_clips);
    // The analysis began when its measuring pass did: during the download when it streamed.
    const streamedFrom = early?.startedAt() ?? null;
    const streamed = streamedFrom !== null && early?.outcome().startsWith("measured while downloading") === true;
    clock.begin("analysis", streamed ? streamedFrom : analysisCalled)();
    log.info("job_analysed", { job_id: jobId, analysis: early?.outcome() ?? "measured after the download", candidates: analysed.length });
    if (analysed.length === 0) throw new NoClipsFoundError("analysis returned no candidates");

    progress.enter("transcribe", "Transcribing speech");
    const endTranscript = clock.begin("transcript");
    const heard = await obtainTranscript({
      runner,
      reporter,
      source,
      // Within a time_range, only the range is transcribed.
      speech: speechSpans ?? (wholeSource ? null : [{ start: window.start, end: window.end }]),
      workDir: workDir.path,
      file: (name) => workDir!.file(name),
      platformYtdlp: isPlatformUrl(job.video_url) ? config.ytdlpPath : null,
      captionsUrlCues,
      pcm: speechPcm,
      jobId,
      signal,
      onProgress: (f) => progress.update(f),
    });
    endTranscript();
    // The PCM served the transcript's chunks; the renders get its disk (32 kB a second of source).
    await removePcm(speechPcm);
    let transcript: Transcript | null = transcriptInWindow(heard.transcript, window, wholeSource);
    // A source that does not say its language (a captions file) is in the one the job was told.
    if (transcript && transcript.language === null && job.config.language) transcript = { ...transcript, language: job.config.language };
    let transcriptReason = heard.transcript && !transcript ? "No words were spoken inside time_range." : heard.reason;
    signal.throwIfAborted();
    const limits = { min: job.config.min_clip_seconds, max: job.config.max_clip_seconds, duration: window.end };
    let candidates: Candidate[];
    let promptMatches: number[] = [];
    if (prompt) {
      // With a prompt, clips are the moments that match it, ranked with the analysis's signal.
      if (!transcript) {
        throw new JobFailure("prompt_needs_transcript", `The job has a prompt, but there is no transcript to match it against. ${transcriptReason ?? ""}`.trim());
      }
      const heardText = transcript;
      const matched = await clock.time("prompt", () =>
        promptClips(
          { prompt, transcript: heardText, limits: { min: limits.min, max: limits.max, from: window.start, to: window.end }, maxClips: Math.min(JUDGE_MAX_CANDIDATES, job.config.max_clips * JUDGE_CANDIDATES_PER_CLIP), windows, reporter, jobId },
          (method) => progress.enter("transcribe", method === "meaning" ? "Matching the prompt by meaning" : "Matching the prompt by words (no text embeddings on this deployment)"),
        ),
      );
      log.info("job_prompt", { job_id: jobId, method: matched.method, clips: matched.candidates.length });
      candidates = matched.candidates;
      promptMatches = matched.matches;
    } else {
      // Several times the clips asked, for judgement to choose among (judge/candidates.ts).
      candidates = proposeCandidates({ analysed, windows, transcript, snapped: SENTENCE_SNAPPED_TYPES.has(job.video_type), limits, quiet, clipsWanted: job.config.max_clips });
    }
    // Snapped edges never leave the time_range.
    candidates = candidates
      .map((c) => ({ ...c, start: Math.max(c.start, window.start), end: Math.min(c.end, window.end) }))
      .filter((c) => c.end - c.start > 0);
    if (candidates.length === 0) throw new NoClipsFoundError("analysis returned no candidates");
    // A language model judges the candidates' words; signals when none can (docs/judgement.md).
    const heardForJudge = transcript;
    const judged = await clock.time("judge", () =>
      judgeStage({ job, reporter, pool: candidates, transcript: heardForJudge, limits: { min: limits.min, max: limits.max, from: window.start, to: window.end }, sourceSeconds: source.durationSeconds, transcriptReason }),
    );
    if (prompt) promptMatches = judged.order.map((i) => promptMatches[i] ?? 0);
    candidates = judged.candidates;
    const pauses = pausesBetween(speechSpans, window);
    log.info("job_transcript", { job_id: jobId, source: transcript?.source ?? null, words: transcript?.words.length ?? 0, reason: transcriptReason });

    // Captions use the transcript as heard, even when storing it fails while clips render.
    const heardTranscript = transcript;
    const count = candidates.length;
    const concurrency = Math.min(config.renderConcurrency, count);
    const renderShare = new Array<number>(count).fill(0);
    const renderProgress = (index: number, fraction: number) => {
      renderShare[index] = Math.max(renderShare[index]!, fraction);
      progress.update(renderShare.reduce((a, b) => a + b, 0) / count);
    };
    const uploadBytes = new Array<number>(count).fill(0);
    const uploadTotal = new Array<number>(count).fill(0);
    // The upload stage's share of progress starts once every clip is rendered (earlier uploads count then).
    let uploadsOnly = false;
    const uploadProgress = () => {
      if (!uploadsOnly) return;
      const total = uploadTotal.reduce((a, b) => a + b, 0);
      const sent = uploadBytes.reduce((a, b) => a + b, 0);
      progress.update(total > 0 ? sent / total : 1);
    };
    // Face detection (reframe faces/auto) takes the first DETECT_SHARE of each clip's progress.
    const detectShare = job.config.reframe === "faces" || job.config.reframe === "auto" ? DETECT_SHARE : 0;
    const planned = outputSize(job.config, source);
    // Brand and language: translated captions and the logo, once for all clips.
    const brand = await clock.time("brand", () =>
      prepareBrand({
        job,
        runner,
        reporter,
        progress,
        transcript: heardTranscript,
        clips: candidates,
        output: planned,
        logoPath: workDir!.file("logo.image"),
        signal,
      }),
    );
    signal.throwIfAborted();
    const render = (index: number, renderSignal: AbortSignal): Promise<RenderedClip> => clock.time(`render ${index}`, () => renderOne(index, renderSignal));
    const renderOne = async (index: number, renderSignal: AbortSignal): Promise<RenderedClip> => {
      const candidate = candidates[index]!;
      const videoPath = workDir!.file(`clip-${index}.mp4`);
      const thumbnailPath = workDir!.file(`clip-${index}.jpg`);
      const plan = await planReframe({
        runner,
        source,
        candidate,
        config: job.config,
        output: planned,
        speech: speechSpans,
        rawPath: workDir!.file(`faces-${index}.rgb`),
        signal: renderSignal,
        onProgress: (f) => renderProgress(index, detectShare * f),
      });
      log.info("clip_reframe", {
        job_id: jobId,
        index,
        reframe: plan.used,
        faces: plan.facesCount,
        detection_ms: plan.detectionMs,
        ...(plan.content ? { text_density: Number(plan.content.textDensity.toFixed(4)), still_share: Number(plan.content.stillShare.toFixed(3)), content: plan.content.reason } : {}),
      });
      const removal =
        source.hasAudio && (job.config.remove_silence !== "off" || job.config.remove_fillers)
          ? planRemovals({
              start: candidate.start,
              end: candidate.end,
              silence: job.config.remove_silence,
              fillers: job.config.remove_fillers,
              pauses,
              words: heardTranscript?.words ?? [],
            })
          : noRemovals(candidate.start, candidate.end);
      const captions = await prepareClipCaptions({
        removal: { plan: removal, fillers: job.config.remove_fillers },
        transcript: heardTranscript,
        config: job.config,
        start: candidate.start,
        end: candidate.end,
        width: planned.width,
        height: planned.height,
        // The WebAssembly ffmpeg is built without libass.
        canBurn: runner.backend === "native",
        file: (name) => workDir!.file(name),
        index,
        translation: brand.translation,
        videoTitle: source.title,
        hookTop: brand.hookTop,
        emphasis: candidate.judged?.emphasis ?? [],
        postTitle: candidate.judged?.title ?? null,
      });
      const size = await renderClipVideo(runner, {
        source,
        candidate,
        config: job.config,
        outPath: videoPath,
        signal: renderSignal,
        onProgress: (f) => renderProgress(index, detectShare + (1 - detectShare) * f),
        plan,
        captionsPath: captions.assPath,
        logo: brand.logo,
        kept: removal.kept,
      });
      uploadTotal[index] = (await stat(videoPath)).size;
      const makeThumbnail = (thumbnailSignal: AbortSignal) =>
        renderThumbnail(runner, { source, candidate, config: job.config, outPath: videoPath, thumbnailPath, thumbnailFrom: thumbnailFrom(source, candidate, keyframes), plan, signal: thumbnailSignal });
      const framing = framingReport(plan.views, source, size, candidate.end - candidate.start);
      return { index, candidate, videoPath, thumbnailPath, makeThumbnail, ...size, plan, captions, removal, promptMatch: prompt ? (promptMatches[index] ?? null) : null, framing };
    };
    const upload = (index: number, clip: RenderedClip, uploadSignal: AbortSignal): Promise<void> =>
      clock.time(`upload ${index}`, () => uploadOne(index, clip, uploadSignal));
    const uploadOne = async (index: number, clip: RenderedClip, uploadSignal: AbortSignal): Promise<void> => {
      const onBytes = (n: number) => {
        uploadBytes[index] = uploadBytes[index]! + n;
        uploadProgress();
      };
      // The clip's objects go up side by side: after the last render only this clip's upload stands
      // between the renders and completion, and the small ones need not wait for the clip's bytes.
      // The thumbnail is made here, beside the clip's own upload, not after the render: after the last
      // render it no longer stands between the clip's bytes and completion (the floor's encodes take theirs
      // after each encode, as the render lane did). All settled before a failure is thrown: the pipeline
      // counts on no request and no ffmpeg of this clip outliving its upload.
      const { vttPath, srtPath } = clip.captions;
      const thumbnail = async () => {
        await clip.makeThumbnail(uploadSignal);
        uploadTotal[index] = uploadTotal[index]! + (await stat(clip.thumbnailPath)).size;
        await reporter.putFile(`clips/${index}/thumbnail`, clip.thumbnailPath, "image/jpeg", onBytes, uploadSignal);
      };
      const [, , stored] = await allSettledOrThrow<[void, void, boolean | null]>([
        reporter.putFile(`clips/${index}`, clip.videoPath, "video/mp4", onBytes, uploadSignal),
        thumbnail(),
        vttPath && srtPath
          ? allSettledOrThrow<[boolean, boolean]>([
              optionalUpload(jobId, () => reporter.putFile(`clips/${index}/captions.vtt`, vttPath, "text/vtt; charset=utf-8", undefined, uploadSignal)),
              optionalUpload(jobId, () => reporter.putFile(`clips/${index}/captions.srt`, srtPath, "application/x-subrip; charset=utf-8", undefined, uploadSignal)),
            ]).then(([vtt, srt]) => vtt && srt)
          : Promise.resolve(null),
      ]);
      if (stored === false) clip.captions = { ...clip.captions, vttPath: null, srtPath: null };
      // Stored: the work disk need not hold every clip until the end of a long job.
      await Promise.all([rm(clip.videoPath, { force: true }), rm(clip.thumbnailPath, { force: true })]);
    };
    const rendered = await runClipPipeline({
      count,
      concurrency,
      signal,
      render,
      upload,
      // The transcript is small and ready now: stored first, while the first clips render.
      uploadFirst: async (uploadSignal) => {
        if (!transcript) return;
        const stored = transcript;
        const unstored = await clock.time("upload transcript", () => storeTranscript(stored, workDir!, reporter, jobId, uploadSignal));
        if (unstored) {
          transcript = null;
          transcriptReason = unstored;
        }
      },
      onRendering: (running) => progress.enter("render", `${renderingStep(running, count)}${brand.note}${note}`),
      onRendersDone: () => {
        // The notes still hold for what is being handed over (the captions' language, the brand, a slow backend).
        progress.enter("upload", `Uploading clips${brand.note}${note}`);
        uploadsOnly = true;
        uploadProgress();
      },
    });
    await progress.stop();
    signal.throwIfAborted();
    const summary = transcript ? { source: transcript.source, language: transcript.language, word_count: transcript.words.length } : null;
    const reason = transcript ? null : (transcriptReason ?? "No transcript.").slice(0, 300);
    // The report carries the stages up to its own sending; the log line adds the complete call itself.
    const endComplete = clock.begin("complete");
    await reporter.complete({
      title: source.title,
      source_duration_seconds: source.durationSeconds,
      clips: rendered.map(clipReport),
      transcript: summary,
      transcript_unavailable_reason: reason,
      translation: brand.translationOutcome,
      judgement: judged.judgement,
      chapters: judged.chapters,
      timings: { ...(job.timeline ? { timeline: job.timeline } : {}), engine_started_at: started, stages: clock.timings().slice(0, 64) },
    });
    endComplete();
    log.info("job_completed", { job_id: jobId, clips: rendered.length, seconds: Math.round((Date.now() - started) / 1000), stages: clock.timings() });
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
    await early?.stop().catch(() => undefined);
    await workDir?.remove().catch((error: unknown) => log.error("workdir_remove_failed", { job_id: jobId, error: errorMessage(error) }));
  }
}
