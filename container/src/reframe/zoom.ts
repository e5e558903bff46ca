/**
 * Punch-in zooms (config `zoom: emphasis`, docs/framing.md): on each moment
 * of vocal emphasis the picture pushes in to ZOOM_SCALE over RAMP_SECONDS,
 * holds, and eases back out over RAMP_SECONDS, about the crop window's
 * centre. A framed face must stay whole: the zoom is lowered until every face
 * box seen during it fits the zoomed window, and dropped when that leaves
 * less than MIN_SCALE.
 *
 * In the encode it is two filters after the crop (zoomFilters): the crop's
 * scale to the output, its size re-evaluated on every frame (eval=frame: the scaler is only rebuilt
 * while the size changes, on the ramps), then a crop of the output's size
 * from its middle. Timestamps pass through untouched.
 */
import type { Size } from "../render/geometry.ts";
import type { FaceBox } from "./detector.ts";
import { pathAt, type CameraPath } from "./path.ts";

export const ZOOM_SCALE = 1.15;
export const RAMP_SECONDS = 0.3;
/** A zoom held shorter than this after its ramp in is stretched to it, so it reads as a deliberate push. */
const MIN_HOLD_SECONDS = 0.4;
/** A zoom clamped below this (a face near the window's edge) is not worth a push: none there. */
const MIN_SCALE = 1.05;
/** Zooms closer than this are merged into one (no out-and-in flicker). */
const MERGE_GAP_SECONDS = 0.5;

/** One push-in, in clip seconds: [start, end] from the ramp in's start to the ramp out's end. */
export interface Zoom {
  start: number;
  end: number;
  scale: number;
}

/** A face box at a clip time, in fractions of the source frame (the tracker's boxes). */
export interface TimedFace {
  t: number;
  box: Pick<FaceBox, "x" | "y" | "width" | "height">;
}

/** The window's centre, clamped so the window stays inside the frame (as the crop does). */
function windowCentre(path: CameraPath, t: number, window: { width: number; height: number }): { x: number; y: number } {
  const c = pathAt(path, t);
  const clamp = (v: number, half: number) => Math.min(1 - half, Math.max(half, v));
  return { x: clamp(c.x, window.width / 2), y: clamp(c.y, window.height / 2) };
}

/** The largest zoom (at most ZOOM_SCALE) that keeps every face seen during [start, end] inside the zoomed window. */
function clampedScale(zoom: { start: number; end: number }, path: CameraPath, window: { width: number; height: number }, faces: readonly TimedFace[]): number {
  let scale = ZOOM_SCALE;
  for (const face of faces) {
    if (face.t < zoom.start || face.t > zoom.end) continue;
    const c = windowCentre(path, face.t, window);
    const reachX = Math.max(Math.abs(face.box.x - c.x), Math.abs(face.box.x + face.box.width - c.x));
    const reachY = Math.max(Math.abs(face.box.y - c.y), Math.abs(face.box.y + face.box.height - c.y));
    // A face already past the unzoomed window's edge is not framed there: it does not limit the zoom.
    if (reachX > window.width / 2 || reachY > window.height / 2) continue;
    scale = Math.min(scale, window.width / 2 / Math.max(reachX, 1e-6), window.height / 2 / Math.max(reachY, 1e-6));
  }
  return scale;
}

/**
 * The clip's zooms from its moments of emphasis (clip seconds): each starts
 * its ramp at the moment's start and holds to the moment's end (at least
 * MIN_HOLD_SECONDS), then eases out; a zoom that would not end inside the clip
 * is dropped. `window` is the crop window's size in fractions of the frame.
 */
export function planZooms(args: {
  moments: readonly { start: number; end: number }[];
  duration: number;
  path: CameraPath;
  window: { width: number; height: number };
  faces: readonly TimedFace[];
}): Zoom[] {
  const spans: { start: number; end: number }[] = [];
  for (const m of [...args.moments].sort((a, b) => a.start - b.start)) {
    const start = Math.max(0, m.start);
    const end = Math.max(m.end, start + RAMP_SECONDS + MIN_HOLD_SECONDS) + RAMP_SECONDS;
    if (end > args.duration || start >= args.duration) continue;
    const last = spans.at(-1);
    if (last && start - last.end < MERGE_GAP_SECONDS) last.end = Math.max(last.end, end);
    else spans.push({ start, end });
  }
  return spans
    .map((s) => ({ ...s, scale: clampedScale(s, args.path, args.window, args.faces) }))
    .filter((z) => z.scale >= MIN_SCALE)
    .map((z) => ({ start: round(z.start), end: round(z.end), scale: round(z.scale) }));
}

function round(value: number): number {
  return Math.round(value * 1000) / 1000;
}

function decimal(value: number): string {
  return value.toFixed(6);
}

/**
 * The zoom factor at `t` as an ffmpeg expression: for each zoom a trapezoid
 * (0 to 1 over the ramp, 1 while held, back to 0), eased by smoothstep, times
 * its extra scale; 1 between zooms.
 */
export function zoomExpression(zooms: readonly Zoom[]): string {
  if (zooms.length === 0) return "1";
  const terms = zooms.map((z) => {
    const up = `clip((t-${decimal(z.start)})/${decimal(RAMP_SECONDS)},0,1)`;
    const down = `clip((t-${decimal(z.end - RAMP_SECONDS)})/${decimal(RAMP_SECONDS)},0,1)`;
    const u = `(${up}-${down})`;
    return `${decimal(z.scale - 1)}*(3*${u}*${u}-2*${u}*${u}*${u})`;
  });
  return `(1+${terms.join("+")})`;
}

/**
 * The filters that take the crop window to the output's size with the zooms:
 * scaled to the output's size times the zoom factor (even sides) on every
 * frame, in place of the plain scale, then the output's size cropped from its
 * middle (even offsets, for yuv420p).
 */
export function zoomFilters(output: Size, zooms: readonly Zoom[]): string {
  if (zooms.length === 0) return "";
  const factor = zoomExpression(zooms);
  const scale = `scale=w='2*trunc(${output.width}*${factor}/2)':h='2*trunc(${output.height}*${factor}/2)':eval=frame:flags=bicubic`;
  const crop = `crop=w=${output.width}:h=${output.height}:x='2*trunc((in_w-${output.width})/4)':y='2*trunc((in_h-${output.height})/4)'`;
  return `${scale},${crop}`;
}
