/**
 * What a job's end releases, done after the end's D1 batch committed: the
 * account's slot, deadline and live state; the fleet's capacity (and the
 * dispatch of whoever gets it); the uploaded source (kept for edits after a
 * completion, uploads/kept-source.ts); the engine; the job's
 * unpublished objects. Every release is idempotent and runs whatever the
 * others did; only when all succeeded is the job marked settled. A job left
 * unsettled (a release threw, the Worker died) is settled again by the next
 * attempt of its transition (a retried callback, the account's alarm) or by
 * the sweep (src/jobs/sweep.ts). Settling never throws.
 */
import { accountState } from "../account/stub.ts";
import { markSettled, type Job } from "../db/jobs.ts";
import { stopEngine } from "../fleet/engine-host.ts";
import { releaseCapacity } from "../fleet/capacity.ts";
import { settleJobUpload } from "../uploads/job-source.ts";
import { releaseJobObjects } from "./job-objects.ts";

export interface SettleOptions {
  /** The engine itself reported the end (or never got the job): a shared engine process has nothing to stop. */
  engineReported: boolean;
}

type EndedJob = Pick<Job, "id" | "accountId" | "status" | "uploadId" | "updatedAt">;

/**
 * The releases of an ended job, by name (the name is what a failure log
 * says). One that answers "again" succeeded but must run once more later.
 */
function releases(env: Env, job: EndedJob, options: SettleOptions): [string, () => Promise<unknown>][] {
  return [
    ["account slot", () => accountState(env, job.accountId).jobEnded(job.id)],
    ["fleet capacity", () => releaseCapacity(env, job.id)],
    ["uploaded source", () => (job.uploadId ? settleJobUpload(env, job, job.uploadId) : Promise.resolve())],
    ["engine", () => stopEngine(env, job.id, options.engineReported)],
    ["unpublished objects", () => releaseJobObjects(env, job)],
  ];
}

/** Releases everything the ended job held; true when all of it is released (and recorded so). */
export async function settleEndedJob(env: Env, job: EndedJob, options: SettleOptions): Promise<boolean> {
  let failed = 0;
  for (const [what, release] of releases(env, job, options)) {
    try {
      if ((await release()) === "again") failed += 1;
    } catch (err) {
      failed += 1;
      console.error(`releasing the ${what} of ${job.id} failed; it is redone later`, err);
    }
  }
  if (failed > 0) return false;
  try {
    await markSettled(env.DB, job.id, new Date().toISOString());
    return true;
  } catch (err) {
    console.error(`recording ${job.id} as settled failed`, err);
    return false;
  }
}
