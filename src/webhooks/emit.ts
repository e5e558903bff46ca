/**
 * The one entry point job transitions call: `emitJobEvent(env, accountId,
 * jobId, "job.completed")`. It never throws, so a webhook problem can never
 * undo or block a transition; failures are logged. With no subscribed
 * endpoint it costs one indexed D1 read.
 */
import { listClips } from "../db/clips";
import { findAccountJob } from "../db/jobs";
import { listEnabledEndpoints } from "../db/webhooks";
import { presentJob } from "../jobs/present";
import { subscribes, type JobEventType } from "./events";
import { publishEvent } from "./publish";

export async function emitJobEvent(env: Env, accountId: string, jobId: string, type: JobEventType): Promise<void> {
  try {
    const endpoints = (await listEnabledEndpoints(env.DB, accountId)).filter((endpoint) => subscribes(endpoint.events, type));
    if (endpoints.length === 0) return;
    const job = await findAccountJob(env.DB, accountId, jobId);
    if (!job) return;
    const clips = job.status === "completed" ? await listClips(env.DB, jobId) : [];
    // When the transition happened, as the job records it: a late emit still reports the true order.
    const recorded = type === "job.queued" ? job.createdAt : type === "job.processing" ? null : job.completedAt;
    const timestamp = recorded ?? new Date().toISOString();
    await publishEvent(env, accountId, { type, timestamp, data: presentJob(env.CDN_URL, job, clips) }, endpoints);
  } catch (err) {
    console.error(`webhook event ${type} for ${jobId} was not sent`, err);
  }
}
