/**
 * A job's objects as a whole, across both buckets (storage.ts says where each
 * lives): what a job's end, a lost completion and DELETE remove. Every
 * function is idempotent, so a retry or the sweep can run it again.
 */
import { listClips } from "../db/clips.ts";
import { findJob, findPublicationKey } from "../db/jobs.ts";
import { abortStagedClips } from "./clip-staging.ts";
import { allPublishedKeys, PUBLISH_BUDGET_MS } from "./publication.ts";
import {
  deleteKeys,
  deletePrefix,
  LEGACY_TRANSCRIPT_PREFIX,
  legacyJobPrefix,
  privateBucket,
  stagingPrefix,
  TRANSCRIPT_CONTENT_TYPE,
  transcriptKey,
} from "./storage.ts";

/**
 * A completion that lost to the job's end may still be copying (up to its
 * budget) after that end's clean-up ran: the clean-up is repeated until
 * this long after the end, so nothing it copied stays behind.
 */
export const PUBLISH_RACE_MS = PUBLISH_BUDGET_MS + 30_000;

/**
 * The engine's uploads: the clips' incomplete uploads that were not published
 * (clip-staging.ts), and what waits in the private bucket (the markers, and
 * thumbnails and sidecars, which after completion are copies of the published
 * objects).
 */
export async function deleteStaged(env: Env, jobId: string): Promise<void> {
  await abortStagedClips(env, jobId);
  await deletePrefix(privateBucket(env), stagingPrefix(jobId));
}

/**
 * Everything of a job that did not complete: its staged uploads, its
 * transcript, whatever a completion attempt published before it lost, and
 * objects an engine stored under the older layout's keys (by job id, in CLIPS).
 */
export async function deleteUnsuccessfulJobObjects(env: Env, jobId: string, publicationKey: string | null): Promise<void> {
  await deleteStaged(env, jobId);
  await privateBucket(env).delete(transcriptKey(jobId));
  if (publicationKey) await deleteKeys(env.CLIPS, await allPublishedKeys(publicationKey));
  await deletePrefix(env.CLIPS, legacyJobPrefix(jobId));
  await env.CLIPS.delete(transcriptKey(jobId));
}

/**
 * What the end of a job releases in storage: a completed job's staged
 * copies; everything of any other job. "again" when the clean-up must be
 * repeated later (a completion may still be copying: PUBLISH_RACE_MS).
 */
export async function releaseJobObjects(env: Env, job: { id: string; status: string; updatedAt: string }): Promise<"done" | "again"> {
  if (job.status === "completed") {
    await deleteStaged(env, job.id);
    return "done";
  }
  const publicationKey = await findPublicationKey(env.DB, job.id);
  await deleteUnsuccessfulJobObjects(env, job.id, publicationKey);
  return publicationKey !== null && Date.now() - Date.parse(job.updatedAt) < PUBLISH_RACE_MS ? "again" : "done";
}

/** Every object of a finished job, published ones first (DELETE /api/v1/jobs/:id, before its rows go). */
export async function deleteAllJobObjects(env: Env, jobId: string): Promise<void> {
  const [clips, publicationKey] = await Promise.all([listClips(env.DB, jobId), findPublicationKey(env.DB, jobId)]);
  const published = clips.flatMap((clip) => [clip.objectKey, clip.thumbnailKey, clip.vttKey, clip.srtKey]);
  await deleteKeys(env.CLIPS, published.filter((key): key is string => key !== null));
  await deleteUnsuccessfulJobObjects(env, jobId, publicationKey);
}

/**
 * The sweep: transcripts stored in the public bucket under the older layout move to
 * the private one (those of deleted jobs are simply deleted), a page at a
 * time; how many left the public bucket.
 */
export async function moveLegacyTranscripts(env: Env, limit: number): Promise<number> {
  const page = await env.CLIPS.list({ prefix: LEGACY_TRANSCRIPT_PREFIX, limit });
  for (const object of page.objects) {
    const jobId = object.key.slice(LEGACY_TRANSCRIPT_PREFIX.length).replace(/\.json$/, "");
    const [job, moved] = await Promise.all([findJob(env.DB, jobId), privateBucket(env).head(object.key)]);
    if (job && !moved) {
      const body = await env.CLIPS.get(object.key);
      if (body) await privateBucket(env).put(object.key, body.body, { httpMetadata: { contentType: TRANSCRIPT_CONTENT_TYPE } });
    }
    await env.CLIPS.delete(object.key);
  }
  return page.objects.length;
}
