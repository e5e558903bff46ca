/**
 * The ffmpeg floor: the least work any engine must do for this job, timed
 * with plain ffmpeg commands and no server around them.
 *   analysis: the audio pass and the keyframe pass (concurrently, as the
 *             engine runs them), without the engine's log parsing;
 *   encodes:  each clip span cut with -ss before -i and encoded with the
 *             engine's settings (same crop, scale, preset, CRF, audio), one
 *             after another, without thumbnails.
 */
import { mkdir, rm } from "node:fs/promises";
import path from "node:path";
import { DEFAULT_CLIP_CONFIG } from "#contract";
import { cropFilter, cropSteps, outputSize } from "../../container/src/render-geometry.ts";
import { VIDEO_PRESET } from "../../container/src/render.ts";
import { runProcess } from "../../container/src/spawn.ts";

const FFMPEG = process.env.FFMPEG_PATH || "ffmpeg";

async function ffmpeg(args: string[]): Promise<void> {
  const result = await runProcess({ command: FFMPEG, args: ["-nostdin", "-hide_banner", "-loglevel", "error", "-y", ...args], timeoutMs: 3_600_000 });
  if (result.exitCode !== 0) throw new Error(`floor ffmpeg failed: ${result.stderrTail}`);
}

export interface FloorTimes {
  analysisSeconds: number;
  encodeSeconds: number[];
  totalSeconds: number;
}

export async function measureFloor(
  sourcePath: string,
  source: { width: number; height: number },
  spans: { start: number; end: number }[],
  workDir: string,
): Promise<FloorTimes> {
  await mkdir(workDir, { recursive: true });
  const started = performance.now();
  await Promise.all([
    ffmpeg(["-i", sourcePath, "-map", "0:a:0", "-vn", "-af", "silencedetect=noise=-35dB:duration=0.3,ebur128=framelog=info", "-f", "null", "-"]),
    ffmpeg(["-skip_frame", "nokey", "-i", sourcePath, "-map", "0:v:0", "-an", "-vf", "scale=64:36:flags=area,format=gray", "-fps_mode", "passthrough", "-f", "rawvideo", path.join(workDir, "keyframes.gray")]),
  ]);
  const analysisSeconds = (performance.now() - started) / 1000;

  const size = outputSize(DEFAULT_CLIP_CONFIG, source);
  const crop = cropFilter(size, cropSteps(0, undefined));
  const encodeSeconds: number[] = [];
  for (const [index, span] of spans.entries()) {
    const t0 = performance.now();
    await ffmpeg([
      "-ss", span.start.toFixed(6), "-i", sourcePath, "-t", (span.end - span.start).toFixed(6),
      "-vf", `${crop},scale=${size.width}:${size.height}:flags=bicubic,setsar=1,format=yuv420p`,
      "-c:v", "libx264", "-preset", VIDEO_PRESET, "-crf", "21", "-profile:v", "high", "-pix_fmt", "yuv420p",
      "-c:a", "aac", "-b:a", "128k", "-ac", "2", "-movflags", "+faststart",
      path.join(workDir, `floor-${index}.mp4`),
    ]);
    encodeSeconds.push((performance.now() - t0) / 1000);
  }
  await rm(workDir, { recursive: true, force: true });
  const totalSeconds = analysisSeconds + encodeSeconds.reduce((a, b) => a + b, 0);
  return { analysisSeconds, encodeSeconds, totalSeconds };
}
