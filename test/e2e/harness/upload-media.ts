/**
 * A 100 MB source that is still a real, quick video: the 20-second talk in a
 * Matroska file with a 100 MB attachment stream of random bytes. Stream
 * copy and /dev/urandom only, so it takes seconds and almost no CPU; ffprobe
 * and ffmpeg read the talk and skip the attachment.
 */
import { spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { mkdir, open, rename, rm } from "node:fs/promises";
import { randomFillSync } from "node:crypto";
import { join } from "node:path";
import { TALK_20S, talkSource } from "./media.ts";
import { projectRoot } from "./shared-stack-config.ts";

export const PADDING_BYTES = 100_000_000;

function ffmpeg(args: string[]): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.env.FFMPEG_PATH ?? "ffmpeg", args, { stdio: ["ignore", "ignore", "pipe"] });
    let stderr = "";
    child.stderr.on("data", (chunk: Buffer) => (stderr = (stderr + chunk.toString()).slice(-2000)));
    child.on("error", reject);
    child.on("close", (code) => (code === 0 ? resolve() : reject(new Error(`ffmpeg exited ${code}: ${stderr}`))));
  });
}

async function randomFile(path: string, bytes: number): Promise<void> {
  const file = await open(path, "w");
  try {
    const block = Buffer.alloc(4 * 1024 * 1024);
    for (let written = 0; written < bytes; written += block.length) {
      randomFillSync(block);
      await file.write(block, 0, Math.min(block.length, bytes - written));
    }
  } finally {
    await file.close();
  }
}

/** Cached under .tmp/e2e/media; about 100.2 MB. */
export async function bigUploadSource(): Promise<string> {
  const dir = join(projectRoot, ".tmp", "e2e", "media");
  const path = join(dir, "talk-20s-100mb.mkv");
  if (existsSync(path)) return path;
  await mkdir(dir, { recursive: true });
  const talk = await talkSource(TALK_20S);
  const padding = join(dir, `padding.${process.pid}.bin`);
  const partial = `${path}.${process.pid}.partial.mkv`;
  await randomFile(padding, PADDING_BYTES);
  try {
    await ffmpeg([
      "-nostdin", "-hide_banner", "-loglevel", "error", "-y",
      "-i", talk.path,
      "-attach", padding, "-metadata:s:t", "mimetype=application/octet-stream", "-metadata:s:t", "filename=padding.bin",
      "-map", "0", "-c", "copy",
      partial,
    ]);
    await rename(partial, path);
  } finally {
    await rm(padding, { force: true });
  }
  return path;
}
