import { accessSync, constants as fsConstants, statSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { ENGINE_PORT } from "../../src/engine/contract.ts";

/** Engine settings from the environment; everything a job needs beyond StartJob. */
export interface EngineConfig {
  port: number;
  host: string;
  /** Parent of the per-job work directories. */
  workDir: string;
  /** Absolute path of yt-dlp, or null when it is not installed. */
  ytdlpPath: string | null;
  /** A download that delivers no byte for this long is abandoned. */
  downloadStallTimeoutMs: number;
  maxRedirects: number;
  /** Attempts per callback on 5xx or network errors (first try included). */
  callbackAttempts: number;
  callbackRetryBaseMs: number;
  callbackTimeoutMs: number;
  /** Longest silence between progress reports while a job works. */
  progressHeartbeatMs: number;
}

function positiveNumber(env: NodeJS.ProcessEnv, name: string, fallback: number): number {
  const raw = env[name];
  if (raw === undefined || raw.trim() === "") return fallback;
  const value = Number(raw);
  if (!Number.isFinite(value) || value <= 0) throw new Error(`${name} must be a positive number, got "${raw}"`);
  return value;
}

function isExecutable(file: string): boolean {
  try {
    if (!statSync(file).isFile()) return false;
    accessSync(file, fsConstants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/** YTDLP_PATH when set (empty string: explicitly none), else `yt-dlp` on PATH. */
export function findYtdlp(env: NodeJS.ProcessEnv): string | null {
  const configured = env.YTDLP_PATH;
  if (configured !== undefined) {
    if (configured.trim() === "") return null;
    const absolute = path.resolve(configured);
    return isExecutable(absolute) ? absolute : null;
  }
  for (const dir of (env.PATH ?? "").split(path.delimiter)) {
    if (dir === "") continue;
    const candidate = path.join(dir, "yt-dlp");
    if (isExecutable(candidate)) return candidate;
  }
  return null;
}

export function loadConfig(env: NodeJS.ProcessEnv = process.env): EngineConfig {
  const port = positiveNumber(env, "PORT", ENGINE_PORT);
  return {
    port,
    host: env.HOST?.trim() || "0.0.0.0",
    // Per port by default: the start-up sweep of stale job directories must
    // never reach another engine's running jobs on the same machine.
    workDir: path.resolve(env.WORK_DIR?.trim() || path.join(os.tmpdir(), `clipjobs-engine-${port}`)),
    ytdlpPath: findYtdlp(env),
    downloadStallTimeoutMs: positiveNumber(env, "DOWNLOAD_STALL_TIMEOUT_SECONDS", 30) * 1000,
    maxRedirects: positiveNumber(env, "MAX_REDIRECTS", 5),
    callbackAttempts: positiveNumber(env, "CALLBACK_ATTEMPTS", 5),
    callbackRetryBaseMs: positiveNumber(env, "CALLBACK_RETRY_BASE_MS", 500),
    callbackTimeoutMs: positiveNumber(env, "CALLBACK_TIMEOUT_SECONDS", 30) * 1000,
    progressHeartbeatMs: positiveNumber(env, "PROGRESS_HEARTBEAT_SECONDS", 2) * 1000,
  };
}
