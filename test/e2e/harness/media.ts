/**
 * The e2e suites' sources: small and short (640x360 or less), made once and
 * cached under .tmp/e2e/media so reruns and parallel files share them.
 */
import { spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { mkdir, rename } from "node:fs/promises";
import { join } from "node:path";
import { cachedMedia, type MediaFacts, type MediaSpec } from "../../media/generate.ts";
import { projectRoot } from "./shared-stack-config.ts";

const mediaDir = join(projectRoot, ".tmp", "e2e", "media");

/** Talk with pauses, two loud bursts and scene changes: something for every video_type. */
export const TALK_40S: MediaSpec = {
  durationSeconds: 40,
  width: 640,
  height: 360,
  fps: 15,
  bursts: [9, 27],
  sceneChanges: [12, 24, 33],
  seed: 11,
};

/** Longer, so a job spends a while rendering (cancel and watchdog tests). */
export const TALK_75S: MediaSpec = {
  durationSeconds: 75,
  width: 640,
  height: 360,
  fps: 15,
  bursts: [14, 38, 61],
  sceneChanges: [10, 25, 41, 58],
  seed: 23,
};

/** A quick one for jobs that only need to complete. */
export const TALK_20S: MediaSpec = {
  durationSeconds: 20,
  width: 320,
  height: 180,
  fps: 15,
  bursts: [11],
  sceneChanges: [8],
  seed: 5,
};

export function talkSource(spec: MediaSpec): Promise<{ path: string; facts: MediaFacts }> {
  return cachedMedia(spec, mediaDir);
}

function run(command: string, args: string[]): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { stdio: ["ignore", "ignore", "pipe"] });
    let stderr = "";
    child.stderr.on("data", (chunk: Buffer) => {
      stderr = (stderr + chunk.toString()).slice(-2000);
    });
    child.on("error", reject);
    child.on("close", (code) => (code === 0 ? resolve() : reject(new Error(`${command} exited ${code}: ${stderr}`))));
  });
}

/**
 * A long but tiny source (64x36 at 1 fps, a silent 8 kHz track: a few hundred
 * KB for an hour, made in a few seconds), for the limits that depend only on
 * duration.
 */
export async function longQuietSource(seconds: number): Promise<string> {
  const path = join(mediaDir, `quiet-${seconds}s.mp4`);
  if (existsSync(path)) return path;
  await mkdir(mediaDir, { recursive: true });
  const partial = `${path}.${process.pid}.partial.mp4`;
  await run(process.env.FFMPEG_PATH ?? "ffmpeg", [
    "-nostdin", "-hide_banner", "-loglevel", "error", "-y",
    "-f", "lavfi", "-i", "color=c=0x203040:s=64x36:r=1",
    "-f", "lavfi", "-i", "anullsrc=r=8000:cl=mono",
    "-t", String(seconds),
    "-c:v", "libx264", "-preset", "ultrafast", "-g", "600",
    "-c:a", "aac", "-b:a", "8k",
    "-movflags", "+faststart",
    partial,
  ]);
  await rename(partial, path);
  return path;
}
