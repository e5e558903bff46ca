/**
 * The Worker's side of direction 1 of the engine channel (contract.ts):
 * building and sending StartJob, and stopping a job's engine. Where the engine
 * lives is host.ts's business; every request after that choice is built and
 * read the same way.
 */
import { StartJob, StartJobAccepted, engineSecretProblem, type EngineLimits, type StartJob as StartJobBody } from "./contract";
import { EngineBusyError, EngineUnavailableError, engineHosts } from "./host";
import { signEngineToken } from "./token";
import type { Job } from "../db/jobs";

export { EngineBusyError, EngineUnavailableError } from "./host";

/** Host the Container's outbound handler answers with the Worker's app (container.ts). */
export const INTERNAL_CALLBACK_HOST = "clipjobs.internal";

const START_TIMEOUT_MS = 30_000;

/** Dispatch refuses to sign anything with a weak secret (and submission answers 503). */
export class EngineMisconfiguredError extends Error {
  override readonly name = "EngineMisconfiguredError";
}

/** Example values that must never sign production tokens, whatever their length. */
const EXAMPLE_SECRETS = new Set(["local-engine-secret-change-me-0123456789"]);

/** Why this deployment's ENGINE_SECRET cannot be used, or null. */
export function engineConfigProblem(env: Env): string | null {
  if (EXAMPLE_SECRETS.has(env.ENGINE_SECRET)) return "ENGINE_SECRET is the example value from .dev.vars.example";
  return engineSecretProblem(env.ENGINE_SECRET);
}

function positiveNumber(value: string | undefined, fallback: number): number {
  const parsed = Number(value);
  return Number.isFinite(parsed) && parsed > 0 ? parsed : fallback;
}

export function engineLimits(env: Env): EngineLimits {
  return {
    max_source_bytes: Math.floor(positiveNumber(env.MAX_SOURCE_BYTES, 4 * 1024 ** 3)),
    max_source_seconds: positiveNumber(env.MAX_SOURCE_SECONDS, 3 * 3600),
    download_timeout_seconds: positiveNumber(env.DOWNLOAD_TIMEOUT_SECONDS, 1800),
  };
}

/** Origin the engine calls back to; handed to the engine through its environment, never a request. */
export function callbackBase(env: Env): string {
  return env.CALLBACK_BASE || `http://${INTERNAL_CALLBACK_HOST}`;
}

export function tokenTtlSeconds(env: Env): number {
  return Math.floor(positiveNumber(env.ENGINE_TOKEN_TTL_SECONDS, 6 * 3600));
}

export function silenceTimeoutSeconds(env: Env): number {
  return Math.floor(positiveNumber(env.ENGINE_SILENCE_TIMEOUT_SECONDS, 180));
}

export function maxQueueSeconds(env: Env): number {
  return Math.floor(positiveNumber(env.MAX_QUEUE_SECONDS, 24 * 3600));
}

/**
 * The job's callback token, signed at dispatch: its lifetime counts from the
 * moment an engine gets the job (not from submission), and every dispatch
 * (a restart after a redeploy included) renews it.
 */
export async function jobToken(env: Env, jobId: string, nowMs: number = Date.now()): Promise<string> {
  return signEngineToken(env.ENGINE_SECRET, jobId, tokenTtlSeconds(env), nowMs);
}

/**
 * Sends a signed StartJob. The engine answers `started: false` for a job it
 * already runs, so a duplicate delivery re-sends safely. Throws
 * EngineBusyError when no instance is free (try later, not a failure) and
 * EngineUnavailableError when the engine cannot be reached or refuses.
 */
export async function startOnEngine(env: Env, job: Job): Promise<StartJobAccepted> {
  const problem = engineConfigProblem(env);
  if (problem) throw new EngineMisconfiguredError(problem);
  const body: StartJobBody = StartJob.parse({
    job_id: job.id,
    token: await jobToken(env, job.id),
    video_url: job.videoUrl,
    source: job.uploadId !== null ? "upload" : "url",
    video_type: job.videoType,
    config: job.config,
    limits: engineLimits(env),
    captions_url: job.captionsUrl,
  });
  let response: Response;
  try {
    response = await engineHosts.select(env).start(job.id, "/jobs", JSON.stringify(body), START_TIMEOUT_MS);
  } catch (err) {
    if (err instanceof EngineBusyError) throw err;
    throw new EngineUnavailableError(`engine unreachable: ${err instanceof Error ? err.message : String(err)}`);
  }
  if (response.status === 503) {
    await response.body?.cancel();
    throw new EngineBusyError("the engine is shutting down");
  }
  if (!response.ok) {
    await response.body?.cancel();
    throw new EngineUnavailableError(`engine answered ${response.status} to StartJob`);
  }
  const accepted = StartJobAccepted.safeParse(await response.json().catch(() => null));
  if (!accepted.success) throw new EngineUnavailableError("engine answered StartJob with an unexpected body");
  return accepted.data;
}

/** Stops the job's engine (never starts one). Best effort: the engine also stops on its next callback's 409. */
export async function stopEngine(env: Env, jobId: string, engineReported: boolean): Promise<void> {
  await engineHosts.select(env).stop(jobId, engineReported);
}

/** The container's sleep timer only counts requests into it, so each engine report renews it. */
export async function keepEngineAwake(env: Env, jobId: string): Promise<void> {
  await engineHosts.select(env).keepAwake(jobId);
}
