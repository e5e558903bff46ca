/**
 * What a completion attempt that will not commit does with what it published.
 *
 * Every attempt of one job publishes under the same keys (publication.ts: one
 * publication key per job), so an attempt that lost, or stopped before its D1
 * batch, cannot simply delete what it wrote: a completion that won may have
 * published, and now serves, the very same objects. The decision is taken
 * after the attempt's last write, from the job as D1 has it then:
 *
 * - still processing: nothing is removed. The next attempt goes on from here,
 *   and an end committed later cleans up after it (its clean-up runs after
 *   this attempt's writes, so it finds them).
 * - completed (by another attempt): only keys its clip rows do not name are
 *   removed (a different report's extra clips); the winner's stay.
 * - failed or canceled: everything this attempt published is removed (the
 *   end's own clean-up does the same, repeated for a while: job-objects.ts).
 * - gone (deleted after a cancel): everything is removed. No row is left for
 *   the sweep to find, so this attempt is the last one that knows the keys.
 */
import { listClips } from "../db/clips.ts";
import { findJob, type JobStatus } from "../db/jobs.ts";
import type { PublishedClip } from "./publication.ts";
import { deleteKeys } from "./storage.ts";

/** Every object key of these clips. */
export function keysOf(clips: readonly Pick<PublishedClip, "clip" | "thumbnail" | "vtt" | "srt">[]): string[] {
  return clips.flatMap((clip) => [clip.clip, clip.thumbnail, clip.vtt, clip.srt]).filter((key): key is string => key !== null);
}

/**
 * Removes what this attempt published that the job as it now stands does not
 * name; answers that status (null: the job is gone). Never throws for the
 * removal itself: a failure is logged (an ended job's clean-up repeats it).
 */
export async function dropUnclaimedPublication(env: Env, jobId: string, published: readonly PublishedClip[]): Promise<JobStatus | null> {
  const job = await findJob(env.DB, jobId);
  const status = job?.status ?? null;
  if (status === "processing" || status === "queued") return status;
  const named = new Set<string>();
  if (status === "completed") {
    for (const clip of await listClips(env.DB, jobId)) {
      for (const key of [clip.objectKey, clip.thumbnailKey, clip.vttKey, clip.srtKey]) if (key !== null) named.add(key);
    }
  }
  const unclaimed = keysOf(published).filter((key) => !named.has(key));
  try {
    await deleteKeys(env.CLIPS, unclaimed);
  } catch (err) {
    console.error(`removing what an unfinished completion of ${jobId} published failed`, err);
  }
  return status;
}
