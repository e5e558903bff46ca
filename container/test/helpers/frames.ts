/**
 * Reads pictures back out of rendered files, to check what a viewer would
 * see: a frame as small grey or RGB pixels, and where the bright subject sits.
 */
import { mkdtemp, readFile, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { runProcess } from "../../src/shared/spawn.ts";
import { FFMPEG } from "./media.ts";

async function rawFrame(file: string, args: string[], pixelFormat: "gray" | "rgb24", width: number, height: number): Promise<Uint8Array> {
  const dir = await mkdtemp(path.join(os.tmpdir(), "frame-"));
  const out = path.join(dir, "frame.raw");
  try {
    const result = await runProcess({
      command: FFMPEG,
      args: ["-nostdin", "-v", "error", "-y", ...args, "-i", file, "-frames:v", "1", "-vf", `scale=${width}:${height}:flags=area,format=${pixelFormat}`, "-f", "rawvideo", out],
      timeoutMs: 30_000,
    });
    if (result.exitCode !== 0) throw new Error(`frame extraction failed: ${result.stderrTail}`);
    return new Uint8Array(await readFile(out));
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/** The frame shown at `seconds` into the file, as width x height grey pixels. */
export function greyFrameAt(file: string, seconds: number, width: number, height: number): Promise<Uint8Array> {
  return rawFrame(file, ["-ss", seconds.toFixed(3)], "gray", width, height);
}

/** A still image (e.g. a JPEG thumbnail) as width x height grey pixels. */
export function greyImage(file: string, width: number, height: number): Promise<Uint8Array> {
  return rawFrame(file, [], "gray", width, height);
}

/** Mean RGB colour of frame number `index` (counted from the file's first frame). */
export async function meanColourOfFrame(file: string, index: number): Promise<[number, number, number]> {
  const dir = await mkdtemp(path.join(os.tmpdir(), "frame-"));
  const out = path.join(dir, "frame.raw");
  try {
    const result = await runProcess({
      command: FFMPEG,
      args: ["-nostdin", "-v", "error", "-y", "-i", file, "-vf", `select='eq(n,${index})',scale=16:16:flags=area,format=rgb24`, "-frames:v", "1", "-fps_mode", "passthrough", "-f", "rawvideo", out],
      timeoutMs: 30_000,
    });
    if (result.exitCode !== 0) throw new Error(`frame extraction failed: ${result.stderrTail}`);
    const rgb = new Uint8Array(await readFile(out));
    const sum = [0, 0, 0];
    for (let i = 0; i < rgb.length; i += 3) for (let c = 0; c < 3; c++) sum[c]! += rgb[i + c]!;
    const n = rgb.length / 3;
    return [sum[0]! / n, sum[1]! / n, sum[2]! / n];
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/** Horizontal centre (0-1) of the pixels brighter than `threshold`, or null when there are none. */
export function brightCentreX(pixels: Uint8Array, width: number, threshold = 235): number | null {
  let sum = 0;
  let count = 0;
  pixels.forEach((value, i) => {
    if (value < threshold) return;
    sum += (i % width) + 0.5;
    count++;
  });
  return count === 0 ? null : sum / count / width;
}

/** "0xRRGGBB" as numbers. */
export function rgbOf(hex: string): [number, number, number] {
  const value = Number.parseInt(hex.replace(/^0x/, ""), 16);
  return [(value >> 16) & 255, (value >> 8) & 255, value & 255];
}

export function colourDistance(a: [number, number, number], b: [number, number, number]): number {
  return Math.max(Math.abs(a[0] - b[0]), Math.abs(a[1] - b[1]), Math.abs(a[2] - b[2]));
}
