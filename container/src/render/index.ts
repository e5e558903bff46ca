/**
 * Renders one clip and its thumbnail, as two ffmpeg runs (the job makes the
 * thumbnail while the clip uploads, job/run.ts).
 *
 * - `-ss` before `-i` seeks fast to the keyframe before the cut, then ffmpeg
 *   decodes and drops frames up to the exact start; the clip is re-encoded,
 *   so both cut points are frame-accurate (a stream copy would start at the
 *   previous keyframe).
 * - libx264 `veryfast` CRF 21: on this machine a 30 s 1080x1920 clip encodes
 *   at about 1.2-1.9x realtime (ultrafast about 2.4x but visibly blockier at
 *   the same size); AAC 128k; yuv420p and High profile for every player;
 *   `+faststart` so a browser can play before the download ends.
 * - Audio-less sources get a silent AAC track: clients expect H.264/AAC and
 *   some players and platforms reject video without audio.
 * - The thumbnail is a JPEG of the same crop and size, taken 40% into the
 *   clip by a separate short run, from the source or from the rendered clip,
 *   whichever is cheaper (thumbnail.ts). (Taking it from the clip's own run
 *   with split+select made that run about ten times slower on this ffmpeg:
 *   209 s instead of 22 s for a 10 s 1080x1920 clip.)
 * - Safety: argument array, `-nostdin`, `-protocol_whitelist file`, the
 *   probed demuxer pinned with `-f`, an output size cap (`-fs`, and a check
 *   that the cap was not hit) and a wall-clock limit.
 */
import { stat } from "node:fs/promises";
import { MAX_CLIP_UPLOAD_BYTES, type ClipConfig } from "#contract";
import type { FfmpegRunner } from "../ffmpeg/runner.ts";
import { brandStage } from "../brand/stage.ts";
import type { LogoPlacement } from "../brand/logo.ts";
import { pinnedDemuxer } from "../source/probe.ts";
import { reframeGraph } from "../reframe/filter.ts";
import { cutStage } from "./cuts.ts";
import type { Interval } from "../steer/removals.ts";
import { viewsOf, type ReframePlan } from "../reframe/plan.ts";
import { outputSize, uprightSize } from "./geometry.ts";
import { clipThumbnailArgs, sourceThumbnailArgs, type ThumbnailFrom } from "./thumbnail.ts";
import type { Candidate, SourceInfo, StageProgress } from "../shared/types.ts";

export const VIDEO_PRESET = "veryfast";
const VIDEO_CRF = "21";
const AUDIO_BITRATE = "128k";
const THUMBNAIL_TIMEOUT_MS = 120_000;

export interface RenderArgs {
  source: SourceInfo;
  candidate: Candidate;
  config: ClipConfig;
  outPath: string;
  thumbnailPath: string;
  signal: AbortSignal;
  onProgress: StageProgress;
  /** The crop's camera paths (reframe/plan.ts); without it, the centre or the activity plan. */
  plan?: Pick<ReframePlan, "views">;
  /** ASS captions (and hook title) to burn in this same encode (see captions/), or none. */
  captionsPath?: string | null;
  /** The account's logo and its place (brand/logo.ts), drawn in this same encode, or none. */
  logo?: { path: string; demuxer: string; placement: LogoPlacement } | null;
  /** Where the thumbnail comes from (thumbnail.ts picks the cheaper); default the source. */
  thumbnailFrom?: ThumbnailFrom;
  /**
   * The pieces kept when pauses or fillers are cut, in source
   * seconds inside the candidate; absent or one piece: the whole clip.
   */
  kept?: Interval[];
}

/** Generous: the wasm backend encodes 1080x1920 at about 0.14x realtime. */
export function renderTimeoutMs(clipSeconds: number): number {
  return 120_000 + clipSeconds * 20_000;
}

const STATS_TIME = /\btime=\s*(\d+):(\d+):(\d+(?:\.\d+)?)/;

function inputArgs(source: SourceInfo, seekSeconds: number): string[] {
  return [
    "-nostdin", "-hide_banner", "-loglevel", "error", "-stats", "-y",
    "-protocol_whitelist", "file",
    "-ss", seekSeconds.toFixed(6),
    "-f", pinnedDemuxer(source.format),
    "-i", source.path,
  ];
}

/** The logo as the second input: one still image, its demuxer pinned like the source's. */
function logoInputArgs(logo: RenderArgs["logo"]): string[] {
  return logo ? ["-protocol_whitelist", "file", "-f", logo.demuxer, "-i", logo.path] : [];
}

/** The clip's length once rendered: its span, less what the removal stage cuts. */
export function renderedSeconds(args: Pick<RenderArgs, "candidate" | "kept">): number {
  const kept = args.kept ?? [];
  if (kept.length <= 1) return args.candidate.end - args.candidate.start;
  return kept.reduce((sum, piece) => sum + (piece.end - piece.start), 0);
}

/**
 * The graph: picture (reframe), then the removal stage when something is
 * cut (cuts.ts, its own separate stage), then the brand stage: the
 * logo and libass's captions and hook title (brand/stage.ts).
 */
