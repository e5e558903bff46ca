/**
 * Decodes a clip's span of the source into small RGB frames for the face
 * tracker: a few frames per second, longest side FRAME_SIDE pixels (scaled
 * with area averaging, never up), and only the span itself (`-ss` before
 * `-i`, `-t` the clip's length), so the cost grows with the clips' length,
 * not the source's. The frames go to a scratch file that is read one frame at
 * a time (a minute at 4 frames a second is about 160 MB; memory holds one).
 *
 * The frame size is read from ffmpeg's own showinfo lines: ffmpeg turns
 * pictures tagged as rotated upright while decoding, so the decoded shape (not
 * the stream's coded width and height) is the shape the crop works on.
 */
import { open, rm } from "node:fs/promises";
import type { FfmpegRunner } from "../ffmpeg/runner.ts";
import { pinnedDemuxer } from "../source/probe.ts";
import type { SourceInfo } from "../shared/types.ts";
import { FRAME_SIDE } from "./detector.ts";

/**
 * Frames per second looked at: enough to follow a walking person and to see
 * a mouth move while someone talks; fewer for long clips so a clip never
 * takes more than MAX_FRAMES.
 */
export const SAMPLE_FPS = 4;
const MAX_FRAMES = 240;

export interface SampledFrames {
  width: number;
  height: number;
  /** Seconds from the clip's first frame. */
  times: number[];
  /** The frames in order, one at a time (each array is reused by the next read). */
  frames(): AsyncGenerator<{ index: number; t: number; rgb: Uint8Array }>;
  /** Removes the scratch file. */
  close(): Promise<void>;
}

const SHOWINFO = /pts_time:\s*(-?[\d.]+).*?\bs:(\d+)x(\d+)/;

export function sampleRate(clipSeconds: number): number {
  return Math.min(SAMPLE_FPS, MAX_FRAMES / Math.max(clipSeconds, 1));
}

export async function sampleFrames(args: {
  runner: FfmpegRunner;
  source: SourceInfo;
  start: number;
  end: number;
  rawPath: string;
  signal: AbortSignal;
}): Promise<SampledFrames> {
  const { runner, source, start, end, rawPath, signal } = args;
  const duration = Math.max(0.1, end - start);
  const times: number[] = [];
  let width = 0;
  let height = 0;
  const onLine = (line: string): void => {
    const match = SHOWINFO.exec(line);
    if (!match) return;
    times.push(Number(match[1]));
    width = Number(match[2]);
    height = Number(match[3]);
  };
  const side = FRAME_SIDE;
  const filter = [
    `fps=${sampleRate(duration).toFixed(4)}`,
    `scale=w='if(gte(iw,ih),min(iw,${side}),-2)':h='if(gte(iw,ih),-2,min(ih,${side}))':flags=area`,
    "format=rgb24",
    "showinfo",
  ].join(",");
  try {
    const result = await runner.ffmpeg({
      args: [
        "-nostdin", "-hide_banner", "-nostats", "-loglevel", "info",
        "-protocol_whitelist", "file",
        "-ss", start.toFixed(6),
        "-f", pinnedDemuxer(source.format),
        "-i", source.path,
        "-t", duration.toFixed(6),
        "-map", "0:v:0", "-an", "-sn", "-dn",
        "-vf", filter,
        "-f", "rawvideo", "-y", rawPath,
      ],
      inputs: [source.path],
      outputs: [rawPath],
      timeoutMs: 60_000 + duration * 5_000,
      signal,
      onStderrLine: onLine,
    });
    if (result.exitCode !== 0) {
      throw new Error(`sampling frames for face detection failed (ffmpeg exit ${result.exitCode}): ${result.stderrTail.slice(-400)}`);
    }
  } catch (error) {
    await rm(rawPath, { force: true });
    throw error;
  }
  const frameBytes = width * height * 3;
  const file = frameBytes > 0 ? await open(rawPath, "r") : undefined;
  const count = file ? Math.min(times.length, Math.floor((await file.stat()).size / frameBytes)) : 0;
  return {
    width: count > 0 ? width : 0,
    height: count > 0 ? height : 0,
    times: times.slice(0, count),
    async *frames() {
      if (!file) return;
      const buffer = new Uint8Array(frameBytes);
      for (let index = 0; index < count; index++) {
        const { bytesRead } = await file.read(buffer, 0, frameBytes, index * frameBytes);
        if (bytesRead < frameBytes) return;
        yield { index, t: times[index]!, rgb: buffer };
      }
    },
    async close() {
      await file?.close();
      await rm(rawPath, { force: true });
    },
  };
}
