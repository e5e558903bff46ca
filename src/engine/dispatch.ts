/**
 * The Worker's side of direction 1 of the engine channel (contract.ts).
 * One choice: ENGINE_URL set (local development, tests) -> plain fetch to that
 * server; otherwise the job's own instance of the Container binding. Every
 * request after that choice is built and read the same way.
 */
import { getContainer } from "@cloudflare/containers";
import { StartJob, StartJobAccepted, type EngineLimits, type StartJob as StartJobBody } from "./contract";
import { signEngineToken } from "./token";
import { findJob, type Job } from "../db/jobs";

/** Host the Container's outbound handler answers with the Worker's app (container.ts). */
export const INTERNAL_CALLBACK_HOST = "clipjobs.internal";
/** Placeholder origin for requests to the container: the binding ignores the host. */
const CONTAINER_ORIGIN = "http://engine.container";

const START_TIMEOUT_MS = 30_000;
const CANCEL_TIMEOUT_MS = 5_000;

export class EngineUnavailableError extends Error {
  override readonly name = "EngineUnavailableError";
}

export async function engineFetch(env: Env, jobId: string, path: string, init: RequestInit): Promise<Response> {
  const target: { origin: string; fetcher: { fetch(request: Request): Promise<Response> } } = env.ENGINE_URL
    ? { origin: env.ENGINE_URL.replace(/\/+$/, ""), fetcher: { fetch: (request) => fetch(request) } }
    : { origin: CONTAINER_ORIGIN, fetcher: getContainer(env.ENGINE, jobId) };
  return target.fetcher.fetch(new Request(`${target.origin}${path}`, init));
}

function positiveNumber(value: string, fallback: number): number {
  const parsed = Number(value);
  return Number.isFinite(parsed) && parsed > 0 ? parsed : fallback;
}

export function engineLimits(env: Env): EngineLimits {
  return {
    max_source_bytes: Math.floor(positiveNumber(env.MAX_SOURCE_BYTES, 4 * 1024 ** 3)),
    max_source_seconds: positiveNumber(env.MAX_SOURCE_SECONDS, 3 * 3600),
    download_timeout_seconds: positiveNumber(env.DOWNLOAD_TIMEOUT_SECONDS, 1800),
    allow_private_hosts: env.ALLOW_PRIVATE_SOURCES === "true",
  };
}

export function callbackBase(env: Env): string {
  return env.CALLBACK_BASE || `http://${INTERNAL_CALLBACK_HOST}`;
}

export function tokenTtlSeconds(env: Env): number {
  return Math.floor(positiveNumber(env.ENGINE_TOKEN_TTL_SECONDS, 6 * 3600));
}

export function silenceTimeoutSeconds(env: Env): number {
  return Math.floor(positiveNumber(env.ENGINE_SILENCE_TIMEOUT_SECONDS, 180));
}

/**
 * The job's token is a pure function of the job (its id and creation time), so
 * StartJob, a re-delivery and a later cancel all carry the same token: the
 * engine holds no secret and recognises cancel by comparing it with the token
 * it was started with. It expires ENGINE_TOKEN_TTL_SECONDS after submission.
 */
export async function jobToken(env: Env, job: Pick<Job, "id" | "createdAt">): Promise<string> {
  return signEngineToken(env.ENGINE_SECRET, job.id, tokenTtlSeconds(env), Date.parse(job.createdAt));
}

/**
 * Sends StartJob. The engine answers `started: false` for a job it already
 * runs, so a duplicate delivery re-sends safely. Throws EngineUnavailableError
 * when the engine cannot be reached or answers with an error.
 */
export async function startOnEngine(env: Env, job: Job): Promise<StartJobAccepted> {
  const body: StartJobBody = StartJob.parse({
    job_id: job.id,
    token: await jobToken(env, job),
    callback_base: callbackBase(env),
    video_url: job.videoUrl,
    video_type: job.videoType,
    config: job.config,
    limits: engineLimits(env),
    captions_url: job.captionsUrl,
  });
  let response: Response;
  try {
    response = await engineFetch(env, job.id, "/jobs", {
      method: "POST",
      headers: { "Content-Type": "application/json" },
      body: JSON.stringify(body),
      signal: AbortSignal.timeout(START_TIMEOUT_MS),
    });
  } catch (err) {
    throw new EngineUnavailableError(`engine unreachable: ${err instanceof Error ? err.message : String(err)}`);
  }
  if (!response.ok) {
    await response.body?.cancel();
    throw new EngineUnavailableError(`engine answered ${response.status} to StartJob`);
  }
  const accepted = StartJobAccepted.safeParse(await response.json().catch(() => null));
  if (!accepted.success) throw new EngineUnavailableError("engine answered StartJob with an unexpected body");
  return accepted.data;
}

/** Asks the engine to stop a job. Best effort: the engine also stops on its next callback's 409. */
export async function cancelOnEngine(env: Env, jobId: string): Promise<void> {
  try {
    const job = await findJob(env.DB, jobId);
    if (!job) return;
    const response = await engineFetch(env, jobId, `/jobs/${jobId}/cancel`, {
      method: "POST",
      headers: { Authorization: `Bearer ${await jobToken(env, job)}` },
      signal: AbortSignal.timeout(CANCEL_TIMEOUT_MS),
    });
    await response.body?.cancel();
  } catch (err) {
    console.warn(`engine cancel for ${jobId} failed: ${err instanceof Error ? err.message : String(err)}`);
  }
}

/**
 * The container's sleep timer only counts requests into it, not its own
 * outbound calls, so each engine report renews it (no-op for ENGINE_URL).
 */
export async function keepEngineAwake(env: Env, jobId: string): Promise<void> {
  if (env.ENGINE_URL) return;
  try {
    await getContainer(env.ENGINE, jobId).renewActivityTimeout();
  } catch (err) {
    console.warn(`renewing the engine container for ${jobId} failed: ${err instanceof Error ? err.message : String(err)}`);
  }
}
