/**
 * Consumer of the jobs dead-letter queue: a message that exhausted its
 * retries there means its chain could no longer be handled. If that chain is
 * still the job's (the fleet does not have the job running, waiting, or on a
 * newer chain), the job fails cleanly (internal_error, nothing charged) and
 * its slot and capacity are freed, so no account stays stuck on a job nobody
 * will run. A job a later dispatch already started, or one waiting its turn,
 * is left alone: the dead message was an old chain's.
 */
import { findJob } from "../db/jobs.ts";
import { fleetScheduler } from "../fleet/stub.ts";
import { expireOverdueJob, failJob, resettle } from "../jobs/lifecycle.ts";
import { isJobMessage } from "./consumer.ts";

/** The jobs dead-letter queue's name, as in wrangler.toml (the Worker consumes both queues). */
export const JOBS_DEAD_LETTER_QUEUE = "clipjobs-jobs-dlq";

export async function handleDeadLetters(batch: MessageBatch<unknown>, env: Env): Promise<void> {
  for (const message of batch.messages) {
    try {
      if (!isJobMessage(message.body)) {
        message.ack();
        continue;
      }
      const { job_id: jobId, account_id: accountId } = message.body;
      const dispatch = message.body.dispatch ?? 0;
      const job = await findJob(env.DB, jobId);
      if (job && job.accountId === accountId && (job.status === "queued" || job.status === "processing")) {
        const fleet = await fleetScheduler(env).jobState(jobId);
        const superseded = fleet.state === "started" || fleet.state === "waiting" || (fleet.state === "granted" && fleet.dispatch !== dispatch);
        if (!superseded) {
          const failed = await failJob(
            env,
            job,
            ["queued", "processing"],
            { code: "internal_error", message: "The job could not be dispatched to the clip engine; nothing was charged." },
            { engineReported: false },
          );
          if (!failed) await expireOverdueJob(env, accountId, jobId);
        }
      } else if (job) {
        // Ended already: make sure nothing it held stays held.
        await resettle(env, job);
      }
      message.ack();
    } catch (err) {
      console.error(`dead-letter message ${message.id} failed`, err);
      message.retry({ delaySeconds: 60 });
    }
  }
}
