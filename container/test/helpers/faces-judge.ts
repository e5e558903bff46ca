/**
 * Judging a rendered clip from its pixels: RGB frames decoded at a few frames
 * per second, the camera's position read off the background's top-band ramp
 * (see faces-media.ts), and faces found by the same detector the engine uses
 * (run on the output, it is an independent look at what the viewer sees).
 */
import { readFile, rm } from "node:fs/promises";
import { runProcess } from "../../src/shared/spawn.ts";
import { faceBoxAt, type Placement, type Turn } from "./faces-media.ts";
import { FFMPEG } from "./media.ts";

/** The ramp band: rows [BAND[0], BAND[1]) of the source's height; the same share of a view's height. */
export const BAND = [0.01, 0.1] as const;

export interface DecodedFrames {
  width: number;
  height: number;
  times: number[];
  frames: Uint8Array[];
}

export async function decodeFrames(file: string, fps: number, width: number, height: number): Promise<DecodedFrames> {
  const raw = `${file}.${width}x${height}.rgb`;
  const result = await runProcess({
    command: FFMPEG,
    args: ["-nostdin", "-v", "error", "-y", "-i", file, "-vf", `fps=${fps},scale=${width}:${height}:flags=area`, "-pix_fmt", "rgb24", "-f", "rawvideo", raw],
    timeoutMs: 120_000,
  });
  if (result.exitCode !== 0) throw new Error(`decoding ${file} failed: ${result.stderrTail}`);
  const bytes = await readFile(raw);
  await rm(raw, { force: true });
  const size = width * height * 3;
  const frames: Uint8Array[] = [];
  for (let i = 0; i + size <= bytes.length; i += size) frames.push(new Uint8Array(bytes.buffer, bytes.byteOffset + i, size));
  // The fps filter puts frame n at n/fps, rounded to its nearest source frame.
  return { width, height, times: frames.map((_, i) => i / fps), frames };
}

/** Mean luminance of rows [top, bottom) of an RGB frame. */
export function bandLuma(frame: Uint8Array, width: number, top: number, bottom: number): number {
  let sum = 0;
  for (let y = top; y < bottom; y++) {
    for (let x = 0; x < width; x++) {
      const i = (y * width + x) * 3;
      sum += 0.299 * frame[i]! + 0.587 * frame[i + 1]! + 0.114 * frame[i + 2]!;
    }
  }
  return sum / ((bottom - top) * width);
}

/**
 * Reads the crop window's centre (fraction of the source width) from an
 * output frame: the source's top-band brightness per column is the ruler,
 * and the window whose mean brightness matches the output's band is the one
 * the camera shows.
 */
export function gauge(sourceRow: number[], windowFraction: number): (outputBandLuma: number) => number {
  const n = sourceRow.length;
  const w = Math.round(windowFraction * n);
  const prefix = [0];
  for (const v of sourceRow) prefix.push(prefix.at(-1)! + v);
  const means: number[] = [];
  for (let left = 0; left + w <= n; left++) means.push((prefix[left + w]! - prefix[left]!) / w);
  return (luma) => {
    let best = 0;
    for (let left = 1; left < means.length; left++) if (Math.abs(means[left]! - luma) < Math.abs(means[best]! - luma)) best = left;
    return (best + w / 2) / n;
  };
}

/** Per-column luminance of the source's top band (rows [top, bottom)). */
export function columnLuma(frame: Uint8Array, width: number, top: number, bottom: number): number[] {
  const out: number[] = [];
  for (let x = 0; x < width; x++) {
    let sum = 0;
    for (let y = top; y < bottom; y++) {
      const i = (y * width + x) * 3;
      sum += 0.299 * frame[i]! + 0.587 * frame[i + 1]! + 0.114 * frame[i + 2]!;
    }
    out.push(sum / (bottom - top));
  }
  return out;
}

/** Direction changes among steps larger than `noise`. */
export function reversals(values: number[], noise: number): number {
  let last = 0;
  let count = 0;
  for (let i = 1; i < values.length; i++) {
    const d = values[i]! - values[i - 1]!;
    if (Math.abs(d) <= noise) continue;
    const sign = Math.sign(d);
    if (last !== 0 && sign !== last) count++;
    last = sign;
  }
  return count;
}

/** One frame's rows [top, bottom) as a frame of its own. */
export function rows(frame: Uint8Array, width: number, top: number, bottom: number): Uint8Array {
  return frame.subarray(top * width * 3, bottom * width * 3);
}

