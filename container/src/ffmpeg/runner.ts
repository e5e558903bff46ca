/**
 * One interface over the two ffmpeg backends (native processes, or the
 * WebAssembly build as a fallback) so the pipeline never knows which ran.
 *
 * Paths in `args` are real file-system paths. The wasm backend maps the input
 * and output files it is given into its in-memory file system itself, which
 * is why inputs and outputs are declared separately from the argument list.
 */
import type { Readable } from "node:stream";

export type BackendName = "native" | "wasm";

export interface RunRequest {
  /** ffmpeg (or ffprobe) arguments, never passed through a shell. */
  args: string[];
  /** Files the command reads (must exist on disk). */
  inputs: string[];
  /** Files the command writes (created on disk when the run succeeds). */
  outputs: string[];
  /** Hard wall-clock limit; the process is killed past it. */
  timeoutMs: number;
  /** Aborting kills the process within a second or two. */
  signal?: AbortSignal;
  /** Called with each line ffmpeg writes to stderr (progress, filter logs). */
  onStderrLine?: (line: string) => void;
  /**
   * Native backend only: what ffmpeg reads as `pipe:0` (a source still
   * downloading, see analyse/measure.ts). The WebAssembly backend refuses it.
   */
  stdin?: Readable;
}

export interface RunResult {
  exitCode: number;
  stdout: string;
  /** Last part of stderr, bounded in size, for error messages. */
  stderrTail: string;
}

export interface FfmpegRunner {
  readonly backend: BackendName;
  /** Largest source file this backend can work on, in bytes. */
  readonly maxSourceBytes: number;
  ffmpeg(req: RunRequest): Promise<RunResult>;
  ffprobe(req: RunRequest): Promise<RunResult>;
}
