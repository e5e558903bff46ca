import { mkdir, mkdtemp, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { runProcess } from "../../src/shared/spawn.ts";
import { createNativeRunner } from "../../src/ffmpeg/native.ts";
import type { FfmpegRunner } from "../../src/ffmpeg/runner.ts";

export const FFMPEG = process.env.FFMPEG_PATH || "ffmpeg";
export const FFPROBE = process.env.FFPROBE_PATH || "ffprobe";

export function nativeRunner(): FfmpegRunner {
  return createNativeRunner({ ffmpegPath: FFMPEG, ffprobePath: FFPROBE });
}

export async function tempDir(prefix: string): Promise<string> {
  const root = path.resolve(".tmp");
  await mkdir(root, { recursive: true });
  return mkdtemp(path.join(root, `${prefix}-`));
}

const createdDirs: string[] = [];

/** A fresh temp dir under the OS temp dir; removeTempDirs() deletes them all. */
export async function osTempDir(prefix: string): Promise<string> {
  const dir = await mkdtemp(path.join(os.tmpdir(), `clipjobs-test-${prefix}-`));
  createdDirs.push(dir);
  return dir;
}

export async function removeTempDirs(): Promise<void> {
  const dirs = createdDirs.splice(0);
  await Promise.all(dirs.map((d) => rm(d, { recursive: true, force: true })));
}

/** A tiny test-pattern video with a tone (for fetch and probe tests, not analysis). */
export async function makeTinyVideo(outPath: string, seconds: number, extraArgs: string[] = []): Promise<void> {
  const result = await runProcess({
    command: FFMPEG,
    args: [
      "-nostdin", "-v", "error", "-y",
      "-f", "lavfi", "-i", `testsrc=size=160x90:rate=10:duration=${seconds}`,
      "-f", "lavfi", "-i", `sine=frequency=440:duration=${seconds}`,
      "-c:v", "libx264", "-preset", "ultrafast", "-c:a", "aac", "-shortest",
      ...extraArgs, outPath,
    ],
    timeoutMs: 60_000,
  });
  if (result.exitCode !== 0) throw new Error(`ffmpeg failed: ${result.stderrTail}`);
}

export async function ffprobeJson(file: string): Promise<{ format: { duration: string; format_name: string }; streams: { codec_type: string; codec_name: string; width?: number; height?: number }[] }> {
  const result = await runProcess({
    command: FFPROBE,
    args: ["-v", "error", "-show_format", "-show_streams", "-of", "json", file],
    timeoutMs: 30_000,
  });
  if (result.exitCode !== 0) throw new Error(`ffprobe failed on ${file}: ${result.stderrTail}`);
  return JSON.parse(result.stdout);
}
