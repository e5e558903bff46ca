import type { FfmpegRunner, RunRequest, RunResult } from "../../src/ffmpeg/runner.ts";
import { nativeRunner } from "./media.ts";

/**
 * The real native runner, with a record of every ffmpeg run: what it wrote,
 * when it started and when it ended, and how (exit code, or stopped). Tests
 * read the schedule of the renders from it. `before` may delay or change a
 * run (e.g. make one render fail for real by naming an encoder ffmpeg lacks).
 */
export interface RunEvent {
  outputs: string[];
  args: string[];
  startedAt: number;
  endedAt?: number;
  exitCode?: number;
  stopped?: boolean;
}

export interface RecordingRunner extends FfmpegRunner {
  events: RunEvent[];
  /** Runs that render a clip (libx264 into clip-N.mp4), with N. */
  renders(): (RunEvent & { index: number })[];
}

const CLIP_FILE = /clip-(\d+)\.mp4$/;

export function recordingRunner(before?: (req: RunRequest, events: RunEvent[]) => Promise<RunRequest>): RecordingRunner {
  const inner = nativeRunner();
  const events: RunEvent[] = [];
  const record = async (run: (req: RunRequest) => Promise<RunResult>, original: RunRequest): Promise<RunResult> => {
    const req = before ? await before(original, events) : original;
    // The args the engine asked for (before any change `before` made), so a sabotaged render still reads as a render.
    const event: RunEvent = { outputs: req.outputs, args: original.args, startedAt: Date.now() };
    events.push(event);
    try {
      const result = await run(req);
      event.exitCode = result.exitCode;
      return result;
    } catch (error) {
      event.stopped = true;
      throw error;
    } finally {
      event.endedAt = Date.now();
    }
  };
  return {
    backend: inner.backend,
    maxSourceBytes: inner.maxSourceBytes,
    events,
    renders: () =>
      events.flatMap((e) => {
        const match = e.args.includes("libx264") ? e.outputs.map((o) => CLIP_FILE.exec(o)).find(Boolean) : undefined;
        return match ? [{ ...e, index: Number(match[1]) }] : [];
      }),
    ffmpeg: (req) => record((r) => inner.ffmpeg(r), req),
    ffprobe: (req) => inner.ffprobe(req),
  };
}

/** Most runs in progress at the same moment among these. */
export function maxOverlap(runs: { startedAt: number; endedAt?: number }[]): number {
  const edges = runs.flatMap((r) => [
    { t: r.startedAt, d: 1 },
    { t: r.endedAt ?? Number.POSITIVE_INFINITY, d: -1 },
  ]);
  // Ends before starts at the same millisecond: touching runs do not overlap.
  edges.sort((a, b) => a.t - b.t || a.d - b.d);
  let now = 0;
  let most = 0;
  for (const e of edges) {
    now += e.d;
    most = Math.max(most, now);
  }
  return most;
}