function clipGraph(args: Pick<RenderArgs, "source" | "candidate" | "config" | "plan" | "captionsPath" | "kept" | "logo">, size: ReturnType<typeof outputSize>): { graph: string; audio: string } {
  const { source, candidate, config } = args;
  const framed = reframeGraph(size, viewsOf(args.plan, config, candidate), "yuv420p", uprightSize(source));
  const brand = { logo: args.logo ? { input: "1:v", placement: args.logo.placement } : null, assPath: args.captionsPath };
  const kept = args.kept ?? [];
  if (kept.length <= 1 || !source.hasAudio) {
    const graph = [`${brandStage(framed, brand)}[clip]`, ...(source.hasAudio ? [] : ["anullsrc=r=48000:cl=stereo[silence]"])].join(";");
    return { graph, audio: source.hasAudio ? "0:a:0" : "[silence]" };
  }
  const pieces = kept.map((piece) => ({ start: piece.start - candidate.start, end: piece.end - candidate.start }));
  const cut = cutStage("[framed]", "[0:a:0]", pieces);
  return { graph: [`${framed}[framed]`, ...cut.chains, `${brandStage(`${cut.video}null`, brand)}[clip]`].join(";"), audio: cut.audio };
}

export function buildClipArgs(args: Pick<RenderArgs, "source" | "candidate" | "config" | "outPath" | "plan" | "captionsPath" | "kept" | "logo">): { ffmpegArgs: string[]; width: number; height: number } {
  const { source, candidate } = args;
  const size = outputSize(args.config, source);
  const { graph, audio } = clipGraph(args, size);
  const ffmpegArgs = [
    ...inputArgs(source, candidate.start),
    ...logoInputArgs(args.logo),
    "-filter_complex", graph,
    "-map", "[clip]",
    "-map", audio,
    "-t", renderedSeconds(args).toFixed(6),
    "-c:v", "libx264", "-preset", VIDEO_PRESET, "-crf", VIDEO_CRF, "-profile:v", "high", "-pix_fmt", "yuv420p",
    "-c:a", "aac", "-b:a", AUDIO_BITRATE, "-ac", "2",
    "-map_metadata", "-1", "-map_chapters", "-1",
    "-movflags", "+faststart",
    "-fs", String(MAX_CLIP_UPLOAD_BYTES),
    args.outPath,
  ];
  return { ffmpegArgs, ...size };
}

/** The clip's video (its thumbnail is renderThumbnail's, once this is written). */
export async function renderClipVideo(runner: FfmpegRunner, args: Omit<RenderArgs, "thumbnailPath" | "thumbnailFrom">): Promise<{ width: number; height: number }> {
  const { ffmpegArgs, width, height } = buildClipArgs(args);
  const duration = renderedSeconds(args);
  let reported = 0;
  const result = await runner.ffmpeg({
    args: ffmpegArgs,
    inputs: [args.source.path, ...(args.captionsPath ? [args.captionsPath] : []), ...(args.logo ? [args.logo.path] : [])],
    outputs: [args.outPath],
    timeoutMs: renderTimeoutMs(duration),
    signal: args.signal,
    onStderrLine: (line) => {
      const match = STATS_TIME.exec(line);
      if (!match) return;
      const seconds = Number(match[1]) * 3600 + Number(match[2]) * 60 + Number(match[3]);
      const fraction = Math.min(1, seconds / Math.max(duration, 0.001));
      if (fraction > reported) {
        reported = fraction;
        args.onProgress(fraction);
      }
    },
  });
  if (result.exitCode !== 0) {
    throw new Error(`rendering the clip failed (ffmpeg exit ${result.exitCode}): ${result.stderrTail.slice(-600)}`);
  }
  const written = await stat(args.outPath);
  if (written.size >= MAX_CLIP_UPLOAD_BYTES * 0.99) {
    throw new Error(`the clip reached the ${MAX_CLIP_UPLOAD_BYTES} byte size cap and was cut short`);
  }
  args.onProgress(1);
  return { width, height };
}

/** The clip's thumbnail, from the source or from the clip renderClipVideo wrote at `outPath` (thumbnail.ts picks which). */
export async function renderThumbnail(
  runner: FfmpegRunner,
  args: Pick<RenderArgs, "source" | "candidate" | "config" | "outPath" | "thumbnailPath" | "thumbnailFrom" | "plan" | "signal">,
): Promise<void> {
  const fromClip = args.thumbnailFrom === "clip";
  const thumbnail = await runner.ffmpeg({
    args: fromClip ? clipThumbnailArgs({ clipPath: args.outPath, candidate: args.candidate, thumbnailPath: args.thumbnailPath }) : sourceThumbnailArgs(args),
    inputs: [fromClip ? args.outPath : args.source.path],
    outputs: [args.thumbnailPath],
    timeoutMs: THUMBNAIL_TIMEOUT_MS,
    signal: args.signal,
  });
  if (thumbnail.exitCode !== 0 || (await stat(args.thumbnailPath)).size === 0) {
    throw new Error(`the clip's thumbnail failed (ffmpeg exit ${thumbnail.exitCode}): ${thumbnail.stderrTail.slice(-600)}`);
  }
}

/** The clip's video, then its thumbnail. */
export async function renderClip(runner: FfmpegRunner, args: RenderArgs): Promise<{ width: number; height: number }> {
  const size = await renderClipVideo(runner, args);
  await renderThumbnail(runner, args);
  return size;
}
