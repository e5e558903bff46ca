/**
 * Sources of 1, 5, 10 and 30 minutes for the growth figures, made from the
 * bench's 10-minute source by stream copy (no encode) through the concat
 * demuxer: its first N minutes, or it three times over. Cached in .tmp/bench next to it. Then a least-squares line through
 * (minutes, seconds): the job should cost the analysis' slope per minute of
 * source plus about a constant for its five clips.
 */
import { existsSync } from "node:fs";
import { rename, rm, writeFile } from "node:fs/promises";
import path from "node:path";
import { runProcess } from "../../container/src/spawn.ts";

const FFMPEG = process.env.FFMPEG_PATH || "ffmpeg";
export const GROWTH_MINUTES = [1, 5, 10, 30];
/** BENCH_ENGINE_QUICK's 3-minute source: lengths to check the bench itself. */
export const QUICK_GROWTH_MINUTES = [1, 3, 6];

async function ffmpeg(args: string[]): Promise<void> {
  const result = await runProcess({ command: FFMPEG, args: ["-nostdin", "-hide_banner", "-loglevel", "error", "-y", ...args], timeoutMs: 1_800_000 });
  if (result.exitCode !== 0) throw new Error(`growth source ffmpeg failed: ${result.stderrTail}`);
}

/** The source of `minutes` minutes made from `base` (of `baseSeconds`): its start, or it over and over, by stream copy. */
export async function growthSource(base: string, baseSeconds: number, minutes: number): Promise<string> {
  const seconds = minutes * 60;
  if (seconds === baseSeconds) return base;
  const out = base.replace(/\.mp4$/, `.growth-${minutes}m.mp4`);
  if (existsSync(out)) return out;
  const partial = `${out}.${process.pid}.partial.mp4`;
  const list = `${out}.list.txt`;
  const line = `file '${path.resolve(base).replace(/'/g, "'\\''")}'\n`;
  await writeFile(list, line.repeat(Math.ceil(seconds / baseSeconds)));
  try {
    await ffmpeg(["-f", "concat", "-safe", "0", "-i", list, "-t", String(seconds), "-map", "0", "-c", "copy", "-movflags", "+faststart", partial]);
  } finally {
    await rm(list, { force: true });
  }
  await rename(partial, out);
  return out;
}

/** Least-squares line y = intercept + slope * x. */
export function fitLine(points: { x: number; y: number }[]): { slope: number; intercept: number } {
  const n = points.length;
  const mx = points.reduce((s, p) => s + p.x, 0) / n;
  const my = points.reduce((s, p) => s + p.y, 0) / n;
  const sxx = points.reduce((s, p) => s + (p.x - mx) ** 2, 0);
  const sxy = points.reduce((s, p) => s + (p.x - mx) * (p.y - my), 0);
  const slope = sxx > 0 ? sxy / sxx : 0;
  return { slope, intercept: my - slope * mx };
}
