/**
 * The platform's notice that a job's instance exited (ClipEngine.onStop,
 * which @cloudflare/containers calls once the container process is gone).
 * Its slot is free from here, not from the job's end: the fleet grants it
 * again. An instance that exits while its job still held it as running ended
 * without its engine's `interrupted` report reaching us (lost in a deploy):
 * the job is put back in line as that report would have.
 */
import { findJob } from "../db/jobs.ts";
import { requeueAfterInterruption } from "./lifecycle.ts";
import { sendDispatches } from "../fleet/fleet-scheduler.ts";
import { fleetScheduler } from "../fleet/stub.ts";

export async function engineExited(env: Env, jobId: string): Promise<void> {
  const { grants, heldBy } = await fleetScheduler(env).instanceStopped(jobId);
  await sendDispatches(env, grants);
  if (heldBy === null) return;
  const job = await findJob(env.DB, jobId);
  if (job?.status === "processing") await requeueAfterInterruption(env, job);
}
