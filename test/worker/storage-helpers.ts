/** Where a job's objects are, as the suites check it (src/jobs/storage.ts). */
import { env } from "cloudflare:test";

/** A published object's URL: its own 128-bit id (22 base62 characters), then the file name. */
export const PUBLISHED_URL = /^http:\/\/worker\.test\/cdn\/c\/[0-9A-Za-z]{22}\/(clip\.mp4|thumbnail\.jpg|captions\.vtt|captions\.srt)$/;

/** The engine's uploads of a job waiting in the private bucket, sorted. */
export async function stagedKeys(jobId: string): Promise<string[]> {
  const listing = await env.UPLOADS.list({ prefix: `staging/${jobId}/` });
  return listing.objects.map((o) => o.key).sort();
}

/** Every key in the public bucket (the suites share it: compare before and after). */
export async function publicKeys(): Promise<Set<string>> {
  const keys = new Set<string>();
  let cursor: string | undefined;
  do {
    const page = await env.CLIPS.list({ cursor });
    for (const object of page.objects) keys.add(object.key);
    cursor = page.truncated ? page.cursor : undefined;
  } while (cursor);
  return keys;
}

/** Keys in `after` that were not in `before`. */
export function added(before: Set<string>, after: Set<string>): string[] {
  return [...after].filter((key) => !before.has(key)).sort();
}

/** The key of an object under CDN_URL. */
export function keyOf(url: string): string {
  return url.replace(`${env.CDN_URL}/`, "");
}
