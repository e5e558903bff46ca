/**
 * The clip's framing as the engine reports it (ClipReport.framing): the crop
 * window's size in source pixels, computed as the render's crop filter does
 * (filter.ts), and the single view's camera path with finite times, so an
 * editor export can reproduce the crop.
 */
import { MAX_FRAMING_SEGMENTS, type ClipFraming } from "#contract";
import { uprightSize, type Size } from "../render/geometry.ts";
import type { SourceInfo } from "../shared/types.ts";
import type { Framing } from "./plan.ts";

function clamp01(value: number): number {
  return Math.min(1, Math.max(0, value));
}

/** The window the crop filter cuts: the largest of the output's shape in the frame, even-sized (as movingCrop's w/h). */
export function cropWindow(output: Size, source: Pick<SourceInfo, "width" | "height">): Size {
  // The filter writes the aspect with six decimals; the same number here gives the same window.
  const aspect = Number((output.width / output.height).toFixed(6));
  return {
    width: 2 * Math.trunc(Math.min(source.width, source.height * aspect) / 2),
    height: 2 * Math.trunc(Math.min(source.height, source.width / aspect) / 2),
  };
}

export function framingReport(views: Framing, stored: Pick<SourceInfo, "width" | "height" | "rotation" | "fps">, output: Size, clipSeconds: number): ClipFraming {
  // Sizes are of the picture as shown (and as the crop filter sees it): a stored turned picture's sides swapped.
  const source = { ...uprightSize(stored), fps: stored.fps };
  // fit crops nothing: the window is the whole frame (scaled into the output over its blurred copy; the clip's reframe says "fit").
  const window = views.fit ? { width: source.width, height: source.height } : cropWindow(output, source);
  const path = views.single
    .filter((segment) => segment.from < clipSeconds)
    .map((segment) => ({
      from_seconds: Math.max(0, segment.from),
      // The render's last piece runs on without an end; the report ends it with the clip.
      to_seconds: Number.isFinite(segment.to) ? Math.min(segment.to, clipSeconds) : clipSeconds,
      x0: clamp01(segment.x0),
      x1: clamp01(segment.x1),
      y0: clamp01(segment.y0),
      y1: clamp01(segment.y1),
    }))
    .slice(0, MAX_FRAMING_SEGMENTS);
  return {
    source_width: source.width,
    source_height: source.height,
    source_fps: source.fps > 0 && Number.isFinite(source.fps) ? Math.min(1000, source.fps) : 30,
    crop_width: Math.max(1, window.width),
    crop_height: Math.max(1, window.height),
    path: path.length > 0 ? path : [{ from_seconds: 0, to_seconds: clipSeconds, x0: 0.5, x1: 0.5, y0: 0.5, y1: 0.5 }],
    split: (views.split?.during.length ?? 0) > 0,
  };
}
