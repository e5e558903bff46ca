/**
 * Output size and crop window of a clip, from numbers only (the crop
 * expressions hold nothing but digits, operators, `t` and ffmpeg's frame
 * size variables).
 *
 * Sizes: `resolution` is the output's short side.
 *   9:16 -> 1080x1920 / 720x1280    1:1  -> 1080x1080 / 720x720
 *   4:5  -> 1080x1350 / 720x900     16:9 -> 1920x1080 / 1280x720
 * Fixed ratios always give exactly these sizes (what the platforms expect),
 * even when that scales a small source up. `original` keeps the source's
 * shape and means "as the source is": its short side is the resolution or the
 * source's own short side, whichever is smaller (no upscaling), and its long
 * side is capped at 3840 (odd panoramas would otherwise exceed H.264 levels).
 * Every dimension is even (yuv420p needs it).
 */
import type { AspectRatio, ClipConfig } from "#contract";
import type { CropSegment, SourceInfo } from "../shared/types.ts";

const RATIOS: Record<Exclude<AspectRatio, "original">, [number, number]> = {
  "9:16": [9, 16],
  "1:1": [1, 1],
  "4:5": [4, 5],
  "16:9": [16, 9],
};
const MAX_LONG_SIDE = 3840;

export interface Size {
  width: number;
  height: number;
}

export function even(value: number): number {
  return Math.max(2, Math.round(value / 2) * 2);
}

/** The picture as ffmpeg decodes it: the stored size, its sides swapped when the display rotation is a quarter turn. */
export function uprightSize(source: Pick<SourceInfo, "width" | "height" | "rotation">): Size {
  const quarter = Math.abs(Math.round((source.rotation ?? 0) / 90)) % 2 === 1;
  return quarter ? { width: source.height, height: source.width } : { width: source.width, height: source.height };
}

export function outputSize(config: Pick<ClipConfig, "aspect_ratio" | "resolution">, stored: Pick<SourceInfo, "width" | "height" | "rotation">): Size {
  if (config.aspect_ratio !== "original") {
    const [w, h] = RATIOS[config.aspect_ratio];
    const short = config.resolution;
    return w <= h ? { width: short, height: even((short * h) / w) } : { width: even((short * w) / h), height: short };
  }
  // "As the source is" means as it is shown: a phone's portrait video stored turned stays portrait.
  const source = uprightSize(stored);
  const sourceShort = Math.min(source.width, source.height);
  const sourceLong = Math.max(source.width, source.height);
  let short = even(Math.min(config.resolution, sourceShort));
  let long = even((short * sourceLong) / sourceShort);
  if (long > MAX_LONG_SIDE) {
    long = MAX_LONG_SIDE;
    short = even((MAX_LONG_SIDE * sourceShort) / sourceLong);
  }
  return source.width >= source.height ? { width: long, height: short } : { width: short, height: long };
}

/** Crop centre per stretch of the clip: `fromClipSeconds` is where it starts, in seconds from the clip's first frame. */
export interface CropStep {
  fromClipSeconds: number;
  centerX: number;
  centerY: number;
}

/**
 * The crop centres over the clip: the middle, or (reframe=auto with a plan)
 * one centre per scene segment, constant inside a segment so the picture
 * never jitters; it moves only on the cut, where the viewer does not notice.
 */
export function cropSteps(clipStart: number, segments: CropSegment[] | undefined): CropStep[] {
  if (!segments || segments.length === 0) return [{ fromClipSeconds: 0, centerX: 0.5, centerY: 0.5 }];
  return [...segments]
    .sort((a, b) => a.fromSeconds - b.fromSeconds)
    .map((segment, index) => ({
      fromClipSeconds: index === 0 ? 0 : Math.max(0, segment.fromSeconds - clipStart),
      centerX: Math.min(1, Math.max(0, segment.centerX)),
      centerY: Math.min(1, Math.max(0, segment.centerY)),
    }));
}

function decimal(value: number): string {
  return value.toFixed(6);
}

/** Piecewise-constant expression in `t` (seconds from the clip's first frame). */
function piecewise(steps: CropStep[], key: "centerX" | "centerY"): string {
  let expression = decimal(steps[steps.length - 1]![key]);
  for (let i = steps.length - 2; i >= 0; i--) {
    expression = `if(lt(t,${decimal(steps[i + 1]!.fromClipSeconds)}),${decimal(steps[i]![key])},${expression})`;
  }
  return expression;
}

/**
 * The crop filter: the largest window of the output's shape inside the
 * decoded frame (sized from iw/ih, so it holds for rotated or oddly tagged
 * sources too), placed on the step's centre and kept inside the frame, with
 * even offsets for yuv420p. Only numbers and ffmpeg's own variables appear;
 * the expressions are quoted so their commas stay inside the option.
 */
export function cropFilter(output: Size, steps: CropStep[]): string {
  const aspect = decimal(output.width / output.height);
  const width = `2*trunc(min(iw,ih*${aspect})/2)`;
  const height = `2*trunc(min(ih,iw/${aspect})/2)`;
  const x = `2*trunc(max(0,min(iw-ow,(${piecewise(steps, "centerX")})*iw-ow/2))/2)`;
  const y = `2*trunc(max(0,min(ih-oh,(${piecewise(steps, "centerY")})*ih-oh/2))/2)`;
  return `crop=w='${width}':h='${height}':x='${x}':y='${y}'`;
}
