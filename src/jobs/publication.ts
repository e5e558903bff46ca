/**
 * Publishing a job's clips at completion. Each clip, thumbnail and caption
 * sidecar becomes public under a key of its own that nobody can guess or
 * derive from anything public: 128 bits of HMAC-SHA256 keyed with the job's
 * publication key, a 256-bit secret kept in D1 only. Knowing the job id, or
 * one published URL, gives no other object of the job.
 *
 * A clip's video is staged as an incomplete multipart upload at that key
 * (clip-staging.ts) and completion completes it: no bytes move, so publishing
 * takes the same few milliseconds for a clip of any size. Thumbnails and
 * caption sidecars are staged in the private bucket (storage.ts) and copied.
 *
 * Publication is resumable: a clip completed already or a small object
 * already published with the staged bytes' ETag is not done again, and a
 * completion that runs out of its time budget answers "in progress" so the
 * engine calls again and the next attempt goes on where this one stopped.
 * Nothing is revealed until the completion's D1 batch commits (the clip rows
 * carry the public keys). Every attempt publishes under the same keys, so an
 * attempt that does not commit removes only what the job, as it then stands,
 * does not name (unclaimed-publication.ts).
 */
import type { ClipReport } from "#contract";
import { base62 } from "../lib/random.ts";
import { publishStagedClip } from "./clip-staging.ts";
import {
  CLIP_CACHE_CONTROL,
  CLIP_CONTENT_TYPE,
  SRT_CONTENT_TYPE,
  StagedObjectMissing,
  stagedKey,
  THUMBNAIL_CONTENT_TYPE,
  VTT_CONTENT_TYPE,
  type StagedKind,
} from "./storage.ts";

export { StagedObjectMissing } from "./storage.ts";

/** The most clips a job has (ClipReport.index is 0-19): cleanup derives every key a job could have published. */
export const MAX_CLIPS = 20;
/** Work one completion attempt does before answering "in progress" (the engine's callback timeout is 30 s). */
export const PUBLISH_BUDGET_MS = 15_000;
/** Copies running at once. */
const PUBLISH_CONCURRENCY = 4;

const CONTENT_TYPES: Record<StagedKind, string> = {
  clip: CLIP_CONTENT_TYPE,
  thumbnail: THUMBNAIL_CONTENT_TYPE,
  vtt: VTT_CONTENT_TYPE,
  srt: SRT_CONTENT_TYPE,
};

/** The file name a published object ends with (what a download is saved as). */
const FILE_NAMES: Record<StagedKind, string> = {
  clip: "clip.mp4",
  thumbnail: "thumbnail.jpg",
  vtt: "captions.vtt",
  srt: "captions.srt",
};

/** A new job's publication key: 256 random bits, base64url. */
export function newPublicationKey(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(32));
  return btoa(String.fromCharCode(...bytes)).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
}

const hmacKeys = new Map<string, Promise<CryptoKey>>();

function hmacKey(publicationKey: string): Promise<CryptoKey> {
  let key = hmacKeys.get(publicationKey);
  if (!key) {
    key = crypto.subtle.importKey("raw", new TextEncoder().encode(publicationKey), { name: "HMAC", hash: "SHA-256" }, false, ["sign"]);
    if (hmacKeys.size > 100) hmacKeys.clear();
    hmacKeys.set(publicationKey, key);
  }
  return key;
}

/**
 * The public key of one object of clip `index`: `c/{128-bit id}/{file name}`.
 * Each version of a clip (docs/editing.md: an edit publishes version + 1) has
 * keys of its own, so a new version is a new capability URL.
 */
export async function publishedKey(publicationKey: string, index: number, kind: StagedKind, version = 1): Promise<string> {
  const label = version === 1 ? `${index}:${kind}` : `${index}:v${version}:${kind}`;
  const mac = await crypto.subtle.sign("HMAC", await hmacKey(publicationKey), new TextEncoder().encode(label));
  return `c/${base62(new Uint8Array(mac).subarray(0, 16))}/${FILE_NAMES[kind]}`;
}

export interface PublishedClip {
  index: number;
  clip: string;
  thumbnail: string;
  vtt: string | null;
  srt: string | null;
}

