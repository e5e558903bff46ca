import { spawn } from "node:child_process";
import type { Readable } from "node:stream";

/**
 * The only variables a child process (ffmpeg, ffprobe, yt-dlp) inherits from
 * the engine: what a program needs to find itself, its libraries' data and a
 * temporary directory, and to read text. Nothing else of the engine's
 * environment passes, so no setting, key or token can reach the processes
 * that parse attacker-supplied media, whatever the engine's environment
 * holds. (Tokens are never in the environment at all: each job's lives in
 * memory, from its StartJob.)
 */
export const CHILD_ENVIRONMENT = ["PATH", "HOME", "TMPDIR", "TZ", "LANG", "LC_ALL", "LC_CTYPE", "FONTCONFIG_FILE", "FONTCONFIG_PATH"] as const;

/** The minimal environment of a child process, from `base` (the engine's own), plus `extra`. */
export function childEnvironment(base: NodeJS.ProcessEnv = process.env, extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const name of CHILD_ENVIRONMENT) if (base[name] !== undefined) env[name] = base[name];
  return { ...env, ...extra };
}

/**
 * Runs one program with an argument array (never a shell), stdin closed (or
 * fed from `stdin`), and
 * kills it (SIGTERM, then SIGKILL after a grace period) when the time limit
 * passes or the signal aborts.
 *
 * Resolves with the exit code for any normal exit, including a failing one;
 * rejects with the signal's reason on abort and with ProcessTimeoutError past
 * the time limit, so a caller never mistakes a killed run for a result.
 */
export interface SpawnRequest {
  command: string;
  args: string[];
  timeoutMs: number;
  signal?: AbortSignal;
  onStderrLine?: (line: string) => void;
  onStdoutLine?: (line: string) => void;
  /** Bytes of stdout kept (the rest is dropped); ffprobe's JSON fits easily. */
  maxStdoutBytes?: number;
  /** Characters of stderr kept for error messages. */
  stderrTailChars?: number;
  /** The child's whole environment; default childEnvironment() (never the engine's own). */
  env?: NodeJS.ProcessEnv;
  cwd?: string;
  /**
   * Run the program in a process group of its own and signal the whole group:
   * what it starts (yt-dlp's ffmpeg merger) dies with it on a stop, and
   * nothing it left behind outlives its exit.
   */
  processGroup?: boolean;
  /**
   * Piped to the program's stdin (closed otherwise): a source read as it
   * downloads. The program may exit before reading it all (a failing
   * ffmpeg); the rest is dropped and the stream destroyed.
   */
  stdin?: Readable;
}

export interface SpawnResult {
  exitCode: number;
  stdout: string;
  stderrTail: string;
}

export class ProcessTimeoutError extends Error {
  constructor(command: string, timeoutMs: number) {
    super(`${command} ran longer than ${Math.round(timeoutMs / 1000)} s and was stopped`);
    this.name = "ProcessTimeoutError";
  }
}

const KILL_GRACE_MS = 2000;

/** Splits a byte stream into lines; ffmpeg ends progress lines with \r. */
function lineSplitter(onLine: (line: string) => void): { push(chunk: string): void; end(): void } {
  let pending = "";
  return {
    push(chunk) {
      pending += chunk;
      const parts = pending.split(/\r\n|\r|\n/);
      pending = parts.pop() ?? "";
      for (const part of parts) if (part !== "") onLine(part);
      // A line without an end would grow without bound; hand it over in pieces.
      if (pending.length > 64 * 1024) {
        onLine(pending);
        pending = "";
      }
    },
    end() {
      if (pending !== "") onLine(pending);
      pending = "";
    },
  };
}

export function runProcess(req: SpawnRequest): Promise<SpawnResult> {
  const maxStdout = req.maxStdoutBytes ?? 16 * 1024 * 1024;
  const tailChars = req.stderrTailChars ?? 8 * 1024;
  return new Promise<SpawnResult>((resolve, reject) => {
    if (req.signal?.aborted) {
      reject(req.signal.reason);
      return;
    }
    const child = spawn(req.command, req.args, {
      // stdin is a pipe either way: fed from req.stdin, or closed at once (the program reads end of file).
      stdio: ["pipe", "pipe", "pipe"],
      shell: false,
      windowsHide: true,
      env: req.env ?? childEnvironment(),
      cwd: req.cwd,
      detached: req.processGroup === true,
    });
    const signalAll = (signal: NodeJS.Signals) => {
      if (req.processGroup && child.pid !== undefined) {
        try {
          process.kill(-child.pid, signal);
        } catch {
          // The group is already gone.
        }
        return;
      }
      child.kill(signal);
    };
    const stdoutChunks: Buffer[] = [];
    let stdoutBytes = 0;
    let stderrTail = "";
    let failure: { error: unknown } | undefined;
    let killTimer: NodeJS.Timeout | undefined;

    const stop = (error: unknown) => {
      if (failure) return;
      failure = { error };
      signalAll("SIGTERM");
      killTimer = setTimeout(() => signalAll("SIGKILL"), KILL_GRACE_MS);
      killTimer.unref();
    };
    const timeout = setTimeout(() => stop(new ProcessTimeoutError(req.command, req.timeoutMs)), req.timeoutMs);
    const onAbort = () => stop(req.signal?.reason);
    req.signal?.addEventListener("abort", onAbort, { once: true });

    // EPIPE when the program exits before reading everything (or closes stdin): its exit code tells what happened.
    child.stdin.on("error", () => req.stdin?.destroy());
    if (!req.stdin) child.stdin.end();
    else {
      const input = req.stdin;
      input.on("error", () => child.stdin.destroy());
      input.pipe(child.stdin);
      child.on("exit", () => input.destroy());
    }
    const stderrLines = lineSplitter((line) => req.onStderrLine?.(line));
    const stdoutLines = req.onStdoutLine ? lineSplitter(req.onStdoutLine) : undefined;
    child.stdout.on("data", (chunk: Buffer) => {
      stdoutLines?.push(chunk.toString("utf8"));
      if (stdoutBytes < maxStdout) {
        const kept = chunk.subarray(0, maxStdout - stdoutBytes);
        stdoutChunks.push(kept);
        stdoutBytes += kept.length;
      }
    });
    child.stderr.on("data", (chunk: Buffer) => {
      const text = chunk.toString("utf8");
      stderrTail = (stderrTail + text).slice(-tailChars);
      stderrLines.push(text);
    });

    const finish = () => {
      clearTimeout(timeout);
      if (killTimer) clearTimeout(killTimer);
      req.signal?.removeEventListener("abort", onAbort);
    };
    child.on("error", (error) => {
      finish();
      reject(failure ? failure.error : error);
    });
    // The leader exited: whatever it started and left running goes too (and releases the pipes).
    if (req.processGroup) child.on("exit", () => signalAll("SIGKILL"));
    child.on("close", (code, signal) => {
      finish();
      stderrLines.end();
      stdoutLines?.end();
      if (failure) {
        reject(failure.error);
        return;
      }
      resolve({
        exitCode: code ?? (signal ? 128 : 1),
        stdout: Buffer.concat(stdoutChunks).toString("utf8"),
        stderrTail,
      });
    });
  });
}
