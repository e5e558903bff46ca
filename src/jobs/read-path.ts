/**
 * GET /api/v1/jobs/:job_id without D1 on the hot path. The rate-limit
 * middleware's call to the account's Durable Object (which counts the
 * request) also brings back the job's view (AccountState.admit), so:
 *
 * - an active job answers from its live state there (a queued one also asks
 *   the fleet for its place in line, as before);
 * - a finished job answers from the presented JSON cached there by an earlier
 *   read (a finished job no longer changes; deleting it drops the entry);
 * - otherwise (first read of a finished job, a job the object does not know,
 *   another account's job, no such job) D1 answers, and a finished job's
 *   JSON is cached for the next reads.
 */
import type { Context } from "hono";
import type { LiveJobView } from "../account/live-jobs";
import { accountState } from "../account/stub";
import { listClips } from "../db/clips";
import { ACTIVE_STATUSES, findAccountJob } from "../db/jobs";
import { withQueuePosition } from "../fleet/queue-position";
import type { AppEnv } from "../http/app-env";
import { AppError } from "../http/errors";
import { isJobId } from "./ids";
import { presentJob } from "./present";

const JOB_PATH = /^\/api\/v1\/jobs\/([^/]+)$/;

/** The job id when this request is a job read the Durable Object can answer; else null. */
export function jobReadTarget(method: string, path: string): string | null {
  if (method !== "GET") return null;
  const id = JOB_PATH.exec(path)?.[1];
  return id !== undefined && isJobId(id) ? id : null;
}

function jsonResponse(c: Context<AppEnv>, json: string): Response {
  return c.body(json, 200, { "Content-Type": "application/json" });
}

export async function answerJobRead(c: Context<AppEnv>, jobId: string): Promise<Response> {
  const cdnBase = c.env.CDN_URL;
  const view: LiveJobView | undefined = c.get("liveJob");
  if (view?.kind === "finished") return jsonResponse(c, view.json);
  if (view?.kind === "active") {
    const job = await withQueuePosition(c.env, view.job);
    return c.json(presentJob(cdnBase, job, []));
  }

  const { accountId } = c.get("auth");
  const job = isJobId(jobId) ? await findAccountJob(c.env.DB, accountId, jobId) : null;
  if (!job) throw new AppError("not_found", `No job ${jobId}.`);
  const account = accountState(c.env, accountId);
  if (ACTIVE_STATUSES.includes(job.status)) {
    // The Durable Object missed this job (e.g. accepted before it kept live state): repair it.
    c.executionCtx.waitUntil(account.seedJob(job).catch((err: unknown) => console.warn(`seeding ${jobId} failed`, err)));
    return c.json(presentJob(cdnBase, await withQueuePosition(c.env, job), []));
  }
  const clips = job.status === "completed" ? await listClips(c.env.DB, job.id) : [];
  const json = JSON.stringify(presentJob(cdnBase, job, clips));
  c.executionCtx.waitUntil(
    account.cacheFinishedJob(job.id, cdnBase, json).catch((err: unknown) => console.warn(`caching ${jobId} failed`, err)),
  );
  return jsonResponse(c, json);
}
