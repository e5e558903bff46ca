/**
 * The analysis while the source downloads: as soon as the head of the file
 * shows a container that can be read front to back (source/streamable.ts),
 * the head is probed and the measuring pass (measure.ts) starts on the file
 * as it arrives, through ffmpeg's stdin. When the download ends, the pass has
 * only the last bytes left to read.
 *
 * Nothing is trusted before the finished file is probed: analyse() asks for
 * the measurements with the plan the real probe implies (demuxer, audio or
 * not, keyframes or sampled, speech model or not), and gets them only if the
 * streamed pass used that same plan and succeeded; otherwise the pass is
 * stopped and the finished file is measured as before. A source the pass
 * cannot read while it downloads (an MP4 with its index at the end, AVI, a
 * platform download that yt-dlp merges at the end, the WebAssembly backend)
 * is measured after the download: the job takes as long as it did before
 * this existed, never longer.
 */
import { mkdir, open, rm } from "node:fs/promises";
import { join } from "node:path";
import type { VideoType } from "#contract";
import { errorMessage } from "../shared/errors.ts";
import type { FfmpegRunner } from "../ffmpeg/runner.ts";
import { pinnedDemuxer, probeHead } from "../source/probe.ts";
import { abortable, type GrowingFile } from "../source/growing-file.ts";
import { streamVerdict } from "../source/streamable.ts";
import { measure, type MeasurePlan, type Measurements } from "./measure.ts";
import type { SpeechModelLoad } from "./speech-model.ts";
import { STRATEGIES } from "./strategies/index.ts";

/** The most of the head read to find an MP4's index (a `moov` further in than this is measured after the download). */
const MAX_HEAD_BYTES = 64 * 1024 * 1024;

export interface EarlyAnalysisRequest {
  runner: FfmpegRunner;
  source: GrowingFile;
  videoType: VideoType;
  /** The process's speech model, loading. */
  speech: Promise<SpeechModelLoad>;
  /** The job's work directory: the pass writes under early/ in it. */
  workDir: string;
  timeoutMs: number;
  signal: AbortSignal;
}

export interface EarlyAnalysis {
  /** AnalyseOptions.measured: the streamed measurements when taken with `plan`, else null (and the pass is stopped). */
  measured(plan: MeasurePlan, onSeconds: (seconds: number) => void): Promise<Measurements | null>;
  /** Stops the pass (the job ended, failed or was refused); resolves once it exited. */
  stop(): Promise<void>;
  /** When the pass started (epoch ms), or null while it has not. */
  startedAt(): number | null;
  /** What happened, for the job's log: the container streamed, or why not. */
  outcome(): string;
  /** Media seconds the pass has read so far. */
  seconds(): number;
}

type Started = { plan: MeasurePlan; result: Promise<Measurements | null> } | null;

function samePlan(a: MeasurePlan, b: MeasurePlan): boolean {
  return a.demuxer === b.demuxer && a.hasAudio === b.hasAudio && a.frames === b.frames && a.speech === b.speech;
}

async function readHead(path: string, bytes: number): Promise<Buffer> {
  const handle = await open(path, "r").catch(() => null);
  if (!handle) return Buffer.alloc(0);
  try {
    const buffer = Buffer.alloc(bytes);
    const { bytesRead } = await handle.read(buffer, 0, bytes, 0);
    return buffer.subarray(0, bytesRead);
  } finally {
    await handle.close();
  }
}

export function startEarlyAnalysis(req: EarlyAnalysisRequest): EarlyAnalysis {
  const stopper = new AbortController();
  const signal = AbortSignal.any([req.signal, stopper.signal]);
  const dir = join(req.workDir, "early");
  let outcome = "waiting for the head of the source";
  let startedAt: number | null = null;
  let seconds = 0;
  let listener: ((seconds: number) => void) | null = null;

  /** Resolves once `bytes` are on disk or the download finished; false when it finished shorter. */
  const waitForBytes = async (bytes: number): Promise<boolean> => {
    for (;;) {
      req.source.check();
      const next = req.source.changed();
      const finished = req.source.finished;
      if ((await req.source.size()) >= bytes) return true;
      if (finished) return false;
      await abortable(next, signal);
    }
  };

  const begin = async (): Promise<Started> => {
    // The verdict from the head: read more while it asks for more.
    let want = 64 * 1024;
    let verdict;
    for (;;) {
      const complete = !(await waitForBytes(want));
      const head = await readHead(req.source.path, Math.min(want, MAX_HEAD_BYTES));
      verdict = streamVerdict(head, complete);
      if (verdict.kind !== "more") break;
      if (want >= MAX_HEAD_BYTES) {
        verdict = { kind: "whole" as const, reason: "the MP4's index (moov) is not within its first 64 MiB" };
        break;
      }
      want = Math.min(MAX_HEAD_BYTES, want * 4);
    }
    if (verdict.kind === "whole") {
      outcome = `measured after the download: ${verdict.reason}`;
      return null;
    }
    if (req.source.finished) {
      outcome = "measured after the download: it arrived before its head was read";
      return null;
    }
    await waitForBytes(verdict.headBytes);
    const head = await probeHead(req.runner, req.source.path, signal);
    const loaded = await req.speech;
    const hasAudio = head.hasAudio;
    if (!hasAudio && STRATEGIES[req.videoType].requiresSpeech) {
      outcome = `not measured: ${req.videoType} needs speech and the source has no audio track`;
      return null;
    }
    const plan: MeasurePlan = {
      demuxer: pinnedDemuxer(head.format),
      hasAudio,
      frames: !hasAudio && req.videoType !== "lecture" ? "sampled" : "keyframes",
      speech: hasAudio && "model" in loaded,
    };
    await mkdir(dir, { recursive: true });
    startedAt = Date.now();
    outcome = `measured while downloading (${verdict.container})`;
    const result = measure(req.runner, { stream: req.source }, plan, {
      signal,
      model: "model" in loaded ? loaded.model : null,
      workDir: dir,
      // The transcript cuts its chunks from this PCM; stop() removes the directory at the job's end.
      keepPcm: true,
      timeoutMs: req.timeoutMs,
      onSeconds: (t) => {
        seconds = t;
        listener?.(t);
      },
    }).catch((error: unknown) => {
      if (!signal.aborted) outcome = `measured after the download: the streamed pass failed (${errorMessage(error).slice(0, 200)})`;
      return null;
    });
    return { plan, result };
  };

  const started: Promise<Started> = begin().catch((error: unknown) => {
    if (!signal.aborted) outcome = `measured after the download: ${errorMessage(error).slice(0, 200)}`;
    return null;
  });

  const stop = async (): Promise<void> => {
    stopper.abort(new Error("the early analysis was stopped"));
    const run = await started;
    await run?.result;
    await rm(dir, { recursive: true, force: true });
  };

  return {
    async measured(plan, onSeconds) {
      const run = await started;
      if (!run) return null;
      if (!samePlan(run.plan, plan)) {
        outcome = "measured after the download: the finished file's probe differs from its head's";
        await stop();
        return null;
      }
      listener = onSeconds;
      onSeconds(seconds);
      return run.result;
    },
    stop,
    startedAt: () => startedAt,
    outcome: () => outcome,
    seconds: () => seconds,
  };
}
