/**
 * Where a job's objects live (SPEC section 9, docs/architecture.md "Where a job's objects live"):
 *
 * - Private bucket (UPLOADS: never on a domain, no public access):
 *   - `staging/{job_id}/{n}.jpg|.vtt|.srt`: what the engine uploads while
 *     the job runs (clip n's thumbnail and caption sidecars), and
 *     `staging/{job_id}/{n}.mp4`, an empty marker naming clip n's incomplete
 *     upload in the public bucket (clip-staging.ts). Keys are deterministic
 *     per (job, clip, kind), so an engine retry overwrites.
 *   - `transcripts/{job_id}.json`: the whole transcript, served only by the
 *     authenticated API and dashboard; never published.
 *   - `logos/{account_id}/{sha256}-{write id}`: each account's logo
 *     (src/logos/service.ts), read by its owner and by its jobs' engine channel.
 * - Public bucket (CLIPS, served at CDN_URL): `c/{id}/clip.mp4|thumbnail.jpg|
 *   captions.vtt|captions.srt`, published there at completion
 *   (publication.ts), each object under its own unguessable id; until then a
 *   clip is an incomplete multipart upload at its key, which is no object.
 *
 * Before this layout the engine wrote straight into CLIPS at
 * `clips/{job_id}/...` and `transcripts/{job_id}.json`; the "legacy" keys below
 * let deletion and reads find objects of jobs completed then, and the sweep
 * moves old transcripts out of the public bucket.
 */

export const CLIP_CONTENT_TYPE = "video/mp4";
export const THUMBNAIL_CONTENT_TYPE = "image/jpeg";
/**
 * How long any cache (the R2 custom domain's edge, a browser) may keep a clip
 * without asking again. Keys never change content, but DELETE must take effect:
 * a cached copy is used at most this long, then revalidated (a cheap 304 with
 * the ETag while the object exists, a 404 once it is deleted). must-revalidate
 * forbids serving a stale copy past it, even when the origin is unreachable.
 * So a deleted clip may still be served for up to this long from a cache that
 * fetched it before the delete (SPEC section 9).
 */
export const CLIP_CACHE_SECONDS = 300;
export const CLIP_CACHE_CONTROL = `public, max-age=${CLIP_CACHE_SECONDS}, must-revalidate`;
export const VTT_CONTENT_TYPE = "text/vtt; charset=utf-8";
export const SRT_CONTENT_TYPE = "application/x-subrip; charset=utf-8";
export const TRANSCRIPT_CONTENT_TYPE = "application/json; charset=utf-8";

/** The objects the engine uploads per clip. */
export type StagedKind = "clip" | "thumbnail" | "vtt" | "srt";
const STAGED_EXTENSIONS: Record<StagedKind, string> = { clip: "mp4", thumbnail: "jpg", vtt: "vtt", srt: "srt" };

export type CaptionFormat = "vtt" | "srt";

/** A staged object that completion expected is not there. */
export class StagedObjectMissing extends Error {
  override readonly name = "StagedObjectMissing";
}

/** The private bucket that holds staged uploads and transcripts (shared with direct uploads, under its own prefixes). */
export function privateBucket(env: Env): R2Bucket {
  return env.UPLOADS;
}

export function stagingPrefix(jobId: string): string {
  return `staging/${jobId}/`;
}

/** Where the engine's upload of clip `index` (or its thumbnail or sidecar) waits for completion, in the private bucket. */
export function stagedKey(jobId: string, index: number, kind: StagedKind): string {
  return `${stagingPrefix(jobId)}${index}.${STAGED_EXTENSIONS[kind]}`;
}

/** The job's whole transcript (words and sentences), in the private bucket: read by GET /api/v1/jobs/:id/transcript. */
export function transcriptKey(jobId: string): string {
  return `transcripts/${jobId}.json`;
}

/** The older layout: a job's public objects in CLIPS, named by its id. */
export function legacyJobPrefix(jobId: string): string {
  return `clips/${jobId}/`;
}

/** The older layout: a clip's sidecar in CLIPS, next to the clip. */
export function legacyCaptionsKey(jobId: string, index: number, format: CaptionFormat): string {
  return `${legacyJobPrefix(jobId)}${index}.${format}`;
}

/** The older layout kept the transcript in CLIPS, at the key it now has in the private bucket. */
export const LEGACY_TRANSCRIPT_PREFIX = "transcripts/";

/** Public URL of an object under CDN_URL. */
export function cdnUrl(cdnBase: string, key: string): string {
  return `${cdnBase.replace(/\/+$/, "")}/${key}`;
}

/** Deletes every object under `prefix`, page by page; how many. */
export async function deletePrefix(bucket: R2Bucket, prefix: string): Promise<number> {
  let deleted = 0;
  let cursor: string | undefined;
  do {
    const page = await bucket.list({ prefix, cursor });
    const keys = page.objects.map((o) => o.key);
    if (keys.length > 0) await bucket.delete(keys);
    deleted += keys.length;
    cursor = page.truncated ? page.cursor : undefined;
  } while (cursor);
  return deleted;
}

/** R2 deletes at most 1,000 keys per call. */
export async function deleteKeys(bucket: R2Bucket, keys: readonly string[]): Promise<void> {
  for (let i = 0; i < keys.length; i += 1000) {
    const chunk = keys.slice(i, i + 1000);
    if (chunk.length > 0) await bucket.delete([...chunk]);
  }
}
