/**
 * A clip's video, staged where it will be published, without being readable.
 *
 * The engine's clip upload starts an R2 multipart upload at the clip's
 * published key in the public bucket and writes the body as its only part. A
 * multipart upload that is not completed is no object: no key serves it, no
 * list shows it, the CDN answers 404. Completion (publication.ts, in the step
 * that charges) completes it, which in R2 is a change of metadata, not a copy:
 * a clip of any size is published in milliseconds, where copying it from the
 * private bucket streamed every byte again at the end of the job.
 *
 * What is staged is recorded in the private bucket, at the clip's staged key
 * (storage.ts), as an empty marker whose metadata names the upload: the
 * completion checks and the clean-ups find it there as they find every other
 * staged object. A job that does not complete aborts its uploads (the parts
 * are deleted); an upload whose marker was never written (the Worker stopped
 * between the part and the marker) stays an incomplete upload, unreadable,
 * until the bucket's lifecycle rule aborts it (R2 aborts incomplete
 * multipart uploads after 7 days unless told otherwise).
 *
 * A part may have any size when it is the only one (R2 requires 5 MiB only of
 * parts that are not the last), and up to 5 GiB, far above MAX_CLIP_UPLOAD_BYTES.
 */
import { CLIP_CACHE_CONTROL, CLIP_CONTENT_TYPE, privateBucket, StagedObjectMissing, stagedKey, stagingPrefix } from "./storage.ts";

/** What a clip's marker records (R2 custom metadata: strings). */
interface ClipMarker {
  /** The published key the upload completes at. */
  key: string;
  upload_id: string;
  /** The part's ETag, which completion must name. */
  part_etag: string;
  /** Bytes of the clip. */
  size: string;
  job_id: string;
}

function markerOf(object: R2Object): ClipMarker | null {
  const meta = object.customMetadata ?? {};
  const { key, upload_id, part_etag, size, job_id } = meta;
  if (!key || !upload_id || !part_etag || !size || !job_id) return null;
  return { key, upload_id, part_etag, size, job_id };
}

/** Clip `index`'s marker, when one names an upload. */
async function stagedMarker(env: Env, jobId: string, index: number): Promise<ClipMarker | null> {
  const object = await privateBucket(env).head(stagedKey(jobId, index, "clip"));
  return object ? markerOf(object) : null;
}

/** Aborts an upload, ignoring one that is gone already (completed, aborted). */
async function abortUpload(bucket: R2Bucket, key: string, uploadId: string): Promise<void> {
  try {
    await bucket.resumeMultipartUpload(key, uploadId).abort();
  } catch {
    // Nothing left to abort.
  }
}

/**
 * Stages clip `index` of the job: `body` (exactly `length` bytes) becomes the
 * single part of a multipart upload at `key`, the clip's published key
 * (publication.ts). A clip staged before (an engine retry) is replaced: its
 * upload is aborted once the new marker is written, so a marker never names
 * an aborted upload.
 */
export async function stageClip(env: Env, jobId: string, index: number, key: string, body: ReadableStream<Uint8Array>, length: number): Promise<void> {
  const markerKey = stagedKey(jobId, index, "clip");
  const upload = await env.CLIPS.createMultipartUpload(key, {
    httpMetadata: { contentType: CLIP_CONTENT_TYPE, cacheControl: CLIP_CACHE_CONTROL },
  });
  let part: R2UploadedPart;
  try {
    const sized = new FixedLengthStream(length);
    [, part] = await Promise.all([body.pipeTo(sized.writable), upload.uploadPart(1, sized.readable)]);
  } catch (err) {
    await abortUpload(env.CLIPS, key, upload.uploadId);
    throw err;
  }
  const replaced = await stagedMarker(env, jobId, index);
  const record: ClipMarker = { key, upload_id: upload.uploadId, part_etag: part.etag, size: String(length), job_id: jobId };
  await privateBucket(env).put(markerKey, new Uint8Array(0), { customMetadata: { ...record } });
  if (replaced && replaced.upload_id !== upload.uploadId) await abortUpload(env.CLIPS, replaced.key, replaced.upload_id);
}

/**
 * Publishes staged clip `index` at `key`: completes its upload. Idempotent: an
 * upload completed by an earlier attempt is published already. Throws
 * StagedObjectMissing when nothing is staged for it.
 */
export async function publishStagedClip(env: Env, jobId: string, index: number, key: string): Promise<void> {
  const marker = await stagedMarker(env, jobId, index);
  if (!marker || marker.key !== key) throw new StagedObjectMissing(`${stagedKey(jobId, index, "clip")} is not staged`);
  try {
    await env.CLIPS.resumeMultipartUpload(key, marker.upload_id).complete([{ partNumber: 1, etag: marker.part_etag }]);
  } catch (err) {
    // Completed by an earlier attempt (R2 then knows the upload no more): the object is there.
    const published = await env.CLIPS.head(key);
    if (published && published.size === Number(marker.size)) return;
    // R2 names a missing upload in its message (NoSuchUpload, "The specified multipart upload does not
    // exist"): aborted by a cancel's clean-up, so the caller answers as for any missing staged object.
    // Anything else (a transient R2 failure) goes up as it is, and the engine's retry sends the completion again.
    throw err instanceof Error && /upload/i.test(err.message) ? new StagedObjectMissing(`${stagedKey(jobId, index, "clip")}: ${err.message}`) : err;
  }
}

/**
 * Aborts the uploads of the clips the job staged and did not publish (the
 * markers themselves go with the staging prefix). A published clip's upload is
 * complete already and is left alone: its object is what completion published.
 */
export async function abortStagedClips(env: Env, jobId: string): Promise<void> {
  let cursor: string | undefined;
  do {
    const page = await privateBucket(env).list({ prefix: stagingPrefix(jobId), cursor, include: ["customMetadata"] });
    const markers = page.objects.map(markerOf).filter((marker): marker is ClipMarker => marker !== null);
    await Promise.all(
      markers.map(async (marker) => {
        if (!(await env.CLIPS.head(marker.key))) await abortUpload(env.CLIPS, marker.key, marker.upload_id);
      }),
    );
    cursor = page.truncated ? page.cursor : undefined;
  } while (cursor);
}

/** Drops clip `index`'s staging (its upload and marker): the job ended while the clip was being staged. */
export async function dropStagedClip(env: Env, jobId: string, index: number): Promise<void> {
  const marker = await stagedMarker(env, jobId, index);
  if (marker) await abortUpload(env.CLIPS, marker.key, marker.upload_id);
  await privateBucket(env).delete(stagedKey(jobId, index, "clip"));
}
