/**
 * The thumbnail both ways (container/src/render/thumbnail.ts), on the clips the job
 * just rendered: seeked in the source and cropped/scaled, or seeked in the
 * rendered clip. Each run is timed alone (wall and CPU), REPEATS times per
 * clip; the figures are medians over all runs. Also prints which way the
 * engine's rule picks for these clips, from the source's real keyframe times.
 */
import { stat } from "node:fs/promises";
import path from "node:path";
import type { ClipConfig, CompleteReport } from "#contract";
import { createNativeRunner } from "../../container/src/ffmpeg/native.ts";
import { probeSource } from "../../container/src/source/probe.ts";
import { runProcess } from "../../container/src/shared/spawn.ts";
import { clipThumbnailArgs, sourceThumbnailArgs, thumbnailFrom, type ThumbnailFrom } from "../../container/src/render/thumbnail.ts";
import { exitedChildrenCpuSeconds } from "./cpu.ts";

const FFMPEG = process.env.FFMPEG_PATH || "ffmpeg";
const FFPROBE = process.env.FFPROBE_PATH || "ffprobe";
const REPEATS = 3;

export interface ThumbnailFigures {
  source: { wallMedian: number; cpuMedian: number };
  clip: { wallMedian: number; cpuMedian: number };
  /** Per clip, the way the engine's rule chose. */
  chosen: ThumbnailFrom[];
  /** Mean seconds between the source's keyframes. */
  sourceKeyframeGap: number;
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

async function timed(args: string[]): Promise<{ wall: number; cpu: number }> {
  const cpu = exitedChildrenCpuSeconds();
  const t0 = performance.now();
  const result = await runProcess({ command: FFMPEG, args, timeoutMs: 120_000 });
  if (result.exitCode !== 0) throw new Error(`thumbnail ffmpeg failed: ${result.stderrTail}`);
  return { wall: (performance.now() - t0) / 1000, cpu: exitedChildrenCpuSeconds() - cpu };
}

async function keyframeTimes(file: string): Promise<number[]> {
  const result = await runProcess({
    command: FFPROBE,
    args: ["-v", "error", "-select_streams", "v:0", "-skip_frame", "nokey", "-show_entries", "frame=pts_time", "-of", "csv=p=0", file],
    timeoutMs: 600_000,
  });
  return result.stdout.split("\n").map(Number).filter((t) => Number.isFinite(t) && t >= 0);
}

export async function measureThumbnails(sourcePath: string, report: CompleteReport, clipFiles: string[], config: ClipConfig, workDir: string): Promise<ThumbnailFigures> {
  const runner = createNativeRunner({ ffmpegPath: FFMPEG, ffprobePath: FFPROBE });
  const source = await probeSource({
    runner,
    path: sourcePath,
    sizeBytes: (await stat(sourcePath)).size,
    videoUrl: "https://bench.test/source.mp4",
    platformTitle: null,
    maxSourceSeconds: 3 * 3600,
    signal: new AbortController().signal,
  });
  const keyframes = await keyframeTimes(sourcePath);
  const fromSource: { wall: number; cpu: number }[] = [];
  const fromClip: { wall: number; cpu: number }[] = [];
  const chosen: ThumbnailFrom[] = [];
  for (const clip of report.clips) {
    const candidate = { start: clip.start_seconds, end: clip.end_seconds, score: clip.score, reasons: clip.reasons };
    const thumbnailPath = path.join(workDir, `thumb-${clip.index}.jpg`);
    chosen.push(thumbnailFrom(source, candidate, keyframes));
    for (let i = 0; i < REPEATS; i++) {
      fromSource.push(await timed(sourceThumbnailArgs({ source, candidate, config, thumbnailPath })));
      fromClip.push(await timed(clipThumbnailArgs({ clipPath: clipFiles[clip.index]!, candidate, thumbnailPath })));
    }
  }
  return {
    source: { wallMedian: median(fromSource.map((r) => r.wall)), cpuMedian: median(fromSource.map((r) => r.cpu)) },
    clip: { wallMedian: median(fromClip.map((r) => r.wall)), cpuMedian: median(fromClip.map((r) => r.cpu)) },
    chosen,
    sourceKeyframeGap: source.durationSeconds / Math.max(1, keyframes.length),
  };
}
