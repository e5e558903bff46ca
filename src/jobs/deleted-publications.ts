/**
 * The last clean-up of a deleted job's public objects. A completion attempt
 * still writing when its job was deleted removes what it wrote itself once it
 * finds the job gone (unclaimed-publication.ts); if its Worker stopped before
 * that check, nothing would ever name those objects again. So DELETE keeps
 * the job's publication key (db/deleted-publications.ts), and once every
 * attempt that may have been running is over (PUBLISH_RACE_MS after the
 * deletion) the sweep deletes every key that publication key derives, then
 * the record.
 */
import { forgetDeletedPublication, listDeletedPublications } from "../db/deleted-publications.ts";
import { PUBLISH_RACE_MS } from "./job-objects.ts";
import { allPublishedKeys } from "./publication.ts";
import { deleteKeys } from "./storage.ts";

/** One sweep's share: how many deleted jobs' keys were cleared. */
export async function clearDeletedPublications(env: Env, nowMs: number, limit: number): Promise<number> {
  const due = await listDeletedPublications(env.DB, new Date(nowMs - PUBLISH_RACE_MS).toISOString(), limit);
  for (const { publicationKey } of due) {
    await deleteKeys(env.CLIPS, await allPublishedKeys(publicationKey));
    await forgetDeletedPublication(env.DB, publicationKey);
  }
  return due.length;
}
