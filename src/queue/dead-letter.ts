/**
 * Consumer of the jobs dead-letter queue: a message that exhausted its
 * retries there means its job can no longer be started. The job fails
 * cleanly (internal_error, nothing charged) and its slot and capacity are
 * freed, so no account stays stuck on a job nobody will run.
 */
import { findJob } from "../db/jobs";
import { expireOverdueJob, failJob, resettle } from "../jobs/lifecycle";
import { isJobMessage } from "./consumer";

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
      const job = await findJob(env.DB, jobId);
      if (job && job.accountId === accountId && (job.status === "queued" || job.status === "processing")) {
        const failed = await failJob(
          env,
          job,
          ["queued", "processing"],
          { code: "internal_error", message: "The job could not be dispatched to the clip engine; nothing was charged." },
          { engineReported: false },
        );
        if (!failed) await expireOverdueJob(env, accountId, jobId);
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
