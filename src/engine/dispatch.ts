/**
 * The Worker's side of direction 1 of the engine channel (#contract):
 * building and sending StartJob. Where the engine lives (and stopping it) is
 * fleet/engine-host.ts's business; every request after that choice is built
 * and read the same way.
 */
import { StartJob, StartJobAccepted, type StartJob as StartJobBody } from "#contract";
import { classifyStartAnswer, EngineStartError, engineHosts } from "../fleet/engine-host.ts";
import { EngineMisconfiguredError, engineConfigProblem, engineLimits, tokenTtlSeconds } from "../settings.ts";
import { grantedScopes } from "./scopes.ts";
import { signEngineToken } from "./token.ts";
import type { Job } from "../db/jobs.ts";

export { EngineStartError } from "../fleet/engine-host.ts";

const START_TIMEOUT_MS = 30_000;

/**
 * The job's callback token, signed at dispatch with the Worker's own
 * CALLBACK_TOKEN_SECRET: this job, the routes its scopes open (scopes.ts),
 * and an expiry that counts from the moment an engine gets the job (not from
 * submission); every dispatch (a restart after a redeploy included) renews it.
 */
export async function jobToken(env: Env, job: Pick<Job, "id" | "uploadId" | "videoType" | "config" | "videoUrl">, nowMs: number = Date.now()): Promise<string> {
  return signEngineToken(env.CALLBACK_TOKEN_SECRET, job.id, grantedScopes(job), tokenTtlSeconds(env), nowMs);
}

/**
 * Sends a signed StartJob. The engine answers `started: false` for a job it
 * already runs, so a duplicate delivery re-sends safely. Throws
 * EngineMisconfiguredError before sending anything when ENGINE_SIGNING_KEY or
 * CALLBACK_TOKEN_SECRET is unfit, and EngineStartError (classified by fleet/engine-host.ts: the
 * platform's refusals, an engine that cannot be reached, or the engine's own
 * refusal of this job) when no engine accepted it.
 */
export async function startOnEngine(
  env: Env,
  job: Job,
  times: { dispatchedAt: number; grantedAt?: number } = { dispatchedAt: Date.now() },
): Promise<StartJobAccepted> {
  const problem = engineConfigProblem(env);
  if (problem) throw new EngineMisconfiguredError(problem);
  const token = await jobToken(env, job);
  const body: StartJobBody = StartJob.parse({
    job_id: job.id,
    token,
    video_url: job.videoUrl,
    source: job.uploadId !== null ? "upload" : "url",
    video_type: job.videoType,
    config: job.config,
    limits: engineLimits(env),
    captions_url: job.captionsUrl,
    // Handed back in the complete report, for the completion log line's queued and dispatch stages.
    timeline: {
      submitted_at: Date.parse(job.createdAt),
      dispatched_at: times.dispatchedAt,
      ...(times.grantedAt !== undefined ? { granted_at: times.grantedAt } : {}),
      sent_at: Date.now(),
    },
    time_range: job.timeRange ?? null,
  });
  let response: Response;
  try {
    response = await engineHosts.select(env).start(job.id, "/jobs", JSON.stringify(body), START_TIMEOUT_MS);
  } catch (err) {
    throw new EngineStartError("unreachable", `engine unreachable: ${err instanceof Error ? err.message : String(err)}`);
  }
  if (!response.ok) throw classifyStartAnswer(response.status, await response.text().catch(() => ""));
  const accepted = StartJobAccepted.safeParse(await response.json().catch(() => null));
  if (!accepted.success) throw new EngineStartError("engine_error", "engine answered StartJob with an unexpected body");
  return accepted.data;
}
