import { parseUpstreamProxy, type UpstreamProxy } from "../source/upstream-proxy.ts";
import { accessSync, constants as fsConstants, statSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { ENGINE_PORT, verifyKeyProblem } from "#contract";

/** Engine settings from the environment; everything a job needs beyond StartJob. */
export interface EngineConfig {
  port: number;
  host: string;
  /** Parent of the per-job work directories. */
  workDir: string;
  /** Absolute path of yt-dlp, or null when it is not installed. */
  ytdlpPath: string | null;
  /** PLATFORM_PROXY_URL: platform downloads leave through this proxy (still to checked addresses only). */
  platformProxy: UpstreamProxy | null;
  /** A download that delivers no byte for this long is abandoned. */
  downloadStallTimeoutMs: number;
  maxRedirects: number;
  /** Attempts per callback on 5xx or network errors (first try included). */
  callbackAttempts: number;
  callbackRetryBaseMs: number;
  callbackTimeoutMs: number;
  /** Longest silence between progress reports while a job works. */
  progressHeartbeatMs: number;
  /**
   * ENGINE_VERIFY_KEY: the Worker's Ed25519 public key, which verifies its
   * signed StartJob and cancel requests and can sign nothing. The engine
   * holds no secret: each job's callback token comes with its StartJob.
   */
  engineVerifyKey: string;
  /** Origin of the Worker's callback routes (CALLBACK_BASE); never taken from a request. */
  callbackBase: string;
  /** Sources on private, loopback or link-local hosts (ALLOW_PRIVATE_SOURCES=true): local development only. */
  allowPrivateHosts: boolean;
  /** Clips rendered at once (ENGINE_RENDER_CONCURRENCY; default from the core count, see defaultRenderConcurrency). */
  renderConcurrency: number;
}

/** More renders at once than this only adds memory (each ffmpeg peaks at about 320 MB at 1080x1920). */
export const MAX_RENDER_CONCURRENCY = 8;

/**
 * One render at a time below 4 cores, two from 4. One libx264 encode already
 * keeps two cores busy, so a second would only split them; on 4 cores one
 * encode leaves cores idle in its serial parts (the seek, the decode and crop
 * in one filter thread, the AAC encode, the mp4 faststart rewrite), which a
 * second encode fills. Production's standard-4 instances have 4 vCPU.
 */
export function defaultRenderConcurrency(cores: number): number {
  return cores >= 4 ? 2 : 1;
}

function renderConcurrencyOf(env: NodeJS.ProcessEnv): number {
  const raw = env.ENGINE_RENDER_CONCURRENCY;
  if (raw === undefined || raw.trim() === "") return defaultRenderConcurrency(os.availableParallelism());
  const value = Number(raw);
  if (!Number.isInteger(value) || value < 1 || value > MAX_RENDER_CONCURRENCY) {
    throw new Error(`ENGINE_RENDER_CONCURRENCY must be a whole number from 1 to ${MAX_RENDER_CONCURRENCY}, got "${raw}"`);
  }
  return value;
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

/** The callback origin: an http(s) URL without credentials, path, query or fragment. */
function callbackBaseOf(raw: string | undefined): string {
  const value = raw?.trim() || "http://clipjobs.internal";
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new Error(`CALLBACK_BASE must be an http(s) origin, got "${value}"`);
  }
  if (!/^https?:$/.test(url.protocol) || url.username || url.password || url.search || url.hash || url.pathname.replace(/\/+$/, "") !== "") {
    throw new Error(`CALLBACK_BASE must be an http(s) origin, got "${value}"`);
  }
  return url.origin;
}

export function loadConfig(env: NodeJS.ProcessEnv = process.env): EngineConfig {
  const port = positiveNumber(env, "PORT", ENGINE_PORT);
  const keyProblem = verifyKeyProblem(env.ENGINE_VERIFY_KEY);
  if (keyProblem) throw new Error(`${keyProblem}; the engine refuses to start without it`);
  return {
    port,
    // Loopback unless told otherwise: the Container class sets HOST=0.0.0.0 inside its instance.
    host: env.HOST?.trim() || "127.0.0.1",
    // Per port by default: the start-up sweep of stale job directories must
    // never reach another engine's running jobs on the same machine.
    workDir: path.resolve(env.WORK_DIR?.trim() || path.join(os.tmpdir(), `clipjobs-engine-${port}`)),
    ytdlpPath: findYtdlp(env),
    platformProxy: parseUpstreamProxy(env.PLATFORM_PROXY_URL),
    downloadStallTimeoutMs: positiveNumber(env, "DOWNLOAD_STALL_TIMEOUT_SECONDS", 30) * 1000,
    maxRedirects: positiveNumber(env, "MAX_REDIRECTS", 5),
    callbackAttempts: positiveNumber(env, "CALLBACK_ATTEMPTS", 5),
    callbackRetryBaseMs: positiveNumber(env, "CALLBACK_RETRY_BASE_MS", 500),
    callbackTimeoutMs: positiveNumber(env, "CALLBACK_TIMEOUT_SECONDS", 30) * 1000,
    progressHeartbeatMs: positiveNumber(env, "PROGRESS_HEARTBEAT_SECONDS", 2) * 1000,
    engineVerifyKey: (env.ENGINE_VERIFY_KEY ?? "").trim(),
    callbackBase: callbackBaseOf(env.CALLBACK_BASE),
    allowPrivateHosts: env.ALLOW_PRIVATE_SOURCES?.trim() === "true",
    renderConcurrency: renderConcurrencyOf(env),
  };
}
