/**
 * What the engine channel's sub-routes share (speech-channel.ts,
 * brand-channel.ts): mounted inside `callbacks`, whose token middleware has
 * checked the job token, they take the job from its account's Durable Object
 * and re-arm the watchdog on signs of life.
 */
import type { Context } from "hono";
import { createMiddleware } from "hono/factory";
import type { Job } from "../db/jobs.ts";
import { keepEngineAwake } from "../fleet/engine-host.ts";
import type { AppEnv } from "../http/app-env.ts";
import { DomainError } from "../domain/errors.ts";
import { liveProcessingJob } from "./live-job.ts";

export interface ChannelEnv {
  Bindings: Env;
  Variables: AppEnv["Variables"] & { job?: Job };
}

/** The job must be processing (409 job_not_active otherwise); the parent checked the token already. */
export const liveJob = createMiddleware<ChannelEnv>(async (c, next) => {
  c.set("job", await liveProcessingJob(c.env, c.req.param("job_id") ?? "", null));
  await next();
});

export function jobOf(c: Context<ChannelEnv>): Job {
  const job = c.get("job");
  if (!job) throw new DomainError("unauthorized", "A valid engine token for this job is required.");
  return job;
}

/** Like every other report, a model call re-arms the watchdog (in the Durable Object) and keeps the engine's container awake. */
export async function noteSignOfLife(env: Env, job: Job): Promise<void> {
  await liveProcessingJob(env, job.id, {});
  await keepEngineAwake(env, job.id);
}
