/**
 * Repairs for jobs whose follow-up after a transition was lost (a Durable
 * Object call that threw during a deploy, an engine report that never
 * arrived). The job lifecycle asks these when a deadline passes, before it
 * fails anyone:
 *
 * - a queued job is overdue only by its own queue deadline (queued_since +
 *   MAX_QUEUE_SECONDS), never by a deadline its account's object kept from
 *   before it went back to the queue; such a job gets its live state and its
 *   place in line back instead;
 * - a processing job whose engine instance is gone, or runs without
 *   serving it (it got SIGTERM and closed its server), was interrupted (its
 *   `interrupted` report was lost), not silent.
 */
import { accountState } from "../account/stub.ts";
import { queuedSince, type Job } from "../db/jobs.ts";
import { maxQueueSeconds } from "../settings.ts";
import { engineHosts } from "./engine-host.ts";
import { sendDispatches } from "./fleet-scheduler.ts";
import { fleetLimits } from "./limits.ts";
import { fleetScheduler } from "./stub.ts";

/** The job's queue deadline in epoch ms, or null when the job is gone. */
export async function queueDeadlineMs(env: Env, jobId: string): Promise<number | null> {
  const since = await queuedSince(env.DB, jobId);
  return since === null ? null : Date.parse(since) + maxQueueSeconds(env) * 1000;
}

/** Seconds left until the job's queue deadline (at least 1). */
export async function queueSecondsLeft(env: Env, jobId: string): Promise<number> {
  const deadline = await queueDeadlineMs(env, jobId);
  return deadline === null ? 1 : Math.max(1, Math.floor((deadline - Date.now()) / 1000));
}

export async function waitingPastDeadline(env: Env, job: Job): Promise<boolean> {
  const deadline = await queueDeadlineMs(env, job.id);
  return deadline === null || Date.now() >= deadline;
}

/** A queued job the account's object or the fleet lost track of: both learn it again from D1. */
export async function repairQueuedJob(env: Env, job: Job): Promise<void> {
  const account = accountState(env, job.accountId);
  await account.seedJob(job);
  await account.touchWatchdog(job.id, await queueSecondsLeft(env, job.id));
  const grants = await fleetScheduler(env).ensureInLine(job.id, job.accountId, fleetLimits(env));
  await sendDispatches(env, grants);
}

/** True only when the job's instance exited or no longer serves it (a process engine cannot tell: false). */
export async function engineGone(env: Env, jobId: string): Promise<boolean> {
  return (await engineHosts.select(env).serving(jobId)) === "gone";
}
