/**
 * Picks the ffmpeg backend for this process: the machine's native ffmpeg when
 * one is found, else the WebAssembly build that ships with `npm install`.
 *
 * Selection order:
 *   1. `opts.prefer` (an explicit caller choice, e.g. a test),
 *   2. `ENGINE_FFMPEG_BACKEND=native|wasm`,
 *   3. native when `FFMPEG_PATH`/`FFPROBE_PATH` (or `ffmpeg`/`ffprobe` on PATH)
 *      run `-version` successfully, else wasm.
 * A forced native choice with no working binaries fails loudly instead of
 * silently running the much slower wasm build.
 */
import { execFile } from "node:child_process";
import { constants as fsConstants } from "node:fs";
import { access, stat } from "node:fs/promises";
import path from "node:path";
import { childEnvironment } from "../shared/spawn.ts";
import { createNativeRunner } from "./native.ts";
import type { BackendName, FfmpegRunner } from "./runner.ts";
import { createWasmRunner } from "./wasm.ts";

export type { BackendName, FfmpegRunner } from "./runner.ts";

export interface CreateRunnerOptions {
  prefer?: BackendName;
  /** Environment to read (defaults to process.env); tests pass their own. */
  env?: NodeJS.ProcessEnv;
}

export interface NativeBinaries {
  ffmpegPath: string;
  ffprobePath: string;
}

export interface BackendChoice {
  backend: BackendName;
  /** One sentence for the start-up log and the job's steps. */
  reason: string;
  /** Set when backend is "native". */
  binaries?: NativeBinaries;
}

/** A runner that also says why its backend was chosen. */
export interface SelectedRunner extends FfmpegRunner {
  readonly selectionReason: string;
}

const VERSION_CHECK_TIMEOUT_MS = 10_000;

function isBackendName(value: string): value is BackendName {
  return value === "native" || value === "wasm";
}

async function isExecutableFile(candidate: string): Promise<boolean> {
  try {
    const info = await stat(candidate);
    if (!info.isFile()) return false;
    await access(candidate, fsConstants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/**
 * Resolves a command to an absolute path through the given PATH, so the
 * runner later spawns exactly the binary that passed the version check.
 */
async function resolveExecutable(command: string, env: NodeJS.ProcessEnv): Promise<string | undefined> {
  if (command.includes("/")) {
    const absolute = path.resolve(command);
    return (await isExecutableFile(absolute)) ? absolute : undefined;
  }
  for (const dir of (env.PATH ?? "").split(path.delimiter)) {
    if (dir === "") continue;
    const candidate = path.join(dir, command);
    if (await isExecutableFile(candidate)) return candidate;
  }
  return undefined;
}

function runsVersion(binary: string): Promise<boolean> {
  return new Promise((resolve) => {
    // The minimal environment, like every child (spawn.ts): this one runs before any job, but still never sees the engine's.
    execFile(binary, ["-version"], { timeout: VERSION_CHECK_TIMEOUT_MS, windowsHide: true, env: childEnvironment() }, (error, stdout) => {
      resolve(error === null && /version/i.test(stdout));
    });
  });
}

type NativeLookup = { found: true; binaries: NativeBinaries } | { found: false; problem: string };

async function findNativeBinaries(env: NodeJS.ProcessEnv): Promise<NativeLookup> {
  const ffmpegCommand = env.FFMPEG_PATH || "ffmpeg";
  const ffprobeCommand = env.FFPROBE_PATH || "ffprobe";
  const ffmpegSource = env.FFMPEG_PATH ? `FFMPEG_PATH (${ffmpegCommand})` : "ffmpeg on PATH";
  const ffprobeSource = env.FFPROBE_PATH ? `FFPROBE_PATH (${ffprobeCommand})` : "ffprobe on PATH";

  const ffmpegPath = await resolveExecutable(ffmpegCommand, env);
  if (!ffmpegPath) return { found: false, problem: `${ffmpegSource} not found` };
  const ffprobePath = await resolveExecutable(ffprobeCommand, env);
  if (!ffprobePath) return { found: false, problem: `${ffprobeSource} not found` };

  const [ffmpegRuns, ffprobeRuns] = await Promise.all([runsVersion(ffmpegPath), runsVersion(ffprobePath)]);
  if (!ffmpegRuns) return { found: false, problem: `${ffmpegPath} -version failed` };
  if (!ffprobeRuns) return { found: false, problem: `${ffprobePath} -version failed` };
  return { found: true, binaries: { ffmpegPath, ffprobePath } };
}

/** Decides which backend to use without starting it. */
export async function chooseBackend(opts: CreateRunnerOptions = {}): Promise<BackendChoice> {
  const env = opts.env ?? process.env;
  const forcedByEnv = env.ENGINE_FFMPEG_BACKEND?.trim().toLowerCase();
  if (forcedByEnv && !isBackendName(forcedByEnv)) {
    throw new Error(`ENGINE_FFMPEG_BACKEND must be "native" or "wasm", got "${env.ENGINE_FFMPEG_BACKEND}"`);
  }
  const forced: BackendName | undefined = opts.prefer ?? (forcedByEnv as BackendName | undefined);
  const forcedBy = opts.prefer ? "requested by the caller" : "forced by ENGINE_FFMPEG_BACKEND";

  if (forced === "wasm") {
    return { backend: "wasm", reason: `WebAssembly ffmpeg ${forcedBy}` };
  }
  const lookup = await findNativeBinaries(env);
  if (forced === "native") {
    if (!lookup.found) throw new Error(`native ffmpeg ${forcedBy}, but ${lookup.problem}`);
    return { backend: "native", reason: `native ffmpeg ${forcedBy} (${lookup.binaries.ffmpegPath})`, binaries: lookup.binaries };
  }
  if (lookup.found) {
    return { backend: "native", reason: `native ffmpeg found (${lookup.binaries.ffmpegPath})`, binaries: lookup.binaries };
  }
  return { backend: "wasm", reason: `${lookup.problem}; using the WebAssembly build (slower, small sources only)` };
}

function withReason(runner: FfmpegRunner, selectionReason: string): SelectedRunner {
  return {
    backend: runner.backend,
    maxSourceBytes: runner.maxSourceBytes,
    selectionReason,
    ffmpeg: (req) => runner.ffmpeg(req),
    ffprobe: (req) => runner.ffprobe(req),
  };
}

export async function createRunner(opts: CreateRunnerOptions = {}): Promise<SelectedRunner> {
  const choice = await chooseBackend(opts);
  if (choice.backend === "native" && choice.binaries) {
    return withReason(createNativeRunner(choice.binaries), choice.reason);
  }
  return withReason(await createWasmRunner(), choice.reason);
}
