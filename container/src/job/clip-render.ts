/**
 * Renders one clip of the job: its reframe plan (face detection for
 * faces/auto), what to cut out (silences, fillers), its captions, then its
 * encode. The thumbnail is only prepared here; it is taken beside the
 * clip's upload (clip-upload.ts).
 */
import { stat } from "node:fs/promises";
import type { ClipConfig, Transcript } from "#contract";
import type { JobBrand } from "../brand/prepare.ts";
import { prepareClipCaptions } from "../captions/index.ts";
import { framingReport } from "../reframe/framing-report.ts";
import { planReframe, windowFractions, type ReframePlan } from "../reframe/plan.ts";
import { planZooms, type Zoom } from "../reframe/zoom.ts";
import { outputSize, uprightSize, type Size } from "../render/geometry.ts";
import { renderClipVideo, renderThumbnail } from "../render/index.ts";
import { thumbnailFrom } from "../render/thumbnail.ts";
import { log } from "../shared/log.ts";
import type { Candidate, SourceInfo } from "../shared/types.ts";
import { noRemovals, planRemovals, type Interval } from "../steer/removals.ts";
import type { ClipsProgress } from "./clips-progress.ts";
import type { JobContext, RenderedClip } from "./context.ts";
import { round3 } from "../shared/round.ts";

/** Share of a clip's render progress that face detection stands for (measured: bench/engine/faces.ts). */
const DETECT_SHARE = 0.3;

/** What every clip's render reads, fixed before the first one starts. */
export interface ClipRenderPlan {
  source: SourceInfo;
  candidates: Candidate[];
  /** The transcript as heard: captions use it even when storing it fails while clips render. */
  transcript: Transcript | null;
  /** Moments of vocal emphasis, in source seconds (zoom: emphasis). */
  emphasis: Interval[];
  /** The analysed window's pauses (where no sound was heard), for silence removal. */
  pauses: Interval[];
  speechSpans: Interval[] | null;
  keyframes: number[] | null;
  brand: JobBrand;
  promptMatches: number[];
  progress: ClipsProgress;
}

/**
 * The clip's punch-in zooms (zoom: emphasis) on its moments of vocal
 * emphasis: only on a cropped picture (not fit), and not while two people
 * are shown stacked.
 */
function clipZooms(config: ClipConfig, reframe: ReframePlan, emphasis: readonly Interval[], candidate: Candidate, source: SourceInfo, output: Size): Zoom[] {
  if (config.zoom !== "emphasis" || reframe.views.fit) return [];
  const duration = candidate.end - candidate.start;
  const moments = emphasis.filter((m) => m.end > candidate.start && m.start < candidate.end).map((m) => ({ start: m.start - candidate.start, end: m.end - candidate.start }));
  const split = reframe.views.split?.during ?? [];
  const picture = uprightSize(source);
  const zooms = planZooms({ moments, duration, path: reframe.views.single, window: windowFractions(output.width / output.height, picture.width, picture.height), faces: reframe.faces ?? [] });
  return zooms.filter((z) => !split.some((s) => z.end > s.from && z.start < s.to));
}

export async function renderJobClip(ctx: JobContext, plan: ClipRenderPlan, index: number, signal: AbortSignal): Promise<RenderedClip> {
  const { job, runner, workDir } = ctx;
  const { source, brand } = plan;
  const candidate = plan.candidates[index]!;
  const planned = outputSize(job.config, source);
  const videoPath = workDir.file(`clip-${index}.mp4`);
  const thumbnailPath = workDir.file(`clip-${index}.jpg`);
  // Face detection (reframe faces/auto) takes the first DETECT_SHARE of each clip's progress.
  const detectShare = job.config.reframe === "faces" || job.config.reframe === "auto" ? DETECT_SHARE : 0;
  const reframe = await planReframe({
    runner,
    source,
    candidate,
    config: job.config,
    output: planned,
    speech: plan.speechSpans,
    rawPath: workDir.file(`faces-${index}.rgb`),
    signal,
    onProgress: (f) => plan.progress.rendering(index, detectShare * f),
  });
  log.info("clip_reframe", {
    job_id: ctx.jobId,
    index,
    reframe: reframe.used,
    faces: reframe.facesCount,
    detection_ms: reframe.detectionMs,
    ...(reframe.content ? { text_density: Number(reframe.content.textDensity.toFixed(4)), still_share: Number(reframe.content.stillShare.toFixed(3)), content: reframe.content.reason } : {}),
  });
  const zooms = clipZooms(job.config, reframe, plan.emphasis, candidate, source, planned);
  const framed: ReframePlan = zooms.length > 0 ? { ...reframe, views: { ...reframe.views, zooms } } : reframe;
  const removal =
    source.hasAudio && (job.config.remove_silence !== "off" || job.config.remove_fillers)
      ? planRemovals({
          start: candidate.start,
          end: candidate.end,
          silence: job.config.remove_silence,
          fillers: job.config.remove_fillers,
          pauses: plan.pauses,
          words: plan.transcript?.words ?? [],
        })
      : noRemovals(candidate.start, candidate.end);
  const captions = await prepareClipCaptions({
    removal: { plan: removal, fillers: job.config.remove_fillers },
    transcript: plan.transcript,
    config: job.config,
    start: candidate.start,
    end: candidate.end,
    width: planned.width,
    height: planned.height,
    // The WebAssembly ffmpeg is built without libass.
    canBurn: runner.backend === "native",
    file: (name) => workDir.file(name),
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
    signal,
    onProgress: (f) => plan.progress.rendering(index, detectShare + (1 - detectShare) * f),
    plan: framed,
    captionsPath: captions.assPath,
    logo: brand.logo,
    kept: removal.kept,
  });
  plan.progress.toUpload(index, (await stat(videoPath)).size);
  const makeThumbnail = (thumbnailSignal: AbortSignal) =>
    renderThumbnail(runner, { source, candidate, config: job.config, outPath: videoPath, thumbnailPath, thumbnailFrom: thumbnailFrom(source, candidate, plan.keyframes), plan: reframe, signal: thumbnailSignal });
  const framing = framingReport(reframe.views, source, size, candidate.end - candidate.start);
  const promptMatch = job.config.prompt ? (plan.promptMatches[index] ?? null) : null;
  return { index, candidate, videoPath, thumbnailPath, makeThumbnail, ...size, plan: reframe, captions, removal, promptMatch, framing, zooms: zooms.map((z) => ({ start_seconds: round3(candidate.start + z.start), end_seconds: round3(candidate.start + z.end) })) };
}
