/**
 * The honest step of a job that waits for an engine. A queued job's place in
 * line changes with every grant, so it is read from the fleet, not written
 * to D1 on every change; and since every job read would otherwise be a call
 * to the one FleetScheduler, the answer is kept in the location's cache for
 * a time that grows with the place: a job tenth in line sees it refreshed
 * every 5 s, one 20,000th every 2 minutes (its place moves by a few percent
 * in that time). The fleet so gets at most one position call per waiting
 * job per interval per location, however often clients poll.
 */
import type { Job } from "../db/jobs.ts";
import { fleetScheduler } from "./stub.ts";

const CACHE_ORIGIN = "https://fleet-position.clipjobs.internal";

export function waitingStep(position: number): string {
  return `Waiting for a free engine (position ${position})`;
}

/** Seconds a position may be shown before it is read again. */
export function positionTtlSeconds(position: number | null): number {
  return position === null ? 5 : Math.min(120, Math.max(5, Math.floor(position / 10)));
}

async function position(env: Env, jobId: string): Promise<number | null> {
  const key = new Request(`${CACHE_ORIGIN}/${jobId}`);
  const cache = caches.default;
  const hit = await cache.match(key);
  if (hit) return (await hit.json<{ position: number | null }>()).position;
  const fresh = await fleetScheduler(env).position(jobId);
  await cache.put(key, Response.json({ position: fresh }, { headers: { "Cache-Control": `max-age=${positionTtlSeconds(fresh)}` } }));
  return fresh;
}

/** The job with its waiting position in `step` when it is queued in the fleet's line. */
export async function withQueuePosition(env: Env, job: Job): Promise<Job> {
  if (job.status !== "queued") return job;
  try {
    const place = await position(env, job.id);
    return place === null ? job : { ...job, step: waitingStep(place) };
  } catch (err) {
    console.warn(`reading the queue position of ${job.id} failed`, err);
    return job;
  }
}
