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
import { runProcess } from "../../container/src/shared/spawn.ts";

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

/**
 * Least squares for y = fixed + perMinute * minutes + perClip * clips (a
 * 1-minute source holds fewer 25-35 s clips than the config asks for, so the
 * clip count is its own term). Solved through the 3x3 normal equations.
 */
export function fitMinutesAndClips(points: { minutes: number; clips: number; y: number }[]): { fixed: number; perMinute: number; perClip: number } {
  const rows = points.map((p) => [1, p.minutes, p.clips]);
  const ata = [0, 1, 2].map((i) => [0, 1, 2].map((j) => rows.reduce((s, r) => s + r[i]! * r[j]!, 0)));
  const aty = [0, 1, 2].map((i) => rows.reduce((s, r, k) => s + r[i]! * points[k]!.y, 0));
  // Gaussian elimination with partial pivoting on [ata | aty].
  const m = ata.map((row, i) => [...row, aty[i]!]);
  for (let c = 0; c < 3; c++) {
    const pivot = [c, c + 1, c + 2].filter((r) => r < 3).reduce((best, r) => (Math.abs(m[r]![c]!) > Math.abs(m[best]![c]!) ? r : best), c);
    [m[c], m[pivot]] = [m[pivot]!, m[c]!];
    if (Math.abs(m[c]![c]!) < 1e-12) {
      // Every length gave the same number of clips: their cost is inside the fixed part.
      const line = fitLine(points.map((p) => ({ x: p.minutes, y: p.y })));
      return { fixed: line.intercept, perMinute: line.slope, perClip: Number.NaN };
    }
    for (let r = 0; r < 3; r++) {
      if (r === c) continue;
      const f = m[r]![c]! / m[c]![c]!;
      for (let k = c; k < 4; k++) m[r]![k]! -= f * m[c]![k]!;
    }
  }
  return { fixed: m[0]![3]! / m[0]![0]!, perMinute: m[1]![3]! / m[1]![1]!, perClip: m[2]![3]! / m[2]![2]! };
}
