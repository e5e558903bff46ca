/**
 * The checks the export suites make on rendered video: a tool's output,
 * a video's decoded frame count and size, and the SSIM of sampled frames.
 */
import { spawn } from "node:child_process";

/** Runs a tool to completion; its stdout and stderr, or a rejection with the tail of its stderr. */
export function run(command: string, args: string[]): Promise<{ stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { stdio: ["ignore", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
    child.on("error", reject);
    child.on("close", (code) => (code === 0 ? resolve({ stdout, stderr }) : reject(new Error(`${command} exited ${code}: ${stderr.slice(-2000)}`))));
  });
}

/** The video stream's decoded frame count and picture size. */
export async function videoOf(path: string): Promise<{ frames: number; width: number; height: number }> {
  const { stdout } = await run("ffprobe", ["-v", "error", "-count_frames", "-select_streams", "v:0", "-show_entries", "stream=nb_read_frames,width,height", "-of", "json", path]);
  const stream = (JSON.parse(stdout) as { streams: { nb_read_frames: string; width: number; height: number }[] }).streams[0]!;
  return { frames: Number(stream.nb_read_frames), width: stream.width, height: stream.height };
}

/** SSIM (all planes) of every tenth frame of `a` against the same frame of `b`. */
export async function sampledSsim(a: string, b: string): Promise<number[]> {
  const { stdout } = await run("ffmpeg", [
    "-hide_banner", "-i", a, "-i", b, "-filter_complex",
    "[0:v]select='not(mod(n\\,10))',setpts=N/TB[a];[1:v]select='not(mod(n\\,10))',setpts=N/TB[b];[a][b]ssim=stats_file=-",
    "-f", "null", "-",
  ]);
  return [...stdout.matchAll(/^n:\d+ .* All:([0-9.]+)/gm)].map((m) => Number(m[1]));
}
