/**
 * The ffmpeg floor: the least work any engine must do for this job, timed
 * with plain ffmpeg commands and no server around them.
 *   analysis:   the audio pass and the keyframe pass (concurrently, as the
 *               engine runs them), without the engine's log parsing;
 *   encodes:    each clip span cut with -ss before -i and encoded with the
 *               engine's settings (same crop, scale, preset, CRF, audio),
 *               `concurrency` at a time, as the engine renders them
 *               (ENGINE_RENDER_CONCURRENCY);
 *   thumbnails: one JPEG per clip, seeked in the source, right after its encode.
 * No download, probe, speech model, upload or callback: those are the
 * engine's overhead the ratio shows.
 */
import { mkdir, rm } from "node:fs/promises";
import path from "node:path";
import { DEFAULT_CLIP_CONFIG } from "#contract";
import { cropFilter, cropSteps, outputSize } from "../../container/src/render-geometry.ts";
import { VIDEO_PRESET } from "../../container/src/render.ts";
import { runProcess } from "../../container/src/spawn.ts";
import { exitedChildrenCpuSeconds } from "./cpu.ts";

const FFMPEG = process.env.FFMPEG_PATH || "ffmpeg";

async function ffmpeg(args: string[]): Promise<void> {
  const result = await runProcess({ command: FFMPEG, args: ["-nostdin", "-hide_banner", "-loglevel", "error", "-y", ...args], timeoutMs: 3_600_000 });
  if (result.exitCode !== 0) throw new Error(`floor ffmpeg failed: ${result.stderrTail}`);
}

export interface FloorTimes {
  analysisSeconds: number;
  /** Wall time of the encodes (with their thumbnails), all of them, `concurrency` at a time. */
  encodesSeconds: number;
  /** Each encode on its own (they overlap when concurrency > 1). */
  encodeSeconds: number[];
  totalSeconds: number;
  /** CPU seconds of every ffmpeg run of the floor. */
  cpuSeconds: number;
  concurrency: number;
}

/** Runs tasks `concurrency` at a time, in order. */
async function pool(count: number, concurrency: number, task: (index: number) => Promise<void>): Promise<void> {
  let next = 0;
  const lane = async () => {
    while (next < count) {
      const index = next;
      next += 1;
      await task(index);
    }
  };
  await Promise.all(Array.from({ length: Math.max(1, Math.min(concurrency, count)) }, lane));
}

export async function measureFloor(
  sourcePath: string,
  source: { width: number; height: number },
  spans: { start: number; end: number }[],
  workDir: string,
  concurrency = 1,
): Promise<FloorTimes> {
  await mkdir(workDir, { recursive: true });
  const cpuBefore = exitedChildrenCpuSeconds();
  const started = performance.now();
  await Promise.all([
    ffmpeg(["-i", sourcePath, "-map", "0:a:0", "-vn", "-af", "silencedetect=noise=-35dB:duration=0.3,ebur128=framelog=info", "-f", "null", "-"]),
    ffmpeg(["-skip_frame", "nokey", "-i", sourcePath, "-map", "0:v:0", "-an", "-vf", "scale=64:36:flags=area,format=gray", "-fps_mode", "passthrough", "-f", "rawvideo", path.join(workDir, "keyframes.gray")]),
  ]);
  const analysisSeconds = (performance.now() - started) / 1000;

  const size = outputSize(DEFAULT_CLIP_CONFIG, source);
  const crop = cropFilter(size, cropSteps(0, undefined));
  const picture = `${crop},scale=${size.width}:${size.height}:flags=bicubic,setsar=1`;
  const encodeSeconds: number[] = new Array<number>(spans.length).fill(0);
  const encodesStart = performance.now();
  await pool(spans.length, concurrency, async (index) => {
    const span = spans[index]!;
    const t0 = performance.now();
    await ffmpeg([
      "-ss", span.start.toFixed(6), "-i", sourcePath, "-t", (span.end - span.start).toFixed(6),
      "-vf", `${picture},format=yuv420p`,
      "-c:v", "libx264", "-preset", VIDEO_PRESET, "-crf", "21", "-profile:v", "high", "-pix_fmt", "yuv420p",
      "-c:a", "aac", "-b:a", "128k", "-ac", "2", "-movflags", "+faststart",
      path.join(workDir, `floor-${index}.mp4`),
    ]);
    const at = span.start + (span.end - span.start) * 0.4;
    await ffmpeg(["-ss", at.toFixed(6), "-i", sourcePath, "-an", "-vf", `${picture},format=yuvj420p`, "-frames:v", "1", "-q:v", "3", "-update", "1", "-f", "image2", path.join(workDir, `floor-${index}.jpg`)]);
    encodeSeconds[index] = (performance.now() - t0) / 1000;
  });
  const encodesSeconds = (performance.now() - encodesStart) / 1000;
  await rm(workDir, { recursive: true, force: true });
  return {
    analysisSeconds,
    encodesSeconds,
    encodeSeconds,
    totalSeconds: analysisSeconds + encodesSeconds,
    cpuSeconds: exitedChildrenCpuSeconds() - cpuBefore,
    concurrency,
  };
}
