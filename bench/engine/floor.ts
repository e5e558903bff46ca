/**
 * The ffmpeg floor: the least work any engine must do for this job, timed
 * with plain ffmpeg commands and no server around them.
 *   analysis:   the audio pass and the keyframe pass (concurrently; the
 *               keyframes read as the engine reads them, KEYFRAMES_ONLY_INPUT),
 *               without the engine's log parsing;
 *   encodes:    each clip span cut with -ss before -i and encoded with the
 *               engine's settings (same crop, scale, preset, CRF, audio),
 *               `concurrency` at a time, as the engine renders them
 *               (ENGINE_RENDER_CONCURRENCY), with the clip's burned captions
 *               when the job burned some: the same outputs as the job's;
 *   thumbnails: one JPEG per clip, seeked in the source, right after its encode.
 * No download, probe, speech model, upload or callback: those are the
 * engine's overhead the ratio shows.
 *
 * Two sets of encodes, so the floor can be judged both ways:
 *   same outputs   the picture the job's clips carry: crop, scale and, for a
 *                  clip whose captions were burned, that clip's ASS file
 *                  (built by the bench as the engine builds it, run.ts)
 *                  drawn by libass's `ass` filter, as in the engine's render;
 *   crop + scale   the same encodes without any captions (the floor before
 *                  this bench burned captions).
 * When no clip burned captions the two are the same commands, run once.
 */
import { mkdir, rm } from "node:fs/promises";
import path from "node:path";
import { DEFAULT_CLIP_CONFIG } from "#contract";
import { cropFilter, cropSteps, outputSize } from "../../container/src/render/geometry.ts";
import { VIDEO_PRESET } from "../../container/src/render/index.ts";
import { assFilter } from "../../container/src/captions/ass.ts";
import { KEYFRAMES_ONLY_INPUT } from "../../container/src/analyse/signals.ts";
import { runProcess } from "../../container/src/shared/spawn.ts";
import { exitedChildrenCpuSeconds } from "./cpu.ts";

const FFMPEG = process.env.FFMPEG_PATH || "ffmpeg";

async function ffmpeg(args: string[]): Promise<void> {
  const result = await runProcess({ command: FFMPEG, args: ["-nostdin", "-hide_banner", "-loglevel", "error", "-y", ...args], timeoutMs: 3_600_000 });
  if (result.exitCode !== 0) throw new Error(`floor ffmpeg failed: ${result.stderrTail}`);
}

export interface EncodeTimes {
  /** Wall time of the encodes (with their thumbnails), all of them, `concurrency` at a time. */
  encodesSeconds: number;
  /** Each encode on its own (they overlap when concurrency > 1). */
  encodeSeconds: number[];
  /** CPU seconds of these ffmpeg runs. */
  cpuSeconds: number;
}

export interface FloorTimes {
  analysisSeconds: number;
  analysisCpuSeconds: number;
  /** The same outputs as the job's clips (burned captions included). */
  encodesSeconds: number;
  encodeSeconds: number[];
  /** Analysis + same-output encodes. */
  totalSeconds: number;
  /** CPU seconds of the analysis and the same-output encodes. */
  cpuSeconds: number;
  /** Crop + scale only (no captions): equal to the above when no clip burned captions or it was not asked for. */
  plain: EncodeTimes & { totalSeconds: number; cpuSeconds: number; sameCommands: boolean };
  /** Clips whose encode burned captions. */
  burnedClips: number;
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
  /** Per span, the ASS file the job's clip burned (built as the engine builds it), or null. */
  captionFiles: (string | null)[] = [],
  /** Also encode crop + scale only when captions were burned (false: `plain` repeats the same-output figures). */
  withPlain = true,
): Promise<FloorTimes> {
  await mkdir(workDir, { recursive: true });
  const cpuBefore = exitedChildrenCpuSeconds();
  const started = performance.now();
  await Promise.all([
    ffmpeg(["-i", sourcePath, "-map", "0:a:0", "-vn", "-af", "silencedetect=noise=-35dB:duration=0.3,ebur128=framelog=info", "-f", "null", "-"]),
    ffmpeg([...KEYFRAMES_ONLY_INPUT, "-i", sourcePath, "-map", "0:v:0", "-an", "-vf", "scale=64:36:flags=area,format=gray", "-fps_mode", "passthrough", "-f", "rawvideo", path.join(workDir, "keyframes.gray")]),
  ]);
  const analysisSeconds = (performance.now() - started) / 1000;

  const analysisCpuSeconds = exitedChildrenCpuSeconds() - cpuBefore;

  const size = outputSize(DEFAULT_CLIP_CONFIG, source);
  const crop = cropFilter(size, cropSteps(0, undefined));
  const picture = `${crop},scale=${size.width}:${size.height}:flags=bicubic,setsar=1`;
  const encodes = async (captions: (string | null)[]): Promise<EncodeTimes> => {
    const cpu0 = exitedChildrenCpuSeconds();
    const encodeSeconds: number[] = new Array<number>(spans.length).fill(0);
    const encodesStart = performance.now();
    await pool(spans.length, concurrency, async (index) => {
      const span = spans[index]!;
      const ass = captions[index];
      const t0 = performance.now();
      await ffmpeg([
        "-ss", span.start.toFixed(6), "-i", sourcePath, "-t", (span.end - span.start).toFixed(6),
        // As the engine's graph: framed picture, format, then libass (brand/stage.ts).
        "-vf", `${picture},format=yuv420p${ass ? `,${assFilter(ass)}` : ""}`,
        "-c:v", "libx264", "-preset", VIDEO_PRESET, "-crf", "21", "-profile:v", "high", "-pix_fmt", "yuv420p",
        "-c:a", "aac", "-b:a", "128k", "-ac", "2", "-movflags", "+faststart",
        path.join(workDir, `floor-${index}.mp4`),
      ]);
      const at = span.start + (span.end - span.start) * 0.4;
      await ffmpeg(["-ss", at.toFixed(6), "-i", sourcePath, "-an", "-vf", `${picture},format=yuvj420p`, "-frames:v", "1", "-q:v", "3", "-update", "1", "-f", "image2", path.join(workDir, `floor-${index}.jpg`)]);
      encodeSeconds[index] = (performance.now() - t0) / 1000;
    });
    return { encodesSeconds: (performance.now() - encodesStart) / 1000, encodeSeconds, cpuSeconds: exitedChildrenCpuSeconds() - cpu0 };
  };
  const burned = spans.map((_, index) => captionFiles[index] ?? null);
  const burnedClips = burned.filter((file) => file !== null).length;
  const same = await encodes(burned);
  const plain = burnedClips > 0 && withPlain ? await encodes(spans.map(() => null)) : same;
  await rm(workDir, { recursive: true, force: true });
  return {
    analysisSeconds,
    analysisCpuSeconds,
    encodesSeconds: same.encodesSeconds,
    encodeSeconds: same.encodeSeconds,
    totalSeconds: analysisSeconds + same.encodesSeconds,
    cpuSeconds: analysisCpuSeconds + same.cpuSeconds,
    plain: { ...plain, totalSeconds: analysisSeconds + plain.encodesSeconds, cpuSeconds: analysisCpuSeconds + plain.cpuSeconds, sameCommands: plain === same },
    burnedClips,
    concurrency,
  };
}
