/**
 * What the rest of the Worker asks of the fleet, each call followed by the
 * dispatch of whatever it granted: give a job's engine (or place in line)
 * back, put an interrupted job back at the head of the line, make sure a
 * queued job is in line. The job lifecycle calls these after its D1
 * transitions; none of them changes a job's status.
 */
import { sendDispatches } from "./fleet-scheduler.ts";
import { fleetLimits } from "./limits.ts";
import { fleetScheduler } from "./stub.ts";

/** The job ended or left the queue: its engine (or place in line) goes back to the fleet. */
export async function releaseCapacity(env: Env, jobId: string, options: { noInstance?: boolean } = {}): Promise<void> {
  const grants = await fleetScheduler(env).release(jobId, fleetLimits(env), options);
  await sendDispatches(env, grants);
}

/** The job's engine was stopped under it: back to the head of the line. */
export async function requeueInFleet(env: Env, jobId: string, accountId: string): Promise<void> {
  const grants = await fleetScheduler(env).requeue(jobId, accountId, fleetLimits(env));
  await sendDispatches(env, grants);
}