/** What completion publishes for these clips (sidecars only where the engine made them). */
export async function publishedKeys(publicationKey: string, clips: readonly Pick<ClipReport, "index" | "sidecars">[], version = 1): Promise<PublishedClip[]> {
  return Promise.all(
    clips.map(async (clip) => ({
      index: clip.index,
      clip: await publishedKey(publicationKey, clip.index, "clip", version),
      thumbnail: await publishedKey(publicationKey, clip.index, "thumbnail", version),
      vtt: clip.sidecars ? await publishedKey(publicationKey, clip.index, "vtt", version) : null,
      srt: clip.sidecars ? await publishedKey(publicationKey, clip.index, "srt", version) : null,
    })),
  );
}

interface Copy {
  index: number;
  staged: string;
  published: string;
  kind: StagedKind;
}

function copiesOf(jobId: string, clips: readonly PublishedClip[]): Copy[] {
  return clips.flatMap((clip) => {
    const copies: Copy[] = [
      { index: clip.index, staged: stagedKey(jobId, clip.index, "clip"), published: clip.clip, kind: "clip" },
      { index: clip.index, staged: stagedKey(jobId, clip.index, "thumbnail"), published: clip.thumbnail, kind: "thumbnail" },
    ];
    if (clip.vtt) copies.push({ index: clip.index, staged: stagedKey(jobId, clip.index, "vtt"), published: clip.vtt, kind: "vtt" });
    if (clip.srt) copies.push({ index: clip.index, staged: stagedKey(jobId, clip.index, "srt"), published: clip.srt, kind: "srt" });
    return copies;
  });
}

/**
 * One object made public. A clip completes the upload it was staged as
 * (clip-staging.ts: no bytes move); a thumbnail or caption sidecar, a few
 * kilobytes, is copied from the private bucket, unless it is there already
 * with the same bytes.
 */
async function publishOne(env: Env, jobId: string, copy: Copy): Promise<void> {
  if (copy.kind === "clip") return publishStagedClip(env, jobId, copy.index, copy.published);
  const [staged, published] = await Promise.all([env.UPLOADS.head(copy.staged), env.CLIPS.head(copy.published)]);
  if (!staged) throw new StagedObjectMissing(`${copy.staged} is not staged`);
  if (published && published.etag === staged.etag && published.size === staged.size) return;
  const body = await env.UPLOADS.get(copy.staged);
  if (!body) throw new StagedObjectMissing(`${copy.staged} is not staged`);
  // R2 streams between buckets without the Worker holding the object; the length is known from the source.
  await env.CLIPS.put(copy.published, body.body, {
    httpMetadata: { contentType: CONTENT_TYPES[copy.kind], cacheControl: CLIP_CACHE_CONTROL },
  });
}

/**
 * Copies what is not published yet. "done" when every object is public under
 * its key; "more" when the budget ran out first (call again). Throws
 * StagedObjectMissing when an expected upload is not staged.
 */
export async function publishStaged(env: Env, jobId: string, clips: readonly PublishedClip[], budgetMs = PUBLISH_BUDGET_MS): Promise<"done" | "more"> {
  const deadline = Date.now() + budgetMs;
  const pending = copiesOf(jobId, clips);
  let failure: { error: unknown } | null = null;
  const copier = async () => {
    while (failure === null && pending.length > 0 && Date.now() <= deadline) {
      const next = pending.shift()!;
      try {
        await publishOne(env, jobId, next);
      } catch (error) {
        failure = { error };
      }
    }
  };
  await Promise.all(Array.from({ length: PUBLISH_CONCURRENCY }, copier));
  if (failure !== null) throw (failure as { error: unknown }).error;
  return pending.length > 0 ? "more" : "done";
}

/**
 * Every key the job could have published, whether or not it did: a job that
 * did not complete (or lost its completion) leaves nothing behind.
 */
export async function allPublishedKeys(publicationKey: string): Promise<string[]> {
  const indexes = Array.from({ length: MAX_CLIPS }, (_, i) => i);
  const kinds: StagedKind[] = ["clip", "thumbnail", "vtt", "srt"];
  return Promise.all(indexes.flatMap((index) => kinds.map((kind) => publishedKey(publicationKey, index, kind))));
}
