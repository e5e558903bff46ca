import { runProcess } from "../shared/spawn.ts";
import type { FfmpegRunner, RunRequest, RunResult } from "./runner.ts";

/**
 * The native backend: the machine's ffmpeg and ffprobe as child processes.
 *
 * Semantics shared with the pipeline: a normal exit resolves (check
 * `exitCode`); an abort rejects with the signal's reason and a time-limit kill
 * rejects with ProcessTimeoutError, both after the process was signalled
 * (SIGTERM, SIGKILL two seconds later).
 */
export interface NativeRunnerOptions {
  ffmpegPath: string;
  ffprobePath: string;
  /** Disk is the limit natively; the Worker's limits.max_source_bytes is the real cap. */
  maxSourceBytes?: number;
}

function withNoStdin(args: string[]): string[] {
  // -nostdin keeps ffmpeg from reading or waiting on a terminal; stdin is closed anyway.
  return args.includes("-nostdin") ? args : ["-nostdin", ...args];
}

export function createNativeRunner(opts: NativeRunnerOptions): FfmpegRunner {
  const run = (command: string, args: string[], req: RunRequest): Promise<RunResult> =>
    runProcess({
      command,
      args,
      timeoutMs: req.timeoutMs,
      signal: req.signal,
      onStderrLine: req.onStderrLine,
      stdin: req.stdin,
    });
  return {
    backend: "native",
    maxSourceBytes: opts.maxSourceBytes ?? Number.MAX_SAFE_INTEGER,
    ffmpeg: (req) => run(opts.ffmpegPath, withNoStdin(req.args), req),
    ffprobe: (req) => run(opts.ffprobePath, req.args, req),
  };
}
