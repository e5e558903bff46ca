/**
 * GET /api/v1/jobs/:job_id without D1 on the hot path. The rate-limit
 * middleware's call to the account's Durable Object (which counts the
 * request) also brings back the job's view (AccountState.admit), so:
 *
 * - an active job answers from its live state there; a queued one also asks
 *   the fleet's Durable Object for its place in line (no D1 either: the place
 *   moves with every grant anywhere in the fleet, so only the fleet knows it);
 * - a finished job answers from the presented JSON cached there by an earlier
 *   read (a finished job no longer changes; deleting it drops the entry);
 * - otherwise (first read of a finished job, a job the object does not know,
 *   another account's job, no such job) D1 answers, and a finished job's
 *   JSON is cached for the next reads.
 */
import type { LiveJobView } from "../account/live-jobs.ts";
import { accountState } from "../account/stub.ts";
import { listClips } from "../db/clips.ts";
import { ACTIVE_STATUSES, findAccountJob, type Job } from "../db/jobs.ts";
import { withQueuePosition } from "../fleet/queue-position.ts";
import { DomainError } from "../domain/errors.ts";
import { isJobId } from "./ids.ts";
import { presentJob } from "./present.ts";

const JOB_PATH = /^\/api\/v1\/jobs\/([^/]+)$/;

/** The job id when this request is a job read the Durable Object can answer; else null. */
export function jobReadTarget(method: string, path: string): string | null {
  if (method !== "GET") return null;
  const id = JOB_PATH.exec(path)?.[1];
  return id !== undefined && isJobId(id) ? id : null;
}

/** What GET /api/v1/jobs/:job_id answers. */
export type PresentedJob = ReturnType<typeof presentJob>;

/** Who reads, and where work that may outlive the answer goes (the request's waitUntil). */
export interface ReadScope {
  env: Env;
  accountId: string;
  waitUntil: (work: Promise<unknown>) => void;
}

/**
 * The job's presented JSON, from the account's Durable Object where it can be,
 * else from D1. `view` is what the Durable Object holds for the job: the REST
 * read gets it with its admission (rate-limit.ts), other callers ask for it
 * (accountState(...).liveJob); undefined when nobody asked.
 */
export async function readJob(scope: ReadScope, jobId: string, view: LiveJobView | undefined): Promise<PresentedJob> {
  const { env, accountId } = scope;
  const cdnBase = env.CDN_URL;
  // Written by JSON.stringify(presentJob(...)) below on an earlier read.
  if (view?.kind === "finished") return JSON.parse(view.json) as PresentedJob;
  if (view?.kind === "active") return presentJob(cdnBase, await withQueuePosition(env, view.job), []);

  const job = isJobId(jobId) ? await findAccountJob(env.DB, accountId, jobId) : null;
  if (!job) throw new DomainError("not_found", `No job ${jobId}.`);
  const account = accountState(env, accountId);
  if (ACTIVE_STATUSES.includes(job.status)) {
    // The Durable Object missed this job (e.g. accepted before it kept live state): repair it.
    scope.waitUntil(account.seedJob(job).catch((err: unknown) => console.warn(`seeding ${jobId} failed`, err)));
    return presentJob(cdnBase, await withQueuePosition(env, job), []);
  }
  const clips = job.status === "completed" ? await listClips(env.DB, job.id) : [];
  const presented = presentJob(cdnBase, job, clips);
  const json = JSON.stringify(presented);
  scope.waitUntil(account.cacheFinishedJob(job.id, cdnBase, json).catch((err: unknown) => console.warn(`caching ${jobId} failed`, err)));
  return presented;
}

/**
 * Jobs read from D1 (lists, the dashboard) with the live progress, step and
 * report time of the active ones from the account's Durable Object: D1 holds
 * those as of the last transition only. One call for the whole list, none
 * when nothing in it is active; on failure the D1 rows stand.
 */
export async function withLiveStates(env: Env, accountId: string, jobs: Job[]): Promise<Job[]> {
  const active = jobs.filter((job) => ACTIVE_STATUSES.includes(job.status)).map((job) => job.id);
  if (active.length === 0) return jobs;
  try {
    const live = new Map((await accountState(env, accountId).liveActiveJobs(active)).map((job) => [job.id, job]));
    // A status that differs is a transition in flight (D1 moves first): the D1 row stands.
    return jobs.map((job) => {
      const current = live.get(job.id);
      return current && current.status === job.status ? current : job;
    });
  } catch (err) {
    console.warn(`reading the live state of ${active.length} jobs failed`, err);
    return jobs;
  }
}

export async function withLiveState(env: Env, job: Job): Promise<Job> {
  const [live] = await withLiveStates(env, job.accountId, [job]);
  return live ?? job;
}
