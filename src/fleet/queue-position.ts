/**
 * The honest step of a job that waits for an engine. A queued job's place in
 * line changes with every grant, so it is read from the fleet when the job is
 * read, not written to D1 on every change.
 */
import type { Job } from "../db/jobs";
import { fleetScheduler } from "./stub";

export function waitingStep(position: number): string {
  return `Waiting for a free engine (position ${position})`;
}

/** The job with its waiting position in `step` when it is queued in the fleet's line. */
export async function withQueuePosition(env: Env, job: Job): Promise<Job> {
  if (job.status !== "queued") return job;
  try {
    const position = await fleetScheduler(env).position(job.id);
    return position === null ? job : { ...job, step: waitingStep(position) };
  } catch (err) {
    console.warn(`reading the queue position of ${job.id} failed`, err);
    return job;
  }
}