/**
 * Whether rows [top, bottom) of a frame are a view's top band: the source's
 * ramp, brightening steadily from left to right (a correlation of column
 * brightness with x above 0.9). Elsewhere a view shows faces and textured
 * background, so in a split frame the lower half's top rows are a ramp, and
 * in a single frame the same rows are not.
 */
export function isRamp(frame: Uint8Array, width: number, top: number, bottom: number): boolean {
  const columns = columnLuma(frame.subarray(0), width, top, bottom);
  const n = columns.length;
  const meanX = (n - 1) / 2;
  const meanY = columns.reduce((a, b) => a + b, 0) / n;
  let sxy = 0;
  let sxx = 0;
  let syy = 0;
  columns.forEach((y, x) => {
    sxy += (x - meanX) * (y - meanY);
    sxx += (x - meanX) ** 2;
    syy += (y - meanY) ** 2;
  });
  return syy > 0 && sxy / Math.sqrt(sxx * syy) > 0.9;
}

/** Whether a face box (source pixels) lies inside a window `window` wide (fraction of the source width) centred at `centre`. */
export function insideWindow(box: { x: number; width: number }, centre: number, window: number, sourceWidth: number, slack = 0.01): boolean {
  const left = (centre - window / 2) * sourceWidth;
  const right = (centre + window / 2) * sourceWidth;
  return box.x >= left - slack * sourceWidth && box.x + box.width <= right + slack * sourceWidth;
}

/** Times at which the camera jumps (a cut): neighbouring judged frames whose centres differ by more than `jump`. */
export function cuts(times: number[], camera: number[], jump = 0.15): number[] {
  return camera.flatMap((c, i) => (i > 0 && Math.abs(c - camera[i - 1]!) > jump ? [times[i]!] : []));
}

/**
 * The camera's centre (fraction of the source width) in every judged output
 * frame, read from the band of the view that starts at output row `top` and
 * is `height` rows tall (the whole frame, or one half of a split frame).
 */
export async function cameraTrack(source: { path: string; width: number; height: number }, out: DecodedFrames, window: number, top = 0, height = out.height): Promise<number[]> {
  const [first] = (await decodeFrames(source.path, 1, source.width, source.height)).frames;
  const ruler = gauge(columnLuma(first!, source.width, Math.round(BAND[0] * source.height), Math.round(BAND[1] * source.height)), window);
  return out.frames.map((f) => ruler(bandLuma(f, out.width, top + Math.round(BAND[0] * height), top + Math.round(BAND[1] * height))));
}

/** Index ranges [from, to) of `count` judged frames cut at the frame indices in `changes` (each change frame starts a run). */
export function runs(count: number, changes: number[]): [number, number][] {
  const starts = [0, ...changes, count];
  return starts.slice(1).map((end, i) => [starts[i]!, end] as [number, number]);
}

/** Whether each judged frame is split: its lower half begins with a band of its own. */
export function splitFrames(out: DecodedFrames): boolean[] {
  const half = out.height / 2;
  return out.frames.map((f) => isRamp(f, out.width, half + Math.round(BAND[0] * half), half + Math.round(BAND[1] * half)));
}

/** Share of the judged frames (those at times `when` accepts) that show the placement's face inside the window. */
export function heldShare(p: Placement, out: DecodedFrames, camera: number[], window: number, sourceWidth: number, when: (t: number) => boolean = () => true): number {
  const judged = out.times.map((t, i) => ({ t, i })).filter(({ t }) => when(t));
  return judged.filter(({ t, i }) => insideWindow(faceBoxAt(p, t), camera[i]!, window, sourceWidth)).length / judged.length;
}

/**
 * Per turn at least `shortest` seconds long: whether the speaker's face is
 * inside the single view in every judged frame from `within` seconds after
 * the turn starts to its end (`split[i]`: frame i is split, which does not count).
 */
export function framedTurns(args: { turns: Turn[]; placements: Placement[]; out: DecodedFrames; camera: number[]; split: boolean[]; window: number; sourceWidth: number; shortest: number; within: number }): boolean[] {
  const { out, camera, split } = args;
  return args.turns
    .filter((turn) => turn.end - turn.start >= args.shortest)
    .map((turn) => {
      const judged = out.times.map((t, i) => ({ t, i })).filter(({ t }) => t >= turn.start + args.within && t < turn.end);
      return judged.length > 0 && judged.every(({ t, i }) => !split[i] && insideWindow(faceBoxAt(args.placements[turn.speaker]!, t), camera[i]!, args.window, args.sourceWidth));
    });
}
