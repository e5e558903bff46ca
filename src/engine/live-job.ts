/**
 * The job as the engine's routes see it, from the account's Durable Object
 * (src/account/live-jobs.ts) rather than D1. Reports on the hot path
 * (progress, heartbeats, uploads, speech) are recorded there only, with the
 * watchdog's deadline, in one call and with no D1 write; routes that only
 * need the job (the upload source, the speech routes' checks) read it there.
 *
 * D1 is read only when this isolate does not know the job's account yet, or
 * the Durable Object does not hold the job as processing (it ended, or the
 * object missed a transition): D1, the durable record, then decides, and
 * repairs the object when the job is in fact processing.
 */
import type { Report } from "../account/live-jobs.ts";
import { accountState } from "../account/stub.ts";
import { findJob, type Job } from "../db/jobs.ts";
import { DomainError } from "../domain/errors.ts";
import { silenceTimeoutSeconds } from "../settings.ts";
import { knownJobAccount, rememberJobAccount } from "./job-accounts.ts";

export function jobNotActive(jobId: string): DomainError {
  return new DomainError("job_not_active", `Job ${jobId} is no longer processing; stop work on it.`);
}

/** The job from D1 when it is processing there (and its account remembered); else 409 job_not_active. */
export async function processingJobInD1(env: Env, jobId: string): Promise<Job> {
  const job = await findJob(env.DB, jobId);
  if (!job || job.status !== "processing") throw jobNotActive(jobId);
  rememberJobAccount(job.id, job.accountId);
  return job;
}

/**
 * The processing job, live; with `report` it is also recorded as a sign of
 * life (progress and step when given) and the watchdog re-armed. Throws 409
 * job_not_active when the job is not processing.
 */
export async function liveProcessingJob(env: Env, jobId: string, report: Report | null): Promise<Job> {
  let checked: Job | null = null;
  let accountId = knownJobAccount(jobId);
  if (accountId === null) {
    checked = await processingJobInD1(env, jobId);
    accountId = checked.accountId;
  }
  const account = accountState(env, accountId);
  const silence = silenceTimeoutSeconds(env);
  const fromObject = () => (report === null ? account.processingJob(jobId) : account.engineReport(jobId, report, silence));
  const live = await fromObject();
  if (live) return live;
  checked ??= await processingJobInD1(env, jobId);
  // D1 says processing: the object missed the transition (seedJob never revives an ended job).
  await account.seedJob(checked);
  const repaired = await fromObject();
  if (!repaired) throw jobNotActive(jobId);
  return repaired;
}
