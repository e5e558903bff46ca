/**
 * An account's jobs as callers see them (the REST routes and the MCP tools):
 * a page of the list, and cancelling one. Submission is submit-request.ts,
 * a single read read-path.ts.
 */
import { listClipsOfJobs } from "../db/clips.ts";
import { ACTIVE_STATUSES, findAccountJob, listJobs, type Job, type JobStatus } from "../db/jobs.ts";
import { DomainError } from "../domain/errors.ts";
import { decodeCursor, encodeCursor } from "./cursor.ts";
import { isJobId } from "./ids.ts";
import { cancelJob } from "./lifecycle.ts";
import { presentJob, presentListItem } from "./present.ts";
import { withLiveStates } from "./read-path.ts";

export function jobNotFound(jobId: string): DomainError {
  return new DomainError("not_found", `No job ${jobId}.`);
}

/** The account's job by id; any id that is not one of its jobs is not_found. */
export async function loadOwnJob(db: D1Database, accountId: string, jobId: string): Promise<Job> {
  const job = isJobId(jobId) ? await findAccountJob(db, accountId, jobId) : null;
  if (!job) throw jobNotFound(jobId);
  return job;
}

export interface JobListRequest {
  /** null: every status. */
  status: JobStatus | null;
  limit: number;
  cursor?: string;
}

/** A page of the account's jobs, newest first, active ones with their live progress. */
export async function listJobPage(env: Env, accountId: string, request: JobListRequest) {
  const after = request.cursor === undefined ? null : decodeCursor(request.cursor);
  if (request.cursor !== undefined && after === null) {
    throw new DomainError("invalid_request", "cursor is not a cursor this API issued.", {
      errors: [{ path: "cursor", message: "unrecognised cursor" }],
    });
  }
  const rows = await listJobs(env.DB, { accountId, status: request.status, limit: request.limit + 1, after });
  const page = await withLiveStates(env, accountId, rows.slice(0, request.limit));
  const last = page.at(-1);
  const clipsByJob = await listClipsOfJobs(
    env.DB,
    page.filter((job) => job.status === "completed").map((job) => job.id),
  );
  const items = page.map((job) => presentListItem(env.CDN_URL, job, clipsByJob.get(job.id) ?? []));
  return {
    jobs: items,
    count: items.length,
    next_cursor: rows.length > request.limit && last ? encodeCursor({ createdAt: last.createdAt, id: last.id }) : null,
  };
}

/** Cancels a queued or processing job and answers it as it now stands (canceled). */
export async function cancelOwnJob(env: Env, accountId: string, jobId: string) {
  const job = await loadOwnJob(env.DB, accountId, jobId);
  if (!ACTIVE_STATUSES.includes(job.status)) {
    throw new DomainError("job_not_cancelable", `Job ${job.id} is ${job.status}; only queued or processing jobs can be canceled.`);
  }
  await cancelJob(env, job);
  // Whoever won the race, answer with the job as it now stands.
  const current = await loadOwnJob(env.DB, accountId, job.id);
  if (current.status !== "canceled") {
    throw new DomainError("job_not_cancelable", `Job ${job.id} is ${current.status}; it finished before the cancel.`);
  }
  return presentJob(env.CDN_URL, current, []);
}
