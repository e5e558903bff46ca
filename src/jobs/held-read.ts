/**
 * GET /api/v1/jobs/:job_id with `Prefer: wait=N`: the read is held until
 * the job ends or N seconds pass, then answers the job as it is then. The
 * account's Durable Object holds it (AccountState.waitForEnd, woken by
 * jobEnded once the end is committed to D1), so the Worker spends no CPU
 * while it waits, and the read after the wait comes back with that call:
 * the request counts once, at its admission.
 *
 * The wait is a preference: when the object cannot hold the read (too many
 * held, a failed or reset call, e.g. a deploy) the job is answered as it is
 * now, without Preference-Applied, never as an error.
 */
import type { LiveJobView } from "../account/live-jobs.ts";
import { accountState } from "../account/stub.ts";
import { ACTIVE_STATUSES, type JobStatus } from "../db/jobs.ts";
import { readJob, type PresentedJob, type ReadScope } from "./read-path.ts";

/** Beyond the wait itself, how long the Worker gives the object's answer before reading the job itself. */
const ANSWER_GRACE_MS = 5_000;

export interface HeldAnswer {
  job: PresentedJob;
  /** The seconds honoured (for Preference-Applied), or null when the read was not held. */
  appliedSeconds: number | null;
}

function isFinal(status: JobStatus): boolean {
  return !ACTIVE_STATUSES.includes(status);
}

/**
 * Holds until the job ends or `waitSeconds` pass, in the account's Durable
 * Object: its answer (held: whether the object held the wait), or null when
 * it failed or did not come within the wait and its grace. Also the
 * dashboard's job page status read (dashboard/pages/jobs.tsx).
 */
export async function holdUntilEnd(env: Env, accountId: string, jobId: string, waitSeconds: number): Promise<{ held: boolean; view: LiveJobView } | null> {
  let giveUp: (value: null) => void = () => undefined;
  const late = new Promise<null>((resolve) => (giveUp = resolve));
  const timer = setTimeout(() => giveUp(null), waitSeconds * 1000 + ANSWER_GRACE_MS);
  try {
    const call = accountState(env, accountId).waitForEnd(jobId, env.CDN_URL, waitSeconds * 1000);
    return await Promise.race([call, late]);
  } catch (err) {
    console.warn(`holding the read of ${jobId} failed; answering it as it is`, err);
    return null;
  } finally {
    clearTimeout(timer);
  }
}

/**
 * The job after waiting up to `waitSeconds` for its end. `view` is what the
 * admission brought back (rate-limit.ts). A job already final, unknown or
 * another account's answers at once (the last two as 404, like any read).
 */
export async function readJobHeld(scope: ReadScope, jobId: string, view: LiveJobView | undefined, waitSeconds: number): Promise<HeldAnswer> {
  // An active view needs no first read: the wait starts at once.
  if (view?.kind !== "active") {
    const now = await readJob(scope, jobId, view);
    if (isFinal(now.status)) return { job: now, appliedSeconds: waitSeconds };
  }
  const held = await holdUntilEnd(scope.env, scope.accountId, jobId, waitSeconds);
  if (held === null) return { job: await readJob(scope, jobId, await currentView(scope, jobId)), appliedSeconds: null };
  return { job: await readJob(scope, jobId, held.view), appliedSeconds: held.held ? waitSeconds : null };
}

/**
 * The job's view after a failed wait: a reset object answers again at once,
 * with the live progress D1 does not have; if it cannot, D1 answers alone.
 */
async function currentView(scope: ReadScope, jobId: string): Promise<LiveJobView | undefined> {
  try {
    return await accountState(scope.env, scope.accountId).liveJob(jobId, scope.env.CDN_URL);
  } catch (err) {
    console.warn(`reading the live state of ${jobId} failed; D1 answers`, err);
    return undefined;
  }
}
