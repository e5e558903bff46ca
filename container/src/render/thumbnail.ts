/**
 * A clip's thumbnail: one JPEG frame of the clip's size, 40% into the clip,
 * taken one of two ways, whichever costs less for this source:
 *
 * - from the source: seek to the keyframe before that moment, decode up to
 *   it, crop and scale as the clip does at that moment. The cost grows with
 *   the distance back to the source's previous keyframe and with the source's
 *   picture size (a 4K source decodes four times the pixels of 1080p).
 * - from the rendered clip: the same seek in the clip, which is already
 *   cropped and scaled (burned captions included, since it is the clip's own
 *   frame). The cost is bounded by the clip's keyframe spacing (x264 puts one
 *   at every scene cut and at least every 250 frames) at the output size.
 *
 * Measured on this 2-core machine on the bench's 1080p30 source (CPU seconds,
 * median of 5, 30 s clip at 1080x1920; `npm run bench:engine` repeats it on
 * every run): from the source 0.19 s with 2 s between keyframes and 1.17 s
 * with 10 s; from the clip 0.45 s. So the source wins when its keyframe before
 * the moment is close, the clip when it is far: the rule below takes the
 * source while at most SOURCE_DECODE_BUDGET seconds of 1080p-equivalent
 * picture lie between them, and the clip otherwise or when the keyframe times
 * are unknown (the analysis only knows them when it read keyframes).
 */
import type { ClipConfig } from "#contract";
import { pinnedDemuxer } from "../source/probe.ts";
import { reframeGraph } from "../reframe/filter.ts";
import { viewsAt, viewsOf, type ReframePlan } from "../reframe/plan.ts";
import { outputSize, uprightSize } from "./geometry.ts";
import type { Candidate, SourceInfo } from "../shared/types.ts";

/** Where in the clip the thumbnail is taken (fraction of its length). */
export const THUMBNAIL_AT = 0.4;
/** Break-even from the figures above: about 3 s of 1080p decode cost what the clip's seek costs. */
export const SOURCE_DECODE_BUDGET = 3;
const FULL_HD_PIXELS = 1920 * 1080;

export type ThumbnailFrom = "source" | "clip";

/** Seconds into the clip where its thumbnail is taken. */
export function thumbnailOffset(candidate: Pick<Candidate, "start" | "end">): number {
  return (candidate.end - candidate.start) * THUMBNAIL_AT;
}

/**
 * The cheaper way for this clip. `keyframes`: the source's keyframe times
 * (ascending, from the analysis), or null when they are not known.
 */
export function thumbnailFrom(
  source: Pick<SourceInfo, "width" | "height">,
  candidate: Pick<Candidate, "start" | "end">,
  keyframes: readonly number[] | null,
): ThumbnailFrom {
  if (!keyframes || keyframes.length === 0) return "clip";
  const at = candidate.start + thumbnailOffset(candidate);
  let previous = 0;
  for (const t of keyframes) {
    if (t > at + 1e-6) break;
    previous = t;
  }
  const scale = Math.max(1, (source.width * source.height) / FULL_HD_PIXELS);
  return (at - previous) * scale <= SOURCE_DECODE_BUDGET ? "source" : "clip";
}

const JPEG_OUTPUT = ["-frames:v", "1", "-q:v", "3", "-update", "1", "-f", "image2"];

/**
 * From the source: one frame seeked in the source (a short decode from the
 * nearest keyframe) with the crop that is in force at that moment of the clip.
 */
export function sourceThumbnailArgs(args: {
  source: SourceInfo;
  candidate: Candidate;
  config: Pick<ClipConfig, "aspect_ratio" | "resolution" | "reframe" | "layout">;
  thumbnailPath: string;
  plan?: Pick<ReframePlan, "views">;
}): string[] {
  const { source, candidate, config } = args;
  const size = outputSize(config, source);
  const offset = thumbnailOffset(candidate);
  const picture = reframeGraph(size, viewsAt(viewsOf(args.plan, config, candidate), offset), "yuvj420p", uprightSize(source));
  return [
    "-nostdin", "-hide_banner", "-loglevel", "error", "-y",
    "-protocol_whitelist", "file",
    "-ss", (candidate.start + offset).toFixed(6),
    "-f", pinnedDemuxer(source.format),
    "-i", source.path,
    "-an", "-sn", "-dn",
    "-filter_complex", `${picture}[thumb]`,
    "-map", "[thumb]",
    ...JPEG_OUTPUT, args.thumbnailPath,
  ];
}

/** From the rendered clip (an MP4 this engine just wrote): the frame at the same moment, already cropped and scaled. */
export function clipThumbnailArgs(args: { clipPath: string; candidate: Pick<Candidate, "start" | "end">; thumbnailPath: string }): string[] {
  return [
    "-nostdin", "-hide_banner", "-loglevel", "error", "-y",
    "-protocol_whitelist", "file",
    "-ss", thumbnailOffset(args.candidate).toFixed(6),
    "-f", "mov",
    "-i", args.clipPath,
    "-map", "0:v:0", "-an", "-sn", "-dn",
    "-vf", "format=yuvj420p",
    ...JPEG_OUTPUT, args.thumbnailPath,
  ];
}
