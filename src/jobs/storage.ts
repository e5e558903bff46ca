/**
 * Where a job's files live in R2. Keys are deterministic per (job, clip index),
 * so an engine retry overwrites an upload instead of adding a second copy.
 */

export const CLIP_CONTENT_TYPE = "video/mp4";
export const THUMBNAIL_CONTENT_TYPE = "image/jpeg";
/**
 * How long any cache (the R2 custom domain's edge, a browser) may keep a clip
 * without asking again. Keys never change content, but DELETE must take effect:
 * a cached copy is used at most this long, then revalidated (a cheap 304 with
 * the ETag while the object exists, a 404 once it is deleted). must-revalidate
 * forbids serving a stale copy past it, even when the origin is unreachable.
 */
export const CLIP_CACHE_SECONDS = 300;
export const CLIP_CACHE_CONTROL = `public, max-age=${CLIP_CACHE_SECONDS}, must-revalidate`;
export const VTT_CONTENT_TYPE = "text/vtt; charset=utf-8";
export const SRT_CONTENT_TYPE = "application/x-subrip; charset=utf-8";
export const TRANSCRIPT_CONTENT_TYPE = "application/json; charset=utf-8";

export function jobPrefix(jobId: string): string {
  return `clips/${jobId}/`;
}

export function clipKey(jobId: string, index: number): string {
  return `${jobPrefix(jobId)}${index}.mp4`;
}

export function thumbnailKey(jobId: string, index: number): string {
  return `${jobPrefix(jobId)}${index}.jpg`;
}

export type CaptionFormat = "vtt" | "srt";

/** A clip's sidecar captions, timed from the clip's start. */
export function captionsKey(jobId: string, index: number, format: CaptionFormat): string {
  return `${jobPrefix(jobId)}${index}.${format}`;
}

/** The job's whole transcript (words and sentences), read by GET /api/v1/jobs/:id/transcript. */
export function transcriptKey(jobId: string): string {
  return `transcripts/${jobId}.json`;
}

/** Public URL of an object under CDN_URL. */
export function cdnUrl(cdnBase: string, key: string): string {
  return `${cdnBase.replace(/\/+$/, "")}/${key}`;
}

/**
 * Deletes every object of a job (partial uploads included): the clips prefix
 * page by page, then the transcript by its exact key (a delete of a missing
 * key is a no-op, and cheaper than listing a second prefix).
 */
export async function deleteJobObjects(bucket: R2Bucket, jobId: string): Promise<number> {
  let deleted = 0;
  let cursor: string | undefined;
  do {
    const page = await bucket.list({ prefix: jobPrefix(jobId), cursor });
    const keys = page.objects.map((o) => o.key);
    if (keys.length > 0) await bucket.delete(keys);
    deleted += keys.length;
    cursor = page.truncated ? page.cursor : undefined;
  } while (cursor);
  await bucket.delete(transcriptKey(jobId));
  return deleted;
}

/**
 * The job's objects that are not (or must not stay) public once it ended:
 * everything of a job that did not complete. A completed job keeps its
 * clips and transcript. Idempotent.
 */
export async function deleteUnpublishedObjects(env: Env, jobId: string, completed: boolean): Promise<void> {
  if (!completed) await deleteJobObjects(env.CLIPS, jobId);
}
