/**
 * The sweep (a cron trigger, every minute; see wrangler.toml): finishes what
 * a crash or a failing dependency left after a committed transition. Each
 * part is idempotent, bounded per run, and runs whatever the others did:
 *
 * - ended jobs not yet settled: their releases again (settle.ts), those
 *   least recently tried first, so a job whose releases keep failing takes
 *   its turn and never starves newer ones;
 * - job events still undispatched: dispatched (outbox.ts);
 * - deliveries whose first attempt was never queued: queued again;
 * - transcripts stored in the public bucket under the older layout: moved to the private one;
 * - deleted jobs' publication keys, once no completion attempt can still be
 *   writing: every key they derive deleted (deleted-publications.ts);
 * - clip edits pending longer than EDIT_TIMEOUT_MS since they last moved:
 *   failed with processing_timeout, credits given back (clip-edit/publish.ts).
 *
 * The ages below leave the transition's own attempt time to finish first, so
 * the sweep only takes over what was truly left behind.
 */
import { listUnsettledJobs, markSettleAttempted } from "../db/jobs.ts";
import { dispatchStaleEvents, requeueUnsentDeliveries } from "./outbox.ts";
import { clearDeletedPublications } from "./deleted-publications.ts";
import { moveLegacyTranscripts } from "./job-objects.ts";
import { settleEndedJob } from "./settle.ts";
import { listStaleEdits } from "../db/clip-edits.ts";
import { EDIT_TIMEOUT_MS } from "./clip-edit/dispatch.ts";
import { failEditAndClean } from "./clip-edit/publish.ts";

/** An ended job unsettled this long had its own releases fail or crash. */
export const SETTLE_AFTER_MS = 30_000;
/** Ended jobs unsettled longer than this are left alone (and logged): something needs an operator. */
export const SETTLE_GIVE_UP_MS = 24 * 3600_000;
/** Longer than a StartJob may take (30 s): a job.processing event is dispatched only after the engine took the job. */
export const DISPATCH_AFTER_MS = 60_000;
/** A first attempt not made this long after it was due: its queue message was lost. */
export const REQUEUE_AFTER_MS = 5 * 60_000;
/** Rows each part of a run handles at most. */
export const SWEEP_BATCH = 50;

export interface SweepReport {
  settled: number;
  unsettled: number;
  dispatched: number;
  requeued: number;
  movedTranscripts: number;
  clearedPublications: number;
  failedEdits: number;
  failures: string[];
}

export async function runSweep(env: Env, nowMs: number = Date.now(), batch: number = SWEEP_BATCH): Promise<SweepReport> {
  const report: SweepReport = { settled: 0, unsettled: 0, dispatched: 0, requeued: 0, movedTranscripts: 0, clearedPublications: 0, failedEdits: 0, failures: [] };
  const at = (offsetMs: number) => new Date(nowMs - offsetMs).toISOString();
  const part = async (name: string, work: () => Promise<void>) => {
    try {
      await work();
    } catch (err) {
      report.failures.push(name);
      console.error(`sweep: ${name} failed`, err);
    }
  };
  await part("settling ended jobs", async () => {
    const jobs = await listUnsettledJobs(env.DB, at(SETTLE_GIVE_UP_MS), at(SETTLE_AFTER_MS), batch);
    // Before trying: a job whose releases crash the run also goes to the back.
    await markSettleAttempted(env.DB, jobs.map((job) => job.id), new Date(nowMs).toISOString());
    for (const job of jobs) {
      if (await settleEndedJob(env, job, { engineReported: false })) report.settled += 1;
      else report.unsettled += 1;
    }
  });
  await part("dispatching events", async () => {
    report.dispatched = await dispatchStaleEvents(env, at(DISPATCH_AFTER_MS), batch);
  });
  await part("queueing unsent deliveries", async () => {
    report.requeued = await requeueUnsentDeliveries(env, at(REQUEUE_AFTER_MS), new Date(nowMs).toISOString(), batch);
  });
  await part("moving old transcripts to the private bucket", async () => {
    report.movedTranscripts = await moveLegacyTranscripts(env, batch);
  });
  await part("clearing deleted jobs' publications", async () => {
    report.clearedPublications = await clearDeletedPublications(env, nowMs, batch);
  });
  await part("failing stale clip edits", async () => {
    for (const edit of await listStaleEdits(env.DB, at(EDIT_TIMEOUT_MS), batch)) {
      const message = "The clip's render did not finish in time; the published version stays and nothing was charged.";
      if (await failEditAndClean(env, edit, { code: "processing_timeout", message })) report.failedEdits += 1;
    }
  });
  return report;
}
